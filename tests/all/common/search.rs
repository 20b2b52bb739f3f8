//! Helpers for the search, budget, file-history and duplicate tests: turns with tool calls,
//! times relative to now, result and listing accessors, error-text and output-size assertions.

use serde_json::{Value, json};

use super::fixture::{SessionWriter, format_iso_ms, new_msg_id, new_tool_id};
use super::mcp::{McpClient, ToolReply};

pub const MINUTE: i64 = 60_000;
pub const HOUR: i64 = 60 * MINUTE;
pub const DAY: i64 = 24 * HOUR;

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

/// The ISO timestamp `ago` milliseconds before now.
pub fn iso_ago(ago: i64) -> String {
    format_iso_ms(now_ms() - ago)
}

/// A `Read` call on `path`.
pub fn read(path: &str) -> (&'static str, Value) {
    ("Read", json!({"file_path": path}))
}

/// An `Edit` call on `path`.
pub fn edit(path: &str) -> (&'static str, Value) {
    (
        "Edit",
        json!({"file_path": path, "old_string": "a", "new_string": "b"}),
    )
}

/// A `MultiEdit` call on `path`.
pub fn multi_edit(path: &str) -> (&'static str, Value) {
    (
        "MultiEdit",
        json!({"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]}),
    )
}

/// A `Write` call on `path`.
pub fn write(path: &str) -> (&'static str, Value) {
    (
        "Write",
        json!({"file_path": path, "content": "fn main() {}\n"}),
    )
}

/// A `NotebookEdit` call on `path`.
pub fn notebook_edit(path: &str) -> (&'static str, Value) {
    (
        "NotebookEdit",
        json!({"notebook_path": path, "new_source": "print(1)", "cell_id": "c1"}),
    )
}

/// A `Bash` call running `command`.
pub fn bash(command: &str) -> (&'static str, Value) {
    ("Bash", json!({"command": command, "description": "run it"}))
}

/// A `Grep` call (a search, not a file touch).
pub fn grep(pattern: &str, path: &str) -> (&'static str, Value) {
    ("Grep", json!({"pattern": pattern, "path": path}))
}

/// One turn: `prompt`, then an assistant message with `reply` (when not empty) and `calls`,
/// each answered by a tool result. Returns the prompt record's uuid.
pub fn tool_turn(
    w: &mut SessionWriter,
    prompt: &str,
    reply: &str,
    calls: &[(&str, Value)],
) -> String {
    let uuid = w.user(prompt);
    let msg = new_msg_id();
    if !reply.is_empty() {
        w.assistant_text(&msg, reply);
    }
    for (name, input) in calls {
        let id = new_tool_id();
        w.assistant_tool_use(&msg, &id, name, input.clone());
        w.tool_result(&id, "tool output text", Value::Null);
    }
    uuid
}

/// The `results` array of a search reply.
pub fn results(reply: &Value) -> &Vec<Value> {
    reply["results"]
        .as_array()
        .unwrap_or_else(|| panic!("reply has no results array: {reply}"))
}

/// The snippet of the first result.
pub fn first_snippet(reply: &Value) -> String {
    results(reply)
        .first()
        .unwrap_or_else(|| panic!("no results: {reply}"))["snippet"]
        .as_str()
        .expect("snippet string")
        .to_string()
}

/// `total` of a search for `query` (limit 100).
pub fn total(c: &McpClient, query: &str) -> u64 {
    c.search_with(json!({"query": query, "limit": 100}))["total"]
        .as_u64()
        .expect("total")
}

/// The `tools_used` entry of `turn` for the tool `name` (the first one).
#[track_caller]
pub fn tool_used<'a>(turn: &'a Value, name: &str) -> &'a Value {
    turn["tools_used"]
        .as_array()
        .expect("tools_used")
        .iter()
        .find(|t| t["tool"] == name)
        .unwrap_or_else(|| panic!("no {name} in {turn}"))
}

/// Every row of `list_conversations` (limit 100).
pub fn listed(c: &McpClient) -> Vec<Value> {
    c.list(json!({"limit": 100}))["conversations"]
        .as_array()
        .expect("conversations")
        .clone()
}

/// The `list_conversations` row (limit 100) of `session_id`; panics when it is not listed.
#[track_caller]
pub fn listed_conv(c: &McpClient, session_id: &str) -> Value {
    let l = c.list(json!({"limit": 100}));
    l["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["session_id"] == session_id)
        .unwrap_or_else(|| panic!("{session_id} not listed: {l}"))
        .clone()
}

/// `base` (an object) with every key of the object `extra` set on it.
pub fn merged(mut base: Value, extra: &Value) -> Value {
    for (key, v) in extra.as_object().expect("extra must be a JSON object") {
        base[key] = v.clone();
    }
    base
}

/// The strings of a JSON array field (e.g. `matched_terms`).
pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect()
}

/// Characters of the JSON text a tool returned.
pub fn reply_chars(r: &ToolReply) -> usize {
    r.text.chars().count()
}

/// Calls `tool` with `args`, asserting success and that the JSON text is at most `max`
/// characters; returns the JSON.
#[track_caller]
pub fn ok_within(s: &McpClient, tool: &str, args: Value, max: usize) -> Value {
    let shown = clip(&args.to_string(), 300);
    let r = s.call_tool(tool, args);
    assert!(!r.is_error, "{tool} {shown} failed: {}", clip(&r.text, 600));
    let n = reply_chars(&r);
    assert!(
        n <= max,
        "{tool} returned {n} characters of JSON, more than {max}: args {shown}"
    );
    r.json
}

/// The first `n` characters of `s`, with `…` when cut (for panic messages).
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Calls `tool` expecting an `isError` result whose text mentions every one of `words`
/// (case-insensitive): the parameter's name and what it accepts.
#[track_caller]
pub fn assert_rejected(s: &McpClient, tool: &str, args: Value, words: &[&str]) -> String {
    let r = s.call_tool(tool, args.clone());
    assert!(
        r.is_error,
        "{tool} {} should be an error result, got: {}",
        clip(&args.to_string(), 300),
        clip(&r.text, 600)
    );
    let msg = r.error_message();
    let low = msg.to_lowercase();
    let missing: Vec<&&str> = words
        .iter()
        .filter(|w| !low.contains(&w.to_lowercase()))
        .collect();
    assert!(
        missing.is_empty(),
        "{tool} {args}: error should mention {missing:?}, got: {msg}"
    );
    msg
}

/// Follows next_offset of a paged tool with a small budget; returns the row keys seen.
pub fn page_all(
    s: &McpClient,
    tool: &str,
    args: Value,
    rows: &str,
    key: &[&str],
    max: i64,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut offset = 0u64;
    for _ in 0..2000 {
        let mut a = args.clone();
        a["offset"] = json!(offset);
        a["max_chars"] = json!(max);
        let r = ok_within(s, tool, a, max as usize);
        for row in r[rows].as_array().unwrap() {
            seen.push(
                key.iter()
                    .map(|k| row[*k].to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
            );
        }
        match r["next_offset"].as_u64() {
            Some(n) => {
                assert!(n > offset, "{tool}: next_offset must move on: {r}");
                offset = n;
            }
            None => return seen,
        }
    }
    panic!("{tool}: paging does not end");
}
