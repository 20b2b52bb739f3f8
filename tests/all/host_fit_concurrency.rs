//! Host fit, concurrency (issue point 2): tool calls run on a bounded pool, so `ping` and cheap
//! calls are answered while a heavy query runs and replies go out as each finishes;
//! `notifications/cancelled` stops the work and sends no reply; a query over its time budget
//! (`--query-timeout-ms`) returns what it found, marked partial, with a note.
//!
//! A slow query is made with the test hook `CONVERSATION_SEARCH_TEST_HOLD_MS`, which holds
//! every heavy call that long before it runs (still honouring its time budget and
//! cancellation). Assertions are about order, never about milliseconds.

use crate::common::fixture::ProjectsDir;
use crate::common::poll_until_desc;
use crate::common::raw::{ERAS, Era, Raw};
use serde_json::{Value, json};
use std::time::Duration;

const HOLD: &str = "CONVERSATION_SEARCH_TEST_HOLD_MS";

fn corpus() -> ProjectsDir {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-conc");
    for i in 0..5 {
        p.session(&format!("conc-{i}")).exchange(
            &format!("zebracorn prompt {i}"),
            "reply about the zebracorn",
        );
    }
    dir
}

fn start(dir: &ProjectsDir, era: Era, hold_ms: u64, extra: &[&str]) -> Raw {
    let mut args = vec!["--projects-dir", dir.path_str()];
    args.extend_from_slice(extra);
    let hold = hold_ms.to_string();
    Raw::start(&args, &[(HOLD, hold.as_str())], era)
}

fn wait_complete(s: &mut Raw) {
    poll_until_desc("a complete index", Duration::from_secs(30), || {
        (s.tool_ok("index_status", json!({}))["complete"] == true).then_some(())
    });
}

#[test]
fn cheap_calls_are_answered_while_a_heavy_query_runs() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era, 4000, &[]);
        wait_complete(&mut s);
        let heavy = s.request(
            "tools/call",
            json!({"name": "search_conversations", "arguments": {"query": "zebracorn"}}),
        );
        let mut cheap = vec![
            s.request("tools/list", json!({})),
            s.request(
                "tools/call",
                json!({"name": "index_status", "arguments": {}}),
            ),
        ];
        if era != Era::Inline {
            cheap.push(s.request("ping", json!({})));
        }
        for id in &cheap {
            let r = s.reply_to(&json!(id));
            assert!(r.get("result").is_some(), "{era:?}: {r}");
        }
        let heavy_reply = s.reply_to(&json!(heavy));
        assert!(heavy_reply["result"]["structuredContent"]["results"].is_array());
        // every cheap reply went out before the heavy one: replies are not in request order
        let heavy_at = s.position_of(&json!(heavy)).unwrap();
        for id in &cheap {
            let at = s.position_of(&json!(id)).unwrap();
            assert!(
                at < heavy_at,
                "{era:?}: reply to {id} waited behind the heavy query"
            );
        }
    }
}

#[test]
fn a_cancelled_call_stops_its_work_and_gets_no_reply() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era, 120_000, &["--query-timeout-ms", "240000"]);
        wait_complete(&mut s);
        let id = s.request(
            "tools/call",
            json!({"name": "search_conversations", "arguments": {"query": "zebracorn"}}),
        );
        let params = s.params(json!({"requestId": id, "reason": "user gave up"}));
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}));
        poll_until_desc(
            "the cancelled call to stop",
            Duration::from_secs(30),
            || {
                // stopped while it ran, or before it started
                s.stderr_text()
                    .contains("cancelled by the client")
                    .then_some(())
            },
        );
        // the session goes on, and the cancelled request never got a reply
        let st = s.tool_ok("index_status", json!({}));
        assert!(st["files"].is_u64());
        assert_eq!(
            s.position_of(&json!(id)),
            None,
            "{era:?}: {:?}",
            s.messages()
        );
    }
}

#[test]
fn a_query_over_its_time_budget_returns_partial_results_with_a_note() {
    for era in ERAS {
        let dir = corpus();
        // held longer than its budget: the search stops at its first check
        let mut s = start(&dir, era, 3000, &["--query-timeout-ms", "100"]);
        wait_complete(&mut s);
        let r = s.tool_ok("search_conversations", json!({"query": "zebracorn"}));
        assert_partial(&r, era);
        // a budget of 0 stops every search at once, without the hook
        let mut s = start(&dir, era, 0, &["--query-timeout-ms", "0"]);
        wait_complete(&mut s);
        let r = s.tool_ok("search_conversations", json!({"query": "zebracorn"}));
        assert_partial(&r, era);
    }
}

fn assert_partial(r: &Value, era: Era) {
    assert_eq!(r["complete"], false, "{era:?}: {r}");
    assert_eq!(r["total_exact"], false, "{era:?}: {r}");
    let note = r["note"].as_str().unwrap_or_default();
    assert!(note.contains("time budget"), "{era:?}: {r}");
}
