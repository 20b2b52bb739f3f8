//! `search_conversations`: BM25 keyword search over every indexed turn.
use super::{check_limit, iso};
use crate::corpus::Snapshot;
use crate::corpus::query::SearchRequest;
use crate::server::{ConversationServer, ToolError, input_schema, output_schema};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

pub const DESCRIPTION: &str = "Search past coding-agent conversations (all indexed sessions and \
sub-agents) by keywords, ranked with BM25. Stack distinctive keywords and exact identifiers: \
`watchdog reindex debounce`, `notify_debouncer`, `E0502`, `src/index/mod.rs`, `--max-staleness-ms`. \
Identifiers match whole and by their parts (snake_case, CamelCase, paths, flags); matching is \
case-insensitive; any term may match and turns matching more and rarer terms rank higher. Each \
result names the session and turn: fetch the full text with read_turn.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchParams {
    /// Keywords to search for.
    pub query: String,
    /// Maximum number of results (1-100, default 10).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Only search this conversation (a session id or a sub-agent id).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Only search projects whose name, directory or cwd contains this (case-insensitive).
    #[serde(default)]
    pub project: Option<String>,
    /// Only search transcripts of this agent: claude, openclaw, codex, gemini or opencode.
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchResult {
    /// Conversation id: pass it to read_turn / read_conversation.
    pub session_id: String,
    /// Which agent wrote the transcript (claude, codex, ...).
    pub source: String,
    pub project: String,
    pub turn_number: u32,
    /// BM25 score, rounded to 4 decimals.
    pub score: f64,
    /// The start of the turn's text.
    pub snippet: String,
    /// When the turn started (ISO 8601, UTC).
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// Set when the hit is in a sub-agent transcript: the session that spawned it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_description: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchResponse {
    pub results: Vec<SearchResult>,
    pub query: String,
    /// Number of matching turns before `limit` was applied.
    pub total: usize,
}

pub fn run(snap: &Snapshot, p: SearchParams) -> Result<SearchResponse, ToolError> {
    if p.query.trim().is_empty() {
        return Err(ToolError::new(
            "`query` must not be empty: give one or more keywords.",
        ));
    }
    let limit = check_limit(p.limit, 10)?;
    let req = SearchRequest {
        query: p.query.clone(),
        limit,
        offset: 0,
        session_id: p.session_id.clone(),
        project: p.project.clone(),
        source: super::check_source(p.source.as_deref())?,
    };
    if let Some(id) = &p.session_id {
        if snap.catalog.by_id(id).is_none() {
            return Err(ToolError::new(format!(
                "Unknown session_id: {id}. Use list_conversations or search without session_id to find ids."
            )));
        }
    }
    let outcome = snap.search(&req);
    let results = outcome
        .hits
        .into_iter()
        .map(|h| SearchResult {
            session_id: h.conv.id.clone(),
            source: h.conv.source().to_owned(),
            project: h.project,
            turn_number: h.turn,
            score: h.score,
            snippet: h.snippet,
            timestamp: iso(h.timestamp),
            slug: h.conv.meta.slug.clone(),
            parent_session_id: h.conv.parent.clone(),
            agent_type: h.conv.agent_type().map(str::to_owned),
            agent_description: h.conv.agent_description().map(str::to_owned),
        })
        .collect();
    Ok(SearchResponse {
        results,
        query: p.query,
        total: outcome.total,
    })
}

#[tool_router(router = search_router, vis = "pub(crate)")]
impl ConversationServer {
    #[tool(
        name = "search_conversations",
        description = DESCRIPTION,
        input_schema = input_schema::<SearchParams>(),
        output_schema = output_schema::<SearchResponse>(),
        annotations(title = "Search past conversations", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    pub async fn search_conversations(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> CallToolResult {
        self.run(args, run).await
    }
}
