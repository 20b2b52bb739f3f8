//! `list_conversations`: main sessions, most recently active first.
use super::{check_limit, iso};
use crate::corpus::Snapshot;
use crate::server::{ConversationServer, ToolError, input_schema, output_schema};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

pub const DESCRIPTION: &str = "List past sessions (main sessions only; sub-agent transcripts are \
counted in subagent_count), most recently active first, with summary, project, time span, turn \
count, cwd and git branch. Filter by project (substring of the project name, directory or cwd).";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ListParams {
    /// Only projects whose name, directory or cwd contains this (case-insensitive).
    #[serde(default)]
    pub project: Option<String>,
    /// Only sessions of this agent: claude, openclaw, codex, gemini or opencode.
    #[serde(default)]
    pub source: Option<String>,
    /// Maximum number of sessions (1-100, default 50).
    #[serde(default)]
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ListedConversation {
    pub session_id: String,
    /// Which agent wrote the transcript (claude, codex, ...).
    pub source: String,
    pub project: String,
    pub summary: String,
    pub slug: Option<String>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    pub turn_count: u32,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub subagent_count: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ListResponse {
    pub conversations: Vec<ListedConversation>,
    /// Number of sessions matching before `limit` was applied.
    pub total: usize,
}

pub fn run(snap: &Snapshot, p: ListParams) -> Result<ListResponse, ToolError> {
    let limit = check_limit(p.limit, 50)?;
    let source = super::check_source(p.source.as_deref())?;
    let (total, rows) = snap.list(p.project.as_deref(), source.as_deref(), 0, limit);
    let conversations = rows
        .into_iter()
        .map(|r| ListedConversation {
            session_id: r.conv.id.clone(),
            source: r.conv.source().to_owned(),
            project: r.project,
            summary: r.conv.meta.summary(),
            slug: r.conv.meta.slug.clone(),
            first_timestamp: iso(r.conv.meta.first_ts),
            last_timestamp: iso(r.conv.meta.last_ts),
            turn_count: r.conv.turn_count,
            cwd: r.conv.meta.cwd.clone(),
            git_branch: r.conv.meta.git_branch.clone(),
            subagent_count: r.subagent_count,
        })
        .collect();
    Ok(ListResponse {
        conversations,
        total,
    })
}

#[tool_router(router = list_router, vis = "pub(crate)")]
impl ConversationServer {
    #[tool(
        name = "list_conversations",
        description = DESCRIPTION,
        input_schema = input_schema::<ListParams>(),
        output_schema = output_schema::<ListResponse>(),
        annotations(title = "List past sessions", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    pub async fn list_conversations(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> CallToolResult {
        self.run(args, run).await
    }
}
