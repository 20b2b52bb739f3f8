//! Helpers for the persistent-index tests: a writable copy of the fixture corpus, servers
//! with a given cache directory, and observations (every query's full answer, the session
//! list, the totals) to compare servers with and without a cache.
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::fixture::{ProjectsDir, SessionWriter};
use super::fixtures_projects_dir;
use super::live::{num, wait_status};
use super::mcp::McpClient;
use super::opencode::copy_tree;

/// A writable copy of the committed fixture corpus (sessions, subagents, one malformed file).
pub struct Corpus {
    pub dir: ProjectsDir,
}

impl Corpus {
    pub fn new() -> Self {
        let src = fixtures_projects_dir().expect("fixtures/claude/projects is committed");
        let dir = ProjectsDir::new();
        copy_tree(&src, dir.path());
        Corpus { dir }
    }

    pub fn path(&self) -> &str {
        self.dir.path_str()
    }

    /// A writer appending to (or creating) `<project>/<session_id>.jsonl`.
    pub fn writer(&self, project: &str, session_id: &str) -> SessionWriter {
        self.dir.project(project).session(session_id)
    }

    /// A writer appending to an existing session file.
    pub fn writer_for(&self, file: &Path) -> SessionWriter {
        let project = file
            .parent()
            .and_then(Path::file_name)
            .expect("project dir");
        let sid = file.file_stem().expect("session id");
        self.writer(&project.to_string_lossy(), &sid.to_string_lossy())
    }

    /// Every session file (top-level `.jsonl` of each project), sorted.
    pub fn sessions(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for p in fs::read_dir(self.dir.path())
            .expect("read corpus")
            .flatten()
        {
            for f in fs::read_dir(p.path()).expect("read project").flatten() {
                let path = f.path();
                if path.extension().is_some_and(|e| e == "jsonl") {
                    out.push(path);
                }
            }
        }
        out.sort();
        out
    }
}

/// Starts a server over `corpus` with `extra` args and waits for its first build.
pub fn serve(corpus: &Corpus, extra: &[&str]) -> McpClient {
    let mut args = vec!["--projects-dir", corpus.path()];
    args.extend_from_slice(extra);
    let c = McpClient::spawn(&args, &[]);
    c.initialize();
    c.wait_ready();
    c
}

pub fn cache_args(dir: &Path) -> Vec<&str> {
    vec!["--cache-dir", dir.to_str().expect("utf-8 path")]
}

pub fn cache(c: &McpClient) -> Value {
    c.index_status()["cache"].clone()
}

/// Polls until the server has written its cache at least once.
pub fn wait_written(c: &McpClient) -> Value {
    wait_status(c, "cache.writes >= 1", |st| {
        num(&st["cache"], "writes") >= 1
    })["cache"]
        .clone()
}

/// The queries every comparison runs: the fixture corpus's labelled queries plus filters,
/// paging and phrases.
pub fn queries() -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join("fixtures/claude/queries.jsonl"))
        .expect("fixtures/claude/queries.jsonl");
    let mut out: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|q| json!({"query": q["query"], "limit": 10}))
        .collect();
    assert!(
        out.len() >= 50,
        "expected the labelled queries, got {}",
        out.len()
    );
    for q in [
        "error",
        "cargo test",
        "index",
        "the",
        "\"cargo build\"",
        "fn main",
    ] {
        out.push(json!({"query": q, "limit": 25}));
        out.push(json!({"query": q, "limit": 5, "offset": 5}));
        out.push(json!({"query": q, "sort": "recent"}));
    }
    out
}

/// Everything a client can observe of the corpus: every query's full answer, the session
/// list, and the indexed totals.
pub fn observe(c: &McpClient, extra_queries: &[&str]) -> Vec<Value> {
    let mut out: Vec<Value> = queries().into_iter().map(|q| c.search_with(q)).collect();
    for q in extra_queries {
        out.push(c.search_with(json!({"query": q, "limit": 50})));
    }
    out.push(c.list(json!({"limit": 100})));
    let st = c.index_status();
    for key in [
        "sessions",
        "subagents",
        "turns",
        "files",
        "skipped_lines",
        "complete",
    ] {
        out.push(json!({key: st[key]}));
    }
    out
}

/// Asserts two observations are equal, naming the first difference.
#[track_caller]
pub fn assert_same(a: &[Value], b: &[Value], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: different number of answers");
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x, y, "{what}: answers differ");
    }
}

/// The first word of a labelled known-item query whose target is `session_id`.
pub fn labelled_word(session_id: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join("fixtures/claude/queries.jsonl")).expect("queries");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|q| q["kind"] == "known_item" && q["session_id"] == session_id)
        .and_then(|q| q["query"].as_str()?.split(' ').next().map(str::to_owned))
        .unwrap_or_else(|| panic!("no known-item query for {session_id}"))
}

/// Replaces every occurrence of `from` by `to` (same length) in place; returns the count.
pub fn replace_all(bytes: &mut [u8], from: &[u8], to: &[u8]) -> usize {
    assert_eq!(from.len(), to.len());
    let mut n = 0;
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to);
            n += 1;
            i += from.len();
        } else {
            i += 1;
        }
    }
    n
}
