//! Durable-store faults through the binary: a damaged store is moved aside (never deleted),
//! reported and rebuilt from the transcripts that remain; an unusable data directory means
//! mirror-only, said once on stderr and in index_status; a store written by a newer version is
//! refused and left byte for byte as it was. The transcript tree is never written to.

use crate::common;

use crate::common::mcp::McpClient;
use crate::common::store::{StoreEnv, store_status, tree_bytes, wait_stored};

const A: &str = "fa170000-0000-4000-8000-00000000000a";

fn corpus(env: &StoreEnv) {
    let mut a = env.projects.project("-home-u-faults").session(A);
    a.exchange("plover prompt", "plover reply");
    a.exchange("second plover", "reply two");
}

#[test]
fn a_damaged_store_is_moved_aside_reported_and_rebuilt() {
    let env = StoreEnv::new();
    corpus(&env);
    drop(env.serve(&[]));
    let db = env.data.path().join("store.sqlite3");
    // the database and its write-ahead log are overwritten with junk
    let bytes = vec![0x5a; 8192];
    std::fs::write(&db, &bytes).unwrap();
    let wal = env.data.path().join("store.sqlite3-wal");
    if wal.exists() {
        std::fs::write(&wal, vec![0xa5; 4096]).unwrap();
    }
    let _ = std::fs::remove_file(env.data.path().join("store.sqlite3-shm"));
    let before = tree_bytes(env.projects.path());
    let s = env.serve(&[]);
    let st = wait_stored(&s, 2);
    let aside = st["moved_aside"]
        .as_str()
        .expect("moved_aside reported")
        .to_string();
    assert!(std::path::Path::new(&aside).exists(), "{aside} kept");
    assert_eq!(std::fs::read(&aside).unwrap(), bytes, "moved, not changed");
    assert_eq!(s.hits("plover").len(), 2);
    assert_eq!(tree_bytes(env.projects.path()), before);
}

#[test]
fn an_unwritable_data_dir_runs_mirror_only() {
    let env = StoreEnv::new();
    corpus(&env);
    let blocker = env.data.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let dir = blocker.join("data");
    let s = McpClient::start(&[
        "--archive",
        "--projects-dir",
        env.projects.path_str(),
        "--data-dir",
        dir.to_str().unwrap(),
    ]);
    s.wait_ready();
    let st = store_status(&s);
    assert_eq!(st["enabled"], false, "{st}");
    assert!(
        st["error"].as_str().unwrap().contains("mirror-only"),
        "{st}"
    );
    assert_eq!(s.hits("plover").len(), 2);
    let err = s.stderr_text();
    assert_eq!(err.matches("mirror-only").count(), 1, "{err}");
}

#[test]
fn a_store_from_a_newer_version_is_refused_and_left_alone() {
    let env = StoreEnv::new();
    corpus(&env);
    // a one-shot command closes the store cleanly: everything is checkpointed into the file
    let out = common::run_cli(&env.args(&["list"]), &[]);
    assert!(out.status.success());
    let db = env.data.path().join("store.sqlite3");
    // a newer build's schema version (the header's user_version field, offset 60)
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 100, "checkpointed");
    bytes[60..64].copy_from_slice(&99u32.to_be_bytes());
    for side in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(env.data.path().join(format!("store.sqlite3{side}")));
    }
    std::fs::write(&db, &bytes).unwrap();
    let s = env.serve(&[]);
    let st = store_status(&s);
    assert_eq!(st["enabled"], false, "{st}");
    assert!(st["error"].as_str().unwrap().contains("newer"), "{st}");
    assert_eq!(s.hits("plover").len(), 2, "mirror-only still answers");
    drop(s);
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "never overwritten");
}

#[test]
fn the_store_is_on_by_default_and_no_archive_turns_it_off() {
    let env = StoreEnv::new();
    corpus(&env);
    // `--no-archive` (even after the still accepted `--archive`): no store is opened
    let s = McpClient::start(&env.args(&["--no-archive"]));
    s.wait_ready();
    let st = store_status(&s);
    assert_eq!(st["enabled"], false, "{st}");
    assert_eq!(st["role"], "off", "{st}");
    assert_eq!(s.hits("plover").len(), 2);
    drop(s);
    assert!(
        !env.data.path().join("store.sqlite3").exists(),
        "no store file with --no-archive"
    );
    // the same arguments without `--archive`: the store is the default
    let plain: Vec<&str> = env
        .args(&[])
        .into_iter()
        .filter(|a| *a != "--archive")
        .collect();
    let s = McpClient::start(&plain);
    s.wait_ready();
    let st = store_status(&s);
    assert_eq!(st["enabled"], true, "{st}");
    assert_eq!(st["role"], "writer", "{st}");
    drop(s);
    assert!(
        env.data.path().join("store.sqlite3").exists(),
        "store written by default"
    );
}
