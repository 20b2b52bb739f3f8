//! The MCP tools, one per file. Each file holds the tool's argument and result types (the
//! wire contract and its JSON schemas), its validation, and a `run` function the MCP server and
//! the CLI both call. This module holds their list (what `tools/list` answers) and the
//! argument checks they share.
pub(crate) mod budget;
pub(crate) mod find_file_history;
pub(crate) mod index_status;
pub(crate) mod list;
pub(crate) mod progress;
pub(crate) mod read_conversation;
pub(crate) mod read_turn;
pub(crate) mod recent_context;
pub(crate) mod roots;
pub(crate) mod search;
pub(crate) mod store_out;

use super::ToolError;
use super::toolset::{self, ToolDef};
use crate::util::time::{now_ms, parse_iso, parse_relative};
use rmcp::model::{JsonObject, Tool};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::OnceLock;

/// Every tool, in the order `tools/list` gives them.
pub(crate) fn all() -> [&'static ToolDef; 7] {
    [
        &search::DEF,
        &list::DEF,
        &read_turn::DEF,
        &read_conversation::DEF,
        &find_file_history::DEF,
        &recent_context::DEF,
        &index_status::DEF,
    ]
}

/// The tool called `name`.
pub(crate) fn find(name: &str) -> Option<&'static ToolDef> {
    all().into_iter().find(|t| t.name == name)
}

/// Names of the tools, for messages.
pub(crate) fn names() -> String {
    all().map(|t| format!("`{}`", t.name)).join(", ")
}

/// The `tools/list` answer, built once.
pub(crate) fn listed() -> &'static [Tool] {
    static LIST: OnceLock<Vec<Tool>> = OnceLock::new();
    LIST.get_or_init(|| all().iter().map(|d| toolset::build(d)).collect())
}

/// Parses the arguments of tool `name` into `P` (checked against its listed input schema) and
/// runs `f`, serializing its result.
pub(crate) fn invoke<P, R>(
    name: &str,
    args: JsonObject,
    f: impl FnOnce(P) -> Result<R, ToolError>,
) -> Result<Value, ToolError>
where
    P: DeserializeOwned,
    R: Serialize,
{
    let input = listed()
        .iter()
        .find(|t| t.name == name)
        .map(|t| t.input_schema.as_ref());
    toolset::invoke(input, args, f)
}

/// Largest `limit` any tool accepts; larger values are capped.
pub(crate) const MAX_LIMIT: i64 = 100;

/// Validates a `limit` argument: at least 1, capped at [`MAX_LIMIT`].
pub(crate) fn check_limit(limit: Option<i64>, default: i64) -> Result<usize, ToolError> {
    let limit = limit.unwrap_or(default);
    if limit < 1 {
        return Err(ToolError::new(format!(
            "`limit` must be at least 1 (got {limit}); it is capped at {MAX_LIMIT}."
        )));
    }
    Ok(limit.min(MAX_LIMIT) as usize)
}

/// Validates an `offset` argument: 0 or more.
pub(crate) fn check_offset(offset: Option<i64>) -> Result<usize, ToolError> {
    let offset = offset.unwrap_or(0);
    if offset < 0 {
        return Err(ToolError::new(format!(
            "`offset` must be 0 or more (got {offset})."
        )));
    }
    Ok(offset as usize)
}

/// Formats an optional epoch-ms timestamp for output.
pub(crate) fn iso(ts: Option<i64>) -> Option<String> {
    ts.map(crate::util::time::format_iso)
}

/// Validates a `source` filter against the registered formats.
pub(crate) fn check_source(source: Option<&str>) -> Result<Option<String>, ToolError> {
    match source {
        None => Ok(None),
        Some(s) if crate::transcript::adapter(s).is_some() => Ok(Some(s.to_owned())),
        Some(s) => Err(ToolError::new(format!(
            "Unknown source `{s}`: use one of {}.",
            crate::transcript::format_names()
        ))),
    }
}

/// Parses a `since`/`until` bound: an ISO date (`2026-05-01`), an ISO datetime
/// (`2026-05-01T10:00:00Z`) or a relative age (`7d`, `12h`, `30m`, `2w`) counted back from now.
/// A date-only `until` includes that whole day.
pub(crate) fn check_time(
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
pub(crate) fn source_presence(
    conv: &crate::corpus::catalog::Conversation,
) -> (bool, Option<String>) {
    (conv.gone_since.is_none(), iso(conv.gone_since))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::schema;

    #[test]
    fn every_listed_schema_is_portable() {
        for t in listed() {
            let input = Value::Object(t.input_schema.as_ref().clone());
            assert!(
                schema::non_portable(&input).is_empty(),
                "{}: {input}",
                t.name
            );
            let output = Value::Object(t.output_schema.as_deref().cloned().unwrap_or_default());
            assert!(
                schema::non_portable(&output).is_empty(),
                "{}: {output}",
                t.name
            );
        }
    }
}
