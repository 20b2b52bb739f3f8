//! The live server under load and its hygiene: tool calls from several threads while a writer
//! appends (and another file is rewritten) stay well-formed, error-free and monotonic, and never
//! hang; the server never writes anything under the projects directory.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::fixture::{ProjectsDir, new_msg_id, new_tool_id};
use crate::common::live::{
    DEBOUNCE_MS, num, render, serve_live, tag, wait_caught_up, wait_hits, wait_idle,
};
use crate::common::mcp::McpClient;
use serde_json::json;

const APPENDED: &str = "c0c00000-0000-4000-8000-000000000001";
const REWRITTEN: &str = "c0c00000-0000-4000-8000-000000000002";
const STILL: &str = "c0c00000-0000-4000-8000-000000000003";

/// One reader: cycles through the read-only tools, checking every reply; returns the number of
/// calls made. Turn counts and generations never go backwards within one reader.
fn reader(c: &McpClient, id: usize, stop: &AtomicBool) -> usize {
    let mut calls = 0;
    let mut generation = 0;
    let mut turns = 0;
    while !stop.load(Ordering::SeqCst) {
        let k = (calls + id) % 5;
        let what = [
            "search",
            "read_turn",
            "read_conversation",
            "index_status",
            "list",
        ][k];
        let reply = match k {
            0 => c.try_call_tool(
                "search_conversations",
                json!({"query": "steadyword shuffle appended", "limit": 20}),
            ),
            1 => c.try_call_tool(
                "read_turn",
                json!({"session_id": APPENDED, "turn_number": calls % (turns.max(1) as usize)}),
            ),
            2 => c.try_call_tool(
                "read_conversation",
                json!({"session_id": APPENDED, "offset": 0, "limit": 5}),
            ),
            3 => c.try_call_tool("index_status", json!({})),
            _ => c.try_call_tool("list_conversations", json!({"limit": 10})),
        };
        let reply = reply.unwrap_or_else(|e| panic!("{what}: JSON-RPC error {e}"));
        assert!(
            !reply.is_error,
            "{what} failed during updates: {}",
            reply.text
        );
        let v = &reply.json;
        match k {
            0 => {
                let results = v["results"].as_array().expect("results");
                assert!(v["total"].as_u64().unwrap() >= results.len() as u64, "{v}");
                for r in results {
                    assert!(r["session_id"].is_string() && r["score"].is_f64(), "{r}");
                    assert!(r["turn_number"].is_u64() && r["snippet"].is_string(), "{r}");
                }
            }
            1 => {
                assert_eq!(v["session_id"], APPENDED, "{v}");
                assert!(
                    v["user_text"].is_string() && v["assistant_text"].is_string(),
                    "{v}"
                );
            }
            2 => {
                let total = v["total_turns"].as_u64().expect("total_turns");
                assert!(total >= turns, "turns went back from {turns} to {total}");
                turns = total;
                assert!(!v["turns"].as_array().unwrap().is_empty(), "{v}");
            }
            3 => {
                let g = num(v, "generation");
                assert!(
                    g >= generation,
                    "generation went back from {generation} to {g}"
                );
                generation = g;
                assert_eq!(v["complete"], true, "{v}");
            }
            _ => assert!(v["conversations"].is_array(), "{v}"),
        }
        calls += 1;
    }
    calls
}

#[test]
fn concurrent_tool_calls_during_updates_stay_correct() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-busy");
    let mut w = p.session(APPENDED);
    w.exchange("appended session starts", "first reply");
    let rewritten = p.path().join(format!("{REWRITTEN}.jsonl"));
    std::fs::write(
        &rewritten,
        render(REWRITTEN, |r| {
            r.exchange("shuffle original", "reply");
        }),
    )
    .expect("write");
    p.session(STILL).exchange("steadyword untouched", "reply");
    let s = serve_live(dir, 50, &[]);

    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, written) = (Arc::clone(&stop), Arc::clone(&written));
        std::thread::spawn(move || {
            for i in 0..400 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let m = new_msg_id();
                w.user(&format!("appended prompt {}", tag("busy", i)));
                w.assistant_tool_use(&m, &new_tool_id(), "Bash", json!({"command": "ls"}));
                w.assistant_text(&m, "appended reply");
                if i % 7 == 3 {
                    // a whole-file rewrite of another session, of varying length
                    let bytes = render(REWRITTEN, |r| {
                        for k in 0..(i % 4 + 1) {
                            r.exchange(&format!("shuffle round {k}"), "reply");
                        }
                    });
                    std::fs::write(&rewritten, bytes).expect("rewrite");
                }
                written.store(i + 1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(15));
            }
        })
    };
    let started = Instant::now();
    let calls: Vec<usize> = std::thread::scope(|scope| {
        let readers: Vec<_> = (0..4)
            .map(|id| {
                let (c, stop) = (&s.client, &stop);
                scope.spawn(move || reader(c, id, stop))
            })
            .collect();
        std::thread::sleep(Duration::from_secs(3));
        stop.store(true, Ordering::SeqCst);
        readers
            .into_iter()
            .map(|h| h.join().expect("reader panicked"))
            .collect()
    });
    writer.join().expect("writer");
    eprintln!("{calls:?} calls in {:?}", started.elapsed());
    assert!(
        calls.iter().all(|&n| n > 5),
        "a reader barely ran: {calls:?}"
    );
    let n = written.load(Ordering::SeqCst);
    wait_hits(&s, &tag("busy", n - 1));
    let st = wait_caught_up(&s, s.dir.path());
    assert!(num(&st, "updates") >= 3, "{st}");
    assert_eq!(
        s.read_conversation(APPENDED)["total_turns"].as_u64(),
        Some(1 + n as u64)
    );
    for i in [0, n / 2, n - 1] {
        assert_eq!(
            s.hits(&tag("busy", i)),
            vec![(APPENDED.to_string(), 1 + i as u64)]
        );
    }
    assert!(s.is_alive());
    s.assert_clean_stdout();
}

#[test]
fn the_server_never_writes_under_the_projects_directory() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-hands-off");
    let mut w = p.session(APPENDED);
    w.exchange("read only please", "sure");
    p.session(STILL).exchange("to be deleted", "ok");
    let at_start = dir.snapshot();
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let root = s.dir.path().to_path_buf();
    assert_eq!(
        s.dir.snapshot(),
        at_start,
        "the first build changed the tree"
    );

    // a live session: appends, a new project and sub-agent, a deletion, queries of every kind
    w.exchange("an appended handsoffword", "reply");
    let mut sub =
        s.dir
            .project("-home-u-second")
            .subagent_nested(STILL, "beef01", Some(("Explore", "look")));
    sub.user("subagent handsoffsub");
    sub.assistant_text(&new_msg_id(), "done");
    std::fs::remove_file(p.path().join(format!("{STILL}.jsonl"))).expect("delete");
    let before = s.dir.snapshot();
    wait_hits(&s, "handsoffword");
    wait_hits(&s, "handsoffsub");
    wait_caught_up(&s, &root);
    for q in ["handsoffword", "reply", "subagent"] {
        s.search(q);
    }
    s.read_conversation(APPENDED);
    s.read_turn(APPENDED, 1);
    s.list(json!({}));
    s.index_status();
    wait_idle(&s);
    let client: &McpClient = &s.client;
    client.close_stdin();
    common::poll_until_desc("the server to exit", Duration::from_secs(10), || {
        client.try_exit_status()
    });
    let after = s.dir.snapshot();
    let diff: Vec<String> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(*v))
        .map(|(k, v)| format!("changed: {} {v:?} -> {:?}", k.display(), after.get(k)))
        .chain(
            after
                .keys()
                .filter(|k| !before.contains_key(*k))
                .map(|k| format!("created: {}", k.display())),
        )
        .collect();
    assert!(diff.is_empty(), "{}", diff.join("\n"));
}
