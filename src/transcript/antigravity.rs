//! Antigravity CLI (`agy`, Gemini CLI's successor) transcripts:
//! `~/.gemini/antigravity-cli/brain/<conversation>/.system_generated/logs/transcript.jsonl`
//! (`transcript_full.jsonl`, when present, is the same log unclipped and is read instead);
//! discovery and a resumable line parser.
//!
//! Every line is a step `{step_index, source, type, status, created_at, content?, thinking?,
//! tool_calls?}`. `USER_INPUT` is the prompt: the text inside `<USER_REQUEST>`, without the
//! `<ADDITIONAL_METADATA>` and `<USER_SETTINGS_CHANGE>` blocks the CLI adds. `PLANNER_RESPONSE`
//! is the reply (`content`; `thinking` is never indexed) with its `tool_calls`, whose argument
//! values are JSON-encoded strings. Tool results (steps typed by tool), system and ephemeral
//! messages, history and checkpoint markers are not indexed. The working directory is not in the
//! transcript: `history.jsonl` beside `brain/` records each conversation's workspace.
use super::dir::sorted_entries;
use super::lenient::{self, LStr, LTime, Shape};
use super::markup::strip_elements;
use super::tools::{ToolArgs, kind_of};
use super::{
    Adapter, At, ConvMeta, ConvState, LineError, LineParser, Reader, Role, SourceFile, ToolCall,
    ToolKind, TurnBuilder,
};
use crate::util::glob::Glob;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) const FORMAT: &str = "antigravity";

/// Transcript names in a conversation's log directory, preferred first.
const TRANSCRIPTS: &[&str] = &["transcript_full.jsonl", "transcript.jsonl"];

/// The Antigravity CLI adapter.
pub(crate) struct Antigravity;

impl Adapter for Antigravity {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        home.join(".gemini").join("antigravity-cli")
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let mut out = Vec::new();
        for e in sorted_entries(&brain_dir(root))
            .into_iter()
            .filter(|e| e.is_dir)
        {
            out.extend(transcript_of(&e.path));
        }
        out.sort();
        out
    }

    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        let brain = brain_dir(root);
        if !dir.starts_with(&brain) && !brain.starts_with(dir) {
            return Vec::new(); // conversations/, implicit/, history.jsonl: no transcripts
        }
        let mut out = match dir.strip_prefix(&brain).ok().and_then(|r| r.iter().next()) {
            Some(id) => transcript_of(&brain.join(id)).into_iter().collect(),
            None => self.discover(root, pattern),
        };
        out.retain(|f| f.path.starts_with(dir));
        out
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let rel = path.strip_prefix(brain_dir(root)).ok()?;
        let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        match parts.as_slice() {
            [id, ".system_generated", "logs", _] => {
                transcript_of(&brain_dir(root).join(id)).filter(|f| f.path == path)
            }
            _ => None,
        }
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(AntigravityParser::new(file)))
    }
}

/// `<root>/brain`, or the root itself when it is the `brain` directory.
fn brain_dir(root: &Path) -> PathBuf {
    match root.file_name().is_some_and(|n| n == "brain") {
        true => root.to_owned(),
        false => root.join("brain"),
    }
}

/// The transcript a conversation directory holds: the preferred name present, else the first
/// other `transcript*.jsonl`.
fn transcript_of(conversation: &Path) -> Option<SourceFile> {
    let logs = conversation.join(".system_generated").join("logs");
    let path = TRANSCRIPTS
        .iter()
        .map(|n| logs.join(n))
        .find(|p| p.is_file())
        .or_else(|| {
            let others = sorted_entries(&logs).into_iter().filter(|e| !e.is_dir);
            others
                .filter(|e| e.name.starts_with("transcript") && e.name.ends_with(".jsonl"))
                .map(|e| e.path)
                .next()
        })?;
    let id = conversation.file_name()?.to_str()?;
    Some(SourceFile {
        path,
        format: FORMAT,
        group: None,
        role: Role::Session {
            id: format!("{FORMAT}:{id}"),
        },
    })
}

/// Workspaces by conversation id from `history.jsonl` (`{conversationId, workspace, …}` per
/// prompt), cached per file state: every transcript of a root reads the same file.
type WorkspaceMap = Arc<FxHashMap<String, String>>;
type HistoryCache = Option<(PathBuf, Option<(u64, std::time::SystemTime)>, WorkspaceMap)>;
static HISTORY: Mutex<HistoryCache> = Mutex::new(None);

fn workspaces(history: &Path) -> WorkspaceMap {
    let stamp = std::fs::metadata(history)
        .ok()
        .and_then(|m| Some((m.len(), m.modified().ok()?)));
    let mut cache = HISTORY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((path, s, map)) = cache.as_ref() {
        if path == history && *s == stamp {
            return Arc::clone(map);
        }
    }
    #[derive(Deserialize)]
    struct Row<'a> {
        #[serde(rename = "conversationId", borrow, default)]
        conversation_id: LStr<'a>,
        #[serde(borrow, default)]
        workspace: LStr<'a>,
    }
    let text = std::fs::read_to_string(history).unwrap_or_default();
    let mut map = FxHashMap::default();
    for row in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Row>(l).ok())
    {
        if let (Some(id), Some(ws)) = (row.conversation_id.non_empty(), row.workspace.non_empty()) {
            let ws = ws.strip_prefix("file://").unwrap_or(ws);
            map.insert(id.to_owned(), ws.to_owned());
        }
    }
    let map = Arc::new(map);
    *cache = Some((history.to_owned(), stamp, Arc::clone(&map)));
    map
}

#[derive(Deserialize)]
struct Step<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(default)]
    created_at: LTime,
    #[serde(borrow, default)]
    content: LStr<'a>,
    #[serde(borrow, default)]
    tool_calls: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// Blocks the CLI adds to a prompt's text.
const INJECTED: &[&str] = &[
    "ADDITIONAL_METADATA",
    "USER_SETTINGS_CHANGE",
    "EPHEMERAL_MESSAGE",
    "SYSTEM_MESSAGE",
];

/// The human's words of a `USER_INPUT` step.
fn user_request(content: &str) -> String {
    if let Some((_, rest)) = content.split_once("<USER_REQUEST>") {
        let inner = rest.split("</USER_REQUEST>").next().unwrap_or(rest);
        return inner.trim().to_owned();
    }
    strip_elements(content, INJECTED).trim().to_owned()
}

/// What an Antigravity tool does, by its name.
fn tool_kind(name: &str) -> ToolKind {
    match name {
        "view_file" | "view_file_outline" | "view_code_item" => ToolKind::Read,
        "write_to_file" => ToolKind::Write,
        "replace_file_content" | "multi_replace_file_content" => ToolKind::Edit,
        "run_command" => ToolKind::Shell,
        "grep_search" | "find_by_name" | "codebase_search" | "search_files" => ToolKind::Search,
        "search_web" | "read_url_content" => ToolKind::Web,
        "invoke_subagent" | "define_subagent" => ToolKind::Agent,
        n if n.starts_with("browser_") => ToolKind::Browser,
        n => kind_of(n),
    }
}

/// The shared argument name for an Antigravity one (`AbsolutePath`, `CommandLine`, …).
fn arg_name(key: &str) -> String {
    match key {
        "AbsolutePath" | "TargetFile" | "FilePath" | "File" => "file_path".to_owned(),
        "DirectoryPath" | "SearchDirectory" | "SearchPath" => "path".to_owned(),
        "CommandLine" => "command".to_owned(),
        "CodeContent" | "ReplacementContent" => "content".to_owned(),
        "SearchQuery" => "query".to_owned(),
        "Url" => "url".to_owned(),
        other => other.to_ascii_lowercase(),
    }
}

/// Arguments with each JSON-encoded value decoded and renamed to the shared spellings.
fn normalise_args(raw: Option<&RawValue>) -> String {
    let map: Map<String, Value> = raw
        .filter(|r| lenient::shape(r) == Shape::Object)
        .and_then(lenient::parse)
        .unwrap_or_default();
    let mut out = Map::new();
    for (k, v) in map {
        let v = match &v {
            Value::String(s) => serde_json::from_str(s).unwrap_or(v),
            _ => v,
        };
        out.entry(arg_name(&k)).or_insert(v);
    }
    Value::Object(out).to_string()
}

fn tool_calls(call: &Call) -> Vec<ToolCall> {
    let name = call.name.non_empty().unwrap_or("unknown");
    let args = normalise_args(call.args.or(call.arguments));
    let id = call.id.non_empty().map(str::to_owned);
    ToolArgs::from_json(&args).into_calls(id, name, tool_kind(name))
}

/// Resumable parser for one Antigravity transcript.
pub(crate) struct AntigravityParser {
    id: String,
    /// `history.jsonl`, where the workspace is looked up until it is found.
    history: Option<PathBuf>,
    meta: ConvMeta,
    turns: TurnBuilder,
}

impl AntigravityParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        let id = match &file.role {
            Role::Session { id } => id.clone(),
            Role::Subagent { agent_id, .. } => format!("{FORMAT}:{agent_id}"),
        };
        // <root>/brain/<id>/.system_generated/logs/<file>: history.jsonl is beside brain/
        let brain = file.path.ancestors().nth(4);
        let mut parser = Self {
            id,
            history: brain.and_then(|b| Some(b.parent()?.join("history.jsonl"))),
            meta: ConvMeta::default(),
            turns: TurnBuilder::default(),
        };
        parser.find_workspace();
        parser
    }

    fn find_workspace(&mut self) {
        if let (None, Some(history)) = (&self.meta.cwd, &self.history) {
            let conversation = self.id.strip_prefix(&format!("{FORMAT}:"));
            let id = conversation.unwrap_or(&self.id);
            self.meta.cwd = workspaces(history).get(id).cloned();
        }
    }
}

impl LineParser for AntigravityParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let step: Step =
            serde_json::from_slice(line).map_err(|e| LineError::Json(e.to_string()))?;
        let kind = step.kind.as_deref().ok_or(LineError::NoType)?;
        let timestamp = step.created_at.0;
        self.meta.note_timestamp(timestamp);
        let at = At {
            offset,
            timestamp,
            dup_key: None,
        };
        match kind {
            "USER_INPUT" => {
                let text = user_request(step.content.as_deref().unwrap_or(""));
                if text.is_empty() {
                    self.turns.touch(timestamp);
                } else {
                    self.meta.first_prompt.get_or_insert_with(|| text.clone());
                    self.turns.prompt(at, text);
                }
            }
            "PLANNER_RESPONSE" => {
                self.turns
                    .assistant_text(at, None, step.content.as_deref().unwrap_or(""));
            }
            _ => self.turns.touch(timestamp),
        }
        let calls: Vec<Call> = step.tool_calls.and_then(lenient::parse).unwrap_or_default();
        for call in calls.iter().flat_map(tool_calls) {
            self.turns.tool_call(at, call);
        }
        Ok(())
    }

    fn drain(&mut self) -> Vec<ConvState> {
        self.find_workspace();
        vec![ConvState {
            id: self.id.clone(),
            meta: self.meta.clone(),
            completed: self.turns.take_completed(),
            open: self.turns.open_turn(),
            turn_count: self.turns.turn_count(),
        }]
    }
}
