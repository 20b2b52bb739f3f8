//! Kimi Code journals through the binary: user-origin prompts read once (not their context
//! echo), injected reminders not prompts, steering as later prompts, loop-event replies and tool
//! calls, sub-agent journals linked through state.json, title and work directory, live appends,
//! any chunking of a journal, and the real and hand-written samples.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::chunks_tree::{chunked_equals_whole, cut_points};
use crate::common::formats::{SourceRoot, serve_sources};
use crate::common::kimi::KimiCodeSession;
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
fn prompts_once_injections_steering_tools_and_metadata() {
    let root = SourceRoot::new("cs-kimicode-");
    let mut s = KimiCodeSession::new(root.path(), "/home/u/kcproj", "session_0001", "Heron audit");
    s.op(
        "config.update",
        json!({"profileName": "agent", "systemPrompt": "systemwordkc"}),
    )
    .prompt("audit the heron module")
    .injection("<system-reminder>injectedwordkc plan mode</system-reminder>")
    .think("thinkingwordkc")
    .text("Reading it.")
    .tool(
        "Read_0",
        "Read",
        json!({"path": "/home/u/kcproj/src/heron.rs"}),
    )
    .tool_result("Read_0", "outputwordkc")
    .tool("Bash_1", "Bash", json!({"command": "cargo test heron"}))
    .tool(
        "Write_2",
        "Write",
        json!({"path": "/home/u/kcproj/NOTES.md", "content": "héron"}),
    )
    .tool(
        "Edit_3",
        "Edit",
        json!({"path": "/home/u/kcproj/src/lib.rs", "old": "a", "new": "b"}),
    )
    .tool("Glob_4", "Glob", json!({"pattern": "**/*.heron"}))
    .tool(
        "Agent_5",
        "Agent",
        json!({"description": "count herons", "subagent_type": "explore", "prompt": "count"}),
    )
    .steer("and the egret too")
    .text("Heron audited.")
    .op("turn.ended", json!({"turnId": 0, "reason": "completed"}))
    .prompt("what about the ibis")
    .text("ibis fine")
    .op(
        "context.apply_compaction",
        json!({"summary": "compactedwordkc", "compactedCount": 4}),
    );
    let c = serve_sources(&[root.arg("kimi-code")], &[]);
    let id = s.id();
    assert_eq!(id, "kimi-code:session_0001");
    assert_eq!(
        c.user_texts(&id),
        [
            "audit the heron module\n\n[later prompt]\nand the egret too",
            "what about the ibis"
        ]
    );
    let t = c.read_turn(&id, 0);
    assert_eq!(t["assistant_text"], "Reading it.\n\nHeron audited.");
    assert_eq!(tool(&t, "Read")["file"], "/home/u/kcproj/src/heron.rs");
    assert_eq!(tool(&t, "Bash")["command"], "cargo test heron");
    let w = tool(&t, "Write");
    assert_eq!(
        (w["file"].as_str(), w["chars"].as_u64()),
        (Some("/home/u/kcproj/NOTES.md"), Some(5))
    );
    assert_eq!(tool(&t, "Edit")["file"], "/home/u/kcproj/src/lib.rs");
    assert_eq!(tool(&t, "Glob")["pattern"], "**/*.heron");
    let a = tool(&t, "Agent");
    assert_eq!(
        (a["type"].as_str(), a["description"].as_str()),
        (Some("explore"), Some("count herons"))
    );
    for word in [
        "systemwordkc",
        "injectedwordkc",
        "thinkingwordkc",
        "outputwordkc",
        "compactedwordkc",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let row = &c.list(json!({"source": "kimi-code"}))["conversations"][0];
    assert_eq!(row["summary"], "Heron audit");
    assert_eq!(row["cwd"], "/home/u/kcproj");
    assert_eq!(row["project"], "kcproj");
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:00.000Z");
    let h = c.ok("find_file_history", json!({"path": "src/lib.rs"}));
    assert_eq!(
        (
            h["results"][0]["session_id"].as_str(),
            h["results"][0]["operation"].as_str()
        ),
        (Some(id.as_str()), Some("edit"))
    );
}

#[test]
fn subagent_journals_are_linked_to_their_session() {
    let root = SourceRoot::new("cs-kimicode-");
    let mut s = KimiCodeSession::new(root.path(), "/w/birds", "session_birds", "Birds");
    s.prompt("send a helper after the kestrel")
        .tool("Agent_0", "Agent", json!({"description": "kestrel helper", "subagent_type": "coder", "prompt": "find the kestrel"}));
    let mut sub = s.subagent("agent-0", "coder");
    sub.prompt_from(
        "find the kestrel nest",
        json!({"kind": "system_trigger", "name": "subagent"}),
    )
    .text("kestrel nest found")
    .tool("Grep_0", "Grep", json!({"pattern": "kestrel"}));
    s.tool_result("Agent_0", "agent_id: agent-0")
        .text("helper done");
    let c = serve_sources(&[root.arg("kimi-code")], &[]);
    let sid = sub.id();
    assert_eq!(sid, "kimi-code:session_birds/agent-0");
    assert_eq!(c.hits("nest"), [(sid.clone(), 0)]);
    let t = c.read_turn(&sid, 0);
    assert_eq!(t["user_text"], "find the kestrel nest");
    assert_eq!(tool(&t, "Grep")["pattern"], "kestrel");
    let r = c.search("nest");
    assert_eq!(r["results"][0]["parent_session_id"], s.id(), "{r}");
    let st = c.index_status();
    assert_eq!(
        (st["sessions"].as_u64(), st["subagents"].as_u64()),
        (Some(1), Some(1)),
        "{st}"
    );
    // a system-triggered prompt in the session itself is not a human prompt
    assert_eq!(c.user_texts(&s.id()), ["send a helper after the kestrel"]);
}

#[test]
fn live_appends_and_new_agents_are_searchable() {
    let root = SourceRoot::new("cs-kimicode-");
    let mut s = KimiCodeSession::new(root.path(), "/w/live", "session_live", "Live");
    s.prompt("start").text("ok");
    let c = serve_sources(&[root.arg("kimi-code")], &["--debounce-ms", "100"]);
    s.prompt("later question about the jacana").text("answer");
    poll_until_desc("appended turn", Duration::from_secs(15), || {
        (c.hits("jacana") == [(s.id(), 1)]).then_some(())
    });
    let mut sub = s.subagent("agent-7", "explore");
    sub.prompt_from("look for the potoo", json!({"kind": "system_trigger"}));
    poll_until_desc("new sub-agent journal", Duration::from_secs(15), || {
        (c.hits("potoo") == [(sub.id(), 0)]).then_some(())
    });
}

/// Copies a file into the live tree.
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

#[test]
fn real_and_handwritten_samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let k = samples.join("kimi-code");
    let root = SourceRoot::new("cs-kimicode-");
    let session = root
        .path()
        .join("sessions/wd_project_ac3bb318f98e/session_1bcbe023");
    copy(
        &k.join("agent-sessions/assistant_tools.jsonl"),
        &session.join("agents/main/wire.jsonl"),
    );
    copy(
        &k.join("agent-sessions/subagent_agent-0.jsonl"),
        &session.join("agents/agent-0/wire.jsonl"),
    );
    copy(
        &k.join("agent-sessions/assistant_tools.state.json"),
        &session.join("state.json"),
    );
    let ctx = "handwritten-ctx/.kimi-code/sessions/wd_demo_abc123/kimi-session-1";
    for f in [
        "state.json",
        "agents/main/wire.jsonl",
        "agents/agent-1/wire.jsonl",
    ] {
        copy(
            &k.join(ctx).join(f),
            &root
                .path()
                .join("sessions/wd_demo_abc123/kimi-session-1")
                .join(f),
        );
    }
    let c = serve_sources(&[root.arg("kimi-code")], &[]);
    let st = c.index_status();
    assert_eq!(st["skipped_lines"], 0, "{st}");
    let main = "kimi-code:session_1bcbe023";
    assert_eq!(
        c.user_texts(main),
        [
            "hi",
            "hi",
            "hi",
            "run ls command",
            "cat /nonexistent-file-xyz",
            "run subagent to count swift files in this repo",
            "plan counting all html files in this repo",
            "read README.md then grep for \"Kimi\""
        ]
    );
    assert_eq!(
        c.read_turn(main, 2)["assistant_text"],
        "Hi there! How can I help you today?"
    );
    assert_eq!(tool(&c.read_turn(main, 3), "Bash")["command"], "ls");
    let agent = tool(&c.read_turn(main, 5), "Agent").clone();
    assert_eq!(agent["description"], "Count Swift files in repo", "{agent}");
    let last = c.read_turn(main, 7);
    assert_eq!(
        tool(&last, "Read")["file"],
        "/private/tmp/as-agent-lab/kimi/project/README.md"
    );
    assert_eq!(tool(&last, "Grep")["pattern"], "Kimi");
    assert_eq!(
        total(&c, "TodoList"),
        0,
        "injected reminders are not prompts"
    );
    let sub = "kimi-code:session_1bcbe023/agent-0";
    assert!(
        c.user_texts(sub)[0].starts_with("<git-context>"),
        "{:?}",
        c.user_texts(sub)
    );
    assert_eq!(tool(&c.read_turn(sub, 0), "Glob")["pattern"], "**/*.swift");
    let r = c.search("3,124 Swift files");
    assert!(
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["session_id"] == sub && x["parent_session_id"] == main),
        "{r}"
    );
    let rows = c.list(json!({}));
    let row = rows["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == main)
        .unwrap()
        .clone();
    assert_eq!(
        (row["summary"].as_str(), row["cwd"].as_str()),
        (Some("hi"), Some("/private/tmp/as-agent-lab/kimi/project"))
    );
    // the hand-written ctx journal: prompt without echo, assistant text as a context message
    let hw = c.read_turn("kimi-code:kimi-session-1", 0);
    assert_eq!(hw["user_text"], "kimi jsonl oracle prompt");
    assert_eq!(hw["assistant_text"], "kimi jsonl oracle answer");
    assert_eq!(tool(&hw, "Write")["file"], "src/kimi_oracle.txt");
}

#[derive(Debug, Clone)]
enum Op {
    Prompt(String),
    Steer(String),
    Injection,
    Text(String),
    Think,
    Tool(usize),
    Result,
    Other,
}

const WORDS: &[&str] = &[
    "café",
    "naïve",
    "größe",
    "ωmega",
    "日本語",
    "kestrel",
    "plover",
];

fn words() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..4).prop_map(|w| w.join(" "))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => words().prop_map(Op::Prompt),
        1 => words().prop_map(Op::Steer),
        1 => Just(Op::Injection),
        3 => words().prop_map(Op::Text),
        1 => Just(Op::Think),
        2 => (0..3usize).prop_map(Op::Tool),
        1 => Just(Op::Result),
        1 => Just(Op::Other),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        max_shrink_iters: 8,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_chunking_of_a_journal_reads_like_the_whole_file(
        ops in prop::collection::vec(op(), 1..14),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..7),
    ) {
        let scratch = SourceRoot::new("cs-kimicode-scratch-");
        let mut s = KimiCodeSession::new(scratch.path(), "/w/chunks", "session_chunks", "Chunks");
        for (i, op) in ops.iter().enumerate() {
            let id = format!("T_{i}");
            match op {
                Op::Prompt(t) => s.prompt(t),
                Op::Steer(t) => s.steer(t),
                Op::Injection => s.injection("<system-reminder>naïve</system-reminder>"),
                Op::Text(t) => s.text(t),
                Op::Think => s.think("hidden"),
                Op::Tool(0) => s.tool(&id, "Bash", json!({"command": "ls café"})),
                Op::Tool(1) => s.tool(&id, "Read", json!({"path": "src/größe.rs"})),
                Op::Tool(_) => s.tool(&id, "Write", json!({"path": "ω.txt", "content": "日本語"})),
                Op::Result => s.tool_result("T_0", "out"),
                Op::Other => s.op("usage.record", json!({"model": "k2", "usage": {"output": 1}})),
            };
        }
        let rel = s.path.strip_prefix(scratch.path()).unwrap().to_owned();
        let len = std::fs::metadata(&s.path).unwrap().len() as usize;
        chunked_equals_whole("kimi-code", scratch.path(), &rel, &cut_points(len, &picks), &[s.id()]);
    }
}
