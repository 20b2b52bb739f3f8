//! Tokenizer tests: code shapes, byte ranges, variants, and the plain-word fast path against
//! the general path on generated text.
use super::Tokenizer;

fn terms(s: &str) -> Vec<String> {
    Tokenizer::with_config(super::TokenizerConfig::default()).terms(s)
}

#[test]
fn splits_code_shapes() {
    assert_eq!(
        terms("src/index/mod.rs"),
        ["src/index/mod.rs", "src", "index", "mod", "rs"]
    );
    assert_eq!(
        terms("notify_debouncer_full"),
        ["notify_debouncer_full", "notify", "debouncer", "full"]
    );
    assert_eq!(
        terms("--max-staleness-ms"),
        ["max-staleness-ms", "max", "staleness", "ms"]
    );
    assert_eq!(terms("HTTPServer"), ["httpserver", "http", "server"]);
    assert_eq!(
        terms("self.fooBar"),
        ["self.foobar", "self", "foobar", "foo", "bar"]
    );
    assert_eq!(terms("__init__ _x"), ["__init__", "init", "_x", "x"]);
    assert_eq!(terms("E0502 not no a"), ["e0502", "not", "no", "a"]);
    assert_eq!(
        terms("std::io::stderr"),
        ["std::io::stderr", "std", "io", "stderr"]
    );
    assert_eq!(terms("end of sentence."), ["end", "of", "sentence"]);
    assert_eq!(terms("Größe ÜBER"), ["grosse", "uber"]);
    assert_eq!(
        terms("naïve nai\u{308}ve ｆｏｏ Ｂａｒ"),
        ["naive", "naive", "foo", "bar"]
    );
    assert_eq!(terms("Łódź œuvre \u{301}"), ["lodz", "oeuvre"]);
    assert_eq!(terms("検索"), ["検", "索"]);
}

#[test]
fn reports_byte_ranges() {
    let mut t = Tokenizer::with_config(super::TokenizerConfig::default());
    let mut got = Vec::new();
    t.for_each_term_at("see fooBar now", |term, a, b| {
        got.push((term.to_owned(), a, b))
    });
    assert_eq!(
        got,
        [
            ("see".into(), 0, 3),
            ("foobar".into(), 4, 10),
            ("foo".into(), 4, 7),
            ("bar".into(), 7, 10),
            ("now".into(), 11, 14)
        ]
    );
}

#[test]
fn variants_change_emitted_terms() {
    use super::TokenizerConfig;
    let mut t = Tokenizer::with_config(TokenizerConfig {
        parts: false,
        ..TokenizerConfig::default()
    });
    assert_eq!(t.terms("notify_debouncer"), ["notify_debouncer"]);
    let mut t = Tokenizer::with_config(TokenizerConfig {
        whole: false,
        ..TokenizerConfig::default()
    });
    assert_eq!(t.terms("notify_debouncer"), ["notify", "debouncer"]);
    let mut t = Tokenizer::with_config(TokenizerConfig {
        stem: true,
        stopwords: true,
        ..TokenizerConfig::default()
    });
    assert_eq!(t.terms("the running tests not"), ["run", "test", "not"]);
}

#[test]
fn the_plain_word_path_emits_what_the_general_path_does() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let pieces = prop::sample::select(vec![
        "a", "Z", "q", "7", "_", "-", ".", "/", "::", " ", ",", "é", "É", "\u{4e00}", "x\u{301}",
        "ｆ", "HTTP", "Server", "fooBar", "the", "The", "aB", "0x", "\n", "--", "...", "a.b",
    ]);
    let texts = prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat());
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&texts, |text| {
            let mut fast = Tokenizer::with_config(super::TokenizerConfig::default());
            let mut slow = Tokenizer::with_config(super::TokenizerConfig::default());
            slow.plain = false;
            let mut a = Vec::new();
            fast.for_each_term_at(&text, |t, s, e| a.push((t.to_owned(), s, e)));
            let mut b = Vec::new();
            slow.for_each_term_at(&text, |t, s, e| b.push((t.to_owned(), s, e)));
            prop_assert_eq!(a, b);
            Ok(())
        })
        .expect("same terms");
}
