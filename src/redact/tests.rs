//! Unit tests of the redaction engine: every rule's examples and look-alikes, overlaps,
//! the fingerprint, and the README table.
use super::rules::RULES;
use super::*;

fn engine() -> &'static Redactor {
    static E: LazyLock<Redactor> = LazyLock::new(|| Redactor::new(RULES, None));
    &E
}

/// `«secret»` → (input without the marks, expected output with `[REDACTED:name]`;
/// `«other_rule:secret»` expects `[REDACTED:other_rule]`).
fn expand(example: &str, name: &str) -> (String, String) {
    let (mut input, mut expected) = (String::new(), String::new());
    let mut rest = example;
    while let Some(open) = rest.find('«') {
        let close = rest[open..].find('»').expect("unclosed «") + open;
        input.push_str(&rest[..open]);
        expected.push_str(&rest[..open]);
        let mut body = &rest[open + '«'.len_utf8()..close];
        // `«other_rule:…»`: a part another rule names
        let mut kind = name;
        if let Some(r) = RULES
            .iter()
            .find(|r| body.starts_with(&format!("{}:", r.name)))
        {
            kind = r.name;
            body = &body[r.name.len() + 1..];
        }
        input.push_str(body);
        expected.push_str(&format!("[REDACTED:{kind}]"));
        rest = &rest[close + '»'.len_utf8()..];
    }
    input.push_str(rest);
    expected.push_str(rest);
    (input, expected)
}

#[test]
fn every_rule_redacts_its_examples_and_keeps_its_look_alikes() {
    let mut failures = Vec::new();
    for rule in RULES {
        assert!(!rule.examples.is_empty(), "{} has no example", rule.name);
        assert!(!rule.anchors.is_empty(), "{} has no anchor", rule.name);
        for ex in rule.examples {
            let (input, expected) = expand(ex, rule.name);
            let got = engine().redact(&input);
            if got != expected {
                failures.push(format!(
                    "{}:\n  in:   {input:?}\n  want: {expected:?}\n  got:  {got:?}",
                    rule.name
                ));
            }
        }
        for keep in rule.keep {
            let got = engine().redact(keep);
            if got != *keep {
                failures.push(format!(
                    "{} look-alike changed:\n  in:  {keep:?}\n  got: {got:?}",
                    rule.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn anchors_are_in_every_example() {
    for rule in RULES {
        for ex in rule.examples {
            let (input, _) = expand(ex, rule.name);
            let lower = input.to_ascii_lowercase();
            let hit = rule.anchors.iter().any(|a| {
                if a.bytes().any(|b| b.is_ascii_uppercase()) {
                    input.contains(a)
                } else {
                    lower.contains(a)
                }
            });
            assert!(hit, "{}: no anchor in {input:?}", rule.name);
        }
    }
}

#[test]
fn plain_text_is_borrowed() {
    let text = "cargo test --lib; the index uses BM25 with k1 = 1.2, see src/index/scoring.rs";
    assert!(matches!(engine().redact(text), Cow::Borrowed(_)));
}

#[test]
fn overlapping_matches_become_one_named_by_the_specific_rule() {
    let key = format!("ghp_{}", "k9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5P");
    let text = format!("GITHUB_TOKEN={key} and token: \"{key}\"");
    assert_eq!(
        engine().redact(&text),
        "GITHUB_TOKEN=[REDACTED:github_token] and token: \"[REDACTED:github_token]\""
    );
}

#[test]
fn several_secrets_in_one_text() {
    let a = format!("AKIA{}", "Z3Q7MXKD2WPLN4RT");
    let s = format!("{}{}", "k9Tz2mr7SZiAMfQyuvBjM", "/qQfN+Xo8Lw3dHe5Ps1");
    let text = format!("[default]\naws_access_key_id = {a}\naws_secret_access_key = {s}\n");
    assert_eq!(
        engine().redact(&text),
        "[default]\naws_access_key_id = [REDACTED:aws_access_key_id]\naws_secret_access_key = [REDACTED:aws_secret_key]\n"
    );
}

#[test]
fn the_extra_pattern_redacts_and_changes_the_fingerprint() {
    let with = Redactor::new(RULES, Some(r"zz-[0-9]{6}"));
    assert_eq!(with.redact("id zz-123456 ok"), "id [REDACTED:extra] ok");
    assert_ne!(with.fingerprint, engine().fingerprint);
    assert_eq!(
        Redactor::new(RULES, None).fingerprint,
        engine().fingerprint,
        "the fingerprint is stable"
    );
}

#[test]
fn redaction_is_idempotent() {
    for rule in RULES {
        for ex in rule.examples {
            let (input, _) = expand(ex, rule.name);
            let once = engine().redact(&input).into_owned();
            assert_eq!(engine().redact(&once), once, "{}", rule.name);
        }
    }
}

#[test]
fn readme_lists_every_rule() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let mut missing: Vec<&str> = RULES
        .iter()
        .map(|r| r.name)
        .filter(|n| !readme.contains(&format!("| `{n}` |")))
        .collect();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "README's redaction table misses {missing:?}"
    );
}

#[test]
fn key_bytes_name_the_version() {
    let k = String::from_utf8(key_bytes()).expect("ascii");
    assert!(k.starts_with(&format!("redact:v{RULES_VERSION}:")), "{k}");
}

#[test]
fn every_built_in_pattern_compiles() {
    // patterns are compiled on first use; an invalid one must fail here, not in a user's run
    for rule in &engine().rules {
        assert!(
            rule.name == "extra" || rule.regex().as_str() == rule.pattern,
            "{}",
            rule.name
        );
    }
}

#[test]
fn a_forty_character_run_next_to_an_access_key_id_stays_unless_it_looks_like_a_key() {
    let id = format!("AKIA{}", "Z3Q7MXKD2WPLN4RT");
    let sha = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d";
    let path = "src/Components/Header2/NavigationBarItem";
    let ident = "TokenizerSnapshotV2BuilderFactoryManager";
    let longer = format!("{}{}", "k9Tz2mr7SZiAMfQyuvBjM", "/qQfN+Xo8Lw3dHe5Ps1==");
    let text = format!("key {id} at commit {sha} in {path}, see {ident} and {longer}");
    assert_eq!(
        engine().redact(&text),
        format!(
            "key [REDACTED:aws_access_key_id] at commit {sha} in {path}, see {ident} and {longer}"
        )
    );
    let secret = format!("{}{}", "k9Tz2mr7SZiAMfQyuvBjM", "/qQfN+Xo8Lw3dHe5Ps1");
    let record = format!("{{\"id\": \"{id}\",\n  \"note\": \"rotated\",\n  \"k\": \"{secret}\"}}");
    assert_eq!(
        engine().redact(&record),
        "{\"id\": \"[REDACTED:aws_access_key_id]\",\n  \"note\": \"rotated\",\n  \"k\": \"[REDACTED:aws_secret_key]\"}"
    );
}
