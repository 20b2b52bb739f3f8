//! The exchange record format of `export` and `import`: one JSON object per line (NDJSON), each
//! a conversation or a turn of one, exactly what the tools return and nothing more.
//!
//! Every line carries `"v": 1` (this layout) and `"kind"`: `"conversation"` (its id, source
//! format, original transcript path and group, role, parent, metadata, stored turn count) or
//! `"turn"` (its conversation's id, number, time, prompt, reply, tool calls as `read_turn`
//! renders them, attachments). Times are epoch milliseconds (`*_ms`); `dup_key`, the key a
//! resumed or forked copy of a turn shares with its original, is 16 hex digits. A line with a
//! field this build does not know is read all the same; a line with a higher `v` is refused.
use super::record::{ConvRecord, TurnRecord};
use crate::transcript::{Attachment, ConvMeta, Role, SummaryRecord, ToolCall, ToolKind, Turn};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The record layout this build writes and reads.
pub(crate) const VERSION: u32 = 1;

/// One line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum Line {
    Conversation(Box<ConvLine>),
    Turn(Box<TurnLine>),
}

/// A line with its version (the form written and read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Versioned {
    pub v: u32,
    #[serde(flatten)]
    pub line: Line,
}

/// A conversation's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConvLine {
    pub id: String,
    /// The transcript format it was read from.
    pub source: String,
    /// The transcript it was read from, on the machine that exported it.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub role: RoleLine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The summary `list_conversations` shows (written for readers of the file; not read back).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub turn_count: u32,
    #[serde(default)]
    pub end_offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone_since_ms: Option<i64>,
    #[serde(flatten)]
    pub meta: MetaLine,
}

/// How the transcript relates to its conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum RoleLine {
    Session {
        id: String,
    },
    Subagent {
        agent_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

/// A conversation's metadata, as fields of its line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct MetaLine {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cwds: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_ts_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_ts_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_ts_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ai_title: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub summaries: Vec<SummaryLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SummaryLine {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
    #[serde(default)]
    pub leaf_in_file: bool,
}

/// A turn's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TurnLine {
    /// Its conversation's id.
    pub conversation: String,
    pub number: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dup_key: Option<String>,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub assistant: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolLine>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentLine>,
}

/// A tool call as `read_turn` renders it (never its output).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ToolLine {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AttachmentLine {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

const KINDS: [(ToolKind, &str); 9] = [
    (ToolKind::Read, "read"),
    (ToolKind::Write, "write"),
    (ToolKind::Edit, "edit"),
    (ToolKind::Shell, "shell"),
    (ToolKind::Search, "search"),
    (ToolKind::Agent, "agent"),
    (ToolKind::Web, "web"),
    (ToolKind::Browser, "browser"),
    (ToolKind::Other, "other"),
];

fn kind_name(k: ToolKind) -> &'static str {
    KINDS
        .iter()
        .find(|(x, _)| *x == k)
        .map_or("other", |(_, n)| n)
}

fn kind_of(name: &str) -> Option<ToolKind> {
    KINDS.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
}

impl ConvLine {
    /// The line of a stored conversation.
    pub(crate) fn of(c: &ConvRecord) -> Self {
        let m = &c.meta;
        ConvLine {
            id: c.id.clone(),
            source: c.file.format.to_owned(),
            path: c.file.path.to_string_lossy().into_owned(),
            group: c.file.group.clone(),
            role: match &c.file.role {
                Role::Session { id } => RoleLine::Session { id: id.clone() },
                Role::Subagent {
                    agent_id,
                    parent,
                    agent_type,
                    description,
                } => RoleLine::Subagent {
                    agent_id: agent_id.clone(),
                    parent: parent.clone(),
                    agent_type: agent_type.clone(),
                    description: description.clone(),
                },
            },
            parent: c.parent.clone(),
            title: m.summary(),
            turn_count: c.turn_count,
            end_offset: c.end_offset,
            gone_since_ms: c.gone_since,
            meta: MetaLine {
                recorded_session_id: m.recorded_session_id.clone(),
                cwd: m.cwd.clone(),
                cwds: m.cwds.clone(),
                git_branch: m.git_branch.clone(),
                slug: m.slug.clone(),
                first_ts_ms: m.first_ts,
                last_ts_ms: m.last_ts,
                created_ts_ms: m.created_ts,
                custom_title: m.custom_title.clone(),
                ai_title: m.ai_title.clone(),
                summaries: m
                    .summaries
                    .iter()
                    .map(|s| SummaryLine {
                        text: s.text.clone(),
                        leaf: s.leaf.clone(),
                        leaf_in_file: s.leaf_in_file,
                    })
                    .collect(),
                first_prompt: m.first_prompt.clone(),
                parent_id: m.parent_id.clone(),
                forked_from: m.forked_from.clone(),
                agent_type: m.agent_type.clone(),
                agent_description: m.agent_description.clone(),
            },
        }
    }

    /// The stored conversation this line describes; an error names what is wrong (an unknown
    /// source format: the store could not show it).
    pub(crate) fn record(&self) -> Result<ConvRecord, String> {
        let Some(format) = crate::transcript::adapter(&self.source).map(|a| a.name()) else {
            return Err(format!(
                "unknown source `{}` (this build reads {})",
                self.source,
                crate::transcript::format_names()
            ));
        };
        if self.id.is_empty() {
            return Err("empty conversation `id`".into());
        }
        let m = self.meta.clone();
        let mut rec = ConvRecord::bare(
            self.id.clone(),
            format,
            PathBuf::from(&self.path),
            self.group.clone(),
        );
        rec.file.role = match self.role.clone() {
            RoleLine::Session { id } => Role::Session { id },
            RoleLine::Subagent {
                agent_id,
                parent,
                agent_type,
                description,
            } => Role::Subagent {
                agent_id,
                parent,
                agent_type,
                description,
            },
        };
        rec.parent = self.parent.clone();
        rec.turn_count = self.turn_count;
        rec.end_offset = self.end_offset;
        rec.gone_since = self.gone_since_ms;
        rec.meta = ConvMeta {
            recorded_session_id: m.recorded_session_id,
            cwd: m.cwd,
            cwds: m.cwds,
            git_branch: m.git_branch,
            slug: m.slug,
            first_ts: m.first_ts_ms,
            last_ts: m.last_ts_ms,
            created_ts: m.created_ts_ms,
            custom_title: m.custom_title,
            ai_title: m.ai_title,
            summaries: m
                .summaries
                .into_iter()
                .map(|s| SummaryRecord {
                    text: s.text,
                    leaf: s.leaf,
                    leaf_in_file: s.leaf_in_file,
                })
                .collect(),
            first_prompt: m.first_prompt,
            parent_id: m.parent_id,
            forked_from: m.forked_from,
            agent_type: m.agent_type,
            agent_description: m.agent_description,
        };
        Ok(rec)
    }
}

impl TurnLine {
    /// The line of a turn of conversation `id`.
    pub(crate) fn of(id: &str, t: &Turn) -> Self {
        TurnLine {
            conversation: id.to_owned(),
            number: t.number,
            timestamp_ms: t.timestamp,
            dup_key: t.dup_key.map(|k| format!("{k:016x}")),
            user: t.user_text.clone(),
            assistant: t.assistant_text.clone(),
            tools: t
                .tools
                .iter()
                .map(|c| ToolLine {
                    name: c.name.clone(),
                    kind: kind_name(c.kind).to_owned(),
                    file: c.file.clone(),
                    chars: c.chars,
                    command: c.command.clone(),
                    pattern: c.pattern.clone(),
                    agent_type: c.agent_type.clone(),
                    description: c.description.clone(),
                    query: c.query.clone(),
                    url: c.url.clone(),
                    action: c.action.clone(),
                })
                .collect(),
            attachments: t
                .attachments
                .iter()
                .map(|a| AttachmentLine {
                    kind: a.kind.clone(),
                    media_type: a.media_type.clone(),
                })
                .collect(),
        }
    }

    /// The stored record of this turn (what the store would have written reading it); an
    /// error names what is wrong.
    pub(crate) fn record(&self) -> Result<TurnRecord, String> {
        let dup_key = match &self.dup_key {
            None => None,
            Some(k) => Some(
                u64::from_str_radix(k, 16)
                    .map_err(|_| format!("`dup_key` must be 16 hex digits, not `{k}`"))?,
            ),
        };
        let mut tools = Vec::with_capacity(self.tools.len());
        for t in &self.tools {
            let kind = kind_of(&t.kind).ok_or_else(|| {
                format!(
                    "unknown tool kind `{}` (one of {})",
                    t.kind,
                    KINDS.map(|(_, n)| n).join(", ")
                )
            })?;
            tools.push(ToolCall {
                id: None,
                name: t.name.clone(),
                kind,
                file: t.file.clone(),
                chars: t.chars,
                command: t.command.clone(),
                pattern: t.pattern.clone(),
                agent_type: t.agent_type.clone(),
                description: t.description.clone(),
                query: t.query.clone(),
                url: t.url.clone(),
                action: t.action.clone(),
            });
        }
        let mut turn = Turn {
            number: self.number,
            start_offset: 0,
            timestamp: self.timestamp_ms,
            user_text: self.user.clone(),
            assistant_text: self.assistant.clone(),
            tools,
            attachments: self
                .attachments
                .iter()
                .map(|a| Attachment {
                    kind: a.kind.clone(),
                    media_type: a.media_type.clone(),
                })
                .collect(),
            dup_key,
        };
        // a file written elsewhere (or edited) is held to this build's redaction too
        crate::transcript::redacted::turn(&mut turn);
        Ok(TurnRecord::of(&turn))
    }
}

impl Versioned {
    pub(crate) fn new(line: Line) -> Self {
        Versioned { v: VERSION, line }
    }
}
