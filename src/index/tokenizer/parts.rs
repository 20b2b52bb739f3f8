//! Splitting a compound into its parts: at connectors, `_`, and camel-case humps.

use super::is_connector;

/// `_` or a connector: ends a part.
const SEP: u8 = 1;
/// `[a-z]`.
const LOWER: u8 = 2;
/// `[A-Z]`.
const UPPER: u8 = 4;

/// The kind of each byte (bits above), for [`split_parts_ascii`].
static KIND: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if c == b'_' || is_connector(c) {
            SEP
        } else if c.is_ascii_lowercase() {
            LOWER
        } else if c.is_ascii_uppercase() {
            UPPER
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Splits a compound into parts at connectors, `_`, and camel-case humps
/// (`fooBar` → foo|Bar, `HTTPServer` → HTTP|Server). Letters and digits stay together.
pub(super) fn split_parts(s: &str, parts: &mut Vec<(usize, usize)>) {
    if s.is_ascii() {
        split_parts_ascii(s.as_bytes(), parts);
    } else {
        split_parts_unicode(s, parts);
    }
}

fn split_parts_unicode(s: &str, parts: &mut Vec<(usize, usize)>) {
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let separator = c == '_' || (c.is_ascii() && is_connector(c as u8));
        if separator {
            if let Some(a) = start.take() {
                parts.push((a, i));
            }
            prev = None;
            continue;
        }
        if let (Some(a), Some(p)) = (start, prev) {
            let next_lower = it.peek().is_some_and(|&(_, n)| n.is_lowercase());
            let hump = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_lower);
            if hump && a < i {
                parts.push((a, i));
                start = Some(i);
            }
        }
        if start.is_none() {
            start = Some(i);
        }
        prev = Some(c);
    }
    if let Some(a) = start {
        parts.push((a, s.len()));
    }
}

/// [`split_parts`] for an ASCII compound: parts end at `_` and connectors, and before
/// the capital of a camel hump (`fooBar` → foo|Bar, `HTTPServer` → HTTP|Server).
pub(super) fn split_parts_ascii(b: &[u8], parts: &mut Vec<(usize, usize)>) {
    // the start of the current part (`usize::MAX`: none), and the class of the byte before
    let mut start = usize::MAX;
    let mut prev = SEP;
    for (i, &byte) in b.iter().enumerate() {
        let c = KIND[byte as usize];
        if c & SEP != 0 {
            if start != usize::MAX {
                parts.push((start, i));
                start = usize::MAX;
            }
        } else if start == usize::MAX {
            start = i;
        } else if c & UPPER != 0
            && (prev & LOWER != 0
                || prev & UPPER != 0 && b.get(i + 1).is_some_and(|&n| KIND[n as usize] == LOWER))
        {
            parts.push((start, i));
            start = i;
        }
        prev = c;
    }
    if start != usize::MAX {
        parts.push((start, b.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    /// The byte-at-a-time split of ASCII compounds that [`split_parts_ascii`] replaced (the
    /// reference it must match).
    fn reference(b: &[u8], parts: &mut Vec<(usize, usize)>) {
        let mut start: Option<usize> = None;
        for i in 0..b.len() {
            let c = b[i];
            if c == b'_' || is_connector(c) {
                if let Some(a) = start.take() {
                    parts.push((a, i));
                }
                continue;
            }
            if let Some(a) = start {
                let p = b[i - 1];
                let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
                let hump = (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                    || (p.is_ascii_uppercase() && c.is_ascii_uppercase() && next_lower);
                if hump && a < i {
                    parts.push((a, i));
                    start = Some(i);
                }
            } else {
                start = Some(i);
            }
        }
        if let Some(a) = start {
            parts.push((a, b.len()));
        }
    }

    #[test]
    fn ascii_compounds_split_as_before_and_as_unicode_ones() {
        let alphabet: Vec<char> = "aAbBzZ09_-./:\\".chars().collect();
        let text = prop::collection::vec(prop::sample::select(alphabet), 0..40)
            .prop_map(|v| v.into_iter().collect::<String>());
        let mut runner = TestRunner::new(Config {
            cases: 5000,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&text, |s| {
                let (mut new, mut old, mut unicode) = (Vec::new(), Vec::new(), Vec::new());
                split_parts_ascii(s.as_bytes(), &mut new);
                reference(s.as_bytes(), &mut old);
                split_parts_unicode(&s, &mut unicode);
                prop_assert_eq!(&new, &old, "{:?}", s);
                prop_assert_eq!(&new, &unicode, "{:?}", s);
                Ok(())
            })
            .unwrap();
    }
}
