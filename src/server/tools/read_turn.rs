//! `read_turn`: one turn re-read from its transcript file at full fidelity.
use super::budget::{self, json_len};
use super::iso;
use crate::corpus::Snapshot;
use crate::corpus::catalog::Conversation;
use crate::server::{ConversationServer, ToolError, input_schema, output_schema};
use crate::transcript::tools::{COMMAND_MAX_CHARS, cut_chars};
use crate::transcript::{ToolCall, ToolKind, Turn};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

pub const DESCRIPTION: &str = "Read one turn of a past conversation in full: the user's prompt, \
the assistant's reply and the tools it used (compactly: file, command, pattern...). Tool outputs \
and thinking are not included. Use the session_id and turn_number from search_conversations. Output is bounded by max_chars: a longer turn keeps its head and tail, marks the cut, and gives next_offset to pass back as char_offset.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ReadTurnParams {
    /// Conversation id from search_conversations or list_conversations.
    pub session_id: String,
    /// Turn number (0-based).
    pub turn_number: i64,
    /// Most characters of JSON to return (500-60000, default 20000). A longer turn keeps its
    /// head and tail and says where to continue.
    #[serde(default)]
    pub max_chars: Option<i64>,
    /// Read on from this character of the turn's text (prompt then reply), as given by
    /// `next_offset` of a truncated answer.
    #[serde(default)]
    pub char_offset: Option<i64>,
}

/// A tool call, compactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ToolUsed {
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
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

impl ToolUsed {
    /// Renders a call by what it does: files for reads/writes/edits, the command line for
    /// shells, the pattern for searches, type and description for sub-agents.
    pub fn from_call(call: &ToolCall) -> Self {
        let mut r = ToolUsed {
            tool: call.name.clone(),
            file: None,
            chars: None,
            command: None,
            pattern: None,
            agent_type: None,
            description: None,
            query: None,
            url: None,
            action: None,
        };
        match call.kind {
            ToolKind::Read | ToolKind::Edit => r.file = call.file.clone(),
            ToolKind::Write => {
                r.file = call.file.clone();
                r.chars = call.chars;
            }
            ToolKind::Shell => {
                r.command = call
                    .command
                    .as_deref()
                    .map(|c| cut_chars(c, COMMAND_MAX_CHARS))
            }
            ToolKind::Search => r.pattern = call.pattern.clone(),
            ToolKind::Agent => {
                r.agent_type = call.agent_type.clone();
                r.description = call.description.clone();
            }
            ToolKind::Web => {
                r.query = call.query.clone();
                r.url = call.url.clone();
            }
            ToolKind::Browser => r.action = call.action.clone(),
            ToolKind::Other => {}
        }
        r
    }
}

/// A non-text part of the prompt (image, document, file): counted, its content never shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct AttachmentOut {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct TurnOut {
    pub session_id: String,
    pub turn_number: u32,
    pub timestamp: Option<String>,
    pub user_text: String,
    pub assistant_text: String,
    pub tools_used: Vec<ToolUsed>,
    /// Images and documents sent with the prompt (type and media type only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentOut>,
    /// True when text or tools were left out to stay within max_chars.
    pub truncated: bool,
    /// Characters of prompt plus reply in the whole turn.
    pub total_chars: usize,
    /// Pass as `char_offset` to read_turn to read on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl TurnOut {
    /// The turn within `max_chars` of JSON: whole, or head and tail around a marked cut, or
    /// (with `char_offset`) the part of its text starting there.
    pub fn new(
        conv: &Conversation,
        turn: Turn,
        max_chars: usize,
        char_offset: Option<usize>,
    ) -> Self {
        let mut tools: Vec<ToolUsed> = turn.tools.iter().map(ToolUsed::from_call).collect();
        let mut note = None;
        // tools get at most a third of the budget
        let tools_budget = max_chars / 3;
        if json_len(&tools) > tools_budget {
            let mut used = 2;
            let mut keep = 0;
            for t in &tools {
                used += json_len(t) + 1;
                if used > tools_budget {
                    break;
                }
                keep += 1;
            }
            note = Some(format!(
                "{} of {} tool calls left out to stay within max_chars",
                tools.len() - keep,
                tools.len()
            ));
            tools.truncate(keep);
        }
        let mut out = TurnOut {
            session_id: conv.id.clone(),
            turn_number: turn.number,
            timestamp: iso(turn.timestamp),
            user_text: String::new(),
            assistant_text: String::new(),
            tools_used: tools,
            attachments: (turn.attachments.iter())
                .map(|a| AttachmentOut {
                    kind: a.kind.clone(),
                    media_type: a.media_type.clone(),
                })
                .collect(),
            truncated: note.is_some(),
            total_chars: 0,
            next_offset: None,
            note,
        };
        // what the fixed fields take, with room for the note and offsets set below
        let fixed = json_len(&out) + 160;
        let w = budget::window(
            &[&turn.user_text, &turn.assistant_text],
            char_offset,
            max_chars.saturating_sub(fixed),
        );
        let mut fields = w.fields.into_iter();
        out.user_text = fields.next().unwrap_or_default();
        out.assistant_text = fields.next().unwrap_or_default();
        out.total_chars = w.total_chars;
        out.next_offset = w.next_offset;
        if w.truncated {
            out.truncated = true;
            if out.note.is_none() {
                out.note = Some(match w.next_offset {
                    Some(n) => format!("text shortened; read on with char_offset={n}"),
                    None => "text shortened".to_owned(),
                });
            }
        }
        out
    }
}

/// The conversation with this id, or the error the tools report.
pub fn find_conversation<'a>(
    snap: &'a Snapshot,
    id: &str,
) -> Result<&'a std::sync::Arc<Conversation>, ToolError> {
    snap.catalog.by_id(id).ok_or_else(|| {
        ToolError::new(format!(
            "Unknown session_id: {id}. Use list_conversations or search_conversations to find valid ids."
        ))
    })
}

pub fn run(snap: &Snapshot, p: ReadTurnParams) -> Result<TurnOut, ToolError> {
    let conv = find_conversation(snap, &p.session_id)?;
    if p.turn_number < 0 {
        return Err(ToolError::new(format!(
            "`turn_number` must be 0 or more (got {}); turns are numbered from 0.",
            p.turn_number
        )));
    }
    if p.turn_number >= i64::from(conv.turn_count) {
        return Err(ToolError::new(format!(
            "Turn {} out of range (session has {} turns)",
            p.turn_number, conv.turn_count
        )));
    }
    let n = p.turn_number as u32;
    let turn = snap
        .read_turns(conv, n, n + 1)
        .map_err(|e| ToolError::new(e.to_string()))?
        .into_iter()
        .next()
        .ok_or_else(|| ToolError::new("the turn could not be read back; try again in a moment"))?;
    let max_chars = budget::check_max_chars(p.max_chars, budget::READ_DEFAULT)?;
    let char_offset = match p.char_offset {
        None => None,
        Some(o) if o >= 0 => Some(o as usize),
        Some(o) => {
            return Err(ToolError::new(format!(
                "`char_offset` must be 0 or more (got {o})."
            )));
        }
    };
    Ok(TurnOut::new(conv, turn, max_chars, char_offset))
}

#[tool_router(router = read_turn_router, vis = "pub(crate)")]
impl ConversationServer {
    #[tool(
        name = "read_turn",
        description = DESCRIPTION,
        input_schema = input_schema::<ReadTurnParams>(),
        output_schema = output_schema::<TurnOut>(),
        annotations(title = "Read one turn", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    pub async fn read_turn(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        self.run_blocking(args, run).await
    }
}
