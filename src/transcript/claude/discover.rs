//! Claude Code's on-disk layout: project directories, session files, and sub-agent
//! transcripts in both layouts (`agent-<id>.jsonl` beside the sessions, and
//! `<session>/subagents/agent-<id>.jsonl` with its `.meta.json`).
use super::FORMAT;
use crate::transcript::lenient::LStr;
use crate::transcript::{Role, SourceFile};
use serde::Deserialize;
use std::path::Path;

/// A directory entry: name, path and whether it is a directory (symlinks followed).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub name: String,
    pub path: std::path::PathBuf,
    pub is_dir: bool,
}

/// Whether `path` is a symlink to a directory inside `root` (another project of the same
/// root): its sessions are already indexed under their own project, so it is skipped.
pub fn links_within(path: &Path, root: &Path) -> bool {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    is_link
        && match (std::fs::canonicalize(path), std::fs::canonicalize(root)) {
            (Ok(target), Ok(root)) => target.starts_with(root),
            _ => false,
        }
}

/// The display name of a non-UTF-8 file or directory name (invalid bytes as U+FFFD), with a
/// warning the first time each path is seen.
fn lossy_name(path: &Path, raw: &std::ffi::OsStr) -> String {
    static WARNED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let name = raw.to_string_lossy().into_owned();
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    if !warned.iter().any(|p| p == path) {
        tracing::warn!(
            "`{}` is not a UTF-8 name; indexed as `{name}`",
            path.display()
        );
        warned.push(path.to_owned());
    }
    name
}

/// Directories and regular files of a directory, sorted by name (unreadable directories yield
/// nothing). FIFOs, sockets and devices are left out: opening one could block the indexer.
/// Uses the directory entry's type, so no extra `stat` per file except for symlinks.
pub fn sorted_entries(dir: &Path) -> Vec<Entry> {
    let mut v: Vec<Entry> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            let name = e
                .file_name()
                .into_string()
                .unwrap_or_else(|raw| lossy_name(&path, &raw));
            let ft = e.file_type().ok()?;
            let (is_dir, is_file) = if ft.is_symlink() {
                let m = std::fs::metadata(&path).ok()?;
                (m.is_dir(), m.is_file())
            } else {
                (ft.is_dir(), ft.is_file())
            };
            (is_dir || is_file).then_some(Entry { name, path, is_dir })
        })
        .collect();
    v.sort();
    v
}

/// Sub-agent transcripts of one session directory (`<session>/subagents/agent-*.jsonl`).
pub fn discover_subagents(
    session_dir: &Path,
    group: &str,
    session: &str,
    out: &mut Vec<SourceFile>,
) {
    let sub = session_dir.join("subagents");
    for e in sorted_entries(&sub).into_iter().filter(|e| !e.is_dir) {
        out.extend(nested_subagent(&e.path, group, session));
    }
}

/// Classifies the files of one project directory.
pub fn discover_project(dir: &Path, group: &str, out: &mut Vec<SourceFile>) {
    for Entry { name, path, is_dir } in sorted_entries(dir) {
        if is_dir {
            discover_subagents(&path, group, &name, out);
        } else {
            out.extend(project_file(&path, group, &name));
        }
    }
}

/// A file directly in a project directory: a session, or an old-layout sub-agent
/// (`agent-<id>.jsonl`, parent unknown until its records are read).
pub(super) fn project_file(path: &Path, group: &str, name: &str) -> Option<SourceFile> {
    let stem = name.strip_suffix(".jsonl").filter(|s| !s.is_empty())?;
    let role = match agent_file_id(name) {
        Some(agent_id) => Role::Subagent {
            agent_id: agent_id.to_owned(),
            parent: None,
            agent_type: None,
            description: None,
        },
        None => Role::Session {
            id: stem.to_owned(),
        },
    };
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: Some(group.to_owned()),
        role,
    })
}

/// A new-layout sub-agent transcript `<session>/subagents/agent-<id>.jsonl`, with the type and
/// description of its `.meta.json` when present.
pub(super) fn nested_subagent(path: &Path, group: &str, session: &str) -> Option<SourceFile> {
    let agent_id = agent_file_id(path.file_name()?.to_str()?)?;
    let (agent_type, description) = read_agent_meta(path.parent()?, agent_id);
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: Some(group.to_owned()),
        role: Role::Subagent {
            agent_id: agent_id.to_owned(),
            parent: Some(session.to_owned()),
            agent_type,
            description,
        },
    })
}

/// `agent-<id>.jsonl` → `<id>`.
fn agent_file_id(file_name: &str) -> Option<&str> {
    file_name
        .strip_prefix("agent-")?
        .strip_suffix(".jsonl")
        .filter(|id| !id.is_empty())
}

#[derive(Deserialize)]
struct AgentMeta<'a> {
    #[serde(rename = "agentType", borrow, default)]
    agent_type: LStr<'a>,
    #[serde(borrow, default)]
    description: LStr<'a>,
}

fn read_agent_meta(dir: &Path, agent_id: &str) -> (Option<String>, Option<String>) {
    let Ok(bytes) = std::fs::read(dir.join(format!("agent-{agent_id}.meta.json"))) else {
        return (None, None);
    };
    match serde_json::from_slice::<AgentMeta>(&bytes) {
        Ok(m) => {
            let mut description = m.description.into_owned();
            crate::redact::redact_opt(&mut description);
            (m.agent_type.into_owned(), description)
        }
        Err(_) => (None, None),
    }
}

/// Conversation id of a sub-agent: `<parent session>/agent-<id>`, or `agent-<id>` while the
/// parent is unknown. Session ids are file stems, so neither form can collide with one.
pub fn subagent_id(parent: Option<&str>, agent_id: &str) -> String {
    match parent {
        Some(p) => format!("{p}/agent-{agent_id}"),
        None => format!("agent-{agent_id}"),
    }
}
