//! Output budgets: every tool takes `max_chars` (search-like default 6000, read-like default
//! 20000, hard cap 60000, minimum 500) and never returns more characters of JSON; long texts are
//! cut deterministically (head and tail kept, the cut marked) and replies say how to read on,
//! so that following next_offset / char_offset sees every character exactly once.

use crate::common;

use crate::common::fixture::ProjectsDir;
use crate::common::search::{
    assert_rejected, bash, ok_within, page_all, read, reply_chars, tool_turn,
};
use crate::common::{Served, serve};
use serde_json::{Value, json};
use std::collections::BTreeSet;

const SESSIONS: usize = 120;
const HUGE: i64 = 1_000_000_000;
const SHARED: &str = "/home/u/work/budget/src/shared/budget.rs";

/// Numbered words with JSON-escaped characters mixed in (quotes, backslashes, newlines, tabs).
fn ascii_text(tag: &str, chars: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.chars().count() < chars {
        let sep = match i % 7 {
            0 => " \"quoted\" ",
            1 => " back\\slash ",
            2 => "\n",
            3 => "\t",
            _ => " ",
        };
        s.push_str(&format!("{tag}{i}{sep}"));
        i += 1;
    }
    format!("{}END{tag}", s.trim())
}

/// Numbered words in Japanese, accented Latin and emoji (multi-byte UTF-8).
fn unicode_text(tag: &str, chars: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.chars().count() < chars {
        s.push_str(&format!("{tag}{i} 検索結果 Größe 🦀 "));
        i += 1;
    }
    format!("{}END{tag}", s.trim())
}

struct Big {
    s: Served,
    /// (prompt, reply) of turn 0 (ASCII) and turn 2 (multi-byte) of session `big`.
    ascii: (String, String),
    unicode: (String, String),
}

fn big() -> Big {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-budget");
    let mut w = p.session("big");
    // together longer than the hard cap
    let ascii = (ascii_text("prompt", 40_000), ascii_text("reply", 35_000));
    let unicode = (
        unicode_text("frage", 20_000),
        unicode_text("antwort", 40_000),
    );
    let calls: Vec<(&str, Value)> = (0..400)
        .map(|i| {
            if i % 2 == 0 {
                read(&format!(
                    "/home/u/work/budget/src/module_{i}/a_rather_long_file_name_{i}.rs"
                ))
            } else {
                bash(&format!(
                    "cargo test --package crate_{i} -- --nocapture {}",
                    "x".repeat(150)
                ))
            }
        })
        .collect();
    tool_turn(&mut w, &ascii.0, &ascii.1, &calls);
    w.exchange("budgetword small turn", "ok");
    tool_turn(&mut w, &unicode.0, &unicode.1, &[]);
    for n in 0..SESSIONS {
        let mut w = p.session(&format!("s{n:03}"));
        w.set_time(&format!(
            "2026-04-{:02}T{:02}:00:00.000Z",
            1 + n % 28,
            n % 24
        ));
        for t in 0..3 {
            let prompt = format!(
                "budgetword {} {}",
                ascii_text(&format!("s{n}t{t}w"), 1500),
                "tail"
            );
            let calls = if t == 1 { vec![read(SHARED)] } else { vec![] };
            tool_turn(&mut w, &prompt, "done", &calls);
        }
    }
    Big {
        s: serve(dir),
        ascii,
        unicode,
    }
}

/// Budgets tried on every tool (None: the default).
const BUDGETS: &[Option<i64>] = &[
    Some(500),
    Some(777),
    Some(1500),
    Some(6000),
    Some(20_000),
    Some(60_000),
    Some(HUGE),
    None,
];

fn with_budget(args: &Value, budget: Option<i64>) -> Value {
    let mut a = args.clone();
    if let Some(b) = budget {
        a["max_chars"] = json!(b);
    }
    a
}

fn limit_of(budget: Option<i64>, default: usize) -> usize {
    budget.map_or(default, |b| (b as usize).min(60_000))
}

#[test]
fn every_tool_stays_within_max_chars() {
    let b = big();
    let calls: &[(&str, Value, usize)] = &[
        (
            "search_conversations",
            json!({"query": "budgetword", "limit": 100}),
            6000,
        ),
        (
            "search_conversations",
            json!({"query": "prompt7 reply9 quoted"}),
            6000,
        ),
        ("list_conversations", json!({"limit": 100}), 20_000),
        (
            "find_file_history",
            json!({"path": "budget", "limit": 100}),
            6000,
        ),
        (
            "read_turn",
            json!({"session_id": "big", "turn_number": 0}),
            20_000,
        ),
        (
            "read_turn",
            json!({"session_id": "big", "turn_number": 2}),
            20_000,
        ),
        (
            "read_conversation",
            json!({"session_id": "big", "limit": 100}),
            20_000,
        ),
        ("read_conversation", json!({"session_id": "s007"}), 20_000),
        ("index_status", json!({}), 20_000),
    ];
    let mut over = Vec::new();
    for (tool, args, default) in calls {
        for &budget in BUDGETS {
            let r = b.s.call_tool(tool, with_budget(args, budget));
            let max = limit_of(budget, *default);
            if r.is_error {
                over.push(format!("{tool} max_chars={budget:?}: error {}", r.text));
            } else if reply_chars(&r) > max {
                over.push(format!(
                    "{tool} {args} max_chars={budget:?}: {} > {max}",
                    reply_chars(&r)
                ));
            }
        }
    }
    assert!(over.is_empty(), "budgets exceeded:\n{}", over.join("\n"));
}

#[test]
fn the_hard_cap_is_60000_and_is_used() {
    let b = big();
    let r = ok_within(
        &b.s,
        "read_turn",
        json!({"session_id": "big", "turn_number": 0, "max_chars": HUGE}),
        60_000,
    );
    let text = format!(
        "{}{}",
        r["user_text"].as_str().unwrap(),
        r["assistant_text"].as_str().unwrap()
    );
    assert!(
        text.chars().count() > 30_000,
        "a huge budget is capped, not ignored"
    );
    let r = ok_within(
        &b.s,
        "search_conversations",
        json!({"query": "budgetword", "limit": 100, "max_chars": HUGE}),
        60_000,
    );
    assert!(
        r["results"].as_array().unwrap().len() > 30,
        "{}",
        r["results"].as_array().unwrap().len()
    );
}

#[test]
fn a_budget_below_the_minimum_is_rejected_by_every_tool() {
    let b = big();
    let calls = [
        ("search_conversations", json!({"query": "budgetword"})),
        ("list_conversations", json!({})),
        ("find_file_history", json!({"path": "budget"})),
        ("read_turn", json!({"session_id": "big", "turn_number": 1})),
        ("read_conversation", json!({"session_id": "big"})),
        ("index_status", json!({})),
    ];
    for (tool, args) in calls {
        for bad in [0, 499, -5] {
            assert_rejected(
                &b.s,
                tool,
                with_budget(&args, Some(bad)),
                &["max_chars", "500"],
            );
        }
    }
}

#[test]
fn a_huge_query_echoed_back_still_fits_the_budget() {
    let b = big();
    let long_query = format!("budgetword {}", "zzlongword ".repeat(7000));
    ok_within(
        &b.s,
        "search_conversations",
        json!({"query": long_query, "max_chars": 2000}),
        2000,
    );
}

#[test]
fn a_huge_path_echoed_back_still_fits_the_budget() {
    let b = big();
    let long_path = format!("budget{}", "/segment".repeat(9000));
    ok_within(
        &b.s,
        "find_file_history",
        json!({"path": long_path, "max_chars": 2000}),
        2000,
    );
}

#[test]
fn paging_under_a_small_budget_loses_nothing() {
    let b = big();
    let cases = [
        (
            "search_conversations",
            json!({"query": "budgetword", "limit": 100}),
            "results",
            &["session_id", "turn_number"][..],
        ),
        (
            "list_conversations",
            json!({"limit": 100}),
            "conversations",
            &["session_id"][..],
        ),
        (
            "find_file_history",
            json!({"path": "budget.rs", "limit": 100}),
            "results",
            &["session_id", "turn_number", "path"][..],
        ),
    ];
    for (tool, args, rows, key) in cases {
        let mut full_args = args.clone();
        full_args["limit"] = json!(10);
        let full = page_all(&b.s, tool, full_args, rows, key, 60_000);
        assert!(full.len() > 100, "{tool}: {}", full.len());
        let small = page_all(&b.s, tool, args, rows, key, 1500);
        assert_eq!(
            small, full,
            "{tool}: pages under max_chars=1500 differ from big pages"
        );
        let unique: BTreeSet<&String> = small.iter().collect();
        assert_eq!(unique.len(), small.len(), "{tool}: duplicates");
    }
}

/// Reads a whole turn with read_turn, following next_offset; returns prompt+reply as seen.
fn read_whole(s: &Served, session: &str, turn: u64, max: Option<i64>, original: &str) -> String {
    let mut text = String::new();
    let mut offset = 0u64;
    let limit = limit_of(max, 20_000);
    for call in 0..5000 {
        let mut args = json!({"session_id": session, "turn_number": turn});
        if offset > 0 {
            args["char_offset"] = json!(offset);
        }
        let r = ok_within(s, "read_turn", with_budget(&args, max), limit);
        if call == 0 {
            let again = ok_within(s, "read_turn", with_budget(&args, max), limit);
            assert_eq!(r, again, "truncation must be deterministic");
        }
        let got = format!(
            "{}{}",
            r["user_text"].as_str().unwrap(),
            r["assistant_text"].as_str().unwrap()
        );
        assert_eq!(
            r["total_chars"].as_u64(),
            Some(original.chars().count() as u64),
            "{args}"
        );
        match r["next_offset"].as_u64() {
            None => {
                text.push_str(&got);
                return text;
            }
            Some(n) => {
                assert_eq!(r["truncated"], true, "{args}");
                assert!(n > offset, "next_offset must move on ({offset} -> {n})");
                if call == 0 {
                    // head, a marked cut, and the tail of the text
                    let head: String = got.chars().take(n as usize).collect();
                    let tail: String = original
                        .chars()
                        .skip(original.chars().count() - 30)
                        .collect();
                    assert!(
                        got.ends_with(&tail),
                        "the first reply keeps the tail: …{}",
                        common::tail(&got, 80)
                    );
                    assert!(
                        got.chars().count() > head.chars().count() + 30,
                        "cut marked"
                    );
                    text.push_str(&head);
                } else {
                    let shown = got.chars().count() as u64;
                    assert_eq!(
                        shown,
                        n - offset,
                        "read_turn at char_offset={offset} showed {shown} characters but \
                         next_offset={n} skips {} of them: they are never shown",
                        (n - offset).saturating_sub(shown)
                    );
                    text.push_str(&got);
                }
                offset = n;
            }
        }
    }
    panic!("read_turn paging does not end");
}

#[test]
fn read_turn_reads_on_until_every_character_was_seen_once() {
    let b = big();
    let (p, r) = &b.ascii;
    let original = format!("{p}{r}");
    for max in [Some(2000), None, Some(60_000)] {
        let seen = read_whole(&b.s, "big", 0, max, &original);
        assert!(
            seen == original,
            "max_chars={max:?}: reassembled text differs ({} vs {} chars)",
            seen.chars().count(),
            original.chars().count()
        );
    }
}

#[test]
fn read_turn_reads_on_through_multibyte_text_without_losing_characters() {
    let b = big();
    let (p, r) = &b.unicode;
    let original = format!("{p}{r}");
    for max in [Some(2000), None] {
        let seen = read_whole(&b.s, "big", 2, max, &original);
        let first_diff = seen.chars().zip(original.chars()).position(|(a, b)| a != b);
        assert!(
            seen == original,
            "max_chars={max:?}: reassembled {} of {} chars, first difference at char {first_diff:?}",
            seen.chars().count(),
            original.chars().count()
        );
    }
}

#[test]
fn read_conversation_shortens_long_turns_and_says_how_to_read_on() {
    let b = big();
    for max in [Some(1500), None, Some(HUGE)] {
        let args = json!({"session_id": "big", "limit": 100});
        let r = ok_within(
            &b.s,
            "read_conversation",
            with_budget(&args, max),
            limit_of(max, 20_000),
        );
        assert_eq!(r["truncated"], true, "{max:?}");
        let turns = r["turns"].as_array().unwrap();
        assert!(!turns.is_empty());
        let t0 = &turns[0];
        assert_eq!(t0["turn_number"], 0);
        assert_eq!(t0["truncated"], true);
        let n = t0["next_offset"]
            .as_u64()
            .expect("a shortened turn gives next_offset");
        let got = format!(
            "{}{}",
            t0["user_text"].as_str().unwrap(),
            t0["assistant_text"].as_str().unwrap()
        );
        let (p, rep) = &b.ascii;
        let original = format!("{p}{rep}");
        let head: String = original.chars().take(n as usize).collect();
        assert!(
            got.starts_with(&head),
            "the turn keeps its head up to next_offset"
        );
        // reading on from there with read_turn continues exactly where the head stopped
        let next = b.s.ok(
            "read_turn",
            json!({"session_id": "big", "turn_number": 0, "char_offset": n}),
        );
        let cont = format!(
            "{}{}",
            next["user_text"].as_str().unwrap(),
            next["assistant_text"].as_str().unwrap()
        );
        let expect: String = original
            .chars()
            .skip(n as usize)
            .take(cont.chars().count())
            .collect();
        assert_eq!(cont, expect);
    }
    // paging turns with next_offset visits every turn once
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let r = ok_within(
            &b.s,
            "read_conversation",
            json!({"session_id": "big", "offset": offset, "limit": 1, "max_chars": 1000}),
            1000,
        );
        seen.extend(
            r["turns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["turn_number"].as_u64().unwrap()),
        );
        match r["next_offset"].as_u64() {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(seen, [0, 1, 2]);
}
