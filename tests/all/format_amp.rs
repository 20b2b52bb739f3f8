//! Amp threads through the binary: prompts vs tool-result messages, replies, tool rendering,
//! never-indexed thinking and outputs, title, cwd and branch from the first tree, whole-file
//! rewrites while a server watches (a half-written document keeps the last reading), and the
//! real sample.

use crate::common;

use std::time::Duration;

use crate::common::amp::{AmpThread, a_text, a_thinking, a_tool};
use crate::common::formats::{SourceRoot, serve_sources};
use crate::common::{poll_until_desc, samples_or_skip};
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
    let root = SourceRoot::new("cs-amp-");
    let mut a = AmpThread::new(
        root.path(),
        "Serval search",
        "/home/u/amp proj",
        "feature-amp",
    );
    a.user("speed up the serval search")
        .assistant(vec![
            a_thinking("thinkingwordalpha"),
            a_text("\n\n"),
            a_text("Let me look."),
            a_tool("Read", json!({"path": "/home/u/amp proj/src/search.ts"})),
            a_tool("Bash", json!({"cmd": "npm run bench -- serval"})),
            a_tool(
                "create_file",
                json!({"path": "/home/u/amp proj/src/idx.ts", "content": "12345"}),
            ),
            a_tool(
                "edit_file",
                json!({"path": "/home/u/amp proj/src/search.ts", "old_str": "a", "new_str": "b"}),
            ),
            a_tool("Grep", json!({"pattern": "function serval"})),
            a_tool("glob", json!({"filePattern": "src/**/*.ts"})),
            a_tool("web_search", json!({"query": "trigram index"})),
            a_tool(
                "Task",
                json!({"prompt": "profile it", "description": "profile the search"}),
            ),
        ])
        .tool_result("toolresultwordbeta")
        .assistant(vec![a_text("Added a trigram index.")])
        .user("and the caracal ranking?")
        .assistant(vec![a_text("Caracal ranking tuned.")])
        .save();
    let c = serve_sources(&[root.arg("amp")], &[]);
    let id = a.id();
    assert_eq!(
        c.user_texts(&id),
        ["speed up the serval search", "and the caracal ranking?"]
    );
    let t0 = c.read_turn(&id, 0);
    assert_eq!(
        t0["assistant_text"],
        "Let me look.\n\nAdded a trigram index."
    );
    assert_eq!(tool(&t0, "Read")["file"], "/home/u/amp proj/src/search.ts");
    assert_eq!(tool(&t0, "Bash")["command"], "npm run bench -- serval");
    assert_eq!(tool(&t0, "create_file")["chars"], 5);
    assert_eq!(
        tool(&t0, "edit_file")["file"],
        "/home/u/amp proj/src/search.ts"
    );
    assert_eq!(tool(&t0, "Grep")["pattern"], "function serval");
    assert_eq!(tool(&t0, "glob")["pattern"], "src/**/*.ts");
    assert_eq!(tool(&t0, "web_search")["query"], "trigram index");
    assert_eq!(tool(&t0, "Task")["description"], "profile the search");
    for word in ["thinkingwordalpha", "toolresultwordbeta"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let row = &c.list(json!({"source": "amp"}))["conversations"][0];
    assert_eq!(row["session_id"], id);
    assert_eq!(row["summary"], "Serval search");
    assert_eq!(row["cwd"], "/home/u/amp proj");
    assert_eq!(row["project"], "amp proj");
    assert_eq!(row["git_branch"], "feature-amp");
    assert_eq!(row["turn_count"], 2);
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:00.000Z");
}

#[test]
fn rewrites_while_watched() {
    let root = SourceRoot::new("cs-amp-");
    let mut a = AmpThread::new(root.path(), "Live", "/w/live", "main");
    a.user("first about the dingo")
        .assistant(vec![a_text("dingo")])
        .save();
    let c = serve_sources(&[root.arg("amp")], &["--debounce-ms", "100"]);
    assert_eq!(c.hits("dingo"), [(a.id(), 0)]);
    // a document caught half-written keeps the last reading
    let full = serde_json::to_vec(&a.doc).unwrap();
    std::fs::write(&a.path, &full[..full.len() / 2]).unwrap();
    let generation = c.index_status()["generation"].as_u64().unwrap();
    a.user("then the cuscus")
        .assistant(vec![a_text("cuscus")])
        .save();
    poll_until_desc("rewrite indexed", Duration::from_secs(15), || {
        (c.hits("cuscus") == [(a.id(), 1)]).then_some(())
    });
    assert!(c.index_status()["generation"].as_u64().unwrap() > generation);
    assert_eq!(c.hits("dingo"), [(a.id(), 0)]);
    let mut b = AmpThread::new(root.path(), "New", "/w/new", "main");
    b.user("another thread about the tayra").save();
    poll_until_desc("new thread", Duration::from_secs(15), || {
        (c.hits("tayra") == [(b.id(), 0)]).then_some(())
    });
}

#[test]
fn half_written_document_at_start_is_read_once_complete() {
    let root = SourceRoot::new("cs-amp-");
    let mut a = AmpThread::new(root.path(), "Torn", "/w/torn", "main");
    a.user("torn thread about the hyrax");
    let full = serde_json::to_vec(&a.doc).unwrap();
    std::fs::write(&a.path, &full[..full.len() - 10]).unwrap();
    let c = serve_sources(&[root.arg("amp")], &["--debounce-ms", "100"]);
    assert_eq!(total(&c, "hyrax"), 0);
    let st = c.index_status();
    let s = &st["sources"][0];
    assert_eq!(
        (s["files"].as_u64(), s["skipped_lines"].as_u64()),
        (Some(1), Some(1)),
        "{st}"
    );
    assert!(s["warning"].is_string(), "{st}");
    a.save();
    poll_until_desc("completed document", Duration::from_secs(15), || {
        (c.hits("hyrax") == [(a.id(), 0)]).then_some(())
    });
}

#[test]
fn real_sample() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let dir = samples.join("amp/git-ai");
    if !dir.is_dir() {
        crate::common::skip("amp sample: files missing");
        return;
    }
    let c = serve_sources(&[format!("amp:{}", dir.display())], &[]);
    let id = "amp:T-019ca1ce-3ae2-7686-a41e-ccc078837f8a";
    let row = &c.list(json!({}))["conversations"][0];
    assert_eq!(row["session_id"], id);
    assert_eq!(row["summary"], "Add jokes CLI with CSV data source");
    assert_eq!(row["cwd"], "/Users/svarlamov/projects/testing-git-amp");
    assert_eq!(row["git_branch"], "master");
    assert_eq!(row["turn_count"], 1);
    let t = c.read_turn(id, 0);
    assert!(
        t["user_text"]
            .as_str()
            .unwrap()
            .starts_with("Create a plan to add a jokes.csv"),
        "{t}"
    );
    assert!(
        t["assistant_text"]
            .as_str()
            .unwrap()
            .contains("## Plan: Random Joke CLI")
    );
    let reads: Vec<&str> = t["tools_used"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["tool"] == "Read")
        .filter_map(|x| x["file"].as_str())
        .collect();
    let repo = "/Users/svarlamov/projects/testing-git-amp";
    for f in ["jokes.csv", "src/index.ts"] {
        assert!(reads.contains(&format!("{repo}/{f}").as_str()), "{reads:?}");
    }
    // the jokes themselves are only in tool results; the thinking only in thinking blocks
    assert_eq!(total(&c, "hardware"), 0);
    assert_eq!(total(&c, "typescript"), 0);
}
