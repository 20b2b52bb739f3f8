//! Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, legacy `.json`, sub-agent
//! chats `chats/<parentSessionId>/<sessionId>.jsonl`): discovery and a whole-file reader.
//!
//! A `.jsonl` chat is a log: a changed message is re-appended whole (last wins, first position
//! kept), `{"$set":{…}}` updates metadata (`messages` replaces the history), `{"$rewindTo":id}`
//! drops that message and all after it; so the file is replayed whole on every change. Thoughts,
//! tool results and `info`/`error`/`warning` notices are never indexed. The project root comes
//! from `.project_root` (or `~/.gemini/projects.json`), else the directory names the project.
use super::dir::sorted_entries;
use super::lenient::{self, Content, LStr, Shape};
use super::tools::{ToolArgs, kind_of};
use super::{
    Adapter, At, ConvMeta, ConvState, Reader, Role, SourceFile, ToolCall, TurnBuilder, UnitRead,
    UnitReader,
};
use crate::util::glob::Glob;
use crate::util::time::parse_iso;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

pub(crate) const FORMAT: &str = "gemini";

/// The Gemini CLI adapter.
pub(crate) struct Gemini;

impl Adapter for Gemini {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        home.join(".gemini").join("tmp")
    }

    /// Every project directory's chats; `root` may also be a single project directory.
    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let mut out = Vec::new();
        if root.join("chats").is_dir() {
            discover_project(root, &mut out);
        }
        for e in sorted_entries(root).into_iter().filter(|e| e.is_dir) {
            if e.name != "chats" {
                discover_project(&e.path, &mut out);
            }
        }
        out.sort();
        out
    }

    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        let Ok(rel) = dir.strip_prefix(root) else {
            return Vec::new();
        };
        let project = match rel.iter().next().and_then(|c| c.to_str()) {
            None => return self.discover(root, pattern),
            Some("chats") if root.join("chats").is_dir() => root.to_owned(),
            Some(p) => root.join(p),
        };
        let mut out = Vec::new();
        discover_project(&project, &mut out);
        out.retain(|f| f.path.starts_with(dir));
        out
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let project = project_dir(path).filter(|p| p.starts_with(root))?;
        source(path, &group(&project))
    }

    fn reader(&self, _file: &SourceFile) -> Reader {
        Reader::Unit(Box::new(GeminiReader::default()))
    }
}

/// The chats of one project directory: `chats/session-*.json(l)` (a legacy `.json` only when
/// it was not migrated to `.jsonl`) and sub-agent chats `chats/<parent>/*.jsonl`.
fn discover_project(project: &Path, out: &mut Vec<SourceFile>) {
    let group = group(project);
    for e in sorted_entries(&project.join("chats")) {
        let files = match e.is_dir {
            true => sorted_entries(&e.path)
                .into_iter()
                .filter(|f| !f.is_dir)
                .collect(),
            false => vec![e],
        };
        out.extend(files.iter().filter_map(|f| source(&f.path, &group)));
    }
}

/// The directory name that names the project when its root is unknown.
fn group(project: &Path) -> Option<String> {
    match project_cwd(project) {
        Some(_) => None,
        None => project.file_name()?.to_str().map(str::to_owned),
    }
}

/// The project directory of a chat file: the parent of its `chats` directory.
fn project_dir(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    let chats = if parent.file_name()? == "chats" {
        parent
    } else {
        parent
            .parent()
            .filter(|p| p.file_name() == Some("chats".as_ref()))?
    };
    Some(chats.parent()?.to_owned())
}

fn source(path: &Path, group: &Option<String>) -> Option<SourceFile> {
    let name = path.file_name()?.to_str()?;
    let nested = path.parent()?.file_name()? != "chats";
    let stem = match (name.strip_suffix(".jsonl"), name.strip_suffix(".json")) {
        (Some(s), _) => s,
        // a legacy chat that was migrated lives on as `<name>.jsonl`
        (None, Some(s)) if !nested && !path.with_extension("jsonl").exists() => s,
        _ => return None,
    };
    if stem.is_empty() || (!nested && !stem.starts_with("session-")) {
        return None;
    }
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: group.clone(),
        role: Role::Session {
            id: format!("{FORMAT}:{stem}"),
        },
    })
}

/// The project root recorded for a project directory: its `.project_root` marker, else the
/// registry `~/.gemini/projects.json` (`{"projects": {"<root>": "<project id>"}}`).
fn project_cwd(project: &Path) -> Option<String> {
    if let Ok(root) = std::fs::read_to_string(project.join(".project_root")) {
        let root = root.trim();
        if !root.is_empty() {
            return Some(root.to_owned());
        }
    }
    #[derive(Deserialize)]
    struct Registry {
        #[serde(default)]
        projects: FxHashMap<String, serde_json::Value>,
    }
    let id = project.file_name()?.to_str()?;
    let registry = project.parent()?.parent()?.join("projects.json");
    let reg: Registry = serde_json::from_slice(&std::fs::read(registry).ok()?).ok()?;
    let root = reg.projects.iter().filter(|(_, v)| v.as_str() == Some(id));
    root.map(|(k, _)| k).min().cloned()
}

/// One line of a `.jsonl` chat (or the legacy document), whichever shape it has.
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(rename = "$rewindTo", borrow, default)]
    rewind_to: LStr<'a>,
    #[serde(rename = "$set", borrow, default)]
    set: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LStr<'a>,
    #[serde(rename = "startTime", borrow, default)]
    start_time: LStr<'a>,
    #[serde(rename = "lastUpdated", borrow, default)]
    last_updated: LStr<'a>,
    #[serde(borrow, default)]
    summary: LStr<'a>,
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
}

/// A message record: only what is indexed (tool results and thoughts are skipped unread).
#[derive(Deserialize)]
struct MessageRecord<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(rename = "displayContent", borrow, default)]
    display_content: Option<&'a RawValue>,
    /// Older builds wrote model turns as `{type: "model", parts: […]}`.
    #[serde(borrow, default)]
    parts: Option<&'a RawValue>,
    #[serde(rename = "toolCalls", borrow, default)]
    tool_calls: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ToolCallRecord<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(default)]
    thought: lenient::LBool,
}

/// Kinds of message that matter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Model,
    /// `info`, `error`, `warning` and anything unknown: not indexed.
    Notice,
}

/// A message as the chat currently holds it.
struct Message {
    id: String,
    kind: Kind,
    stamp: String,
    timestamp: Option<i64>,
    text: String,
    tools: Vec<ToolCall>,
}

/// Text of a `PartListUnion`: a string, a part `{text}` or a list of them (thought parts left out).
fn parts_text(raw: Option<&RawValue>) -> String {
    let text = match raw.and_then(lenient::parse::<Content<Part>>) {
        Some(Content::Text(t)) => t.into_owned(),
        Some(Content::Blocks(parts)) => (parts.into_iter())
            .filter(|p| !p.thought.0)
            .filter_map(|p| p.text.into_owned())
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Content::Other) => (raw.and_then(lenient::parse::<Part>))
            .and_then(|p| p.text.into_owned())
            .unwrap_or_default(),
        _ => String::new(),
    };
    // `@file` references expand into the prompt; keep what the user typed
    let typed = text.split("\n--- Content from referenced files ---").next();
    typed.unwrap_or("").trim().to_owned()
}

fn message(raw: &str) -> Option<Message> {
    let m: MessageRecord = serde_json::from_str(raw).ok()?;
    let id = m.id.into_owned()?;
    let kind = match m.kind.as_deref() {
        Some("user") => Kind::User,
        Some("gemini" | "model") => Kind::Model,
        _ => Kind::Notice,
    };
    let text = match kind {
        Kind::User => Some(parts_text(m.display_content))
            .filter(|shown| !shown.is_empty())
            .unwrap_or_else(|| parts_text(m.content.or(m.parts))),
        Kind::Model => parts_text(m.content.or(m.parts)),
        Kind::Notice => String::new(),
    };
    let mut tools = Vec::new();
    if kind == Kind::Model {
        let calls: Vec<&RawValue> = m.tool_calls.and_then(lenient::parse).unwrap_or_default();
        for c in calls
            .into_iter()
            .filter_map(lenient::parse::<ToolCallRecord>)
        {
            let name = c.name.non_empty().unwrap_or("unknown").to_owned();
            let id = c.id.into_owned();
            tools.extend(ToolArgs::from_raw(c.args).into_calls(id, &name, kind_of(&name)));
        }
    }
    let stamp = m.timestamp.as_deref().unwrap_or("").to_owned();
    Some(Message {
        id,
        kind,
        timestamp: parse_iso(&stamp),
        stamp,
        text,
        tools,
    })
}

/// A chat replayed: its messages in order and its metadata.
#[derive(Default)]
struct Chat {
    session_id: Option<String>,
    summary: Option<String>,
    times: Vec<i64>,
    messages: Vec<Message>,
    index: FxHashMap<String, usize>,
    skipped: u64,
}

impl Chat {
    fn upsert(&mut self, m: Message) {
        match self.index.get(&m.id) {
            Some(&i) => self.messages[i] = m,
            None => {
                self.index.insert(m.id.clone(), self.messages.len());
                self.messages.push(m);
            }
        }
    }

    fn replace(&mut self, list: &RawValue) {
        let items: Vec<&RawValue> = lenient::parse(list).unwrap_or_default();
        if items.is_empty() {
            return;
        }
        self.messages.clear();
        self.index.clear();
        for item in items {
            if let Some(m) = message(item.get()) {
                self.upsert(m);
            }
        }
    }

    fn rewind(&mut self, id: &str) {
        let at = self.index.get(id).copied().unwrap_or(0);
        self.messages.truncate(at);
        self.index.retain(|_, &mut i| i < at);
    }

    /// Applies one record; `false` when it is not a JSON object.
    fn apply(&mut self, raw: &str) -> bool {
        let Ok(r) = serde_json::from_str::<Record>(raw) else {
            return false;
        };
        if let Some(target) = r.rewind_to.as_deref() {
            self.rewind(target);
        } else if r.id.as_deref().is_some() {
            if let Some(m) = message(raw) {
                self.upsert(m);
            }
        } else if let Some(set) = r.set.filter(|s| lenient::shape(s) == Shape::Object) {
            self.apply(set.get());
        } else {
            if self.session_id.is_none() {
                self.session_id = r.session_id.non_empty().map(str::to_owned);
            }
            if let Some(s) = r.summary.non_empty() {
                self.summary = Some(s.to_owned());
            }
            for t in [&r.start_time, &r.last_updated] {
                self.times.extend(t.as_deref().and_then(parse_iso));
            }
            if let Some(list) = r.messages {
                self.replace(list);
            }
        }
        true
    }

    /// Reads a `.jsonl` log (or a legacy one-document `.json`).
    fn read(bytes: &[u8]) -> Chat {
        let mut chat = Chat::default();
        let text = String::from_utf8_lossy(bytes);
        if serde_json::from_str::<&RawValue>(&text).is_ok() {
            if !chat.apply(&text) {
                chat.skipped += 1;
            }
            return chat;
        }
        let complete = text.ends_with('\n');
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let partial_tail = i + 1 == lines.len() && !complete;
            if !line.trim().is_empty() && !chat.apply(line) && !partial_tail {
                chat.skipped += 1;
            }
        }
        chat
    }
}

/// Re-reads a chat file whole and reports it when what it indexes changed.
#[derive(Default)]
pub(crate) struct GeminiReader {
    fingerprint: Option<u64>,
}

impl UnitReader for GeminiReader {
    fn read(&mut self, file: &SourceFile) -> std::io::Result<UnitRead> {
        let chat = Chat::read(&std::fs::read(&file.path)?);
        let stem = match &file.role {
            Role::Session { id } => id.clone(),
            Role::Subagent { agent_id, .. } => format!("{FORMAT}:{agent_id}"),
        };
        let id = chat
            .session_id
            .as_ref()
            .map_or(stem, |s| format!("{FORMAT}:{s}"));
        let mut meta = ConvMeta {
            recorded_session_id: chat.session_id.clone(),
            cwd: project_dir(&file.path).and_then(|p| project_cwd(&p)),
            ai_title: chat.summary.clone(),
            ..ConvMeta::default()
        };
        let parent = file
            .path
            .parent()
            .filter(|p| p.file_name() != Some("chats".as_ref()));
        meta.parent_id = parent
            .and_then(|p| p.file_name()?.to_str())
            .map(|p| format!("{FORMAT}:{p}"));
        for &t in &chat.times {
            meta.note_timestamp(Some(t));
        }
        let mut turns = TurnBuilder::default();
        for (i, m) in chat.messages.iter().enumerate() {
            meta.note_timestamp(m.timestamp);
            let at = At {
                offset: i as u64,
                timestamp: m.timestamp,
                dup_key: None,
            };
            match m.kind {
                // a compressed history starts with the summary as a user turn
                Kind::User if m.text.starts_with("<state_snapshot>") => {
                    meta.summaries.push(super::SummaryRecord {
                        text: m.text.clone(),
                        ..Default::default()
                    });
                }
                Kind::User if !m.text.is_empty() => {
                    meta.first_prompt.get_or_insert_with(|| m.text.clone());
                    let key = xxh3_64(format!("{}\0{}", m.id, m.stamp).as_bytes());
                    turns.prompt(
                        At {
                            dup_key: Some(key),
                            ..at
                        },
                        m.text.clone(),
                    );
                }
                Kind::Model => {
                    turns.assistant_text(at, None, &m.text);
                    for t in &m.tools {
                        turns.tool_call(at, t.clone());
                    }
                }
                _ => turns.touch(m.timestamp),
            }
        }
        let completed = turns.finish_all();
        let fingerprint = xxh3_64(format!("{id}{meta:?}{completed:?}").as_bytes());
        let changed = self.fingerprint != Some(fingerprint);
        self.fingerprint = Some(fingerprint);
        let state = ConvState {
            id: id.clone(),
            meta,
            turn_count: completed.len() as u32,
            completed,
            open: None,
        };
        Ok(UnitRead {
            changed: if changed { vec![state] } else { Vec::new() },
            present: vec![id],
            skipped: chat.skipped,
            ..UnitRead::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_upserts_sets_and_rewinds() {
        let log = [
            r#"{"sessionId":"s1","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}"#,
            r#"{"id":"u1","type":"user","content":[{"text":"first"}]}"#,
            r#"{"id":"g1","type":"gemini","content":"draft"}"#,
            r#"{"id":"g1","type":"gemini","content":"final"}"#,
            r#"{"id":"u2","type":"user","content":"second"}"#,
            r#"{"$rewindTo":"u2"}"#,
            r#"{"$set":{"summary":"Title"}}"#,
            "not json",
            r#"{"id":"u3","type":"user","content":"thi"#,
        ];
        let chat = Chat::read(log.join("\n").as_bytes());
        let texts: Vec<&str> = chat.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["first", "final"]);
        assert_eq!(chat.summary.as_deref(), Some("Title"));
        assert_eq!(chat.skipped, 1);
    }
}
