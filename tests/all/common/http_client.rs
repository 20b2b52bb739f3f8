//! `serve --http` under test: the binary started on a free loopback port (it logs the address it
//! bound), and a minimal HTTP/1.1 client on a raw `TcpStream`. Raw so that a test can send what a
//! real client library would not: a foreign `Origin`, a `Content-Length` beyond the limit with
//! no body behind it, a body sent in two halves around a SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{IsolatedEnv, poll_until_desc};

/// Protocol version the HTTP tests initialize with.
pub const PROTOCOL: &str = "2025-11-25";

/// A running `serve --http` child; killed on drop.
pub struct HttpServer {
    pub child: Child,
    pub addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
    stdout: Arc<Mutex<Vec<u8>>>,
    _iso: IsolatedEnv,
}

impl HttpServer {
    /// Starts `serve --http 127.0.0.1:0 --projects-dir DIR ARGS...` and waits (30 s at most) for
    /// its `listening on http://ADDR/mcp` log line.
    pub fn start(projects_dir: &str, args: &[&str], envs: &[(&str, &str)]) -> HttpServer {
        Self::start_at("127.0.0.1:0", projects_dir, args, envs)
    }

    /// Like [`Self::start`] on `addr`.
    pub fn start_at(
        addr: &str,
        projects_dir: &str,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> HttpServer {
        let iso = IsolatedEnv::new();
        let mut all = vec!["serve", "--http", addr, "--projects-dir", projects_dir];
        all.extend_from_slice(args);
        let mut child = iso
            .command(&all, envs)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve --http");
        let stderr = Arc::new(Mutex::new(String::new()));
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let mut err = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(&mut err);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let mut out = child.stdout.take().expect("stdout");
        let sink = Arc::clone(&stdout);
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = out.read_to_end(&mut v);
            sink.lock().unwrap().extend(v);
        });
        let mut server = HttpServer {
            child,
            addr: "0.0.0.0:0".parse().unwrap(),
            stderr,
            stdout,
            _iso: iso,
        };
        server.addr = poll_until_desc(
            "the `listening on` log line",
            Duration::from_secs(30),
            || {
                if let Ok(Some(status)) = server.child.try_wait() {
                    panic!("serve --http exited with {status}:\n{}", server.stderr());
                }
                let log = server.stderr();
                let rest = log.split("listening on http://").nth(1)?;
                rest.split("/mcp").next()?.parse().ok()
            },
        );
        server
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until the log contains `needle`.
    pub fn wait_log(&self, needle: &str) {
        poll_until_desc(
            &format!("`{needle}` in the log"),
            Duration::from_secs(20),
            || self.stderr().contains(needle).then_some(()),
        );
    }

    /// Sends SIGTERM.
    pub fn sigterm(&self) {
        let ok = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill -TERM failed");
    }

    /// Waits (10 s at most) for the process to exit.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let child = &mut self.child;
        poll_until_desc("the server to exit", Duration::from_secs(10), || {
            child.try_wait().expect("try_wait")
        })
    }

    /// Asserts that nothing was printed on stdout (call after the process exited).
    pub fn assert_quiet_stdout(&self) {
        // the reader thread sees EOF when the process is gone
        poll_until_desc("stdout to close", Duration::from_secs(5), || {
            Arc::strong_count(&self.stdout).eq(&1).then_some(())
        });
        let out = self.stdout.lock().unwrap();
        assert!(
            out.is_empty(),
            "stdout must stay empty: {}",
            String::from_utf8_lossy(&out)
        );
    }

    /// `initialize` then `notifications/initialized`; returns the session id.
    pub fn initialize(&self, extra: &[(&str, &str)]) -> String {
        self.initialize_at(PROTOCOL, extra)
    }

    /// [`Self::initialize`] asking for protocol `version`; the later requests of a client at
    /// that version pass `("MCP-Protocol-Version", version)` in `extra` (none before
    /// 2025-06-18).
    pub fn initialize_at(&self, version: &str, extra: &[(&str, &str)]) -> String {
        let mut body = initialize_body(1);
        body["params"]["protocolVersion"] = json!(version);
        let r = post_json(self.addr, None, extra, &body);
        assert_eq!(r.status, 200, "initialize: {r:?}");
        let session = r
            .header("mcp-session-id")
            .expect("Mcp-Session-Id")
            .to_owned();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = post_json(self.addr, Some(&session), extra, &note);
        assert_eq!(r.status, 202, "notifications/initialized: {r:?}");
        session
    }

    /// Waits until the index is complete (through a session of its own); returns how many POST
    /// requests that took.
    pub fn wait_ready(&self) -> usize {
        let session = self.initialize(&[]);
        let mut posts = 2;
        crate::common::poll_until_desc("index_status.complete", Duration::from_secs(30), || {
            posts += 1;
            let st = self.call(&session, 1000 + posts as u64, "index_status", json!({}));
            (st["structuredContent"]["complete"] == true).then_some(())
        });
        posts
    }

    /// A `tools/call` in `session`; returns the JSON-RPC result.
    pub fn call(&self, session: &str, id: u64, name: &str, args: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": name, "arguments": args}});
        let r = post_json(self.addr, Some(session), &[], &body);
        assert_eq!(r.status, 200, "tools/call {name}: {r:?}");
        r.message(id)["result"].clone()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn initialize_body(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "http-test", "version": "1"}}})
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `data:` fields of an event stream body, in order (one per line; the events here
    /// carry one line each).
    pub fn data_fields(&self) -> Vec<&str> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect()
    }

    /// The JSON-RPC message answering `id`, from a JSON body or an event stream's `data:` lines.
    pub fn message(&self, id: u64) -> Value {
        std::iter::once(self.body.as_str())
            .chain(self.body.lines().filter_map(|l| l.strip_prefix("data:")))
            .filter_map(|t| serde_json::from_str::<Value>(t.trim()).ok())
            .find(|v| v["id"] == id)
            .unwrap_or_else(|| panic!("no JSON-RPC answer to id {id} in {self:?}"))
    }
}

/// The request head for `POST /mcp` with a JSON body of `len` bytes (`Connection: close`).
pub fn post_head(
    addr: SocketAddr,
    session: Option<&str>,
    extra: &[(&str, &str)],
    len: usize,
) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {len}\r\n\
         Connection: close\r\n"
    );
    if let Some(s) = session {
        head.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        // a client names its own protocol version (or, before 2025-06-18, none)
        if !extra
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("MCP-Protocol-Version"))
        {
            head.push_str(&format!("MCP-Protocol-Version: {PROTOCOL}\r\n"));
        }
    }
    // an empty value sends no such header (a client at 2025-03-26 names no version)
    for (k, v) in extra.iter().filter(|(_, v)| !v.is_empty()) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// Connects with a 20 s read timeout.
pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// `POST /mcp` with `body` as JSON; reads the whole response.
pub fn post_json(
    addr: SocketAddr,
    session: Option<&str>,
    extra: &[(&str, &str)],
    body: &Value,
) -> Response {
    let body = body.to_string();
    let mut s = connect(addr);
    s.write_all(post_head(addr, session, extra, body.len()).as_bytes())
        .unwrap();
    s.write_all(body.as_bytes()).unwrap();
    read_response(&mut s)
}

/// Reads a response to the end of the connection (requests say `Connection: close`).
pub fn read_response(s: &mut TcpStream) -> Response {
    let started = Instant::now();
    let mut raw = Vec::new();
    if let Err(e) = s.read_to_end(&mut raw) {
        panic!(
            "reading the response after {:?}: {e}; got {:?}",
            started.elapsed(),
            String::from_utf8_lossy(&raw)
        );
    }
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let body = &raw[split + 4..];
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_vec()
    };
    Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// Decodes a chunked body (no trailers).
fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&rest[..eol]).trim().to_owned();
        let Ok(n) = usize::from_str_radix(&size, 16) else {
            break;
        };
        let after = &rest[eol + 2..];
        if n == 0 || after.len() < n {
            break;
        }
        out.extend_from_slice(&after[..n]);
        rest = after[n..].strip_prefix(b"\r\n").unwrap_or(&after[n..]);
    }
    out
}
