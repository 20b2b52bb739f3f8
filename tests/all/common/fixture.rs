//! Typed builder for Claude Code projects trees (`~/.claude/projects` look-alikes) in temp dirs.
//!
//! `ProjectsDir` → `Project` → `SessionWriter` (see `session.rs`); ids and the clock live in
//! `ids.rs` and are re-exported here.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::json;

#[allow(unused_imports)]
pub use super::ids::*;
#[allow(unused_imports)]
pub use super::session::*;

/// A temp dir laid out like `~/.claude/projects`.
pub struct ProjectsDir {
    dir: tempfile::TempDir,
}

impl ProjectsDir {
    pub fn new() -> Self {
        ProjectsDir {
            dir: tempfile::Builder::new()
                .prefix("cs-projects-")
                .tempdir()
                .expect("temp projects dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn path_str(&self) -> &str {
        self.dir.path().to_str().expect("utf-8 temp path")
    }

    /// Creates (if needed) the project directory `dir_name`.
    pub fn project(&self, dir_name: &str) -> Project {
        let dir = self.dir.path().join(dir_name);
        fs::create_dir_all(&dir).expect("create project dir");
        Project {
            dir,
            name: dir_name.to_string(),
        }
    }

    /// Paths, kinds, sizes and mtimes of everything below the root.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, (bool, u64, Option<SystemTime>)> {
        tree_snapshot(self.path())
    }
}

impl Default for ProjectsDir {
    fn default() -> Self {
        Self::new()
    }
}

/// Recursive listing `relative path -> (is_dir, len, mtime)` of a tree.
pub fn tree_snapshot(root: &Path) -> BTreeMap<PathBuf, (bool, u64, Option<SystemTime>)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, (bool, u64, Option<SystemTime>)>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(md) = fs::symlink_metadata(&p) else {
                continue;
            };
            let rel = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
            out.insert(rel, (md.is_dir(), md.len(), md.modified().ok()));
            if md.is_dir() {
                walk(root, &p, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// One project directory.
pub struct Project {
    dir: PathBuf,
    name: String,
}

impl Project {
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// A naive decoding of the directory name used as the default `cwd` of its sessions:
    /// `-home-u-alpha` → `/home/u/alpha`; other names → `/work/<name>`.
    pub fn default_cwd(&self) -> String {
        match self.name.strip_prefix('-') {
            Some(rest) => format!("/{}", rest.replace('-', "/")),
            None => format!("/work/{}", self.name),
        }
    }

    /// `<dir>/<session_id>.jsonl` (created on the first write).
    pub fn session(&self, session_id: &str) -> SessionWriter {
        SessionWriter::new(
            self.dir.join(format!("{session_id}.jsonl")),
            session_id,
            self.default_cwd(),
        )
    }

    /// Old layout: `<dir>/agent-<id>.jsonl` beside the sessions.
    pub fn subagent_flat(&self, agent_id: &str, parent_session_id: &str) -> SessionWriter {
        SessionWriter::new(
            self.dir.join(format!("agent-{agent_id}.jsonl")),
            parent_session_id,
            self.default_cwd(),
        )
        .into_subagent(agent_id)
    }

    /// New layout: `<dir>/<parent>/subagents/agent-<id>.jsonl` (+ `.meta.json` when `meta` is
    /// `Some((agent_type, description))`).
    pub fn subagent_nested(
        &self,
        parent_session_id: &str,
        agent_id: &str,
        meta: Option<(&str, &str)>,
    ) -> SessionWriter {
        let sub = self.dir.join(parent_session_id).join("subagents");
        fs::create_dir_all(&sub).expect("create subagents dir");
        if let Some((agent_type, description)) = meta {
            let m = json!({"agentType": agent_type, "description": description});
            fs::write(
                sub.join(format!("agent-{agent_id}.meta.json")),
                m.to_string(),
            )
            .expect("write meta.json");
        }
        SessionWriter::new(
            sub.join(format!("agent-{agent_id}.jsonl")),
            parent_session_id,
            self.default_cwd(),
        )
        .into_subagent(agent_id)
    }

    /// Writes an arbitrary file below the project dir (parents created).
    pub fn write_file(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let p = self.dir.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).expect("create parent dirs");
        }
        fs::write(&p, bytes).expect("write file");
        p
    }
}
