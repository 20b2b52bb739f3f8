//! Answers that never mislead (issue 39): `recent_context` that found nothing says so and is not
//! `truncated`; the `prompts/list` / `resources/list` probes hosts send on connect answer empty
//! lists without a warning; `index_status` carries the configured values from the first call
//! (also on a follower, which never sets up watching).

use crate::common;
use common::cache::{Corpus, cache_args};
use common::fixture::ProjectsDir;
use common::live::wait_status;
use common::mcp::McpClient;
use serde_json::json;

#[test]
fn recent_context_that_finds_nothing_says_so_and_is_not_truncated() {
    let dir = ProjectsDir::new();
    let mut s = dir.project("-home-u-elsewhere").session("other-1");
    s.exchange("a session of another project", "ok");
    let root = tempfile::tempdir().expect("project root");
    let root = root.path().to_str().expect("utf-8");
    let c = McpClient::indexed(dir.path(), &["--project-root", root, "--no-cache"]);
    for max in [500, 2000, 60000] {
        let r = c.ok("recent_context", json!({"max_chars": max}));
        assert_eq!(r["session_ids"], json!([]), "{r}");
        assert_eq!(r["truncated"], false, "nothing was left out at {max}: {r}");
        assert!(
            r["context"]
                .as_str()
                .unwrap()
                .contains("No earlier session found."),
            "{r}"
        );
        assert!(
            r["note"]
                .as_str()
                .is_some_and(|n| n.contains("scope=\"all\"")),
            "the note says where else to look: {r}"
        );
    }
    let r = c.ok("recent_context", json!({"scope": "all"}));
    assert_eq!(r["session_ids"], json!(["other-1"]), "{r}");
    assert_eq!(r["truncated"], false, "{r}");
    assert!(r.get("note").is_none(), "{r}");
}

#[test]
fn prompt_and_resource_probes_get_empty_lists_without_a_warning() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-p")
        .session("s1")
        .exchange("hello", "ok");
    let c = McpClient::spawn(&["--projects-dir", dir.path_str(), "--no-cache"], &[]);
    let init = c.initialize();
    c.wait_ready();
    assert_eq!(
        init["capabilities"]
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec![
            "prompts".to_owned(),
            "resources".to_owned(),
            "tools".to_owned()
        ]),
        "the capabilities say what is served: {init}"
    );
    for _ in 0..3 {
        assert_eq!(c.request("prompts/list", json!({})), json!({"prompts": []}));
        assert_eq!(
            c.request("resources/list", json!({})),
            json!({"resources": []})
        );
        assert_eq!(
            c.request("resources/templates/list", json!({})),
            json!({"resourceTemplates": []})
        );
    }
    // a request after the probes: their log lines (if any) are written by now
    c.index_status();
    let log = c.stderr_text();
    assert!(
        !log.lines().any(|l| l.contains("WARN")),
        "probes are not warnings:\n{log}"
    );
    // asking for one by name (not a probe): an invalid parameter that names it, `data.uri` for a resource
    let e = c.request_raw("prompts/get", json!({"name": "nope"}))["error"].clone();
    assert_eq!(e["code"], -32602, "{e}");
    assert!(
        e["message"].as_str().unwrap_or("").contains("`nope`"),
        "{e}"
    );
    let e = c.request_raw("resources/read", json!({"uri": "file:///nope"}))["error"].clone();
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["uri"], "file:///nope", "{e}");
}

#[test]
fn index_status_carries_the_configured_values_from_the_first_call() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let data = cache_dir.path().join("data");
    let data = data.to_str().expect("utf-8");
    let spawn = |debounce: &str| {
        let mut args = vec!["--projects-dir", corpus.path(), "--data-dir", data];
        args.extend(["--debounce-ms", debounce, "--max-staleness-ms", "7000"]);
        args.extend(cache_args(cache_dir.path()));
        let c = McpClient::spawn(&args, &[]);
        c.initialize();
        c
    };
    let writer = spawn("1234");
    // the earliest a client can ask: before or during the first build
    let st = writer.index_status();
    assert_eq!(st["debounce_ms"], 1234, "{st}");
    assert_eq!(st["max_staleness_ms"], 7000, "{st}");
    assert_eq!(st["watch_mode"], "watch", "{st}");
    let state = st["state"].as_str().unwrap_or_default();
    assert!(["starting", "building", "ready"].contains(&state), "{st}");
    assert_eq!(st["complete"] == true, state == "ready", "{st}");
    let st = wait_status(&writer, "the writer ready", |st| st["state"] == "ready");
    assert_eq!(st["sharing"]["role"], "writer", "{st}");

    // a follower sets up no watching; what it was configured with still shows
    let follower = spawn("4321");
    let st = wait_status(&follower, "a follower", |st| {
        st["sharing"]["role"] == "follower"
    });
    assert_eq!(st["debounce_ms"], 4321, "{st}");
    assert_eq!(st["max_staleness_ms"], 7000, "{st}");
    assert_eq!(st["watch_mode"], "", "a follower watches nothing: {st}");
}
