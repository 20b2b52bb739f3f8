//! `read_turn`: one turn re-read from its transcript file at full fidelity.
use super::budget::{self, json_len};
use super::iso;
use crate::corpus::Snapshot;
use crate::corpus::catalog::Conversation;
use crate::server::toolset::{Ctx, Lane, ToolDef};
use crate::server::{ToolError, input_schema, output_schema};
use crate::transcript::tools::{COMMAND_MAX_CHARS, cut_chars};
use crate::transcript::{ToolCall, ToolKind, Turn};
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) const DESCRIPTION: &str = "Read one turn of a past conversation in full: the prompt, the \
reply and the tools used (file, command, pattern...; no tool output or thinking). Use session_id \
and turn_number from search_conversations. A turn longer than max_chars keeps the head and tail \
of prompt and reply around a marked cut; pass next_offset back as char_offset to read on, and \
next_tool_offset as tool_offset for tool calls left out.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ReadTurnParams {
    /// Conversation id (from search_conversations or list_conversations).
    pub session_id: String,
    /// Turn number (0-based).
    pub turn_number: i64,
    /// Most characters of JSON to return (500-60000, default 20000).
    #[serde(default)]
    pub max_chars: Option<i64>,
    /// Read on from this character of prompt+reply (next_offset of a shortened answer).
    #[serde(default)]
    pub char_offset: Option<i64>,
    /// Only the tool calls from this one on, without the text (next_tool_offset of an answer
    /// that left calls out).
    #[serde(default)]
    pub tool_offset: Option<i64>,
}

/// A tool call, compactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ToolUsed {
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
    pub(crate) fn from_call(call: &ToolCall) -> Self {
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
pub(crate) struct AttachmentOut {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct TurnOut {
    pub session_id: String,
    pub turn_number: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    pub user_text: String,
    pub assistant_text: String,
    pub tools_used: Vec<ToolUsed>,
    /// Images and documents sent with the prompt (type and media type only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentOut>,
    /// True when text or tools were left out to fit max_chars.
    pub truncated: bool,
    /// Characters of prompt plus reply in the whole turn.
    pub total_chars: usize,
    /// Pass as char_offset to read_turn to read on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Pass as tool_offset to read_turn for the tool calls left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_tool_offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Fewest characters of text a shortened turn shows.
const MIN_TEXT: usize = 24;

/// The note of a turn: tool calls left out (the first at `next_tool`), and where to read on.
fn turn_note(
    tools_left: usize,
    tools_all: usize,
    next_tool: usize,
    w: &budget::Windowed,
) -> Option<String> {
    let tools = (tools_left > 0).then(|| {
        format!("{tools_left} of {tools_all} tool calls left out; read them with tool_offset={next_tool}")
    });
    let text = w.truncated.then(|| match w.next_offset {
        Some(n) => format!("text shortened; read on with char_offset={n}"),
        None => "text shortened".to_owned(),
    });
    match (tools, text) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

impl TurnOut {
    /// The turn within `max_chars` of JSON: whole, or each long field's head and tail around
    /// a marked cut, or (with `char_offset`) the part of its text starting there.
    pub(crate) fn new(
        conv: &Conversation,
        turn: &Turn,
        max_chars: usize,
        char_offset: Option<usize>,
    ) -> Self {
        let all: Vec<ToolUsed> = turn.tools.iter().map(ToolUsed::from_call).collect();
        let total = turn.user_text.chars().count() + turn.assistant_text.chars().count();
        let mut out = TurnOut {
            session_id: conv.id.clone(),
            turn_number: turn.number,
            timestamp: iso(turn.timestamp),
            user_text: String::new(),
            assistant_text: String::new(),
            tools_used: Vec::new(),
            attachments: (turn.attachments.iter())
                .map(|a| AttachmentOut {
                    kind: a.kind.clone(),
                    media_type: a.media_type.clone(),
                })
                .collect(),
            truncated: true,
            total_chars: total,
            next_offset: Some(total),
            next_tool_offset: Some(all.len()),
            // the longest note it may get
            note: Some(format!(
                "{0} of {0} tool calls left out; read them with tool_offset={0}; text shortened; read on with char_offset={total}",
                all.len()
            )),
        };
        // tool calls get at most a third of what the envelope leaves
        let tools_room = max_chars.saturating_sub(json_len(&out)) / 3;
        let mut used = 0;
        for t in &all {
            used += json_len(t) + 1;
            if used > tools_room {
                break;
            }
            out.tools_used.push(t.clone());
        }
        if json_len(&out) + MIN_TEXT > max_chars {
            // a tight budget: the text comes first
            out.timestamp = None;
            out.tools_used.clear();
            out.attachments.clear();
        }
        // in the tightest budgets the note goes too (next_offset says where to read on)
        let quiet = json_len(&out) + MIN_TEXT > max_chars;
        if quiet {
            out.note = None;
        }
        let kept = out.tools_used.len();
        let fields = [turn.user_text.as_str(), turn.assistant_text.as_str()];
        let mut room = max_chars.saturating_sub(json_len(&out)).max(6);
        loop {
            let w = budget::window(&fields, char_offset, room);
            out.total_chars = w.total_chars;
            out.next_offset = w.next_offset;
            out.truncated = w.truncated || kept < all.len();
            out.next_tool_offset = (kept < all.len()).then_some(kept);
            out.note = if quiet {
                None
            } else {
                turn_note(all.len() - kept, all.len(), kept, &w)
            };
            let mut texts = w.fields.into_iter();
            out.user_text = texts.next().unwrap_or_default();
            out.assistant_text = texts.next().unwrap_or_default();
            let len = json_len(&out);
            if len <= max_chars || room <= 6 {
                return out;
            }
            room = room.saturating_sub(len - max_chars).max(6);
        }
    }
}

impl TurnOut {
    /// The turn's tool calls from `from` on, as many as fit in `max_chars` (at least one,
    /// shortened if need be), without the text: how calls left out of a turn are read.
    pub(crate) fn tool_page(
        conv: &Conversation,
        turn: &Turn,
        max_chars: usize,
        from: usize,
    ) -> Self {
        let calls: Vec<ToolUsed> = turn.tools.iter().map(ToolUsed::from_call).collect();
        let from = from.min(calls.len());
        let total = turn.user_text.chars().count() + turn.assistant_text.chars().count();
        let mut out = TurnOut {
            session_id: conv.id.clone(),
            turn_number: turn.number,
            timestamp: None,
            user_text: String::new(),
            assistant_text: String::new(),
            tools_used: Vec::new(),
            attachments: Vec::new(),
            truncated: true,
            total_chars: total,
            next_offset: Some(0),
            next_tool_offset: Some(calls.len()),
            // the longest note it may get
            note: Some(format!(
                "tool calls {0}-{0} of {0}; text left out (char_offset=0 reads it)",
                calls.len()
            )),
        };
        let room = max_chars.saturating_sub(json_len(&out));
        let mut used = 0;
        for t in &calls[from..] {
            used += json_len(t) + 1;
            if used > room && !out.tools_used.is_empty() {
                break;
            }
            out.tools_used.push(t.clone());
        }
        // one call too long for the budget: its strings shortened until it fits
        for width in [80, 40, 12, 0] {
            if json_len(&out) <= max_chars {
                break;
            }
            if let Some(t) = out.tools_used.first_mut() {
                t.tool = budget::clip(&t.tool, width.max(12));
                for f in [
                    &mut t.file,
                    &mut t.command,
                    &mut t.pattern,
                    &mut t.agent_type,
                    &mut t.description,
                    &mut t.query,
                    &mut t.url,
                    &mut t.action,
                ]
                .into_iter()
                .flatten()
                {
                    *f = budget::clip(f, width);
                }
            }
        }
        let end = from + out.tools_used.len();
        out.next_tool_offset = (end < calls.len()).then_some(end);
        out.next_offset = (total > 0).then_some(0);
        out.note = Some(if out.tools_used.is_empty() {
            format!("no tool calls from {from} on ({} in all)", calls.len())
        } else {
            format!(
                "tool calls {}-{end} of {}; text left out (char_offset=0 reads it)",
                from + 1,
                calls.len()
            )
        });
        out
    }
}

/// The conversation with this id, or the error the tools report.
pub(crate) fn find_conversation<'a>(
    snap: &'a Snapshot,
    id: &str,
) -> Result<&'a std::sync::Arc<Conversation>, ToolError> {
    snap.catalog.by_id(id).ok_or_else(|| {
        ToolError::new(format!(
            "Unknown session_id: {id}. Use list_conversations or search_conversations to find valid ids.{}",
            super::progress::hint(snap)
        ))
    })
}

pub(crate) fn run(snap: &Snapshot, p: ReadTurnParams) -> Result<TurnOut, ToolError> {
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
    let tool_offset = match p.tool_offset {
        None => None,
        Some(o) if o >= 0 => Some(o as usize),
        Some(o) => {
            return Err(ToolError::new(format!(
                "`tool_offset` must be 0 or more (got {o})."
            )));
        }
    };
    // a transcripts directory that yields nothing is named here too (the turn may come from
    // the store or another source), in room taken from the turn; not in the tightest budgets
    let roots = super::roots::note(snap, max_chars < 1500)
        .map(|n| (json_len(&n) + NOTE_FIELD, n))
        .filter(|(len, _)| max_chars >= len + ROOTS_MIN_TURN);
    let room = max_chars - roots.as_ref().map_or(0, |(len, _)| *len);
    let mut out = match tool_offset {
        None => TurnOut::new(conv, &turn, room, char_offset),
        Some(o) => TurnOut::tool_page(conv, &turn, room, o),
    };
    if let Some((_, n)) = roots {
        out.note = super::progress::join(out.note, n);
    }
    Ok(out)
}

/// JSON a note adds beyond its string: `,"note":` and the space that joins it to another.
const NOTE_FIELD: usize = 9;

/// Fewest characters left for the turn itself when a directory's note is added.
pub(crate) const ROOTS_MIN_TURN: usize = 400;

pub(crate) const DEF: ToolDef = ToolDef {
    name: "read_turn",
    title: "Read one turn",
    description: DESCRIPTION,
    lane: Lane::Heavy,
    input: input_schema::<ReadTurnParams>,
    output: output_schema::<TurnOut>,
    call,
};

fn call(ctx: &Ctx<'_>, args: JsonObject) -> Result<serde_json::Value, ToolError> {
    super::invoke(DEF.name, args, |p| run(ctx.snap, p))
}
