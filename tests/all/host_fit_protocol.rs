//! Host fit, JSON-RPC (issue points 3 and 7): every request that reaches the server is
//! answered. Unparsable input gets -32700 with a null id, invalid requests -32600 (with their
//! id when it can be read), bad arguments -32602 naming the argument (a lone UTF-16 surrogate
//! included), deep nesting an error; batches follow the negotiated protocol version; a clear
//! error before `initialize`, a second `initialize` refused. Each in both protocol eras.

use crate::common::fixture::ProjectsDir;
use crate::common::raw::{ERAS, Era, Raw, code, message};
use serde_json::{Value, json};

fn corpus() -> ProjectsDir {
    let dir = ProjectsDir::new();
    dir.project("-home-u-work-proto")
        .session("proto-1")
        .exchange("zebracorn protocol prompt", "answer");
    dir
}

fn start(dir: &ProjectsDir, era: Era) -> Raw {
    Raw::start(&["--projects-dir", dir.path_str()], &[], era)
}

/// The id an error reply must carry when the request's id could not be read: null, or (from
/// protocol 2026-07-28 on) none at all.
fn assert_unknown_id(reply: &Value, era: Era) {
    match era {
        Era::Inline => assert!(reply.get("id").is_none(), "{reply}"),
        Era::Init(_) => assert_eq!(reply.get("id"), Some(&Value::Null), "{reply}"),
    }
}

/// The next error reply without a readable id, among the messages after the first `before`.
fn next_idless_error(s: &Raw, before: usize) -> Value {
    s.wait_from(before, "an error reply without id", |m| {
        m.get("error").is_some() && m.get("id").is_none_or(Value::is_null)
    })
}

#[test]
fn unparsable_and_truncated_json_get_a_parse_error() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        let before = s.messages().len();
        s.send_bytes(br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"sea"#);
        let r = next_idless_error(&s, before);
        assert_eq!(code(&r), -32700, "{era:?}: {r}");
        assert_unknown_id(&r, era);
        // the session goes on
        let st = s.tool_ok("index_status", json!({}));
        assert!(st["files"].is_u64(), "{era:?}: {st}");
    }
}

#[test]
fn a_lone_surrogate_in_an_argument_is_named_in_an_invalid_params_error() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        let meta = s.params(json!({}))["_meta"].clone();
        let mut params =
            json!({"name": "search_conversations", "arguments": {"query": "SURROGATE"}});
        if !meta.is_null() {
            params["_meta"] = meta;
        }
        let line = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": params})
            .to_string()
            .replace("SURROGATE", r"zebra\ud800corn");
        s.send_bytes(line.as_bytes());
        let r = s.reply_to(&json!(41));
        assert_eq!(code(&r), -32602, "{era:?}: {r}");
        assert!(message(&r).contains("`query`"), "{era:?}: {r}");
    }
}

#[test]
fn deep_nesting_is_refused_with_an_error() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        let deep = format!("{}1{}", "[".repeat(3000), "]".repeat(3000));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"search_conversations","arguments":{{"query":{deep}}}}}}}"#
        );
        s.send_bytes(line.as_bytes());
        let r = s.reply_to(&json!(42));
        assert_eq!(code(&r), -32600, "{era:?}: {r}");
        assert!(message(&r).contains("nested"), "{era:?}: {r}");
    }
}

#[test]
fn invalid_requests_get_invalid_request_with_their_id_or_null() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        s.send(&json!({"jsonrpc": "1.0", "id": 43, "method": "tools/list"}));
        let r = s.reply_to(&json!(43));
        assert_eq!(code(&r), -32600, "{era:?}: {r}");
        for bad in [
            json!("just a string"),
            json!(42),
            json!({"jsonrpc": "2.0", "id": null, "method": "tools/list"}),
        ] {
            let before = s.messages().len();
            s.send(&bad);
            let r = next_idless_error(&s, before);
            assert_eq!(code(&r), -32600, "{era:?} {bad}: {r}");
            assert_unknown_id(&r, era);
        }
    }
}

#[test]
fn arguments_that_are_not_an_object_are_invalid_params() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        let r = s.call(
            "tools/call",
            json!({"name": "search_conversations", "arguments": []}),
        );
        assert_eq!(code(&r), -32602, "{era:?}: {r}");
        assert!(message(&r).contains("arguments"), "{era:?}: {r}");
    }
}

#[test]
fn an_unknown_tool_is_named_in_the_error() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        let r = s.tool("search_conversation_typo", json!({"query": "x"}));
        let text = r.to_string();
        assert!(
            text.contains("search_conversation_typo"),
            "{era:?}: the error must name the tool: {r}"
        );
        if r.get("error").is_some() {
            assert_eq!(code(&r), -32602, "{era:?}: {r}");
        }
    }
}

#[test]
fn requests_before_initialize_get_a_clear_error_and_the_session_still_starts() {
    let dir = corpus();
    let mut s = Raw::spawn(
        &["--projects-dir", dir.path_str()],
        &[],
        Era::Init("2025-06-18"),
    );
    // a notification first must not end the session
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let r = s.reply_to(&json!(1));
    assert_eq!(code(&r), -32600, "{r}");
    let m = message(&r);
    assert!(
        m.contains("initialize") && !m.contains("_meta is missing"),
        "{r}"
    );
    let init = s.call(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    let tools = s.call("tools/list", json!({}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");
}

#[test]
fn a_second_initialize_is_refused() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        let r = s.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "again", "version": "0"}}),
        );
        assert_eq!(code(&r), -32600, "{era:?}: {r}");
        // and the session is unharmed
        let st = s.tool_ok("index_status", json!({}));
        assert!(st["files"].is_u64());
    }
}

#[test]
fn batches_are_answered_as_the_protocol_version_requires() {
    // 2025-03-26 has JSON-RPC batches: one array of replies
    let dir = corpus();
    let mut s = start(&dir, Era::Init("2025-03-26"));
    s.send_bytes(
        br#"[{"jsonrpc":"2.0","id":51,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":52,"method":"tools/list"},7]"#,
    );
    let batch = s.wait_for("a batch reply", Value::is_array);
    let ids: Vec<Value> = batch
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(ids.len(), 3, "{batch}");
    assert!(ids.contains(&json!(51)) && ids.contains(&json!(52)) && ids.contains(&Value::Null));
    // later versions have none: the whole batch is one invalid request
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        let before = s.messages().len();
        s.send_bytes(br#"[{"jsonrpc":"2.0","id":53,"method":"tools/list"}]"#);
        let r = next_idless_error(&s, before);
        assert_eq!(code(&r), -32600, "{era:?}: {r}");
        assert!(message(&r).contains("batch"), "{era:?}: {r}");
    }
}

#[test]
fn the_initialize_less_era_needs_its_metadata_and_refuses_initialize() {
    let dir = corpus();
    let mut s = Raw::spawn(&["--projects-dir", dir.path_str()], &[], Era::Inline);
    let discover = s.call("server/discover", json!({}));
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{discover}"
    );
    let hits = s.tool_ok("search_conversations", json!({"query": "zebracorn"}));
    assert!(hits["results"].is_array(), "{hits}");
    // a request without the metadata is named as such
    s.send(&json!({"jsonrpc": "2.0", "id": 61, "method": "tools/list", "params": {}}));
    let r = s.reply_to(&json!(61));
    assert_eq!(code(&r), -32602, "{r}");
}

#[test]
fn every_protocol_version_opens_a_session_and_calls_tools() {
    let dir = corpus();
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut s = Raw::spawn(&["--projects-dir", dir.path_str()], &[], Era::Init(version));
        let init = s.call(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "versions", "version": "0"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let st = s.tool_ok("index_status", json!({}));
        assert!(st["files"].is_u64(), "{version}: {st}");
    }
    let mut s = Raw::start(&["--projects-dir", dir.path_str()], &[], Era::Inline);
    let st = s.tool_ok("index_status", json!({}));
    assert!(st["files"].is_u64(), "2026-07-28: {st}");
}
