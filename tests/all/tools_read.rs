//! read_turn / read_conversation: returned fields, tools_used summaries per tool (Read, Write,
//! Edit, MultiEdit, Bash, Grep, Glob, Task, Agent, others), call order, paging and limits.

use crate::common::fixture::{SessionWriter, new_msg_id};
use crate::common::{Served, assert_fields, serve_session};
use serde_json::{Value, json};

const SID: &str = "7e0a11ed-0000-4000-8000-00000000000c";

fn session(f: impl FnOnce(&mut SessionWriter)) -> Served {
    serve_session("-home-u-work-reader", SID, |w| {
        w.set_cwd(Some("/home/u/work/reader"));
        w.set_git_branch(Some("feature/read"));
        f(w);
    })
}

/// A one-turn session whose single assistant message calls `name` with `input`.
fn tools_used_for(name: &str, input: Value) -> Value {
    let s = session(|w| {
        w.user("use a tool");
        w.assistant_tool_use(&new_msg_id(), "toolu_one", name, input);
    });
    let t = s.read_turn(SID, 0);
    t["tools_used"].clone()
}

#[test]
fn read_turn_returns_all_fields() {
    let s = session(|w| {
        w.set_time("2026-05-02T09:30:00.000Z");
        w.user("what is in the readme");
        let m = new_msg_id();
        w.assistant_text(&m, "Let me look.");
        w.assistant_tool_use(&m, "toolu_1", "Read", json!({"file_path": "/r/README.md"}));
        w.tool_result("toolu_1", "# Readme", Value::Null);
        w.assistant_text(&new_msg_id(), "It is short.");
    });
    let t = s.read_turn(SID, 0);
    assert_fields(
        &t,
        &json!({
            "session_id": SID,
            "turn_number": 0,
            "timestamp": "2026-05-02T09:30:00.000Z",
            "user_text": "what is in the readme",
            "assistant_text": "Let me look.\n\nIt is short.",
            "tools_used": [{"tool": "Read", "file": "/r/README.md"}]
        }),
    );
}

#[test]
fn read_tool_reports_the_file() {
    assert_eq!(
        tools_used_for(
            "Read",
            json!({"file_path": "/a/b.rs", "offset": 10, "limit": 5})
        ),
        json!([{"tool": "Read", "file": "/a/b.rs"}])
    );
}

#[test]
fn write_tool_reports_file_and_character_count() {
    // 5 ASCII + 3 two-byte + 1 four-byte characters = 9 characters, 15 bytes
    let content = "hello\u{e9}\u{e8}\u{ea}\u{1f600}";
    assert_eq!(content.chars().count(), 9);
    assert_eq!(
        tools_used_for(
            "Write",
            json!({"file_path": "/a/new.txt", "content": content})
        ),
        json!([{"tool": "Write", "file": "/a/new.txt", "chars": 9}])
    );
}

#[test]
fn edit_and_multiedit_report_the_file() {
    assert_eq!(
        tools_used_for(
            "Edit",
            json!({"file_path": "/a/e.rs", "old_string": "x", "new_string": "y"})
        ),
        json!([{"tool": "Edit", "file": "/a/e.rs"}])
    );
    assert_eq!(
        tools_used_for(
            "MultiEdit",
            json!({"file_path": "/a/m.rs", "edits": [{"old_string": "a", "new_string": "b"}]})
        ),
        json!([{"tool": "MultiEdit", "file": "/a/m.rs"}])
    );
}

#[test]
fn bash_reports_the_command() {
    assert_eq!(
        tools_used_for(
            "Bash",
            json!({"command": "cargo test --workspace", "description": "Run tests"})
        ),
        json!([{"tool": "Bash", "command": "cargo test --workspace"}])
    );
}

#[test]
fn bash_command_is_cut_to_at_most_200_characters() {
    let long: String = "echo é ".repeat(60); // 420 characters, multi-byte inside
    let used = tools_used_for("Bash", json!({"command": long}));
    let cmd = used[0]["command"].as_str().expect("command string");
    let n = cmd.chars().count();
    assert!(n <= 200, "command has {n} characters");
    assert!(n >= 150, "command cut far too short ({n} chars)");
    let stem = cmd.trim_end_matches(['…', '.']);
    assert!(
        long.starts_with(stem),
        "command must be a prefix of the original: {cmd:?}"
    );
    assert_eq!(used[0]["tool"], "Bash");
}

#[test]
fn grep_and_glob_report_the_pattern() {
    assert_eq!(
        tools_used_for(
            "Grep",
            json!({"pattern": "fn main", "path": "/src", "glob": "*.rs"})
        ),
        json!([{"tool": "Grep", "pattern": "fn main"}])
    );
    assert_eq!(
        tools_used_for("Glob", json!({"pattern": "**/*.toml"})),
        json!([{"tool": "Glob", "pattern": "**/*.toml"}])
    );
}

#[test]
fn task_and_agent_report_type_and_description() {
    for name in ["Task", "Agent"] {
        assert_eq!(
            tools_used_for(
                name,
                json!({"subagent_type": "Explore", "description": "Find the parser",
                       "prompt": "Look for the JSONL parser and report back."})
            ),
            json!([{"tool": name, "type": "Explore", "description": "Find the parser"}]),
            "{name}"
        );
    }
}

#[test]
fn other_tools_report_only_the_name() {
    assert_eq!(
        tools_used_for(
            "TodoWrite",
            json!({"todos": [{"content": "x", "status": "pending"}]})
        ),
        json!([{"tool": "TodoWrite"}])
    );
    assert_eq!(
        tools_used_for("mcp__github__create_issue", json!({"title": "t"})),
        json!([{"tool": "mcp__github__create_issue"}])
    );
}

#[test]
fn tools_used_keeps_call_order_across_messages_and_dedupes_ids() {
    let s = session(|w| {
        w.user("several tools");
        let m1 = new_msg_id();
        w.assistant_tool_use(&m1, "toolu_g", "Grep", json!({"pattern": "TODO"}));
        w.assistant_tool_use(&m1, "toolu_r", "Read", json!({"file_path": "/x.rs"}));
        w.assistant_tool_use(&m1, "toolu_g", "Grep", json!({"pattern": "TODO"}));
        w.tool_result("toolu_g", "x.rs:1", Value::Null);
        w.tool_result("toolu_r", "fn x() {}", Value::Null);
        let m2 = new_msg_id();
        w.assistant_tool_use(&m2, "toolu_e", "Edit", json!({"file_path": "/x.rs"}));
        w.assistant_tool_use(&m2, "toolu_b", "Bash", json!({"command": "cargo fmt"}));
    });
    assert_eq!(
        s.read_turn(SID, 0)["tools_used"],
        json!([
            {"tool": "Grep", "pattern": "TODO"},
            {"tool": "Read", "file": "/x.rs"},
            {"tool": "Edit", "file": "/x.rs"},
            {"tool": "Bash", "command": "cargo fmt"}
        ])
    );
}

fn twelve_turns() -> Served {
    session(|w| {
        for i in 0..12 {
            w.exchange(&format!("prompt number {i}"), &format!("reply number {i}"));
        }
    })
}

#[test]
fn read_conversation_returns_header_and_default_ten_turns() {
    let s = twelve_turns();
    let c = s.ok("read_conversation", json!({"session_id": SID}));
    assert_eq!(c["session_id"], SID);
    assert_eq!(c["cwd"], "/home/u/work/reader");
    assert_eq!(c["git_branch"], "feature/read");
    assert_eq!(c["project"], "reader");
    assert_eq!(c["total_turns"], 12);
    assert_eq!(c["offset"], 0);
    assert_eq!(c["limit"], 10);
    let turns = c["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 10);
    for (i, t) in turns.iter().enumerate() {
        assert_eq!(t["turn_number"], i);
        assert_eq!(t["user_text"], format!("prompt number {i}"));
    }
}

#[test]
fn read_conversation_pages_with_offset_and_limit() {
    let s = twelve_turns();
    let c = s.ok(
        "read_conversation",
        json!({"session_id": SID, "offset": 10, "limit": 5}),
    );
    assert_eq!(c["offset"], 10);
    assert_eq!(c["limit"], 5);
    assert_eq!(c["total_turns"], 12);
    let nums: Vec<u64> = c["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["turn_number"].as_u64().unwrap())
        .collect();
    assert_eq!(nums, vec![10, 11]);
    let c = s.ok(
        "read_conversation",
        json!({"session_id": SID, "offset": 3, "limit": 2}),
    );
    assert_eq!(c["turns"][0]["user_text"], "prompt number 3");
    assert_eq!(c["turns"][1]["user_text"], "prompt number 4");
    assert_eq!(c["turns"].as_array().unwrap().len(), 2);
}

#[test]
fn read_conversation_turns_equal_read_turn_objects() {
    let s = twelve_turns();
    let c = s.read_conversation(SID);
    assert!(
        !c["turns"].as_array().unwrap().is_empty(),
        "no turns to check: {c}"
    );
    for t in c["turns"].as_array().unwrap() {
        let n = t["turn_number"].as_i64().unwrap();
        assert_eq!(t, &s.read_turn(SID, n));
    }
}

#[test]
fn read_conversation_limit_is_capped_at_100() {
    let s = session(|w| {
        for i in 0..120 {
            w.exchange(&format!("prompt {i}"), "ok");
        }
    });
    let c = s.ok(
        "read_conversation",
        json!({"session_id": SID, "limit": 1000}),
    );
    assert_eq!(c["total_turns"], 120);
    let n = c["turns"].as_array().unwrap().len();
    assert!((1..=100).contains(&n), "{n} turns returned");
}
