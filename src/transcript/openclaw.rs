//! OpenClaw transcripts (pi session format v3, `~/.openclaw/agents/<agent>/sessions/*.jsonl`):
//! discovery of agents, sessions and pi-style directories, and a resumable line parser.
//!
//! Every line is an entry `{type, id, parentId, timestamp, …}`; `message` entries carry an
//! agent message by `role`. Users' prompts start turns; assistant `text` blocks and `toolCall`
//! blocks fill them. Tool results, thinking, harness housekeeping (heartbeats, memory flushes,
//! `custom_message` context) and the auto-generated "new session" notice are never indexed.
use super::dir::{files_in, session_file, sorted_entries};
use super::lenient::{self, Content, LNum, LStr};
use super::tools::{ToolArgs, kind_of};
use super::{
    Adapter, At, ConvMeta, ConvState, LineError, LineParser, Reader, SourceFile, SummaryRecord,
    TurnBuilder,
};
use crate::util::glob::Glob;
use crate::util::time::parse_iso;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::Xxh3Default;

pub(crate) const FORMAT: &str = "openclaw";

/// The OpenClaw adapter.
pub(crate) struct OpenClaw;

impl Adapter for OpenClaw {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        home.join(".openclaw").join("agents")
    }

    /// Accepts an agents directory (`<agent>/sessions/*.jsonl`), one agent's or one sessions
    /// directory, and pi's `sessions/<cwd>/*.jsonl` layout.
    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let mut out = Vec::new();
        for e in sorted_entries(root) {
            if e.is_dir {
                collect(&e.path, &mut out);
                collect(&e.path.join("sessions"), &mut out);
            } else {
                out.extend(source(&e.path));
            }
        }
        out.sort();
        out
    }

    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        let Ok(rel) = dir.strip_prefix(root) else {
            return Vec::new();
        };
        let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        let mut out = Vec::new();
        match parts.as_slice() {
            [] => return self.discover(root, pattern),
            [_] => {
                collect(dir, &mut out);
                collect(&dir.join("sessions"), &mut out);
            }
            [_, "sessions"] => collect(dir, &mut out),
            _ => {}
        }
        out
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let rel = path.strip_prefix(root).ok()?;
        let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        match parts.as_slice() {
            [_] | [_, _] | [_, "sessions", _] => source(path),
            _ => None,
        }
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(OpenClawParser::new(file)))
    }
}

/// `*.jsonl` files directly in `dir`.
fn collect(dir: &Path, out: &mut Vec<SourceFile>) {
    out.extend(files_in(dir, source));
}

fn source(path: &Path) -> Option<SourceFile> {
    session_file(path, FORMAT, ".jsonl")
}

/// Conversation id: the header's session id, or the file name when it extends that id (topic
/// files `<id>-topic-<thread>.jsonl` share their session's id) or there is no header.
fn conversation_id(stem: &str, header_id: Option<&str>) -> String {
    match header_id {
        Some(h) if !(stem.starts_with(h) && stem.len() > h.len()) => format!("{FORMAT}:{h}"),
        _ => format!("{FORMAT}:{stem}"),
    }
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
    #[serde(borrow, default)]
    cwd: LStr<'a>,
    #[serde(rename = "parentSession", borrow, default)]
    parent_session: LStr<'a>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(borrow, default)]
    summary: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: LStr<'a>,
    #[serde(borrow, default)]
    content: Content<'a, Block<'a>>,
    #[serde(borrow, default)]
    model: LStr<'a>,
    #[serde(default)]
    timestamp: LNum,
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
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

/// Prompts OpenClaw's harness sends on its own (heartbeats, memory flushes, `/new` scaffolds).
fn is_housekeeping(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains("heartbeat_ok")
        || (lower.contains("heartbeat.md")
            && (lower.contains("read heartbeat.md")
                || lower.contains("consider outstanding tasks")))
        || lower.contains("a new session was started via /new")
        || lower.contains("via /new or /reset")
        || lower.starts_with("pre-compaction memory flush")
}

/// Replies that only acknowledge housekeeping.
fn is_ack(text: &str) -> bool {
    matches!(text.trim(), "HEARTBEAT_OK" | "NO_REPLY")
}

/// Model name of OpenClaw's auto-generated "New session started" message.
const SCAFFOLD_MODEL: &str = "delivery-mirror";

/// Resumable parser for one OpenClaw / pi session file.
pub(crate) struct OpenClawParser {
    stem: String,
    header_id: Option<String>,
    turns: TurnBuilder,
    meta: ConvMeta,
    /// A housekeeping prompt was seen: its replies are dropped until the next human prompt.
    housekeeping: bool,
}

impl OpenClawParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        let name = file.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        Self {
            stem: name.strip_suffix(".jsonl").unwrap_or(name).to_owned(),
            header_id: None,
            turns: TurnBuilder::default(),
            meta: ConvMeta::default(),
            housekeeping: false,
        }
    }

    fn header(&mut self, e: &Entry) {
        if self.header_id.is_none() {
            self.header_id = e.id.non_empty().map(str::to_owned);
        }
        if let Some(cwd) = e.cwd.non_empty() {
            self.meta.note_cwd(cwd);
        }
        if let (None, Some(parent)) = (&self.meta.parent_id, e.parent_session.non_empty()) {
            self.meta.parent_id = parent_id(Path::new(parent));
        }
    }

    fn user(&mut self, e: &Entry, m: &Message, at: At) {
        let text = match &m.content {
            Content::Text(t) => t.trim().to_owned(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter(|b| b.kind.as_deref() == Some("text"))
                .filter_map(|b| b.text.non_empty())
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        if text.is_empty() {
            self.turns.touch(at.timestamp);
            return;
        }
        if is_housekeeping(&text) {
            self.housekeeping = true;
            return;
        }
        self.housekeeping = false;
        if self.meta.first_prompt.is_none() {
            self.meta.first_prompt = Some(text.clone());
        }
        let dup_key = e.id.non_empty().map(|id| {
            let mut h = Xxh3Default::new();
            h.update(id.as_bytes());
            h.update(b"\0");
            h.update(e.timestamp.as_deref().unwrap_or("").as_bytes());
            h.digest()
        });
        self.turns.prompt(At { dup_key, ..at }, text);
    }

    fn assistant(&mut self, m: &Message, at: At) {
        if self.housekeeping || m.model.as_deref() == Some(SCAFFOLD_MODEL) {
            return;
        }
        let blocks = match &m.content {
            Content::Text(t) => {
                if !is_ack(t) {
                    self.turns.assistant_text(at, None, t);
                }
                return;
            }
            Content::Blocks(blocks) => blocks,
            _ => return,
        };
        for b in blocks {
            match b.kind.as_deref() {
                Some("text") => {
                    if let Some(t) = b.text.as_deref().filter(|t| !is_ack(t)) {
                        self.turns.assistant_text(at, None, t);
                    }
                }
                Some("toolCall" | "tool_call" | "toolUse" | "tool_use") => {
                    let name = b.name.non_empty().unwrap_or("unknown");
                    let raw = b.arguments.or(b.input);
                    // arguments are an object, or (some providers) JSON in a string
                    let args_text = raw.and_then(lenient::string);
                    let args = match &args_text {
                        Some(s) => ToolArgs::from_json(s),
                        None => ToolArgs::from_raw(raw),
                    };
                    let id = b.id.non_empty().map(str::to_owned);
                    for call in args.into_calls(id, name, kind_of(name)) {
                        self.turns.tool_call(at, call);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The conversation id of a parent session file named by a header's `parentSession`.
fn parent_id(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let header = std::fs::File::open(path).ok().and_then(|f| {
        let mut line = String::new();
        std::io::BufReader::new(f).read_line(&mut line).ok()?;
        let e: Entry = serde_json::from_str(&line).ok()?;
        e.id.non_empty().map(str::to_owned)
    });
    Some(conversation_id(stem, header.as_deref()))
}

impl OpenClawParser {
    /// One non-blank line; `line` may be the repaired copy of the line read.
    fn record(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        let text = std::str::from_utf8(line).map_err(|_| LineError::Utf8)?;
        let e: Entry = serde_json::from_str(text).map_err(|e| LineError::Json(e.to_string()))?;
        let Some(kind) = e.kind.as_deref() else {
            return Err(LineError::NoType);
        };
        let message_ts = e.message.as_ref().and_then(|m| m.timestamp.0);
        let timestamp = e.timestamp.as_deref().and_then(parse_iso).or(message_ts);
        self.meta.note_timestamp(timestamp);
        let at = At {
            offset,
            timestamp,
            dup_key: None,
        };
        match kind {
            "session" => self.header(&e),
            "message" => {
                let m = e.message.as_ref().ok_or(LineError::NoMessage("message"))?;
                match m.role.as_deref() {
                    Some("user") => self.user(&e, m, at),
                    Some("assistant") => self.assistant(m, at),
                    _ => self.turns.touch(timestamp),
                }
            }
            "compaction" => {
                if let Some(s) = e.summary.non_empty() {
                    self.meta.summaries.push(SummaryRecord {
                        text: s.to_owned(),
                        leaf: None,
                        leaf_in_file: false,
                    });
                }
            }
            "session_info" => {
                if let Some(n) = e.name.non_empty() {
                    self.meta.ai_title = Some(n.to_owned());
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl LineParser for OpenClawParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        lenient::retry_repaired(line, |l| self.record(offset, l))
    }

    fn drain(&mut self) -> Vec<ConvState> {
        vec![ConvState {
            id: conversation_id(&self.stem, self.header_id.as_deref()),
            meta: self.meta.clone(),
            completed: self.turns.take_completed(),
            open: self.turns.open_turn(),
            turn_count: self.turns.turn_count(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_housekeeping() {
        assert_eq!(conversation_id("abc", Some("abc")), "openclaw:abc");
        assert_eq!(
            conversation_id("abc-topic-7", Some("abc")),
            "openclaw:abc-topic-7"
        );
        assert_eq!(conversation_id("2026_x", Some("x")), "openclaw:x");
        assert_eq!(conversation_id("s", None), "openclaw:s");
        assert!(is_housekeeping(
            "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. If nothing needs attention, reply HEARTBEAT_OK."
        ));
        assert!(!is_housekeeping("Fix the heartbeat timer in server.rs"));
    }
}
