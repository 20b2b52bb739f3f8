//! `list_conversations`: main sessions, most recently active first.
use super::budget::{self, json_len};
use super::{check_limit, check_offset, check_scope, check_source, check_time, iso};
use crate::corpus::Snapshot;
use crate::corpus::browse::ListRange;
use crate::server::{ConversationServer, ToolError, input_schema, output_schema};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

pub const DESCRIPTION: &str = "List past sessions (main sessions only; sub-agent transcripts are \
counted in subagent_count), most recently active first, with summary, project, time span, turn \
count, cwd and git branch. Filter by project (substring of the project name, directory or cwd), source (agent), scope (project: only the server's project, its subfolders and other worktrees of its repository; all: default) and since/until (ISO date/datetime or an age like 7d); page with offset. Output is bounded by max_chars.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ListParams {
    /// Only projects whose name, directory or cwd contains this (case-insensitive).
    #[serde(default)]
    pub project: Option<String>,
    /// Only sessions of this agent, named as in the results' `source` (index_status lists the
    /// sources indexed).
    #[serde(default)]
    pub source: Option<String>,
    /// Maximum number of sessions (1-100, default 50).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Skip this many sessions (paging; default 0).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Only sessions active at or after this time: ISO date/datetime or an age like 7d.
    #[serde(default)]
    pub since: Option<String>,
    /// Only sessions that started before this time (a date includes that whole day).
    #[serde(default)]
    pub until: Option<String>,
    /// `project`: only this project's conversations (its directory, below it, or another
    /// worktree of its git repository); `all` (default): every project.
    #[serde(default)]
    pub scope: Option<String>,
    /// Most characters of JSON to return (500-60000, default 20000).
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ListedConversation {
    pub session_id: String,
    /// Which agent wrote the transcript (claude, codex, ...).
    pub source: String,
    pub project: String,
    /// True when the conversation belongs to the server's project.
    pub this_project: bool,
    pub summary: String,
    pub slug: Option<String>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    pub turn_count: u32,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub subagent_count: usize,
    /// False when the transcript is gone and the conversation lives in the durable store only.
    pub source_present: bool,
    /// Since when the transcript is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_missing_since: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ListResponse {
    pub conversations: Vec<ListedConversation>,
    /// Number of sessions matching before paging.
    pub total: usize,
    pub offset: usize,
    /// Offset of the next page, when more sessions exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when sessions were left out to stay within max_chars.
    pub truncated: bool,
    pub complete: bool,
}

pub fn run(snap: &Snapshot, p: ListParams) -> Result<ListResponse, ToolError> {
    let limit = check_limit(p.limit, 50)?;
    let offset = check_offset(p.offset)?;
    let max_chars = budget::check_max_chars(p.max_chars, budget::READ_DEFAULT)?;
    let source = check_source(p.source.as_deref())?;
    let range = ListRange {
        project: p
            .project
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty()),
        source: source.as_deref(),
        since: check_time("since", p.since.as_deref(), false)?,
        until: check_time("until", p.until.as_deref(), true)?,
        scope: check_scope(p.scope.as_deref())?,
    };
    let (total, rows) = snap.list(&range, offset, limit);
    let mut resp = ListResponse {
        conversations: Vec::new(),
        total,
        offset,
        next_offset: None,
        truncated: false,
        complete: snap.complete,
    };
    let mut used = json_len(&resp) + 50;
    let rows = rows.into_iter().map(|r| {
        let (source_present, source_missing_since) = super::source_presence(&r.conv);
        ListedConversation {
            session_id: r.conv.id.clone(),
            source: r.conv.source().to_owned(),
            project: r.project,
            this_project: r.this_project,
            summary: r.conv.meta.summary(),
            slug: r.conv.meta.slug.clone(),
            first_timestamp: iso(r.conv.meta.first_ts),
            last_timestamp: iso(r.conv.meta.last_ts),
            turn_count: r.conv.turn_count,
            cwd: r.conv.meta.cwd.clone(),
            git_branch: r.conv.meta.git_branch.clone(),
            subagent_count: r.subagent_count,
            source_present,
            source_missing_since,
        }
    });
    resp.truncated = budget::fill(rows, &mut resp.conversations, &mut used, max_chars);
    resp.next_offset = budget::next_offset(offset, resp.conversations.len(), total);
    Ok(resp)
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
