//! The MCP tools, one per file. Each file holds the tool's argument and result types (the
//! wire contract and its JSON schemas), its validation, and a `run` function the MCP server and
//! the CLI both call.
pub mod index_status;
pub mod list;
pub mod read_conversation;
pub mod read_turn;
pub mod search;

use super::ToolError;

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
            crate::cli::sources::format_names()
        ))),
    }
}
