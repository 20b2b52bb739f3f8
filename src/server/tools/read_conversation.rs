//! `read_conversation`: a page of consecutive turns of one conversation.
use super::budget::{self, json_len};
use super::read_turn::{TurnOut, find_conversation};
use super::{check_limit, check_offset};
use crate::corpus::Snapshot;
use crate::server::{ConversationServer, ToolError, input_schema, output_schema};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

pub const DESCRIPTION: &str = "Read consecutive turns of a past conversation (prompts, replies, \
tools used), starting at `offset` (default 0), `limit` turns at a time (default 10). \
total_turns tells how far to page.";

/// Smallest share of the budget worth giving a turn.
const MIN_TURN_CHARS: usize = 250;
/// Share the first turn may take even when many turns were asked for.
const FIRST_TURN_CHARS: usize = 1500;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ReadConversationParams {
    /// Conversation id from search_conversations or list_conversations.
    pub session_id: String,
    /// First turn to return (0-based, default 0).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Number of turns (1-100, default 10).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Most characters of JSON to return (500-60000, default 20000); long turns are shortened
    /// (head and tail kept) and turns that do not fit are left for the next page.
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ConversationOut {
    pub session_id: String,
    pub project: String,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    /// False when the transcript is gone and the turns come from the durable store.
    pub source_present: bool,
    /// Since when the transcript is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_missing_since: Option<String>,
    pub total_turns: u32,
    pub offset: usize,
    pub limit: usize,
    pub turns: Vec<TurnOut>,
    /// Pass as `offset` to read the next turns, when more exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when turns were shortened or left out to stay within max_chars.
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub fn run(snap: &Snapshot, p: ReadConversationParams) -> Result<ConversationOut, ToolError> {
    let conv = find_conversation(snap, &p.session_id)?;
    let offset = check_offset(p.offset)?;
    let limit = check_limit(p.limit, 10)?;
    let max_chars = budget::check_max_chars(p.max_chars, budget::READ_DEFAULT)?;
    let from = offset.min(conv.turn_count as usize) as u32;
    let to = (offset + limit).min(conv.turn_count as usize) as u32;
    let turns = snap
        .read_turns(conv, from, to)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let (source_present, source_missing_since) = super::source_presence(conv);
    let mut out = ConversationOut {
        session_id: conv.id.clone(),
        project: snap.project_of(conv),
        cwd: conv.meta.cwd.clone(),
        git_branch: conv.meta.git_branch.clone(),
        source_present,
        source_missing_since,
        total_turns: conv.turn_count,
        offset,
        limit,
        turns: Vec::new(),
        next_offset: None,
        truncated: false,
        note: None,
    };
    let envelope = json_len(&out) + 200;
    // each requested turn gets an equal share; a turn that needs less leaves room for the rest
    let mut used = envelope;
    let count = turns.len();
    for (i, t) in turns.into_iter().enumerate() {
        let left = max_chars.saturating_sub(used);
        // an equal share of what is left, but enough for the first turn to say something
        let share = (left / (count - i).max(1)).max(left.min(FIRST_TURN_CHARS));
        if share < MIN_TURN_CHARS {
            out.truncated = true;
            break;
        }
        let turn = TurnOut::new(conv, t, share, None);
        let len = json_len(&turn) + 1;
        if used + len > max_chars {
            out.truncated = true;
            break;
        }
        used += len;
        out.truncated |= turn.truncated;
        out.turns.push(turn);
    }
    let next = offset + out.turns.len();
    if next < conv.turn_count as usize {
        out.next_offset = Some(next);
    }
    if out.truncated {
        out.note = Some(format!(
            "shortened to fit max_chars={max_chars}: long turns keep head and tail (read_turn with char_offset reads one whole){}",
            match out.next_offset {
                Some(n) if out.turns.len() < (to - from) as usize =>
                    format!("; continue with offset={n}"),
                _ => String::new(),
            }
        ));
    }
    Ok(out)
}

#[tool_router(router = read_conversation_router, vis = "pub(crate)")]
impl ConversationServer {
    #[tool(
        name = "read_conversation",
        description = DESCRIPTION,
        input_schema = input_schema::<ReadConversationParams>(),
        output_schema = output_schema::<ConversationOut>(),
        annotations(title = "Read a conversation", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    pub async fn read_conversation(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> CallToolResult {
        self.run_blocking(args, run).await
    }
}
