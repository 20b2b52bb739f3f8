//! A transcripts directory that yields nothing (issue 39, behaviour 2): a `--projects-dir` or
//! `--source` root that does not exist, or exists but holds no transcript, is named (in
//! backticks, with the flag to pass instead) in every tool's answer and in
//! `index_status.warnings` (in short where a small budget sheds the rest; never past 500
//! characters at 500); the server starts all the same, and a directory created later is
//! indexed without a restart.

use crate::common;
use common::live::{DEBOUNCE_MS, MARGIN, render, serve_path, visible_at, wait_status};
use common::mcp::McpClient;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const S: &str = "0e0e0000-0000-4000-8000-000000000001";

/// The answers of every tool that answers without a session id, by name.
fn answers(c: &McpClient) -> Vec<(&'static str, Value)> {
    vec![
        ("search_conversations", c.search("anything")),
        ("list_conversations", c.list(json!({}))),
        ("recent_context", c.ok("recent_context", json!({}))),
        (
            "recent_context (all)",
            c.ok("recent_context", json!({"scope": "all", "max_chars": 500})),
        ),
        (
            "find_file_history",
            c.ok("find_file_history", json!({"path": "src/main.rs"})),
        ),
        (
            "search_conversations (500)",
            c.search_with(json!({"query": "anything", "max_chars": 500})),
        ),
    ]
}

/// Checks that every answer's note names `dir` with `why` and the flag `pass`, and that
/// read_turn's error and index_status's warnings do too.
#[track_caller]
fn assert_named(c: &McpClient, dir: &str, why: &str, pass: &str) {
    let named = format!("`{dir}` {why}");
    for (tool, a) in answers(c) {
        let note = a["note"].as_str().unwrap_or_default();
        assert!(
            note.contains(&named) && note.contains(pass),
            "{tool}'s note names {named} and {pass}: {a}"
        );
    }
    let e = c.err("read_turn", json!({"session_id": S, "turn_number": 0}));
    assert!(
        e.text.contains(&named) && e.text.contains(pass),
        "read_turn's error says why nothing is found: {}",
        e.text
    );
    let st = c.index_status();
    let warnings = st["warnings"].to_string();
    assert!(
        warnings.contains(&named) && warnings.contains(pass),
        "index_status.warnings: {st}"
    );
    let small = c.ok("index_status", json!({"max_chars": 500}));
    let len = small.to_string().chars().count();
    assert!(
        len <= 500,
        "index_status within 500 characters ({len}): {small}"
    );
    // a budget that sheds the rest still has room for the warning in short
    let small = c.ok("index_status", json!({"max_chars": 700}));
    let len = small.to_string().chars().count();
    assert!(
        len <= 700,
        "index_status within 700 characters ({len}): {small}"
    );
    assert!(
        small["warnings"].to_string().contains(why),
        "at 700 characters the warning stays: {small}"
    );
}

#[test]
fn a_missing_projects_dir_is_named_everywhere_and_picked_up_when_it_appears() {
    let base = tempfile::tempdir().expect("temp dir");
    let root = base.path().join("typo").join("projects");
    let c = serve_path(&root, DEBOUNCE_MS, &["--no-cache"]);
    assert_eq!(c.list_tools().len(), 7, "the server starts all the same");
    let shown = root.to_str().expect("utf-8");
    assert_named(&c, shown, "does not exist", "--projects-dir");

    // created later, with a transcript: found within the debounce plus a margin
    let project = root.join("-home-u-late");
    std::fs::create_dir_all(&project).expect("mkdir -p");
    let t = Instant::now();
    common::live::append(
        &project.join(format!("{S}.jsonl")),
        &render(S, |r| {
            r.exchange("the tardy heronword prompt", "reply");
        }),
    );
    visible_at(
        &c,
        "heronword",
        t + Duration::from_millis(DEBOUNCE_MS) + MARGIN,
    );
    let a = c.search("heronword");
    assert!(a.get("note").is_none(), "no note once it holds one: {a}");
    let st = wait_status(&c, "no warning left", |st| st["warnings"] == json!([]));
    assert_eq!(st["sources"][0]["exists"], true, "{st}");
}

#[test]
fn an_empty_directory_says_it_holds_no_transcript() {
    let projects = tempfile::tempdir().expect("projects dir");
    let c = McpClient::indexed(projects.path(), &["--no-cache"]);
    let shown = projects.path().canonicalize().expect("canonical");
    assert_named(
        &c,
        shown.to_str().expect("utf-8"),
        "holds no transcript",
        "--projects-dir",
    );

    // another format's root names its own flag
    let gemini = tempfile::tempdir().expect("gemini dir");
    let g = gemini.path().canonicalize().expect("canonical");
    let g = g.to_str().expect("utf-8");
    let source = format!("gemini:{g}");
    let c = McpClient::start(&["--source", &source, "--no-cache"]);
    c.wait_ready();
    assert_named(&c, g, "holds no transcript", "--source gemini:DIR");
}

#[test]
fn a_turn_read_from_the_store_still_names_the_missing_projects_dir() {
    // a conversation the store holds, read by a server whose projects dir is a typo
    let env = common::store::StoreEnv::new();
    let mut s = env.projects.project("-home-u-stored").session(S);
    s.exchange("the stored sandpiperword prompt", "the stored reply");
    s.exchange("a second prompt", "a second reply");
    let first = env.serve(&[]);
    common::store::wait_stored(&first, 2);
    drop(first);
    // the old projects tree is gone, the store stays
    std::fs::remove_dir_all(env.projects.path().join("-home-u-stored")).expect("rm -r");
    let base = tempfile::tempdir().expect("temp dir");
    let typo = base.path().join("typo").join("projects");
    let shown = typo.to_str().expect("utf-8").to_owned();
    let c = McpClient::start(&[
        "--projects-dir",
        &shown,
        "--data-dir",
        env.data_str(),
        "--cache-dir",
        env.cache.path().to_str().expect("utf-8"),
    ]);
    c.wait_ready();
    common::store::wait_presence(&c, S, false);
    let named = format!("`{shown}` does not exist");
    for max_chars in [20_000, 1000] {
        let t = c.ok(
            "read_turn",
            json!({"session_id": S, "turn_number": 0, "max_chars": max_chars}),
        );
        assert!(
            t["user_text"]
                .as_str()
                .unwrap_or_default()
                .contains("sandpiperword"),
            "the stored turn is read: {t}"
        );
        let note = t["note"].as_str().unwrap_or_default();
        assert!(
            note.contains(&named) && note.contains("--projects-dir"),
            "read_turn at {max_chars} names the missing directory: {t}"
        );
        assert!(t.to_string().chars().count() <= max_chars, "{t}");
        let page = c.ok(
            "read_conversation",
            json!({"session_id": S, "max_chars": max_chars}),
        );
        assert_eq!(page["turns"].as_array().map(Vec::len), Some(2), "{page}");
        let note = page["note"].as_str().unwrap_or_default();
        assert!(
            note.contains(&named) && note.contains("--projects-dir"),
            "read_conversation at {max_chars} names the missing directory: {page}"
        );
        assert!(page.to_string().chars().count() <= max_chars, "{page}");
    }
    // a tool page of the same turn says so too
    let tools = c.ok(
        "read_turn",
        json!({"session_id": S, "turn_number": 1, "tool_offset": 0}),
    );
    assert!(
        tools["note"].as_str().unwrap_or_default().contains(&named),
        "{tools}"
    );
}
