//! A minimal MCP (JSON-RPC 2.0 over stdio) client driving the server binary as a child process.
//!
//! Every stdout line must be a JSON-RPC 2.0 message; anything else is recorded as a violation
//! and reported by `assert_clean_stdout()` (also checked automatically on drop). Responses are
//! routed by id, so several threads may call tools concurrently through one `&McpClient`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{IsolatedEnv, bin_path, poll_until_desc, tail};

#[allow(unused_imports)]
pub use super::jsonrpc::{
    ToolReply, hit_keys, hit_sessions, jsonrpc_violation, k, listed_sessions,
};

/// Protocol version the tests speak.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Default)]
struct State {
    responses: HashMap<u64, Value>,
    server_requests: Vec<Value>,
    violations: Vec<String>,
    closed: bool,
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
    stderr: Mutex<Vec<u8>>,
    stdin: Mutex<Option<ChildStdin>>,
}

/// The server child process plus its stdio plumbing.
pub struct McpClient {
    child: Mutex<Child>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
    /// Per-request timeout (default 20 s).
    pub timeout: Duration,
    args: Vec<String>,
    _iso: IsolatedEnv,
}

impl McpClient {
    /// Spawns the binary with `args` (tests always pass `--projects-dir`), an isolated HOME and
    /// XDG_CACHE_HOME, piped stdio, and reader threads for stdout and stderr.
    pub fn spawn(args: &[&str], envs: &[(&str, &str)]) -> McpClient {
        Self::spawn_via(&[], args, envs)
    }

    /// Like [`Self::spawn`], the binary started through the command `via` (such as
    /// `setpriv --reuid=...`) when it is not empty.
    pub fn spawn_via(via: &[&str], args: &[&str], envs: &[(&str, &str)]) -> McpClient {
        let iso = IsolatedEnv::new();
        let mut cmd = iso.command(args, envs);
        if let Some((first, rest)) = via.split_first() {
            let mut wrapped = std::process::Command::new(first);
            wrapped.args(rest).arg(bin_path()).args(args);
            iso.apply(&mut wrapped);
            for (k, v) in envs {
                wrapped.env(k, v);
            }
            cmd = wrapped;
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {:?}: {e}", bin_path()));
        let stdout = child.stdout.take().expect("child stdout");
        let mut stderr = child.stderr.take().expect("child stderr");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cond: Condvar::new(),
            stderr: Mutex::new(Vec::new()),
            stdin: Mutex::new(child.stdin.take()),
        });

        let sh = Arc::clone(&shared);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match stderr.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sh.stderr.lock().unwrap().extend_from_slice(&buf[..n]),
                }
            }
        });

        let sh = Arc::clone(&shared);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => Self::handle_line(&sh, &line),
                }
            }
            sh.state.lock().unwrap().closed = true;
            sh.cond.notify_all();
        });

        McpClient {
            child: Mutex::new(child),
            shared,
            next_id: AtomicU64::new(1),
            timeout: DEFAULT_TIMEOUT,
            args: args.iter().map(|s| s.to_string()).collect(),
            _iso: iso,
        }
    }

    fn handle_line(sh: &Shared, raw: &[u8]) {
        let mut st = sh.state.lock().unwrap();
        let Ok(text) = std::str::from_utf8(raw) else {
            st.violations
                .push(format!("non-UTF-8 stdout line: {raw:?}"));
            return;
        };
        let trimmed = text.strip_suffix('\n').unwrap_or(text);
        let trimmed = trimmed.strip_suffix('\r').unwrap_or(trimmed);
        let v: Value = match serde_json::from_str(trimmed) {
            Ok(v) => v,
            Err(e) => {
                st.violations
                    .push(format!("stdout line is not JSON ({e}): {trimmed:?}"));
                return;
            }
        };
        if let Some(why) = jsonrpc_violation(&v) {
            st.violations
                .push(format!("not JSON-RPC 2.0 ({why}): {trimmed}"));
            return;
        }
        if v.get("method").is_some() {
            if let Some(id) = v.get("id").cloned() {
                // A server-to-client request: answer ping, refuse anything else.
                let reply = if v["method"] == "ping" {
                    json!({"jsonrpc": "2.0", "id": id, "result": {}})
                } else {
                    json!({"jsonrpc": "2.0", "id": id,
                           "error": {"code": -32601, "message": "method not supported by test client"}})
                };
                st.server_requests.push(v);
                drop(st);
                if let Some(stdin) = sh.stdin.lock().unwrap().as_mut() {
                    let _ = writeln!(stdin, "{reply}");
                    let _ = stdin.flush();
                }
                return;
            }
            return; // a notification: nothing to record
        }
        match v.get("id").and_then(Value::as_u64) {
            Some(id) => {
                st.responses.insert(id, v);
                sh.cond.notify_all();
            }
            None => st.violations.push(format!(
                "response with an id this client never sent: {trimmed}"
            )),
        }
    }

    /// `spawn` + `initialize`.
    pub fn start(args: &[&str]) -> McpClient {
        let c = McpClient::spawn(args, &[]);
        c.initialize();
        c
    }

    /// Starts a server over `projects_dir` (plus `extra` args, e.g. a PATTERN) and waits until
    /// its first index build is done.
    pub fn indexed(projects_dir: &Path, extra: &[&str]) -> McpClient {
        let dir = projects_dir.to_str().expect("utf-8 path");
        let mut args = vec!["--projects-dir", dir];
        args.extend_from_slice(extra);
        let c = McpClient::start(&args);
        c.wait_ready();
        c
    }

    /// Sends `initialize` then the `notifications/initialized` notification; returns the result.
    pub fn initialize(&self) -> Value {
        let result = self.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "conversation-search-tests", "version": "0.0.0"}
            }),
        );
        self.notify("notifications/initialized", None);
        result
    }

    fn send(&self, msg: &Value) {
        let mut guard = self.shared.stdin.lock().unwrap();
        let stdin = guard.as_mut().expect("stdin already closed");
        let line = format!("{msg}\n");
        if let Err(e) = stdin.write_all(line.as_bytes()).and_then(|_| stdin.flush()) {
            drop(guard);
            panic!(
                "{}",
                self.failure(&format!("cannot write to server stdin ({e})"))
            );
        }
    }

    /// Sends a notification (no id, no reply).
    pub fn notify(&self, method: &str, params: Option<Value>) {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg);
    }

    /// Sends a request and returns the whole response message (result or error).
    pub fn request_raw(&self, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + self.timeout;
        let mut st = self.shared.state.lock().unwrap();
        loop {
            if let Some(resp) = st.responses.remove(&id) {
                return resp;
            }
            let now = Instant::now();
            if st.closed || now >= deadline {
                let closed = st.closed;
                drop(st);
                let why = if closed {
                    format!("server closed stdout before answering {method} (id {id})")
                } else {
                    format!(
                        "timeout after {:?} waiting for {method} (id {id})",
                        self.timeout
                    )
                };
                panic!("{}", self.failure(&why));
            }
            st = self.shared.cond.wait_timeout(st, deadline - now).unwrap().0;
        }
    }

    /// Sends a request and returns its `result`; panics on a JSON-RPC error.
    pub fn request(&self, method: &str, params: Value) -> Value {
        let resp = self.request_raw(method, params);
        match resp.get("result") {
            Some(r) => r.clone(),
            None => panic!(
                "{}",
                self.failure(&format!("{method} returned a JSON-RPC error: {resp}"))
            ),
        }
    }

    /// `tools/list` → the `tools` array.
    pub fn list_tools(&self) -> Vec<Value> {
        let r = self.request("tools/list", json!({}));
        r.get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_else(|| panic!("tools/list result has no tools array: {r}"))
    }

    /// `tools/call`; a JSON-RPC error comes back as `Err(error object)`.
    pub fn try_call_tool(&self, name: &str, args: Value) -> Result<ToolReply, Value> {
        let resp = self.request_raw("tools/call", json!({"name": name, "arguments": args}));
        match resp.get("result") {
            Some(r) => Ok(ToolReply::from_result(r.clone())),
            None => Err(resp.get("error").cloned().unwrap_or(resp)),
        }
    }

    /// `tools/call`; panics on a JSON-RPC error (tool errors are `is_error` replies).
    pub fn call_tool(&self, name: &str, args: Value) -> ToolReply {
        match self.try_call_tool(name, args.clone()) {
            Ok(r) => r,
            Err(e) => panic!(
                "{}",
                self.failure(&format!(
                    "tools/call {name} {args} returned a JSON-RPC error instead of a tool result: {e}"
                ))
            ),
        }
    }

    /// Calls a tool that must succeed; returns its JSON object.
    pub fn ok(&self, name: &str, args: Value) -> Value {
        let r = self.call_tool(name, args.clone());
        assert!(
            !r.is_error,
            "{name} {args} unexpectedly failed: {}\nstderr tail:\n{}",
            r.text,
            tail(&self.stderr_text(), 3000)
        );
        r.json
    }

    /// Calls a tool that must fail; returns the reply.
    pub fn err(&self, name: &str, args: Value) -> ToolReply {
        let r = self.call_tool(name, args.clone());
        assert!(
            r.is_error,
            "{name} {args} should be an error result, got: {}",
            r.text
        );
        r
    }

    pub fn index_status(&self) -> Value {
        self.ok("index_status", json!({}))
    }

    /// `search_conversations` with only a query.
    pub fn search(&self, query: &str) -> Value {
        self.ok("search_conversations", json!({"query": query}))
    }

    /// `search_conversations` with full arguments.
    pub fn search_with(&self, args: Value) -> Value {
        self.ok("search_conversations", args)
    }

    /// `(session_id, turn_number)` of every result of a search for `query` (limit 100).
    pub fn hits(&self, query: &str) -> Vec<(String, u64)> {
        hit_keys(&self.search_with(json!({"query": query, "limit": 100})))
    }

    pub fn list(&self, args: Value) -> Value {
        self.ok("list_conversations", args)
    }

    pub fn read_turn(&self, session_id: &str, turn_number: i64) -> Value {
        self.ok(
            "read_turn",
            json!({"session_id": session_id, "turn_number": turn_number}),
        )
    }

    /// `read_conversation` with offset 0 and limit 100.
    pub fn read_conversation(&self, session_id: &str) -> Value {
        self.ok(
            "read_conversation",
            json!({"session_id": session_id, "offset": 0, "limit": 100}),
        )
    }

    /// The `user_text` of every turn of a conversation (first 100 turns).
    pub fn user_texts(&self, session_id: &str) -> Vec<String> {
        self.read_conversation(session_id)["turns"]
            .as_array()
            .expect("turns array")
            .iter()
            .map(|t| {
                t["user_text"]
                    .as_str()
                    .expect("user_text string")
                    .to_string()
            })
            .collect()
    }

    /// Polls `index_status` until `generation >= 1` (first full index build done).
    pub fn wait_ready(&self) -> Value {
        self.wait_generation(1)
    }

    /// Polls `index_status` until `generation >= min`.
    pub fn wait_generation(&self, min: u64) -> Value {
        poll_until_desc(
            &format!("index_status.generation >= {min}"),
            Duration::from_secs(30),
            || {
                let st = self.index_status();
                (st.get("generation").and_then(Value::as_u64).unwrap_or(0) >= min).then_some(st)
            },
        )
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.shared.stderr.lock().unwrap()).into_owned()
    }

    /// Stdout protocol violations recorded so far.
    pub fn violations(&self) -> Vec<String> {
        self.shared.state.lock().unwrap().violations.clone()
    }

    /// Panics if any stdout line was not a JSON-RPC 2.0 message.
    pub fn assert_clean_stdout(&self) {
        let v = self.violations();
        assert!(
            v.is_empty(),
            "server wrote non-JSON-RPC output on stdout:\n{}\nstderr tail:\n{}",
            v.join("\n"),
            tail(&self.stderr_text(), 2000)
        );
    }

    /// Closes the server's stdin (end of the MCP session).
    pub fn close_stdin(&self) {
        self.shared.stdin.lock().unwrap().take();
    }

    /// The exit status if the child has exited.
    pub fn try_exit_status(&self) -> Option<ExitStatus> {
        self.child.lock().unwrap().try_wait().ok().flatten()
    }

    /// Whether the server process is still running.
    pub fn is_alive(&self) -> bool {
        self.try_exit_status().is_none()
    }

    fn failure(&self, why: &str) -> String {
        let exit = match self.try_exit_status() {
            Some(s) => format!("server exited: {s}"),
            None => "server still running".to_string(),
        };
        format!(
            "{why}\nargs: {:?}\n{exit}\n--- stderr tail ---\n{}",
            self.args,
            tail(&self.stderr_text(), 4000)
        )
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        if let Ok(mut child) = self.child.lock() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !std::thread::panicking() {
            self.assert_clean_stdout();
        }
    }
}
