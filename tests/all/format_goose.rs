//! Goose's sessions database through the binary: prompts vs tool responses and agent-only
//! messages, replies, tool rendering (`developer__shell`, `text_editor` by command), never-
//! indexed thinking and outputs, titles, cwd, sub-agent sessions, live updates through the
//! WAL, and the hand-made samples (older tool-call shape).

use crate::common;

use std::time::Duration;

use crate::common::formats::{SourceRoot, serve_sources};
use crate::common::sqlitedb::{GOOSE_SCHEMA, available, exec, lit};
use crate::common::{poll_until_desc, samples_or_skip};
use serde_json::{Value, json};

fn total(c: &common::mcp::McpClient, q: &str) -> u64 {
    c.search_with(json!({"query": q, "limit": 100}))["total"]
        .as_u64()
        .expect("total")
}

fn tool<'a>(turn: &'a Value, name: &str) -> Vec<&'a Value> {
    let all = turn["tools_used"].as_array().expect("tools_used");
    all.iter().filter(|t| t["tool"] == name).collect()
}

fn session(id: &str, name: &str, user_set: bool, dir: &str, parent: Option<&str>) -> String {
    let parent = parent.map_or("NULL".to_string(), lit);
    format!(
        "INSERT INTO sessions (id, name, description, user_set_name, session_type, working_dir, created_at, updated_at, parent_session_id) \
         VALUES ({}, {}, '', {}, 'user', {}, '2026-05-01 10:00:00', '2026-05-01 10:05:00', {parent});",
        lit(id),
        lit(name),
        i32::from(user_set),
        lit(dir)
    )
}

fn message(session: &str, role: &str, content: Value, at: i64, metadata: Value) -> String {
    format!(
        "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) VALUES ({}, {}, {}, {}, {at}, {});",
        lit(&format!("m{at}")),
        lit(session),
        lit(role),
        lit(&content.to_string()),
        lit(&metadata.to_string())
    )
}

fn request(id: &str, name: &str, args: Value) -> Value {
    json!({"type": "toolRequest", "id": id, "toolCall": {"status": "success", "value": {"name": name, "arguments": args}}})
}

fn visible() -> Value {
    json!({"userVisible": true, "agentVisible": true})
}

const T0: i64 = 1_777_629_600; // 2026-05-01T10:00:00Z

#[test]
fn sessions_prompts_tools_and_live_updates() {
    if !available() {
        crate::common::skip("goose: python3 with sqlite3 unavailable");
        return;
    }
    let root = SourceRoot::new("cs-goose-");
    let db = root.path().join("sessions.db");
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    let mut sql = String::from(GOOSE_SCHEMA);
    sql += &session(
        "20260501_1",
        "Aye-aye build",
        true,
        "/home/u/gooseproj",
        None,
    );
    sql += &session(
        "20260501_2",
        "",
        false,
        "/home/u/gooseproj",
        Some("20260501_1"),
    );
    sql += &message(
        "20260501_1",
        "user",
        text("fix the aye-aye build"),
        T0,
        visible(),
    );
    sql += &message(
        "20260501_1",
        "assistant",
        json!([
            {"type": "thinking", "thinking": "thinkingwordalpha"},
            {"type": "text", "text": "Building first."},
            request("r1", "developer__shell", json!({"command": "cargo build --release"})),
            request("r2", "developer__text_editor", json!({"command": "view", "path": "/home/u/gooseproj/src/main.rs"})),
            request("r3", "developer__text_editor", json!({"command": "write", "path": "/home/u/gooseproj/NOTES.md", "file_text": "abcd"})),
            request("r4", "developer__text_editor", json!({"command": "str_replace", "path": "/home/u/gooseproj/src/lib.rs", "old_str": "a", "new_str": "b"})),
        ]),
        T0 + 1,
        visible(),
    );
    sql += &message(
        "20260501_1",
        "user",
        json!([{"type": "toolResponse", "id": "r1",
        "toolResult": {"status": "success", "value": {"content": [{"type": "text", "text": "toolresponsewordbeta"}], "isError": false}}}]),
        T0 + 2,
        visible(),
    );
    sql += &message(
        "20260501_1",
        "user",
        text("hiddenwordgamma compaction summary"),
        T0 + 3,
        json!({"userVisible": false, "agentVisible": true}),
    );
    sql += &message(
        "20260501_1",
        "assistant",
        text("The aye-aye build passes."),
        T0 + 4,
        visible(),
    );
    sql += &message(
        "20260501_2",
        "user",
        text("sub-agent task about the potto"),
        T0 + 5,
        visible(),
    );
    sql += &message(
        "20260501_2",
        "assistant",
        text("potto done"),
        T0 + 6,
        visible(),
    );
    exec(&db, &sql, true);
    let c = serve_sources(&[root.arg("goose")], &["--debounce-ms", "100"]);
    let id = "goose:20260501_1";
    assert_eq!(c.user_texts(id), ["fix the aye-aye build"]);
    let t = c.read_turn(id, 0);
    assert_eq!(
        t["assistant_text"],
        "Building first.\n\nThe aye-aye build passes."
    );
    assert_eq!(t["timestamp"], "2026-05-01T10:00:00.000Z");
    assert_eq!(
        tool(&t, "developer__shell")[0]["command"],
        "cargo build --release"
    );
    let editor = tool(&t, "developer__text_editor");
    assert_eq!(editor[0]["file"], "/home/u/gooseproj/src/main.rs");
    assert_eq!(editor[1]["chars"], 4);
    assert_eq!(editor[2]["file"], "/home/u/gooseproj/src/lib.rs");
    let h = c.ok("find_file_history", json!({"path": "src/lib.rs"}));
    assert_eq!(h["results"][0]["operation"], "edit", "{h}");
    for word in [
        "thinkingwordalpha",
        "toolresponsewordbeta",
        "hiddenwordgamma",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let rows = c.list(json!({"source": "goose"}));
    let row = &rows["conversations"][0];
    assert_eq!(row["session_id"], id, "{rows}");
    assert_eq!(row["summary"], "Aye-aye build");
    assert_eq!(row["cwd"], "/home/u/gooseproj");
    assert_eq!(row["subagent_count"], 1);
    let potto = c.search("potto");
    assert_eq!(potto["results"][0]["session_id"], "goose:20260501_2");
    assert_eq!(potto["results"][0]["parent_session_id"], id);
    // a new message in the WAL (not checkpointed) is picked up
    let later = message(
        "20260501_1",
        "user",
        text("later about the angwantibo"),
        T0 + 60,
        visible(),
    );
    exec(&db, &later, true);
    poll_until_desc("appended message", Duration::from_secs(15), || {
        (c.hits("angwantibo") == [(id.to_string(), 1)]).then_some(())
    });
}

#[test]
fn samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    for v in ["ctx-v14", "ctx-v15"] {
        let dir = samples.join("goose").join(v);
        if !dir.join("sessions.db").is_file() {
            crate::common::skip("goose sample {v}: file missing");
            continue;
        }
        let c = serve_sources(&[format!("goose:{}", dir.display())], &[]);
        let id = "goose:goose-root";
        assert_eq!(c.user_texts(id), ["goose sqlite search oracle request"]);
        let t = c.read_turn(id, 0);
        assert_eq!(
            tool(&t, "developer__shell")[0]["command"],
            "rg goose",
            "{v}: {t}"
        );
        for word in ["schema", "output"] {
            assert_eq!(total(&c, word), 0, "{v}: {word} must not be searchable");
        }
        let row = &c.list(json!({}))["conversations"][0];
        assert_eq!(row["summary"], "Goose Fixture");
        assert_eq!(row["cwd"], "/workspace/goose");
    }
}
