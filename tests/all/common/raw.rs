//! A raw JSON-RPC session with the server binary, for protocol-level tests: any bytes can be
//! sent, every stdout line is kept in order (replies with a null or no id included), and
//! requests speak either protocol era: `initialize` first (2024-11-05 … 2025-11-25) or none,
//! with the version and capabilities in every request's `_meta` (2026-07-28).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{IsolatedEnv, bin_path, tail};

/// How long a test waits for one reply.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(20);

/// The protocol era a session speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` with this version, then `notifications/initialized`.
    Init(&'static str),
    /// No `initialize`: protocol 2026-07-28 metadata in every request.
    Inline,
}

/// The eras every protocol test runs in.
pub const ERAS: [Era; 2] = [Era::Init("2025-06-18"), Era::Inline];

/// `_meta` of an initialize-less request.
pub fn inline_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

#[derive(Default)]
struct Out {
    messages: Vec<Value>,
    bad_lines: Vec<String>,
    closed: bool,
}

/// A server child process driven line by line.
pub struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Arc<(Mutex<Out>, Condvar)>,
    stderr: Arc<Mutex<Vec<u8>>>,
    pub era: Era,
    next_id: u64,
    _iso: IsolatedEnv,
}

impl Raw {
    /// Spawns the binary with `args` and `envs` (isolated HOME), and opens the session: in the
    /// `Init` era with `initialize`, in the `Inline` era with nothing.
    pub fn start(args: &[&str], envs: &[(&str, &str)], era: Era) -> Raw {
        let mut raw = Raw::spawn(args, envs, era);
        if let Era::Init(version) = era {
            let r = raw.call(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "host-fit-tests", "version": "0"}}),
            );
            assert!(r.get("result").is_some(), "initialize failed: {r}");
            raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        } else {
            // the first request with the metadata opens the session
            let r = raw.call("tools/list", json!({}));
            assert!(r.get("result").is_some(), "tools/list failed: {r}");
        }
        raw
    }

    /// Spawns the binary without opening a session.
    pub fn spawn(args: &[&str], envs: &[(&str, &str)], era: Era) -> Raw {
        let iso = IsolatedEnv::new();
        let mut cmd = Command::new(bin_path());
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        iso.apply(&mut cmd);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {:?}: {e}", bin_path()));
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr_pipe = child.stderr.take().expect("stderr");
        let out: Arc<(Mutex<Out>, Condvar)> = Arc::default();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let o = Arc::clone(&out);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                let text = String::from_utf8_lossy(&line).trim_end().to_string();
                let mut st = o.0.lock().unwrap();
                match serde_json::from_str::<Value>(&text) {
                    Ok(v) => st.messages.push(v),
                    Err(_) => st.bad_lines.push(text),
                }
                o.1.notify_all();
                line.clear();
            }
            o.0.lock().unwrap().closed = true;
            o.1.notify_all();
        });
        let e = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                e.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Raw {
            stdin: child.stdin.take(),
            child,
            out,
            stderr,
            era,
            next_id: 1000,
            _iso: iso,
        }
    }

    /// Writes `bytes` and a newline.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.write_all(b"\n").expect("write to the server");
        stdin.flush().expect("flush");
    }

    pub fn send(&mut self, v: &Value) {
        self.send_bytes(v.to_string().as_bytes());
    }

    /// The server's stdin, for tests that write on their own.
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin open")
    }

    /// A fresh request id.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// `params` with the era's `_meta` added (Inline only).
    pub fn params(&self, mut params: Value) -> Value {
        if self.era == Era::Inline {
            if !params.is_object() {
                params = json!({});
            }
            params["_meta"] = inline_meta();
        }
        params
    }

    /// Sends a request (with the era's metadata); returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.id();
        let params = self.params(params);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its reply.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.reply_to(&json!(id))
    }

    /// Calls a tool; returns the whole reply.
    pub fn tool(&mut self, name: &str, args: Value) -> Value {
        self.call("tools/call", json!({"name": name, "arguments": args}))
    }

    /// Calls a tool that must succeed; returns its structured content.
    pub fn tool_ok(&mut self, name: &str, args: Value) -> Value {
        let r = self.tool(name, args.clone());
        let result = &r["result"];
        assert!(
            result["isError"] != true && result["structuredContent"].is_object(),
            "{name} {args} failed: {r}"
        );
        result["structuredContent"].clone()
    }

    /// The first message (from the start) matching `pred`, waiting up to [`REPLY_TIMEOUT`].
    pub fn wait_for(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_from(0, what, pred)
    }

    /// The first message from position `from` on matching `pred`.
    pub fn wait_from(&self, from: usize, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + REPLY_TIMEOUT;
        let (lock, cond) = &*self.out;
        let mut st = lock.lock().unwrap();
        loop {
            if let Some(v) = st.messages.iter().skip(from).find(|m| pred(m)) {
                return v.clone();
            }
            let now = Instant::now();
            if st.closed || now >= deadline {
                let closed = st.closed;
                drop(st);
                panic!(
                    "no {what} ({}); stderr tail:\n{}",
                    if closed { "stdout closed" } else { "timed out" },
                    tail(&self.stderr_text(), 3000)
                );
            }
            st = cond.wait_timeout(st, deadline - now).unwrap().0;
        }
    }

    /// The reply to the request `id`.
    pub fn reply_to(&self, id: &Value) -> Value {
        self.wait_for(&format!("reply to id {id}"), |m| {
            m.get("id") == Some(id) && m.get("method").is_none()
        })
    }

    /// Position of the reply to `id` among all messages so far, if it came.
    pub fn position_of(&self, id: &Value) -> Option<usize> {
        let st = self.out.0.lock().unwrap();
        st.messages
            .iter()
            .position(|m| m.get("id") == Some(id) && m.get("method").is_none())
    }

    /// Every message received so far.
    pub fn messages(&self) -> Vec<Value> {
        self.out.0.lock().unwrap().messages.clone()
    }

    /// Stdout lines that were not JSON.
    pub fn bad_lines(&self) -> Vec<String> {
        self.out.0.lock().unwrap().bad_lines.clone()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A `/proc/<pid>/status` field in kB (`VmRSS`, `VmHWM`).
    pub fn status_kb(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        status
            .lines()
            .find(|l| l.starts_with(&format!("{field}:")))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            let bad = self.bad_lines();
            assert!(bad.is_empty(), "non-JSON lines on stdout: {bad:?}");
        }
    }
}

/// An error reply's code.
pub fn code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error reply: {reply}"))
}

/// An error reply's message.
pub fn message(reply: &Value) -> String {
    reply["error"]["message"].as_str().unwrap_or("").to_string()
}
