//! search_conversations query syntax: plain keywords (any may match), `"exact phrase"` (words
//! contiguous and in order: the turns holding it rank first, then those with only its words),
//! `-excluded` words and `-"phrases"`, `prefix*`, and malformed syntax degrading to keywords
//! (an unclosed quote) or to "nothing to search for" with a note, never to an error.

use crate::common::fixture::ProjectsDir;
use crate::common::live::{
    DEBOUNCE_MS, assert_converges_to_fresh, serve_live, tag, wait_caught_up,
};
use crate::common::mcp::hit_keys;
use crate::common::search::{results, strings};
use crate::common::{Served, serve, serve_prompts};
use serde_json::{Value, json};

/// One session `s1`, one turn per prompt (each answered with "ok"), turn numbers from 0.
fn prompts(list: &[&str]) -> Served {
    serve_prompts("-home-u-work-syntax", list)
}

/// Sorted turn numbers of every result (limit 100).
fn turns(s: &Served, query: &str) -> Vec<u64> {
    let r = s.search_with(json!({"query": query, "limit": 100}));
    let mut t: Vec<u64> = hit_keys(&r).into_iter().map(|(_, n)| n).collect();
    t.sort_unstable();
    assert_eq!(
        r["total"].as_u64(),
        Some(t.len() as u64),
        "total must count the matches: {r}"
    );
    t
}

/// The phrases of `query` as `matched_terms` names them (`"…"`, not the excluded `-"…"`).
fn phrase_labels(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = query;
    while let Some(i) = rest.find('"') {
        let excluded = rest[..i].ends_with('-');
        let Some(len) = rest[i + 1..].find('"') else {
            break;
        };
        let body = rest[i + 1..i + 1 + len].trim();
        if !excluded {
            out.push(format!("\"{body}\""));
        }
        rest = &rest[i + 2 + len..];
    }
    out
}

/// Sorted turn numbers of the results that hold every phrase of `query` (limit 100), checking
/// that they rank above every other result and that `total` counts all the results.
fn holders(s: &Served, query: &str) -> Vec<u64> {
    let labels = phrase_labels(query);
    assert!(!labels.is_empty(), "{query:?} has no phrase");
    let r = s.search_with(json!({"query": query, "limit": 100}));
    let rows = results(&r);
    assert_eq!(r["total"].as_u64(), Some(rows.len() as u64), "{r}");
    let holds: Vec<bool> = rows
        .iter()
        .map(|h| {
            let terms = strings(&h["matched_terms"]);
            labels.iter().all(|l| terms.contains(l))
        })
        .collect();
    assert!(
        holds.windows(2).all(|w| w[0] || !w[1]),
        "the turns holding the phrase rank first: {r}"
    );
    let mut t: Vec<u64> = rows
        .iter()
        .zip(&holds)
        .filter(|(_, h)| **h)
        .map(|(h, _)| h["turn_number"].as_u64().expect("turn_number"))
        .collect();
    t.sort_unstable();
    t
}

const WATCHDOG: &[&str] = &[
    "the watchdog reindex step runs after the debounce", // 0: contiguous
    "watchdog then much later a reindex happens",        // 1: words apart
    "reindex watchdog in the reverse order",             // 2: reversed
    "only the watchdog here",                            // 3: one word
    "Watchdog, REINDEX! with punctuation and other case", // 4: contiguous modulo case/punct
    "the watchdog reindex is flaky test material",       // 5: contiguous + flaky test
    "watchdog reindex with flaky and unrelated test words", // 6: contiguous + flaky…test apart
];

#[test]
fn plain_keywords_match_turns_holding_any_of_them() {
    let s = prompts(WATCHDOG);
    assert_eq!(turns(&s, "reindex"), [0, 1, 2, 4, 5, 6]);
    assert_eq!(
        turns(&s, "watchdog nosuchwordanywhere"),
        [0, 1, 2, 3, 4, 5, 6]
    );
    let r = s.search_with(json!({"query": "watchdog reindex", "limit": 100}));
    let top = &results(&r)[0];
    assert_ne!(
        top["turn_number"], 3,
        "a turn holding both keywords outranks one holding only one: {r}"
    );
}

#[test]
fn a_phrase_matches_only_contiguous_words_in_order() {
    // (until issue 38 a phrase was a filter; the turns holding it now rank first)
    let s = prompts(WATCHDOG);
    assert_eq!(holders(&s, r#""watchdog reindex""#), [0, 4, 5, 6]);
    assert_eq!(holders(&s, r#""reindex watchdog""#), [2]);
    assert_eq!(holders(&s, r#""watchdog then much later""#), [1]);
    assert_eq!(
        holders(&s, r#""reindex happens watchdog""#),
        Vec::<u64>::new()
    );
    // the others still come, holding only the words
    assert_eq!(turns(&s, r#""reindex watchdog""#), [0, 1, 2, 3, 4, 5, 6]);
}

#[test]
fn a_phrase_ranks_first_when_combined_with_keywords() {
    let s = prompts(WATCHDOG);
    // `debounce` alone is in turn 0 only; `only` alone in turn 3; the phrase's turns lead both.
    assert_eq!(holders(&s, r#""watchdog reindex" only"#), [0, 4, 5, 6]);
    assert_eq!(holders(&s, r#"debounce "reverse order""#), [2]);
    let r = s.search_with(json!({"query": r#""watchdog reindex" debounce"#}));
    assert_eq!(
        results(&r)[0]["turn_number"],
        0,
        "the keyword still ranks among phrase matches: {r}"
    );
}

#[test]
fn a_quoted_phrase_no_turn_holds_still_returns_its_word_matches_with_a_note() {
    // a misspelt title: the exact phrase is nowhere, its words rank the turn first
    let s = prompts(&[
        "we finally finished Xenoblade Chronicles last night",
        "an unrelated turn about the weather",
    ]);
    let r = s.search_with(json!({"query": r#"what did they think of "Xeonoblade Chronicles"?"#}));
    let rows = results(&r);
    assert_eq!(
        rows.first().map(|h| &h["turn_number"]),
        Some(&json!(0)),
        "{r}"
    );
    let terms = strings(&rows[0]["matched_terms"]);
    assert_eq!(
        terms,
        ["Chronicles"],
        "a word match does not claim the phrase: {r}"
    );
    let note = r["note"].as_str().unwrap_or("");
    assert!(
        note.contains(r#"No turn holds the exact phrase "Xeonoblade Chronicles""#)
            && note.contains("match only its words"),
        "the note says these are word matches: {r}"
    );
    assert_eq!(r["total"], rows.len(), "{r}");
    assert_eq!(r["complete"], true, "{r}");
}

#[test]
fn a_turn_holding_the_phrase_ranks_above_one_with_the_words_apart_and_higher_bm25() {
    let s = prompts(&[
        "something else to start with", // 0
        "we saw the watchdog reindex in a long list of many other words today", // 1: the phrase
        "watchdog first, reindex second; watchdog again, reindex again", // 2: words apart
    ]);
    let plain = s.search_with(json!({"query": "watchdog reindex"}));
    assert_eq!(
        results(&plain)[0]["turn_number"],
        2,
        "the words alone rank the turn with the words apart first (higher BM25): {plain}"
    );
    let r = s.search_with(json!({"query": r#""watchdog reindex""#}));
    let order: Vec<u64> = hit_keys(&r).into_iter().map(|(_, n)| n).collect();
    assert_eq!(
        order,
        [1, 2],
        "the phrase's turn first, the words' turn after it: {r}"
    );
    assert_eq!(
        strings(&results(&r)[0]["matched_terms"]),
        [r#""watchdog reindex""#]
    );
    let apart = strings(&results(&r)[1]["matched_terms"]);
    assert!(
        !apart.iter().any(|t| t.contains('"')),
        "the turn with the words apart does not claim the phrase: {r}"
    );
    let note = r["note"].as_str().unwrap_or("");
    assert!(
        note.contains(r#"1 turn holds the exact phrase "watchdog reindex" and ranks first"#),
        "the note says how many hold the phrase: {r}"
    );
    assert_eq!(r["total"], 2, "{r}");
    // paging walks the same order across the two kinds
    let page = |offset: u64| {
        let r =
            s.search_with(json!({"query": r#""watchdog reindex""#, "limit": 1, "offset": offset}));
        hit_keys(&r).into_iter().map(|(_, n)| n).collect::<Vec<_>>()
    };
    assert_eq!([page(0), page(1), page(2)].concat(), [1, 2]);
}

#[test]
fn exclusions_stay_filters_beside_a_phrase() {
    let s = prompts(WATCHDOG);
    // turns 5 and 6 hold `flaky`; turn 5 holds "flaky test"
    assert_eq!(turns(&s, r#""watchdog reindex" -flaky"#), [0, 1, 2, 3, 4]);
    assert_eq!(holders(&s, r#""watchdog reindex" -flaky"#), [0, 4]);
    assert_eq!(
        turns(&s, r#""watchdog reindex" -"flaky test""#),
        [0, 1, 2, 3, 4, 6]
    );
    // no turn may hold the phrase; turn 6 holds its words apart
    assert_eq!(turns(&s, r#""flaky test" -"flaky test""#), [6]);
}

#[test]
fn an_excluded_word_removes_every_turn_containing_it() {
    let s = prompts(WATCHDOG);
    assert_eq!(turns(&s, "watchdog -flaky"), [0, 1, 2, 3, 4]);
    assert_eq!(turns(&s, "watchdog -FLAKY -reverse"), [0, 1, 3, 4]);
    assert_eq!(holders(&s, r#""watchdog reindex" -punctuation"#), [0, 5, 6]);
    assert_eq!(
        turns(&s, r#""watchdog reindex" -punctuation"#),
        [0, 1, 2, 3, 5, 6]
    );
}

#[test]
fn an_excluded_phrase_removes_only_turns_with_the_contiguous_phrase() {
    let s = prompts(WATCHDOG);
    // turn 5 has "flaky test"; turn 6 has both words apart and stays
    assert_eq!(turns(&s, r#"watchdog -"flaky test""#), [0, 1, 2, 3, 4, 6]);
    assert_eq!(turns(&s, r#"watchdog -"FLAKY, test""#), [0, 1, 2, 3, 4, 6]);
}

#[test]
fn a_prefix_matches_words_and_identifier_parts_starting_so() {
    let s = prompts(&[
        "the debounce window",               // 0
        "a debouncer thread",                // 1
        "debouncing twice",                  // 2
        "we bounce the event",               // 3: does not start with debounc
        "uses notify_debouncer_full for it", // 4: identifier part
        "DEBOUNCED in capitals",             // 5
    ]);
    assert_eq!(turns(&s, "debounc*"), [0, 1, 2, 4, 5]);
    assert_eq!(turns(&s, "debounc* -twice"), [0, 1, 4, 5]);
    assert_eq!(turns(&s, "notify_deb*"), [4]);
    let r = s.search_with(json!({"query": "debounc*", "limit": 100}));
    assert!(!results(&r).is_empty(), "no hits to check: {r}");
    for hit in results(&r) {
        assert_eq!(strings(&hit["matched_terms"]), ["debounc*"], "{hit}");
    }
}

#[test]
fn an_unclosed_quote_degrades_to_keywords() {
    let s = prompts(WATCHDOG);
    for q in [
        r#""watchdog reindex"#,
        r#"watchdog "reindex"#,
        r#"reindex watchdog""#,
    ] {
        let r = s.call_tool("search_conversations", json!({"query": q, "limit": 100}));
        assert!(!r.is_error, "{q:?} must not be an error: {}", r.text);
        let mut t: Vec<u64> = hit_keys(&r.json).into_iter().map(|(_, n)| n).collect();
        t.sort_unstable();
        assert_eq!(
            t,
            [0, 1, 2, 3, 4, 5, 6],
            "{q:?} searches its words: {}",
            r.text
        );
    }
}

#[test]
fn a_query_of_only_exclusions_gives_no_results_and_a_note() {
    let s = prompts(WATCHDOG);
    for q in [
        "-watchdog",
        r#"-"watchdog reindex""#,
        "-watchdog -reindex",
        r#"""#,
        "*",
    ] {
        let r = s.call_tool("search_conversations", json!({"query": q}));
        assert!(!r.is_error, "{q:?} must not be an error: {}", r.text);
        assert_eq!(r.json["results"], json!([]), "{q:?}: {}", r.text);
        assert_eq!(r.json["total"], 0, "{q:?}: {}", r.text);
        let note = r.json["note"].as_str().unwrap_or("");
        assert!(
            !note.is_empty(),
            "{q:?}: the reply must say why nothing was searched: {}",
            r.text
        );
    }
}

#[test]
fn a_double_dash_flag_is_a_keyword_not_an_exclusion() {
    let s = prompts(&[
        "run it with --max-staleness-ms 500",
        "max staleness is measured in ms",
        "nothing relevant",
    ]);
    let r = s.search_with(json!({"query": "--max-staleness-ms", "limit": 100}));
    assert_eq!(results(&r)[0]["turn_number"], 0, "{r}");
    assert!(
        hit_keys(&r).iter().all(|(_, n)| *n != 2),
        "a flag does not exclude anything: {r}"
    );
}

#[test]
fn operators_combine_in_one_query() {
    let s = prompts(WATCHDOG);
    let r = s.search_with(
        json!({"query": r#""watchdog reindex" reind* -flaky -"other case""#,
                                 "limit": 100}),
    );
    let t: Vec<u64> = hit_keys(&r).into_iter().map(|(_, n)| n).collect();
    // 4 has "other case", 5 and 6 `flaky`; 0 holds the phrase, 1-3 its words (or the prefix)
    assert_eq!(t.first(), Some(&0), "{r}");
    let mut t = t;
    t.sort_unstable();
    assert_eq!(t, [0, 1, 2, 3], "{r}");
    let terms = strings(&results(&r)[0]["matched_terms"]);
    assert!(
        terms.contains(&"\"watchdog reindex\"".to_string())
            && terms.contains(&"reind*".to_string()),
        "matched_terms names the phrase and the prefix as written: {terms:?}"
    );
    let r: Value = s.search_with(json!({"query": "watchdog -watchdog"}));
    assert_eq!(
        r["total"], 0,
        "excluding the only keyword leaves nothing: {r}"
    );
}

#[test]
fn a_phrase_does_not_span_the_prompt_and_the_reply() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-syntax").session("s1");
    w.exchange("please restart the watchdog", "reindex finished fine");
    w.exchange("the watchdog reindex ran", "ok");
    let s = serve(dir);
    assert_eq!(
        holders(&s, r#""watchdog reindex""#),
        [1],
        "the prompt's last word and the reply's first are not one phrase"
    );
}

#[test]
fn a_phrase_matches_words_however_the_index_splits_them() {
    // a phrase's words are alphanumeric runs; the index's terms are not always those runs
    // (a combining mark splits `ke\u{301}rr` into the words `ke` and `rr`, indexed as `kerr`),
    // and such turns must still be found
    let s = prompts(&[
        "call x_eRR handler now",       // 0: `err` inside a compound
        "the _err handler again",       // 1: `_err`
        "err handler in plain words",   // 2
        "err and then a handler apart", // 3: apart
        "fooErr handler",               // 4: one word `fooerr`
        "\u{212A}ey value",             // 5: the Kelvin sign lowercases to `k`
        "cafe\u{301} bar",              // 6: a combining mark ends the word `cafe`
        "ke\u{301}rr handler",          // 7: the word `rr`
    ]);
    assert_eq!(holders(&s, r#""err handler""#), [0, 1, 2]);
    assert_eq!(holders(&s, r#""key value""#), [5]);
    assert_eq!(holders(&s, r#""cafe bar""#), [6]);
    assert_eq!(holders(&s, r#""rr handler""#), [7]);
    // where no turn has the term `rr` at all
    let s = prompts(&["ke\u{301}rr handler", "a handler without it"]);
    assert_eq!(holders(&s, r#""rr handler""#), [0]);
    assert_eq!(holders(&s, r#""nowhere handler""#), Vec::<u64>::new());
}

/// Many words share the prefix `zq`: in the session read by the first build, the `zqt…` words
/// are the more frequent; the session written afterwards (indexed as another segment) makes the
/// `zqu…` words the more frequent overall. `zq*` must stand for the 64 words most frequent in
/// the whole index whichever way it was built: the live server (two segments) finds exactly
/// what a fresh server over the same files (one segment) finds. (Picked per segment, the live
/// server matched the `zqt…` turns too: 256 matches instead of 192.)
#[test]
fn a_prefix_stands_for_the_same_words_however_the_index_was_built() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-prefixcut");
    let mut first = p.session("5e9c0000-0000-4000-8000-000000000001");
    for i in 0..64 {
        let (t, u) = (tag("zqt", i), tag("zqu", i));
        first.exchange(&format!("about {t} here"), "ok");
        first.exchange(&format!("again {t} there"), "ok");
        first.exchange(&format!("once {u} only"), "ok");
    }
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let mut second = s
        .dir
        .project("-home-u-work-prefixcut")
        .session("5e9c0000-0000-4000-8000-000000000002");
    for i in 0..64 {
        let u = tag("zqu", i);
        second.exchange(&format!("later {u} here"), "ok");
        second.exchange(&format!("later {u} there"), "ok");
        second.exchange(&format!("later {u} again"), "ok");
    }
    wait_caught_up(&s, s.dir.path());
    let fresh = assert_converges_to_fresh(&s, s.dir.path(), &[], &["zq*", "zq* about"]);
    assert_eq!(
        // each zqu… word is in 4 turns (and in the context of 3 or 4 more), each zqt… word in
        // 2 (and 1 more's context): the expansion's 64 words are the zqu… ones
        fresh["zq*"].0,
        256,
        "the zqu… turns only: {:?}",
        fresh["zq*"]
    );
}
