//! Ranking of exact and code-shaped terms: a turn holding the whole identifier, path, flag,
//! CamelCase name or error code ranks above turns that only hold its parts separately (or a
//! near-miss identifier sharing most parts), while the parts alone still find all of them.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::hit_keys;
use crate::common::search::results;
use crate::common::{Served, serve};
use serde_json::json;

/// `text` padded with neutral words to at least `words` words.
fn padded(text: &str, words: usize) -> String {
    let mut out = text.to_string();
    let filler = [
        "then", "we", "looked", "at", "the", "other", "part", "again",
    ];
    let mut i = 0;
    while out.split_whitespace().count() < words {
        out.push(' ');
        out.push_str(filler[i % filler.len()]);
        i += 1;
    }
    out
}

/// Session `r1`: the target prompt first (turn 0), then the distractors (turns 1..); with
/// `same_length` the distractors are padded to the target's length, so that only the terms
/// differ, not the length normalisation.
fn ranked_with(target: &str, distractors: &[&str], same_length: bool) -> Served {
    let words = target.split_whitespace().count();
    let owned: Vec<String> = distractors
        .iter()
        .map(|d| {
            if same_length {
                padded(d, words)
            } else {
                d.to_string()
            }
        })
        .collect();
    ranked(
        target,
        &owned.iter().map(String::as_str).collect::<Vec<_>>(),
    )
}

/// Session `r1`: the target prompt first (turn 0), then the distractors (turns 1..).
fn ranked(target: &str, distractors: &[&str]) -> Served {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-rank").session("r1");
    w.exchange(target, "ok");
    for d in distractors {
        w.exchange(d, "ok");
    }
    // unrelated turns so that document frequencies look like a real corpus
    for i in 0..30 {
        w.exchange(
            &format!("plain unrelated chatter number {i} about lunch"),
            "ok",
        );
    }
    serve(dir)
}

#[track_caller]
fn assert_first(s: &Served, query: &str, min_hits: usize) {
    let r = s.search_with(json!({"query": query, "limit": 20}));
    let keys = hit_keys(&r);
    assert!(keys.len() >= min_hits, "{query:?}: too few hits: {r}");
    assert_eq!(
        keys[0],
        ("r1".to_string(), 0),
        "{query:?}: the turn with the exact term must rank first: {r}"
    );
    let top = results(&r)[0]["score"].as_f64().unwrap();
    let second = results(&r)[1]["score"].as_f64().unwrap();
    assert!(top > second, "{query:?}: strictly first, not a tie: {r}");
}

/// (query, target prompt, distractor prompts holding the query's parts but not the query)
const CASES: &[(&str, &str, &[&str])] = &[
    (
        "notify_debouncer",
        "we should switch the file watcher over to notify_debouncer because raw events \
         arrive in bursts and the index rebuild is expensive when they do",
        &[
            "notify the debouncer owner",
            "the debouncer must notify us; notify again if the debouncer stalls",
            "notify debouncer",
            "debouncer settings",
        ],
    ),
    (
        "src/index/mod.rs",
        "the tokenizer change touches src/index/mod.rs and nothing else in this crate, \
         please keep the public re-exports stable while you are there",
        &[
            "src/index/query.rs and src/corpus/mod.rs changed",
            "see index mod in src rs files",
            "src/index/ holds mod.rs files",
            "the mod.rs of src/index",
        ],
    ),
    (
        "--max-staleness-ms",
        "start the server with --max-staleness-ms so that a file that keeps changing is still \
         re-read every few seconds even when the debounce never settles",
        &[
            "the max staleness is in ms",
            "--max-staleness is not a flag, max ms is",
            "use --min-staleness-ms or --max-delay-ms",
            "staleness max ms ms ms",
        ],
    ),
    (
        "HttpServerConfig",
        "the HttpServerConfig struct grew a timeout field that nobody reads yet, so wire it \
         through to the listener builder and add a test for it",
        &[
            "http server config",
            "the server config for http",
            "HttpServer and ServerConfig differ",
        ],
    ),
];

fn case(query: &str) -> (&'static str, &'static [&'static str]) {
    let (_, target, distractors) = CASES.iter().find(|c| c.0 == query).expect("case");
    (target, distractors)
}

#[test]
fn a_snake_case_identifier_outranks_its_parts_in_turns_of_the_same_length() {
    let (target, distractors) = case("notify_debouncer");
    let s = ranked_with(target, distractors, true);
    assert_first(&s, "notify_debouncer", distractors.len() + 1);
    let parts = s.search_with(json!({"query": "notify debouncer", "limit": 20}));
    assert_eq!(
        results(&parts).len(),
        distractors.len() + 1,
        "the parts alone find every turn: {parts}"
    );
}

#[test]
fn a_path_outranks_its_components_in_turns_of_the_same_length() {
    let (target, distractors) = case("src/index/mod.rs");
    let s = ranked_with(target, distractors, true);
    assert_first(&s, "src/index/mod.rs", distractors.len() + 1);
}

#[test]
fn a_flag_outranks_its_words_in_turns_of_the_same_length() {
    let (target, distractors) = case("--max-staleness-ms");
    let s = ranked_with(target, distractors, true);
    assert_first(&s, "--max-staleness-ms", distractors.len() + 1);
}

#[test]
fn a_camel_case_name_outranks_its_words_in_turns_of_the_same_length() {
    let (target, distractors) = case("HttpServerConfig");
    let s = ranked_with(target, distractors, true);
    assert_first(&s, "HttpServerConfig", distractors.len() + 1);
}

#[test]
fn exact_code_terms_outrank_short_turns_holding_only_their_parts() {
    // Prompts are often a few words long: length normalisation must not let the parts of an
    // identifier in a short turn beat the identifier itself in a longer one.
    let mut failures = Vec::new();
    for (query, target, distractors) in CASES {
        let s = ranked_with(target, distractors, false);
        let r = s.search_with(json!({"query": query, "limit": 20}));
        let keys = hit_keys(&r);
        if keys.first() != Some(&("r1".to_string(), 0)) {
            let pos = keys.iter().position(|k| k == &("r1".to_string(), 0));
            failures.push(format!(
                "{query}: exact turn at rank {:?}",
                pos.map(|p| p + 1)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_error_code_matches_itself_only() {
    let s = ranked(
        "rustc says E0502 cannot borrow as mutable because it is also borrowed as immutable",
        &[
            "rustc says E0499 cannot borrow as mutable more than once",
            "error E0502x",
        ],
    );
    let r = s.search_with(json!({"query": "E0502"}));
    assert_eq!(hit_keys(&r), [("r1".to_string(), 0)], "{r}");
    let r = s.search_with(json!({"query": "e0502"}));
    assert_eq!(
        hit_keys(&r),
        [("r1".to_string(), 0)],
        "case-insensitive: {r}"
    );
}

#[test]
fn an_identifier_outranks_a_short_turn_with_a_near_miss_sharing_its_parts() {
    // The retrieval benchmark's only miss on the realistic corpus has this shape: a short turn
    // holding `AlphaBeta` (and the last part elsewhere) outranked the long turn holding the
    // exact `AlphaBetaGamma`.
    let target = format!(
        "{} then we renamed it to QuillonStavrikMerdle in the parser module {}",
        "long explanation of the change with many ordinary words ".repeat(4),
        "and more ordinary words follow here to make the turn long ".repeat(4)
    );
    let s = ranked(
        &target,
        &[
            "rename `QuillonStavrik`? the merdle part stays",
            "QuillonStavrik merdle",
        ],
    );
    assert_first(&s, "QuillonStavrikMerdle", 3);
}
