//! Folding for the tokenizer: full-width ASCII to ASCII and accented Latin letters to their
//! base letters (`naïve` ~ `naive`, `ｆｏｏ` ~ `foo`), by table (Latin-1 and Latin Extended-A),
//! plus combining marks dropped, so documents and queries match across spellings.

/// Full-width ASCII (`ｆｏｏ`, U+FF01–U+FF5E) as ASCII.
#[inline]
pub(super) fn width_fold(c: char) -> char {
    match c as u32 {
        u @ 0xFF01..=0xFF5E => char::from_u32(u - 0xFEE0).unwrap_or(c),
        _ => c,
    }
}

/// Combining diacritical marks (a decomposed `ï` is `i` + U+0308): part of a word, dropped.
#[inline]
pub(super) fn is_combining(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F)
}

/// Lowercase Latin-1 letters U+00DF–U+00FF, by code point: their letters without accents.
const LATIN1: [&str; 33] = [
    "ss", "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", "d",
    "n", "o", "o", "o", "o", "o", "\u{f7}", "o", "u", "u", "u", "u", "y", "\u{fe}", "y",
];

/// Latin Extended-A (U+0100–U+017F) in runs of one base letter: (run length, base).
const EXTENDED_A: [(u32, &str); 22] = [
    (6, "a"),
    (8, "c"),
    (4, "d"),
    (10, "e"),
    (8, "g"),
    (4, "h"),
    (10, "i"),
    (2, "ij"),
    (2, "j"),
    (3, "k"),
    (10, "l"),
    (9, "n"),
    (6, "o"),
    (2, "oe"),
    (6, "r"),
    (8, "s"),
    (6, "t"),
    (12, "u"),
    (2, "w"),
    (3, "y"),
    (6, "z"),
    (1, "s"),
];

/// A lowercase Latin letter with an accent as its base letter(s) (`ï` → `i`, `ß` → `ss`); a
/// combining mark as nothing; `None` for anything else.
pub(super) fn accent_fold(c: char) -> Option<&'static str> {
    let u = c as u32;
    match u {
        0xDF..=0xFF => Some(LATIN1[(u - 0xDF) as usize]),
        0x100..=0x17F => {
            let mut at = 0x100;
            for (n, base) in EXTENDED_A {
                if u < at + n {
                    return Some(base);
                }
                at += n;
            }
            None
        }
        _ if is_combining(c) => Some(""),
        _ => None,
    }
}
