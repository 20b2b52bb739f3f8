//! Duplicate turns: a resumed (or forked) session file starts with byte-for-byte copies of an
//! earlier session's records (same uuids, the earlier sessionId). A copied turn appears once in
//! search results and in find_file_history, attributed to the earliest session holding it, and
//! counts once in `total`; restricted with session_id to a later session it is found there.

use crate::common::fixture::{ProjectsDir, SessionWriter};
use crate::common::mcp::{hit_keys, k};
use crate::common::search::{edit, page_all, results, tool_turn};
use crate::common::{Served, serve};
use serde_json::{Value, json};

/// The original session. Its id sorts *after* the copies' ids, so attribution by id order
/// rather than by time is caught.
const EARLY: &str = "9f3e0c1a-0000-4000-8000-000000000001";
/// Resumes EARLY: copies its turns 0 and 1, then adds turns 2 and 3.
const LATE: &str = "1a2b3c4d-0000-4000-8000-000000000002";
/// Forks LATE: copies EARLY's turns 0–1 and LATE's turn 2, then adds turn 3.
const FORK: &str = "0aaa0000-0000-4000-8000-000000000003";

/// The first `n` lines of a session file, for copying into another one.
fn head_lines(w: &SessionWriter, n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(w.path()).expect("read session file");
    text.lines().take(n).map(str::to_string).collect()
}

fn resumed(copy_from: &[String], to: &mut SessionWriter, leaf: &str) {
    to.record(json!({"type": "summary", "summary": "Resumed work", "leafUuid": leaf}));
    for line in copy_from {
        to.raw_line(line);
    }
}

fn corpus() -> Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-dups");
    let mut e = p.session(EARLY);
    e.set_time("2026-04-01T10:00:00.000Z");
    e.exchange("copiedalpha first question", "ok"); // 2 lines
    let leaf = tool_turn(&mut e, "copiedbeta second", "", &[edit("/w/src/dup.rs")]); // 3 lines
    e.exchange("earlyonly third", "ok");
    let copied = head_lines(&e, 5);

    let mut l = p.session(LATE);
    resumed(&copied, &mut l, &leaf);
    l.set_time("2026-04-03T09:00:00.000Z");
    l.exchange("lateonly resumed question", "ok"); // turn 2: 2 lines
    l.exchange("copiedalpha asked again after resuming", "ok"); // turn 3
    let fork_copy = head_lines(&l, 1 + 5 + 2);

    let mut f = p.session(FORK);
    for line in &fork_copy {
        f.raw_line(line);
    }
    f.set_time("2026-04-05T09:00:00.000Z");
    f.exchange("forkonly question", "ok"); // turn 3
    serve(dir)
}

fn search(s: &Served, args: Value) -> Value {
    let mut a = args;
    a["limit"] = json!(100);
    s.search_with(a)
}

#[test]
fn the_sessions_hold_the_copied_turns() {
    let s = corpus();
    for (id, turns) in [(EARLY, 3), (LATE, 4), (FORK, 4)] {
        let texts = s.user_texts(id);
        assert_eq!(texts.len(), turns, "{id}: {texts:?}");
        assert_eq!(texts[1], "copiedbeta second", "{id}: {texts:?}");
    }
}

#[test]
fn a_copied_turn_is_one_result_attributed_to_the_earliest_session() {
    let s = corpus();
    for q in ["copiedbeta", "\"copiedbeta second\"", "copiedb*"] {
        let r = search(&s, json!({"query": q}));
        assert_eq!(hit_keys(&r), [k(EARLY, 1)], "{q}: {r}");
        assert_eq!(r["total"], 1, "{q}: {r}");
    }
    let r = search(&s, json!({"query": "copiedbeta", "sort": "recent"}));
    assert_eq!(hit_keys(&r), [k(EARLY, 1)], "{r}");
    let r = search(
        &s,
        json!({"query": "copiedbeta", "role": "user", "tool": "Edit"}),
    );
    assert_eq!(hit_keys(&r), [k(EARLY, 1)], "{r}");
}

#[test]
fn a_turn_copied_from_a_resumed_session_is_attributed_to_it_not_to_the_fork() {
    let s = corpus();
    let r = search(&s, json!({"query": "lateonly"}));
    assert_eq!(hit_keys(&r), [k(LATE, 2)], "{r}");
    assert_eq!(r["total"], 1);
}

#[test]
fn restricted_to_a_later_session_the_copy_is_found_there() {
    let s = corpus();
    let r = search(&s, json!({"query": "copiedbeta", "session_id": LATE}));
    assert_eq!(hit_keys(&r), [k(LATE, 1)], "{r}");
    assert_eq!(r["total"], 1);
    let r = search(&s, json!({"query": "copiedbeta", "session_id": FORK}));
    assert_eq!(hit_keys(&r), [k(FORK, 1)], "{r}");
    let r = search(&s, json!({"query": "copiedbeta", "session_id": EARLY}));
    assert_eq!(hit_keys(&r), [k(EARLY, 1)], "{r}");
}

#[test]
fn total_counts_copies_once_and_distinct_turns_separately() {
    // Counting only: which copy a result is attributed to is checked above.
    let s = corpus();
    let snippets = |r: &Value| -> Vec<String> {
        let mut v: Vec<String> = results(r)
            .iter()
            .map(|h| h["snippet"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let r = search(&s, json!({"query": "copiedalpha"}));
    assert_eq!(r["total"], 2, "{r}");
    assert_eq!(
        snippets(&r),
        [
            "copiedalpha asked again after resuming\nok",
            "copiedalpha first question\nok"
        ],
        "{r}"
    );
    assert!(hit_keys(&r).contains(&k(LATE, 3)), "{r}");
    // EARLY 0 (copied twice), LATE 2 (copied once), FORK 3: three distinct turns
    let r = search(&s, json!({"query": "question"}));
    assert_eq!(r["total"], 3, "{r}");
    assert_eq!(
        snippets(&r),
        [
            "copiedalpha first question\nok",
            "forkonly question\nok",
            "lateonly resumed question\nok"
        ],
        "{r}"
    );
}

#[test]
fn pages_over_duplicated_turns_have_no_duplicates_or_gaps() {
    let s = corpus();
    for sort in ["relevance", "recent"] {
        let args = json!({"query": "copiedalpha copiedbeta lateonly forkonly earlyonly question",
                          "sort": sort});
        let key = &["session_id", "turn_number"][..];
        let mut one = args.clone();
        one["limit"] = json!(100);
        let all = page_all(&s, "search_conversations", one, "results", key, 60_000);
        let mut small = args.clone();
        small["limit"] = json!(1);
        assert_eq!(
            page_all(&s, "search_conversations", small, "results", key, 60_000),
            all,
            "{sort}"
        );
        assert_eq!(all.len(), 6, "{sort}: {all:?}");
    }
}

#[test]
fn file_history_lists_a_copied_turn_once_for_the_earliest_session() {
    let s = corpus();
    let r = s.ok("find_file_history", json!({"path": "dup.rs"}));
    let rows: Vec<(String, u64)> = results(&r)
        .iter()
        .map(|x| {
            (
                x["session_id"].as_str().unwrap().to_string(),
                x["turn_number"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, [k(EARLY, 1)], "{r}");
    assert_eq!(r["total"], 1);
}
