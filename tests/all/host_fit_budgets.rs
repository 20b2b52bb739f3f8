//! Host fit, output budgets (issue points 4 and 8): at every `max_chars` from 500 to 60000,
//! paging always advances and ends, every row, turn and character is reachable at 500, no reply
//! is longer than `max_chars`, a row too big for the budget comes back shortened (never zero
//! rows), and each long field of a turn (prompt, reply) keeps its own head and tail around a
//! marker that says where to read on.

use crate::common::fixture::ProjectsDir;
use crate::common::search::{bash, ok_within, read, tool_turn};
use crate::common::{Served, serve};
use serde_json::{Value, json};

/// Budgets tried: the minimum, odd small ones, the search default, the hard cap.
const BUDGETS: &[i64] = &[500, 525, 700, 999, 1500, 6000, 60_000];
const BIG: &str = "b16a0000-0000-4000-8000-00000000b16a";

/// Words numbered from `from`, tagged, `chars` characters long.
fn words(tag: &str, chars: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < chars {
        s.push_str(&format!("{tag}{i} "));
        i += 1;
    }
    s.trim_end().to_string()
}

struct Corpus {
    s: Served,
    prompt: String,
    reply: String,
}

fn corpus() -> Corpus {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-a-project-with-a-rather-long-directory-name");
    let prompt = format!("PROMPTSTART {} PROMPTEND", words("ask", 30_000));
    let reply = format!("THEANSWER {} REPLYEND", words("say", 30_000));
    let calls: Vec<_> = (0..60)
        .map(|i| {
            if i % 2 == 0 {
                read(&format!("/home/u/work/project/src/module_{i}/file_{i}.rs"))
            } else {
                bash(&format!("cargo test --package crate_{i} -- --nocapture"))
            }
        })
        .collect();
    let mut w = p.session(BIG);
    tool_turn(&mut w, &prompt, &reply, &calls);
    w.exchange("pagedword a short turn", "ok");
    tool_turn(
        &mut w,
        &words("frage 検索 🦀", 3000),
        &words("antwort Größe", 9000),
        &[],
    );
    for n in 0..24 {
        let mut w = p.session(&format!("5e550000-0000-4000-8000-{n:012}"));
        for t in 0..2 {
            let prompt = format!("pagedword {}", words(&format!("s{n}t{t}w"), 1200));
            let calls = [read(&format!("/home/u/work/project/src/pagedfile_{n}.rs"))];
            tool_turn(&mut w, &prompt, &words("answer", 400), &calls);
        }
    }
    Corpus {
        s: serve(dir),
        prompt,
        reply,
    }
}

/// Follows next_offset of a paged tool at `max`; returns the rows' keys in order.
fn page_all(
    s: &Served,
    tool: &str,
    args: Value,
    rows: &str,
    key: &[&str],
    max: i64,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut offset = 0u64;
    for _ in 0..500 {
        let mut a = args.clone();
        a["offset"] = json!(offset);
        a["max_chars"] = json!(max);
        let r = ok_within(s, tool, a.clone(), max as usize);
        let page = r[rows].as_array().unwrap();
        for row in page {
            seen.push(
                key.iter()
                    .map(|k| row[*k].to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
            );
        }
        match r["next_offset"].as_u64() {
            Some(n) => {
                assert!(
                    !page.is_empty(),
                    "{tool} {a}: an empty page with more to come: {r}"
                );
                assert!(n > offset, "{tool} {a}: next_offset must move on: {r}");
                offset = n;
            }
            None => return seen,
        }
    }
    panic!("{tool} at max_chars={max}: paging does not end");
}

#[test]
fn paged_tools_advance_and_reach_every_row_at_every_budget() {
    let c = corpus();
    let cases = [
        (
            "search_conversations",
            json!({"query": "pagedword"}),
            "results",
            &["session_id", "turn_number"][..],
        ),
        (
            "list_conversations",
            json!({}),
            "conversations",
            &["session_id"][..],
        ),
        (
            "find_file_history",
            json!({"path": "pagedfile"}),
            "results",
            &["session_id", "turn_number", "path"][..],
        ),
    ];
    for (tool, args, rows, key) in cases {
        let mut all_args = args.clone();
        all_args["limit"] = json!(100);
        let all = page_all(&c.s, tool, all_args, rows, key, 60_000);
        assert!(all.len() >= 24, "{tool}: {}", all.len());
        for &max in BUDGETS {
            let got = page_all(&c.s, tool, args.clone(), rows, key, max);
            assert_eq!(got, all, "{tool} at max_chars={max}: rows lost or repeated");
        }
    }
}

#[test]
fn a_row_too_big_for_the_budget_comes_back_shortened_with_a_note() {
    let c = corpus();
    let r = ok_within(
        &c.s,
        "search_conversations",
        json!({"query": "pagedword", "max_chars": 500}),
        500,
    );
    assert_eq!(r["results"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["truncated"], true, "{r}");
    assert!(
        r["note"].as_str().is_some_and(|n| n.contains("offset=1")),
        "{r}"
    );
    assert_eq!(r["next_offset"], 1, "{r}");
}

#[test]
fn read_conversation_shows_a_turn_per_page_and_reaches_every_turn() {
    let c = corpus();
    for &max in BUDGETS {
        let mut offset = 0u64;
        let mut seen = Vec::new();
        for _ in 0..50 {
            let args = json!({"session_id": BIG, "offset": offset, "max_chars": max});
            let r = ok_within(&c.s, "read_conversation", args.clone(), max as usize);
            let turns = r["turns"].as_array().unwrap();
            assert!(!turns.is_empty(), "max_chars={max}: no turn: {r}");
            seen.extend(turns.iter().map(|t| t["turn_number"].as_u64().unwrap()));
            match r["next_offset"].as_u64() {
                Some(n) => {
                    assert!(n > offset, "{args}: {r}");
                    offset = n;
                }
                None => break,
            }
        }
        assert_eq!(seen, [0, 1, 2], "max_chars={max}");
    }
}

/// Reads turn `turn` of BIG whole at `max`, following next_offset; checks every reply's size and
/// that each call moves on; returns the text seen and the number of calls.
fn read_whole(s: &Served, turn: u64, max: i64) -> (String, usize) {
    let mut text = String::new();
    let mut offset: Option<u64> = None;
    for calls in 1..20_000 {
        let mut args = json!({"session_id": BIG, "turn_number": turn, "max_chars": max});
        if let Some(o) = offset {
            args["char_offset"] = json!(o);
        }
        let r = ok_within(s, "read_turn", args.clone(), max as usize);
        let got = format!(
            "{}{}",
            r["user_text"].as_str().unwrap(),
            r["assistant_text"].as_str().unwrap()
        );
        let next = r["next_offset"].as_u64();
        match (offset, next) {
            (None, None) => return (got, calls),
            (None, Some(n)) => text.push_str(&got.chars().take(n as usize).collect::<String>()),
            (Some(o), n) => {
                let shown = got.chars().count() as u64;
                assert!(shown > 0, "{args}: no text: {r}");
                if let Some(n) = n {
                    assert_eq!(shown, n - o, "{args}: shown text and next_offset disagree");
                }
                text.push_str(&got);
            }
        }
        match next {
            Some(n) => {
                assert!(
                    offset.is_none_or(|o| n > o),
                    "{args}: next_offset must move on"
                );
                offset = Some(n);
            }
            None => return (text, calls),
        }
    }
    panic!("read_turn at max_chars={max} does not end");
}

#[test]
fn read_turn_reaches_every_character_at_every_budget() {
    let c = corpus();
    let original = format!("{}{}", c.prompt, c.reply);
    for &max in BUDGETS {
        let (seen, calls) = read_whole(&c.s, 0, max);
        assert!(
            seen == original,
            "max_chars={max}: reassembled {} of {} chars",
            seen.len(),
            original.len()
        );
        // each page carries a fair share of text: no crawling two characters per call
        let per_call = original.chars().count() / calls;
        assert!(
            per_call * 4 >= max as usize / 2 || max > 6000,
            "max_chars={max}: {per_call} chars per call"
        );
    }
}

#[test]
fn a_long_prompt_and_a_long_reply_each_keep_their_head_and_tail() {
    let c = corpus();
    for max in [None, Some(2000), Some(700)] {
        let mut args = json!({"session_id": BIG, "turn_number": 0});
        if let Some(m) = max {
            args["max_chars"] = json!(m);
        }
        let r = c.s.ok("read_turn", args.clone());
        let user = r["user_text"].as_str().unwrap();
        let asst = r["assistant_text"].as_str().unwrap();
        assert!(
            user.starts_with("PROMPTSTART") && user.ends_with("PROMPTEND"),
            "{args}: {user}"
        );
        assert!(
            asst.starts_with("THEANSWER"),
            "{args}: the reply's beginning is cut: {asst}"
        );
        assert!(asst.ends_with("REPLYEND"), "{args}: {asst}");
        for field in [user, asst] {
            assert!(
                field.contains("chars cut; read on with char_offset=") || max == Some(700),
                "{args}: {field}"
            );
        }
        let n = r["next_offset"].as_u64().expect("next_offset");
        assert!(
            user.starts_with(&c.prompt[..n as usize]),
            "{args}: the head runs to next_offset"
        );
    }
}

#[test]
fn no_reply_exceeds_max_chars_at_any_budget() {
    let c = corpus();
    let calls = [
        (
            "search_conversations",
            json!({"query": "pagedword answer", "limit": 100}),
        ),
        ("list_conversations", json!({"limit": 100})),
        (
            "find_file_history",
            json!({"path": "project", "limit": 100}),
        ),
        ("read_turn", json!({"session_id": BIG, "turn_number": 0})),
        ("read_turn", json!({"session_id": BIG, "turn_number": 2})),
        (
            "read_conversation",
            json!({"session_id": BIG, "limit": 100}),
        ),
        ("index_status", json!({})),
    ];
    let mut budget = 500i64;
    while budget <= 60_000 {
        for (tool, args) in &calls {
            let mut a = args.clone();
            a["max_chars"] = json!(budget);
            ok_within(&c.s, tool, a, budget as usize);
        }
        budget = budget * 7 / 4 + 13;
    }
}

#[test]
fn every_tool_call_of_a_turn_is_reachable_with_tool_offset_at_every_budget() {
    let c = corpus();
    for &max in BUDGETS {
        let first = ok_within(
            &c.s,
            "read_turn",
            json!({"session_id": BIG, "turn_number": 0, "max_chars": max}),
            max as usize,
        );
        let mut calls: Vec<Value> = first["tools_used"].as_array().unwrap().clone();
        let mut next = first["next_tool_offset"].as_u64();
        assert_eq!(
            next.is_some(),
            calls.len() < 60,
            "max_chars={max}: next_tool_offset iff calls were left out: {first}"
        );
        let mut pages = 0;
        while let Some(from) = next {
            assert_eq!(
                from as usize,
                calls.len(),
                "max_chars={max}: pages follow on"
            );
            let args =
                json!({"session_id": BIG, "turn_number": 0, "max_chars": max, "tool_offset": from});
            let r = ok_within(&c.s, "read_turn", args.clone(), max as usize);
            let got = r["tools_used"].as_array().unwrap();
            assert!(!got.is_empty(), "{args}: no tool call: {r}");
            assert_eq!(r["user_text"], "", "{args}: a tool page has no text");
            calls.extend(got.iter().cloned());
            next = r["next_tool_offset"].as_u64();
            pages += 1;
            assert!(pages <= 60, "max_chars={max}: tool paging does not end");
        }
        assert_eq!(calls.len(), 60, "max_chars={max}");
        for (i, call) in calls.iter().enumerate() {
            let want = if i % 2 == 0 { "Read" } else { "Bash" };
            assert_eq!(call["tool"], want, "max_chars={max}: call {i}: {call}");
        }
    }
}
