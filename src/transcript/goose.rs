//! Goose sessions (`$XDG_DATA_HOME/goose/sessions/sessions.db`, default
//! `~/.local/share/goose/sessions`): the SQLite database of Goose 1.20+, read with our own
//! read-only SQLite reader as one unit holding every session.
//!
//! Tables `sessions (id, name, user_set_name, working_dir, created_at, parent_session_id, …)`
//! and `messages (id, session_id, role, content_json, created_timestamp, metadata_json, …)`.
//! `content_json` is a list of `{type:"text", text}`, `{type:"thinking"}`,
//! `{type:"toolRequest", id, toolCall:{status, value:{name, arguments}}}` (older writers:
//! `toolCall:{name, arguments}`) and `{type:"toolResponse"}` items; tool responses sit in
//! `user` (or `tool`) messages and are never indexed, nor is thinking, nor any message marked
//! `metadata_json.userVisible: false` (agent-only text such as compaction summaries). Session
//! ids are `goose:<id>`; `parent_session_id` links sub-agent sessions to their parent. The
//! legacy per-session `.jsonl` files of older Goose releases are not read.
use super::dir::sorted_entries;
use super::lenient::{self, LBool, LStr};
use super::reread::{Reported, by_conversation};
use super::sqlite::{Database, Table, sessions_and_messages, side_path};
use super::tools::{ToolArgs, ToolCall, ToolKind, calls_of};
use super::{
    Adapter, At, ConvMeta, ConvState, Reader, Role, SourceFile, TurnBuilder, UnitRead, UnitReader,
};
use crate::util::glob::Glob;
use crate::util::time::{epoch_ms, parse_iso};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) const FORMAT: &str = "goose";

const DB: &str = "sessions.db";

/// The Goose adapter.
pub(crate) struct Goose;

impl Adapter for Goose {
    fn name(&self) -> &'static str {
        FORMAT
    }

    /// `$XDG_DATA_HOME/goose/sessions` when that is set (as Goose itself does), else
    /// `~/.local/share/goose/sessions`.
    fn default_root(&self, home: &Path) -> PathBuf {
        let data = match std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
            Some(d) if d.is_absolute() => d,
            _ => home.join(".local").join("share"),
        };
        data.join("goose").join("sessions")
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let dbs = sorted_entries(root)
            .into_iter()
            .filter(|e| !e.is_dir && e.name == DB);
        dbs.map(|e| unit(e.path)).collect()
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let is_db = path.parent()? == root && path.file_name()? == DB;
        (is_db && path.is_file()).then(|| unit(path.to_owned()))
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
        Reader::Unit(Box::<GooseReader>::default())
    }
}

fn unit(path: PathBuf) -> SourceFile {
    SourceFile {
        path,
        format: FORMAT,
        group: None,
        role: Role::Session { id: DB.to_owned() },
    }
}

/// A session row.
#[derive(Default, Clone)]
struct Session {
    id: String,
    name: Option<String>,
    user_set_name: bool,
    description: Option<String>,
    working_dir: Option<String>,
    created_at: Option<String>,
    parent: Option<String>,
}

/// A message row, undecoded.
struct Row {
    session: String,
    role: Option<String>,
    content: String,
    created: Option<i64>,
    metadata: Option<String>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(rename = "toolCall", borrow, default)]
    tool_call: Option<ToolCallRecord<'a>>,
}

#[derive(Deserialize)]
struct ToolCallRecord<'a> {
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    value: Option<Box<ToolCallRecord<'a>>>,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(rename = "userVisible", default = "visible")]
    user_visible: LBool,
}

fn visible() -> LBool {
    LBool(true)
}

/// A Goose tool call: extension tools are `<extension>__<tool>`; the developer extension's
/// `text_editor` reads, writes or edits by its `command` argument.
fn tool_calls(id: Option<String>, record: &ToolCallRecord) -> Vec<ToolCall> {
    let call = record.value.as_deref().unwrap_or(record);
    let name = call.name.non_empty().unwrap_or("unknown");
    let tool = name.rsplit("__").next().unwrap_or(name);
    if tool != "text_editor" {
        let mut calls = calls_of(id, tool, call.arguments);
        calls.iter_mut().for_each(|c| c.name = name.to_owned());
        return calls;
    }
    #[derive(Deserialize, Default)]
    struct Editor<'a> {
        #[serde(borrow, default)]
        command: LStr<'a>,
    }
    let editor: Editor = call.arguments.and_then(lenient::parse).unwrap_or_default();
    let kind = match editor.command.as_deref() {
        Some("view") => ToolKind::Read,
        Some("write" | "create") => ToolKind::Write,
        Some(_) => ToolKind::Edit,
        None => ToolKind::Other,
    };
    ToolArgs::from_raw(call.arguments).into_calls(id, name, kind)
}

/// One session's conversation from its rows (in order).
fn conversation(s: &Session, rows: &[&Row]) -> ConvState {
    let created = s.created_at.as_deref().and_then(parse_iso);
    let title = s.name.clone().filter(|n| !n.trim().is_empty());
    let mut meta = ConvMeta {
        recorded_session_id: Some(s.id.clone()),
        cwd: s.working_dir.clone().filter(|d| !d.is_empty()),
        created_ts: created,
        parent_id: s.parent.as_ref().map(|p| format!("{FORMAT}:{p}")),
        ..ConvMeta::default()
    };
    match (title, s.user_set_name) {
        (Some(t), true) => meta.custom_title = Some(t),
        (Some(t), false) => meta.ai_title = Some(t),
        (None, _) => meta.ai_title = s.description.clone().filter(|d| !d.trim().is_empty()),
    }
    meta.note_timestamp(created);
    let mut turns = TurnBuilder::default();
    for (i, r) in rows.iter().enumerate() {
        let timestamp = r.created.and_then(epoch_ms);
        meta.note_timestamp(timestamp);
        let at = At {
            offset: i as u64,
            timestamp,
            dup_key: None,
        };
        let shown = r
            .metadata
            .as_deref()
            .and_then(|m| serde_json::from_str(m).ok());
        let shown: Metadata = shown.unwrap_or(Metadata {
            user_visible: visible(),
        });
        let items: Vec<Item> = serde_json::from_str(&r.content).unwrap_or_default();
        if !shown.user_visible.0 {
            turns.touch(timestamp);
            continue;
        }
        let texts: Vec<&str> = items
            .iter()
            .filter(|i| i.kind.as_deref() == Some("text"))
            .filter_map(|i| i.text.non_empty())
            .map(str::trim)
            .collect();
        match r.role.as_deref() {
            Some("user") if !texts.is_empty() => {
                let text = texts.join("\n");
                meta.first_prompt.get_or_insert_with(|| text.clone());
                turns.prompt(at, text);
            }
            Some("assistant") => {
                for t in texts {
                    turns.assistant_text(at, None, t);
                }
                for item in items
                    .iter()
                    .filter(|i| i.kind.as_deref() == Some("toolRequest"))
                {
                    let Some(tc) = &item.tool_call else { continue };
                    for call in tool_calls(item.id.non_empty().map(str::to_owned), tc) {
                        turns.tool_call(at, call);
                    }
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
        let Some(id) = r.text(c("id"))? else {
            return Ok(());
        };
        out.push(Session {
            id,
            name: r.text(c("name"))?,
            user_set_name: r.int(c("user_set_name"))?.unwrap_or(0) != 0,
            description: r.text(c("description"))?,
            working_dir: r.text(c("working_dir"))?,
            created_at: r.text(c("created_at"))?,
            parent: r.text(c("parent_session_id"))?.filter(|p| !p.is_empty()),
        });
        Ok(())
    })?;
    Ok(out)
}

fn messages(db: &Database, t: &Table) -> io::Result<Vec<Row>> {
    let c = |n: &str| t.column(n);
    let mut out = Vec::new();
    db.scan(t, |r| {
        let (Some(session), Some(content)) = (r.text(c("session_id"))?, r.text(c("content_json"))?)
        else {
            return Ok(());
        };
        out.push(Row {
            session,
            role: r.text(c("role"))?,
            content,
            created: r.int(c("created_timestamp"))?,
            metadata: r.text(c("metadata_json"))?,
        });
        Ok(())
    })?;
    Ok(out)
}

/// Reads the database whole on every change and reports the sessions whose conversation
/// changed.
#[derive(Default)]
pub(crate) struct GooseReader {
    reported: Reported,
}

impl GooseReader {
    fn conversations(file: &SourceFile) -> io::Result<Vec<ConvState>> {
        let (sessions, rows) = sessions_and_messages(&file.path, sessions, messages)?;
        let by_session = by_conversation(&rows, |r| &r.session);
        Ok(sessions
            .iter()
            .map(|s| conversation(s, by_session.get(s.id.as_str()).map_or(&[], |v| v)))
            .collect())
    }
}

impl UnitReader for GooseReader {
    fn read(&mut self, file: &SourceFile) -> io::Result<UnitRead> {
        self.reported.read(Self::conversations(file))
    }

    fn stamp_paths(&self, file: &SourceFile) -> Vec<PathBuf> {
        vec![file.path.clone(), side_path(&file.path, "-wal")]
    }
}
