//! Tokenizer tests: code shapes, byte ranges, variants, and the fast paths (plain words, ASCII
//! texts) against the general path on generated text.
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

/// Every combination of the variants, the default first.
fn all_configs() -> Vec<super::TokenizerConfig> {
    let mut out = Vec::new();
    for bits in 0..16u8 {
        out.push(super::TokenizerConfig {
            whole: bits & 1 == 0,
            parts: bits & 2 == 0,
            stem: bits & 4 != 0,
            stopwords: bits & 8 != 0,
        });
    }
    out
}

/// The terms of `text` with their byte ranges, and the `odd` flag it sets.
fn run(tok: &mut Tokenizer, text: &str) -> (Vec<(String, usize, usize)>, bool) {
    tok.take_odd();
    let mut out = Vec::new();
    tok.for_each_term_at(text, |t, s, e| out.push((t.to_owned(), s, e)));
    (out, tok.take_odd())
}

/// Pieces of ASCII text in the shapes the fast paths treat apart: case, `_`, digits,
/// connectors alone and in runs of 1-3, and words and compounds around the length limits.
fn ascii_pieces() -> Vec<String> {
    let mut p: Vec<String> = [
        "a",
        "Z",
        "q",
        "7",
        "_",
        "__",
        "-",
        ".",
        "/",
        ":",
        "\\",
        "::",
        "--",
        "...",
        "-./",
        " ",
        ",",
        "\n",
        "\t",
        "(",
        "'",
        "\"",
        "=",
        "HTTP",
        "Server",
        "fooBar",
        "FooBar",
        "the",
        "The",
        "THE",
        "aB",
        "Ab",
        "0x",
        "x0",
        "E0502",
        "self.fooBar",
        "a.b",
        "src/index/mod.rs",
        "--max-ms",
        "__init__",
        "_err",
        "foo_eRR",
        "HTTPServer",
        "ABc",
        "not",
        "running",
        "tests",
        "a1B2",
        "9Z",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for len in [63, 64, 65, 127, 128, 129] {
        p.push("a".repeat(len));
        p.push(format!("Q{}", "z".repeat(len - 1)));
        p.push(format!("{}B", "y".repeat(len - 1)));
        p.push("x_".repeat(len / 2 + 1)[..len].to_owned());
        p.push("ab/".repeat(len / 3 + 1)[..len].to_owned());
        p.push("cD".repeat(len / 2 + 1)[..len].to_owned());
    }
    p
}

/// Runs `check` on generated texts: mostly ASCII, a quarter with CJK, accented, combining,
/// fullwidth and other non-ASCII characters mixed in.
fn on_generated_texts(cases: u32, check: impl Fn(&str) -> Result<(), String>) {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let ascii = prop::sample::select(ascii_pieces());
    let mut all = ascii_pieces();
    for s in [
        "é",
        "É",
        "\u{4e00}",
        "検索",
        "x\u{301}",
        "ｆ",
        "Ｂａｒ",
        "Größe",
        "—",
        "\u{212A}",
    ] {
        all.push(s.to_owned());
    }
    let any = prop::sample::select(all);
    let texts = prop_oneof![
        3 => prop::collection::vec(ascii, 0..30),
        1 => prop::collection::vec(any, 0..30),
    ]
    .prop_map(|v| v.concat());
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&texts, |text| check(&text).map_err(TestCaseError::fail))
        .expect("same terms");
}

#[test]
fn the_fast_paths_emit_what_the_general_path_does() {
    assert!(ascii_pieces().iter().all(|p| p.is_ascii()));
    let pairs: Vec<_> = all_configs()
        .into_iter()
        .map(|config| {
            let fast = Tokenizer::with_config(config);
            let mut slow = Tokenizer::with_config(config);
            slow.fast = false;
            (config, fast, slow)
        })
        .collect();
    let pairs = std::cell::RefCell::new(pairs);
    on_generated_texts(3000, |text| {
        for (config, fast, slow) in pairs.borrow_mut().iter_mut() {
            let (a, b) = (run(fast, text), run(slow, text));
            if a != b {
                return Err(format!("{config:?} {text:?}:\n fast {a:?}\n slow {b:?}"));
            }
        }
        Ok(())
    });
}

#[test]
fn the_fast_paths_agree_on_edge_texts() {
    for config in all_configs() {
        let mut fast = Tokenizer::with_config(config);
        let mut slow = Tokenizer::with_config(config);
        slow.fast = false;
        for text in [
            "",
            " ",
            "_",
            "-",
            "...",
            "_-_",
            "\\",
            "::",
            "a---b",
            "a--b",
            "a-_b",
            "-a-",
            "A.",
            "_A",
            "a_",
            "a--",
            "Ab-",
            "9.9",
            "x::Y",
            "aB_c",
            "a:\\B",
            "ke\u{301}rr",
            "\u{212A}ey",
        ] {
            assert_eq!(
                run(&mut fast, text),
                run(&mut slow, text),
                "{config:?} {text:?}"
            );
        }
    }
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
            slow.fast = false;
            let mut a = Vec::new();
            fast.for_each_term_at(&text, |t, s, e| a.push((t.to_owned(), s, e)));
            let mut b = Vec::new();
            slow.for_each_term_at(&text, |t, s, e| b.push((t.to_owned(), s, e)));
            prop_assert_eq!(a, b);
            Ok(())
        })
        .expect("same terms");
}
