//! Transcript layer: how each coding agent's files on disk become conversations and turns.
//!
//! Every format adapter turns its files into the same normalised pieces: conversation metadata
//! ([`ConvMeta`]), turns ([`Turn`]) built by the shared [`TurnBuilder`], and tool calls
//! ([`ToolCall`]). Nothing here knows about the index or MCP. Adapters are registered in
//! [`ADAPTERS`]: adding a format is one new file plus one line there. Readers are opened through
//! [`redacted::open`], which redacts secrets from everything they yield.
//!
//! # What each format yields
//!
//! Per format: Kimi CLI is read from its `wire.jsonl` event log (the model-side `context.jsonl`
//! only for sessions without one); the work directory comes from `kimi.json`, the title from
//! `state.json`. Kimi Code's prompts are user-origin `turn.prompt`/`turn.steer` ops (injected
//! reminders are not prompts). Cursor records no timestamps: the chat store
//! (`~/.cursor/chats/*/<id>/store.db`) gives the title and creation time, the file's
//! modification time the last activity, and the working directory is recovered from paths the
//! agent used. Copilot and Kimi CLI record sub-agents inline; they are listed as sub-agents of
//! their session. Antigravity's working directory comes from `history.jsonl`. Prompts typed
//! while an agent works (Claude Code's queued commands, Kimi's steering) join the running turn
//! after a `[later prompt]` marker.
//!
//! Results carry `source`; `index_status` reports each source's health (whether its directory
//! exists, files, sessions, sub-agents, turns, skipped lines, and a warning when the directory
//! is missing or its files yield no turns). Sub-agent transcripts are searchable and name their
//! parent; forked / resumed sessions are listed as sessions and name what they were forked from.
//! The SQLite databases (OpenCode, Goose, Crush) are read with a small read-only SQLite reader of
//! our own (no C library, no writes, no lock files).
//!
//! Per format, what a prompt is and what is never indexed:
//!
//! - **Codex** — a fork (`codex fork`, `/fork`, a sub-agent spawned with its parent's context)
//!   starts by replaying its origin's rollout; the fork's own turns start after that replay,
//!   found by matching its prompts against the origin rollout (nothing in the file marks the
//!   end of the copy). A turn is therefore found once, in the session that had it first. When
//!   the origin rollout is gone, the replayed turns stay in the fork. Archiving moves a rollout
//!   to `archived_sessions/` under the same name: the session keeps its id. Reasoning (summaries,
//!   raw content, `encrypted_content`) is never indexed.
//! - **Qwen Code** — prompts are `user` records without a `subtype` (or typed mid-turn) whose
//!   `provenance` is not the system's, with `systemPayload.displayText` preferred; tool results,
//!   thoughts, telemetry, `@`/slash/cron/notification records are not prompts. A `/rewind`
//!   abandons a branch: only the chain leading to the last record counts.
//! - **Factory Droid** — a user message's first text block is what was typed (`@file` contents
//!   follow as further blocks; `<system-reminder>` elements are stripped); user messages of tool
//!   results are tool output. No git branch is recorded.
//! - **Amp** — one JSON document per thread, re-read when rewritten; user messages that only
//!   carry tool results are not prompts; cwd and branch come from the thread's first tree.
//! - **Aider** — aider writes `.aider.chat.history.md` into each repository (there is no central
//!   location, so `--source aider` without a path is a usage error). Each `# aider chat started
//!   at` is a conversation; `####` lines are prompts (in-chat commands are not, except `/ask`,
//!   `/code`, `/architect`, `/context`); `>` lines are aider's output (never indexed; `Applied
//!   edit to F`, `Creating empty file F`, `Added F to the chat`, `Running CMD` become tool calls).
//!   There are no per-message times: turns take the session's start time, read as UTC. A history
//!   under another name (`--chat-history-file`) is not found.
//! - **Continue CLI** — `user` messages (not their context items) are prompts; tool outputs
//!   (`toolCallStates`) are never indexed; the files record no times.
//! - **Goose** — the `sessions.db` of Goose 1.20+; tool responses, thinking and messages marked
//!   `userVisible: false` are never indexed; `developer__text_editor` calls read, write or edit by
//!   their `command`. The older per-session `.jsonl` files are not read.
//! - **Crush** — `.crush/crush.db` in each project (no central location: `--source crush` without
//!   a path is a usage error); reasoning and tool results are never indexed; summary messages
//!   are the session's summary, not a turn; times in seconds or milliseconds.
//!
//! Not supported yet, and why:
//!
//! - **Cline and Roo Code** keep each task as `api_conversation_history.json` in VS Code's
//!   per-extension global storage (a location that depends on the platform, the editor build and
//!   the extension id) or under `~/.cline/data` for the CLI. What a human prompt is there depends
//!   on wrappers (`<task>`, `<environment_details>`, `<feedback>`, `[tool] Result:`, XML tool
//!   tags inside assistant text in older versions) that the collected samples do not show: the
//!   only public samples are hand-written minimal files known not to be faithful, and the one real
//!   capture found was withdrawn by its owner. Reading them now would index injected environment
//!   text as prompts.
pub(crate) mod aider;
pub(crate) mod amp;
pub(crate) mod antigravity;
pub(crate) mod blocks;
pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod continue_cli;
pub(crate) mod convs;
pub(crate) mod copilot;
pub(crate) mod crush;
pub(crate) mod cursor;
pub(crate) mod dir;
pub(crate) mod droid;
pub(crate) mod gemini;
pub(crate) mod goose;
pub(crate) mod kimi;
pub(crate) mod kimi_code;
pub(crate) mod lenient;
pub(crate) mod markup;
pub(crate) mod openclaw;
pub(crate) mod opencode;
pub(crate) mod qwen;
pub(crate) mod redacted;
pub(crate) mod reread;
pub(crate) mod sqlite;
pub(crate) mod stream;
pub(crate) mod tools;
pub(crate) mod turns;

use crate::util::glob::Glob;
use std::path::{Path, PathBuf};

pub(crate) use tools::{FileOp, ToolCall, ToolKind};
pub(crate) use turns::{At, Attachment, Turn, TurnBuilder};

/// A summary candidate (`summary` record) and whether its leaf record is in the same file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SummaryRecord {
    pub text: String,
    pub leaf: Option<String>,
    pub leaf_in_file: bool,
}

/// Metadata of one conversation, accumulated while its records are read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ConvMeta {
    /// Session id recorded inside the file (for sub-agents: the parent session's id).
    pub recorded_session_id: Option<String>,
    /// The first working directory recorded.
    pub cwd: Option<String>,
    /// Every distinct working directory recorded, in order of first appearance (at most
    /// [`MAX_CWDS`]); empty when the format records a single one (then `cwd` is it).
    pub cwds: Vec<String>,
    pub git_branch: Option<String>,
    pub slug: Option<String>,
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
    /// When the conversation itself began, ignoring history copied in from an earlier one
    /// (a resumed Claude Code session starts with records of the session it resumed). Used to
    /// attribute copied turns to the earliest session; falls back to `first_ts`.
    pub created_ts: Option<i64>,
    /// User-chosen title (Claude `custom-title`; last one wins).
    pub custom_title: Option<String>,
    /// Generated title (Claude `ai-title`, other agents' session titles; last one wins).
    pub ai_title: Option<String>,
    pub summaries: Vec<SummaryRecord>,
    /// User text of the first turn that has any (fallback summary).
    pub first_prompt: Option<String>,
    /// Parent conversation id (already prefixed) when this conversation is a sub-agent or
    /// child session recorded inside a multi-conversation unit (e.g. OpenCode's database).
    /// Files that are sub-agent transcripts say so through [`Role::Subagent`] instead.
    pub parent_id: Option<String>,
    /// The conversation this one was forked from (already prefixed). A fork is a session of
    /// its own (listed, not a sub-agent) that replays its origin's history.
    pub forked_from: Option<String>,
    /// Sub-agent type and description, when the format records them per conversation.
    pub agent_type: Option<String>,
    pub agent_description: Option<String>,
}

/// Most distinct working directories remembered per conversation.
pub(crate) const MAX_CWDS: usize = 16;

/// Longest fallback summary taken from the first prompt, in characters.
pub(crate) const SUMMARY_FALLBACK_CHARS: usize = 200;

impl ConvMeta {
    /// When the conversation itself began (see `created_ts`).
    pub(crate) fn created(&self) -> Option<i64> {
        self.created_ts.or(self.first_ts)
    }

    /// Records a working directory seen on a record: the first one becomes `cwd`, each
    /// distinct one joins `cwds` (capped).
    pub(crate) fn note_cwd(&mut self, cwd: &str) {
        if cwd.is_empty() {
            return;
        }
        if self.cwd.is_none() {
            self.cwd = Some(cwd.to_owned());
        }
        if self.cwds.len() < MAX_CWDS && !self.cwds.iter().any(|c| c == cwd) {
            self.cwds.push(cwd.to_owned());
        }
    }

    /// Every working directory recorded (the first one when only that was kept).
    pub(crate) fn all_cwds(&self) -> impl Iterator<Item = &str> {
        let only_first = if self.cwds.is_empty() {
            self.cwd.as_deref()
        } else {
            None
        };
        self.cwds.iter().map(String::as_str).chain(only_first)
    }

    pub(crate) fn note_timestamp(&mut self, ts: Option<i64>) {
        if let Some(ts) = ts {
            self.first_ts = Some(self.first_ts.map_or(ts, |f| f.min(ts)));
            self.last_ts = Some(self.last_ts.map_or(ts, |l| l.max(ts)));
        }
    }

    /// The conversation's summary: custom title > generated title > a summary record (one
    /// whose leaf is in this file first, else the last one) > slug > start of the first prompt.
    pub(crate) fn summary(&self) -> String {
        if let Some(t) = self.custom_title.as_deref().or(self.ai_title.as_deref()) {
            return t.to_owned();
        }
        let summary = self
            .summaries
            .iter()
            .rev()
            .find(|s| s.leaf_in_file)
            .or(self.summaries.last());
        if let Some(s) = summary {
            return s.text.clone();
        }
        if let Some(slug) = &self.slug {
            return slug.clone();
        }
        let prompt = self.first_prompt.as_deref().unwrap_or("");
        prompt.chars().take(SUMMARY_FALLBACK_CHARS).collect()
    }
}

/// How a source file relates to conversations.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Role {
    /// A main session; its id is final.
    Session { id: String },
    /// A sub-agent transcript. `parent` is known from the layout (nested) or read from the
    /// records (flat layout).
    Subagent {
        agent_id: String,
        parent: Option<String>,
        agent_type: Option<String>,
        description: Option<String>,
    },
}

/// One file (or other unit) of transcripts that an adapter reads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct SourceFile {
    pub path: PathBuf,
    pub format: &'static str,
    /// Directory under the source root the file belongs to (Claude: the project directory).
    pub group: Option<String>,
    pub role: Role,
}

/// A conversation as a parser currently sees it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConvState {
    /// Final conversation id (format prefix included for non-Claude formats).
    pub id: String,
    pub meta: ConvMeta,
    /// Turns completed since the last drain.
    pub completed: Vec<Turn>,
    /// The open last turn, as it stands.
    pub open: Option<Turn>,
    /// Turns started so far, open one included.
    pub turn_count: u32,
}

impl ConvState {
    /// A conversation read whole: every turn `turns` built, finished.
    pub(crate) fn finished(id: String, meta: ConvMeta, mut turns: TurnBuilder) -> ConvState {
        let completed = turns.finish_all();
        ConvState {
            id,
            meta,
            turn_count: completed.len() as u32,
            completed,
            open: None,
        }
    }
}

/// Why a line was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LineError {
    #[error("not valid UTF-8")]
    Utf8,
    #[error("not a JSON object: {0}")]
    Json(String),
    #[error("record without a `type`")]
    NoType,
    #[error("`{0}` record without a usable `message`")]
    NoMessage(&'static str),
}

/// A resumable parser for line-oriented (JSONL) transcripts: it keeps its state between
/// calls, so appended lines continue where the last complete line ended.
pub(crate) trait LineParser: Send {
    /// Feeds one complete line (without its newline) that starts at byte `offset`.
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError>;
    /// The conversation(s) with turns completed since the last drain and the open turn.
    fn drain(&mut self) -> Vec<ConvState>;
    /// Called once the whole file has been read for the first time (no more history).
    fn end_of_history(&mut self) {}
    /// Record types this parser does not know and skipped, with how many lines of each it has
    /// seen so far (sorted by type). Formats without a record-type vocabulary report none.
    fn unknown_kinds(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
}

/// What re-reading a whole unit found.
#[derive(Debug, Clone, Default)]
pub(crate) struct UnitRead {
    /// Conversations whose content changed since the last read (all of them the first time),
    /// each with every turn in `completed` (the whole conversation is replaced).
    pub changed: Vec<ConvState>,
    /// Ids of every conversation the unit holds now; indexed ones missing here are removed.
    pub present: Vec<String>,
    /// Records that could not be read.
    pub skipped: u64,
    /// Records of types the reader does not know, per type (sorted by type).
    pub unknown: Vec<(String, u64)>,
}

/// A reader for transcripts that are not append-only lines (a JSON document, a database, a
/// tree of files): the unit is re-read whole when it changes. Keep state between reads to
/// report only conversations that changed.
pub(crate) trait UnitReader: Send {
    fn read(&mut self, file: &SourceFile) -> std::io::Result<UnitRead>;
    /// Files whose size or mtime tell whether the unit changed (the unit's path by default;
    /// e.g. a database and its `-wal` file).
    fn stamp_paths(&self, file: &SourceFile) -> Vec<PathBuf> {
        vec![file.path.clone()]
    }
    /// One conversation of the unit read afresh, every turn in `completed` (for `read_turn`).
    /// By default the whole unit is read; readers of large units (a database) can do better.
    fn read_conversation(
        &mut self,
        file: &SourceFile,
        id: &str,
    ) -> std::io::Result<Option<ConvState>> {
        Ok(self.read(file)?.changed.into_iter().find(|c| c.id == id))
    }
}

/// How a format's files are read.
pub(crate) enum Reader {
    /// Append-only JSONL, followed line by line from the last complete line.
    Lines(Box<dyn LineParser>),
    /// Re-read whole when changed.
    Unit(Box<dyn UnitReader>),
}

/// How a format's conversations are named as projects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProjectNaming {
    /// By the last component of the recorded working directory, else the file's group.
    Cwd,
    /// By the group directory (e.g. Claude Code's `-home-me-src-app`), with the prefix common to
    /// every indexed group stripped; with a single group, by the working directory.
    Group,
}

/// A transcript format: where its files live and how to read them.
pub(crate) trait Adapter: Sync {
    /// Format name used in `--source FORMAT:PATH` and as id prefix.
    fn name(&self) -> &'static str;
    /// Where the agent keeps transcripts by default, given the home directory.
    fn default_root(&self, home: &Path) -> PathBuf;
    /// The default location when the environment names it without the home directory (e.g.
    /// `$CLAUDE_CONFIG_DIR/projects`); checked before [`Adapter::default_root`].
    fn env_root(&self) -> Option<PathBuf> {
        None
    }
    /// Whether the command line's `PATTERN` filters this format's groups (otherwise every
    /// group is read).
    fn filters_groups(&self) -> bool {
        false
    }
    /// How conversations of this format are named as projects.
    fn project_naming(&self) -> ProjectNaming {
        ProjectNaming::Cwd
    }
    /// Every directory the agent keeps transcripts in by default (most agents: one), or why
    /// the format has no default location (for a usage error: its files live in each project).
    fn default_roots(&self, home: &Path) -> Result<Vec<PathBuf>, &'static str> {
        Ok(vec![self.default_root(home)])
    }
    /// Transcript files under `root` whose group matches `pattern`.
    fn discover(&self, root: &Path, pattern: &Glob) -> Vec<SourceFile>;
    /// Transcript files under `dir`, a directory inside `root` that just appeared or changed.
    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        self.discover(root, pattern)
            .into_iter()
            .filter(|f| f.path.starts_with(dir))
            .collect()
    }
    /// The transcript file at `path`, if it is one this adapter reads.
    fn classify(&self, root: &Path, pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let parent = path.parent()?;
        self.discover_under(root, pattern, parent)
            .into_iter()
            .find(|f| f.path == path)
    }
    /// For a side file that describes a transcript (e.g. a sub-agent's `.meta.json`), the
    /// transcript it describes.
    fn transcript_for(&self, _path: &Path) -> Option<PathBuf> {
        None
    }
    /// A fresh reader for one file (or unit).
    fn reader(&self, file: &SourceFile) -> Reader;
}

/// Every supported format. Add new adapters here.
pub(crate) static ADAPTERS: &[&dyn Adapter] = &[
    &claude::Claude,
    &openclaw::OpenClaw,
    &codex::Codex,
    &gemini::Gemini,
    &opencode::OpenCode,
    &qwen::Qwen,
    &droid::Droid,
    &amp::Amp,
    &aider::Aider,
    &continue_cli::Continue,
    &goose::Goose,
    &crush::Crush,
    &kimi::Kimi,
    &kimi_code::KimiCode,
    &cursor::Cursor,
    &copilot::Copilot,
    &antigravity::Antigravity,
];

/// The format read when no `--source` is given.
pub(crate) fn default_adapter() -> &'static dyn Adapter {
    &claude::Claude
}

/// The adapter registered under `name`.
pub(crate) fn adapter(name: &str) -> Option<&'static dyn Adapter> {
    ADAPTERS.iter().copied().find(|a| a.name() == name)
}

/// Names of every supported format, comma-separated, for messages.
pub(crate) fn format_names() -> String {
    ADAPTERS
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The home directory (`$HOME`), if set.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Where `adapter` keeps transcripts by default: its environment override, else under `$HOME`.
pub(crate) fn default_location(adapter: &dyn Adapter) -> Option<PathBuf> {
    adapter
        .env_root()
        .or_else(|| home_dir().map(|h| adapter.default_root(&h)))
}

/// Every directory `adapter` keeps transcripts in by default: its environment override, else
/// its locations under `$HOME`; or why there is none.
pub(crate) fn default_locations(adapter: &dyn Adapter) -> Result<Vec<PathBuf>, String> {
    if let Some(dir) = adapter.env_root() {
        return Ok(vec![dir]);
    }
    let home = home_dir().ok_or("HOME is not set; give the path as FORMAT:PATH")?;
    adapter.default_roots(&home).map_err(str::to_owned)
}
