//! Claude Code's on-disk layout: project directories, session files, and sub-agent
//! transcripts in both layouts (`agent-<id>.jsonl` beside the sessions, and
//! `<session>/subagents/agent-<id>.jsonl` with its `.meta.json`).
use super::FORMAT;
use crate::transcript::dir::{Entry, files_in, sorted_entries};
use crate::transcript::lenient::LStr;
use crate::transcript::{Role, SourceFile};
use serde::Deserialize;
use std::path::Path;

/// Whether `path` is a symlink to a directory inside `root` (another project of the same
/// root): its sessions are already indexed under their own project, so it is skipped.
pub(crate) fn links_within(path: &Path, root: &Path) -> bool {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    is_link
        && match (std::fs::canonicalize(path), std::fs::canonicalize(root)) {
            (Ok(target), Ok(root)) => target.starts_with(root),
            _ => false,
        }
}

/// Sub-agent transcripts of one session directory (`<session>/subagents/agent-*.jsonl`).
pub(crate) fn discover_subagents(
    session_dir: &Path,
    group: &str,
    session: &str,
    out: &mut Vec<SourceFile>,
) {
    let sub = session_dir.join("subagents");
    out.extend(files_in(&sub, |p| nested_subagent(p, group, session)));
}

/// Classifies the files of one project directory.
pub(crate) fn discover_project(dir: &Path, group: &str, out: &mut Vec<SourceFile>) {
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
pub(crate) fn subagent_id(parent: Option<&str>, agent_id: &str) -> String {
    match parent {
        Some(p) => format!("{p}/agent-{agent_id}"),
        None => format!("agent-{agent_id}"),
    }
}
