//! Faults, point 8: names are bytes. A non-UTF-8 project directory name is indexed under a
//! lossy display name, never misfiled live, and does not change another project's name.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::McpClient;
use crate::common::{poll_until_desc, run_cli_json};

const ODD: &str = "0dd00000-0000-4000-8000-000000000001";
const PLAIN: &str = "0dd00000-0000-4000-8000-000000000002";
const PHANTOM: &str = "0dd00000-0000-4000-8000-000000000003";
const LATE: &str = "0dd00000-0000-4000-8000-000000000004";
const OTHER: &str = "0dd00000-0000-4000-8000-000000000005";

fn session(dir: &std::path::Path, id: &str, prompt: &str) {
    let line = |v: serde_json::Value| format!("{v}\n");
    let text = line(
        serde_json::json!({"type": "user", "uuid": format!("{id}-u"), "sessionId": id,
            "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": prompt}}),
    ) + &line(
        serde_json::json!({"type": "assistant", "uuid": format!("{id}-a"),
            "timestamp": "2026-01-01T00:00:01Z", "message": {"id": format!("{id}-m"),
            "role": "assistant", "content": [{"type": "text", "text": "ok"}]}}),
    );
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join(format!("{id}.jsonl")), text).expect("write");
}

fn projects(listed: &serde_json::Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = listed["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .map(|r| {
            (
                r["session_id"].as_str().unwrap().into(),
                r["project"].as_str().unwrap().into(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn fault_non_utf8_names_are_indexed_lossily_and_never_misfiled() {
    let dir = ProjectsDir::new();
    session(&dir.path().join("-home-u-plain"), PLAIN, "plainword prompt");
    session(&dir.path().join("-home-u-other"), OTHER, "otherword prompt");
    let list = || run_cli_json(&["list", "--projects-dir", dir.path_str(), "--no-cache"]);
    let before = projects(&list());
    let odd = dir.path().join(OsStr::from_bytes(b"-home-u-\xfe"));
    session(&odd, ODD, "oddword prompt");
    let after = projects(&list());
    assert_eq!(after.len(), 3, "{after:?}");
    for row in &before {
        assert!(
            after.contains(row),
            "project renamed: {before:?} → {after:?}"
        );
    }
    let odd_row = after
        .iter()
        .find(|(id, _)| id == ODD)
        .expect("odd session listed");
    assert!(odd_row.1.contains('\u{fffd}'), "{odd_row:?}");

    let c = McpClient::spawn(&["--projects-dir", dir.path_str(), "--no-cache"], &[]);
    c.initialize();
    c.wait_ready();
    assert_eq!(c.search("oddword")["total"], 1);
    session(&odd.join("phantom"), PHANTOM, "phantomword prompt");
    session(&dir.path().join("-home-u-late"), LATE, "lateword prompt");
    poll_until_desc(
        "the later project is indexed",
        Duration::from_secs(20),
        || (c.search("lateword")["total"] == 1).then_some(()),
    );
    assert_eq!(
        c.search("phantomword")["total"],
        0,
        "misfiled as project `phantom`"
    );
    assert!(
        !c.list(serde_json::json!({}))
            .to_string()
            .contains("\"phantom\"")
    );
}
