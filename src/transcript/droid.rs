//! Factory Droid sessions (`~/.factory/sessions/<encoded-cwd>/<session-uuid>.jsonl`, beside a
//! `<session-uuid>.settings.json` that holds only model settings): discovery and a resumable
//! line parser.
//!
//! Line 1 is `{"type":"session_start", id, title, sessionTitle, cwd}`; then `message` records
//! `{id, timestamp, message:{role, content:[blocks]}}` with Anthropic-style blocks, and
//! `todo_state` records (ignored). A user message is a prompt when it has text: only its first
//! text block is what the human typed (the CLI appends the contents of `@file` mentions as
//! further blocks), with `<system-reminder>` elements stripped; a user message of tool results
//! is tool output. Thinking and tool results are never indexed. No git branch is recorded.
use super::blocks::{self, Blocks};
use super::dir::{files_in, session_file, sorted_entries};
use super::lenient::{self, LStr};
use super::markup::strip_elements;
use super::{
    Adapter, At, ConvMeta, ConvState, LineError, LineParser, Reader, Role, SourceFile, TurnBuilder,
};
use crate::util::glob::Glob;
use crate::util::time::parse_iso;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

pub(crate) const FORMAT: &str = "droid";

/// The display title Droid gives a session before it names it.
const UNNAMED: &str = "New Session";

/// The Factory Droid adapter.
pub(crate) struct Droid;

impl Adapter for Droid {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        home.join(".factory").join("sessions")
    }

    /// Sessions in the per-directory folders under `root`, and directly in it.
    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let mut out = Vec::new();
        for e in sorted_entries(root) {
            if e.is_dir {
                collect(&e.path, &mut out);
            } else {
                out.extend(source(&e.path));
            }
        }
        out.sort();
        out
    }

    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        match dir.strip_prefix(root).map(|r| r.iter().count()) {
            Ok(0) => self.discover(root, pattern),
            Ok(1) => {
                let mut out = Vec::new();
                collect(dir, &mut out);
                out
            }
            _ => Vec::new(),
        }
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let depth = path.strip_prefix(root).ok()?.iter().count();
        (1..=2).contains(&depth).then(|| source(path))?
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(DroidParser::new(file)))
    }
}

fn collect(dir: &Path, out: &mut Vec<SourceFile>) {
    out.extend(files_in(dir, source));
}

/// `<id>.jsonl` (not the `.settings.json` beside it).
fn source(path: &Path) -> Option<SourceFile> {
    session_file(path, FORMAT, ".jsonl")
}

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
    #[serde(borrow, default)]
    cwd: LStr<'a>,
    #[serde(rename = "sessionTitle", borrow, default)]
    session_title: LStr<'a>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: LStr<'a>,
    #[serde(borrow, default)]
    content: Blocks<'a>,
}

/// The typed part of a user message: its first text, reminders stripped.
fn typed_prompt(content: &Blocks) -> Option<String> {
    let first = blocks::texts(content).into_iter().next()?;
    let text = strip_elements(first, &["system-reminder"]);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Resumable parser for one Droid session file.
pub(crate) struct DroidParser {
    id: String,
    meta: ConvMeta,
    turns: TurnBuilder,
}

impl DroidParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        let id = match &file.role {
            Role::Session { id } => id.clone(),
            Role::Subagent { agent_id, .. } => format!("{FORMAT}:{agent_id}"),
        };
        Self {
            id,
            meta: ConvMeta::default(),
            turns: TurnBuilder::default(),
        }
    }

    fn session_start(&mut self, r: &Record) {
        if self.meta.recorded_session_id.is_none() {
            if let Some(id) = r.id.non_empty() {
                self.meta.recorded_session_id = Some(id.to_owned());
                self.id = format!("{FORMAT}:{id}");
            }
        }
        if let Some(cwd) = r.cwd.non_empty() {
            self.meta.cwd = Some(cwd.to_owned());
        }
        if let Some(t) = r.session_title.non_empty().filter(|t| *t != UNNAMED) {
            self.meta.ai_title = Some(t.to_owned());
        }
    }

    fn message(&mut self, r: &Record, m: &Message, at: At) {
        match m.role.as_deref() {
            Some("user") if !blocks::is_tool_output(&m.content) => {
                let Some(text) = typed_prompt(&m.content) else {
                    self.turns.touch(at.timestamp);
                    return;
                };
                self.meta.first_prompt.get_or_insert_with(|| text.clone());
                let key = r.id.non_empty().map(|id| {
                    xxh3_64(format!("{id}\0{}", r.timestamp.as_deref().unwrap_or("")).as_bytes())
                });
                self.turns.prompt(At { dup_key: key, ..at }, text);
            }
            Some("assistant") => {
                for t in blocks::texts(&m.content) {
                    self.turns.assistant_text(at, None, t.trim());
                }
                for call in blocks::tool_calls(&m.content) {
                    self.turns.tool_call(at, call);
                }
            }
            _ => self.turns.touch(at.timestamp),
        }
    }
}

impl DroidParser {
    /// One non-blank line; `line` may be the repaired copy of the line read.
    fn record(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        let text = std::str::from_utf8(line).map_err(|_| LineError::Utf8)?;
        let r: Record = serde_json::from_str(text).map_err(|e| LineError::Json(e.to_string()))?;
        let timestamp = r.timestamp.as_deref().and_then(parse_iso);
        self.meta.note_timestamp(timestamp);
        let at = At {
            offset,
            timestamp,
            dup_key: None,
        };
        match r.kind.as_deref() {
            None => return Err(LineError::NoType),
            Some("session_start") => self.session_start(&r),
            Some("message") => {
                let m = r.message.as_ref().ok_or(LineError::NoMessage("message"))?;
                self.message(&r, m, at);
            }
            Some(_) => self.turns.touch(timestamp),
        }
        Ok(())
    }
}

impl LineParser for DroidParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        lenient::retry_repaired(line, |l| self.record(offset, l))
    }

    fn drain(&mut self) -> Vec<ConvState> {
        vec![ConvState {
            id: self.id.clone(),
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
    fn typed_part_of_a_prompt() {
        let c: Blocks = serde_json::from_str(
            r#"[{"type":"text","text":"<system-reminder>\nBe concise.\n</system-reminder>\n\nDo the thing"},
            {"type":"text","text":"Contents of /a.ts (lines 1-2 of 2):\nx"}]"#,
        )
        .unwrap();
        assert_eq!(typed_prompt(&c).as_deref(), Some("Do the thing"));
    }
}
