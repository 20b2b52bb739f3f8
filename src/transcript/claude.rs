//! Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl` and sub-agent files):
//! discovery of the layout and a lazy, resumable line parser.
//!
//! Lines are parsed into borrowed wire structs; tool results, `toolUseResult`, thinking and
//! every field we do not name are skipped by the JSON scanner without being materialised.
use super::dir::sorted_entries;
use super::lenient::{Content, LBool, LStr, Raw};
use super::{
    Adapter, At, ConvMeta, ConvState, LineError, LineParser, Reader, Role, SourceFile,
    SummaryRecord, TurnBuilder,
};
use crate::util::glob::Glob;
use crate::util::time::parse_iso;
use rustc_hash::FxHashSet;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

mod discover;
pub(crate) mod prompt;
mod scan;
mod tool;
mod user;
pub(crate) use discover::{discover_project, discover_subagents, links_within, subagent_id};
use discover::{nested_subagent, project_file};
#[cfg(test)]
pub(crate) use prompt::prompt_text;

/// The Claude Code adapter.
pub(crate) struct Claude;

impl Claude {
    /// `~/.claude/projects` for the given home directory.
    pub(crate) fn default_root_of(home: &Path) -> std::path::PathBuf {
        home.join(".claude").join("projects")
    }
}

pub(crate) const FORMAT: &str = "claude";

impl Adapter for Claude {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn discover(&self, root: &Path, pattern: &Glob) -> Vec<SourceFile> {
        let mut out = Vec::new();
        for e in sorted_entries(root).into_iter().filter(|e| e.is_dir) {
            if pattern.matches(&e.name) && !links_within(&e.path, root) {
                discover_project(&e.path, &e.name, &mut out);
            }
        }
        out
    }

    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        let Ok(rel) = dir.strip_prefix(root) else {
            return Vec::new();
        };
        // names are bytes: a non-UTF-8 one reads lossily but keeps its place (never dropped,
        // which would shift the parts and misfile what lies below it)
        let comps: Vec<&std::ffi::OsStr> = rel.iter().collect();
        let lossy: Vec<_> = comps.iter().map(|c| c.to_string_lossy()).collect();
        let parts: Vec<&str> = lossy.iter().map(|c| c.as_ref()).collect();
        let mut out = Vec::new();
        match parts.as_slice() {
            [] => return self.discover(root, pattern),
            [project, rest @ ..] if pattern.matches(project) => {
                let project_dir = root.join(comps[0]);
                if links_within(&project_dir, root) {
                    return out;
                }
                match rest {
                    [] => discover_project(&project_dir, project, &mut out),
                    [session] | [session, "subagents"] => {
                        let session_dir = project_dir.join(comps[1]);
                        discover_subagents(&session_dir, project, session, &mut out)
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        out
    }

    fn classify(&self, root: &Path, pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let rel = path.strip_prefix(root).ok()?;
        let comps: Vec<&std::ffi::OsStr> = rel.iter().collect();
        let lossy: Vec<_> = comps.iter().map(|c| c.to_string_lossy()).collect();
        let parts: Vec<&str> = lossy.iter().map(|c| c.as_ref()).collect();
        if parts.len() > 1 && links_within(&root.join(comps[0]), root) {
            return None;
        }
        match parts.as_slice() {
            [project, file] if pattern.matches(project) => project_file(path, project, file),
            [project, session, "subagents", _] if pattern.matches(project) => {
                nested_subagent(path, project, session)
            }
            _ => None,
        }
    }

    fn transcript_for(&self, path: &Path) -> Option<std::path::PathBuf> {
        let name = path.file_name()?.to_str()?;
        let agent = name.strip_suffix(".meta.json")?;
        Some(path.with_file_name(format!("{agent}.jsonl")))
    }

    fn default_root(&self, home: &Path) -> std::path::PathBuf {
        Self::default_root_of(home)
    }

    /// `$CLAUDE_CONFIG_DIR/projects` when set.
    fn env_root(&self) -> Option<std::path::PathBuf> {
        std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .map(|c| std::path::PathBuf::from(c).join("projects"))
    }

    fn filters_groups(&self) -> bool {
        true
    }

    fn project_naming(&self) -> super::ProjectNaming {
        super::ProjectNaming::Group
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(ClaudeParser::new(file)))
    }
}

/// The fields of a record we look at; everything else is skipped unread. Read by [`scan`]
/// when the line has the usual shape, else by serde (the two agree: see `scan`'s tests).
#[derive(Deserialize, Default, Debug, PartialEq)]
struct Record<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    uuid: LStr<'a>,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LStr<'a>,
    #[serde(borrow, default)]
    cwd: LStr<'a>,
    #[serde(rename = "gitBranch", borrow, default)]
    git_branch: LStr<'a>,
    #[serde(borrow, default)]
    slug: LStr<'a>,
    #[serde(rename = "isMeta", default)]
    is_meta: LBool,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: LBool,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(borrow, default)]
    summary: LStr<'a>,
    #[serde(rename = "leafUuid", borrow, default)]
    leaf_uuid: LStr<'a>,
    #[serde(rename = "customTitle", borrow, default)]
    custom_title: LStr<'a>,
    #[serde(rename = "aiTitle", borrow, default)]
    ai_title: LStr<'a>,
    #[serde(borrow, default)]
    attachment: Option<user::AttachmentRecord<'a>>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    content: Content<'a, Block<'a>>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
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
    input: Option<Raw<'a>>,
    /// Image and document blocks: `{type: "base64", media_type, data}` (data never read).
    #[serde(borrow, default)]
    source: Option<Raw<'a>>,
}

/// Record types Claude Code writes that carry nothing to index (or are read above): anything
/// else is counted as unknown, a hint that the format changed.
const KNOWN_TYPES: &[&str] = &[
    "user",
    "assistant",
    "attachment",
    "system",
    "progress",
    "summary",
    "custom-title",
    "ai-title",
    "agent-name",
    "last-prompt",
    "file-history-snapshot",
    "queue-operation",
    "permission-mode",
    "mode",
    "pr-link",
    "worktree-state",
    "relocated",
    "frame-link",
    "bridge-session",
    "atis-latch",
    "cost-state",
    "agent-setting",
    "started",
    "result",
];

/// Resumable parser for one Claude Code transcript file.
pub(crate) struct ClaudeParser {
    role: Role,
    turns: TurnBuilder,
    meta: ConvMeta,
    /// Record uuids seen while reading history (dropped afterwards) to resolve summary leaves.
    seen: Option<FxHashSet<u64>>,
    /// Summaries whose leaf has not been seen yet: (leaf hash, index in `meta.summaries`).
    pending_leaves: Vec<(u64, usize)>,
    /// Lines of record types this parser does not know, per type.
    unknown: BTreeMap<String, u64>,
    /// The scanner's scratch bitmap of a line's special bytes.
    specials: Vec<u64>,
}

impl ClaudeParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        Self {
            role: file.role.clone(),
            turns: TurnBuilder::default(),
            meta: ConvMeta::default(),
            seen: Some(FxHashSet::default()),
            pending_leaves: Vec::new(),
            unknown: BTreeMap::new(),
            specials: Vec::new(),
        }
    }

    fn conversation_id(&self) -> String {
        match &self.role {
            Role::Session { id } => id.clone(),
            Role::Subagent {
                agent_id, parent, ..
            } => subagent_id(
                parent
                    .as_deref()
                    .or(self.meta.recorded_session_id.as_deref()),
                agent_id,
            ),
        }
    }

    fn note_uuid(&mut self, key: u64) {
        if let Some(seen) = &mut self.seen {
            seen.insert(key);
        }
        if !self.pending_leaves.is_empty() {
            let summaries = &mut self.meta.summaries;
            self.pending_leaves.retain(|&(leaf, i)| {
                if leaf == key {
                    summaries[i].leaf_in_file = true;
                }
                leaf != key
            });
        }
    }

    fn assistant(&mut self, message: Option<Message>, at: At) -> Result<(), LineError> {
        let message = message.ok_or(LineError::NoMessage("assistant"))?;
        let message_id = message.id.as_deref();
        match message.content {
            Content::Text(text) => self.turns.assistant_text(at, message_id, &text),
            Content::Blocks(blocks) => {
                for block in blocks {
                    match block.kind.as_deref() {
                        Some("text") => {
                            if let Some(text) = block.text.as_deref() {
                                self.turns.assistant_text(at, message_id, text);
                            }
                        }
                        Some("tool_use") => {
                            let name = block.name.as_deref().unwrap_or("unknown");
                            let call = tool::tool_call(block.id.into_owned(), name, block.input);
                            self.turns.tool_call(at, call);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn fill(slot: &mut Option<String>, value: &LStr) {
    if slot.is_none() {
        if let Some(v) = value.non_empty() {
            *slot = Some(v.to_owned());
        }
    }
}

impl ClaudeParser {
    /// One non-blank line; `line` may be the repaired copy of the line read.
    fn record(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        // Strings we read are validated as UTF-8; skipped values (tool output) are not, so a
        // bad byte inside a tool result does not cost the record.
        let mut rec = Record::default();
        if scan::record(line, &mut self.specials, &mut rec).is_none() {
            rec = serde_json::from_slice(line).map_err(|e| LineError::Json(e.to_string()))?;
        }
        let Some(kind) = rec.kind.as_deref() else {
            return Err(LineError::NoType);
        };
        let timestamp = rec.timestamp.as_deref().and_then(parse_iso);
        let dup_key = rec.uuid.as_deref().map(|u| xxh3_64(u.as_bytes()));
        let at = At {
            offset,
            timestamp,
            dup_key,
        };
        if let Some(key) = dup_key {
            self.note_uuid(key);
        }
        if matches!(kind, "user" | "assistant" | "attachment") {
            self.meta.note_timestamp(timestamp);
            if let (Role::Session { id }, Some(ts)) = (&self.role, timestamp) {
                // records copied from a resumed session keep that session's id
                if rec.session_id.as_deref() == Some(id.as_str()) {
                    self.meta.created_ts = Some(self.meta.created_ts.map_or(ts, |c| c.min(ts)));
                }
            }
            fill(&mut self.meta.recorded_session_id, &rec.session_id);
            if let Some(cwd) = rec.cwd.non_empty() {
                self.meta.note_cwd(cwd);
            }
            fill(&mut self.meta.git_branch, &rec.git_branch);
        }
        fill(&mut self.meta.slug, &rec.slug);
        match kind {
            "user" => {
                let meta = rec.is_meta.0 || rec.is_compact_summary.0;
                return self.user(rec.message, meta, at);
            }
            "assistant" => return self.assistant(rec.message, at),
            "attachment" => self.attachment(&rec, at),
            "summary" => {
                if let Some(text) = rec.summary.non_empty() {
                    let leaf = rec.leaf_uuid.into_owned();
                    let leaf_hash = leaf.as_deref().map(|l| xxh3_64(l.as_bytes()));
                    let leaf_in_file = match (leaf_hash, &self.seen) {
                        (Some(h), Some(seen)) => seen.contains(&h),
                        _ => false,
                    };
                    let index = self.meta.summaries.len();
                    self.meta.summaries.push(SummaryRecord {
                        text: text.to_owned(),
                        leaf,
                        leaf_in_file,
                    });
                    if let (Some(h), false) = (leaf_hash, leaf_in_file) {
                        self.pending_leaves.push((h, index));
                    }
                }
            }
            "custom-title" => {
                if let Some(t) = rec.custom_title.non_empty() {
                    self.meta.custom_title = Some(t.to_owned());
                }
            }
            "ai-title" => {
                if let Some(t) = rec.ai_title.non_empty() {
                    self.meta.ai_title = Some(t.to_owned());
                }
            }
            other if !KNOWN_TYPES.contains(&other) => {
                *self.unknown.entry(other.to_owned()).or_default() += 1;
            }
            _ => {}
        }
        Ok(())
    }
}

impl LineParser for ClaudeParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        super::lenient::retry_repaired(line, |l| self.record(offset, l))
    }

    fn unknown_kinds(&self) -> Vec<(String, u64)> {
        self.unknown.iter().map(|(k, n)| (k.clone(), *n)).collect()
    }

    fn drain(&mut self) -> Vec<ConvState> {
        vec![ConvState {
            id: self.conversation_id(),
            meta: self.meta.clone(),
            completed: self.turns.take_completed(),
            open: self.turns.open_turn(),
            turn_count: self.turns.turn_count(),
        }]
    }

    fn end_of_history(&mut self) {
        self.seen = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_harness_noise() {
        assert_eq!(prompt_text("  "), None);
        assert_eq!(
            prompt_text("[Request interrupted by user for tool use]"),
            None
        );
        assert_eq!(
            prompt_text(
                "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"
            ),
            None
        );
        assert_eq!(
            prompt_text("<local-command-stdout>See ya!</local-command-stdout>"),
            None
        );
        assert_eq!(
            prompt_text("<ide_opened_file>opened x.rs</ide_opened_file>Fix the parser").as_deref(),
            Some("Fix the parser")
        );
        assert_eq!(
            prompt_text("why is a < b here").as_deref(),
            Some("why is a < b here")
        );
    }
}
