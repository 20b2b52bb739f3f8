//! Faults, point 7: a session file that is a symlink to a file outside the root is watched at
//! its target, so appends to the target are seen live.

use std::time::Duration;

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::McpClient;
use crate::common::poll_until_desc;

const ID: &str = "11c70000-0000-4000-8000-000000000002";

#[test]
fn fault_appends_to_the_target_of_a_symlinked_session_are_seen_live() {
    let elsewhere = ProjectsDir::new();
    let mut w = elsewhere.project("-store").session(ID);
    w.exchange("targetword first prompt", "ok");
    let dir = ProjectsDir::new();
    let project = dir.path().join("-home-u-linked");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::os::unix::fs::symlink(w.path(), project.join(format!("{ID}.jsonl"))).expect("symlink");
    let c = McpClient::spawn(&["--projects-dir", dir.path_str(), "--no-cache"], &[]);
    c.initialize();
    c.wait_ready();
    assert_eq!(c.search("targetword")["total"], 1);
    w.exchange("appendedword later prompt", "ok");
    poll_until_desc(
        "the append to the target is indexed",
        Duration::from_secs(20),
        || (c.search("appendedword")["total"] == 1).then_some(()),
    );
}
