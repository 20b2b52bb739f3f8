//! `list_conversations`: main sessions, most recently active first.
use super::budget::{self, json_len};
use super::progress::{self, BuildOut};
use super::{check_limit, check_offset, check_source, check_time, iso};
use crate::corpus::Snapshot;
use crate::corpus::browse::{ListRange, Listed};
use crate::corpus::project::Scope;
use crate::server::choice::{self, SourceName};
use crate::server::toolset::{Ctx, Lane, ToolDef};
use crate::server::{ToolError, input_schema, output_schema};
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) const DESCRIPTION: &str = "List past sessions, most recently active first (sub-agents are \
counted in subagent_count), with summary, project, time span, turn count, cwd and git branch. \
Filter by project, source, scope (project: only the server's project; all: default) and \
since/until; page with offset.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ListParams {
    /// Only projects whose name, directory or cwd contains this.
    #[serde(default)]
    pub project: Option<String>,
    /// Only sessions of this agent.
    #[serde(default)]
    pub source: Option<SourceName>,
    /// Sessions per page (1-100, default 50).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Sessions to skip (paging).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Only sessions active at or after: ISO date/datetime or an age (7d).
    #[serde(default)]
    pub since: Option<String>,
    /// Only sessions started before: ISO date (whole day included)/datetime or an age.
    #[serde(default)]
    pub until: Option<String>,
    /// project: only the server's project (its folder, subfolders, git worktrees); all: every
    /// project (default).
    #[serde(default, deserialize_with = "choice::optional")]
    pub scope: Option<Scope>,
    /// Most characters of JSON to return (500-60000, default 20000).
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ListedConversation {
    pub session_id: String,
    /// The agent that wrote the transcript.
    pub source: String,
    pub project: String,
    /// True when the conversation belongs to the server's project.
    pub this_project: bool,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<String>,
    pub turn_count: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
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
pub(crate) struct ListResponse {
    pub conversations: Vec<ListedConversation>,
    /// Sessions matching before paging; a lower bound when total_exact is false.
    pub total: usize,
    pub total_exact: bool,
    pub offset: usize,
    /// Offset of the next page, when more sessions exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when sessions were left out or shortened to fit max_chars.
    pub truncated: bool,
    /// False while the first index build runs.
    pub complete: bool,
    /// Present while the first index build runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub(crate) fn run(snap: &Snapshot, p: ListParams) -> Result<ListResponse, ToolError> {
    let limit = check_limit(p.limit, 50)?;
    let offset = check_offset(p.offset)?;
    let max_chars = budget::check_max_chars(p.max_chars, budget::READ_DEFAULT)?;
    let source = check_source(p.source.as_ref().map(|s| s.0.as_str()))?;
    let range = ListRange {
        project: p
            .project
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty()),
        source: source.as_deref(),
        since: check_time("since", p.since.as_deref(), false)?,
        until: check_time("until", p.until.as_deref(), true)?,
        scope: p.scope.unwrap_or_default(),
    };
    let (total, rows) = snap.list(&range, offset, limit);
    let mut rows: Vec<ListedConversation> = rows.into_iter().map(ListedConversation::of).collect();
    let build = progress::building(snap);
    let short = max_chars < 1500;
    let roots = super::roots::note(snap, short);
    let available = rows.len();
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
        ListResponse {
            conversations: Vec::new(),
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
        let room = budget::room_for_one(max_chars, json_len(&envelope(1, true)));
        shrink(&mut rows[0], room);
        n = 1;
    }
    rows.truncate(n);
    let mut resp = envelope(n, shrunk);
    resp.conversations = rows;
    Ok(resp)
}

impl ListedConversation {
    /// The row of a listed conversation.
    fn of(r: Listed) -> Self {
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
    }
}

/// Shortens a row to at most `room` characters of JSON: optional fields go, then the summary
/// and project are cut.
fn shrink(row: &mut ListedConversation, room: usize) {
    row.slug = None;
    row.cwd = None;
    row.git_branch = None;
    row.first_timestamp = None;
    row.project = budget::clip(&row.project, 40);
    let rest = json_len(&ListedConversation {
        summary: String::new(),
        ..row.clone()
    });
    row.summary = budget::clip_json(&row.summary, room.saturating_sub(rest));
}

pub(crate) const DEF: ToolDef = ToolDef {
    name: "list_conversations",
    title: "List past sessions",
    description: DESCRIPTION,
    lane: Lane::Heavy,
    input: input_schema::<ListParams>,
    output: output_schema::<ListResponse>,
    call,
};

fn call(ctx: &Ctx<'_>, args: JsonObject) -> Result<serde_json::Value, ToolError> {
    super::invoke(DEF.name, args, |p| run(ctx.snap, p))
}
