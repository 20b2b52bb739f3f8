//! GitHub Copilot CLI session logs through the binary: human prompts (not skill, agent or
//! autopilot messages), replies, tool requests with string or object arguments read once with
//! their executions, inline sub-agents opened by their task, cwd/branch and titles, both
//! layouts, live appends, any chunking of a log, the samples — and one file's history across
//! every agent added here.

use crate::common;

use std::time::Duration;

use crate::common::agents::{AntigravityTranscript, CopilotSession, CursorTranscript, cu_tool};
use crate::common::chunks_tree::{chunked_equals_whole, cut_points};
use crate::common::formats::{SourceRoot, serve_sources};
use crate::common::kimi::{KimiCodeSession, KimiSession};
use crate::common::{poll_until_desc, samples_or_skip};
use proptest::prelude::*;
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

#[test]
fn prompts_replies_tools_and_metadata() {
    let root = SourceRoot::new("cs-copilot-");
    let mut s = CopilotSession::new(
        root.path(),
        "0c0a0000-1111",
        false,
        "/home/u/cpproj",
        "feat-x",
    );
    s.event("system.message", json!({"content": "systemwordcp", "role": "system"}))
        .user("fix the flamingo parser")
        .event("assistant.turn_start", json!({"turnId": "0"}))
        .event("assistant.reasoning", json!({"reasoningId": "r", "content": "reasoningwordcp"}))
        .assistant(
            "Looking at it.",
            &[
                ("c1", "view", json!({"path": "/home/u/cpproj/src/flamingo.rs"})),
                ("c2", "bash", json!("{\"command\":\"cargo test flamingo\"}")),
                ("c3", "create", json!({"path": "/home/u/cpproj/src/pink.rs", "file_text": "pub fn p() {}"})),
                ("c4", "edit", json!({"path": "/home/u/cpproj/src/lib.rs", "old_str": "a", "new_str": "b"})),
                ("c5", "grep", json!({"pattern": "flamingo"})),
                ("c6", "web_fetch", json!({"url": "https://docs.example/flamingo"})),
            ],
        )
        .tool_run("c1", "view", json!({"path": "/home/u/cpproj/src/flamingo.rs"}), "outputwordcp")
        .tool_run("c2", "bash", json!({"command": "cargo test flamingo"}), "ok")
        .assistant("Fixed the flamingo parser.", &[])
        .event("user.message", json!({"content": "skillwordcp", "source": "skill-pdf"}))
        .event("user.message", json!({"content": "autopilotwordcp", "isAutopilotContinuation": true}))
        .event("assistant.turn_end", json!({"turnId": "0"}))
        .event("user.message", json!({"content": "now the stork", "attachments": [
            {"type": "file", "path": "/tmp/stork.png", "displayName": "stork.png", "mimeType": "image/png"}]}))
        .assistant("stork done", &[])
        .event("session.shutdown", json!({"shutdownType": "routine"}));
    s.workspace_name("Flamingo fixes");
    let c = serve_sources(&[root.arg("copilot")], &[]);
    assert_eq!(s.id, "copilot:0c0a0000-1111");
    assert_eq!(
        c.user_texts(&s.id),
        ["fix the flamingo parser", "now the stork"]
    );
    let t0 = c.read_turn(&s.id, 0);
    assert_eq!(
        t0["assistant_text"],
        "Looking at it.\n\nFixed the flamingo parser."
    );
    assert_eq!(
        t0["tools_used"].as_array().unwrap().len(),
        6,
        "executions repeat the requests: {t0}"
    );
    assert_eq!(tool(&t0, "view")["file"], "/home/u/cpproj/src/flamingo.rs");
    assert_eq!(tool(&t0, "bash")["command"], "cargo test flamingo");
    let w = tool(&t0, "create");
    assert_eq!(
        (w["file"].as_str(), w["chars"].as_u64()),
        (Some("/home/u/cpproj/src/pink.rs"), Some(13))
    );
    assert_eq!(tool(&t0, "edit")["file"], "/home/u/cpproj/src/lib.rs");
    assert_eq!(tool(&t0, "grep")["pattern"], "flamingo");
    assert_eq!(
        tool(&t0, "web_fetch")["url"],
        "https://docs.example/flamingo"
    );
    let t1 = c.read_turn(&s.id, 1);
    assert_eq!(
        t1["attachments"],
        json!([{"type": "file", "media_type": "image/png"}])
    );
    for word in [
        "systemwordcp",
        "reasoningwordcp",
        "outputwordcp",
        "skillwordcp",
        "autopilotwordcp",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let row = &c.list(json!({"source": "copilot"}))["conversations"][0];
    assert_eq!(row["summary"], "Flamingo fixes");
    assert_eq!(
        (row["cwd"].as_str(), row["git_branch"].as_str()),
        (Some("/home/u/cpproj"), Some("feat-x"))
    );
    assert_eq!(row["project"], "cpproj");
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:01.000Z");
    let f = c.search_with(json!({"query": "flamingo", "git_branch": "feat-x", "tool": "bash"}));
    assert_eq!(f["results"][0]["session_id"], s.id, "{f}");
}

#[test]
fn inline_subagents_start_with_their_task() {
    let root = SourceRoot::new("cs-copilot-");
    let mut s = CopilotSession::new(root.path(), "sub-host", true, "/w/sub", "main");
    s.user("ask a helper about the albatross").assistant(
        "Delegating.",
        &[("t1", "task", json!({"agent_type": "explore", "description": "albatross facts", "prompt": "research the albatross wingspan"}))],
    );
    s.event(
        "subagent.started",
        json!({"toolCallId": "t1", "agentName": "explore",
        "agentDisplayName": "Explore", "agentDescription": "Explores"}),
    );
    s.reply(
        Some("t1"),
        "wingspan is 3.5 m",
        &[("t1a", "grep", json!({"pattern": "wingspan"}))],
    );
    s.event(
        "tool.execution_start",
        json!({"parentToolCallId": "t1", "toolCallId": "t1a",
        "toolName": "grep", "arguments": {"pattern": "wingspan"}}),
    );
    s.event(
        "subagent.completed",
        json!({"toolCallId": "t1", "agentName": "explore"}),
    );
    s.assistant("The helper says 3.5 m.", &[]);
    let c = serve_sources(&[root.arg("copilot")], &[]);
    let sub = format!("{}/t1", s.id);
    assert_eq!(c.user_texts(&sub), ["research the albatross wingspan"]);
    let t = c.read_turn(&sub, 0);
    assert_eq!(t["assistant_text"], "wingspan is 3.5 m");
    assert_eq!(t["tools_used"].as_array().unwrap().len(), 1, "{t}");
    let r = c.search("wingspan 3.5");
    let hit = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["session_id"] == sub)
        .cloned();
    assert_eq!(hit.expect("sub-agent hit")["parent_session_id"], s.id);
    let main = c.read_turn(&s.id, 0);
    assert_eq!(
        main["assistant_text"],
        "Delegating.\n\nThe helper says 3.5 m."
    );
    assert_eq!(tool(&main, "task")["type"], "explore");
    let st = c.index_status();
    assert_eq!(
        (st["sessions"].as_u64(), st["subagents"].as_u64()),
        (Some(1), Some(1)),
        "{st}"
    );
}

#[test]
fn live_appends_are_searchable() {
    let root = SourceRoot::new("cs-copilot-");
    let mut s = CopilotSession::new(root.path(), "live-1", false, "/w/live", "main");
    s.user("start").assistant("ok", &[]);
    let c = serve_sources(&[root.arg("copilot")], &["--debounce-ms", "100"]);
    s.user("later about the hoatzin").assistant("answer", &[]);
    poll_until_desc("appended turn", Duration::from_secs(15), || {
        (c.hits("hoatzin") == [(s.id.clone(), 1)]).then_some(())
    });
}

#[test]
fn samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let s = samples.join("copilot-cli");
    let root = SourceRoot::new("cs-copilot-");
    let put = |from: &str, to: &str| {
        let dest = root.path().join(to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(s.join(from), dest).unwrap();
    };
    put(
        "session-state/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl",
        "aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl",
    );
    put(
        "agent-sessions-large-legacy-flat.jsonl",
        "11111111-2222-3333-4444-555555555555.jsonl",
    );
    put(
        "agent-sessions-schema-catalog-small.jsonl",
        "catalog/events.jsonl",
    );
    put(
        "ctx-handwritten-mcp-edgecases/events.jsonl",
        "mcp/events.jsonl",
    );
    put(
        "git-ai-copilot_vscode_agent_event_stream.jsonl",
        "vscode/events.jsonl",
    );
    let c = serve_sources(&[root.arg("copilot")], &[]);
    let st = c.index_status();
    assert_eq!(st["sources"][0]["files"], 5, "{st}");
    let v1 = "copilot:aaaabbbb-1111-2222-3333-ccccddddeeee";
    let t = c.read_turn(v1, 0);
    assert_eq!(t["user_text"], "List the files");
    assert_eq!(
        t["assistant_text"],
        "The directory contains file1 and file2."
    );
    assert_eq!(tool(&t, "bash")["command"], "ls");
    assert_eq!(
        c.user_texts("copilot:11111111-2222-3333-4444-555555555555"),
        ["Step 1", "Step 2", "Step 3"]
    );
    let vs = c.read_turn("copilot:vscode", 0);
    assert_eq!(vs["user_text"], "add some jokes to jokes.csv");
    assert_eq!(
        tool(&vs, "read_file")["file"],
        "/Users/svarlamov/projects/testing-git-vscode-hooks/jokes.csv"
    );
    assert_eq!(
        tool(&vs, "replace_string_in_file")["file"],
        "/Users/svarlamov/projects/testing-git-vscode-hooks/jokes.csv"
    );
    assert_eq!(vs["tools_used"].as_array().unwrap().len(), 2, "{vs}");
    let catalog = c.read_turn("copilot:catalog", 0);
    assert_eq!(tool(&catalog, "shell")["command"], "ls");
    let rows = c.list(json!({"limit": 100}));
    let row = |id: &str| {
        rows["conversations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["session_id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        (row(v1)["cwd"].as_str(), row(v1)["git_branch"].as_str()),
        (Some("/tmp/project"), Some("main"))
    );
    assert_eq!(row("copilot:mcp")["cwd"], "/workspace/sanitized");
    for word in ["synthetic", "trimmed"] {
        assert!(
            c.hits(word).iter().all(|(id, _)| id != "copilot:mcp"),
            "{word}: tool output indexed"
        );
    }
}

#[test]
fn one_file_history_across_agents() {
    let path = "/home/u/shared/src/heron.rs";
    let kimi = SourceRoot::new("cs-x-kimi-");
    let mut k = KimiSession::new(kimi.path(), "/home/u/shared", "k1");
    k.turn("kimi edits the heron").tool(
        "StrReplaceFile:0",
        "StrReplaceFile",
        json!({"path": path, "edit": {}}),
    );
    let kc = SourceRoot::new("cs-x-kc-");
    let mut kcs = KimiCodeSession::new(kc.path(), "/home/u/shared", "session_x", "X");
    kcs.prompt("kimi code reads the heron")
        .tool("Read_0", "Read", json!({"path": path}));
    let cursor = SourceRoot::new("cs-x-cursor-");
    let mut cu = CursorTranscript::new(cursor.path(), "/home/u/shared", "cu1", false);
    cu.user("cursor writes the heron").assistant(vec![cu_tool(
        "Write",
        json!({"path": path, "contents": "x"}),
    )]);
    let cp = SourceRoot::new("cs-x-copilot-");
    let mut co = CopilotSession::new(cp.path(), "co1", false, "/home/u/shared", "main");
    co.user("copilot views the heron")
        .assistant("", &[("v", "view", json!({"path": path}))]);
    let ag = SourceRoot::new("cs-x-ag-");
    let mut a = AntigravityTranscript::new(ag.path(), "ag1", "/home/u/shared");
    a.user("antigravity replaces in the heron").planner(
        None,
        &[(
            "replace_file_content",
            json!({"TargetFile": path, "ReplacementContent": "y"}),
        )],
    );
    let sources = [
        kimi.arg("kimi"),
        kc.arg("kimi-code"),
        cursor.arg("cursor"),
        cp.arg("copilot"),
        ag.arg("antigravity"),
    ];
    let c = serve_sources(&sources, &[]);
    let h = c.ok(
        "find_file_history",
        json!({"path": "src/heron.rs", "limit": 20}),
    );
    let mut got: Vec<(String, String)> = h["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source"].as_str().unwrap().to_owned(),
                r["operation"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    got.sort();
    let want = [
        ("antigravity", "edit"),
        ("copilot", "read"),
        ("cursor", "write"),
        ("kimi", "edit"),
        ("kimi-code", "read"),
    ];
    assert_eq!(got, want.map(|(s, o)| (s.to_owned(), o.to_owned())), "{h}");
    let edits = c.search_with(json!({"query": "heron", "file": "heron.rs", "limit": 20}));
    assert_eq!(edits["total"], 5, "{edits}");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        max_shrink_iters: 8,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_chunking_of_a_session_log_reads_like_the_whole_file(
        ops in prop::collection::vec(0..7u8, 1..14),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..7),
    ) {
        let scratch = SourceRoot::new("cs-copilot-scratch-");
        let mut s = CopilotSession::new(scratch.path(), "chunky", false, "/w/ω", "main");
        for (i, op) in ops.iter().enumerate() {
            let id = format!("c{i}");
            match op {
                0 => s.user("café naïve"),
                1 => s.assistant("größe 日本語", &[]),
                2 => s.assistant("", &[(&id, "bash", json!({"command": "ls ω"}))]),
                3 => s.assistant("", &[(&id, "task", json!({"prompt": "go kestrel", "agent_type": "x"}))]),
                4 => s.reply(Some("c0"), "sub plover", &[]),
                5 => s.tool_run(&id, "view", json!({"path": "größe.rs"}), "out"),
                _ => s.event("session.info", json!({"message": "info"})),
            };
        }
        let rel = s.path.strip_prefix(scratch.path()).unwrap().to_owned();
        let len = std::fs::metadata(&s.path).unwrap().len() as usize;
        let ids = [s.id.clone(), format!("{}/c0", s.id)];
        chunked_equals_whole("copilot", scratch.path(), &rel, &cut_points(len, &picks), &ids);
    }
}
