//! Aider chat histories (`.aider.chat.history.md`, which aider writes into each repository it
//! runs in; there is no central location, so the source is a directory to search:
//! `--source aider:DIR`): discovery and a resumable parser of the Markdown log.
//!
//! `# aider chat started at YYYY-MM-DD HH:MM:SS` opens a session (one conversation each, id
//! `aider:<file key>-<YYYYMMDD-HHMMSS>`); `#### ` lines are what the human typed (a multi-line
//! prompt is several such lines); `> ` lines are aider's own output (tool output, never indexed;
//! `Applied edit to F`, `Creating empty file F`, `Added F to the chat` and `Running CMD` become
//! tool calls on F or CMD); every other line is the assistant's reply. In-chat commands are not
//! prompts, except those that carry one (`/ask`, `/code`, `/architect`, `/context`). There are
//! no per-message times: turns take their session's start (local time, read as UTC).
use super::dir::{sorted_entries, walk_sorted};
use super::{
    Adapter, At, ConvMeta, ConvState, LineError, LineParser, Reader, Role, SourceFile, ToolCall,
    ToolKind, Turn, TurnBuilder,
};
use crate::util::glob::Glob;
use crate::util::time::parse_iso;
use rustc_hash::FxHashSet;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

pub(crate) const FORMAT: &str = "aider";

/// The file aider writes by default (`--chat-history-file` can name another).
const HISTORY: &str = ".aider.chat.history.md";
/// How deep below the source directory histories are looked for.
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
const HEADER: &str = "# aider chat started at ";
/// Commands whose argument is a prompt.
const PROMPT_COMMANDS: &[&str] = &["/ask", "/code", "/architect", "/context"];

/// The Aider adapter.
pub(crate) struct Aider;

impl Adapter for Aider {
    fn name(&self) -> &'static str {
        FORMAT
    }

    /// Unused: see [`Adapter::default_roots`].
    fn default_root(&self, home: &Path) -> PathBuf {
        home.to_owned()
    }

    fn default_roots(&self, _home: &Path) -> Result<Vec<PathBuf>, &'static str> {
        Err(
            "aider writes `.aider.chat.history.md` into each repository it runs in and has no central location",
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
        (depth <= MAX_DEPTH + 1).then(|| source(path))?
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(AiderParser::new(file)))
    }
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<SourceFile>) {
    for e in sorted_entries(dir) {
        if !e.is_dir {
            out.extend(source(&e.path));
        } else if depth < MAX_DEPTH && !e.name.starts_with('.') && !SKIP.contains(&e.name.as_str())
        {
            walk(&e.path, depth + 1, out);
        }
    }
}

/// A history file; its conversations are its sessions, named by a key of its path.
fn source(path: &Path) -> Option<SourceFile> {
    if path.file_name()? != HISTORY {
        return None;
    }
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: path.parent()?.file_name()?.to_str().map(str::to_owned),
        role: Role::Session {
            id: format!("{FORMAT}:{}", file_key(path)),
        },
    })
}

/// Eight hex digits naming a history file.
fn file_key(path: &Path) -> String {
    format!(
        "{:08x}",
        xxh3_64(path.as_os_str().as_encoded_bytes()) as u32
    )
}

/// `2026-06-09 14:01:00` → `20260609-140100`.
fn compact(stamp: &str) -> String {
    let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
    match digits.len() {
        14.. => format!("{}-{}", &digits[..8], &digits[8..14]),
        _ => digits,
    }
}

/// What a `> ` line says aider did, as a tool call.
fn output_call(text: &str) -> Option<ToolCall> {
    let (name, kind, rest) = [
        ("edit", ToolKind::Edit, "Applied edit to "),
        ("create", ToolKind::Write, "Creating empty file "),
        ("add", ToolKind::Read, "Added "),
        ("run", ToolKind::Shell, "Running "),
    ]
    .into_iter()
    .find_map(|(n, k, p)| text.strip_prefix(p).map(|r| (n, k, r)))?;
    let mut call = ToolCall {
        name: name.to_owned(),
        kind,
        ..ToolCall::default()
    };
    match kind {
        ToolKind::Shell => call.command = Some(rest.trim().to_owned()),
        ToolKind::Read => call.file = Some(rest.strip_suffix(" to the chat.")?.trim().to_owned()),
        _ => call.file = Some(rest.trim().to_owned()),
    }
    Some(call)
}

/// The prompt a `####` text carries: itself, the argument of a prompt command, or none for
/// other commands.
fn prompt_of(text: &str) -> Option<String> {
    let text = text.trim();
    if !text.starts_with('/') {
        return (!text.is_empty()).then(|| text.to_owned());
    }
    let (cmd, arg) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    (PROMPT_COMMANDS.contains(&cmd) && !arg.trim().is_empty()).then(|| arg.trim().to_owned())
}

/// One session being read.
struct Session {
    id: String,
    meta: ConvMeta,
    start: Option<i64>,
    turns: TurnBuilder,
    /// `####` lines not yet followed by anything else: (where they start, their texts).
    prompt: Option<(u64, Vec<String>)>,
    /// Reply lines not yet added: (where they start, the lines).
    reply: Option<(u64, Vec<String>)>,
    /// A prompt opened a turn in this session (aider's output before it is start-up noise).
    prompted: bool,
}

impl Session {
    fn new(id: String, start: Option<i64>, cwd: Option<String>) -> Self {
        let mut meta = ConvMeta {
            cwd,
            ..ConvMeta::default()
        };
        meta.note_timestamp(start);
        Session {
            id,
            meta,
            start,
            turns: TurnBuilder::default(),
            prompt: None,
            reply: None,
            prompted: false,
        }
    }

    fn at(&self, offset: u64) -> At {
        At {
            offset,
            timestamp: self.start,
            dup_key: None,
        }
    }

    /// Ends a run of `####` lines: the prompt they make starts a turn.
    fn end_prompt(&mut self) {
        let Some((offset, lines)) = self.prompt.take() else {
            return;
        };
        if let Some(text) = prompt_of(&lines.join("\n")) {
            self.meta.first_prompt.get_or_insert_with(|| text.clone());
            self.turns.prompt(self.at(offset), text);
            self.prompted = true;
        }
    }

    /// Ends a run of reply lines.
    fn end_reply(&mut self) {
        if let Some((offset, lines)) = self.reply.take() {
            let text = lines.join("\n");
            self.turns
                .assistant_text(self.at(offset), None, text.trim());
        }
    }

    fn line(&mut self, offset: u64, line: &str) {
        if let Some(p) = line
            .strip_prefix("####")
            .filter(|p| p.is_empty() || p.starts_with(' '))
        {
            self.end_reply();
            let lines = &mut self.prompt.get_or_insert_with(|| (offset, Vec::new())).1;
            lines.push(p.strip_prefix(' ').unwrap_or(p).to_owned());
            return;
        }
        self.end_prompt();
        if let Some(out) = line.strip_prefix('>') {
            self.end_reply();
            if let (true, Some(call)) = (self.prompted, output_call(out.trim())) {
                self.turns.tool_call(self.at(offset), call);
            }
        } else if !line.trim().is_empty() || self.reply.is_some() {
            let reply = self.reply.get_or_insert_with(|| (offset, Vec::new()));
            reply.1.push(line.to_owned());
        }
    }

    /// The conversation as it stands: completed turns and the open one, pending lines included
    /// (a pending prompt is the open turn; the turn it will close is reported as it stands).
    fn state(&mut self) -> ConvState {
        let mut completed = self.turns.take_completed();
        let mut count = self.turns.turn_count();
        let mut open = self.turns.open_turn();
        if let (Some(t), Some((_, lines))) = (open.as_mut(), &self.reply) {
            let text = lines.join("\n");
            let text = text.trim();
            if !text.is_empty() {
                let sep = if t.assistant_text.is_empty() {
                    ""
                } else {
                    "\n\n"
                };
                t.assistant_text = format!("{}{sep}{text}", t.assistant_text);
            }
        }
        let pending = self
            .prompt
            .as_ref()
            .and_then(|(offset, lines)| prompt_of(&lines.join("\n")).map(|text| (*offset, text)));
        if let Some((offset, text)) = pending {
            completed.extend(open.take());
            open = Some(Turn {
                number: count,
                start_offset: offset,
                timestamp: self.start,
                user_text: text,
                ..Turn::default()
            });
            count += 1;
        }
        ConvState {
            id: self.id.clone(),
            meta: self.meta.clone(),
            completed,
            open,
            turn_count: count,
        }
    }

    /// Closes everything: the session ended.
    fn finish(mut self) -> ConvState {
        self.end_prompt();
        self.end_reply();
        let completed = self.turns.finish_all();
        ConvState {
            id: self.id,
            meta: self.meta,
            turn_count: self.turns.turn_count(),
            completed,
            open: None,
        }
    }
}

/// Resumable parser of one history file.
pub(crate) struct AiderParser {
    key: String,
    cwd: Option<String>,
    /// Reading started inside the file (a re-read of some turns): the next session header ends
    /// what is wanted.
    ranged: Option<bool>,
    done: bool,
    used: FxHashSet<String>,
    current: Option<Session>,
    finished: Vec<ConvState>,
}

impl AiderParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        AiderParser {
            key: file_key(&file.path),
            cwd: file
                .path
                .parent()
                .and_then(|p| p.to_str())
                .map(str::to_owned),
            ranged: None,
            done: false,
            used: FxHashSet::default(),
            current: None,
            finished: Vec::new(),
        }
    }

    fn start_session(&mut self, stamp: &str) {
        if let Some(s) = self.current.take() {
            self.finished.push(s.finish());
        }
        let base = format!("{FORMAT}:{}-{}", self.key, compact(stamp));
        let mut id = base.clone();
        for n in 2.. {
            if self.used.insert(id.clone()) {
                break;
            }
            id = format!("{base}-{n}");
        }
        self.current = Some(Session::new(id, parse_iso(stamp), self.cwd.clone()));
    }
}

impl LineParser for AiderParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        let ranged = *self.ranged.get_or_insert(offset > 0);
        if self.done {
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| LineError::Utf8)?;
        if let Some(stamp) = line.strip_prefix(HEADER) {
            if ranged && self.current.is_some() {
                self.done = true;
            } else {
                self.start_session(stamp.trim());
            }
            return Ok(());
        }
        if self.current.is_none() {
            // a history (or a re-read range) that does not open with a header
            let id = format!("{FORMAT}:{}", self.key);
            self.used.insert(id.clone());
            self.current = Some(Session::new(id, None, self.cwd.clone()));
        }
        if let Some(s) = self.current.as_mut() {
            s.line(offset, line);
        }
        Ok(())
    }

    fn drain(&mut self) -> Vec<ConvState> {
        let mut out = std::mem::take(&mut self.finished);
        out.extend(self.current.as_mut().map(Session::state));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_commands_and_outputs() {
        assert_eq!(prompt_of("/ask why?").as_deref(), Some("why?"));
        assert_eq!(prompt_of("/add src/a.py"), None);
        assert_eq!(prompt_of(" fix it ").as_deref(), Some("fix it"));
        let c = output_call("Applied edit to src/webhook.py").unwrap();
        assert_eq!(
            (c.kind, c.file.as_deref()),
            (ToolKind::Edit, Some("src/webhook.py"))
        );
        let c = output_call("Added src/main.rs to the chat.").unwrap();
        assert_eq!(c.file.as_deref(), Some("src/main.rs"));
        assert!(output_call("Did not apply edit to src/skip.py (--dry-run)").is_none());
        assert_eq!(compact("2026-06-09 14:01:00"), "20260609-140100");
    }
}
