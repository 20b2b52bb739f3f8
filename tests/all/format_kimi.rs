//! Kimi CLI sessions through the binary: TurnBegin prompts and steering as later prompts,
//! replies without thinking, streamed tool calls rendered like Claude Code's, sub-agents inline
//! and in their own directories, titles and work directories, context-only sessions, live
//! appends, any chunking of a wire log, and the real samples.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::chunks_tree::{chunked_equals_whole, cut_points};
use crate::common::formats::{SourceRoot, serve_sources};
use crate::common::kimi::KimiSession;
use crate::common::{poll_until_desc, samples_or_skip};
use conversation_search::md5_hex;
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

const LATER: &str = "\n\n[later prompt]\n";

#[test]
fn prompts_steering_replies_tools_and_metadata() {
    let root = SourceRoot::new("cs-kimi-");
    let mut s = KimiSession::new(root.path(), "/home/u/kimiproj", "3f1e0c2a-quetzal");
    s.state("Quetzal hunt", true);
    s.turn("investigate the quetzal crash")
        .think("thinkingwordkimi")
        .text("Looking.")
        .tool("Shell:0", "Shell", json!({"command": "cargo build --release"}))
        .tool_result("Shell:0", "outputwordkimi")
        .tool_split(
            "ReadFile:1",
            "ReadFile",
            json!({"path": "/home/u/kimiproj/src/main.rs"}),
            6,
        )
        .tool(
            "WriteFile:2",
            "WriteFile",
            json!({"path": "/home/u/kimiproj/src/new.rs", "content": "fn a() {}", "mode": "overwrite"}),
        )
        .tool(
            "StrReplaceFile:3",
            "StrReplaceFile",
            json!({"path": "/home/u/kimiproj/src/lib.rs", "edit": {"old": "a", "new": "b"}}),
        )
        .tool("Grep:4", "Grep", json!({"pattern": "quetzal", "path": "src"}))
        .tool("SearchWeb:5", "SearchWeb", json!({"query": "quetzal docs"}))
        .text("The quetzal crash is fixed.")
        .steer("also check the toucan test")
        .text("Toucan checked.")
        .turn_end()
        .turn("second question about the ocelot")
        .text("ocelot answer")
        .turn_end();
    let c = serve_sources(&[root.arg("kimi")], &[]);
    let id = s.id();
    assert_eq!(id, "kimi:3f1e0c2a-quetzal");
    assert_eq!(
        c.user_texts(&id),
        [
            format!("investigate the quetzal crash{LATER}also check the toucan test"),
            "second question about the ocelot".to_owned()
        ]
    );
    assert_eq!(c.hits("toucan test"), [(id.clone(), 0)]);
    let t0 = c.read_turn(&id, 0);
    assert_eq!(
        t0["assistant_text"],
        "Looking.\n\nThe quetzal crash is fixed.\n\nToucan checked."
    );
    assert_eq!(tool(&t0, "Shell")["command"], "cargo build --release");
    assert_eq!(
        tool(&t0, "ReadFile")["file"],
        "/home/u/kimiproj/src/main.rs"
    );
    let w = tool(&t0, "WriteFile");
    assert_eq!(
        (w["file"].as_str(), w["chars"].as_u64()),
        (Some("/home/u/kimiproj/src/new.rs"), Some(9))
    );
    assert_eq!(
        tool(&t0, "StrReplaceFile")["file"],
        "/home/u/kimiproj/src/lib.rs"
    );
    assert_eq!(tool(&t0, "Grep")["pattern"], "quetzal");
    assert_eq!(tool(&t0, "SearchWeb")["query"], "quetzal docs");
    for word in ["thinkingwordkimi", "outputwordkimi"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let row = &c.list(json!({"source": "kimi"}))["conversations"][0];
    assert_eq!(row["session_id"], id);
    assert_eq!(row["summary"], "Quetzal hunt");
    assert_eq!(row["cwd"], "/home/u/kimiproj");
    assert_eq!(row["project"], "kimiproj");
    assert_eq!(row["turn_count"], 2);
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:01.250Z");
    let history = c.ok("find_file_history", json!({"path": "src/new.rs"}));
    assert_eq!(history["results"][0]["session_id"], id);
    assert_eq!(history["results"][0]["operation"], "write");
    let shell = c.search_with(json!({"query": "quetzal", "tool": "Shell", "file": "src/main.rs"}));
    assert_eq!(shell["results"][0]["session_id"], id, "{shell}");
}

#[test]
fn subagents_inline_and_in_their_own_directory() {
    let root = SourceRoot::new("cs-kimi-");
    let mut s = KimiSession::new(root.path(), "/w/zoo", "s-zoo");
    let spawn = |d: &str, p: &str| json!({"description": d, "prompt": p, "subagent_type": "coder"});
    s.turn("spawn two helpers")
        .tool(
            "Agent:0",
            "Agent",
            spawn("inline helper", "count the wombats"),
        )
        .inline(
            "Agent:0",
            "a1",
            "TurnBegin",
            json!({"user_input": "count the wombats"}),
        )
        .inline(
            "Agent:0",
            "a1",
            "ContentPart",
            json!({"type": "text", "text": "wombat count is three"}),
        )
        .inline(
            "Agent:0",
            "a1",
            "ToolCall",
            json!({"type": "function", "id": "Glob:0",
            "function": {"name": "Glob", "arguments": "{\"pattern\": \"**/*.wombat\"}"}}),
        )
        .tool_result("Agent:0", "agent_id: a1\n[summary] three")
        .tool(
            "Agent:1",
            "Agent",
            spawn("file helper", "count the capybaras"),
        )
        .inline(
            "Agent:1",
            "a2",
            "TurnBegin",
            json!({"user_input": "duplicatewordkimi"}),
        );
    let mut sub = KimiSession::subagent(&s, "a2", "explore", "file helper");
    sub.turn("count the capybaras")
        .text("capybara count is five");
    s.text("helpers done").turn_end();
    let c = serve_sources(&[root.arg("kimi")], &[]);
    let inline = format!("{}/a1", s.id());
    let own = format!("{}/a2", s.id());
    assert_eq!(c.hits("wombat"), [(inline.clone(), 0)]);
    let t = c.read_turn(&inline, 0);
    assert_eq!(t["user_text"], "count the wombats");
    assert_eq!(t["assistant_text"], "wombat count is three");
    assert_eq!(tool(&t, "Glob")["pattern"], "**/*.wombat");
    assert_eq!(c.hits("capybara"), [(own.clone(), 0)]);
    assert_eq!(
        total(&c, "duplicatewordkimi"),
        0,
        "inline copy of a sub-agent with its own file"
    );
    let r = c.search("wombat");
    assert_eq!(r["results"][0]["parent_session_id"], s.id(), "{r}");
    let r = c.search("capybara");
    assert_eq!(r["results"][0]["parent_session_id"], s.id(), "{r}");
    let st = c.index_status();
    assert_eq!(
        (st["sessions"].as_u64(), st["subagents"].as_u64()),
        (Some(1), Some(2)),
        "{st}"
    );
    let row = &c.list(json!({}))["conversations"][0];
    assert_eq!(row["subagent_count"], 2, "{row}");
    assert_eq!(c.read_turn(&s.id(), 0)["assistant_text"], "helpers done");
}

#[test]
fn context_only_and_legacy_flat_sessions() {
    let root = SourceRoot::new("cs-kimi-");
    let wd = root.path().join("sessions").join(md5_hex(b"/w/old"));
    let context = [
        json!({"role": "_system_prompt", "content": "systemwordkimi"}),
        json!({"role": "_checkpoint", "id": 0}),
        json!({"role": "user", "content": "old question about the gecko"}),
        json!({"role": "user", "content": "<system>CHECKPOINT 1</system>"}),
        json!({"role": "assistant", "content": [{"type": "think", "think": "hmm"},
            {"type": "text", "text": "gecko answer"}],
            "tool_calls": [{"type": "function", "id": "Shell:0",
                "function": {"name": "Shell", "arguments": "{\"command\": \"ls gecko\"}"}}]}),
        json!({"role": "tool", "content": "toolwordkimi", "tool_call_id": "Shell:0"}),
        json!({"role": "_usage", "token_count": 12}),
    ];
    for line in &context {
        common::formats::append_line(&wd.join("ctx-only/context.jsonl"), &line.to_string());
        common::formats::append_line(&wd.join("flat-old.jsonl"), &line.to_string());
    }
    let c = serve_sources(&[root.arg("kimi")], &[]);
    for id in ["kimi:ctx-only", "kimi:flat-old"] {
        let t = c.read_turn(id, 0);
        assert_eq!(t["user_text"], "old question about the gecko");
        assert_eq!(t["assistant_text"], "gecko answer");
        assert_eq!(tool(&t, "Shell")["command"], "ls gecko");
    }
    for word in ["systemwordkimi", "toolwordkimi", "checkpoint"] {
        assert_eq!(total(&c, word), 0, "{word}");
    }
}

#[test]
fn live_appends_and_new_sessions_are_searchable() {
    let root = SourceRoot::new("cs-kimi-");
    let mut s = KimiSession::new(root.path(), "/w/live", "live-1");
    s.turn("start").text("ok");
    let c = serve_sources(&[root.arg("kimi")], &["--debounce-ms", "100"]);
    s.turn("later question about the kinkajou").text("answer");
    poll_until_desc("appended turn", Duration::from_secs(15), || {
        (c.hits("kinkajou") == [(s.id(), 1)]).then_some(())
    });
    s.steer("and the margay please");
    poll_until_desc("steering joins the turn", Duration::from_secs(15), || {
        (c.hits("margay") == [(s.id(), 1)]).then_some(())
    });
    let mut n = KimiSession::new(root.path(), "/w/other", "live-2");
    n.turn("brand new session about the fossa");
    poll_until_desc("new session", Duration::from_secs(15), || {
        (c.hits("fossa") == [(n.id(), 0)]).then_some(())
    });
}

/// Copies a sample session directory into `<share>/sessions/<dir>/<name>/`.
fn place(samples: &Path, share: &Path, dir: &str, name: &str) {
    let dest = share.join("sessions").join(dir).join(name);
    std::fs::create_dir_all(&dest).unwrap();
    for f in ["context.jsonl", "wire.jsonl", "state.json"] {
        std::fs::copy(samples.join("kimi-cli").join(name).join(f), dest.join(f)).unwrap();
    }
}

#[test]
fn real_samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let root = SourceRoot::new("cs-kimi-");
    let share = root.path();
    std::fs::copy(
        samples.join("kimi-cli/multi-workdir/.kimi/kimi.json"),
        share.join("kimi.json"),
    )
    .unwrap();
    let a = md5_hex(b"/proj-a");
    let b = md5_hex(b"/proj-b");
    let c_dir = format!("kaos-foo_{}", md5_hex(b"/proj-c"));
    place(&samples, share, &a, "archived");
    place(&samples, share, &a, "legacy-protocol-1.3");
    place(&samples, share, &b, "recent-protocol-1.10");
    place(&samples, share, &b, "with-thinking");
    place(&samples, share, &c_dir, "with-subagent-collapsed");
    place(&samples, share, &c_dir, "with-tool-calls");
    let c = serve_sources(&[root.arg("kimi")], &[]);
    let st = c.index_status();
    assert_eq!(
        (st["sessions"].as_u64(), st["subagents"].as_u64()),
        (Some(6), Some(1)),
        "{st}"
    );
    assert_eq!(st["skipped_lines"], 0, "{st}");
    assert_eq!(
        c.user_texts("kimi:recent-protocol-1.10"),
        ["hi", "探索这个项目"]
    );
    assert_eq!(
        c.read_turn("kimi:recent-protocol-1.10", 0)["assistant_text"],
        "Hello! How can I help you today?"
    );
    let legacy = c.read_turn("kimi:legacy-protocol-1.3", 0);
    assert_eq!(
        legacy["user_text"],
        "帮我写一个示例函数，处理字符串清理和分块"
    );
    assert_eq!(tool(&legacy, "Shell")["command"], "git diff --no-color");
    let archived = c.read_turn("kimi:archived", 0);
    assert_eq!(tool(&archived, "ReadFile")["file"], "sample.js");
    assert_eq!(tool(&archived, "WriteFile")["file"], "translated.py");
    assert_eq!(
        c.user_texts("kimi:with-thinking"),
        ["Describe this image.", "Describe this video."]
    );
    assert_eq!(total(&c, "analyzing"), 0, "think parts are not indexed");
    let blocked = c.read_turn("kimi:with-tool-calls", 0);
    assert_eq!(blocked["assistant_text"], "OK, shell was blocked.");
    assert_eq!(tool(&blocked, "Shell")["command"], "echo hi");
    let sub = "kimi:with-subagent-collapsed/ac1f74988";
    assert!(
        c.user_texts(sub)[0].starts_with("你是一个测试用的 sub agent"),
        "{:?}",
        c.user_texts(sub)
    );
    let rows = c.list(json!({"limit": 100}));
    let row = |id: &str| -> Value {
        rows["conversations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["session_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id}: {rows}"))
    };
    assert_eq!(row("kimi:archived")["cwd"], "/proj-a");
    assert_eq!(row("kimi:with-thinking")["cwd"], "/proj-b");
    assert_eq!(row("kimi:with-tool-calls")["cwd"], "/proj-c");
    assert_eq!(
        row("kimi:legacy-protocol-1.3")["summary"],
        "帮我创建一个 plan，来优化我当前 diff 中的代码"
    );
    assert_eq!(row("kimi:with-subagent-collapsed")["subagent_count"], 1);
    assert_eq!(
        row("kimi:legacy-protocol-1.3")["first_timestamp"],
        "2026-03-10T07:44:00.587Z"
    );
}

#[derive(Debug, Clone)]
enum Op {
    Turn(String),
    Steer(String),
    Text(String),
    Think,
    Tool(usize),
    Streamed(usize, usize),
    Result,
    Inline(String),
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
        2 => words().prop_map(Op::Turn),
        1 => words().prop_map(Op::Steer),
        3 => words().prop_map(Op::Text),
        1 => Just(Op::Think),
        2 => (0..3usize).prop_map(Op::Tool),
        2 => (0..3usize, 1..30usize).prop_map(|(t, at)| Op::Streamed(t, at)),
        1 => Just(Op::Result),
        1 => words().prop_map(Op::Inline),
    ]
}

fn write(s: &mut KimiSession, ops: &[Op]) {
    let args = |t: usize| match t {
        0 => ("Shell", json!({"command": "ls café"})),
        1 => ("ReadFile", json!({"path": "src/größe.rs"})),
        _ => (
            "Agent",
            json!({"description": "helper naïve", "prompt": "go", "subagent_type": "coder"}),
        ),
    };
    for (i, op) in ops.iter().enumerate() {
        let id = format!("call:{i}");
        match op {
            Op::Turn(t) => s.turn(t),
            Op::Steer(t) => s.steer(t),
            Op::Text(t) => s.text(t),
            Op::Think => s.think("hidden"),
            Op::Tool(t) => s.tool(&id, args(*t).0, args(*t).1),
            Op::Streamed(t, at) => s.tool_split(&id, args(*t).0, args(*t).1, *at),
            Op::Result => s.tool_result("call:0", "out"),
            Op::Inline(t) => s.inline(
                "call:0",
                "sub1",
                "ContentPart",
                json!({"type": "text", "text": t}),
            ),
        };
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        max_shrink_iters: 8,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_chunking_of_a_wire_log_reads_like_the_whole_file(
        ops in prop::collection::vec(op(), 1..14),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..7),
    ) {
        let scratch = SourceRoot::new("cs-kimi-scratch-");
        let mut s = KimiSession::new(scratch.path(), "/w/chunks", "chunky");
        write(&mut s, &ops);
        let rel = s.path.strip_prefix(scratch.path()).unwrap().to_owned();
        let len = std::fs::metadata(&s.path).unwrap().len() as usize;
        let ids = [s.id(), format!("{}/sub1", s.id())];
        chunked_equals_whole("kimi", scratch.path(), &rel, &cut_points(len, &picks), &ids);
    }
}
