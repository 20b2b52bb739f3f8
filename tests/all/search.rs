//! search_conversations: result fields, score > 0 and rounding, ordering and ties, total vs
//! limit, default and capped limits, filters, tokenization (case, identifier parts, `not`/`no`),
//! snippets, determinism.

use crate::common::fixture::{ProjectsDir, new_msg_id};
use crate::common::mcp::{hit_keys, k};
use crate::common::{Served, serve, serve_prompts};
use serde_json::{Value, json};

/// One session `s1` with the given prompts (each answered with "ok").
fn prompts(list: &[&str]) -> Served {
    serve_prompts("-home-u-work-search", list)
}

#[test]
fn result_carries_the_documented_fields() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-fields").session("f1");
    w.set_slug(Some("brave-blue-otter"));
    w.set_time("2026-05-03T12:00:00.000Z");
    w.exchange("where is the zebracorn config", "In zebracorn.toml.");
    let s = serve(dir);
    let r = s.search("zebracorn");
    assert_eq!(r["query"], "zebracorn");
    assert_eq!(r["total"], 1);
    let hit = &r["results"][0];
    assert_eq!(hit["session_id"], "f1");
    assert_eq!(hit["project"], "fields");
    assert_eq!(hit["turn_number"], 0);
    assert_eq!(hit["timestamp"], "2026-05-03T12:00:00.000Z");
    assert_eq!(hit["slug"], "brave-blue-otter");
    assert!(
        hit["snippet"].as_str().unwrap().contains("zebracorn"),
        "{hit}"
    );
    let score = hit["score"].as_f64().expect("numeric score");
    assert!(score > 0.0);
    assert!(
        ((score * 10_000.0).round() - score * 10_000.0).abs() < 1e-6,
        "score must be rounded to 4 decimals: {score}"
    );
    assert!(
        hit.get("parent_session_id").is_none_or(Value::is_null),
        "main sessions have no parent: {hit}"
    );
}

#[test]
fn no_match_gives_empty_results_and_zero_total() {
    let s = prompts(&["alpha words here", "beta words there"]);
    let r = s.search("nonexistentzyx");
    assert_eq!(r["results"], json!([]));
    assert_eq!(r["total"], 0);
}

#[test]
fn only_matching_turns_are_returned_with_positive_scores() {
    let s = prompts(&["apple banana", "cherry date", "apple cherry", "fig grape"]);
    let r = s.search_with(json!({"query": "apple", "limit": 100}));
    let mut keys = hit_keys(&r);
    keys.sort();
    assert_eq!(keys, vec![k("s1", 0), k("s1", 2)]);
    for hit in r["results"].as_array().unwrap() {
        assert!(hit["score"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn results_are_sorted_by_score_descending() {
    let s = prompts(&[
        "kiwi",
        "kiwi mango",
        "mango mango mango filler words to dilute",
        "unrelated",
    ]);
    let r = s.search_with(json!({"query": "kiwi mango", "limit": 100}));
    let scores: Vec<f64> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect();
    assert_eq!(scores.len(), 3);
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert_eq!(
        hit_keys(&r)[0],
        k("s1", 1),
        "the turn with both words ranks first"
    );
}

#[test]
fn ties_are_ordered_by_session_id_then_turn_number() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-ties");
    // identical turns everywhere, written in an order unlike the expected one; each after
    // the same other prompt, so their contexts (the prompt before) are equal too
    for sid in ["s-c", "s-a", "s-b"] {
        let mut w = p.session(sid);
        for _ in 0..2 {
            w.exchange("an opening remark", "ok");
            w.exchange("tiebreak identical text", "ok");
        }
    }
    let s = serve(dir);
    let r = s.search_with(json!({"query": "tiebreak", "limit": 100}));
    assert_eq!(
        hit_keys(&r),
        vec![
            k("s-a", 1),
            k("s-a", 3),
            k("s-b", 1),
            k("s-b", 3),
            k("s-c", 1),
            k("s-c", 3)
        ]
    );
    let scores: Vec<&Value> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["score"])
        .collect();
    assert!(scores.windows(2).all(|w| w[0] == w[1]), "{scores:?}");
}

#[test]
fn total_counts_matches_before_the_limit() {
    let s = prompts(&[
        "wombat one",
        "wombat two",
        "wombat three",
        "other",
        "wombat five",
    ]);
    let r = s.search_with(json!({"query": "wombat", "limit": 2}));
    assert_eq!(r["results"].as_array().unwrap().len(), 2);
    assert_eq!(r["total"], 4);
}

#[test]
fn default_limit_is_ten() {
    let list: Vec<String> = (0..15).map(|i| format!("capybara number {i}")).collect();
    let refs: Vec<&str> = list.iter().map(String::as_str).collect();
    let s = prompts(&refs);
    let r = s.search("capybara");
    assert_eq!(r["results"].as_array().unwrap().len(), 10);
    assert_eq!(r["total"], 15);
}

#[test]
fn limit_is_capped_at_one_hundred() {
    let list: Vec<String> = (0..120).map(|i| format!("narwhal number {i}")).collect();
    let refs: Vec<&str> = list.iter().map(String::as_str).collect();
    let s = prompts(&refs);
    let r = s.call_tool(
        "search_conversations",
        json!({"query": "narwhal", "limit": 1000}),
    );
    assert!(
        !r.is_error,
        "limit 1000 is capped, not an error: {}",
        r.text
    );
    let n = r.json["results"].as_array().unwrap().len();
    assert!((1..=100).contains(&n), "{n} results returned");
    assert_eq!(r.json["total"], 120);
}

#[test]
fn session_id_filter_restricts_results() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-filter");
    p.session("keep").exchange("ocelot in keep", "ok");
    p.session("drop").exchange("ocelot in drop", "ok");
    let s = serve(dir);
    let r = s.search_with(json!({"query": "ocelot", "session_id": "keep"}));
    assert_eq!(hit_keys(&r), vec![k("keep", 0)]);
    assert_eq!(r["total"], 1);
}

#[test]
fn project_filter_is_a_case_insensitive_substring() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-work-frontend-app")
        .session("fe")
        .exchange("ocelot frontend", "ok");
    dir.project("-home-u-work-backend-api")
        .session("be")
        .exchange("ocelot backend", "ok");
    let s = serve(dir);
    let r = s.search_with(json!({"query": "ocelot", "project": "FRONT"}));
    assert_eq!(hit_keys(&r), vec![k("fe", 0)]);
    assert_eq!(r["results"][0]["project"], "frontend-app");
    let r = s.search_with(json!({"query": "ocelot", "project": "api"}));
    assert_eq!(hit_keys(&r), vec![k("be", 0)]);
}

#[test]
fn search_is_case_insensitive() {
    let s = prompts(&["The ZebraCorn Protocol", "nothing here"]);
    for q in ["zebracorn", "ZEBRACORN", "ZebraCorn"] {
        assert!(
            hit_keys(&s.search(q)).contains(&k("s1", 0)),
            "query {q:?} must find ZebraCorn"
        );
    }
    let s = prompts(&["zebracorn lowercase", "nothing here"]);
    assert_eq!(hit_keys(&s.search("ZEBRACORN")), vec![k("s1", 0)]);
}

#[test]
fn snake_case_identifiers_are_found_whole_and_by_parts() {
    let s = prompts(&["bump notify_debouncer_full to 0.7", "unrelated prompt"]);
    for q in ["notify_debouncer_full", "debouncer", "notify", "full"] {
        assert_eq!(hit_keys(&s.search(q)), vec![k("s1", 0)], "query {q:?}");
    }
}

#[test]
fn camel_case_identifiers_are_found_whole_and_by_parts() {
    let s = prompts(&["rename CamelCaseName everywhere", "unrelated prompt"]);
    for q in ["CamelCaseName", "camelcasename", "camel", "case"] {
        assert_eq!(hit_keys(&s.search(q)), vec![k("s1", 0)], "query {q:?}");
    }
}

#[test]
fn paths_are_found_by_components() {
    let s = prompts(&["look at src/index/mod.rs please", "unrelated prompt"]);
    for q in ["mod.rs", "index", "src/index/mod.rs"] {
        assert_eq!(hit_keys(&s.search(q)), vec![k("s1", 0)], "query {q:?}");
    }
}

#[test]
fn flags_are_found_by_parts() {
    let s = prompts(&["set --max-staleness-ms to 500", "unrelated prompt"]);
    for q in ["staleness", "--max-staleness-ms", "max-staleness-ms"] {
        assert_eq!(hit_keys(&s.search(q)), vec![k("s1", 0)], "query {q:?}");
    }
}

#[test]
fn not_and_no_are_not_dropped() {
    let s = prompts(&["this does not work", "there is no way", "everything fine"]);
    assert_eq!(hit_keys(&s.search("not")), vec![k("s1", 0)]);
    assert_eq!(hit_keys(&s.search("no")), vec![k("s1", 1)]);
}

#[test]
fn snippet_is_bounded_and_taken_from_the_turn() {
    let long = format!("yakshave {}", "lorem ipsum dolor sit amet ".repeat(80));
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-snip").session("sn");
    w.user(&long);
    w.assistant_text(&new_msg_id(), &"consectetur adipiscing ".repeat(50));
    let s = serve(dir);
    let hit = &s.search("yakshave")["results"][0];
    let snippet = hit["snippet"].as_str().unwrap();
    let n = snippet.chars().count();
    assert!(n <= 320, "snippet too long: {n} chars");
    assert!(n >= 50, "snippet too short: {snippet:?}");
    let words: Vec<&str> = snippet
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .collect();
    let turn_text = format!("{long} consectetur adipiscing");
    assert!(!words.is_empty(), "no words to check in {snippet:?}");
    assert!(
        words.iter().all(|w| turn_text.contains(w)),
        "snippet words must come from the turn: {snippet:?}"
    );
}

#[test]
fn same_query_twice_gives_identical_json() {
    let dir = ProjectsDir::new();
    for (i, proj) in ["-home-u-work-one", "-home-u-work-two"].iter().enumerate() {
        let p = dir.project(proj);
        for j in 0..3 {
            let mut w = p.session(&format!("d{i}{j}"));
            w.exchange("determinism check repeated", "determinism reply");
            w.exchange("determinism second", "other");
        }
    }
    let s = serve(dir);
    let args = json!({"query": "determinism repeated", "limit": 100});
    let a = s.call_tool("search_conversations", args.clone());
    let b = s.call_tool("search_conversations", args);
    assert_eq!(a.text, b.text);
    assert_eq!(a.json, b.json);
    assert_eq!(a.json["total"], 12);
}
