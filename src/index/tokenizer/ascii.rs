//! The tokenizer's path for all-ASCII texts: the terms of the general path of
//! [`Tokenizer::for_each_term_at`], read through one byte class table (a plain word's letters
//! eight bytes at a time), with plain words (the most common) emitted inline and compounds split
//! without re-lowercasing their parts.
//!
//! On ASCII text the general path's classes are exactly this table's: a word byte is
//! `[A-Za-z0-9_]`, a connector one of `. / - : \`, anything else a space; there is no CJK.
//! Lowercasing is byte by byte, so a part's lowercase form is the same range of the compound's.

use super::{MAX_TERM_BYTES, Tokenizer};

/// `[A-Za-z0-9_]`: continues a word.
const WORD: u8 = 1;
/// `. / - :` and `\`: joins two words of a compound.
const CONN: u8 = 2;
/// `[a-z0-9]`: continues a plain word.
const LOWER_DIGIT: u8 = 4;
/// `[A-Za-z0-9]`: starts a plain word.
const ALNUM: u8 = 8;
/// `[A-Z]`.
const UPPER: u8 = 16;

/// The classes of each byte (bits above); bytes from 0x80 never occur in an ASCII text.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        let mut k = 0;
        if c.is_ascii_alphanumeric() || c == b'_' {
            k |= WORD;
        }
        if super::is_connector(c) {
            k |= CONN;
        }
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            k |= LOWER_DIGIT;
        }
        if c.is_ascii_alphanumeric() {
            k |= ALNUM;
        }
        if c.is_ascii_uppercase() {
            k |= UPPER;
        }
        t[b] = k;
        b += 1;
    }
    t
};

#[inline(always)]
fn class(b: u8) -> u8 {
    CLASS[b as usize]
}

/// Whether `bytes[i]` exists and has one of the classes `mask`.
#[inline(always)]
fn is(bytes: &[u8], i: usize, mask: u8) -> bool {
    bytes.get(i).is_some_and(|&b| class(b) & mask != 0)
}

/// Where the next word starts when one or two connectors at `end` join it to the word before
/// (three or more end the compound).
#[inline(always)]
fn joined(bytes: &[u8], end: usize) -> Option<usize> {
    if !is(bytes, end, CONN) {
        return None;
    }
    if is(bytes, end + 1, WORD) {
        return Some(end + 1);
    }
    (is(bytes, end + 1, CONN) && is(bytes, end + 2, WORD)).then_some(end + 2)
}

/// The end of the run of `[a-z0-9]` bytes from `i`: eight bytes at a time while eight remain.
#[inline(always)]
fn lower_digit_run(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES * 0x80;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // for bytes below 0x80 no sum carries into the next byte: the high bit of
        // `b + 0x80 - lo` is set when `b >= lo`
        let ge = |lo: u8| x + ONES * u64::from(0x80 - lo);
        let lower = ge(b'a') & !ge(b'z' + 1);
        let digit = ge(b'0') & !ge(b'9' + 1);
        let other = !(lower | digit) & HIGH;
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() && class(bytes[i]) & LOWER_DIGIT != 0 {
        i += 1;
    }
    i
}

impl Tokenizer {
    /// [`Self::for_each_term_at`] for an ASCII `text`.
    #[inline]
    pub(super) fn for_each_term_ascii(
        &mut self,
        text: &str,
        emit: &mut impl FnMut(&str, usize, usize),
    ) {
        let bytes = text.as_bytes();
        let n = bytes.len();
        let mut i = 0;
        while i < n {
            let c = class(bytes[i]);
            if c & WORD == 0 {
                i += 1;
                continue;
            }
            let start = i;
            let mut end = i + 1;
            if c & ALNUM != 0 {
                end = lower_digit_run(bytes, end);
                if !is(bytes, end, WORD) && joined(bytes, end).is_none() {
                    self.plain_ascii(text, start, end, c & UPPER != 0, emit);
                    i = end;
                    continue;
                }
            }
            loop {
                while end < n && class(bytes[end]) & WORD != 0 {
                    end += 1;
                }
                match joined(bytes, end) {
                    Some(next) => end = next,
                    None => break,
                }
            }
            self.compound(text, start, end, true, emit);
            i = end;
        }
    }

    /// A plain word `text[start..end]`: letters and digits, uppercase at most in its first
    /// letter (`upper`).
    #[inline(always)]
    pub(super) fn plain_ascii(
        &mut self,
        text: &str,
        start: usize,
        end: usize,
        upper: bool,
        emit: &mut impl FnMut(&str, usize, usize),
    ) {
        if end - start > MAX_TERM_BYTES {
            return;
        }
        let word = &text[start..end];
        let word = if upper {
            self.lower.clear();
            self.lower.push_str(word);
            self.lower[..1].make_ascii_lowercase();
            self.lower.as_str()
        } else {
            word
        };
        Self::word(
            word,
            self.config,
            self.stemmer.as_ref(),
            &mut self.part,
            &mut |t| emit(t, start, end),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_run_ends_at_the_first_other_byte() {
        for b in 0..0x80u8 {
            for at in 0..20 {
                let mut text = vec![b'q'; 20];
                text[at] = b;
                for from in 0..=at {
                    let scalar = from
                        + text[from..]
                            .iter()
                            .take_while(|&&c| c.is_ascii_lowercase() || c.is_ascii_digit())
                            .count();
                    assert_eq!(lower_digit_run(&text, from), scalar, "{b:#x} at {at}");
                }
            }
        }
    }
}
