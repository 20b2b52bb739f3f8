//! Host fit, bounded input and output (issue point 6): a request over the size limit is refused
//! as soon as the limit is passed, before the rest of it arrives; a client that sends thousands
//! of requests without reading the replies makes the server stop reading (its memory stays
//! flat) until the client reads, and then every request is answered.

use crate::common::fixture::ProjectsDir;
use crate::common::raw::{ERAS, Raw, code};
use crate::common::{IsolatedEnv, poll_until_desc};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Resident memory the server may never exceed in these tests (a debug build idles at ~20 MB;
/// unsent replies are bounded at 16 MB).
const RSS_LIMIT_KB: u64 = 160 * 1024;

#[test]
fn an_oversized_request_is_refused_before_the_rest_of_it_arrives() {
    for era in ERAS {
        let dir = ProjectsDir::new();
        let mut s = Raw::start(&["--projects-dir", dir.path_str()], &[], era);
        let mut stdin = s.take_stdin();
        let (go_on, wait) = mpsc::channel::<()>();
        let params = s.params(json!({"name": "search_conversations"}));
        let head = format!(
            r#"{{"jsonrpc":"2.0","id":91,"method":"tools/call","params":{},"#,
            &params.to_string()[1..params.to_string().len() - 1]
        );
        let writer = std::thread::spawn(move || {
            let chunk = vec![b'a'; 1 << 20];
            stdin.write_all(head.as_bytes()).unwrap();
            stdin.write_all(br#""arguments":{"query":""#).unwrap();
            for _ in 0..5 {
                stdin.write_all(&chunk).unwrap();
            }
            stdin.flush().unwrap();
            // the rest (45 MB more) only once the refusal came
            wait.recv().unwrap();
            for _ in 0..45 {
                stdin.write_all(&chunk).unwrap();
            }
            stdin.write_all(b"\"}}}\n").unwrap();
            let ping = format!(
                r#"{{"jsonrpc":"2.0","id":92,"method":"tools/call","params":{}}}"#,
                {
                    let mut p = params.clone();
                    p["name"] = json!("index_status");
                    p["arguments"] = json!({});
                    p
                }
            );
            stdin.write_all(ping.as_bytes()).unwrap();
            stdin.write_all(b"\n").unwrap();
            stdin.flush().unwrap();
            stdin
        });
        let r = s.reply_to(&json!(91));
        assert_eq!(code(&r), -32600, "{era:?}: {r}");
        go_on.send(()).unwrap();
        let after = s.reply_to(&json!(92));
        assert!(
            after["result"]["structuredContent"]["files"].is_u64(),
            "{era:?}: {after}"
        );
        let _stdin = writer.join().unwrap();
        let peak = s.status_kb("VmHWM").unwrap_or(0);
        assert!(peak < RSS_LIMIT_KB, "{era:?}: peak RSS {peak} kB");
    }
}

/// `/proc/<pid>/status` field in kB.
fn status_kb(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[test]
fn unread_replies_stop_the_reading_and_memory_stays_flat() {
    // far more input than the pipes, the read chunk and 16 MB of unsent replies can absorb
    // (3,000 ~55-byte requests fitted: 64 KB pipe + 64 KB chunk + ~890 replies of ~18.8 KB)
    const REQUESTS: usize = 10_000;
    let dir = ProjectsDir::new();
    let iso = IsolatedEnv::new();
    let mut cmd = iso.command(&["--projects-dir", dir.path_str()], &[]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "flood", "version": "0"}}})
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    // every reply to tools/list is ~18.8 KB: 10,000 of them would be ~188 MB if kept (and the
    // server used to keep far more per request)
    let written = Arc::new(AtomicUsize::new(0));
    let w = Arc::clone(&written);
    let writer = std::thread::spawn(move || {
        for i in 1..=REQUESTS {
            let req = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/list\"}}\n");
            if stdin.write_all(req.as_bytes()).is_err() {
                return;
            }
            w.store(i, Ordering::Relaxed);
        }
        let _ = stdin.flush();
    });
    // while nothing is read: the writer stalls (the server stopped reading), memory stays low
    let mut peak = 0;
    let mut last = (0, 0);
    poll_until_desc("the writer to stall", Duration::from_secs(60), || {
        let rss = status_kb(pid, "VmRSS").unwrap_or(0);
        peak = peak.max(rss);
        if rss > RSS_LIMIT_KB {
            let _ = child.kill();
            panic!("RSS {rss} kB while replies are not read");
        }
        let n = written.load(Ordering::Relaxed);
        assert!(
            n < REQUESTS,
            "all {REQUESTS} requests were taken while no reply was read"
        );
        let stalled = n == last.0 && n > 0;
        last = (n, if stalled { last.1 + 1 } else { 0 });
        (last.1 >= 25).then_some(())
    });
    // now read: every request is answered
    let mut answered = 0;
    for _ in 0..REQUESTS {
        line.clear();
        out.read_line(&mut line).unwrap();
        assert!(
            line.starts_with('{') && line.contains(r#""tools":["#),
            "not a tools/list reply: {}",
            &line[..line.len().min(300)]
        );
        answered += 1;
        if answered % 1000 == 0 {
            peak = peak.max(status_kb(pid, "VmRSS").unwrap_or(0));
        }
    }
    writer.join().unwrap();
    assert_eq!(answered, REQUESTS);
    let after = status_kb(pid, "VmRSS").unwrap_or(0);
    eprintln!("peak RSS {peak} kB; {after} kB once the replies were read");
    assert!(peak < RSS_LIMIT_KB, "peak RSS {peak} kB");
    let _ = child.kill();
    let _ = child.wait();
}
