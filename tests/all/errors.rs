//! Tool errors: isError results whose text is `{"error": "..."}` for unknown sessions, turns
//! out of range, empty queries, limits below 1, negative offsets / turn numbers; limit 1000 is
//! capped (not an error); the server keeps answering afterwards.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::ToolReply;
use crate::common::{Served, serve};
use serde_json::{Value, json};

const SID: &str = "e7707000-0000-4000-8000-00000000000d";

fn two_turns() -> Served {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-errors").session(SID);
    w.exchange("first errand zebracorn", "ok");
    w.exchange("second errand", "ok");
    serve(dir)
}

/// Checks the error shape: isError, text is a JSON object with a string `error`.
fn error_text(r: &ToolReply) -> String {
    assert!(r.is_error, "expected an error result, got {}", r.text);
    let v: Value = serde_json::from_str(&r.text)
        .unwrap_or_else(|e| panic!("error text must be JSON ({e}): {}", r.text));
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("error text must be {{\"error\": \"...\"}}: {}", r.text))
        .to_string()
}

fn assert_mentions(msg: &str, param: &str) {
    assert!(
        msg.contains(param),
        "error message should name the parameter `{param}`: {msg:?}"
    );
}

#[test]
fn unknown_session_in_read_turn() {
    let s = two_turns();
    let r = s.call_tool(
        "read_turn",
        json!({"session_id": "no-such-session", "turn_number": 0}),
    );
    let msg = error_text(&r);
    assert!(
        msg.contains("Unknown session_id: no-such-session"),
        "{msg:?}"
    );
}

#[test]
fn unknown_session_in_read_conversation() {
    let s = two_turns();
    let r = s.call_tool("read_conversation", json!({"session_id": "ghost-42"}));
    let msg = error_text(&r);
    assert!(msg.contains("Unknown session_id: ghost-42"), "{msg:?}");
}

#[test]
fn turn_number_out_of_range() {
    let s = two_turns();
    let r = s.call_tool("read_turn", json!({"session_id": SID, "turn_number": 5}));
    let msg = error_text(&r);
    assert!(
        msg.contains("Turn 5 out of range (session has 2 turns)"),
        "{msg:?}"
    );
    let r = s.call_tool("read_turn", json!({"session_id": SID, "turn_number": 2}));
    assert!(error_text(&r).contains("Turn 2 out of range (session has 2 turns)"));
    // the last valid turn still works
    assert_eq!(s.read_turn(SID, 1)["user_text"], "second errand");
}

#[test]
fn negative_turn_number_is_rejected() {
    let s = two_turns();
    let r = s.call_tool("read_turn", json!({"session_id": SID, "turn_number": -1}));
    assert_mentions(&error_text(&r), "turn_number");
}

#[test]
fn empty_query_is_rejected() {
    let s = two_turns();
    let r = s.call_tool("search_conversations", json!({"query": ""}));
    assert_mentions(&error_text(&r), "query");
}

#[test]
fn search_limit_below_one_is_rejected() {
    let s = two_turns();
    for limit in [0, -3] {
        let r = s.call_tool(
            "search_conversations",
            json!({"query": "zebracorn", "limit": limit}),
        );
        assert_mentions(&error_text(&r), "limit");
    }
}

#[test]
fn list_limit_below_one_is_rejected() {
    let s = two_turns();
    for limit in [0, -1] {
        let r = s.call_tool("list_conversations", json!({"limit": limit}));
        assert_mentions(&error_text(&r), "limit");
    }
}

#[test]
fn read_conversation_bad_limit_and_offset_are_rejected() {
    let s = two_turns();
    let r = s.call_tool("read_conversation", json!({"session_id": SID, "limit": 0}));
    assert_mentions(&error_text(&r), "limit");
    let r = s.call_tool(
        "read_conversation",
        json!({"session_id": SID, "offset": -2}),
    );
    assert_mentions(&error_text(&r), "offset");
}

#[test]
fn huge_limits_are_capped_not_rejected() {
    let s = two_turns();
    let r = s.call_tool(
        "search_conversations",
        json!({"query": "errand", "limit": 1000}),
    );
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.json["total"], 2);
    let r = s.call_tool("list_conversations", json!({"limit": 1000}));
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.json["total"], 1);
    let r = s.call_tool(
        "read_conversation",
        json!({"session_id": SID, "limit": 1000}),
    );
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(r.json["turns"].as_array().unwrap().len(), 2);
}

#[test]
fn server_keeps_answering_after_errors() {
    let s = two_turns();
    s.err("read_turn", json!({"session_id": "nope", "turn_number": 0}));
    s.err("search_conversations", json!({"query": ""}));
    s.err("read_conversation", json!({"session_id": SID, "limit": 0}));
    assert_eq!(s.search("zebracorn")["total"], 1);
    assert!(s.is_alive());
    s.assert_clean_stdout();
}
