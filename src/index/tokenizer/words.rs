//! Whether a compound's words are all terms: the fact that lets a phrase search skip texts
//! that cannot hold the phrase without reading them.
//!
//! A phrase matches whole *words*: maximal runs of alphanumeric characters, lowercased (see
//! `index::phrase`). Most words are also terms, emitted as the tokenizer emits the word alone,
//! so a document whose words are all terms and that lacks one of a phrase's word-terms cannot
//! contain the phrase. A document is marked when one of its words is not such a term: a camel
//! hump inside a word of a compound (`foo_eRR` gives `foo_err`, `foo`, `e`, `rr`: no `err`), a
//! `_` at a word's edge (`_err` gives `_err`), a variant that keeps compounds whole, or a
//! character phrases and terms treat differently (combining marks, the Kelvin sign). ASCII words
//! of at most [`MAX_TERM_BYTES`] are the only ones this promises anything about: a phrase word
//! that is not one is never required as a term.
use super::{MAX_TERM_BYTES, TokenizerConfig};
use crate::index::fold::is_combining;

/// The Kelvin sign: alphanumeric, and its lowercase is the ASCII `k`.
const KELVIN: char = '\u{212A}';

/// Whether every word of the compound `s` (split into `parts`, as the tokenizer did) that is
/// ASCII and at most [`MAX_TERM_BYTES`] long is emitted as a term by
/// [`super::Tokenizer::compound`] under `config` — as the term the word alone gives.
pub(super) fn compound_words_are_terms(
    s: &str,
    parts: &[(usize, usize)],
    config: TokenizerConfig,
) -> bool {
    if !s.is_ascii() && s.chars().any(|c| is_combining(c) || c == KELVIN) {
        return false;
    }
    let Some((&(first, _), &(_, last))) = parts.first().zip(parts.last()) else {
        // no part: no alphanumeric character, no word
        return true;
    };
    let humps = parts.windows(2).any(|w| w[0].1 == w[1].0);
    let one_word = first == 0 && last == s.len() && parts.windows(2).all(|w| w[0].1 == w[1].0);
    if parts.len() == 1 {
        // emitted as the whole compound lowercased: the word only when nothing surrounds it
        return one_word;
    }
    if one_word {
        // several humps of one word: its whole form, when emitted (not stemmed), is the word
        let whole = (config.whole || !config.parts) && !config.stem;
        return whole || !s.is_ascii() || s.len() > MAX_TERM_BYTES;
    }
    // several words joined by `_` or connectors: each must be one part, and parts emitted
    config.parts && !humps
}

#[cfg(test)]
mod tests {
    use super::super::Tokenizer;
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    /// The words of `text` a phrase sees: maximal alphanumeric runs, lowercased.
    fn words(text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| w.to_lowercase())
            .collect()
    }

    /// Checks the promise on `text` under `config`: when the tokenizer says every word is a
    /// term, each ASCII word of at most `MAX_TERM_BYTES` gives only terms the text has.
    fn check(text: &str, config: TokenizerConfig) -> Result<(), String> {
        let mut tok = Tokenizer::with_config(config);
        tok.take_odd();
        let terms = tok.terms(text);
        if tok.take_odd() {
            return Ok(());
        }
        for w in words(text) {
            if !w.is_ascii() || w.len() > MAX_TERM_BYTES {
                continue;
            }
            for t in tok.terms(&w) {
                if !terms.contains(&t) {
                    return Err(format!(
                        "{text:?}: word {w:?} (term {t:?}) not in {terms:?}"
                    ));
                }
            }
        }
        Ok(())
    }

    const CONFIGS: [TokenizerConfig; 4] = [
        TokenizerConfig {
            whole: true,
            parts: true,
            stem: false,
            stopwords: false,
        },
        TokenizerConfig {
            whole: false,
            parts: true,
            stem: false,
            stopwords: false,
        },
        TokenizerConfig {
            whole: true,
            parts: false,
            stem: false,
            stopwords: false,
        },
        TokenizerConfig {
            whole: true,
            parts: true,
            stem: true,
            stopwords: true,
        },
    ];

    #[test]
    fn marks_words_that_are_not_terms() {
        let odd = |text: &str| {
            let mut tok = Tokenizer::with_config(TokenizerConfig::default());
            tok.terms(text);
            tok.take_odd()
        };
        for plain in [
            "if err != nil",
            "HTTPServer",
            "eRR",
            "src/index/mod.rs",
            "foo_bar baz",
        ] {
            assert!(!odd(plain), "{plain:?}");
        }
        for text in [
            "foo_eRR",
            "_err",
            "__init__",
            "err\u{301}",
            "\u{212A}ey",
            "fooBar_baz",
        ] {
            assert!(odd(text), "{text:?}");
        }
        // a marked document stays marked until taken
        let mut tok = Tokenizer::with_config(TokenizerConfig::default());
        tok.terms("_err");
        tok.terms("plain words");
        assert!(tok.take_odd());
        assert!(!tok.take_odd());
    }

    #[test]
    fn unmarked_texts_hold_every_word_as_a_term() {
        let alphabet: Vec<char> = "aeErRsSnN0_-./:\\ \u{301}\u{212A}éÉ検".chars().collect();
        let text = proptest::collection::vec(proptest::sample::select(alphabet), 0..24)
            .prop_map(|v| v.into_iter().collect::<String>());
        let mut runner = TestRunner::new(Config {
            cases: 4000,
            ..Config::default()
        });
        runner
            .run(&text, |t| {
                for config in CONFIGS {
                    check(&t, config).map_err(TestCaseError::fail)?;
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn long_words_are_outside_the_promise() {
        let long = "x".repeat(MAX_TERM_BYTES + 1);
        for text in [format!("_{long}"), format!("a_{long}B"), long.clone()] {
            for config in CONFIGS {
                check(&text, config).unwrap();
            }
        }
    }
}
