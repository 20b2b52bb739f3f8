//! `serve --http`: two clients at once on one index, both protocol generations (initialize and
//! `server/discover`), a foreign `Origin` refused with 403, a non-loopback address refused
//! without `--allow-remote` and a token, a missing or wrong token refused with 401, an
//! oversized body with 413, and SIGTERM while a call is in flight.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::fixture::ProjectsDir;
use crate::common::http_client::{
    HttpServer, connect, initialize_body, post_head, post_json, read_response,
};
use crate::common::mcp::hit_keys;
use crate::common::{run_cli, tail};

fn corpus() -> ProjectsDir {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-web");
    let mut s = p.session("web-1");
    s.exchange("the narwhalfig cache keeps evicting", "raise its limit");
    s.exchange("unrelated follow-up", "ok");
    let mut t = p.session("web-2");
    t.exchange("narwhalfig again elsewhere", "fine");
    dir
}

/// The tool names of a `tools/list` in `session`.
fn tool_names(server: &HttpServer, session: &str) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = post_json(server.addr, Some(session), &[], &body);
    assert_eq!(r.status, 200, "tools/list: {r:?}");
    let mut names: Vec<String> = r.message(2)["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn two_clients_at_once_share_one_index() {
    let dir = corpus();
    let server = HttpServer::start(dir.path_str(), &[], &[]);
    server.wait_ready();
    let answers: Vec<(Vec<String>, Value)> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let session = server.initialize(&[]);
                    let tools = tool_names(&server, &session);
                    let result = server.call(
                        &session,
                        3,
                        "search_conversations",
                        json!({"query": "narwhalfig"}),
                    );
                    (tools, result)
                })
            })
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let (tools, first) = &answers[0];
    assert!(
        tools.contains(&"search_conversations".to_owned()) && tools.len() >= 5,
        "tools/list: {tools:?}"
    );
    assert_eq!(first["isError"], Value::Bool(false), "{first}");
    let hits = hit_keys(&first["structuredContent"]);
    let mut sessions: Vec<&str> = hits.iter().map(|(s, _)| s.as_str()).collect();
    sessions.sort();
    assert_eq!(sessions, ["web-1", "web-2"], "{first}");
    assert_eq!(answers[0], answers[1], "both clients read the same index");
    assert!(
        server.stderr().matches("index built").count() == 1,
        "one index for both clients:\n{}",
        server.stderr()
    );
}

#[test]
fn the_stateless_generation_discovers_and_calls_without_a_session() {
    let dir = corpus();
    let server = HttpServer::start(dir.path_str(), &[], &[]);
    server.wait_ready();
    let version = "2026-07-28";
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "http-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let headers = [
        ("MCP-Protocol-Version", version),
        ("Mcp-Method", "server/discover"),
    ];
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                          "params": {"_meta": meta}});
    let r = post_json(server.addr, None, &headers, &discover);
    assert_eq!(r.status, 200, "server/discover: {r:?}");
    assert!(r.header("mcp-session-id").is_none(), "no session: {r:?}");
    let result = &r.message(1)["result"];
    assert!(
        result["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!(version)) && v.contains(&json!("2025-11-25"))),
        "{result}"
    );
    assert!(result["capabilities"]["tools"].is_object(), "{result}");

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "search_conversations", "arguments": {"query": "narwhalfig"}, "_meta": meta}});
    let r = post_json(
        server.addr,
        None,
        &[
            ("MCP-Protocol-Version", version),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "search_conversations"),
        ],
        &call,
    );
    assert_eq!(r.status, 200, "tools/call: {r:?}");
    assert_eq!(
        hit_keys(&r.message(2)["result"]["structuredContent"]).len(),
        2,
        "{r:?}"
    );
}

#[test]
fn a_foreign_origin_is_refused_with_403_and_a_loopback_one_is_served() {
    let dir = ProjectsDir::new();
    let server = HttpServer::start(dir.path_str(), &[], &[]);
    for origin in [
        "http://evil.example",
        "http://localhost.evil.example:7102",
        "null",
    ] {
        let r = post_json(
            server.addr,
            None,
            &[("Origin", origin)],
            &initialize_body(1),
        );
        assert_eq!(r.status, 403, "Origin {origin}: {r:?}");
        assert!(r.body.contains("not allowed"), "{r:?}");
    }
    let own = format!("http://localhost:{}", server.addr.port());
    let r = post_json(server.addr, None, &[("Origin", &own)], &initialize_body(1));
    assert_eq!(r.status, 200, "Origin {own}: {r:?}");
    assert_eq!(
        r.message(1)["result"]["serverInfo"]["name"],
        "conversation-search"
    );
}

#[test]
fn a_non_loopback_address_needs_allow_remote_and_a_token() {
    let dir = ProjectsDir::new();
    let token = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token.path(), "0123456789abcdef0123456789abcdef\n").unwrap();
    let token_path = token.path().to_str().unwrap();
    for extra in [
        &[][..],
        &["--allow-remote"][..],
        &["--token-file", token_path][..],
    ] {
        let mut args = vec![
            "serve",
            "--http",
            "0.0.0.0:0",
            "--projects-dir",
            dir.path_str(),
        ];
        args.extend_from_slice(extra);
        let started = Instant::now();
        let out = run_cli(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?} must be refused: {stderr}");
        assert!(
            stderr.contains("refusing to listen on `0.0.0.0:0`")
                && stderr.contains("--allow-remote")
                && stderr.contains("--token-file"),
            "{extra:?}: the message names the address and what to do:\n{stderr}"
        );
        assert!(out.stdout.is_empty(), "stdout stays empty");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "refused at once"
        );
    }
    // with both, it serves (the token is then required, see below)
    let server = HttpServer::start_at(
        "0.0.0.0:0",
        dir.path_str(),
        &["--allow-remote", "--token-file", token_path],
        &[],
    );
    let loopback = format!("127.0.0.1:{}", server.addr.port()).parse().unwrap();
    let bearer = [("Authorization", "Bearer 0123456789abcdef0123456789abcdef")];
    let r = post_json(loopback, None, &bearer, &initialize_body(1));
    assert_eq!(r.status, 200, "{r:?}");
}

#[test]
fn a_missing_or_wrong_token_is_refused_with_401() {
    let dir = ProjectsDir::new();
    let token = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token.path(), "s3cret-token-of-32-characters-xy").unwrap();
    let server = HttpServer::start(
        dir.path_str(),
        &["--token-file", token.path().to_str().unwrap()],
        &[],
    );
    for auth in [
        None,
        Some("Bearer s3cret-token-of-32-characters-xY"),
        Some("Bearer s3cret-token-of-32-characters-x"),
        Some("Basic czNjcmV0"),
    ] {
        let extra: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
        let r = post_json(server.addr, None, &extra, &initialize_body(1));
        assert_eq!(r.status, 401, "{auth:?}: {r:?}");
        assert!(
            r.header("www-authenticate")
                .is_some_and(|v| v.starts_with("Bearer"))
        );
    }
    let good = [("Authorization", "Bearer s3cret-token-of-32-characters-xy")];
    let session = server.initialize(&good);
    assert!(!session.is_empty());
    // a short token file is refused at start, naming the file
    std::fs::write(token.path(), "short").unwrap();
    let out = run_cli(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--projects-dir",
            dir.path_str(),
            "--token-file",
            token.path().to_str().unwrap(),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("`{}`", token.path().display())),
        "{stderr}"
    );
}

#[test]
fn an_oversized_body_is_refused_with_413() {
    let dir = ProjectsDir::new();
    let server = HttpServer::start(dir.path_str(), &[], &[]);
    let mut s = connect(server.addr);
    // the length alone decides: the body is never sent
    s.write_all(post_head(server.addr, None, &[], 5 * 1024 * 1024).as_bytes())
        .unwrap();
    s.write_all(b"{\"jsonrpc\":\"2.0\"").unwrap();
    let r = read_response(&mut s);
    assert_eq!(r.status, 413, "{r:?}");
    assert!(r.body.contains("4194304 bytes"), "{r:?}");
    // a body just under the limit is read (and rejected by MCP as a bad message, not by size)
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(4 * 1024 * 1024 - 16));
    let mut s = connect(server.addr);
    s.write_all(post_head(server.addr, None, &[], big.len()).as_bytes())
        .unwrap();
    s.write_all(big.as_bytes()).unwrap();
    let r = read_response(&mut s);
    assert_ne!(r.status, 413, "{r:?}");
}

#[test]
fn sigterm_during_a_call_answers_it_then_exits_within_two_seconds() {
    let dir = corpus();
    let server = HttpServer::start(dir.path_str(), &[], &[("CONVERSATION_SEARCH_LOG", "debug")]);
    let mut server = server;
    let ready_posts = server.wait_ready();
    let session = server.initialize(&[]);
    // a call whose body arrives in two halves, SIGTERM in between
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "search_conversations", "arguments": {"query": "narwhalfig"}}})
    .to_string();
    let (first, second) = body.split_at(body.len() / 2);
    let mut s = connect(server.addr);
    s.write_all(post_head(server.addr, Some(&session), &[], body.len()).as_bytes())
        .unwrap();
    s.write_all(first.as_bytes()).unwrap();
    s.flush().unwrap();
    poll_posts(&server, ready_posts + 3);
    let signalled = Instant::now();
    server.sigterm();
    server.wait_log("SIGTERM: no new connections; finishing 1 request(s) in flight");
    s.write_all(second.as_bytes()).unwrap();
    let r = read_response(&mut s);
    assert_eq!(r.status, 200, "{r:?}");
    let result = &r.message(7)["result"];
    assert_eq!(hit_keys(&result["structuredContent"]).len(), 2, "{result}");
    let status = server.wait_exit();
    let took = signalled.elapsed();
    assert!(
        status.success(),
        "exit status {status}:\n{}",
        tail(&server.stderr(), 3000)
    );
    assert!(
        took < Duration::from_secs(2),
        "exited {took:?} after SIGTERM"
    );
    server.assert_quiet_stdout();
}

/// Waits until the log shows `n` POST requests (initialize, initialized, the call).
fn poll_posts(server: &HttpServer, n: usize) {
    crate::common::poll_until_desc(
        &format!("{n} POST requests in the log"),
        Duration::from_secs(20),
        || (server.stderr().matches("method=POST path=/mcp").count() >= n).then_some(()),
    );
}
