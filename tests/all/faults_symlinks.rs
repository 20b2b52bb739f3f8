//! Faults, point 7: a project directory symlinked to another project of the same root is a
//! duplicate, skipped at start and live (no stale `<id>@<link>` copy).

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::McpClient;
use crate::common::{poll_until_desc, run_cli_json};
use std::time::Duration;

const ID: &str = "11c70000-0000-4000-8000-000000000001";

fn total(c: &McpClient, q: &str) -> u64 {
    c.search(q)["total"].as_u64().unwrap_or(0)
}

#[test]
fn fault_project_symlinked_inside_the_root_is_not_a_duplicate() {
    let dir = ProjectsDir::new();
    let p = dir.project("-a-real");
    let mut w = p.session(ID);
    w.exchange("linkword first prompt", "ok");
    let link = dir.path().join("-b-link");
    std::os::unix::fs::symlink(dir.path().join("-a-real"), &link).expect("symlink");
    let c = McpClient::spawn(&["--projects-dir", dir.path_str()], &[]);
    c.initialize();
    c.wait_ready();
    assert_eq!(total(&c, "linkword"), 1);
    let listed = run_cli_json(&["list", "--projects-dir", dir.path_str(), "--no-cache"]);
    let rows = listed["conversations"].as_array().expect("conversations");
    assert_eq!(rows.len(), 1, "{listed}");
    assert!(!listed.to_string().contains("b-link"), "{listed}");
    w.exchange("laterword appended prompt", "ok");
    poll_until_desc("the append is indexed", Duration::from_secs(20), || {
        (total(&c, "laterword") > 0).then_some(())
    });
    assert_eq!(total(&c, "laterword"), 1);
    assert_eq!(total(&c, "linkword"), 1);
    let listed = c.list(serde_json::json!({})).to_string();
    assert!(!listed.contains("b-link"), "{listed}");
}
