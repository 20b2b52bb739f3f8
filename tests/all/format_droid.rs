//! Factory Droid sessions through the binary: the typed part of prompts (no `@file` contents,
//! no reminders), tool results that are not prompts, replies, tool rendering, never-indexed
//! thinking and outputs, titles and cwd, live appends, chunked delivery and the samples.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::chunks;
use crate::common::droid::{DroidSession, d_text, d_thinking, d_tool};
use crate::common::formats::{SourceRoot, serve_sources};
use crate::common::ids::new_uuid;
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
    let root = SourceRoot::new("cs-droid-");
    let mut d = DroidSession::new(
        root.path(),
        &new_uuid(),
        "/home/u/droidproj",
        "Margay refactor",
    );
    d.user_with_file("refactor the margay module in @src/margay.ts", "/home/u/droidproj/src/margay.ts", "injectedwordalpha")
        .assistant(vec![
            d_thinking("thinkingwordbeta"),
            d_text("I'll read it first."),
            d_tool("Read", json!({"file_path": "/home/u/droidproj/src/margay.ts"})),
            d_tool("Execute", json!({"command": "npm test -- margay", "riskLevel": "low"})),
            d_tool("Create", json!({"file_path": "/home/u/droidproj/src/new.ts", "content": "abc"})),
            d_tool("Edit", json!({"file_path": "/home/u/droidproj/src/margay.ts", "old_str": "a", "new_str": "b"})),
            d_tool("Grep", json!({"pattern": "class Margay"})),
            d_tool("Glob", json!({"patterns": ["src/**"], "pattern": "src/**/*.ts"})),
            d_tool("ApplyPatch", json!({"input": "*** Begin Patch\n*** Update File: /home/u/droidproj/src/b.ts\n@@\n-x\n+y\n*** End Patch"})),
            d_tool("WebSearch", json!({"query": "margay typescript"})),
            d_tool("FetchUrl", json!({"url": "https://example.test/margay"})),
            d_tool("Task", json!({"subagent_type": "worker", "description": "split the module"})),
            d_tool("TodoWrite", json!({"todos": "1. [in_progress] refactor"})),
        ])
        .todo_state("1. [in_progress] todowordgamma")
        .tool_result("toolresultworddelta")
        .assistant(vec![d_text("Refactored the margay module.")])
        .message("user", vec![d_text("<system-reminder>\nreminderwordepsilon\n</system-reminder>\n\nnow the ocelot tests")])
        .assistant(vec![d_text("Ocelot tests pass.")]);
    let c = serve_sources(&[root.arg("droid")], &[]);
    let id = d.id();
    assert_eq!(
        c.user_texts(&id),
        [
            "refactor the margay module in @src/margay.ts",
            "now the ocelot tests"
        ]
    );
    let t0 = c.read_turn(&id, 0);
    assert_eq!(
        t0["assistant_text"],
        "I'll read it first.\n\nRefactored the margay module."
    );
    assert_eq!(tool(&t0, "Read")["file"], "/home/u/droidproj/src/margay.ts");
    assert_eq!(tool(&t0, "Execute")["command"], "npm test -- margay");
    assert_eq!(tool(&t0, "Create")["chars"], 3);
    assert_eq!(tool(&t0, "Edit")["file"], "/home/u/droidproj/src/margay.ts");
    assert_eq!(tool(&t0, "Grep")["pattern"], "class Margay");
    assert_eq!(
        tool(&t0, "ApplyPatch")["file"],
        "/home/u/droidproj/src/b.ts"
    );
    assert_eq!(tool(&t0, "WebSearch")["query"], "margay typescript");
    assert_eq!(tool(&t0, "FetchUrl")["url"], "https://example.test/margay");
    assert_eq!(tool(&t0, "Task")["type"], "worker");
    for word in [
        "injectedwordalpha",
        "thinkingwordbeta",
        "todowordgamma",
        "toolresultworddelta",
        "reminderwordepsilon",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let row = &c.list(json!({"source": "droid"}))["conversations"][0];
    assert_eq!(row["session_id"], id);
    assert_eq!(row["summary"], "Margay refactor");
    assert_eq!(row["cwd"], "/home/u/droidproj");
    assert_eq!(row["project"], "droidproj");
    assert_eq!(row["turn_count"], 2);
    let h = c.ok("find_file_history", json!({"path": "src/margay.ts"}));
    assert_eq!(h["total"], 1, "{h}");
    assert_eq!(
        h["results"][0]["operations"],
        json!(["read", "edit"]),
        "{h}"
    );
}

#[test]
fn unnamed_sessions_fall_back_to_the_first_prompt_and_live_appends() {
    let root = SourceRoot::new("cs-droid-");
    let mut d = DroidSession::new(root.path(), &new_uuid(), "/w/live", "New Session");
    d.user("fix the genet parser").assistant(vec![d_text("ok")]);
    let c = serve_sources(&[root.arg("droid")], &["--debounce-ms", "100"]);
    let row = &c.list(json!({}))["conversations"][0];
    assert_eq!(row["summary"], "fix the genet parser");
    d.user("then the fossa lexer")
        .assistant(vec![d_text("done")]);
    poll_until_desc("appended turn", Duration::from_secs(15), || {
        (c.hits("fossa") == [(d.id(), 1)]).then_some(())
    });
    let mut n = DroidSession::new(root.path(), &new_uuid(), "/w/other", "Other");
    n.user("a new session about the linsang");
    poll_until_desc("new session", Duration::from_secs(15), || {
        (c.hits("linsang") == [(n.id(), 0)]).then_some(())
    });
}

#[test]
fn samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let dir = samples.join("factory-droid");
    if !dir.join("git-ai-droid-session.jsonl").is_file() {
        crate::common::skip("droid samples: files missing");
        return;
    }
    let c = serve_sources(&[format!("droid:{}", dir.display())], &[]);
    let id = "droid:052cb8d0-4616-488a-99fe-bfbbbe9429b3";
    assert_eq!(
        c.user_texts(id),
        ["Update the first comment in @index.ts to \"DROID3\""]
    );
    let t = c.read_turn(id, 0);
    assert!(
        t["assistant_text"]
            .as_str()
            .unwrap()
            .starts_with("# Update complete"),
        "{t}"
    );
    let file = "/Users/testuser/projects/testing-git/index.ts";
    assert_eq!(tool(&t, "Read")["file"], file);
    assert_eq!(tool(&t, "ApplyPatch")["file"], file);
    // `console.log('Hello')` is only in the injected @file contents and in tool results
    assert_eq!(total(&c, "hello"), 0);
    assert_eq!(
        c.user_texts("droid:droid_drift"),
        ["Do the thing"],
        "the reminder is stripped"
    );
    let rows = c.list(json!({}));
    let row = rows["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == id)
        .cloned()
        .unwrap();
    assert_eq!(row["cwd"], "/Users/testuser/projects/testing-git");
    assert_eq!(c.index_status()["skipped_lines"], 0);
}

fn render(specs: &[(String, String, bool)]) -> Vec<u8> {
    let scratch = SourceRoot::new("cs-droid-render-");
    let mut d = DroidSession::new(scratch.path(), "droid-chunk-0001", "/w/chunks", "Chunks");
    for (prompt, reply, tool) in specs {
        d.user(prompt);
        if *tool {
            d.assistant(vec![d_tool(
                "Read",
                json!({"file_path": format!("/w/{prompt}.rs")}),
            )])
            .tool_result("output");
        }
        d.assistant(vec![d_thinking("hmm"), d_text(reply)]);
    }
    std::fs::read(&d.path).expect("rendered")
}

fn spec() -> impl Strategy<Value = (String, String, bool)> {
    let word = prop::sample::select(vec!["café", "naïve", "größe", "ωmega", "日本語", "kestrel"]);
    (word.clone(), word, any::<bool>()).prop_map(|(p, r, t)| (p.to_string(), r.to_string(), t))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, max_shrink_iters: 8, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn chunked_delivery_equals_the_whole_file(
        specs in prop::collection::vec(spec(), 1..4),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..6),
    ) {
        let whole = render(&specs);
        let root = SourceRoot::new("cs-droid-chunks-");
        let cuts = chunks::cut_points(whole.len(), &picks);
        let rel = Path::new("-w-chunks/droid-chunk-0001.jsonl");
        let seen = chunks::check("droid", root.path(), rel, &whole, &cuts, false);
        prop_assert_eq!(seen.len(), 1);
        prop_assert_eq!(seen[0].2.len(), specs.len());
    }
}
