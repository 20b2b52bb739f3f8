//! Controlling the durable store from the command line: `forget` by session, project, date and
//! source (a dry run without `--yes`; forgotten conversations leave store and index and are not
//! stored again), and `--retain-days` dropping old store-only turns.

use crate::common;

use crate::common::mcp::McpClient;
use crate::common::poll_until_desc;
use crate::common::store::{StoreEnv, listed, wait_committed, wait_stored};
use serde_json::json;
use std::time::Duration;

const OLD: &str = "f0e70000-0000-4000-8000-00000000000a";
const NEW: &str = "f0e70000-0000-4000-8000-00000000000b";

/// OLD (2020, project alpha) and NEW (recent, project beta), both stored.
fn corpus(env: &StoreEnv) -> (std::path::PathBuf, std::path::PathBuf) {
    let mut old = env.projects.project("-home-u-alpha").session(OLD);
    old.set_time("2020-01-01T10:00:00Z");
    old.exchange("ancient wrenword prompt", "ancient reply");
    let mut new = env.projects.project("-home-u-beta").session(NEW);
    new.set_time(&common::search::iso_ago(3_600_000));
    new.exchange("recent finchword prompt", "recent reply");
    let s = env.serve(&[]);
    wait_stored(&s, 2);
    (old.path().to_path_buf(), new.path().to_path_buf())
}

#[test]
fn forget_each_selector_removes_from_store_and_index() {
    for (selector, value, gone) in [
        ("--session", OLD, OLD),
        ("--project", "alpha", OLD),
        ("--before", "2021-01-01", OLD),
        ("--source", "claude", ""),
    ] {
        let env = StoreEnv::new();
        corpus(&env);
        let dry = env.cli(&["forget", selector, value]);
        assert_eq!(dry["removed"], false, "{selector}: {dry}");
        assert!(
            dry["conversations"].as_u64().unwrap() >= 1,
            "{selector}: {dry}"
        );
        assert_eq!(
            env.store_status_cli()["conversations"],
            2,
            "{selector}: dry run"
        );
        let out = env.cli(&["forget", selector, value, "--yes"]);
        assert_eq!(out["removed"], true, "{selector}: {out}");
        let ids: Vec<&str> = out["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_id"].as_str().unwrap())
            .collect();
        if gone.is_empty() {
            assert_eq!(ids.len(), 2, "{selector}: {out}");
        } else {
            assert_eq!(ids, vec![gone], "{selector}: {out}");
        }
        let left = 2 - ids.len() as u64;
        assert_eq!(env.store_status_cli()["conversations"], left, "{selector}");
        // the index follows, transcripts still there or not
        let s = env.serve(&[]);
        for id in &ids {
            assert!(listed(&s, id).is_none(), "{selector}: {id} still listed");
        }
        if gone == OLD {
            assert!(s.hits("wrenword").is_empty(), "{selector}");
            assert_eq!(s.hits("finchword").len(), 1, "{selector}");
        }
        assert_eq!(
            env.store_status_cli()["conversations"],
            left,
            "{selector}: re-stored"
        );
    }
}

#[test]
fn forget_reaches_a_running_server() {
    let env = StoreEnv::new();
    let (old, _) = corpus(&env);
    let s = env.serve(&[]);
    std::fs::remove_file(&old).unwrap();
    poll_until_desc("OLD store-only", Duration::from_secs(20), || {
        listed(&s, OLD).filter(|r| r["source_present"] == false)
    });
    env.cli(&["forget", "--session", OLD, "--yes"]);
    poll_until_desc("OLD forgotten", Duration::from_secs(20), || {
        s.hits("wrenword").is_empty().then_some(())
    });
    assert!(listed(&s, OLD).is_none());
    assert_eq!(s.hits("finchword").len(), 1);
}

/// `forget` committing while a running server is between reading the store's news and applying
/// them, one of them a conversation to read again from the store (its transcript just vanished):
/// the server never lists the conversation without its turn, and drops it at its next look.
/// The server pauses its catch-ups (a test hook) so the forget lands in that gap every run; a
/// server reading the turns after the forget listed the conversation with none for a tick.
#[test]
fn forget_between_a_catch_up_s_reads_never_lists_a_conversation_without_its_turns() {
    let env = StoreEnv::new();
    let (old, _) = corpus(&env);
    let pause = [("CONVERSATION_SEARCH_TEST_CATCH_UP_PAUSE_MS", "2000")];
    let s = McpClient::spawn(&env.args(&[]), &pause);
    s.initialize();
    s.wait_ready();
    wait_committed(&s);
    let paused_on_old = |s: &McpClient| {
        s.stderr_text()
            .lines()
            .filter(|l| l.contains("catch-up to commit") && l.contains(OLD))
            .count()
    };
    let before = paused_on_old(&s);
    std::fs::remove_file(&old).unwrap();
    poll_until_desc(
        "a catch-up applying OLD's vanished transcript paused",
        Duration::from_secs(20),
        || (paused_on_old(&s) > before).then_some(()),
    );
    env.cli(&["forget", "--session", OLD, "--yes"]);
    poll_until_desc("OLD forgotten", Duration::from_secs(20), || {
        // hits first: once they are gone, the forget was applied and OLD cannot be listed
        let hits = s.hits("wrenword").len();
        match listed(&s, OLD) {
            Some(row) => {
                assert_eq!(hits, 1, "OLD listed without its turn: {row}");
                assert_eq!(row["turn_count"], 1, "{row}");
                None
            }
            None => (hits == 0).then_some(()),
        }
    });
    assert_eq!(s.hits("finchword").len(), 1);
}

#[test]
fn forget_needs_exactly_one_selector() {
    let env = StoreEnv::new();
    let out = common::run_cli(
        &[
            "forget",
            "--data-dir",
            env.data_str(),
            "--session",
            "x",
            "--project",
            "y",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let out = common::run_cli(&["forget", "--data-dir", env.data_str()], &[]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn retain_days_drops_old_turns_of_gone_transcripts() {
    let env = StoreEnv::new();
    let (old, new) = corpus(&env);
    std::fs::remove_file(&old).unwrap();
    std::fs::remove_file(&new).unwrap();
    let s = env.serve(&["--retain-days", "30"]);
    poll_until_desc("OLD dropped", Duration::from_secs(20), || {
        listed(&s, OLD).is_none().then_some(())
    });
    assert!(s.hits("wrenword").is_empty());
    assert_eq!(s.hits("finchword").len(), 1, "recent store-only turns stay");
    let st = env.store_status_cli();
    assert_eq!(st["conversations"], 1, "{st}");
    let _ = json!({});
}
