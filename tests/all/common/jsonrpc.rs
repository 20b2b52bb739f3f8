//! JSON-RPC 2.0 message checks and typed views of MCP tool replies.

use serde_json::Value;

/// One `tools/call` result.
#[derive(Debug, Clone)]
pub struct ToolReply {
    /// `result.isError == true`.
    pub is_error: bool,
    /// The first text content item (empty if none).
    pub text: String,
    /// `result.structuredContent`, when present.
    pub structured: Option<Value>,
    /// `structured` if present, else the text parsed as JSON (else the text as a JSON string).
    pub json: Value,
}

impl ToolReply {
    /// Builds the view from a `tools/call` result object.
    pub fn from_result(result: Value) -> ToolReply {
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        let text = result
            .get("content")
            .and_then(Value::as_array)
            .and_then(|items| {
                items
                    .iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("text"))
            })
            .and_then(|c| c.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let structured = result
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .cloned();
        let json = match &structured {
            Some(s) => s.clone(),
            None => serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone())),
        };
        ToolReply {
            is_error,
            text,
            structured,
            json,
        }
    }

    /// The `error` string of an error reply (text parsed as `{"error": "..."}`), else the text.
    pub fn error_message(&self) -> String {
        serde_json::from_str::<Value>(&self.text)
            .ok()
            .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| self.text.clone())
    }
}

/// Checks that `v` is a well-formed JSON-RPC 2.0 message; returns a reason otherwise.
pub fn jsonrpc_violation(v: &Value) -> Option<String> {
    let Some(obj) = v.as_object() else {
        return Some("not a JSON object".into());
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some("missing \"jsonrpc\": \"2.0\"".into());
    }
    let id_ok = |id: &Value| id.is_string() || id.is_i64() || id.is_u64();
    if let Some(m) = obj.get("method") {
        if !m.is_string() {
            return Some("\"method\" is not a string".into());
        }
        if let Some(id) = obj.get("id") {
            if !id_ok(id) {
                return Some("request id is neither string nor integer".into());
            }
        }
        return None;
    }
    match obj.get("id") {
        Some(id) if id_ok(id) || id.is_null() => {}
        _ => return Some("response without a valid id".into()),
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => None,
        (None, Some(e)) => {
            let ok = e.get("code").is_some_and(|c| c.is_i64())
                && e.get("message").is_some_and(Value::is_string);
            (!ok).then(|| "error object lacks integer code / string message".into())
        }
        _ => Some("response must have exactly one of result / error".into()),
    }
}

/// `(session_id, turn_number)` of each entry of a search reply's `results`.
pub fn hit_keys(reply: &Value) -> Vec<(String, u64)> {
    reply["results"]
        .as_array()
        .unwrap_or_else(|| panic!("search reply has no results array: {reply}"))
        .iter()
        .map(|r| {
            (
                r["session_id"].as_str().expect("session_id").to_string(),
                r["turn_number"].as_u64().expect("turn_number"),
            )
        })
        .collect()
}

/// The session ids of a reply's `results`.
pub fn hit_sessions(reply: &Value) -> Vec<String> {
    hit_keys(reply).into_iter().map(|(s, _)| s).collect()
}

/// A `(session_id, turn_number)` key as [`hit_keys`] returns them.
pub fn k(session_id: &str, turn_number: u64) -> (String, u64) {
    (session_id.to_string(), turn_number)
}

/// The session ids of a `list_conversations` reply's `conversations`, in order.
pub fn listed_sessions(reply: &Value) -> Vec<String> {
    reply["conversations"]
        .as_array()
        .unwrap_or_else(|| panic!("list reply has no conversations array: {reply}"))
        .iter()
        .map(|c| c["session_id"].as_str().expect("session_id").to_string())
        .collect()
}
