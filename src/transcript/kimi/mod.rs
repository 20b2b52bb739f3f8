//! Kimi CLI (the Python `kimi-cli`, "Kimi Code CLI" up to 1.5x): sessions under
//! `$KIMI_SHARE_DIR` or `~/.kimi` as `sessions/<md5(work dir)>/<session>/wire.jsonl`, sub-agents
//! in `<session>/subagents/<agent>/wire.jsonl`; discovery, the work directory (from `kimi.json`),
//! titles (`state.json`), and the tool names Kimi CLI and Kimi Code share.
//!
//! `wire.jsonl` is the UI event log: it holds every prompt (`TurnBegin`, `SteerInput`), reply,
//! tool call and inline sub-agent event, with timestamps, and is never rotated, so it is what is
//! read. `context.jsonl` (the model's history, rotated on compaction, no timestamps) is read only
//! for sessions that have no wire log (very old versions, also as a flat `<md5>/<session>.jsonl`).
mod wire;

use super::dir::sorted_entries;
use super::lenient::LStr;
use super::tools::{ToolArgs, kind_of};
use super::{Adapter, Reader, Role, SourceFile, ToolCall, ToolKind};
use crate::util::glob::Glob;
use crate::util::md5_hex;
use serde::Deserialize;
use std::path::{Path, PathBuf};
pub(crate) use wire::KimiParser;

pub(crate) const FORMAT: &str = "kimi";

/// The Kimi CLI adapter.
pub(crate) struct Kimi;

impl Adapter for Kimi {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        match std::env::var_os("KIMI_SHARE_DIR").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => home.join(".kimi"),
        }
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let sessions = sessions_dir(root);
        let mut out = Vec::new();
        for wd in sorted_entries(&sessions).into_iter().filter(|e| e.is_dir) {
            discover_workdir(&wd.path, &mut out);
        }
        out.sort();
        out
    }

    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        let sessions = sessions_dir(root);
        let Ok(rel) = dir.strip_prefix(&sessions) else {
            // outside `sessions` (logs, prompt history): nothing, unless `sessions` is inside
            return match sessions.starts_with(dir) {
                true => self.discover(root, pattern),
                false => Vec::new(),
            };
        };
        let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        let mut out = Vec::new();
        match parts.as_slice() {
            [] => return self.discover(root, pattern),
            [wd] => discover_workdir(&sessions.join(wd), &mut out),
            [wd, session, ..] => discover_session(&sessions.join(wd).join(session), &mut out),
        }
        out.retain(|f| f.path.starts_with(dir));
        out.sort();
        out
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let rel = path.strip_prefix(sessions_dir(root)).ok()?;
        let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        match parts.as_slice() {
            [_, file] if !path.with_extension("").is_dir() => legacy_file(path, file),
            [_, _, "wire.jsonl"] => main_file(path),
            [_, _, "context.jsonl"] if !path.with_file_name("wire.jsonl").exists() => {
                main_file(path)
            }
            [_, _, "subagents", _, "wire.jsonl"] => subagent_file(path),
            _ => None,
        }
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(KimiParser::new(file)))
    }
}

/// `<root>/sessions`, or the root itself when it is the `sessions` directory.
fn sessions_dir(root: &Path) -> PathBuf {
    match root.file_name().is_some_and(|n| n == "sessions") {
        true => root.to_owned(),
        false => root.join("sessions"),
    }
}

/// The sessions of one work directory: session directories and legacy flat context files.
fn discover_workdir(wd: &Path, out: &mut Vec<SourceFile>) {
    for e in sorted_entries(wd) {
        if e.is_dir {
            discover_session(&e.path, out);
        } else if !e.path.with_extension("").is_dir() {
            out.extend(legacy_file(&e.path, &e.name));
        }
    }
}

/// A session directory: its wire log (or context file) and its sub-agents' wire logs.
fn discover_session(dir: &Path, out: &mut Vec<SourceFile>) {
    let wire = dir.join("wire.jsonl");
    let context = dir.join("context.jsonl");
    if wire.is_file() {
        out.extend(main_file(&wire));
    } else if context.is_file() {
        out.extend(main_file(&context));
    }
    for agent in sorted_entries(&dir.join("subagents")) {
        let wire = agent.path.join("wire.jsonl");
        if agent.is_dir && wire.is_file() {
            out.extend(subagent_file(&wire));
        }
    }
}

fn name_of(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}

/// The work-directory name a session file belongs to (its group).
fn group_of(session_dir: &Path) -> Option<String> {
    name_of(session_dir.parent()?).map(str::to_owned)
}

fn main_file(path: &Path) -> Option<SourceFile> {
    let session = path.parent()?;
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: group_of(session),
        role: Role::Session {
            id: format!("{FORMAT}:{}", name_of(session)?),
        },
    })
}

/// A pre-1.0 context file `<md5>/<session>.jsonl` beside the session directories.
fn legacy_file(path: &Path, name: &str) -> Option<SourceFile> {
    let stem = name.strip_suffix(".jsonl").filter(|s| !s.is_empty())?;
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: name_of(path.parent()?).map(str::to_owned),
        role: Role::Session {
            id: format!("{FORMAT}:{stem}"),
        },
    })
}

/// `<session>/subagents/<agent>/wire.jsonl`, described by its `meta.json`.
fn subagent_file(path: &Path) -> Option<SourceFile> {
    let agent_dir = path.parent()?;
    let session = agent_dir.parent()?.parent()?;
    #[derive(Deserialize, Default)]
    struct Meta<'a> {
        #[serde(borrow, default)]
        subagent_type: LStr<'a>,
        #[serde(borrow, default)]
        description: LStr<'a>,
    }
    let bytes = std::fs::read(agent_dir.join("meta.json")).unwrap_or_default();
    let meta: Meta = serde_json::from_slice(&bytes).unwrap_or_default();
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: group_of(session),
        role: Role::Subagent {
            agent_id: name_of(agent_dir)?.to_owned(),
            parent: Some(format!("{FORMAT}:{}", name_of(session)?)),
            agent_type: meta.subagent_type.non_empty().map(str::to_owned),
            description: meta.description.non_empty().map(str::to_owned),
        },
    })
}

/// The work directory a `sessions/<md5(path)>` (or `<kaos>_<md5>`) directory stands for, from
/// the share directory's `kimi.json` (`{work_dirs: [{path, kaos}]}`), the only place that maps
/// it back.
fn work_dir(workdir_dir: &Path) -> Option<String> {
    #[derive(Deserialize)]
    struct WorkDir {
        #[serde(default)]
        path: Option<String>,
        #[serde(default)]
        kaos: Option<String>,
    }
    #[derive(Deserialize)]
    struct Metadata {
        #[serde(default)]
        work_dirs: Vec<serde_json::Value>,
    }
    let name = name_of(workdir_dir)?;
    let sessions = workdir_dir.parent()?;
    let share = match name_of(sessions) {
        Some("sessions") => sessions.parent()?,
        _ => sessions,
    };
    let bytes = std::fs::read(share.join("kimi.json")).ok()?;
    let meta: Metadata = serde_json::from_slice(&bytes).ok()?;
    meta.work_dirs
        .into_iter()
        .filter_map(|v| serde_json::from_value::<WorkDir>(v).ok())
        .find_map(|wd| {
            let path = wd.path?;
            let md5 = md5_hex(path.as_bytes());
            let dir = match wd.kaos.as_deref() {
                None | Some("local") => md5,
                Some(kaos) => format!("{kaos}_{md5}"),
            };
            (dir == name).then_some(path)
        })
}

/// A session's title from its `state.json`: (`custom_title`, whether it was generated).
fn state_title(session_dir: &Path) -> Option<(String, bool)> {
    #[derive(Deserialize)]
    struct State {
        #[serde(default)]
        custom_title: Option<String>,
        #[serde(default)]
        title_generated: Option<bool>,
    }
    let bytes = std::fs::read(session_dir.join("state.json")).ok()?;
    let state: State = serde_json::from_slice(&bytes).ok()?;
    let title = state.custom_title.filter(|t| !t.trim().is_empty())?;
    Some((title, state.title_generated.unwrap_or(false)))
}

/// What a Kimi CLI or Kimi Code tool does, by its name.
pub(crate) fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Shell" | "Bash" => ToolKind::Shell,
        "ReadFile" | "ReadMediaFile" | "Read" => ToolKind::Read,
        "WriteFile" | "Write" => ToolKind::Write,
        "StrReplaceFile" | "Edit" | "MultiEdit" => ToolKind::Edit,
        "Glob" | "Grep" => ToolKind::Search,
        "SearchWeb" | "WebSearch" | "FetchURL" => ToolKind::Web,
        "Agent" | "Task" | "CreateSubagent" => ToolKind::Agent,
        _ => kind_of(name),
    }
}

/// The normalised call of a Kimi tool call given its name and arguments (a JSON object, or its
/// text). `Task` names its sub-agent type `subagent_name`.
pub(crate) fn tool_calls(id: Option<String>, name: &str, args: ToolArgs) -> Vec<ToolCall> {
    args.into_calls(id, name, tool_kind(name))
}

/// `subagent_name` of an older `Task` call, the sub-agent type when `subagent_type` is absent.
pub(crate) fn subagent_name(args_json: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Task<'a> {
        #[serde(borrow, default)]
        subagent_name: LStr<'a>,
    }
    let t: Task = serde_json::from_str(args_json).ok()?;
    t.subagent_name.non_empty().map(str::to_owned)
}
