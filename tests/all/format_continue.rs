//! Continue CLI sessions through the binary: prompts (not their context items), replies, tool
//! rendering from `toolCalls`, never-indexed tool outputs, title and workspace, whole-file
//! rewrites while a server watches, and the real sample.

use crate::common;

use std::time::Duration;

use crate::common::continue_cli::{ContinueSession, c_call};
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
    let root = SourceRoot::new("cs-continue-");
    let mut s = ContinueSession::new(root.path(), "Sifaka parser", "/home/u/contproj");
    s.user("rewrite the sifaka parser")
        .assistant(
            "Reading it first.",
            vec![
                c_call(
                    "Read",
                    json!({"filepath": "/home/u/contproj/src/sifaka.ts"}),
                ),
                c_call("Bash", json!({"command": "npm test sifaka"})),
                c_call(
                    "Write",
                    json!({"filepath": "/home/u/contproj/src/new.ts", "content": "abc"}),
                ),
                c_call(
                    "MultiEdit",
                    json!({"file_path": "/home/u/contproj/src/sifaka.ts", "edits": []}),
                ),
                c_call("Search", json!({"pattern": "parseSifaka"})),
                c_call("Fetch", json!({"url": "https://example.test/sifaka"})),
            ],
            "tooloutputwordbeta",
        )
        .assistant("Rewrote the sifaka parser.", vec![], "")
        .user("and the indri lexer")
        .assistant("Indri lexer done.", vec![], "")
        .save();
    // the index of sessions beside them is not a session
    std::fs::write(root.path().join("sessions.json"), b"[]").unwrap();
    let c = serve_sources(&[root.arg("continue")], &[]);
    let id = s.id();
    assert_eq!(
        c.user_texts(&id),
        ["rewrite the sifaka parser", "and the indri lexer"]
    );
    let t0 = c.read_turn(&id, 0);
    assert_eq!(
        t0["assistant_text"],
        "Reading it first.\n\nRewrote the sifaka parser."
    );
    assert_eq!(tool(&t0, "Read")["file"], "/home/u/contproj/src/sifaka.ts");
    assert_eq!(tool(&t0, "Bash")["command"], "npm test sifaka");
    assert_eq!(tool(&t0, "Write")["chars"], 3);
    assert_eq!(
        tool(&t0, "MultiEdit")["file"],
        "/home/u/contproj/src/sifaka.ts"
    );
    assert_eq!(tool(&t0, "Search")["pattern"], "parseSifaka");
    assert_eq!(tool(&t0, "Fetch")["url"], "https://example.test/sifaka");
    for word in ["contextwordalpha", "tooloutputwordbeta"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let rows = c.list(json!({"source": "continue"}));
    assert_eq!(rows["conversations"].as_array().unwrap().len(), 1, "{rows}");
    let row = &rows["conversations"][0];
    assert_eq!(row["summary"], "Sifaka parser");
    assert_eq!(row["cwd"], "/home/u/contproj");
    assert_eq!(row["project"], "contproj");
}

#[test]
fn rewrites_while_watched() {
    let root = SourceRoot::new("cs-continue-");
    let mut s = ContinueSession::new(root.path(), "New Session", "file:///w/live%20dir");
    s.user("first about the colugo").save();
    let c = serve_sources(&[root.arg("continue")], &["--debounce-ms", "100"]);
    let row = &c.list(json!({}))["conversations"][0];
    assert_eq!(row["summary"], "first about the colugo");
    assert_eq!(row["cwd"], "/w/live dir");
    s.assistant("ok", vec![], "")
        .user("then the tarsier")
        .save();
    poll_until_desc("rewrite indexed", Duration::from_secs(15), || {
        (c.hits("tarsier") == [(s.id(), 1)]).then_some(())
    });
}

#[test]
fn real_sample() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let dir = samples.join("continue-cli");
    if !dir.is_dir() {
        crate::common::skip("continue sample: files missing");
        return;
    }
    let c = serve_sources(&[format!("continue:{}", dir.display())], &[]);
    let id = "continue:2dbfd673-096d-4773-b5f3-9023894a7355";
    assert_eq!(
        c.user_texts(id),
        ["Add another hello world line to @index.ts"]
    );
    let t = c.read_turn(id, 0);
    let file = "/Users/svarlamov/projects/testing-git/index.ts";
    assert_eq!(tool(&t, "Read")["file"], file);
    assert_eq!(tool(&t, "MultiEdit")["file"], file);
    assert!(
        t["assistant_text"]
            .as_str()
            .unwrap()
            .starts_with("I'll read the file first")
    );
    // "Bonjour" is only in the file contents a tool returned
    assert_eq!(total(&c, "Bonjour"), 0);
    let row = &c.list(json!({}))["conversations"][0];
    assert_eq!(row["summary"], "File Reading and Appending");
    assert_eq!(row["cwd"], "/Users/svarlamov/projects/testing-git");
}
