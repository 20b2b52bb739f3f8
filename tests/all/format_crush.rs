//! Crush's per-project databases through the binary: discovery under a directory, prompts,
//! replies, tool calls with string or object inputs, never-indexed reasoning and tool results,
//! summaries, sub-agent sessions, seconds and milliseconds, the usage error without a path,
//! live updates, and the hand-made sample.

use crate::common;

use std::time::Duration;

use crate::common::formats::{SourceRoot, serve_sources};
use crate::common::sqlitedb::{CRUSH_SCHEMA, available, exec, lit};
use crate::common::{poll_until_desc, run_cli, samples_or_skip};
use serde_json::{Value, json};

fn total(c: &common::mcp::McpClient, q: &str) -> u64 {
    c.search_with(json!({"query": q, "limit": 100}))["total"]
        .as_u64()
        .expect("total")
}

fn tool<'a>(turn: &'a Value, name: &str) -> &'a Value {
    let all = turn["tools_used"].as_array().expect("tools_used");
    all.iter()
        .find(|t| t["tool"] == name)
        .unwrap_or_else(|| panic!("no {name} in {turn}"))
}

fn session(id: &str, title: &str, parent: Option<&str>, at: i64) -> String {
    let parent = parent.map_or("NULL".to_string(), lit);
    format!(
        "INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at) VALUES ({}, {parent}, {}, {at}, {at});",
        lit(id),
        lit(title)
    )
}

fn message(id: &str, session: &str, role: &str, parts: Value, at: i64, summary: bool) -> String {
    format!(
        "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at, is_summary_message) VALUES ({}, {}, {}, {}, {at}, {at}, {});",
        lit(id),
        lit(session),
        lit(role),
        lit(&parts.to_string()),
        i32::from(summary)
    )
}

fn text(t: &str) -> Value {
    json!({"type": "text", "data": {"text": t}})
}

fn call(name: &str, input: Value) -> Value {
    json!({"type": "tool_call", "data": {"id": format!("call_{name}"), "name": name,
        "input": input.to_string(), "finished": true}})
}

const T0: i64 = 1_777_629_600; // 2026-05-01T10:00:00Z

#[test]
fn projects_sessions_tools_and_live_updates() {
    if !available() {
        crate::common::skip("crush: python3 with sqlite3 unavailable");
        return;
    }
    let root = SourceRoot::new("cs-crush-");
    let project = root.path().join("code/crushproj");
    std::fs::create_dir_all(project.join(".crush")).unwrap();
    let db = project.join(".crush/crush.db");
    let mut sql = String::from(CRUSH_SCHEMA);
    sql += &session("s-root", "Galago cache", None, T0);
    sql += &session("s-child", "Child task", Some("s-root"), T0 + 10);
    sql += &message(
        "m1",
        "s-root",
        "user",
        json!([text("tune the galago cache")]),
        T0,
        false,
    );
    sql += &message(
        "m2",
        "s-root",
        "assistant",
        json!([
            {"type": "reasoning", "data": {"thinking": "reasoningwordalpha"}},
            text("Looking."),
            call("view", json!({"file_path": "/home/u/crushproj/src/cache.go"})),
            call("bash", json!({"command": "go test ./cache"})),
            call("edit", json!({"file_path": "/home/u/crushproj/src/cache.go", "old_string": "a", "new_string": "b"})),
            call("write", json!({"file_path": "/home/u/crushproj/NOTES.md", "content": "xyz"})),
            call("grep", json!({"pattern": "func Evict"})),
            call("fetch", json!({"url": "https://example.test/galago"})),
            {"type": "finish", "data": {"reason": "tool_use"}}
        ]),
        T0 + 1,
        false,
    );
    sql += &message(
        "m3",
        "s-root",
        "tool",
        json!([{"type": "tool_result", "data": {"tool_call_id": "call_bash",
        "name": "bash", "content": "toolresultwordbeta", "is_error": false}}]),
        T0 + 2,
        false,
    );
    sql += &message(
        "m4",
        "s-root",
        "assistant",
        json!([text("The galago cache is tuned.")]),
        T0 + 3,
        false,
    );
    sql += &message(
        "m5",
        "s-root",
        "assistant",
        json!([text("summarywordgamma of the session")]),
        T0 + 4,
        true,
    );
    // the sub-agent session's times in milliseconds, an object input (older writers)
    sql += &message(
        "c1",
        "s-child",
        "user",
        json!([text("child task about the bushbaby")]),
        (T0 + 10) * 1000,
        false,
    );
    sql += &message(
        "c2",
        "s-child",
        "assistant",
        json!([{"type": "tool_call", "data": {"id": "x", "name": "glob",
        "input": {"pattern": "**/*.go"}}}, text("bushbaby done")]),
        (T0 + 11) * 1000,
        false,
    );
    exec(&db, &sql, true);
    let c = serve_sources(&[root.arg("crush")], &["--debounce-ms", "100"]);
    let id = "crush:s-root";
    assert_eq!(c.user_texts(id), ["tune the galago cache"]);
    let t = c.read_turn(id, 0);
    assert_eq!(
        t["assistant_text"],
        "Looking.\n\nThe galago cache is tuned."
    );
    assert_eq!(tool(&t, "view")["file"], "/home/u/crushproj/src/cache.go");
    assert_eq!(tool(&t, "bash")["command"], "go test ./cache");
    assert_eq!(tool(&t, "edit")["file"], "/home/u/crushproj/src/cache.go");
    assert_eq!(tool(&t, "write")["chars"], 3);
    assert_eq!(tool(&t, "grep")["pattern"], "func Evict");
    assert_eq!(tool(&t, "fetch")["url"], "https://example.test/galago");
    for word in [
        "reasoningwordalpha",
        "toolresultwordbeta",
        "summarywordgamma",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let rows = c.list(json!({"source": "crush"}));
    let row = &rows["conversations"][0];
    assert_eq!(row["session_id"], id, "{rows}");
    assert_eq!(row["summary"], "Galago cache");
    assert_eq!(row["cwd"], project.to_str().unwrap());
    assert_eq!(row["project"], "crushproj");
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:00.000Z");
    assert_eq!(row["subagent_count"], 1);
    let child = c.read_turn("crush:s-child", 0);
    assert_eq!(tool(&child, "glob")["pattern"], "**/*.go");
    assert_eq!(child["timestamp"], "2026-05-01T10:00:10.000Z");
    let found = c.search("bushbaby");
    assert_eq!(found["results"][0]["parent_session_id"], id, "{found}");
    exec(
        &db,
        &message(
            "m6",
            "s-root",
            "user",
            json!([text("later about the potto")]),
            T0 + 60,
            false,
        ),
        true,
    );
    poll_until_desc("appended message", Duration::from_secs(15), || {
        (c.hits("potto") == [(id.to_string(), 1)]).then_some(())
    });
    // a second project appears under the directory
    let other = root.path().join("code/other/.crush");
    std::fs::create_dir_all(&other).unwrap();
    let mut sql = String::from(CRUSH_SCHEMA);
    sql += &session("s-other", "Other", None, T0);
    sql += &message(
        "o1",
        "s-other",
        "user",
        json!([text("other project about the loris")]),
        T0,
        false,
    );
    exec(&other.join("crush.db"), &sql, false);
    poll_until_desc("new project", Duration::from_secs(15), || {
        (c.hits("loris") == [("crush:s-other".to_string(), 0)]).then_some(())
    });
}

#[test]
fn no_default_location_is_a_usage_error() {
    let out = run_cli(&["--source", "crush", "list"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("crush:DIR") && err.contains(".crush/crush.db"),
        "{err}"
    );
}

#[test]
fn sample() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let dir = samples.join("crush");
    if !dir.join("ctx-v1/crush.db").is_file() {
        crate::common::skip("crush sample: file missing");
        return;
    }
    let c = serve_sources(&[format!("crush:{}", dir.display())], &[]);
    let id = "crush:crush-root";
    assert_eq!(c.user_texts(id), ["crush sqlite search oracle request"]);
    let t = c.read_turn(id, 0);
    assert_eq!(t["assistant_text"], "I will inspect Crush files.");
    assert_eq!(tool(&t, "bash")["command"], "rg crush");
    let child = c.read_turn("crush:crush-child", 0);
    assert_eq!(tool(&child, "shell_command")["command"], "go test ./...");
    for word in ["native", "reasoning"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
}
