//! A JSON Schema checker for the subset the tools' portable output schemas use (`type` with
//! integer vs number, `properties`, `required`, `items`, `enum`, `const`,
//! `additionalProperties`, `minimum`, `maximum`), so the black-box suite validates results as
//! the TypeScript SDK client does. Any other keyword is refused, never skipped: a schema that
//! starts using one fails until this checker learns it.

use serde_json::Value;

/// Keywords [`validate`] evaluates; `description` is an annotation and checks nothing.
pub const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "const",
    "additionalProperties",
    "minimum",
    "maximum",
    "description",
];

const TYPES: &[&str] = &[
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// Problems with `schema` itself, at JSON-pointer paths below `at`: keywords outside
/// [`KEYWORDS`], unknown type names, malformed keyword values. Walks every subschema, also
/// those no value reaches (the items of an array that happens to be empty).
pub fn unsupported(schema: &Value, at: &str, out: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        out.push(format!(
            "{at}: a schema must be an object, got {}",
            shown(schema)
        ));
        return;
    };
    for (k, v) in obj {
        let here = format!("{at}/{k}");
        let ok = match k.as_str() {
            "type" => type_names(v).is_some_and(|t| t.iter().all(|t| TYPES.contains(t))),
            "properties" => v.as_object().is_some_and(|props| {
                for (name, sub) in props {
                    unsupported(sub, &format!("{here}/{name}"), out);
                }
                true
            }),
            "items" => {
                unsupported(v, &here, out);
                true
            }
            "additionalProperties" => {
                if !v.is_boolean() {
                    unsupported(v, &here, out);
                }
                true
            }
            "required" => v.as_array().is_some_and(|r| r.iter().all(Value::is_string)),
            "enum" => v.is_array(),
            "minimum" | "maximum" => v.is_number(),
            "const" => true,
            "description" => v.is_string(),
            _ => {
                out.push(format!(
                    "{here}: keyword `{k}` is not one the test's schema checker understands \
                     ({}); teach tests/all/common/schema_check.rs",
                    KEYWORDS.join(", ")
                ));
                continue;
            }
        };
        if !ok {
            out.push(format!("{here}: malformed `{k}`: {}", shown(v)));
        }
    }
}

/// Every way `value` (at JSON-pointer `at`) breaks `schema`, one message each, naming the path,
/// the offending value and the rule. `schema` must have passed [`unsupported`].
pub fn validate(schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        return out.push(format!("{}: unusable schema {}", path(at), shown(schema)));
    };
    let fail = |out: &mut Vec<String>, why: String| {
        out.push(format!("{}: {} {why}", path(at), shown(value)));
    };
    let types = obj.get("type").and_then(type_names);
    if types
        .as_ref()
        .is_some_and(|t| !t.iter().any(|t| is_type(value, t)))
    {
        // the wrong type: the other keywords would only repeat the complaint
        let want = types.unwrap_or_default().join(" or ");
        return fail(out, format!("is not of type {want}"));
    }
    if let Some(allowed) = obj.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            fail(
                out,
                format!("is not one of the enum {}", shown(&obj["enum"])),
            );
        }
    }
    if obj.get("const").is_some_and(|c| c != value) {
        fail(out, format!("is not the const {}", shown(&obj["const"])));
    }
    if let Some(x) = value.as_f64() {
        if obj
            .get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|m| x < m)
        {
            fail(out, format!("is below the minimum {}", obj["minimum"]));
        }
        if obj
            .get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|m| x > m)
        {
            fail(out, format!("is above the maximum {}", obj["maximum"]));
        }
    }
    if let Some(fields) = value.as_object() {
        let required = obj.get("required").and_then(Value::as_array);
        for name in required.into_iter().flatten().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                fail(out, format!("lacks the required property `{name}`"));
            }
        }
        let props = obj.get("properties").and_then(Value::as_object);
        for (name, v) in fields {
            let here = format!("{at}/{name}");
            match (props.and_then(|p| p.get(name)), obj.get("additionalProperties")) {
                (Some(sub), _) => validate(sub, v, &here, out),
                (None, Some(Value::Bool(false))) => out.push(format!(
                    "{here}: {} is a property the schema does not allow (additionalProperties: false)",
                    shown(v)
                )),
                (None, Some(extra)) if extra.is_object() => validate(extra, v, &here, out),
                (None, _) => {}
            }
        }
    }
    if let (Some(items), Some(elems)) = (obj.get("items"), value.as_array()) {
        for (i, v) in elems.iter().enumerate() {
            validate(items, v, &format!("{at}/{i}"), out);
        }
    }
}

/// `type` as a list of names: `"string"` or `["string", "null"]`.
fn type_names(t: &Value) -> Option<Vec<&str>> {
    match t {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(a) => a.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// JSON Schema's types: an integer is any number without a fractional part (`2.0` too).
fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|x| x.fract() == 0.0),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

/// The path for a message (`/` for the root).
fn path(at: &str) -> &str {
    if at.is_empty() { "/" } else { at }
}

/// A value for a message, cut to 160 characters.
fn shown(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(160) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}
