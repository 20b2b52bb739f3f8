//! Helpers of the durable-store tests: servers and CLI runs sharing one data directory, waits
//! on what the store holds, and transcript trees hashed byte for byte.
use super::fixture::ProjectsDir;
use super::mcp::McpClient;
use super::{poll_until_desc, run_cli};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A projects tree, a data directory and a cache directory that outlive single servers.
pub struct StoreEnv {
    pub projects: ProjectsDir,
    pub data: tempfile::TempDir,
    pub cache: tempfile::TempDir,
}

impl StoreEnv {
    pub fn new() -> Self {
        StoreEnv {
            projects: ProjectsDir::new(),
            data: tempfile::tempdir().expect("temp data dir"),
            cache: tempfile::tempdir().expect("temp cache dir"),
        }
    }

    pub fn data_str(&self) -> &str {
        self.data.path().to_str().expect("utf-8 path")
    }

    /// `--archive` (the default; also checks it is still accepted), `--projects-dir`, `--data-dir`, `--cache-dir`, a short
    /// debounce, then `extra`.
    pub fn args<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let mut a = vec![
            "--archive",
            "--projects-dir",
            self.projects.path_str(),
            "--data-dir",
            self.data_str(),
            "--cache-dir",
            self.cache.path().to_str().expect("utf-8 path"),
            "--debounce-ms",
            "150",
        ];
        a.extend_from_slice(extra);
        a
    }

    /// A server over this environment, its first build done.
    /// Also waits until it has committed what it read (tests stop servers with `kill -9`).
    pub fn serve(&self, extra: &[&str]) -> McpClient {
        let c = McpClient::start(&self.args(extra));
        c.wait_ready();
        wait_committed(&c);
        c
    }

    /// A CLI command against this environment's data directory; its JSON output.
    pub fn cli(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--data-dir", self.data_str()]);
        let out = run_cli(&all, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{all:?}: {:?}\n{stdout}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{all:?}: {e}: {stdout}"))
    }

    /// `store status`.
    pub fn store_status_cli(&self) -> Value {
        self.cli(&["store", "status"])
    }
}

impl Default for StoreEnv {
    fn default() -> Self {
        Self::new()
    }
}

/// How long a store wait may take: generous, since a deadline costs nothing when the condition
/// comes early, and a fully loaded 2-core machine (a parallel suite beside a benchmark) once
/// took past 30 s for a watched file's deletion and restore.
const STORE_WAIT: Duration = Duration::from_secs(90);

/// The `store` section of `index_status`.
pub fn store_status(c: &McpClient) -> Value {
    c.index_status()["store"].clone()
}

/// Waits until the server has no turns left to commit.
pub fn wait_committed(c: &McpClient) -> Value {
    poll_until_desc("store.pending_turns == 0", STORE_WAIT, || {
        let st = store_status(c);
        (st["pending_turns"].as_u64().unwrap_or(0) == 0).then_some(st)
    })
}

/// Waits until the store holds at least `turns` turns (as this server sees it).
pub fn wait_stored(c: &McpClient, turns: u64) -> Value {
    poll_until_desc(&format!("store.turns >= {turns}"), STORE_WAIT, || {
        let st = store_status(c);
        (st["turns"].as_u64().unwrap_or(0) >= turns).then_some(st)
    })
}

/// The `list_conversations` row of a session, if listed.
pub fn listed(c: &McpClient, id: &str) -> Option<Value> {
    c.list(serde_json::json!({"limit": 100}))["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .find(|r| r["session_id"] == id)
        .cloned()
}

/// Waits until a session is listed with `source_present == present`.
pub fn wait_presence(c: &McpClient, id: &str, present: bool) -> Value {
    poll_until_desc(
        &format!("{id} listed with source_present {present}"),
        STORE_WAIT,
        || listed(c, id).filter(|r| r["source_present"] == present),
    )
}

/// Every file under `root` with its bytes (for "unchanged byte for byte").
pub fn tree_bytes(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}
