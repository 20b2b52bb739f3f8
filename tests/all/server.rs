//! MCP surface: initialize, tools/list (names, readOnlyHint, schemas), text + structuredContent
//! agreement, index_status fields, clean JSON-RPC stdout, concurrent calls, stdio that is not
//! a pipe.

use crate::common;

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::{McpClient, hit_keys};
use crate::common::{Served, serve};
use serde_json::{Value, json};

const TOOLS: [&str; 5] = [
    "search_conversations",
    "list_conversations",
    "read_turn",
    "read_conversation",
    "index_status",
];

fn corpus() -> Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-srv");
    let mut s = p.session("srv-1");
    s.exchange("zebracorn first prompt", "first answer");
    s.exchange("quokkafin second prompt", "second answer");
    let mut t = p.session("srv-2");
    t.exchange("zebracorn again in another session", "ok");
    serve(dir)
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("tool {name} missing from tools/list: {tools:?}"))
}

fn schema_props(schema: &Value) -> Vec<String> {
    schema["properties"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn required(schema: &Value) -> Vec<String> {
    schema["required"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn initialize_advertises_tools_capability() {
    let dir = ProjectsDir::new();
    let c = McpClient::spawn(&["--projects-dir", dir.path_str()], &[]);
    let init = c.initialize();
    assert!(init["protocolVersion"].is_string(), "{init}");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    assert!(init["serverInfo"]["name"].is_string(), "{init}");
    c.assert_clean_stdout();
}

#[test]
fn tools_list_has_the_five_tools_read_only_with_schemas() {
    let s = corpus();
    let tools = s.list_tools();
    for name in TOOLS {
        let t = tool(&tools, name);
        assert_eq!(
            t["annotations"]["readOnlyHint"], true,
            "{name}: readOnlyHint must be true: {t}"
        );
        assert_eq!(t["inputSchema"]["type"], "object", "{name}: {t}");
        assert_eq!(
            t["outputSchema"]["type"], "object",
            "{name}: outputSchema: {t}"
        );
        assert!(
            t["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name}: description"
        );
    }
}

#[test]
fn tool_input_schemas_name_the_parameters() {
    let s = corpus();
    let tools = s.list_tools();
    let search = &tool(&tools, "search_conversations")["inputSchema"];
    for p in ["query", "limit", "session_id", "project"] {
        assert!(
            schema_props(search).contains(&p.to_string()),
            "search: {p}: {search}"
        );
    }
    assert_eq!(required(search), vec!["query".to_string()]);
    let list = &tool(&tools, "list_conversations")["inputSchema"];
    for p in ["project", "limit"] {
        assert!(
            schema_props(list).contains(&p.to_string()),
            "list: {p}: {list}"
        );
    }
    assert!(
        required(list).is_empty(),
        "list has no required params: {list}"
    );
    let rt = &tool(&tools, "read_turn")["inputSchema"];
    let mut req = required(rt);
    req.sort();
    assert_eq!(
        req,
        vec!["session_id".to_string(), "turn_number".to_string()]
    );
    let rc = &tool(&tools, "read_conversation")["inputSchema"];
    for p in ["session_id", "offset", "limit"] {
        assert!(
            schema_props(rc).contains(&p.to_string()),
            "read_conversation: {p}: {rc}"
        );
    }
    assert_eq!(required(rc), vec!["session_id".to_string()]);
}

#[test]
fn every_tool_returns_text_and_identical_structured_content() {
    let s = corpus();
    let calls = [
        ("search_conversations", json!({"query": "zebracorn"})),
        ("list_conversations", json!({})),
        (
            "read_turn",
            json!({"session_id": "srv-1", "turn_number": 1}),
        ),
        ("read_conversation", json!({"session_id": "srv-1"})),
        ("index_status", json!({})),
    ];
    for (name, args) in calls {
        let r = s.call_tool(name, args);
        assert!(!r.is_error, "{name}: {}", r.text);
        let from_text: Value = serde_json::from_str(&r.text)
            .unwrap_or_else(|e| panic!("{name}: text content is not JSON ({e}): {}", r.text));
        let structured = r
            .structured
            .unwrap_or_else(|| panic!("{name}: structuredContent missing"));
        assert!(structured.is_object(), "{name}: {structured}");
        assert_eq!(
            from_text, structured,
            "{name}: text and structuredContent differ"
        );
    }
}

#[test]
fn index_status_reports_counts_and_configuration() {
    let s = corpus();
    let st = s.index_status();
    for key in [
        "projects",
        "sessions",
        "subagents",
        "turns",
        "files",
        "bytes_indexed",
        "skipped_lines",
        "generation",
        "indexed_at",
        "projects_dir",
        "pattern",
    ] {
        assert!(st.get(key).is_some(), "index_status lacks {key}: {st}");
    }
    assert_eq!(st["projects"], 1);
    assert_eq!(st["sessions"], 2);
    assert_eq!(st["subagents"], 0);
    assert_eq!(st["turns"], 3);
    assert_eq!(st["files"], 2);
    assert_eq!(st["skipped_lines"], 0);
    let size: u64 = ["srv-1.jsonl", "srv-2.jsonl"]
        .iter()
        .map(|f| {
            std::fs::metadata(s.dir.path().join("-home-u-work-srv").join(f))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(st["bytes_indexed"], size);
    assert!(st["generation"].as_u64().unwrap() >= 1);
    assert!(
        st["indexed_at"].as_str().is_some_and(|t| !t.is_empty()),
        "{st}"
    );
    let canonical = s.dir.path().canonicalize().unwrap();
    assert!(
        st["projects_dir"] == s.dir.path_str() || st["projects_dir"] == canonical.to_str().unwrap(),
        "projects_dir: {st}"
    );
    assert_eq!(st["pattern"], "*");
}

#[test]
fn stdout_stays_pure_json_rpc_with_debug_logging() {
    let dir = ProjectsDir::new();
    let mut s = dir.project("-home-u-log").session("log-1");
    s.exchange("zebracorn logging prompt", "answer");
    s.raw_line("this line is not json");
    let c = McpClient::spawn(
        &["--projects-dir", dir.path_str()],
        &[("CONVERSATION_SEARCH_LOG", "debug")],
    );
    c.initialize();
    c.wait_ready();
    assert_eq!(c.search("zebracorn")["total"], 1);
    c.err("read_turn", json!({"session_id": "nope", "turn_number": 0}));
    c.list(json!({}));
    assert!(!c.stderr_text().trim().is_empty(), "logs go to stderr");
    c.assert_clean_stdout();
}

#[test]
fn concurrent_calls_from_several_threads_get_their_own_replies() {
    let s = corpus();
    std::thread::scope(|scope| {
        for i in 0..6 {
            let s = &s;
            scope.spawn(move || {
                for j in 0..5 {
                    if (i + j) % 2 == 0 {
                        let keys = hit_keys(&s.search("quokkafin"));
                        assert_eq!(keys, vec![("srv-1".to_string(), 1)]);
                    } else {
                        let t = s.read_turn("srv-2", 0);
                        assert_eq!(t["user_text"], "zebracorn again in another session");
                    }
                }
            });
        }
    });
    s.assert_clean_stdout();
}

#[test]
fn unknown_tool_is_refused_and_server_keeps_working() {
    let s = corpus();
    match s.try_call_tool("no_such_tool", json!({})) {
        Ok(r) => assert!(r.is_error, "unknown tool must not succeed: {}", r.text),
        Err(e) => assert!(e["code"].is_i64(), "{e}"),
    }
    assert_eq!(s.search("quokkafin")["total"], 1);
}

/// Requests from a regular file and replies into one (not pipes: tokio's own stdio handles are
/// used then); every request is answered before the server exits at end of input.
#[test]
fn serves_stdin_and_stdout_that_are_files() {
    let dir = ProjectsDir::new();
    let mut s = dir.project("-home-u-files").session("files-1");
    s.exchange("zebracorn in a file-driven session", "answer");
    let io = tempfile::tempdir().expect("temp dir");
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "file-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search_conversations", "arguments": {"query": "zebracorn"}}}),
    ];
    let input = io.path().join("in.jsonl");
    let lines: Vec<String> = requests.iter().map(Value::to_string).collect();
    std::fs::write(&input, lines.join("\n") + "\n").expect("write requests");
    let output = io.path().join("out.jsonl");
    let iso = common::IsolatedEnv::new();
    let mut child = iso
        .command(&["--projects-dir", dir.path_str()], &[])
        .stdin(std::fs::File::open(&input).expect("open requests"))
        .stdout(std::fs::File::create(&output).expect("create replies"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let status = common::poll_until_desc(
        "the server to exit at end of input",
        std::time::Duration::from_secs(20),
        || child.try_wait().expect("wait"),
    );
    assert!(status.success(), "exit status {status}");
    let replies: Vec<Value> = std::fs::read_to_string(&output)
        .expect("read replies")
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect();
    let search = replies
        .iter()
        .find(|r| r["id"] == 2)
        .unwrap_or_else(|| panic!("no reply to the search: {replies:?}"));
    // answered at once: from the complete index, or from the first build in progress (then it
    // says so); it never waits for the build
    let found = &search["result"]["structuredContent"];
    if found["complete"] == true {
        assert_eq!(found["total"], 1, "{search}");
    } else {
        assert!(found["build"]["files_total"].is_u64(), "{search}");
    }
}
