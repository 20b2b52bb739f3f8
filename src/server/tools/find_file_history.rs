//! `find_file_history`: the turns that read or changed a file, newest first.
use super::budget::{self, json_len};
use super::{check_limit, check_offset, check_scope, check_time, iso};
use crate::corpus::Snapshot;
use crate::index::facts;
use crate::server::{ConversationServer, ToolError, input_schema, output_schema};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

pub const DESCRIPTION: &str = "Find the past turns that read, edited or wrote a file: give a path or \
any part of it (`src/index/mod.rs`, `mod.rs`, `index/`; case-insensitive substring). Newest \
first, with the operation, session, project (this_project: the server's own), time and turn \
number; scope=project keeps the server's project only; read the turn with read_turn.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct FileHistoryParams {
    /// A file path or part of one.
    pub path: String,
    /// Maximum number of rows (1-100, default 20).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Skip this many rows (paging; default 0).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Only turns at or after this time: ISO date/datetime or an age like 7d, 12h.
    #[serde(default)]
    pub since: Option<String>,
    /// `project`: only this project's conversations (its directory, below it, or another
    /// worktree of its git repository); `all` (default): every project.
    #[serde(default)]
    pub scope: Option<String>,
    /// Most characters of JSON to return (500-60000, default 6000).
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct FileTouchOut {
    /// The path as the tool call gave it.
    pub path: String,
    /// The strongest operation in that turn: `write` > `edit` > `read`.
    pub operation: String,
    /// Every operation on the path in that turn.
    pub operations: Vec<String>,
    pub session_id: String,
    pub source: String,
    pub project: String,
    /// True when the conversation belongs to the server's project.
    pub this_project: bool,
    pub timestamp: Option<String>,
    pub turn_number: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct FileHistoryResponse {
    pub path: String,
    pub results: Vec<FileTouchOut>,
    pub total: usize,
    pub offset: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when rows were left out to stay within max_chars.
    pub truncated: bool,
    pub complete: bool,
}

pub fn run(snap: &Snapshot, p: FileHistoryParams) -> Result<FileHistoryResponse, ToolError> {
    let needle = p.path.trim();
    if needle.is_empty() {
        return Err(ToolError::new(
            "`path` must not be empty: give a file path or part of one.",
        ));
    }
    let limit = check_limit(p.limit, 20)?;
    let offset = check_offset(p.offset)?;
    let since = check_time("since", p.since.as_deref(), false)?;
    let max_chars = budget::check_max_chars(p.max_chars, budget::SEARCH_DEFAULT)?;
    let scope = check_scope(p.scope.as_deref())?;
    let (total, rows) = snap.file_history(needle, since, scope, offset, limit);
    let mut resp = FileHistoryResponse {
        path: budget::clip(needle, budget::ECHO_CHARS),
        results: Vec::new(),
        total,
        offset,
        next_offset: None,
        truncated: false,
        complete: snap.complete,
    };
    let mut used = json_len(&resp) + 50;
    let rows = rows.into_iter().map(|t| FileTouchOut {
        path: t.path,
        operation: facts::op_name(*t.ops.iter().max().unwrap_or(&facts::OP_READ)).to_owned(),
        operations: t
            .ops
            .iter()
            .map(|&o| facts::op_name(o).to_owned())
            .collect(),
        session_id: t.conv.id.clone(),
        source: t.conv.source().to_owned(),
        project: t.project,
        this_project: t.this_project,
        timestamp: iso(t.timestamp),
        turn_number: t.turn,
        parent_session_id: t.conv.parent.clone(),
    });
    resp.truncated = budget::fill(rows, &mut resp.results, &mut used, max_chars);
    resp.next_offset = budget::next_offset(offset, resp.results.len(), total);
    Ok(resp)
}

#[tool_router(router = file_history_router, vis = "pub(crate)")]
impl ConversationServer {
    #[tool(
        name = "find_file_history",
        description = DESCRIPTION,
        input_schema = input_schema::<FileHistoryParams>(),
        output_schema = output_schema::<FileHistoryResponse>(),
        annotations(title = "Find a file's history", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    pub async fn find_file_history(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> CallToolResult {
        self.run(args, run).await
    }
}
