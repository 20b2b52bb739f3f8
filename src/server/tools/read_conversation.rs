//! `read_conversation`: a page of consecutive turns of one conversation.
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
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ConversationOut {
    pub session_id: String,
    pub project: String,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub total_turns: u32,
    pub offset: usize,
    pub limit: usize,
    pub turns: Vec<TurnOut>,
}

pub fn run(snap: &Snapshot, p: ReadConversationParams) -> Result<ConversationOut, ToolError> {
    let conv = find_conversation(snap, &p.session_id)?;
    let offset = check_offset(p.offset)?;
    let limit = check_limit(p.limit, 10)?;
    let from = offset.min(conv.turn_count as usize) as u32;
    let to = (offset + limit).min(conv.turn_count as usize) as u32;
    let turns = snap
        .read_turns(conv, from, to)
        .map_err(|e| ToolError::new(e.to_string()))?;
    Ok(ConversationOut {
        session_id: conv.id.clone(),
        project: snap.project_of(conv),
        cwd: conv.meta.cwd.clone(),
        git_branch: conv.meta.git_branch.clone(),
        total_turns: conv.turn_count,
        offset,
        limit,
        turns: turns.into_iter().map(|t| TurnOut::new(conv, t)).collect(),
    })
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
        self.run(args, run).await
    }
}
