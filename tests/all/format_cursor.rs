//! Cursor agent transcripts through the binary: `<user_query>` prompts, tool results that are
//! not prompts, `[REDACTED]` reasoning dropped, Cursor's tool names rendered like Claude Code's,
//! both nestings and sub-agents, the working directory recovered from tool paths, live appends,
//! any chunking of a transcript, and the real and hand-written samples.

use crate::common;

use std::time::Duration;

use crate::common::agents::{CursorTranscript, cu_text, cu_tool};
use crate::common::chunks_tree::{chunked_equals_whole, cut_points};
use crate::common::formats::{SourceRoot, serve_sources};
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
fn prompts_replies_tools_and_workspace() {
    let root = SourceRoot::new("cs-cursor-");
    let wd = "/home/u/my.proj";
    let mut t = CursorTranscript::new(root.path(), wd, "c0ffee01", false);
    t.user("make the pelican list")
        .assistant(vec![
            cu_text("Checking the files.\n\n[REDACTED]"),
            cu_tool("Read", json!({"path": "/home/u/my.proj/birds/pelicans.txt", "limit": 40})),
            cu_tool("WebSearch", json!({"search_term": "pelican species list", "explanation": "x"})),
        ])
        .tool_result("resultwordcursor")
        .assistant(vec![
            cu_text("[REDACTED]"),
            cu_tool("Write", json!({"path": "/home/u/my.proj/birds/list.txt", "contents": "brown pelican"})),
            cu_tool("StrReplace", json!({"path": "/home/u/my.proj/birds/old.txt", "old_string": "a", "new_string": "b"})),
            cu_tool("Shell", json!({"command": "wc -l birds/list.txt", "description": "count"})),
            cu_tool("Grep", json!({"pattern": "pelican", "path": "birds"})),
            cu_tool("Glob", json!({"glob_pattern": "**/*.txt"})),
            cu_tool("WebFetch", json!({"url": "https://birds.example/pelicans"})),
            cu_tool("Task", json!({"description": "sort birds", "prompt": "sort", "subagent_type": "generalPurpose"})),
        ])
        .assistant(vec![cu_text("Wrote the pelican list.")])
        .turn_ended()
        .user("now the cormorants")
        .assistant(vec![cu_text("cormorant answer")]);
    let c = serve_sources(&[root.arg("cursor")], &[]);
    assert_eq!(t.id, "cursor:c0ffee01");
    assert_eq!(
        c.user_texts(&t.id),
        ["make the pelican list", "now the cormorants"]
    );
    let t0 = c.read_turn(&t.id, 0);
    assert_eq!(
        t0["assistant_text"],
        "Checking the files.\n\nWrote the pelican list."
    );
    assert_eq!(
        tool(&t0, "Read")["file"],
        "/home/u/my.proj/birds/pelicans.txt"
    );
    assert_eq!(tool(&t0, "WebSearch")["query"], "pelican species list");
    let w = tool(&t0, "Write");
    assert_eq!(
        (w["file"].as_str(), w["chars"].as_u64()),
        (Some("/home/u/my.proj/birds/list.txt"), Some(13))
    );
    assert_eq!(
        tool(&t0, "StrReplace")["file"],
        "/home/u/my.proj/birds/old.txt"
    );
    assert_eq!(tool(&t0, "Shell")["command"], "wc -l birds/list.txt");
    assert_eq!(tool(&t0, "Grep")["pattern"], "pelican");
    assert_eq!(tool(&t0, "Glob")["pattern"], "**/*.txt");
    assert_eq!(
        tool(&t0, "WebFetch")["url"],
        "https://birds.example/pelicans"
    );
    assert_eq!(tool(&t0, "Task")["description"], "sort birds");
    for word in ["resultwordcursor", "redacted", "user_query"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let row = &c.list(json!({"source": "cursor"}))["conversations"][0];
    assert_eq!(row["cwd"], wd, "{row}");
    assert_eq!(row["project"], "my.proj");
    assert_eq!(row["summary"], "make the pelican list");
    assert!(
        row["last_timestamp"].is_string(),
        "file time stands in for the last activity: {row}"
    );
    let h = c.ok("find_file_history", json!({"path": "birds/list.txt"}));
    assert_eq!(h["results"][0]["operation"], "write", "{h}");
}

#[test]
fn flat_and_nested_layouts_and_subagents() {
    let root = SourceRoot::new("cs-cursor-");
    let mut flat = CursorTranscript::new(root.path(), "/w/a", "flat-one", true);
    flat.user("flat transcript about the heron")
        .assistant(vec![cu_text("heron")]);
    let mut parent = CursorTranscript::new(root.path(), "/w/a", "parent-two", false);
    parent
        .user("delegate the ibis count")
        .assistant(vec![cu_tool(
            "Task",
            json!({"description": "ibis", "prompt": "count ibises"}),
        )]);
    let mut child = CursorTranscript::subagent(&parent, "child-three");
    child.user("count the ibises in the marsh").assistant(vec![
        cu_tool("Shell", json!({"command": "grep -c ibis marsh.txt"})),
        cu_text("ibis count 4"),
    ]);
    let c = serve_sources(&[root.arg("cursor")], &[]);
    assert_eq!(c.hits("heron"), [(flat.id.clone(), 0)]);
    assert_eq!(child.id, "cursor:parent-two/child-three");
    assert_eq!(c.hits("marsh"), [(child.id.clone(), 0)]);
    let r = c.search("marsh");
    assert_eq!(r["results"][0]["parent_session_id"], parent.id, "{r}");
    let st = c.index_status();
    assert_eq!(
        (st["sessions"].as_u64(), st["subagents"].as_u64()),
        (Some(2), Some(1)),
        "{st}"
    );
}

#[test]
fn live_appends_are_searchable() {
    let root = SourceRoot::new("cs-cursor-");
    let mut t = CursorTranscript::new(root.path(), "/w/live", "live-1", false);
    t.user("start").assistant(vec![cu_text("ok")]);
    let c = serve_sources(&[root.arg("cursor")], &["--debounce-ms", "100"]);
    t.user("later about the shoebill")
        .assistant(vec![cu_text("answer")]);
    poll_until_desc("appended turn", Duration::from_secs(15), || {
        (c.hits("shoebill") == [(t.id.clone(), 1)]).then_some(())
    });
}

#[test]
fn real_and_handwritten_samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let s = samples.join("cursor");
    let root = SourceRoot::new("cs-cursor-");
    let projects = root.path().join("projects");
    let put = |from: &str, to: &str| {
        let dest = projects.join(to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(s.join(from), dest).unwrap();
    };
    let ws = "Users-aidancunniffe-Desktop-testing-gitflows-git-ai/agent-transcripts";
    put(
        "git-ai-cursor-session-simple.jsonl",
        &format!(
            "{ws}/a1b2c3d4-e5f6-7890-abcd-ef1234567890/a1b2c3d4-e5f6-7890-abcd-ef1234567890.jsonl"
        ),
    );
    put(
        "agent-sessions/stage0-small-with-turn_ended.jsonl",
        "ws2/agent-transcripts/small.jsonl",
    );
    put(
        "agent-sessions/subagent-session.jsonl",
        "ws2/agent-transcripts/small/subagents/kid.jsonl",
    );
    put(
        "ctx-synthetic/projects/sanitized-workspace/agent-transcripts/cursor-native-session-1/cursor-native-session-1.jsonl",
        "sanitized-workspace/agent-transcripts/cursor-native-session-1/cursor-native-session-1.jsonl",
    );
    let store = root
        .path()
        .join("chats/0123abcd/a1b2c3d4-e5f6-7890-abcd-ef1234567890/store.db");
    std::fs::create_dir_all(store.parent().unwrap()).unwrap();
    std::fs::copy(s.join("agent-sessions/chats/test-store.db"), &store).unwrap();
    let c = serve_sources(&[format!("cursor:{}", projects.display())], &[]);
    let st = c.index_status();
    assert_eq!(st["skipped_lines"], 0, "{st}");
    let real = "cursor:a1b2c3d4-e5f6-7890-abcd-ef1234567890";
    assert_eq!(
        c.user_texts(real),
        ["Generate a file with all the HBO shows from the 90's in it"]
    );
    let t = c.read_turn(real, 0);
    assert!(
        !t["assistant_text"].as_str().unwrap().contains("REDACTED"),
        "{t}"
    );
    assert_eq!(
        tool(&t, "Write")["file"],
        "/Users/aidancunniffe/Desktop/testing-gitflows-git-ai/hbo-shows-1990s.txt"
    );
    assert_eq!(
        tool(&t, "WebSearch")["query"],
        "HBO original series 1990s list complete"
    );
    let rows = c.list(json!({}));
    let row = rows["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == real)
        .unwrap()
        .clone();
    assert_eq!(
        row["cwd"],
        "/Users/aidancunniffe/Desktop/testing-gitflows-git-ai"
    );
    assert_eq!(row["summary"], "Test Session", "title from the chat store");
    assert_eq!(row["first_timestamp"], "2026-04-07T00:43:10.321Z");
    assert_eq!(c.user_texts("cursor:small"), ["List the files.", "Run ls."]);
    assert_eq!(
        c.user_texts("cursor:small/kid"),
        ["Run ls -la in the workspace directory and return the output."]
    );
    let synthetic = c.read_turn("cursor:cursor-native-session-1", 0);
    assert_eq!(synthetic["assistant_text"], "The proof file was written.");
    assert_eq!(synthetic["timestamp"], "2026-06-24T12:00:00.000Z");
    assert_eq!(
        total(&c, "oracle"),
        1,
        "the tool result line is not a prompt"
    );
}

#[derive(Debug, Clone)]
enum Op {
    User(String),
    Text(String),
    Tool(usize),
    Result,
    Ended,
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
        2 => words().prop_map(Op::User),
        3 => words().prop_map(Op::Text),
        2 => (0..3usize).prop_map(Op::Tool),
        1 => Just(Op::Result),
        1 => Just(Op::Ended),
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
    fn any_chunking_of_a_transcript_reads_like_the_whole_file(
        ops in prop::collection::vec(op(), 1..12),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..7),
    ) {
        let scratch = SourceRoot::new("cs-cursor-scratch-");
        let mut t = CursorTranscript::new(scratch.path(), "/w/chunks", "chunky", false);
        for op in &ops {
            match op {
                Op::User(w) => t.user(w),
                Op::Text(w) => t.assistant(vec![cu_text(w), cu_text("[REDACTED]")]),
                Op::Tool(0) => t.assistant(vec![cu_tool("Shell", json!({"command": "ls café"}))]),
                Op::Tool(1) => t.assistant(vec![cu_tool("Read", json!({"path": "/w/chunks/größe.rs"}))]),
                Op::Tool(_) => t.assistant(vec![cu_tool("Write", json!({"path": "ω.txt", "contents": "日本語"}))]),
                Op::Result => t.tool_result("naïve output"),
                Op::Ended => t.turn_ended(),
            };
        }
        let rel = t.path.strip_prefix(scratch.path()).unwrap().to_owned();
        let len = std::fs::metadata(&t.path).unwrap().len() as usize;
        chunked_equals_whole("cursor", scratch.path(), &rel, &cut_points(len, &picks), &[t.id.clone()]);
    }
}
