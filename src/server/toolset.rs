//! What a tool is as served: its definition (name, description, schemas, how it runs), its
//! `tools/list` entry with portable schemas, and argument checks against them. The tools
//! themselves and their list are in [`super::tools`].
use super::ToolError;
use super::schema;
use crate::corpus::{Shared, Snapshot};
use crate::index::Stop;
use crate::live::LiveStatus;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// Where a tool call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lane {
    /// Cheap and bounded (status): never waits behind heavy calls.
    Light,
    /// Searches and reads: at most a few at a time.
    Heavy,
}

/// What a tool call sees: the snapshot it answers from, the indexer's state as of now, and
/// when to stop.
pub(crate) struct Ctx<'a> {
    pub snap: &'a Snapshot,
    pub shared: &'a Shared,
    pub live: &'a LiveStatus,
    pub stop: &'a Stop,
}

/// How a tool call is carried out: arguments in, JSON out.
pub(crate) type Call = fn(&Ctx<'_>, JsonObject) -> Result<Value, ToolError>;

/// One tool.
pub(crate) struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub lane: Lane,
    /// The schemars schemas of the arguments and the result.
    pub input: fn() -> Arc<JsonObject>,
    pub output: fn() -> Arc<JsonObject>,
    pub call: Call,
}

/// The `tools/list` entry of a tool, with portable schemas.
pub(crate) fn build(d: &ToolDef) -> Tool {
    // closed sets are typed (`server::choice`): their schemas carry their `enum`; results
    // name their source as a plain string (the list of formats grows, and a model reads it
    // from the argument's enum already)
    let input = schema::portable(&(d.input)(), true);
    let output = schema::portable(&(d.output)(), false);
    Tool::new(d.name, d.description, Arc::new(input))
        .with_raw_output_schema(Arc::new(output))
        .with_annotations(
            ToolAnnotations::with_title(d.title)
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// Parses the arguments into `P`, checked first against the tool's portable input schema
/// (`input`), and runs `f`, serializing its result.
pub(crate) fn invoke<P, R>(
    input: Option<&JsonObject>,
    args: JsonObject,
    f: impl FnOnce(P) -> Result<R, ToolError>,
) -> Result<Value, ToolError>
where
    P: DeserializeOwned,
    R: Serialize,
{
    let mut args = args;
    if let Some(schema) = input {
        check_arg_types(&mut args, schema)?;
    }
    let params: P = serde_json::from_value(Value::Object(args)).map_err(|e| {
        let msg = e.to_string();
        if msg.starts_with('`') {
            // a check that names its argument and what it takes (`server::choice`) says it
            // all; serde's own messages never start with a backtick
            ToolError::new(msg)
        } else {
            ToolError::new(format!(
                "Invalid arguments: {e}. Check the tool's input schema."
            ))
        }
    })?;
    serde_json::to_value(f(params)?).map_err(|e| ToolError::new(format!("internal error: {e}")))
}

/// JSON type names a value satisfies.
fn json_types(v: &Value) -> &'static [&'static str] {
    match v {
        Value::Null => &["null"],
        Value::Bool(_) => &["boolean"],
        Value::Number(n) if n.is_i64() || n.is_u64() => &["integer", "number"],
        Value::Number(_) => &["number"],
        Value::String(_) => &["string"],
        Value::Array(_) => &["array"],
        Value::Object(_) => &["object"],
    }
}

/// Checks each argument against the type its schema property declares, so that a mistake names
/// the parameter ("`limit` must be an integer (got "ten")") and required ones are present. A
/// null optional argument counts as absent.
fn check_arg_types(args: &mut JsonObject, schema: &JsonObject) -> Result<(), ToolError> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    args.retain(|k, v| !v.is_null() || required.contains(&k.as_str()));
    for name in &required {
        if args.get(*name).is_none_or(Value::is_null) {
            return Err(ToolError::new(format!("`{name}` is required.")));
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    for (name, value) in args.iter() {
        let Some(prop) = props.and_then(|p| p.get(name)) else {
            continue;
        };
        let Some(expected) = prop.get("type").and_then(Value::as_str) else {
            continue;
        };
        if !json_types(value).contains(&expected) {
            let shown = crate::transcript::tools::cut_chars(&value.to_string(), 60);
            return Err(ToolError::new(format!(
                "`{name}` must be {} (got {shown}).",
                match expected {
                    "integer" => "an integer",
                    "string" => "a string",
                    "boolean" => "true or false",
                    "object" => "an object",
                    "array" => "an array",
                    other => other,
                }
            )));
        }
    }
    Ok(())
}
