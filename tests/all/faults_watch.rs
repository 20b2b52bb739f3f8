//! Faults, point 5: one directory that cannot be watched (here unreadable to the server, run
//! as another user) is polled and listed by path with the real cause in `index_status`; the
//! rest of the root stays on notifications.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::McpClient;
use crate::common::{poll_until_desc, skip};

const ID: &str = "5e770000-0000-4000-8000-000000000001";
const NOBODY: [&str; 4] = [
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
];

fn can_switch_user() -> bool {
    std::process::Command::new(NOBODY[0])
        .args(&NOBODY[1..])
        .arg("true")
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn fault_an_unreadable_directory_is_polled_and_the_rest_stays_watched() {
    if !can_switch_user() {
        skip("cannot run the server as another user (needs root and setpriv)");
        return;
    }
    let dir = ProjectsDir::new();
    let mut w = dir.project("-a-open").session(ID);
    w.exchange("openword first prompt", "ok");
    let closed = dir.path().join("-b-closed");
    std::fs::create_dir(&closed).expect("mkdir");
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let args = ["--projects-dir", dir.path_str(), "--no-cache"];
    let c = McpClient::spawn_via(&NOBODY, &args, &[]);
    c.initialize();
    c.wait_ready();
    let st = c.index_status();
    assert_eq!(st["watch_mode"], "watch", "{st}");
    let polled = st["polled_dirs"].as_array().cloned().unwrap_or_default();
    assert_eq!(polled.len(), 1, "{st}");
    assert_eq!(polled[0]["path"], closed.to_str().unwrap(), "{st}");
    let reason = polled[0]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    assert!(reason.contains("permission denied"), "{st}");
    assert!(!st.to_string().contains("max_user_watches"), "{st}");
    w.exchange("laterword appended prompt", "ok");
    poll_until_desc("the append is indexed", Duration::from_secs(20), || {
        (c.search("laterword")["total"].as_u64() == Some(1)).then_some(())
    });
}
