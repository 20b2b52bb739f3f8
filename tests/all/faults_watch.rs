//! Faults, points 4 and 5: a directory that cannot be watched (unreadable to the server run as
//! another user; or created after the inotify watch limit was reached, in a user namespace with
//! a low limit, or under the test hook that caps the watches) is polled and listed with the real
//! cause in `index_status`; the rest stays on notifications.

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

/// `unshare` into a user namespace whose inotify watch limit is 12, then the command.
const LOW_LIMIT: [&str; 6] = [
    "unshare",
    "--user",
    "--map-root-user",
    "sh",
    "-c",
    "echo 12 > /proc/sys/user/max_inotify_watches && exec \"$@\"",
];

fn can_lower_the_limit() -> bool {
    std::process::Command::new(LOW_LIMIT[0])
        .args(&LOW_LIMIT[1..])
        .args(["sh", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn fault_watch_limit_reached_while_running_falls_back_to_polling() {
    if !can_lower_the_limit() {
        skip("user namespaces with a settable max_inotify_watches are unavailable");
        return;
    }
    let dir = ProjectsDir::new();
    dir.project("-p-start")
        .session(ID)
        .exchange("startword prompt", "ok");
    let mut via: Vec<&str> = LOW_LIMIT.to_vec();
    via.push("sh");
    let args = ["--projects-dir", dir.path_str(), "--no-cache"];
    let c = McpClient::spawn_via(&via, &args, &[]);
    c.initialize();
    c.wait_ready();
    assert_eq!(c.search("startword")["total"], 1);
    let ids: Vec<String> = (0..20)
        .map(|i| format!("5e770000-0000-4000-8000-0000000001{i:02}"))
        .collect();
    let mut writers = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let mut w = dir.project(&format!("-p-new{i:02}")).session(id);
        w.exchange(&format!("newword{i:02} prompt"), "ok");
        writers.push(w);
    }
    // appends after the limit was reached must be seen too
    for (i, w) in writers.iter_mut().enumerate() {
        w.exchange(&format!("appendword{i:02} prompt"), "ok");
    }
    poll_until_desc(
        "every new directory's appends indexed",
        Duration::from_secs(40),
        || {
            (0..20)
                .all(|i| c.search(&format!("appendword{i:02}"))["total"] == 1)
                .then_some(())
        },
    );
    // and so must later appends, long after the one rescan the watcher error caused
    for (i, w) in writers.iter_mut().enumerate() {
        w.exchange(&format!("secondword{i:02} prompt"), "ok");
    }
    poll_until_desc("later appends indexed", Duration::from_secs(40), || {
        (0..20)
            .all(|i| c.search(&format!("secondword{i:02}"))["total"] == 1)
            .then_some(())
    });
    let st = c.index_status();
    assert_eq!(st["watch_mode"], "watch", "{st}");
    let polled = st["polled_dirs"].as_array().cloned().unwrap_or_default();
    assert!(!polled.is_empty(), "{st}");
    assert!(st.to_string().contains("max_user_watches"), "{st}");
    // each directory that could not be watched is listed by path, with the real cause
    for d in &polled {
        let path = d["path"].as_str().unwrap_or_default();
        assert!(
            path.starts_with(dir.path_str()) && path.contains("-p-new"),
            "{st}"
        );
        assert!(
            d["reason"].as_str().unwrap_or_default().contains("ENOSPC"),
            "{st}"
        );
    }
}

/// Paths of `index_status.polled_dirs`, sorted.
fn polled_paths(st: &serde_json::Value) -> Vec<String> {
    let mut v: Vec<String> = st["polled_dirs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["path"].as_str().map(str::to_owned))
        .collect();
    v.sort();
    v
}

#[test]
fn fault_watch_cap_reached_while_running_polls_each_new_directory() {
    let dir = ProjectsDir::new();
    let mut start = dir.project("-a-start").session(ID);
    start.exchange("startword prompt", "ok");
    // the root and `-a-start` are watched; every directory created later is over the cap
    let args = [
        "--projects-dir",
        dir.path_str(),
        "--no-cache",
        "--debounce-ms",
        "100",
        "--poll-interval-ms",
        "300",
        // a removed directory's sessions leave the index (the durable store would keep them)
        "--no-archive",
    ];
    let c = McpClient::spawn(&args, &[("CONVERSATION_SEARCH_TEST_MAX_WATCHES", "2")]);
    c.initialize();
    c.wait_ready();
    let st = c.index_status();
    assert_eq!(st["watch_mode"], "watch", "{st}");
    assert!(polled_paths(&st).is_empty(), "{st}");
    let names = ["-p-new0", "-p-new1", "-p-new2"];
    let mut writers: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut w = dir
                .project(name)
                .session(&format!("5e770000-0000-4000-8000-00000000020{i}"));
            w.exchange(&format!("newword{i} prompt"), "ok");
            w
        })
        .collect();
    let expected: Vec<String> = names
        .iter()
        .map(|n| dir.path().join(n).display().to_string())
        .collect();
    let st = poll_until_desc(
        "every new directory listed as polled",
        Duration::from_secs(20),
        || {
            let st = c.index_status();
            (polled_paths(&st) == expected).then_some(st)
        },
    );
    assert_eq!(st["watch_mode"], "watch", "{st}");
    for d in st["polled_dirs"].as_array().unwrap() {
        let reason = d["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("watch limit"), "{st}");
        assert!(
            reason.contains("CONVERSATION_SEARCH_TEST_MAX_WATCHES=2"),
            "{st}"
        );
    }
    // appends, long after each directory appeared, are seen by polling; the watched
    // directory's by notifications
    for round in ["appendword", "secondword"] {
        for (i, w) in writers.iter_mut().enumerate() {
            w.exchange(&format!("{round}{i} prompt"), "ok");
        }
        start.exchange(&format!("{round}start prompt"), "ok");
        poll_until_desc(
            &format!("{round} appends indexed"),
            Duration::from_secs(20),
            || {
                let all = (0..3).all(|i| c.search(&format!("{round}{i}"))["total"] == 1)
                    && c.search(&format!("{round}start"))["total"] == 1;
                all.then_some(())
            },
        );
    }
    // a polled directory that goes away leaves the list and the index
    std::fs::remove_dir_all(dir.path().join(names[0])).expect("rm");
    poll_until_desc(
        "the removed directory unlisted and unindexed",
        Duration::from_secs(20),
        || {
            let st = c.index_status();
            let gone = polled_paths(&st) == expected[1..] && c.search("newword0")["total"] == 0;
            gone.then_some(())
        },
    );
    assert_eq!(c.search("secondword1")["total"], 1);
}
