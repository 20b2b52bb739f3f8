//! `find_file_history`: the turns that read or changed a file, newest first.
use super::budget::{self, json_len};
use super::progress::{self, BuildOut};
use super::{check_limit, check_offset, check_time, iso};
use crate::corpus::Snapshot;
use crate::corpus::project::Scope;
use crate::index::facts;
use crate::server::choice;
use crate::server::toolset::{Ctx, Lane, ToolDef};
use crate::server::{ToolError, input_schema, output_schema};
use crate::transcript::FileOp;
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) const DESCRIPTION: &str = "Find the past turns that read, edited or wrote a file: give a path \
or part of one (`src/index/mod.rs`, `mod.rs`, `index/`; case-insensitive). Newest first, with \
the operation, session, project (this_project: the server's own) and turn number for \
read_turn; scope=project keeps the server's project only.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct FileHistoryParams {
    /// A file path or part of one.
    pub path: String,
    /// Rows per page (1-100, default 20).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Rows to skip (paging).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Only turns at or after: ISO date/datetime or an age (7d, 12h).
    #[serde(default)]
    pub since: Option<String>,
    /// project: only the server's project (its folder, subfolders, git worktrees); all: every
    /// project (default).
    #[serde(default, deserialize_with = "choice::optional")]
    pub scope: Option<Scope>,
    /// Most characters of JSON to return (500-60000, default 6000).
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct FileTouchOut {
    /// The path as the tool call gave it.
    pub path: String,
    /// The strongest operation in that turn (write > edit > read).
    pub operation: FileOp,
    /// Every operation on the path in that turn.
    pub operations: Vec<FileOp>,
    pub session_id: String,
    pub source: String,
    pub project: String,
    /// True when the conversation belongs to the server's project.
    pub this_project: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    pub turn_number: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct FileHistoryResponse {
    pub path: String,
    pub results: Vec<FileTouchOut>,
    /// Rows before paging; a lower bound when total_exact is false.
    pub total: usize,
    pub total_exact: bool,
    pub offset: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when rows were left out or shortened to fit max_chars.
    pub truncated: bool,
    /// False while the first index build runs.
    pub complete: bool,
    /// Present while the first index build runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub(crate) fn run(snap: &Snapshot, p: FileHistoryParams) -> Result<FileHistoryResponse, ToolError> {
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
    let scope = p.scope.unwrap_or_default();
    let (total, rows) = snap.file_history(needle, since, scope, offset, limit);
    let mut rows: Vec<FileTouchOut> = rows
        .into_iter()
        .map(|t| FileTouchOut {
            path: t.path,
            operation: facts::op(*t.ops.iter().max().unwrap_or(&facts::OP_READ)),
            operations: t.ops.iter().map(|&o| facts::op(o)).collect(),
            session_id: t.conv.id.clone(),
            source: t.conv.source().to_owned(),
            project: t.project,
            this_project: t.this_project,
            timestamp: iso(t.timestamp),
            turn_number: t.turn,
            parent_session_id: t.conv.parent.clone(),
        })
        .collect();
    let build = progress::building(snap);
    let short = max_chars < 1500;
    let roots = super::roots::note(snap, short);
    let available = rows.len();
    let echo = budget::clip(needle, budget::echo_chars(max_chars));
    let envelope = |n: usize, shrunk: bool| {
        let next = offset + n;
        let mut note = build.as_ref().map(|b| progress::note(b, short));
        note = progress::join_opt(note, roots.clone());
        if n < available || shrunk {
            note = progress::join(
                note,
                if short {
                    format!("more: offset={next}")
                } else {
                    format!("shortened to fit max_chars={max_chars}; continue with offset={next}")
                },
            );
        }
        FileHistoryResponse {
            path: echo.clone(),
            results: Vec::new(),
            total,
            total_exact: build.is_none(),
            offset,
            next_offset: budget::next_offset(offset, n, total),
            truncated: n < available || shrunk,
            complete: build.is_none(),
            build: build.clone(),
            note,
        }
    };
    let mut n = budget::fitting(&rows, max_chars, |n| json_len(&envelope(n, false)));
    let shrunk = n == 0 && !rows.is_empty();
    if shrunk {
        shrink(
            &mut rows[0],
            budget::room_for_one(max_chars, json_len(&envelope(1, true))),
        );
        n = 1;
    }
    rows.truncate(n);
    let mut resp = envelope(n, shrunk);
    resp.results = rows;
    Ok(resp)
}

/// Shortens a row to at most `room` characters of JSON: optional fields go, then the path is
/// cut.
fn shrink(row: &mut FileTouchOut, room: usize) {
    row.parent_session_id = None;
    row.timestamp = None;
    row.operations.clear();
    row.project = budget::clip(&row.project, 24);
    let rest = json_len(&FileTouchOut {
        path: String::new(),
        ..row.clone()
    });
    row.path = budget::clip_json(&row.path, room.saturating_sub(rest));
}

pub(crate) const DEF: ToolDef = ToolDef {
    name: "find_file_history",
    title: "Find a file's history",
    description: DESCRIPTION,
    lane: Lane::Heavy,
    input: input_schema::<FileHistoryParams>,
    output: output_schema::<FileHistoryResponse>,
    call,
};

fn call(ctx: &Ctx<'_>, args: JsonObject) -> Result<serde_json::Value, ToolError> {
    super::invoke(DEF.name, args, |p| run(ctx.snap, p))
}
