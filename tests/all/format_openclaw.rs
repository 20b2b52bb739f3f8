//! OpenClaw (pi session v3) transcripts through the binary: prompts vs housekeeping, tool
//! rendering, never-indexed content, metadata, discovery layouts, live appends, real samples.

use crate::common;

use std::time::Duration;

use crate::common::formats::{
    OpenClawSession, SourceRoot, oc_text, oc_thinking, oc_tool, serve_sources,
};
use crate::common::mcp::listed_sessions;
use crate::common::search::{tool_used, total};
use crate::common::{poll_until_desc, samples_or_skip, skip};
use serde_json::json;

/// A session exercising every rule: a real prompt with every tool kind, thinking, tool
/// results, housekeeping, the new-session scaffold, an error reply, compaction and a title.
fn rich_session(root: &std::path::Path) -> OpenClawSession {
    let mut s = OpenClawSession::new(root, "main", "oc-rich-0001", "/home/u/clawproj");
    s.entry("model_change", json!({"provider": "anthropic", "modelId": "claude-sonnet-4-5"}))
        .entry("custom", json!({"customType": "ui_state", "data": {"phase": "zephyrcustomdata"}}))
        .entry(
            "custom_message",
            json!({"customType": "openclaw.runtime-context", "content": "Runtime context zephyrinjected", "display": false}),
        )
        .assistant_model(
            vec![oc_text("New session started scaffoldmirrorword")],
            "delivery-mirror",
        )
        .user("Please refactor the quokkaparser module")
        .assistant(vec![
            oc_thinking("hidden musing thinkwordquux"),
            oc_text("I will inspect the quokka code first."),
            oc_tool("t1", "exec", json!({"command": "cargo test quokka", "timeout": 30})),
            oc_tool("t2", "read", json!({"path": "/home/u/clawproj/src/quokka.rs"})),
            oc_tool("t3", "edit", json!({"file_path": "/home/u/clawproj/src/lib.rs", "oldText": "a", "newText": "b"})),
            oc_tool("t4", "write", json!({"path": "/home/u/clawproj/NOTES.md", "content": "hello"})),
            oc_tool("t5", "browser", json!({"action": "navigate", "targetUrl": "https://docs.example.test"})),
            oc_tool("t6", "web_search", json!({"query": "quokka parser combinators"})),
            oc_tool("t7", "web_fetch", json!({"url": "https://example.test/quokka"})),
        ])
        .tool_result("t1", "exec", "test output resultwordzeta passed")
        .tool_result("t2", "read", "fn quokka() { resultwordeta }")
        .assistant(vec![oc_text("The parser is refactored.")])
        .user("Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. If nothing needs attention, reply HEARTBEAT_OK.")
        .assistant(vec![oc_text("HEARTBEAT_OK")])
        .assistant(vec![oc_text("Heartbeat checked heartbeatchatterword")])
        .assistant_error("rate limited errorwordomega")
        .entry(
            "compaction",
            json!({"summary": "Refactored the quokka parser.", "firstKeptEntryId": "x", "tokensBefore": 900}),
        )
        .entry("session_info", json!({"name": "Quokka parser refactor"}))
        .user_string("now add docs for the wombat helper")
        .assistant(vec![oc_text("Docs added for wombat.")]);
    s
}

#[test]
fn prompts_tools_and_metadata() {
    let root = SourceRoot::new("cs-openclaw-");
    let s = rich_session(root.path());
    let c = serve_sources(&[root.arg("openclaw")], &[]);

    let r = c.search("quokkaparser");
    let hits = r["results"].as_array().expect("results");
    assert_eq!(hits.len(), 1, "{r}");
    assert_eq!(hits[0]["session_id"], s.id());
    assert_eq!(hits[0]["source"], "openclaw");
    assert_eq!(hits[0]["project"], "clawproj");
    assert_eq!(hits[0]["turn_number"], 0);

    let t = c.read_turn(&s.id(), 0);
    assert_eq!(t["user_text"], "Please refactor the quokkaparser module");
    let reply = t["assistant_text"].as_str().unwrap();
    assert!(
        reply.contains("inspect the quokka code") && reply.contains("refactored"),
        "{t}"
    );
    assert_eq!(tool_used(&t, "exec")["command"], "cargo test quokka");
    assert_eq!(
        tool_used(&t, "read")["file"],
        "/home/u/clawproj/src/quokka.rs"
    );
    assert_eq!(tool_used(&t, "edit")["file"], "/home/u/clawproj/src/lib.rs");
    assert_eq!(tool_used(&t, "write")["file"], "/home/u/clawproj/NOTES.md");
    assert_eq!(tool_used(&t, "write")["chars"], 5);
    assert_eq!(tool_used(&t, "browser")["action"], "navigate");
    assert_eq!(
        tool_used(&t, "web_search")["query"],
        "quokka parser combinators"
    );
    assert_eq!(
        tool_used(&t, "web_fetch")["url"],
        "https://example.test/quokka"
    );

    // thinking, tool results, housekeeping, scaffold, error-only replies: never indexed
    for word in [
        "thinkwordquux",
        "resultwordzeta",
        "resultwordeta",
        "zephyrinjected",
        "zephyrcustomdata",
        "scaffoldmirrorword",
        "heartbeatchatterword",
        "errorwordomega",
        "HEARTBEAT_OK",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }

    assert_eq!(
        c.user_texts(&s.id()),
        [
            "Please refactor the quokkaparser module",
            "now add docs for the wombat helper"
        ]
    );
    let list = c.list(json!({}));
    let row = &list["conversations"][0];
    assert_eq!(row["session_id"], s.id());
    assert_eq!(row["source"], "openclaw");
    assert_eq!(row["summary"], "Quokka parser refactor");
    assert_eq!(row["cwd"], "/home/u/clawproj");
    assert_eq!(row["project"], "clawproj");
    assert_eq!(row["turn_count"], 2);
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:01.000Z");

    let st = c.index_status();
    let src = &st["sources"][0];
    assert_eq!(
        (src["source"].as_str(), src["files"].as_u64()),
        (Some("openclaw"), Some(1))
    );
    assert_eq!(
        (src["sessions"].as_u64(), src["turns"].as_u64()),
        (Some(1), Some(2))
    );
}

#[test]
fn compaction_summary_is_the_fallback_title() {
    let root = SourceRoot::new("cs-openclaw-");
    let mut s = OpenClawSession::new(root.path(), "main", "oc-compact", "/w/p");
    s.user("first prompt about lemurs")
        .assistant(vec![oc_text("ok")])
        .entry("compaction", json!({"summary": "Lemur work summarised.", "firstKeptEntryId": "x", "tokensBefore": 1}));
    let c = serve_sources(&[root.arg("openclaw")], &[]);
    assert_eq!(
        c.list(json!({}))["conversations"][0]["summary"],
        "Lemur work summarised."
    );
    // a compaction summary is metadata, not a turn
    assert_eq!(c.read_conversation(&s.id())["total_turns"], 1);
}

#[test]
fn sessions_dir_root_pi_layout_and_bad_lines() {
    // `--source openclaw:<one sessions dir>` and pi's `sessions/--cwd--/*.jsonl` both work
    let root = SourceRoot::new("cs-openclaw-");
    let mut a = OpenClawSession::at(root.path().join("a-1.jsonl"), "a-1", "/w/alpha");
    a.user("alpha prompt with capybara")
        .assistant(vec![oc_text("done")]);
    let mut b = OpenClawSession::at(
        root.path().join("--w-beta--/2026-05-01T10-00-00_b-2.jsonl"),
        "b-2",
        "/w/beta",
    );
    b.user("beta prompt with capybara");
    b.raw(&json!("not an object"));
    append(&b.path, "{ broken json");
    b.entry("some_future_entry", json!({"x": 1}))
        .user("second beta prompt");
    let c = serve_sources(&[root.arg("openclaw")], &[]);
    let mut ids: Vec<String> = common::mcp::hit_sessions(&c.search("capybara"));
    ids.sort();
    assert_eq!(ids, ["openclaw:a-1", "openclaw:b-2"]);
    assert_eq!(c.read_conversation("openclaw:b-2")["total_turns"], 2);
    let src = &c.index_status()["sources"][0];
    assert_eq!(src["skipped_lines"], 2, "{src}");
    assert_eq!(src["files"], 2);
}

fn append(path: &std::path::Path, line: &str) {
    common::formats::append_line(path, line);
}

#[test]
fn live_append_is_searchable() {
    let root = SourceRoot::new("cs-openclaw-");
    let mut s = OpenClawSession::new(root.path(), "ops", "oc-live", "/w/live");
    s.user("initial prompt").assistant(vec![oc_text("ok")]);
    let c = serve_sources(&[root.arg("openclaw")], &["--debounce-ms", "200"]);
    assert_eq!(total(&c, "aardvarklive"), 0);
    s.user("follow-up about aardvarklive")
        .assistant(vec![oc_text("sure")]);
    poll_until_desc(
        "appended prompt searchable",
        Duration::from_secs(15),
        || (total(&c, "aardvarklive") == 1).then_some(()),
    );
    // a new session file in a new agent directory is discovered too
    let mut n = OpenClawSession::new(root.path(), "newagent", "oc-new", "/w/new");
    n.user("brand new okapilive session");
    poll_until_desc("new session searchable", Duration::from_secs(15), || {
        (total(&c, "okapilive") == 1).then_some(())
    });
    assert_eq!(c.hits("okapilive")[0].0, "openclaw:oc-new");
}

#[test]
fn real_samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let root = SourceRoot::new("cs-openclaw-");
    let dir = root.path().join("main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    for f in [
        "openclaw/agent-sessions-openclaw-large.jsonl",
        "openclaw/pi-format/agent-sessions-pi-small.jsonl",
    ] {
        let src = samples.join(f);
        if !src.is_file() {
            skip(&format!("../shared/samples/{f} not found"));
            return;
        }
        let name = src.file_name().unwrap();
        std::fs::write(dir.join(name), std::fs::read(&src).unwrap()).unwrap();
    }
    let c = serve_sources(&[root.arg("openclaw")], &[]);
    let list = c.list(json!({}));
    let mut ids = listed_sessions(&list);
    ids.sort();
    assert_eq!(
        ids,
        [
            "openclaw:019e19b4-eb48-746a-aa6b-8dfcfa37954b",
            "openclaw:openclaw-stage0-large"
        ]
    );
    // large: one prompt, two tool calls; pi: two prompts
    let t = c.read_turn("openclaw:openclaw-stage0-large", 0);
    assert_eq!(t["user_text"], "Open /tmp/large and run status");
    assert_eq!(
        tool_used(&t, "run_terminal")["command"],
        "git status --short"
    );
    assert_eq!(
        c.read_conversation("openclaw:019e19b4-eb48-746a-aa6b-8dfcfa37954b")["total_turns"],
        2
    );
    // "file1"/"written" appear only in tool results, "injected" only in a custom_message
    for word in ["file1", "written", "injected"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    assert_eq!(c.index_status()["sources"][0]["skipped_lines"], 0);
}
