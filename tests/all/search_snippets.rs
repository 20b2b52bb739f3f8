//! search_conversations snippets and match reporting: about 300 characters around the densest
//! cluster of query-term matches (not the head of the turn), cut at word boundaries with `…`
//! where text was cut, `matched_terms` naming what matched, and a `note` when the match is only
//! in tool names, file paths or commands (which are searchable facts).

use crate::common::fixture::ProjectsDir;
use crate::common::search::{bash, edit, first_snippet, results, strings, tool_turn};
use crate::common::{Served, serve};
use serde_json::{Value, json};

/// Most characters a snippet may have: about 300 plus an ellipsis at each end.
const SNIPPET_MAX: usize = 302;

/// Filler prose of at least `chars` characters made of numbered words.
fn filler(tag: &str, chars: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < chars {
        s.push_str(&format!("{tag}{i} "));
        i += 1;
    }
    s.trim_end().to_string()
}

fn one_turn(prompt: &str, reply: &str) -> Served {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-snip").session("s1");
    w.exchange(prompt, reply);
    serve(dir)
}

/// The snippet without its ellipses; asserts the shape around the cut ends.
#[track_caller]
fn body_of(snippet: &str, source: &str) -> String {
    let n = snippet.chars().count();
    assert!(n <= SNIPPET_MAX, "snippet of {n} characters: {snippet:?}");
    let body = snippet.trim_start_matches('…').trim_end_matches('…').trim();
    assert!(
        source.contains(body),
        "the snippet body is a verbatim part of the turn: {body:?}"
    );
    let at = source.find(body).unwrap();
    let end = at + body.len();
    let word_char = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    assert!(
        !word_char(source[..at].chars().next_back()) || !word_char(body.chars().next()),
        "the snippet starts inside a word: {snippet:?}"
    );
    assert!(
        !word_char(source[end..].chars().next()) || !word_char(body.chars().next_back()),
        "the snippet ends inside a word: {snippet:?}"
    );
    assert_eq!(
        snippet.starts_with('…'),
        at > 0,
        "`…` marks a cut at the start, only then: {snippet:?}"
    );
    assert_eq!(
        snippet.ends_with('…'),
        end < source.trim_end().len(),
        "`…` marks a cut at the end, only then: {snippet:?}"
    );
    body.to_string()
}

#[test]
fn a_match_deep_in_a_long_prompt_is_inside_the_snippet() {
    let prompt = format!(
        "{} the zebracorn lives here {}",
        filler("alpha", 6000),
        filler("omega", 3000)
    );
    let s = one_turn(&prompt, "ok");
    let snip = first_snippet(&s.search("zebracorn"));
    assert!(snip.contains("zebracorn"), "{snip:?}");
    let body = body_of(&snip, &prompt);
    assert!(snip.starts_with('…') && snip.ends_with('…'), "{snip:?}");
    assert!(
        body.chars().count() >= 200,
        "about 300 characters: {snip:?}"
    );
}

#[test]
fn a_match_deep_in_a_long_reply_is_inside_the_snippet() {
    let reply = format!("{} then notify_debouncer fired", filler("beta", 9000));
    let s = one_turn("short question", &reply);
    let snip = first_snippet(&s.search("notify_debouncer"));
    assert!(snip.contains("notify_debouncer"), "{snip:?}");
    assert!(snip.starts_with('…'), "{snip:?}");
    let prose = format!("short question\n{reply}");
    body_of(&snip, &prose);
}

#[test]
fn the_snippet_goes_to_the_densest_cluster_of_query_terms() {
    let prompt = format!(
        "{} lonely quokka {} quokka wombat numbat together {}",
        filler("x", 800),
        filler("y", 2000),
        filler("z", 800)
    );
    let s = one_turn(&prompt, "ok");
    let snip = first_snippet(&s.search("quokka wombat numbat"));
    assert!(snip.contains("quokka wombat numbat"), "{snip:?}");
    body_of(&snip, &prompt);
}

#[test]
fn a_short_turn_is_shown_whole_without_ellipses() {
    let s = one_turn("where is the zebracorn config", "In zebracorn.toml.");
    let snip = first_snippet(&s.search("zebracorn"));
    assert!(!snip.contains('…'), "{snip:?}");
    assert!(snip.contains("where is the zebracorn config"), "{snip:?}");
}

#[test]
fn snippets_of_non_ascii_text_are_cut_on_character_boundaries() {
    // Matches at every byte alignment next to three-byte characters, so that the window edge
    // falls inside a character for some of them.
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-snip").session("s1");
    let cjk = "検索結果のスニペットが長すぎます。".repeat(30);
    let umlaut = "Größenänderung über Änderungen ".repeat(20);
    for pad in 0..6 {
        let x = "x".repeat(pad);
        w.exchange(&format!("{cjk}{x} zebracorn {cjk}"), "ok");
        w.exchange(&format!("{umlaut}{x} zebracorn {umlaut}"), "ok");
        w.exchange(&format!("{x} zebracorn {cjk}"), "ok");
    }
    let s = serve(dir);
    let r = s.call_tool(
        "search_conversations",
        json!({"query": "zebracorn", "limit": 100, "max_chars": 60000}),
    );
    assert!(!r.is_error, "search failed: {}", r.text);
    assert_eq!(results(&r.json).len(), 18, "{}", r.text);
    for hit in results(&r.json) {
        let snip = hit["snippet"].as_str().unwrap();
        assert!(snip.contains("zebracorn"), "{snip:?}");
        assert!(snip.chars().count() <= SNIPPET_MAX, "{snip:?}");
    }
}

#[test]
fn matched_terms_name_the_query_parts_each_turn_matched() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-snip").session("s1");
    w.exchange("alpha only", "ok");
    w.exchange("alpha and beta here", "ok");
    w.exchange("the exact words and gammaray", "ok");
    let s = serve(dir);
    let r = s.search_with(json!({"query": "alpha beta nosuchword gamma*", "limit": 100}));
    let by_turn = |n: u64| -> Vec<String> {
        let hit = results(&r)
            .iter()
            .find(|h| h["turn_number"] == n)
            .unwrap_or_else(|| panic!("turn {n} missing: {r}"));
        let mut t = strings(&hit["matched_terms"]);
        t.sort();
        t
    };
    assert_eq!(by_turn(0), ["alpha"]);
    assert_eq!(by_turn(1), ["alpha", "beta"]);
    assert_eq!(by_turn(2), ["gamma*"]);
    let r = s.search_with(json!({"query": "\"exact words\" Alpha"}));
    let terms = strings(&results(&r)[0]["matched_terms"]);
    assert_eq!(terms, ["\"exact words\""], "{r}");
}

fn tooled() -> Served {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-facts").session("f1");
    tool_turn(
        &mut w,
        "tidy things up please",
        "Done.",
        &[
            edit("/home/u/work/facts/src/index/scoring.rs"),
            bash("cargo nextest run --workspace"),
        ],
    );
    tool_turn(&mut w, "what does scoring.rs do", "It ranks.", &[]);
    serve(dir)
}

fn hit_for(r: &Value, turn: u64) -> &Value {
    results(r)
        .iter()
        .find(|h| h["turn_number"] == turn)
        .unwrap_or_else(|| panic!("turn {turn} missing: {r}"))
}

#[test]
fn tool_facts_are_searchable_and_a_tools_only_match_says_so() {
    let s = tooled();
    for q in ["nextest", "cargo nextest", "src/index/scoring.rs", "Edit"] {
        let r = s.search(q);
        let hit = hit_for(&r, 0);
        let note = hit["note"].as_str().unwrap_or("");
        assert!(
            !note.is_empty(),
            "{q:?}: a match only in tools must carry a note: {hit}"
        );
        assert!(
            hit["snippet"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains(&q.to_lowercase()),
            "{q:?}: the snippet shows the matching fact: {hit}"
        );
        assert!(!strings(&hit["matched_terms"]).is_empty(), "{hit}");
    }
    let r = s.search("scoring.rs");
    assert!(
        hit_for(&r, 1).get("note").is_none_or(Value::is_null),
        "a match in the prompt has no tools-only note: {r}"
    );
    let r = s.search("tidy nextest");
    assert!(
        hit_for(&r, 0).get("note").is_none_or(Value::is_null),
        "a turn matching in its prompt too is not tools-only: {r}"
    );
}
