//! Crush sessions: the SQLite database Crush keeps in each project (`<project>/.crush/crush.db`;
//! there is no central location, so the source is a directory to search:
//! `--source crush:DIR`), read with our own read-only SQLite reader as one unit.
//!
//! Tables `sessions (id, parent_session_id, title, created_at, summary_message_id, …)` and
//! `messages (id, session_id, role, parts, created_at, is_summary_message, …)`; `parts` is a
//! list of `{type, data}`: `text {text}`, `reasoning`, `tool_call {id, name, input}` (input is
//! JSON in a string; older writers stored an object), `tool_result`, `finish`, `image_url`,
//! `binary`, `shell_command {command}`. Tool results are `tool` messages and are never indexed,
//! nor is reasoning; a summary message (`is_summary_message`) is the session's summary, not a
//! turn. Times are epoch seconds (the schema says milliseconds; both are read). Session ids are
//! `crush:<id>`; `parent_session_id` links sub-agent sessions to their parent; the project is
//! the directory holding `.crush`.
use super::dir::{sorted_entries, walk_sorted};
use super::lenient::{LStr, Shape, shape};
use super::reread::{Reported, by_conversation};
use super::sqlite::{Database, Table, sessions_and_messages, side_path};
use super::tools::{ToolCall, ToolKind, calls_of};
use super::{
    Adapter, At, ConvMeta, ConvState, Reader, Role, SourceFile, SummaryRecord, TurnBuilder,
    UnitRead, UnitReader,
};
use crate::util::glob::Glob;
use crate::util::time::epoch_ms;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) const FORMAT: &str = "crush";

const DB: &str = "crush.db";
const DATA_DIR: &str = ".crush";
/// How deep below the source directory databases are looked for.
const MAX_DEPTH: usize = 6;
/// Directories never searched: dependencies and build output.
const SKIP: &[&str] = &[
    "node_modules",
    "target",
    "vendor",
    "venv",
    "__pycache__",
    "dist",
];

/// The Crush adapter.
pub(crate) struct Crush;

impl Adapter for Crush {
    fn name(&self) -> &'static str {
        FORMAT
    }

    /// Unused: see [`Adapter::default_roots`].
    fn default_root(&self, home: &Path) -> PathBuf {
        home.to_owned()
    }

    fn default_roots(&self, _home: &Path) -> Result<Vec<PathBuf>, &'static str> {
        Err(
            "crush keeps a database in each project (`.crush/crush.db`) and has no central location",
        )
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        walk_sorted(root, root, walk)
    }

    fn discover_under(&self, root: &Path, _pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        walk_sorted(root, dir, walk)
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let depth = path.strip_prefix(root).ok()?.iter().count();
        (depth <= MAX_DEPTH + 2 && path.is_file()).then(|| source(path))?
    }

    /// The database's `-wal`, `-shm` or `-journal` → the database.
    fn transcript_for(&self, path: &Path) -> Option<PathBuf> {
        let name = path.file_name()?.to_str()?;
        ["-wal", "-shm", "-journal"]
            .iter()
            .find_map(|s| name.strip_suffix(s).filter(|n| *n == DB))
            .map(|db| path.with_file_name(db))
    }

    fn reader(&self, _file: &SourceFile) -> Reader {
        Reader::Unit(Box::<CrushReader>::default())
    }
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<SourceFile>) {
    for e in sorted_entries(dir) {
        let searched =
            e.name == DATA_DIR || !(e.name.starts_with('.') || SKIP.contains(&e.name.as_str()));
        if !e.is_dir {
            out.extend(source(&e.path));
        } else if depth < MAX_DEPTH + 1 && searched {
            walk(&e.path, depth + 1, out);
        }
    }
}

/// The project a database belongs to: the directory holding its `.crush`, else its own.
fn project_dir(db: &Path) -> Option<&Path> {
    let dir = db.parent()?;
    match dir.file_name()? == DATA_DIR {
        true => dir.parent(),
        false => Some(dir),
    }
}

fn source(path: &Path) -> Option<SourceFile> {
    if path.file_name()? != DB {
        return None;
    }
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: project_dir(path)?.file_name()?.to_str().map(str::to_owned),
        role: Role::Session { id: DB.to_owned() },
    })
}

struct Session {
    id: String,
    parent: Option<String>,
    title: Option<String>,
    created: Option<i64>,
}

struct Message {
    session: String,
    role: Option<String>,
    parts: String,
    created: Option<i64>,
    summary: bool,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    data: Option<Data<'a>>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    command: LStr<'a>,
}

/// Texts and tool calls of a message's parts.
fn contents(parts: &str) -> (Vec<String>, Vec<ToolCall>) {
    let parts: Vec<Part> = serde_json::from_str(parts).unwrap_or_default();
    let (mut texts, mut calls) = (Vec::new(), Vec::new());
    for p in parts {
        let Some(d) = p.data else { continue };
        match p.kind.as_deref() {
            Some("text") => texts.extend(d.text.non_empty().map(|t| t.trim().to_owned())),
            Some("tool_call") => {
                let name = d.name.non_empty().unwrap_or("unknown");
                let input = d
                    .input
                    .filter(|i| matches!(shape(i), Shape::Object | Shape::String));
                calls.extend(calls_of(d.id.non_empty().map(str::to_owned), name, input));
            }
            Some("shell_command") => calls.push(ToolCall {
                name: "shell_command".to_owned(),
                kind: ToolKind::Shell,
                command: d.command.non_empty().map(str::to_owned),
                ..ToolCall::default()
            }),
            _ => {}
        }
    }
    (texts, calls)
}

fn conversation(s: &Session, cwd: Option<&str>, messages: &[&Message]) -> ConvState {
    let created = s.created.and_then(epoch_ms);
    let mut meta = ConvMeta {
        recorded_session_id: Some(s.id.clone()),
        cwd: cwd.map(str::to_owned),
        ai_title: s.title.clone().filter(|t| !t.trim().is_empty()),
        created_ts: created,
        parent_id: s.parent.as_ref().map(|p| format!("{FORMAT}:{p}")),
        ..ConvMeta::default()
    };
    meta.note_timestamp(created);
    let mut turns = TurnBuilder::default();
    for (i, m) in messages.iter().enumerate() {
        let timestamp = m.created.and_then(epoch_ms);
        meta.note_timestamp(timestamp);
        let at = At {
            offset: i as u64,
            timestamp,
            dup_key: None,
        };
        let (texts, calls) = contents(&m.parts);
        match m.role.as_deref() {
            _ if m.summary => meta.summaries.push(SummaryRecord {
                text: texts.join("\n"),
                ..SummaryRecord::default()
            }),
            Some("user") if !texts.is_empty() => {
                let text = texts.join("\n");
                meta.first_prompt.get_or_insert_with(|| text.clone());
                turns.prompt(at, text);
            }
            Some("assistant") => {
                for t in &texts {
                    turns.assistant_text(at, None, t);
                }
                for c in calls {
                    turns.tool_call(at, c);
                }
            }
            _ => turns.touch(timestamp),
        }
    }
    ConvState::finished(format!("{FORMAT}:{}", s.id), meta, turns)
}

fn sessions(db: &Database, t: &Table) -> io::Result<Vec<Session>> {
    let c = |n: &str| t.column(n);
    let mut out = Vec::new();
    db.scan(t, |r| {
        if let Some(id) = r.text(c("id"))? {
            out.push(Session {
                id,
                parent: r.text(c("parent_session_id"))?.filter(|p| !p.is_empty()),
                title: r.text(c("title"))?,
                created: r.int(c("created_at"))?,
            });
        }
        Ok(())
    })?;
    Ok(out)
}

fn messages(db: &Database, t: &Table) -> io::Result<Vec<Message>> {
    let c = |n: &str| t.column(n);
    let mut out = Vec::new();
    db.scan(t, |r| {
        let (Some(session), Some(parts)) = (r.text(c("session_id"))?, r.text(c("parts"))?) else {
            return Ok(());
        };
        out.push(Message {
            session,
            role: r.text(c("role"))?,
            parts,
            created: r.int(c("created_at"))?,
            summary: r.int(c("is_summary_message"))?.unwrap_or(0) != 0,
        });
        Ok(())
    })?;
    // by creation time; rows of one second keep their insertion (rowid) order
    out.sort_by_key(|m| m.created.and_then(epoch_ms).unwrap_or(i64::MAX));
    Ok(out)
}

/// Reads the database whole on every change and reports the sessions whose conversation
/// changed.
#[derive(Default)]
pub(crate) struct CrushReader {
    reported: Reported,
}

impl UnitReader for CrushReader {
    fn read(&mut self, file: &SourceFile) -> io::Result<UnitRead> {
        let convs =
            sessions_and_messages(&file.path, sessions, messages).map(|(sessions, messages)| {
                let by_session = by_conversation(&messages, |m| &m.session);
                let cwd = project_dir(&file.path).and_then(Path::to_str);
                sessions
                    .iter()
                    .map(|s| conversation(s, cwd, by_session.get(s.id.as_str()).map_or(&[], |v| v)))
                    .collect()
            });
        self.reported.read(convs)
    }

    fn stamp_paths(&self, file: &SourceFile) -> Vec<PathBuf> {
        vec![file.path.clone(), side_path(&file.path, "-wal")]
    }
}
