//! The MCP tools, one per file. Each file holds the tool's argument and result types (the
//! wire contract and its JSON schemas), its validation, and a `run` function the MCP server and
//! the CLI both call. This module holds the argument checks and output budgets they share.
pub mod budget;
pub mod find_file_history;
pub mod index_status;
pub mod list;
pub mod progress;
pub mod read_conversation;
pub mod read_turn;
pub mod recent_context;
pub mod roots;
pub mod search;
pub mod store_out;

use super::ToolError;
use crate::util::time::{now_ms, parse_iso, parse_relative};

/// Largest `limit` any tool accepts; larger values are capped.
pub const MAX_LIMIT: i64 = 100;

/// Validates a `limit` argument: at least 1, capped at [`MAX_LIMIT`].
pub fn check_limit(limit: Option<i64>, default: i64) -> Result<usize, ToolError> {
    let limit = limit.unwrap_or(default);
    if limit < 1 {
        return Err(ToolError::new(format!(
            "`limit` must be at least 1 (got {limit}); it is capped at {MAX_LIMIT}."
        )));
    }
    Ok(limit.min(MAX_LIMIT) as usize)
}

/// Validates an `offset` argument: 0 or more.
pub fn check_offset(offset: Option<i64>) -> Result<usize, ToolError> {
    let offset = offset.unwrap_or(0);
    if offset < 0 {
        return Err(ToolError::new(format!(
            "`offset` must be 0 or more (got {offset})."
        )));
    }
    Ok(offset as usize)
}

/// Formats an optional epoch-ms timestamp for output.
pub fn iso(ts: Option<i64>) -> Option<String> {
    ts.map(crate::util::time::format_iso)
}

/// Validates a `source` filter against the registered formats.
pub fn check_source(source: Option<&str>) -> Result<Option<String>, ToolError> {
    match source {
        None => Ok(None),
        Some(s) if crate::transcript::adapter(s).is_some() => Ok(Some(s.to_owned())),
        Some(s) => Err(ToolError::new(format!(
            "Unknown source `{s}`: use one of {}.",
            crate::transcript::format_names()
        ))),
    }
}

/// Validates a `scope` argument: `project` (this project's conversations only) or `all`
/// (the default).
pub fn check_scope(scope: Option<&str>) -> Result<crate::corpus::project::Scope, ToolError> {
    use crate::corpus::project::Scope;
    match scope.map(|s| s.trim().to_lowercase()).as_deref() {
        None | Some("") | Some("all") => Ok(Scope::All),
        Some("project") => Ok(Scope::Project),
        Some(other) => Err(ToolError::new(format!(
            "`scope` must be `project` or `all` (got `{other}`)."
        ))),
    }
}

/// Parses a `since`/`until` bound: an ISO date (`2026-05-01`), an ISO datetime
/// (`2026-05-01T10:00:00Z`) or a relative age (`7d`, `12h`, `30m`, `2w`) counted back from now.
/// A date-only `until` includes that whole day.
pub fn check_time(
    name: &str,
    value: Option<&str>,
    end_of_day: bool,
) -> Result<Option<i64>, ToolError> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    if let Some(age) = parse_relative(v) {
        return Ok(Some(now_ms() - age));
    }
    match parse_iso(v) {
        Some(ms) if end_of_day && v.len() == 10 => Ok(Some(ms + 86_400_000)),
        Some(ms) => Ok(Some(ms)),
        None => Err(ToolError::new(format!(
            "`{name}` must be an ISO date (2026-05-01), an ISO datetime (2026-05-01T10:00:00Z) or a relative age like 7d, 12h, 30m (got `{v}`)."
        ))),
    }
}

/// Whether a conversation's transcript still exists, and since when it does not.
pub fn source_presence(conv: &crate::corpus::catalog::Conversation) -> (bool, Option<String>) {
    (conv.gone_since.is_none(), iso(conv.gone_since))
}
