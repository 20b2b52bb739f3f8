//! `serve --http` and SSE priming events (issue 39, point 1): a client at protocol 2025-06-18
//! or 2025-03-26 that parses every `data:` field as JSON (as Gemini CLI's SDK does) gets every
//! answer, each `data:` a JSON-RPC message; a client at 2025-11-25 still gets the priming event
//! that lets it resume a stream, and its answers.

use serde_json::{Value, json};

use crate::common::fixture::ProjectsDir;
use crate::common::http_client::{HttpServer, Response, post_json};

fn corpus() -> ProjectsDir {
    let dir = ProjectsDir::new();
    let mut s = dir.project("-home-u-work-web").session("web-1");
    s.exchange("the narwhalfig cache keeps evicting", "raise its limit");
    dir
}

/// Every `data:` field parsed as JSON, as an old client's SDK does; panics on one that is not.
fn strict_messages(what: &str, r: &Response) -> Vec<Value> {
    assert_eq!(r.status, 200, "{what}: {r:?}");
    let fields = r.data_fields();
    assert!(
        !fields.is_empty(),
        "{what}: an event stream expected: {r:?}"
    );
    fields
        .iter()
        .map(|d| {
            serde_json::from_str::<Value>(d).unwrap_or_else(|e| {
                panic!("{what}: a `data:` field that is not JSON ({e}): {d:?} in {r:?}")
            })
        })
        .collect()
}

/// A session at `version` (`""`: a client that names none in its headers) that initializes,
/// lists and calls the way hosts do on connect; returns each request's response.
fn session_at(server: &HttpServer, version: &str) -> Vec<(String, Response)> {
    let header = [("MCP-Protocol-Version", version)];
    let session = server.initialize_at(
        if version.is_empty() {
            "2025-03-26"
        } else {
            version
        },
        &header,
    );
    let mut out = Vec::new();
    let requests = [
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        (
            "tools/call",
            json!({"name": "search_conversations", "arguments": {"query": "narwhalfig"}}),
        ),
        (
            "tools/call",
            json!({"name": "index_status", "arguments": {}}),
        ),
    ];
    for (i, (method, params)) in requests.into_iter().enumerate() {
        let body = json!({"jsonrpc": "2.0", "id": 10 + i, "method": method, "params": params});
        out.push((
            method.to_owned(),
            post_json(server.addr, Some(&session), &header, &body),
        ));
    }
    out
}

#[test]
fn clients_before_2025_11_25_get_only_json_rpc_messages_in_every_data_field() {
    let dir = corpus();
    let server = HttpServer::start(dir.path_str(), &[], &[]);
    server.wait_ready();
    for version in ["2025-06-18", ""] {
        // the initialize answer itself comes on an event stream too
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": if version.is_empty() { "2025-03-26" } else { version },
            "capabilities": {}, "clientInfo": {"name": "gemini-like", "version": "1"}}});
        let r = post_json(server.addr, None, &[], &init);
        let messages = strict_messages("initialize", &r);
        assert!(messages.iter().any(|m| m["id"] == 1), "{r:?}");

        for (i, (method, r)) in session_at(&server, version).iter().enumerate() {
            let what = format!("{method} at `{version}`");
            let messages = strict_messages(&what, r);
            let answer = messages
                .iter()
                .find(|m| m["id"] == 10 + i)
                .unwrap_or_else(|| panic!("{what}: no answer in {r:?}"));
            assert!(answer.get("result").is_some(), "{what}: {answer}");
        }
    }
}

#[test]
fn a_client_at_2025_11_25_keeps_its_priming_event_and_gets_every_answer() {
    let dir = corpus();
    let server = HttpServer::start(dir.path_str(), &[], &[]);
    server.wait_ready();
    for (i, (method, r)) in session_at(&server, "2025-11-25").iter().enumerate() {
        assert_eq!(r.status, 200, "{method}: {r:?}");
        let fields = r.data_fields();
        assert!(
            fields.first().is_some_and(|d| d.trim().is_empty()),
            "{method}: a priming event first (resumable stream): {r:?}"
        );
        assert!(
            r.message(10 + i as u64).get("result").is_some(),
            "{method}: {r:?}"
        );
    }
    let search = &session_at(&server, "2025-11-25")[3].1;
    assert!(search.body.contains("web-1"), "{search:?}");
}
