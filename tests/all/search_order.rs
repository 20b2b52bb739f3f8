//! search_conversations result order and paging: sort=relevance (default; ties by session_id
//! then turn number) and sort=recent (newest first); pages of any size concatenate to the
//! single big page, with no duplicates or gaps, a stable total and a next_offset that ends.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::hit_keys;
use crate::common::search::{assert_rejected, results};
use crate::common::{Served, serve};
use serde_json::{Value, json};

/// Sessions `s00`..`s05` with turns whose relevance for `pageword` varies (1–2 occurrences,
/// longer or shorter text) and with many exact ties; timestamps interleave across sessions
/// so that recency order differs from both relevance and id order.
fn corpus() -> Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-paging");
    for s in 0..6u32 {
        let mut w = p.session(&format!("s{s:02}"));
        // a day per session, half a day per record: turns of neighbouring sessions interleave
        // in time (with some equal timestamps), and s05 holds the newest turn
        w.set_time(&format!("2026-04-{:02}T08:00:00.000Z", 1 + s));
        w.set_step_ms(12 * 3_600_000);
        for t in 0..7u32 {
            let prompt = match (s + t) % 4 {
                0 => "pageword".to_string(),
                1 => "pageword pageword and more words here".to_string(),
                2 => "pageword tied text".to_string(),
                _ => format!("pageword tied text {}", "filler ".repeat(t as usize)),
            };
            w.exchange(&prompt, "ok");
        }
        w.exchange("unrelated turn", "ok");
    }
    serve(dir)
}

fn search(s: &Served, args: Value) -> Value {
    s.search_with(args)
}

#[test]
fn relevance_is_the_default_with_scores_descending_and_ties_by_session_then_turn() {
    let s = corpus();
    let r = search(
        &s,
        json!({"query": "pageword", "limit": 100, "max_chars": 60000}),
    );
    let explicit = search(
        &s,
        json!({"query": "pageword", "limit": 100, "max_chars": 60000, "sort": "relevance"}),
    );
    assert_eq!(r["results"], explicit["results"]);
    let hits = results(&r);
    assert_eq!(hits.len(), 42);
    for pair in hits.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (sa, sb) = (a["score"].as_f64().unwrap(), b["score"].as_f64().unwrap());
        assert!(sa >= sb, "scores must not increase: {a} then {b}");
        if sa == sb {
            let ka = (
                a["session_id"].as_str().unwrap(),
                a["turn_number"].as_u64().unwrap(),
            );
            let kb = (
                b["session_id"].as_str().unwrap(),
                b["turn_number"].as_u64().unwrap(),
            );
            assert!(
                ka < kb,
                "equal scores are ordered by session_id then turn: {ka:?} then {kb:?}"
            );
        }
    }
    let distinct: std::collections::BTreeSet<String> =
        hits.iter().map(|h| h["score"].to_string()).collect();
    assert!(
        distinct.len() >= 3,
        "the fixture needs several score levels: {distinct:?}"
    );
}

#[test]
fn recent_sorts_newest_first_whatever_the_score() {
    let s = corpus();
    let r = search(
        &s,
        json!({"query": "pageword", "limit": 100, "max_chars": 60000, "sort": "recent"}),
    );
    let hits = results(&r);
    assert_eq!(hits.len(), 42);
    let stamps: Vec<&str> = hits
        .iter()
        .map(|h| h["timestamp"].as_str().unwrap())
        .collect();
    let mut sorted = stamps.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(stamps, sorted, "newest first");
    assert_eq!(hits[0]["session_id"], "s05", "{}", hits[0]);
    assert_eq!(hits[0]["turn_number"], 6);
    let by_relevance = search(
        &s,
        json!({"query": "pageword", "limit": 100, "max_chars": 60000}),
    );
    assert_ne!(
        hit_keys(&r),
        hit_keys(&by_relevance),
        "the two orders differ here"
    );
    assert_eq!(r["total"], by_relevance["total"]);
    let r2 = search(
        &s,
        json!({"query": "pageword", "limit": 100, "max_chars": 60000, "sort": "RECENT"}),
    );
    assert_eq!(
        hit_keys(&r2),
        hit_keys(&r),
        "sort values are case-insensitive"
    );
    assert_rejected(
        &s,
        "search_conversations",
        json!({"query": "pageword", "sort": "date"}),
        &["sort", "relevance", "recent"],
    );
}

/// Pages of `size` read by following next_offset from 0.
fn paged(s: &Served, base: &Value, size: u64) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    let mut pages = 0;
    loop {
        let mut args = base.clone();
        args["limit"] = json!(size);
        args["offset"] = json!(offset);
        let r = search(s, args);
        assert_eq!(r["offset"], offset, "{r}");
        let keys = hit_keys(&r);
        assert!(keys.len() as u64 <= size);
        out.extend(keys);
        pages += 1;
        assert!(pages < 200, "paging does not end");
        match r["next_offset"].as_u64() {
            Some(n) => {
                assert_eq!(n, offset + size, "next_offset follows the page: {r}");
                offset = n;
            }
            None => {
                assert_eq!(out.len() as u64, r["total"].as_u64().unwrap(), "{r}");
                break;
            }
        }
    }
    out
}

#[test]
fn pages_of_any_size_concatenate_to_the_single_page() {
    let s = corpus();
    for base in [
        json!({"query": "pageword"}),
        json!({"query": "pageword", "sort": "recent"}),
        json!({"query": "pageword tied"}),
        json!({"query": "pageword", "project": "paging", "since": "2026-04-06"}),
    ] {
        let mut all_args = base.clone();
        all_args["limit"] = json!(100);
        all_args["max_chars"] = json!(60000);
        let all = hit_keys(&search(&s, all_args));
        assert!(all.len() > 10, "{base}: {all:?}");
        let unique: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(unique.len(), all.len(), "{base}: duplicates in {all:?}");
        for size in [1, 2, 3, 7, 10] {
            assert_eq!(paged(&s, &base, size), all, "{base} in pages of {size}");
        }
    }
}

#[test]
fn an_offset_past_the_end_is_an_empty_page_not_an_error() {
    let s = corpus();
    let r = search(&s, json!({"query": "pageword", "offset": 42}));
    assert_eq!(r["results"], json!([]));
    assert_eq!(r["total"], 42);
    assert!(r.get("next_offset").is_none_or(Value::is_null), "{r}");
    let r = search(&s, json!({"query": "pageword", "offset": 1000, "limit": 5}));
    assert_eq!(r["results"], json!([]));
    let r = search(&s, json!({"query": "pageword", "offset": 41, "limit": 5}));
    assert_eq!(results(&r).len(), 1);
    assert!(r.get("next_offset").is_none_or(Value::is_null), "{r}");
}
