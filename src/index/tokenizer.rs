//! The code-aware tokenizer: lowercases, keeps identifiers, paths and flags whole *and* emits
//! their parts, never drops words (no stopwords, no stemming: `not` and `no` stay; a query's
//! words meet their other forms at query time, see `index::forms`), and treats
//! each CJK character as a word. Index and queries use the same function.
//!
//! `src/index/mod.rs` → `src/index/mod.rs`, `src`, `index`, `mod`, `rs`;
//! `notify_debouncer_full` → whole + `notify`, `debouncer`, `full`;
//! `CamelCaseName` → `camelcasename`, `camel`, `case`, `name`; `self.fooBar` → `self.foobar`,
//! `self`, `foobar`, `foo`, `bar`; `__init__` → `__init__`, `init`; `--max-staleness-ms` →
//! `max-staleness-ms`, `max`, `staleness`, `ms`; `E0502` → `e0502`.
//! ASCII text takes a byte-level fast path.

use super::fold::{accent_fold, is_combining, width_fold};
use parts::split_parts;

/// Longest single term kept, in bytes (longer runs are blobs: hashes, base64).
pub(crate) const MAX_TERM_BYTES: usize = 64;
/// Longest whole compound kept (paths, dotted names), in bytes.
pub(crate) const MAX_COMPOUND_BYTES: usize = 128;

#[inline]
const fn is_connector(b: u8) -> bool {
    matches!(b, b'.' | b'/' | b'-' | b':' | b'\\')
}

#[inline]
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF | 0xFF66..=0xFF9F)
}

/// Character class at byte `i` of `s`: returns (class, char length).
#[inline]
fn class_at(s: &str, i: usize) -> (Class, usize) {
    let b = s.as_bytes()[i];
    if b < 0x80 {
        return (ASCII_CLASS[b as usize], 1);
    }
    let c = s[i..].chars().next().unwrap_or(' ');
    let class = if is_cjk(c) {
        Class::Cjk
    } else if c.is_alphanumeric() || is_combining(c) {
        Class::Word
    } else {
        Class::Space
    };
    (class, c.len_utf8())
}

/// The class of each ASCII byte (one load instead of a chain of comparisons).
const ASCII_CLASS: [Class; 128] = {
    let mut t = [Class::Space; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphanumeric() || c == b'_' {
            Class::Word
        } else if is_connector(c) {
            Class::Connector
        } else {
            Class::Space
        };
        b += 1;
    }
    t
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Word,
    Connector,
    Cjk,
    Space,
}

/// Tokenizer variants compared by the retrieval benchmark (`scripts/bench-retrieval`). The
/// defaults are the measured winners; the variants are selected with the environment variable
/// `CONVERSATION_SEARCH_TOKENIZER` (comma-separated: `whole-only`, `parts-only`, `stem`,
/// `stopwords`) and exist for measurement, not for users.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenizerConfig {
    /// Emit a compound's whole form (`src/index/mod.rs`, `notify_debouncer`).
    pub whole: bool,
    /// Emit a compound's parts (`src`, `index`, `notify`, `debouncer`).
    pub parts: bool,
    /// Stem English words (Snowball, through the `bm25` crate's tokenizer).
    pub stem: bool,
    /// Drop English stopwords (except negations).
    pub stopwords: bool,
}

impl Default for TokenizerConfig {
    fn default() -> Self {
        Self {
            whole: true,
            parts: true,
            stem: false,
            stopwords: false,
        }
    }
}

impl TokenizerConfig {
    /// The configuration selected by `CONVERSATION_SEARCH_TOKENIZER` (read once).
    pub(crate) fn current() -> Self {
        static CONFIG: std::sync::OnceLock<TokenizerConfig> = std::sync::OnceLock::new();
        *CONFIG.get_or_init(|| {
            let mut c = TokenizerConfig::default();
            if let Ok(v) = std::env::var("CONVERSATION_SEARCH_TOKENIZER") {
                for flag in v.split(',').map(str::trim) {
                    match flag {
                        "whole-only" => c.parts = false,
                        "parts-only" => c.whole = false,
                        "stem" => c.stem = true,
                        "stopwords" => c.stopwords = true,
                        _ => {}
                    }
                }
            }
            c
        })
    }
}

/// English stopwords dropped by the `stopwords` variant (negations are never dropped).
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this",
    "to", "was", "will", "with", "i", "you", "we", "me", "my", "so", "do", "can",
];

/// Reusable tokenizer state (scratch buffers), so tokenizing allocates nothing per call.
pub(crate) struct Tokenizer {
    lower: String,
    /// A part of a compound, lowercased.
    lower_part: String,
    part: String,
    parts: Vec<(usize, usize)>,
    config: TokenizerConfig,
    /// Whether ASCII texts take [`ascii`] and plain words [`Self::plain_word`] (off only to test
    /// them against the general path).
    fast: bool,
    stemmer: Option<bm25::DefaultTokenizer>,
    /// Set when a word of the text was not emitted as a term (see [`words`]).
    odd: bool,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::with_config(TokenizerConfig::current())
    }
}

impl Tokenizer {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn with_config(config: TokenizerConfig) -> Self {
        let stemmer = config.stem.then(|| {
            bm25::DefaultTokenizer::builder()
                .language_mode(bm25::Language::English)
                .stemming(true)
                .stopwords(false)
                .normalization(false)
                .build()
        });
        Self {
            lower: String::new(),
            lower_part: String::new(),
            part: String::new(),
            parts: Vec::new(),
            config,
            fast: true,
            stemmer,
            odd: false,
        }
    }

    pub(crate) fn config(&self) -> TokenizerConfig {
        self.config
    }

    /// Whether some word (maximal alphanumeric run, ASCII, at most [`MAX_TERM_BYTES`]) of the
    /// texts tokenized since the last call was not emitted as the term it gives alone; resets.
    pub(crate) fn take_odd(&mut self) -> bool {
        std::mem::take(&mut self.odd)
    }

    /// Calls `emit` with every term of `text`, in order (a compound's whole form first).
    pub(crate) fn for_each_term(&mut self, text: &str, mut emit: impl FnMut(&str)) {
        self.for_each_term_at(text, |t, _, _| emit(t));
    }

    /// Like [`Self::for_each_term`], with the byte range of `text` each term came from.
    pub(crate) fn for_each_term_at(
        &mut self,
        text: &str,
        mut emit: impl FnMut(&str, usize, usize),
    ) {
        if self.fast && text.is_ascii() {
            self.for_each_term_ascii(text, &mut emit);
            return;
        }
        let bytes = text.as_bytes();
        let n = bytes.len();
        let mut i = 0;
        while i < n {
            let (class, len) = class_at(text, i);
            match class {
                Class::Space | Class::Connector => i += len,
                Class::Cjk => {
                    self.lower.clear();
                    lower_into(&text[i..i + len], &mut self.lower);
                    emit(&self.lower, i, i + len);
                    i += len;
                }
                Class::Word => {
                    if let Some(end) = self
                        .fast
                        .then(|| self.plain_word(text, i, &mut emit))
                        .flatten()
                    {
                        i = end;
                        continue;
                    }
                    let start = i;
                    let mut end = i;
                    loop {
                        // one word run
                        while end < n {
                            let (c, l) = class_at(text, end);
                            if c != Class::Word {
                                break;
                            }
                            end += l;
                        }
                        // up to two connectors followed by a word char continue the compound
                        let mut j = end;
                        while j < n && j - end < 3 && is_connector(bytes[j]) {
                            j += 1;
                        }
                        if j > end && j - end <= 2 && j < n && class_at(text, j).0 == Class::Word {
                            end = j;
                            continue;
                        }
                        break;
                    }
                    self.compound(text, start, end, false, &mut emit);
                    i = end;
                }
            }
        }
    }

    /// The common case, without splitting or copying: a word of ASCII letters and digits,
    /// uppercase at most in its first letter, that no `_`, non-ASCII letter or connector
    /// continues, is one part: itself, lowercased. Emits it and returns its end; `None` (nothing
    /// emitted) for any other word, which [`Self::compound`] reads (the same terms either way).
    #[inline]
    fn plain_word(
        &mut self,
        text: &str,
        start: usize,
        emit: &mut impl FnMut(&str, usize, usize),
    ) -> Option<usize> {
        let bytes = text.as_bytes();
        let n = bytes.len();
        if !bytes[start].is_ascii_alphanumeric() {
            return None;
        }
        let first_upper = bytes[start].is_ascii_uppercase();
        let mut end = start + 1;
        while end < n && (bytes[end].is_ascii_lowercase() || bytes[end].is_ascii_digit()) {
            end += 1;
        }
        if end < n {
            let b = bytes[end];
            if b >= 0x80 || ASCII_CLASS[b as usize] == Class::Word {
                return None;
            }
            if is_connector(b) {
                let mut j = end;
                while j < n && j - end < 3 && is_connector(bytes[j]) {
                    j += 1;
                }
                if j - end <= 2 && j < n && class_at(text, j).0 == Class::Word {
                    return None;
                }
            }
        }
        // letters and digits only: ASCII, emitted as the ASCII path emits a plain word
        self.plain_ascii(text, start, end, first_upper, emit);
        Some(end)
    }

    /// Emits a compound `text[start..end]`: its parts, and the whole when it has more than one
    /// part (as configured). `ascii`: the text is known to be ASCII (the ASCII path), so the
    /// compound is split and lowercased without checking, and its parts' lowercase forms are
    /// sliced from the whole's.
    fn compound(
        &mut self,
        text: &str,
        start: usize,
        end: usize,
        ascii: bool,
        emit: &mut impl FnMut(&str, usize, usize),
    ) {
        let s = &text[start..end];
        self.parts.clear();
        self.lower.clear();
        if ascii {
            parts::split_parts_ascii(s.as_bytes(), &mut self.parts);
            self.lower.push_str(s);
            self.lower.make_ascii_lowercase();
        } else {
            split_parts(s, &mut self.parts);
            lower_into(s, &mut self.lower);
        }
        self.odd = self.odd || !words::compound_words_are_terms(s, &self.parts, self.config);
        self.emit_compound(s, start, ascii, emit);
    }

    /// Emits the compound `s`, at `start` in the text, from its parts and lowercase form in
    /// `self.parts` and `self.lower`. `ascii`: `s` is ASCII, its parts lowercased are ranges of
    /// `self.lower`.
    fn emit_compound(
        &mut self,
        s: &str,
        start: usize,
        ascii: bool,
        emit: &mut impl FnMut(&str, usize, usize),
    ) {
        let end = start + s.len();
        if self.parts.len() == 1 {
            if self.lower.len() <= MAX_TERM_BYTES {
                Self::word(
                    &self.lower,
                    self.config,
                    self.stemmer.as_ref(),
                    &mut self.part,
                    &mut |t| emit(t, start, end),
                );
            }
            // `_err`, `__init__`: the word itself too
            let (a, b) = self.parts[0];
            if self.config.parts && (a, b) != (0, s.len()) {
                self.part_word(s, start, (a, b), ascii, emit);
            }
            return;
        }
        if (self.config.whole || !self.config.parts)
            && !self.lower.is_empty()
            && self.lower.len() <= MAX_COMPOUND_BYTES
        {
            emit(&self.lower, start, end);
        }
        if !self.config.parts {
            return;
        }
        let mut i = 0;
        while i < self.parts.len() {
            // one word: parts joined by camel humps
            let mut j = i + 1;
            while j < self.parts.len() && self.parts[j - 1].1 == self.parts[j].0 {
                j += 1;
            }
            let word = (self.parts[i].0, self.parts[j - 1].1);
            // a camel-case word inside a longer compound (`self.fooBar`): the word whole too
            if j - i > 1 && self.config.whole && word != (0, s.len()) {
                self.part_word(s, start, word, ascii, emit);
            }
            for k in i..j {
                let part = self.parts[k];
                self.part_word(s, start, part, ascii, emit);
            }
            i = j;
        }
    }

    /// Emits `s[a..b]`, a part or word of the compound `s` starting at `start` in the text, as
    /// a word (unless longer than [`MAX_TERM_BYTES`]). `ascii`: lowercased, it is
    /// `self.lower[a..b]`.
    fn part_word(
        &mut self,
        s: &str,
        start: usize,
        (a, b): (usize, usize),
        ascii: bool,
        emit: &mut impl FnMut(&str, usize, usize),
    ) {
        if b - a <= MAX_TERM_BYTES {
            let w = if ascii {
                &self.lower[a..b]
            } else {
                self.lower_part.clear();
                lower_into(&s[a..b], &mut self.lower_part);
                &self.lower_part
            };
            Self::word(
                w,
                self.config,
                self.stemmer.as_ref(),
                &mut self.part,
                &mut |t| emit(t, start + a, start + b),
            );
        }
    }

    /// Emits a single lowercased word, applying the stopword and stemming variants.
    #[inline]
    fn word(
        w: &str,
        config: TokenizerConfig,
        stemmer: Option<&bm25::DefaultTokenizer>,
        scratch: &mut String,
        emit: &mut impl FnMut(&str),
    ) {
        if w.is_empty() || config.stopwords && STOPWORDS.contains(&w) {
            return;
        }
        match stemmer {
            Some(st) if w.bytes().all(|b| b.is_ascii_alphabetic()) => {
                use bm25::Tokenizer as _;
                scratch.clear();
                match st.tokenize(w).into_iter().next() {
                    Some(stem) => scratch.push_str(&stem),
                    None => scratch.push_str(w),
                }
                emit(scratch);
            }
            _ => emit(w),
        }
    }

    /// All terms of `text`, collected (for queries and tests).
    #[cfg(test)]
    pub(crate) fn terms(&mut self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_term(text, |t| out.push(t.to_owned()));
        out
    }
}

fn lower_into(s: &str, out: &mut String) {
    if s.is_ascii() {
        // copied whole, then lowercased in place (a char at a time was 3% of the first build)
        let start = out.len();
        out.push_str(s);
        out[start..].make_ascii_lowercase();
    } else {
        for c in s.chars() {
            for l in width_fold(c).to_lowercase() {
                match accent_fold(l) {
                    Some(base) => out.push_str(base),
                    None => out.push(l),
                }
            }
        }
    }
}

mod ascii;
mod parts;
#[cfg(test)]
mod tests;
mod words;
