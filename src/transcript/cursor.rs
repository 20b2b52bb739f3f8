//! Cursor agent transcripts (the `cursor-agent` CLI and the app's agent):
//! `~/.cursor/projects/<workspace>/agent-transcripts/<id>/<id>.jsonl` (older: `<id>.jsonl`),
//! sub-agents in `<id>/subagents/<child>.jsonl`; discovery and a resumable line parser.
//!
//! Lines are `{role, message: {content: [blocks]}}` with no ids, timestamps or metadata; a
//! roleless `{"type":"turn_ended"}` line ends a turn. The human's words are the inside of the
//! `<user_query>` wrapper; user lines holding tool results are not prompts. Assistant `text`
//! blocks are the reply (reasoning is written as a literal `[REDACTED]`, dropped), `tool_use`
//! blocks the calls. The workspace directory name encodes its path lossily (`/` and `.` become
//! `-`), so the working directory is the ancestor of a path the agent used whose encoding is the
//! workspace name; the title and creation time come from `~/.cursor/chats/*/<id>/store.db`.
use super::dir::sorted_entries;
use super::lenient::{self, Content, LStr, LTime};
use super::sqlite::Database;
use super::tools::{ToolArgs, kind_of, patch_calls};
use super::{
    Adapter, At, ConvMeta, ConvState, LineError, LineParser, Reader, Role, SourceFile, ToolCall,
    ToolKind, TurnBuilder,
};
use crate::util::glob::Glob;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

pub(crate) const FORMAT: &str = "cursor";

const TRANSCRIPTS: &str = "agent-transcripts";

/// The Cursor agent adapter.
pub(crate) struct Cursor;

impl Adapter for Cursor {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        home.join(".cursor").join("projects")
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let mut out = Vec::new();
        for ws in sorted_entries(root).into_iter().filter(|e| e.is_dir) {
            discover_workspace(&ws.path.join(TRANSCRIPTS), &mut out);
        }
        out.sort();
        out
    }

    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        let Ok(rel) = dir.strip_prefix(root) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        match rel.iter().next() {
            None => return self.discover(root, pattern),
            Some(ws) => discover_workspace(&root.join(ws).join(TRANSCRIPTS), &mut out),
        }
        out.retain(|f| f.path.starts_with(dir));
        out
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let rel = path.strip_prefix(root).ok()?;
        let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        match parts.as_slice() {
            [_, TRANSCRIPTS, name] => flat(path, name),
            [_, TRANSCRIPTS, id, name] if name.strip_suffix(".jsonl") == Some(id) => nested(path),
            [_, TRANSCRIPTS, parent, "subagents", name] => subagent(path, parent, name),
            _ => None,
        }
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(CursorParser::new(file)))
    }
}

/// Sessions of one `agent-transcripts` directory, both nestings, and their sub-agents.
fn discover_workspace(dir: &Path, out: &mut Vec<SourceFile>) {
    for e in sorted_entries(dir) {
        if !e.is_dir {
            out.extend(flat(&e.path, &e.name));
            continue;
        }
        out.extend(nested(&e.path.join(format!("{}.jsonl", e.name))));
        for s in sorted_entries(&e.path.join("subagents")) {
            out.extend(subagent(&s.path, &e.name, &s.name));
        }
    }
}

/// The workspace directory name of a file under `<workspace>/agent-transcripts/`.
fn workspace_of(path: &Path) -> Option<String> {
    let mut dir = path.parent()?;
    while dir.file_name()? != TRANSCRIPTS {
        dir = dir.parent()?;
    }
    dir.parent()?.file_name()?.to_str().map(str::to_owned)
}

fn session(path: &Path, id: &str) -> Option<SourceFile> {
    (!id.is_empty()).then(|| SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: workspace_of(path),
        role: Role::Session {
            id: format!("{FORMAT}:{id}"),
        },
    })
}

/// `agent-transcripts/<id>.jsonl`, unless the nested `<id>/<id>.jsonl` exists.
fn flat(path: &Path, name: &str) -> Option<SourceFile> {
    let id = name.strip_suffix(".jsonl")?;
    let nested = path.with_extension("").join(name);
    if nested.is_file() {
        return None;
    }
    session(path, id)
}

fn nested(path: &Path) -> Option<SourceFile> {
    path.is_file().then_some(())?;
    session(path, path.file_stem()?.to_str()?)
}

fn subagent(path: &Path, parent: &str, name: &str) -> Option<SourceFile> {
    let child = name.strip_suffix(".jsonl").filter(|c| !c.is_empty())?;
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: workspace_of(path),
        role: Role::Subagent {
            agent_id: child.to_owned(),
            parent: Some(format!("{FORMAT}:{parent}")),
            agent_type: None,
            description: None,
        },
    })
}

/// How Cursor names a workspace directory: the absolute path with `/` and `.` as `-`.
fn encode_workspace(path: &str) -> String {
    path.trim_start_matches('/')
        .replace(['/', '.', '\\', ':'], "-")
}

/// The title and creation time (ms) of a session from its chat store
/// (`~/.cursor/chats/<md5(workspace)>/<id>/store.db`, table `meta`, key `0`: hex-encoded JSON).
fn chat_meta(chats: &Path, id: &str) -> Option<(Option<String>, Option<i64>)> {
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, default)]
        name: LStr<'a>,
        #[serde(rename = "createdAt", default)]
        created_at: LTime,
    }
    let store = sorted_entries(chats)
        .into_iter()
        .map(|e| e.path.join(id).join("store.db"))
        .find(|p| p.is_file())?;
    let db = Database::open(&store).ok()?;
    let table = db.table("meta").ok()??;
    let mut hex = None;
    db.scan(&table, |row| {
        if row.text(Some(0))?.as_deref() == Some("0") {
            hex = row.text(Some(1))?;
        }
        Ok(())
    })
    .ok()?;
    let bytes = decode_hex(hex?.trim())?;
    let meta: Meta = serde_json::from_slice(&bytes).ok()?;
    let name = meta.name.non_empty().map(str::to_owned);
    Some((name, meta.created_at.0))
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16);
    (s.len() % 2 == 0).then_some(())?;
    s.as_bytes()
        .chunks_exact(2)
        .map(|p| Some((digit(p[0])? * 16 + digit(p[1])?) as u8))
        .collect()
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    role: LStr<'a>,
    /// `turn_ended` and other roleless markers (also spelled `event`).
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    event: LStr<'a>,
    #[serde(default)]
    timestamp: LTime,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Content<'a, Block<'a>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

/// Arguments Cursor's tools name their own way.
#[derive(Deserialize, Default)]
struct CursorArgs<'a> {
    #[serde(borrow, default)]
    contents: LStr<'a>,
    #[serde(borrow, default)]
    search_term: LStr<'a>,
    #[serde(borrow, default)]
    glob_pattern: LStr<'a>,
    #[serde(borrow, default)]
    target_notebook: LStr<'a>,
    #[serde(borrow, default)]
    target_directory: LStr<'a>,
    #[serde(borrow, default)]
    patch: LStr<'a>,
}

/// What a Cursor tool does, by its name (CLI and app names).
fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Read" | "ReadFile" | "LS" | "ListDir" | "list_dir" => ToolKind::Read,
        "Write" | "CreateFile" => ToolKind::Write,
        "StrReplace" | "Edit" | "MultiEdit" | "ApplyPatch" | "EditNotebook" | "Delete"
        | "DeleteFile" | "search_replace" | "delete_file" => ToolKind::Edit,
        "Shell" | "Terminal" => ToolKind::Shell,
        "Grep" | "Glob" | "SemanticSearch" | "codebase_search" | "grep_search" | "file_search"
        | "glob_file_search" => ToolKind::Search,
        "WebSearch" | "WebFetch" | "FetchUrl" => ToolKind::Web,
        "Task" | "Subagent" => ToolKind::Agent,
        _ => kind_of(name),
    }
}

fn tool_calls(id: Option<String>, name: &str, input: Option<&RawValue>) -> Vec<ToolCall> {
    let extra: CursorArgs = input.and_then(lenient::parse).unwrap_or_default();
    if let Some(patch) = extra
        .patch
        .as_deref()
        .filter(|p| p.contains("*** Begin Patch"))
    {
        return patch_calls(id, name, patch);
    }
    let kind = tool_kind(name);
    let mut calls = ToolArgs::from_raw(input).into_calls(id, name, kind);
    for call in &mut calls {
        let own = |f: &LStr| f.non_empty().map(str::to_owned);
        if kind == ToolKind::Write && call.chars.is_none() {
            call.chars = extra.contents.as_deref().map(|c| c.chars().count() as u64);
        }
        if call.file.is_none() && matches!(kind, ToolKind::Read | ToolKind::Edit) {
            call.file = own(&extra.target_notebook).or(own(&extra.target_directory));
        }
        if kind == ToolKind::Search && call.pattern.is_none() {
            call.pattern = own(&extra.glob_pattern);
        }
        if kind == ToolKind::Web && call.query.is_none() && call.url.is_none() {
            call.query = own(&extra.search_term);
        }
    }
    calls
}

/// The human's words in a user message: inside `<user_query>`, else the whole text unless it
/// is only injected elements (`<…>…</…>`).
fn user_query(text: &str) -> Option<String> {
    let t = text.trim();
    let inner = t
        .split_once("<user_query>")
        .map(|(_, rest)| rest.split("</user_query>").next().unwrap_or(rest));
    let q = match inner {
        Some(q) => q.trim(),
        None if t.starts_with('<') && t.ends_with('>') => return None,
        None => t,
    };
    (!q.is_empty()).then(|| q.to_owned())
}

/// Resumable parser for one Cursor transcript.
pub(crate) struct CursorParser {
    id: String,
    path: PathBuf,
    workspace: Option<String>,
    /// `~/.cursor/chats`, for a session's title (sub-agents have none).
    chats: Option<PathBuf>,
    meta: ConvMeta,
    turns: TurnBuilder,
}

impl CursorParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        let (id, chats) = match &file.role {
            Role::Session { id } => {
                let projects = file.path.ancestors().find(|a| a.ends_with(TRANSCRIPTS));
                let chats =
                    projects.and_then(|t| Some(t.parent()?.parent()?.parent()?.join("chats")));
                (id.clone(), chats)
            }
            Role::Subagent {
                agent_id, parent, ..
            } => {
                let parent = parent.clone().unwrap_or_else(|| FORMAT.to_owned());
                (format!("{parent}/{agent_id}"), None)
            }
        };
        Self {
            id,
            path: file.path.clone(),
            workspace: file.group.clone(),
            chats,
            meta: ConvMeta::default(),
            turns: TurnBuilder::default(),
        }
    }

    fn user(&mut self, blocks: &Content<Block>, at: At) {
        let text = match blocks {
            Content::Text(t) => user_query(t),
            Content::Blocks(b) if !b.iter().any(|b| b.kind.as_deref() == Some("tool_result")) => {
                let texts: Vec<&str> = (b.iter())
                    .filter(|b| b.kind.as_deref() == Some("text"))
                    .filter_map(|b| b.text.as_deref())
                    .collect();
                user_query(&texts.join("\n"))
            }
            _ => None,
        };
        match text {
            Some(text) => {
                self.meta.first_prompt.get_or_insert_with(|| text.clone());
                self.turns.prompt(at, text);
            }
            None => self.turns.touch(at.timestamp),
        }
    }

    fn assistant(&mut self, blocks: &Content<Block>, at: At) {
        let blocks = match blocks {
            Content::Text(t) => return self.text(at, t),
            Content::Blocks(b) => b,
            _ => return,
        };
        for b in blocks {
            match b.kind.as_deref() {
                Some("text") => self.text(at, b.text.as_deref().unwrap_or("")),
                Some("tool_use") => {
                    let name = b.name.non_empty().unwrap_or("unknown");
                    let id = b.id.non_empty().map(str::to_owned);
                    for call in tool_calls(id, name, b.input) {
                        self.note_workspace_path(call.file.as_deref());
                        self.turns.tool_call(at, call);
                    }
                }
                _ => {}
            }
        }
    }

    /// Reply text without the `[REDACTED]` placeholders of reasoning.
    fn text(&mut self, at: At, text: &str) {
        let text = text.replace("[REDACTED]", "");
        self.turns.assistant_text(at, None, text.trim());
    }

    /// The working directory: the ancestor of an absolute path used by a tool whose encoding is
    /// the workspace directory's name.
    fn note_workspace_path(&mut self, file: Option<&str>) {
        let (None, Some(ws), Some(file)) = (&self.meta.cwd, &self.workspace, file) else {
            return;
        };
        let found = Path::new(file)
            .ancestors()
            .filter_map(|a| a.to_str())
            .filter(|a| a.len() > 1)
            .find(|a| encode_workspace(a) == *ws);
        self.meta.cwd = found.map(str::to_owned);
    }
}

impl LineParser for CursorParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let rec: Line = serde_json::from_slice(line).map_err(|e| LineError::Json(e.to_string()))?;
        let timestamp = rec.timestamp.0;
        self.meta.note_timestamp(timestamp);
        let at = At {
            offset,
            timestamp,
            dup_key: None,
        };
        match (rec.role.as_deref(), &rec.message) {
            (Some("user"), Some(m)) => self.user(&m.content, at),
            (Some("assistant"), Some(m)) => self.assistant(&m.content, at),
            (Some(_), _) => self.turns.touch(timestamp),
            (None, _) if rec.kind.as_deref().or(rec.event.as_deref()).is_some() => {
                self.turns.touch(timestamp)
            }
            (None, _) => return Err(LineError::NoType),
        }
        Ok(())
    }

    fn drain(&mut self) -> Vec<ConvState> {
        let mut meta = self.meta.clone();
        let id = self.id.rsplit(':').next().unwrap_or("");
        if let Some((title, created)) = self.chats.as_deref().and_then(|c| chat_meta(c, id)) {
            meta.ai_title = title;
            meta.created_ts = created;
            if meta.first_ts.is_none() {
                meta.note_timestamp(created);
            }
        }
        // no timestamps in the lines: the file's modification time is the last activity
        if meta.last_ts.is_none() || meta.last_ts == meta.created_ts {
            let mtime = std::fs::metadata(&self.path)
                .and_then(|m| m.modified())
                .ok();
            let ms = mtime
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .and_then(|d| i64::try_from(d.as_millis()).ok());
            meta.note_timestamp(ms);
        }
        vec![ConvState {
            id: self.id.clone(),
            meta,
            completed: self.turns.take_completed(),
            open: self.turns.open_turn(),
            turn_count: self.turns.turn_count(),
        }]
    }
}
