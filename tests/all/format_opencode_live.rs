//! OpenCode through the binary while its data changes: rows committed to the database (rollback
//! journal and WAL, written live by python3's SQLite), files added to the legacy storage tree,
//! and damaged databases that the server must survive and recover from.

use crate::common::mcp::{hit_keys, hit_sessions};
use crate::common::opencode::{
    DEADLINE, DataDir, LiveDb, legacy_tree, source_status, text, wait_hit,
};
use crate::common::poll_until_desc;
use serde_json::json;

#[test]
fn damaged_databases_do_not_crash_the_server() {
    let garbage = DataDir::new();
    std::fs::write(
        garbage.db(),
        b"this is not a SQLite database at all, only text",
    )
    .expect("write");
    let truncated = DataDir::with_fixture("data");
    let bytes = std::fs::read(truncated.db()).expect("db");
    std::fs::write(truncated.db(), &bytes[..bytes.len() / 3]).expect("truncate");
    for data in [&garbage, &truncated] {
        let c = data.serve(&[]);
        let s = source_status(&c);
        assert_eq!(s["files"], 1, "{s}");
        assert_eq!(s["files_without_turns"], 1, "{s}");
        assert_eq!(s["skipped_lines"], 1, "{s}");
        assert!(s["warning"].is_string(), "{s}");
        assert!(c.is_alive());
        // once the file is whole again, its sessions appear
        std::fs::write(data.db(), &bytes).expect("restore");
        wait_hit(&c, "zanzibar", "opencode:ses_alpha");
    }
}

#[test]
fn legacy_storage_live_updates() {
    let data = legacy_tree();
    let c = data.serve(&["--no-archive"]);
    let st = data.storage();
    // a new message and part in an existing session
    st.message("ses_main", "msg_3", "user", 3000);
    st.part(
        "ses_main",
        "msg_3",
        "prt_6",
        text("And what about the toucanlive exporter?"),
    );
    wait_hit(&c, "toucanlive", "opencode:ses_main");
    assert_eq!(c.read_conversation("opencode:ses_main")["total_turns"], 2);
    // a part rewritten in place (OpenCode updates parts as they stream)
    st.part(
        "ses_main",
        "msg_3",
        "prt_6",
        text("And what about the pelicanlive exporter?"),
    );
    wait_hit(&c, "pelicanlive", "opencode:ses_main");
    assert!(hit_keys(&c.search("toucanlive")).is_empty());
    // a whole new session
    st.session("proj2", "ses_new", "Brand new", "/w/other", None);
    st.message("ses_new", "msg_n1", "user", 5000);
    st.part(
        "ses_new",
        "msg_n1",
        "prt_n1",
        text("A question about the ibislive module"),
    );
    wait_hit(&c, "ibislive", "opencode:ses_new");
    // a session deleted
    std::fs::remove_file(st.root.join("session/proj1/ses_kid.json")).expect("rm");
    poll_until_desc("the deleted child to vanish", DEADLINE, || {
        hit_keys(&c.search("heronkid")).is_empty().then_some(())
    });
}

/// Writes a one-turn session through a live connection.
fn live_session(db: &mut LiveDb, sid: &str, words: &str) {
    db.session(sid, &format!("Live {sid}"), "/w/live", None);
    db.message(sid, &format!("msg_{sid}_1"), "user", 100);
    db.part(
        sid,
        &format!("msg_{sid}_1"),
        &format!("prt_{sid}_1"),
        text(words),
    );
}

#[test]
fn database_live_updates_rollback_journal() {
    let data = DataDir::new();
    let Some(mut db) = LiveDb::start(&data.db(), false) else {
        return;
    };
    db.send(json!({"op": "schema"}));
    live_session(&mut db, "ses_one", "first live question about herons");
    let c = data.serve(&["--no-archive"]);
    wait_hit(&c, "herons", "opencode:ses_one");
    // a new message committed into an existing session, then a new session
    db.message("ses_one", "msg_ses_one_2", "assistant", 200);
    db.part(
        "ses_one",
        "msg_ses_one_2",
        "prt_ses_one_2",
        text("herons answer with cormorantlive"),
    );
    wait_hit(&c, "cormorantlive", "opencode:ses_one");
    live_session(&mut db, "ses_two", "second session about egretlive");
    wait_hit(&c, "egretlive", "opencode:ses_two");
    db.send(json!({"op": "sql", "sql": "DELETE FROM session WHERE id = 'ses_one'"}));
    poll_until_desc("the deleted session to vanish", DEADLINE, || {
        hit_keys(&c.search("herons")).is_empty().then_some(())
    });
    db.close();
}

#[test]
fn database_live_updates_through_the_wal() {
    let data = DataDir::new();
    let Some(mut db) = LiveDb::start(&data.db(), true) else {
        return;
    };
    db.send(json!({"op": "schema"}));
    live_session(&mut db, "ses_w1", "wal session about storks");
    db.send(json!({"op": "checkpoint"}));
    let c = data.serve(&[]);
    wait_hit(&c, "storks", "opencode:ses_w1");
    // committed rows that exist only in the -wal file (the writer keeps it open)
    live_session(&mut db, "ses_w2", "a walonlylive question");
    db.message("ses_w1", "msg_ses_w1_2", "user", 300);
    db.part(
        "ses_w1",
        "msg_ses_w1_2",
        "prt_ses_w1_2",
        text("followup about ospreylive"),
    );
    assert!(data.file_names().contains(&"opencode.db-wal".to_owned()));
    wait_hit(&c, "walonlylive", "opencode:ses_w2");
    wait_hit(&c, "ospreylive", "opencode:ses_w1");
    // the writer closes: SQLite checkpoints into the file and removes the WAL
    let generation = c.index_status()["generation"].as_u64().expect("generation");
    db.close();
    assert!(!data.file_names().contains(&"opencode.db-wal".to_owned()));
    poll_until_desc("the checkpointed database to be re-read", DEADLINE, || {
        let st = c.index_status();
        (st["generation"].as_u64() > Some(generation) && st["pending_changes"] == 0).then_some(())
    });
    assert!(hit_sessions(&c.search("walonlylive")).contains(&"opencode:ses_w2".to_owned()));
    assert_eq!(c.read_conversation("opencode:ses_w1")["total_turns"], 2);
}
