//! Durable history through the binary: turns outlive their transcripts (deleted before a
//! restart, deleted while running, truncated), a restored file doubles nothing, and every
//! tool (search, list, read_turn, read_conversation, find_file_history) answers for
//! store-only conversations, which say `source_present: false` and since when. The transcript
//! tree is never written to.

use crate::common;

use crate::common::fixture::{new_msg_id, new_tool_id};
use crate::common::store::{
    StoreEnv, listed, store_status, tree_bytes, wait_presence, wait_stored,
};
use crate::common::{poll_until_desc, squash_ws};
use serde_json::json;
use std::time::Duration;

const A: &str = "57a0e000-0000-4000-8000-00000000000a";
const B: &str = "57a0e000-0000-4000-8000-00000000000b";

/// Two sessions: A (3 turns, one with a Read of `/w/keeper.rs`), B (1 turn).
fn corpus(env: &StoreEnv) -> std::path::PathBuf {
    let p = env.projects.project("-home-u-keep");
    let mut a = p.session(A);
    a.exchange("first kestrelprompt about parsers", "kestrelreply one");
    let msg = new_msg_id();
    a.user("second turn reads the keeper file");
    a.assistant_text(&msg, "reading it now");
    a.assistant_tool_use(
        &msg,
        &new_tool_id(),
        "Read",
        json!({"file_path": "/w/keeper.rs"}),
    );
    a.exchange("third turn ospreyword", "ospreyreply");
    let mut b = p.session(B);
    b.exchange("other session heronword", "heron reply");
    a.path().to_path_buf()
}

#[track_caller]
fn assert_served_from_store(c: &common::mcp::McpClient) {
    assert_eq!(c.hits("kestrelprompt"), vec![(A.to_string(), 0)]);
    assert_eq!(c.hits("ospreyword"), vec![(A.to_string(), 2)]);
    let row = wait_presence(c, A, false);
    assert_eq!(row["turn_count"], 3, "{row}");
    assert!(row["source_missing_since"].is_string(), "{row}");
    let t = c.read_turn(A, 1);
    assert!(
        t["user_text"].as_str().unwrap().contains("keeper file"),
        "{t}"
    );
    assert_eq!(t["tools_used"][0]["file"], "/w/keeper.rs", "{t}");
    let conv = c.read_conversation(A);
    assert_eq!(conv["source_present"], false, "{conv}");
    assert_eq!(conv["turns"].as_array().unwrap().len(), 3, "{conv}");
    assert_eq!(
        squash_ws(conv["turns"][2]["assistant_text"].as_str().unwrap()),
        "ospreyreply"
    );
    let h = c.ok("find_file_history", json!({"path": "keeper.rs"}));
    assert_eq!(h["results"][0]["session_id"], A, "{h}");
    poll_until_desc("store.only_in_store >= 1", Duration::from_secs(20), || {
        (store_status(c)["only_in_store"].as_u64().unwrap_or(0) >= 1).then_some(())
    });
}

#[test]
fn deleted_transcripts_are_served_from_the_store_after_a_restart() {
    let env = StoreEnv::new();
    let a = corpus(&env);
    {
        let s = env.serve(&[]);
        let st = wait_stored(&s, 4);
        assert_eq!(st["role"], "writer", "{st}");
        assert_eq!(listed(&s, A).unwrap()["source_present"], true);
    }
    std::fs::remove_file(&a).unwrap();
    let before = tree_bytes(env.projects.path());
    // with the persistent index, and without it (from the store alone)
    let s = env.serve(&[]);
    assert_served_from_store(&s);
    drop(s);
    std::fs::remove_dir_all(env.cache.path()).unwrap();
    let s = env.serve(&[]);
    assert_served_from_store(&s);
    assert_eq!(
        tree_bytes(env.projects.path()),
        before,
        "transcripts untouched"
    );
}

#[test]
fn a_transcript_deleted_while_running_stays_searchable_and_readable() {
    let env = StoreEnv::new();
    let a = corpus(&env);
    let s = env.serve(&[]);
    wait_stored(&s, 4);
    std::fs::remove_file(&a).unwrap();
    wait_presence(&s, A, false);
    assert_served_from_store(&s);
}

#[test]
fn no_archive_keeps_the_mirror_behaviour() {
    let env = StoreEnv::new();
    let a = corpus(&env);
    let s = env.serve(&["--no-archive"]);
    assert_eq!(store_status(&s)["enabled"], false);
    std::fs::remove_file(&a).unwrap();
    poll_until_desc("A gone", Duration::from_secs(20), || {
        s.hits("kestrelprompt").is_empty().then_some(())
    });
    assert!(listed(&s, A).is_none());
    assert!(!env.data.path().join("store.sqlite3").exists());
}

#[test]
fn a_truncated_transcript_keeps_its_stored_turns() {
    let env = StoreEnv::new();
    let a = corpus(&env);
    let s = env.serve(&[]);
    wait_stored(&s, 4);
    // cut the file after its first turn
    let text = std::fs::read_to_string(&a).unwrap();
    let keep: String = text
        .split_inclusive('\n')
        .take_while(|l| !l.contains("keeper file"))
        .collect();
    std::fs::write(&a, keep).unwrap();
    poll_until_desc("files_reread", Duration::from_secs(20), || {
        (s.index_status()["files_reread"].as_u64().unwrap_or(0) >= 1).then_some(())
    });
    assert_eq!(s.hits("ospreyword"), vec![(A.to_string(), 2)]);
    assert_eq!(s.hits("kestrelprompt"), vec![(A.to_string(), 0)]);
    let t = s.read_turn(A, 2);
    assert!(
        t["user_text"].as_str().unwrap().contains("ospreyword"),
        "{t}"
    );
    assert_eq!(listed(&s, A).unwrap()["turn_count"], 3);
    // and after a restart
    drop(s);
    let s = env.serve(&[]);
    assert_eq!(s.hits("ospreyword"), vec![(A.to_string(), 2)]);
}

#[test]
fn a_restored_file_doubles_nothing() {
    let env = StoreEnv::new();
    let a = corpus(&env);
    let saved = std::fs::read(&a).unwrap();
    let s = env.serve(&[]);
    wait_stored(&s, 4);
    std::fs::remove_file(&a).unwrap();
    wait_presence(&s, A, false);
    std::fs::write(&a, &saved).unwrap();
    wait_presence(&s, A, true);
    assert_eq!(s.hits("kestrelprompt"), vec![(A.to_string(), 0)]);
    let total = s.list(json!({}))["total"].as_u64().unwrap();
    assert_eq!(total, 2);
    drop(s);
    // restored while no server ran
    std::fs::remove_file(&a).unwrap();
    let s = env.serve(&[]);
    wait_presence(&s, A, false);
    drop(s);
    std::fs::write(&a, &saved).unwrap();
    let s = env.serve(&[]);
    wait_presence(&s, A, true);
    assert_eq!(s.hits("ospreyword"), vec![(A.to_string(), 2)]);
    assert_eq!(s.list(json!({}))["total"], 2);
    let st = env.store_status_cli();
    assert_eq!(st["conversations"], 2, "{st}");
    assert_eq!(st["turns"], 4, "{st}");
    assert_eq!(st["only_in_store"], 0, "{st}");
}

/// The generation this writer published last (`index_status.sharing.generation`).
fn published(s: &common::mcp::McpClient) -> u64 {
    s.index_status()["sharing"]["generation"]
        .as_u64()
        .expect("sharing.generation")
}

/// A transcript removed while a writer ran leaves a delta on top of the last full cache write
/// (the next one is 30 s away); restored while no server runs, it is taken back under its id
/// by the next server, which reads that delta first: not a second copy under `<id>@<project>`.
#[test]
fn a_file_restored_after_a_published_removal_doubles_nothing() {
    let env = StoreEnv::new();
    let a = corpus(&env);
    let saved = std::fs::read(&a).unwrap();
    let s = env.serve(&[]);
    wait_stored(&s, 4);
    let before = published(&s);
    std::fs::remove_file(&a).unwrap();
    wait_presence(&s, A, false);
    poll_until_desc(
        "the removal published as a generation",
        Duration::from_secs(60),
        || (published(&s) > before).then_some(()),
    );
    drop(s);
    std::fs::write(&a, &saved).unwrap();
    let s = env.serve(&[]);
    // until A is back, or a second copy of it shows up
    let rows = poll_until_desc(
        &format!("{A} listed with source_present true, or a copy of it"),
        Duration::from_secs(90),
        || {
            let rows = s.list(json!({}))["conversations"].clone();
            let list = rows.as_array().expect("conversations");
            list.iter()
                .any(|r| {
                    r["session_id"] == A && r["source_present"] == true
                        || r["session_id"]
                            .as_str()
                            .is_some_and(|id| id.starts_with(&format!("{A}@")))
                })
                .then_some(rows)
        },
    );
    let ids: Vec<&str> = rows
        .as_array()
        .expect("conversations")
        .iter()
        .map(|r| r["session_id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, [A, B], "one conversation per session: {rows}");
    assert_eq!(rows[0]["turn_count"], 3, "{rows}");
    assert_eq!(s.hits("ospreyword"), vec![(A.to_string(), 2)]);
}

#[test]
fn store_status_reports_the_store() {
    let env = StoreEnv::new();
    let a = corpus(&env);
    drop(env.serve(&[]));
    std::fs::remove_file(&a).unwrap();
    drop(env.serve(&[]));
    let st = env.store_status_cli();
    assert_eq!(st["exists"], true, "{st}");
    assert_eq!(st["conversations"], 2, "{st}");
    assert_eq!(st["turns"], 4, "{st}");
    assert_eq!(st["only_in_store"], 1, "{st}");
    assert_eq!(st["turns_only_in_store"], 3, "{st}");
    assert!(st["bytes_on_disk"].as_u64().unwrap() > 0, "{st}");
    assert!(
        st["oldest_turn"].is_string() && st["newest_turn"].is_string(),
        "{st}"
    );
}
