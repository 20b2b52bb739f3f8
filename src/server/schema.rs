//! Tool schemas every MCP host accepts: schemars' output post-processed in one place. Nested
//! definitions are inlined (no `$ref`/`$defs`), non-standard `format` values (`uint64`,
//! `int64`, ...) and titles are dropped, optional values are plain types that are simply not
//! required (no `[X, "null"]` type arrays, which Gemini-family hosts reject). Closed sets
//! carry their `enum` from their types ([`super::choice`]); nothing is patched by field name.
use rmcp::model::JsonObject;
use serde_json::{Map, Value};

/// `format` values defined by JSON Schema; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "uuid",
    "regex",
];

/// The portable form of a schemars schema. `describe`: keep descriptions (argument schemas,
/// which models read); result schemas are for validation and lose them.
pub(crate) fn portable(schema: &JsonObject, describe: bool) -> JsonObject {
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut root = Value::Object(schema.clone());
    clean(&mut root, &defs, describe, 0);
    match root {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// Cleans one schema node in place (depth bounds a runaway `$ref` cycle).
fn clean(node: &mut Value, defs: &Map<String, Value>, describe: bool, depth: usize) {
    let Value::Object(obj) = node else { return };
    if depth > 32 {
        return;
    }
    // `$ref` (alone or beside a description): the definition, inlined
    if let Some(Value::Object(target)) = obj.remove("$ref").and_then(|r| {
        r.as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| defs.get(name).cloned())
    }) {
        for (k, v) in target {
            obj.entry(k).or_insert(v);
        }
    }
    // Option<Struct>: `anyOf: [{...}, {"type": "null"}]` becomes the struct
    if let Some(Value::Array(alts)) = obj.get("anyOf") {
        let mut rest: Vec<Value> = alts
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .cloned()
            .collect();
        if rest.len() == 1 {
            obj.remove("anyOf");
            if let Some(Value::Object(inner)) = rest.pop() {
                for (k, v) in inner {
                    obj.entry(k).or_insert(v);
                }
            }
            return clean(node, defs, describe, depth + 1);
        }
    }
    // `minimum: 0` only restates an unsigned Rust type
    for key in ["$defs", "$schema", "title", "default", "minimum"] {
        obj.remove(key);
    }
    if !describe {
        obj.remove("description");
    }
    if obj
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
    {
        obj.remove("format");
    }
    // an optional closed set lists null among its values: absent says it
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::Array(types)) = obj.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let single = match <[Value; 1]>::try_from(kept) {
            Ok([one]) => one,
            Err(many) => Value::Array(many),
        };
        obj.insert("type".into(), single);
    }
    clean_properties(obj, defs, describe, depth);
    for key in ["items", "additionalProperties"] {
        if let Some(child) = obj.get_mut(key) {
            clean(child, defs, describe, depth + 1);
        }
    }
}

/// Cleans an object schema's properties; those that were nullable are no longer required.
fn clean_properties(
    obj: &mut Map<String, Value>,
    defs: &Map<String, Value>,
    describe: bool,
    depth: usize,
) {
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        let mut optional = Vec::new();
        for (name, prop) in props.iter_mut() {
            let was_nullable = prop
                .get("type")
                .and_then(Value::as_array)
                .is_some_and(|t| t.iter().any(|t| t == "null"))
                || prop
                    .get("anyOf")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|t| t.get("type") == Some(&"null".into())));
            if was_nullable {
                optional.push(name.clone());
            }
            clean(prop, defs, describe, depth + 1);
        }
        if let Some(Value::Array(req)) = obj.get_mut("required") {
            req.retain(|r| r.as_str().is_none_or(|r| !optional.iter().any(|o| o == r)));
            if req.is_empty() {
                obj.remove("required");
            }
        }
    }
}

/// Keys that must never appear in a portable schema.
#[cfg(test)]
pub(crate) fn non_portable(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(schema, &mut out, "");
    out
}

#[cfg(test)]
fn walk(v: &Value, out: &mut Vec<String>, at: &str) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                let here = format!("{at}/{k}");
                let bad = matches!(k.as_str(), "$ref" | "$defs" | "anyOf" | "oneOf")
                    || (k == "type" && child.is_array())
                    || (k == "format"
                        && child
                            .as_str()
                            .is_some_and(|f| !STANDARD_FORMATS.contains(&f)));
                if bad {
                    out.push(here.clone());
                }
                walk(child, out, &here);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                walk(child, out, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_nulls_formats_and_titles_go() {
        let raw = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Out",
            "type": "object",
            "$defs": {"Row": {"type": "object", "properties": {
                "n": {"type": "integer", "format": "uint32", "minimum": 0},
                "op": {"type": "string", "enum": ["read"]}}, "required": ["n", "op"]}},
            "properties": {
                "rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}},
                "cache": {"anyOf": [{"$ref": "#/$defs/Row"}, {"type": "null"}]},
                "limit": {"type": ["integer", "null"], "format": "int64", "default": null},
                "role": {"type": ["string", "null"], "enum": ["user", "assistant", null]}
            },
            "required": ["rows", "cache", "limit"]
        });
        let out = Value::Object(portable(raw.as_object().unwrap(), true));
        assert!(non_portable(&out).is_empty(), "{out}");
        assert_eq!(out["properties"]["limit"], json!({"type": "integer"}));
        assert_eq!(
            out["properties"]["role"]["enum"],
            json!(["user", "assistant"])
        );
        assert_eq!(
            out["properties"]["rows"]["items"]["properties"]["op"]["enum"],
            json!(["read"])
        );
        assert_eq!(out["properties"]["cache"]["type"], "object");
        assert_eq!(out["required"], json!(["rows"]), "role was nullable");
        assert!(out.get("title").is_none() && out.get("$schema").is_none());
    }
}
