//! Phrase matching without normalizing whole texts. A phrase matches a field when the
//! field's normalized form (see [`normalize_for_phrase`]) contains it: when some consecutive
//! words of the field (maximal runs of alphanumeric characters), lowercased, are the phrase's
//! words. For an ASCII phrase this is decided on the text with its ASCII letters lowercased
//! (a vectorized copy, offsets unchanged): a `memmem` search for one of its words, then a look
//! at the words around each occurrence. Other
//! phrases, and texts holding the one non-ASCII character that lowercases to ASCII (the Kelvin
//! sign, to `k`), take the slow path: normalize, then search.
use memchr::memmem::Finder;

/// Lowercases and reduces every run of non-alphanumeric characters to one space, with a space
/// at both ends, so that phrase matching is a substring test on word boundaries.
pub(crate) fn normalize_for_phrase(text: &str, out: &mut String) {
    out.clear();
    out.reserve(text.len() + 2);
    out.push(' ');
    let mut space = true;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // ASCII (most of any transcript) byte by byte; other characters decoded
        if b < 0x80 {
            i += 1;
            if b.is_ascii_alphanumeric() {
                out.push(b.to_ascii_lowercase() as char);
                space = false;
            } else if !space {
                out.push(' ');
                space = true;
            }
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        i += c.len_utf8();
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
            space = false;
        } else if !space {
            out.push(' ');
            space = true;
        }
    }
    if !space {
        out.push(' ');
    }
}

/// The only non-ASCII alphanumeric character whose lowercase is ASCII (checked by a test over
/// every character): a raw word holding it can equal an ASCII phrase word.
const KELVIN: char = '\u{212A}';

/// A field being matched: its raw text and, once a phrase needed it, its ASCII-lowercased or
/// normalized form (in one buffer: the last one asked for).
pub(crate) struct Field<'a, 's> {
    raw: &'a str,
    buf: &'s mut String,
    held: Held,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    Nothing,
    Lowered,
    Normalized,
}

impl<'a, 's> Field<'a, 's> {
    /// `scratch` holds the lowered or normalized form when one is needed.
    pub(crate) fn new(raw: &'a str, scratch: &'s mut String) -> Self {
        Self {
            raw,
            buf: scratch,
            held: Held::Nothing,
        }
    }

    fn normalized(&mut self) -> &str {
        if self.held != Held::Normalized {
            normalize_for_phrase(self.raw, self.buf);
            self.held = Held::Normalized;
        }
        self.buf
    }

    /// The raw text with ASCII letters lowercased: same length, same character boundaries.
    fn lowered(&mut self) -> &str {
        if self.held != Held::Lowered {
            self.buf.clear();
            self.buf.push_str(self.raw);
            self.buf.make_ascii_lowercase();
            self.held = Held::Lowered;
        }
        self.buf
    }
}

/// The phrases a match must contain and those it must not, compiled.
#[derive(Debug, Clone, Default)]
pub(crate) struct PhraseSet {
    required: Vec<Phrase>,
    excluded: Vec<Phrase>,
}

impl PhraseSet {
    /// Compiles phrases normalized by [`normalize_for_phrase`].
    pub(crate) fn new(required: &[String], excluded: &[String]) -> Self {
        let compile = |v: &[String]| v.iter().map(|p| Phrase::new(p)).collect();
        Self {
            required: compile(required),
            excluded: compile(excluded),
        }
    }

    /// Whether the fields of a document pass: every required phrase lies within one of them,
    /// and no excluded phrase lies in any (`scratch` is reused between calls).
    pub(crate) fn ok(&self, fields: [&str; 3], scratch: &mut String) -> bool {
        if self.required.is_empty() && self.excluded.is_empty() {
            return true;
        }
        let mut found = vec![false; self.required.len()];
        for raw in fields {
            let mut field = Field::new(raw, scratch);
            if self.excluded.iter().any(|p| p.in_field(&mut field)) {
                return false;
            }
            for (f, p) in found.iter_mut().zip(&self.required) {
                *f = *f || p.in_field(&mut field);
            }
        }
        found.iter().all(|&f| f)
    }
}

/// One normalized phrase, ready to be searched for.
#[derive(Debug, Clone)]
pub(crate) struct Phrase {
    /// The normalized phrase (`" of the "`), for the slow path.
    norm: String,
    /// Its words.
    words: Vec<String>,
    /// The fast path, when every word is ASCII: which word to search for, and its searcher.
    fast: Option<(usize, Finder<'static>)>,
}

impl Phrase {
    /// Compiles a phrase already normalized by [`normalize_for_phrase`].
    pub(crate) fn new(norm: &str) -> Self {
        let words: Vec<String> = norm
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        // the longest word is usually the rarest: fewest occurrences to look around
        let anchor = (0..words.len()).rev().max_by_key(|&i| words[i].len());
        let fast = anchor
            .filter(|_| words.iter().all(|w| w.is_ascii()))
            .map(|a| (a, Finder::new(words[a].as_bytes()).into_owned()));
        Self {
            norm: norm.to_owned(),
            words,
            fast,
        }
    }

    /// Whether the raw `field` can be searched without normalizing it.
    fn fast_for(&self, field: &str) -> Option<&(usize, Finder<'static>)> {
        let kelvin = || self.words.iter().any(|w| w.contains('k')) && field.contains(KELVIN);
        self.fast.as_ref().filter(|_| !kelvin())
    }

    /// Whether `field` contains the phrase.
    pub(crate) fn in_field(&self, field: &mut Field) -> bool {
        if let Some((anchor, finder)) = self.fast_for(field.raw) {
            let lower = field.lowered();
            let len = finder.needle().len();
            return finder
                .find_iter(lower.as_bytes())
                .any(|at| self.around(lower, *anchor, at, at + len));
        }
        field.normalized().contains(self.norm.as_str())
    }

    /// Whether the occurrence `field[start..end]` of word `anchor` is a whole word with the
    /// phrase's other words around it (`field` lowercased; its words compared as written).
    fn around(&self, field: &str, anchor: usize, start: usize, end: usize) -> bool {
        let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        if alnum(field[..start].chars().next_back()) || alnum(field[end..].chars().next()) {
            return false;
        }
        let mut pos = end;
        for w in &self.words[anchor + 1..] {
            let Some((a, b)) = word_after(field, pos) else {
                return false;
            };
            if field[a..b] != *w {
                return false;
            }
            pos = b;
        }
        let mut pos = start;
        for w in self.words[..anchor].iter().rev() {
            let Some((a, b)) = word_before(field, pos) else {
                return false;
            };
            if field[a..b] != *w {
                return false;
            }
            pos = a;
        }
        true
    }
}

/// The extent of the first word starting at or after `pos` (a character boundary).
fn word_after(field: &str, pos: usize) -> Option<(usize, usize)> {
    let rest = &field[pos..];
    let a = pos + rest.find(char::is_alphanumeric)?;
    let b = field[a..]
        .find(|c: char| !c.is_alphanumeric())
        .map_or(field.len(), |n| a + n);
    Some((a, b))
}

/// The extent of the last word ending at or before `pos` (a character boundary).
fn word_before(field: &str, pos: usize) -> Option<(usize, usize)> {
    let head = &field[..pos];
    let (i, c) = head
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_alphanumeric())?;
    let b = i + c.len_utf8();
    let a = field[..b]
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_alphanumeric())
        .map_or(0, |(j, c)| j + c.len_utf8());
    Some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The slow path's answer: normalize, then search.
    fn slow(phrase: &str, field: &str) -> bool {
        let (mut p, mut f) = (String::new(), String::new());
        normalize_for_phrase(phrase, &mut p);
        normalize_for_phrase(field, &mut f);
        f.contains(p.as_str())
    }

    fn fast(phrase: &str, field: &str) -> bool {
        let mut p = String::new();
        normalize_for_phrase(phrase, &mut p);
        let mut scratch = String::new();
        Phrase::new(&p).in_field(&mut Field::new(field, &mut scratch))
    }

    #[test]
    fn only_the_kelvin_sign_lowercases_from_non_ascii_to_ascii() {
        let found: Vec<char> = (0..=u32::from(char::MAX))
            .filter_map(char::from_u32)
            .filter(|c| !c.is_ascii() && c.is_alphanumeric())
            .filter(|c| c.to_lowercase().all(|l| l.is_ascii()))
            .collect();
        assert_eq!(found, [KELVIN]);
    }

    #[test]
    fn matches_whole_words_in_order_across_any_separators() {
        for (phrase, field, want) in [
            ("of the", "most of\n\n  -- THE time", true),
            ("of the", "ofthe", false),
            ("of the", "roof the", false),
            ("of the", "of there", false),
            ("of the", "of_the", true),
            ("the error", "théerror the error", true),
            ("the error", "é the erroré", false),
            ("the error", "\u{212A}ey the error", true),
            ("key", "the \u{212A}EY", true),
            ("café latte", "CAFÉ   latte", true),
            ("a", "", false),
            ("if err", "x if err", true),
            ("if err", "if\terr", true),
            ("x y z", "x y y z x y z", true),
        ] {
            assert_eq!(slow(phrase, field), want, "slow {phrase:?} in {field:?}");
            assert_eq!(fast(phrase, field), want, "fast {phrase:?} in {field:?}");
        }
    }

    #[test]
    fn a_set_checks_required_and_excluded_phrases_per_field() {
        let norm = |p: &str| {
            let mut s = String::new();
            normalize_for_phrase(p, &mut s);
            s
        };
        let set = PhraseSet::new(&[norm("of the"), norm("is not")], &[norm("bad thing")]);
        let mut scratch = String::new();
        assert!(set.ok(["one of the", "", "it is not"], &mut scratch));
        assert!(!set.ok(["one of", "the x is not", ""], &mut scratch));
        assert!(!set.ok(["one of the is not", "", "a bad thing"], &mut scratch));
        assert!(PhraseSet::default().ok(["", "", ""], &mut scratch));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn the_fast_path_agrees_with_normalizing(
            words in proptest::collection::vec(0usize..12, 0..40),
            seps in proptest::collection::vec(0usize..7, 40),
            phrase in proptest::collection::vec(0usize..8, 1..4),
        ) {
            const WORDS: [&str; 12] =
                ["of", "the", "The", "OF", "err", "if", "k\u{e9}y", "\u{212A}ey", "key", "x1", "\u{c9}t\u{e9}", "of3"];
            const SEPS: [&str; 7] = [" ", "\n", "__", " -- ", "", "\u{2014}", "\u{e9}"];
            let field: String = words
                .iter()
                .enumerate()
                .map(|(i, &w)| format!("{}{}", WORDS[w], SEPS[seps[i]]))
                .collect();
            let phrase: Vec<&str> = phrase.iter().map(|&w| WORDS[w]).collect();
            let phrase = phrase.join(" ");
            prop_assert_eq!(fast(&phrase, &field), slow(&phrase, &field), "{:?} in {:?}", phrase, field);
        }
    }
}
