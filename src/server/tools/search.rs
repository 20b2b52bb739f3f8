//! `search_conversations`: BM25 search over every indexed turn, with query operators, filters,
//! paging, match-centred snippets and an output budget.
use super::budget::{self, json_len};
use super::{check_limit, check_offset, check_source, check_time, iso};
use crate::corpus::Snapshot;
use crate::corpus::query::{MatchRole, SearchRequest, SortOrder};
use crate::server::{ConversationServer, ToolError, input_schema, output_schema};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

pub const DESCRIPTION: &str = "Search past coding-agent conversations (all indexed sessions and \
sub-agents) by keywords, ranked with BM25. Stack distinctive keywords and exact identifiers: \
`watchdog reindex debounce`, `notify_debouncer`, `E0502`, `src/index/mod.rs`, `--max-staleness-ms`. \
Syntax: plain keywords (any may match; turns matching more and rarer terms rank higher), \
\"exact phrase\" (must appear), -word or -\"phrase\" (must not appear), prefix* (any word starting \
so). Identifiers match whole and by their parts (snake_case, CamelCase, paths, flags); \
case-insensitive. Filters: since/until (2026-05-01, 2026-05-01T10:00:00Z, or 7d/12h/30m ago), \
git_branch, role (user|assistant: where the match must be), tool (turns that used it), file \
(turns whose tool calls touched a path containing it), source (agent), project, session_id. \
sort=relevance|recent; page with offset. Each result has a snippet centred on the matches and \
the matched_terms; read the whole turn with read_turn. Output is bounded by max_chars.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SearchParams {
    /// Keywords, "exact phrases", -excluded words, prefix*.
    pub query: String,
    /// Maximum number of results (1-100, default 10).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Skip this many results (paging; default 0).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Only search this conversation (a session id or a sub-agent id).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Only projects whose name, directory or cwd contains this (case-insensitive).
    #[serde(default)]
    pub project: Option<String>,
    /// Only transcripts of this agent: claude, openclaw, codex, gemini or opencode.
    #[serde(default)]
    pub source: Option<String>,
    /// Only turns at or after this time: ISO date/datetime or an age like 7d, 12h.
    #[serde(default)]
    pub since: Option<String>,
    /// Only turns before this time (a date includes that whole day), or an age like 2d.
    #[serde(default)]
    pub until: Option<String>,
    /// Only sessions on this git branch (case-insensitive).
    #[serde(default)]
    pub git_branch: Option<String>,
    /// Where the match must be: `user` (the prompt) or `assistant` (the reply).
    #[serde(default)]
    pub role: Option<String>,
    /// Only turns that used this tool (e.g. Bash, Edit).
    #[serde(default)]
    pub tool: Option<String>,
    /// Only turns whose tool calls read or changed a path containing this.
    #[serde(default)]
    pub file: Option<String>,
    /// `relevance` (default) or `recent` (newest first).
    #[serde(default)]
    pub sort: Option<String>,
    /// Most characters of JSON to return (500-60000, default 6000).
    #[serde(default)]
    pub max_chars: Option<i64>,
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
    /// About 300 characters around the densest cluster of matches.
    pub snippet: String,
    /// The query's keywords, phrases and prefixes this turn matched.
    pub matched_terms: Vec<String>,
    /// When the turn started (ISO 8601, UTC).
    pub timestamp: Option<String>,
    /// Set when the terms occur only in tool names, file paths or commands of the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
    /// Number of matching turns (duplicates collapsed) before paging. On large indexes a
    /// broad query stops counting matches that cannot rank: then `total_exact` is false and
    /// `total` is a lower bound.
    pub total: usize,
    pub total_exact: bool,
    pub offset: usize,
    /// Offset of the next page, when more results exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when results were left out to stay within max_chars.
    pub truncated: bool,
    /// False while the first index build is still running (results are partial).
    pub complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Validates the arguments into a domain request.
pub fn request(snap: &Snapshot, p: &SearchParams) -> Result<SearchRequest, ToolError> {
    if p.query.trim().is_empty() {
        return Err(ToolError::new(
            "`query` must not be empty: give one or more keywords.",
        ));
    }
    if let Some(id) = &p.session_id {
        if snap.catalog.by_id(id).is_none() {
            return Err(ToolError::new(format!(
                "Unknown session_id: {id}. Use list_conversations or search without session_id to find ids."
            )));
        }
    }
    let role = match p.role.as_deref().map(str::to_lowercase).as_deref() {
        None | Some("") => None,
        Some("user") => Some(MatchRole::User),
        Some("assistant") => Some(MatchRole::Assistant),
        Some(other) => {
            return Err(ToolError::new(format!(
                "`role` must be `user` or `assistant` (got `{other}`)."
            )));
        }
    };
    let sort = match p.sort.as_deref().map(str::to_lowercase).as_deref() {
        None | Some("") | Some("relevance") => SortOrder::Relevance,
        Some("recent") => SortOrder::Recent,
        Some(other) => {
            return Err(ToolError::new(format!(
                "`sort` must be `relevance` or `recent` (got `{other}`)."
            )));
        }
    };
    let nonempty = |v: &Option<String>| {
        v.as_ref()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    Ok(SearchRequest {
        query: p.query.clone(),
        limit: check_limit(p.limit, 10)?,
        offset: check_offset(p.offset)?,
        session_id: p.session_id.clone(),
        project: nonempty(&p.project),
        source: check_source(p.source.as_deref())?,
        since: check_time("since", p.since.as_deref(), false)?,
        until: check_time("until", p.until.as_deref(), true)?,
        git_branch: nonempty(&p.git_branch),
        role,
        tool: nonempty(&p.tool),
        file: nonempty(&p.file),
        sort,
        stop: crate::index::Stop::default(),
    })
}

pub fn run(snap: &Snapshot, p: SearchParams) -> Result<SearchResponse, ToolError> {
    let max_chars = budget::check_max_chars(p.max_chars, budget::SEARCH_DEFAULT)?;
    let req = request(snap, &p)?;
    let outcome = snap.search(&req);
    let mut resp = SearchResponse {
        results: Vec::new(),
        query: budget::clip(&p.query, budget::ECHO_CHARS),
        total: outcome.total,
        total_exact: outcome.total_exact,
        offset: req.offset,
        next_offset: None,
        truncated: false,
        complete: snap.complete,
        note: (!outcome.searchable).then(|| {
            "The query has nothing to search for (only exclusions or stopwords); add a keyword."
                .to_owned()
        }),
    };
    // room for the envelope fields that may still be set
    let mut used = json_len(&resp) + 200;
    let available = outcome.hits.len();
    let rows = outcome.hits.into_iter().map(|h| SearchResult {
        session_id: h.conv.id.clone(),
        source: h.conv.source().to_owned(),
        project: h.project,
        turn_number: h.turn,
        score: h.score,
        snippet: h.snippet,
        matched_terms: h.matched_terms,
        timestamp: iso(h.timestamp),
        note: h
            .tools_only
            .then(|| "matched only in tool names, file paths or commands".to_owned()),
        slug: h.conv.meta.slug.clone(),
        parent_session_id: h.conv.parent.clone(),
        agent_type: h.conv.agent_type().map(str::to_owned),
        agent_description: h.conv.agent_description().map(str::to_owned),
    });
    resp.truncated = budget::fill(rows, &mut resp.results, &mut used, max_chars);
    let shown = req.offset + resp.results.len();
    resp.next_offset = budget::next_offset(req.offset, resp.results.len(), resp.total);
    if resp.truncated {
        resp.note = Some(format!(
            "{} of {} results on this page did not fit in max_chars={max_chars}; continue with offset={shown} or raise max_chars.",
            available - resp.results.len(),
            available
        ));
    }
    Ok(resp)
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
