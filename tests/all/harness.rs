//! Self-checks of the test harness (fixture writer, clock, polling); no server involved.

use std::time::Duration;

use crate::common::fixture::{ProjectsDir, format_iso_ms, new_msg_id, parse_iso_ms, tree_snapshot};
use crate::common::{poll_until, squash_ws, tail};
use serde_json::{Value, json};

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn clock_round_trips_and_formats_like_claude_code() {
    for ts in [
        "2026-05-01T10:00:00.000Z",
        "2024-02-29T23:59:59.999Z",
        "1999-12-31T00:00:01.000Z",
        "2026-01-01T00:00:00.000Z",
    ] {
        assert_eq!(format_iso_ms(parse_iso_ms(ts)), ts);
    }
    assert_eq!(parse_iso_ms("1970-01-01T00:00:00.000Z"), 0);
    assert_eq!(parse_iso_ms("1970-01-02T00:00:01.5Z"), 86_401_500);
    assert_eq!(
        format_iso_ms(parse_iso_ms("2026-02-28T23:59:59.000Z") + 1000),
        "2026-03-01T00:00:00.000Z"
    );
}

#[test]
fn session_writer_chains_uuids_and_ticks_the_clock() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-demo");
    let mut w = p.session("s1");
    w.set_slug(Some("happy-fox"));
    let u1 = w.user("hello");
    let m = new_msg_id();
    let a1 = w.assistant_text(&m, "hi");
    let a2 = w.assistant_tool_use(&m, "toolu_1", "Read", json!({"file_path": "/x"}));
    w.summary("title", &a2);
    let recs = lines(w.path());
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[0]["uuid"], u1);
    assert_eq!(recs[0]["parentUuid"], Value::Null);
    assert_eq!(recs[0]["timestamp"], "2026-05-01T10:00:00.000Z");
    assert_eq!(recs[0]["cwd"], "/home/u/demo");
    assert_eq!(recs[0]["slug"], "happy-fox");
    assert_eq!(recs[0]["sessionId"], "s1");
    assert_eq!(recs[1]["parentUuid"], u1);
    assert_eq!(recs[1]["uuid"], a1);
    assert_eq!(recs[1]["timestamp"], "2026-05-01T10:00:01.000Z");
    assert_eq!(recs[2]["parentUuid"], a1);
    assert_eq!(recs[1]["message"]["id"], recs[2]["message"]["id"]);
    assert_eq!(recs[1]["requestId"], recs[2]["requestId"]);
    assert_eq!(recs[2]["message"]["content"].as_array().unwrap().len(), 1);
    assert_eq!(recs[3]["type"], "summary");
    assert_eq!(recs[3]["leafUuid"], a2);
    assert_eq!(w.conversation_id(), "s1");
}

#[test]
fn subagent_writers_use_both_layouts() {
    let dir = ProjectsDir::new();
    let p = dir.project("proj");
    let mut flat = p.subagent_flat("abc123", "parent-1");
    flat.user("task");
    let mut nested = p.subagent_nested("parent-1", "def456", Some(("Explore", "look around")));
    nested.user("task");
    assert_eq!(flat.path(), p.path().join("agent-abc123.jsonl"));
    assert_eq!(
        nested.path(),
        p.path().join("parent-1/subagents/agent-def456.jsonl")
    );
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(p.path().join("parent-1/subagents/agent-def456.meta.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        meta,
        json!({"agentType": "Explore", "description": "look around"})
    );
    let r = &lines(flat.path())[0];
    assert_eq!(r["isSidechain"], true);
    assert_eq!(r["agentId"], "abc123");
    assert_eq!(r["sessionId"], "parent-1");
    assert_eq!(flat.conversation_id(), "parent-1/agent-abc123");
    assert_eq!(nested.conversation_id(), "parent-1/agent-def456");
}

#[test]
fn raw_writes_append_and_snapshot_sees_them() {
    let dir = ProjectsDir::new();
    let p = dir.project("proj");
    let mut w = p.session("s");
    assert!(!w.path().exists(), "files are created on first write only");
    w.raw_bytes(b"{\"partial\":");
    w.raw_line("1}");
    w.raw_bytes(&[0xff, 0xfe, b'\n']);
    let bytes = std::fs::read(w.path()).unwrap();
    assert_eq!(bytes, b"{\"partial\":1}\n\xff\xfe\n");
    let snap = tree_snapshot(dir.path());
    assert_eq!(snap.len(), 2, "{snap:?}");
    assert_eq!(snap[std::path::Path::new("proj/s.jsonl")].1, 17);
}

#[test]
fn poll_until_returns_value_and_panics_at_deadline() {
    let mut n = 0;
    let v = poll_until(Duration::from_secs(5), || {
        n += 1;
        (n == 3).then_some(n)
    });
    assert_eq!(v, 3);
    let r = std::panic::catch_unwind(|| {
        poll_until(Duration::from_millis(60), || None::<()>);
    });
    assert!(r.is_err());
}

#[test]
fn text_helpers() {
    assert_eq!(squash_ws("  a \n\n b\tc "), "a b c");
    assert_eq!(tail("abcdef", 3), "def");
    assert_eq!(tail("ab", 3), "ab");
}
