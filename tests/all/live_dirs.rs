//! Live updates of the directory tree: a project directory created together with its first
//! session, directories that do not match PATTERN (ignored, until renamed to match),
//! `subagents/` and `.meta.json` files appearing under an existing session, a renamed project
//! directory, and a projects directory that appears only after start (or is removed and comes
//! back).

use crate::common;

use std::time::{Duration, Instant};

use crate::common::fixture::{ProjectsDir, new_msg_id};
use crate::common::live::{
    DEBOUNCE_MS, MARGIN, assert_converges_to_fresh, num, serve_live, serve_path, visible_at,
    wait_caught_up, wait_hits, wait_idle, wait_status,
};
use crate::common::poll_until_desc;
use crate::common::search::listed;
use serde_json::json;

const P: &str = "d1e50000-0000-4000-8000-000000000001";
const Q: &str = "d1e50000-0000-4000-8000-000000000002";
const R: &str = "d1e50000-0000-4000-8000-000000000003";

#[test]
fn a_project_directory_created_with_its_session_at_once_is_picked_up() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-old")
        .session(P)
        .exchange("existing prompt", "existing reply");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let debounce = Duration::from_millis(DEBOUNCE_MS);

    // mkdir and write in the same instant: the file may exist before the directory is watched
    let t = Instant::now();
    let mut w = s.dir.project("-home-u-brandnew").session(Q);
    w.exchange("freshly created ospreyword prompt", "reply");
    visible_at(&s, "ospreyword", t + debounce + MARGIN);
    let st = wait_caught_up(&s, s.dir.path());
    assert_eq!(
        (
            num(&st, "projects"),
            num(&st, "sessions"),
            num(&st, "files")
        ),
        (2, 2, 2),
        "{st}"
    );
    assert!(num(&st, "files_added") >= 1, "{st}");
    assert!(listed(&s).iter().any(|c| c["session_id"] == Q));

    // the new directory is now followed: appends and further sessions show up
    let t = Instant::now();
    w.exchange("second ospreyappend prompt", "reply");
    visible_at(&s, "ospreyappend", t + debounce + MARGIN);
    assert_eq!(s.hits("ospreyappend"), vec![(Q.to_string(), 1)]);
    s.dir
        .project("-home-u-brandnew")
        .session(R)
        .exchange("sibling ospreysibling", "reply");
    wait_hits(&s, "ospreysibling");

    // several nested levels at once: a project, a session directory and its subagents
    let t = Instant::now();
    let mut sub = s.dir.project("-home-u-deep").subagent_nested(
        P,
        "deadbeef01",
        Some(("Explore", "Deep dive")),
    );
    sub.user("nested at once harrierword");
    sub.assistant_text(&new_msg_id(), "done");
    visible_at(&s, "harrierword", t + debounce + MARGIN);
    wait_caught_up(&s, s.dir.path());
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &[
            "ospreyword",
            "ospreyappend",
            "reply",
            "prompt",
            "harrierword",
        ],
    );
}

#[test]
fn directories_not_matching_the_pattern_are_ignored() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-keep-start")
        .session(P)
        .exchange("kept from the start", "reply");
    dir.project("-home-u-drop-start")
        .session(Q)
        .exchange("dropped from the start shrikeword", "reply");
    let s = serve_live(dir, DEBOUNCE_MS, &["*-keep-*"]);
    let st0 = s.index_status();
    assert_eq!(st0["pattern"], "*-keep-*");
    assert_eq!(num(&st0, "files"), 1, "{st0}");

    // the ignored changes first, then the matching one: once the matching one is indexed and
    // nothing is pending, the ignored ones have certainly been looked at (they were due first)
    s.dir
        .project("-home-u-drop-start")
        .session(Q)
        .exchange("appended to an ignored shrikeword session", "reply");
    s.dir
        .project("-home-u-drop-later")
        .session("d1e50000-0000-4000-8000-000000000004")
        .exchange("dropped later shrikeword", "reply");
    std::thread::sleep(Duration::from_millis(20));
    s.dir
        .project("-home-u-keep-later")
        .session("d1e50000-0000-4000-8000-000000000005")
        .exchange("kept later falconword", "reply");
    wait_hits(&s, "falconword");
    let st = wait_idle(&s);
    assert!(
        s.hits("shrikeword").is_empty(),
        "ignored directories leaked"
    );
    assert_eq!(num(&st, "files"), 2, "{st}");
    assert_eq!(num(&st, "projects"), 2, "{st}");
    let projects: Vec<String> = listed(&s)
        .iter()
        .map(|c| c["project"].as_str().unwrap().to_string())
        .collect();
    assert!(!projects.is_empty(), "nothing listed");
    assert!(projects.iter().all(|p| !p.contains("drop")), "{projects:?}");
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &["*-keep-*"],
        &["kept", "shrikeword", "falconword", "reply"],
    );
    // renamed so that it matches: now indexed, and followed
    std::fs::rename(
        s.dir.path().join("-home-u-drop-start"),
        s.dir.path().join("-home-u-keep-renamed"),
    )
    .expect("rename");
    poll_until_desc(
        "the renamed directory indexed",
        common::live::DEADLINE,
        || {
            (s.hits("shrikeword") == vec![(Q.to_string(), 0), (Q.to_string(), 1)]
                || s.hits("shrikeword") == vec![(Q.to_string(), 1), (Q.to_string(), 0)])
            .then_some(())
        },
    );
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &["*-keep-*"],
        &["kept", "shrikeword", "falconword", "reply"],
    );
}

#[test]
fn subagents_appearing_under_an_existing_session_join_their_parent() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-agents");
    let mut parent = p.session(P);
    parent.exchange("delegate the search to a helper", "spawning a helper");
    p.session(Q).exchange("another session", "without helpers");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let count = |s: &common::mcp::McpClient| -> u64 {
        listed(s)
            .iter()
            .find(|c| c["session_id"] == P)
            .and_then(|c| c["subagent_count"].as_u64())
            .expect("parent listed with subagent_count")
    };
    assert_eq!(count(&s), 0);
    assert_eq!(num(&s.index_status(), "subagents"), 0);

    let debounce = Duration::from_millis(DEBOUNCE_MS);
    let t = Instant::now();
    let mut sub = s.dir.project("-home-u-agents").subagent_nested(
        P,
        "a11ce0001",
        Some(("general-purpose", "Find the kiteword")),
    );
    sub.user("Find the kiteword in the tree");
    sub.assistant_text(&new_msg_id(), "It is in src/kite.rs");
    visible_at(&s, "kiteword", t + debounce + MARGIN);
    let r = s.search("kiteword");
    let hit = &r["results"][0];
    assert_eq!(hit["session_id"], format!("{P}/agent-a11ce0001"), "{r}");
    assert_eq!(hit["parent_session_id"], P, "{r}");
    assert_eq!(hit["agent_type"], "general-purpose", "{r}");
    assert_eq!(hit["agent_description"], "Find the kiteword", "{r}");
    wait_status(&s, "subagents == 1", |st| num(st, "subagents") == 1);
    assert_eq!(count(&s), 1);
    assert!(
        listed(&s)
            .iter()
            .all(|c| c["session_id"] == P || c["session_id"] == Q),
        "sub-agents are not listed as sessions"
    );

    // a second sub-agent in the now existing subagents/ directory, and an append to the first
    let mut second = s
        .dir
        .project("-home-u-agents")
        .subagent_nested(P, "a11ce0002", None);
    second.user("second helper buzzardword");
    second.assistant_text(&new_msg_id(), "ok");
    sub.exchange("follow-up kitefollow", "done");
    wait_hits(&s, "buzzardword");
    assert_eq!(
        wait_hits(&s, "kitefollow"),
        vec![(format!("{P}/agent-a11ce0001"), 1)]
    );
    wait_status(&s, "subagents == 2", |st| num(st, "subagents") == 2);
    assert_eq!(count(&s), 2);
    // the old flat layout: agent-<id>.jsonl beside the sessions, parent from its records
    let mut flat = s.dir.project("-home-u-agents").subagent_flat("f1a7", P);
    flat.user("flat helper ibisword");
    flat.assistant_text(&new_msg_id(), "ok");
    wait_hits(&s, "ibisword");
    let hit = s.search("ibisword")["results"][0].clone();
    assert_eq!(hit["session_id"], format!("{P}/agent-f1a7"), "{hit}");
    assert_eq!(hit["parent_session_id"], P, "{hit}");
    wait_status(&s, "subagents == 3", |st| num(st, "subagents") == 3);
    assert_eq!(count(&s), 3);
    let st = wait_caught_up(&s, s.dir.path());
    assert_eq!(num(&st, "sessions"), 2, "{st}");
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &[
            "kiteword",
            "buzzardword",
            "helper",
            "kitefollow",
            "ibisword",
        ],
    );
}

#[test]
fn a_projects_directory_created_after_start_is_picked_up() {
    let base = tempfile::tempdir().expect("temp dir");
    let root = base.path().join("later").join("projects");
    let s = serve_path(&root, DEBOUNCE_MS, &[]);
    let st = s.index_status();
    assert_eq!(st["complete"], true, "{st}");
    assert_eq!(num(&st, "files"), 0, "{st}");
    assert!(st["projects_dir"].as_str().unwrap().ends_with("projects"));

    // created (with parents) and populated at once
    let debounce = Duration::from_millis(DEBOUNCE_MS);
    let project = root.join("-home-u-late");
    std::fs::create_dir_all(&project).expect("mkdir -p");
    let t = Instant::now();
    let path = project.join(format!("{P}.jsonl"));
    let mut w = common::live::render(P, |r| {
        r.exchange("the late egretword prompt", "reply");
    });
    common::live::append(&path, &w);
    visible_at(&s, "egretword", t + debounce + MARGIN);

    // now watched recursively: appends and new projects follow
    w = common::live::render(P, |r| {
        r.set_time("2026-05-01T12:00:00.000Z");
        r.exchange("appended latecomerword", "reply");
    });
    let t = Instant::now();
    common::live::append(&path, &w);
    visible_at(&s, "latecomerword", t + debounce + MARGIN);
    assert_eq!(s.hits("latecomerword"), vec![(P.to_string(), 1)]);
    let other = root.join("-home-u-later");
    std::fs::create_dir_all(&other).expect("mkdir");
    common::live::append(
        &other.join(format!("{Q}.jsonl")),
        &common::live::render(Q, |r| {
            r.exchange("another latecomerproject", "reply");
        }),
    );
    wait_hits(&s, "latecomerproject");
    let st = wait_caught_up(&s, &root);
    assert_eq!(
        (
            num(&st, "projects"),
            num(&st, "sessions"),
            num(&st, "turns")
        ),
        (2, 2, 3),
        "{st}"
    );
    assert_converges_to_fresh(
        &s,
        &root,
        &[],
        &["egretword", "latecomerword", "reply", "latecomerproject"],
    );
}

#[test]
fn a_renamed_project_directory_is_followed_under_its_new_name() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-before")
        .session(P)
        .exchange("renamed lorikeetword prompt", "reply");
    dir.project("-home-u-stays")
        .session(Q)
        .exchange("unrelated prompt", "reply");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let old = s.dir.path().join("-home-u-before");
    let new = s.dir.path().join("-home-u-after");
    std::fs::rename(&old, &new).expect("rename");
    poll_project(&s, "lorikeetword", "after");
    // files inside the moved directory are still followed, under the new path
    let debounce = Duration::from_millis(DEBOUNCE_MS);
    let t = Instant::now();
    common::live::append(
        &new.join(format!("{P}.jsonl")),
        &common::live::render(P, |r| {
            r.set_time("2026-05-01T12:00:00.000Z");
            r.exchange("after the move rosellaword", "reply");
        }),
    );
    visible_at(&s, "rosellaword", t + debounce + MARGIN);
    assert_eq!(s.hits("rosellaword"), vec![(P.to_string(), 1)]);
    let st = wait_caught_up(&s, s.dir.path());
    assert_eq!((num(&st, "files"), num(&st, "projects")), (2, 2), "{st}");
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &["lorikeetword", "rosellaword", "reply"],
    );
}

/// Polls until the hit for `word` reports a project containing `project`.
fn poll_project(s: &common::mcp::McpClient, word: &str, project: &str) {
    common::poll_until_desc(
        &format!("{word} in project {project}"),
        common::live::DEADLINE,
        || {
            let r = s.search(word);
            let hits = r["results"].as_array().unwrap();
            (hits.len() == 1 && hits[0]["project"].as_str().unwrap().contains(project))
                .then_some(())
        },
    );
}

#[test]
fn the_projects_directory_removed_and_recreated_is_followed_again() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-first")
        .session(P)
        .exchange("first life cormorantword", "reply");
    let s = serve_live(dir, DEBOUNCE_MS, &["--no-archive"]);
    let root = s.dir.path().to_path_buf();
    std::fs::remove_dir_all(&root).expect("rm -r projects");
    common::live::wait_no_hits(&s, "cormorantword");
    let st = wait_status(&s, "nothing indexed", |st| num(st, "files") == 0);
    assert_eq!(num(&st, "sessions"), 0, "{st}");
    // recreated: new files are found and followed
    let project = root.join("-home-u-second");
    std::fs::create_dir_all(&project).expect("mkdir -p");
    let path = project.join(format!("{Q}.jsonl"));
    common::live::append(
        &path,
        &common::live::render(Q, |r| {
            r.exchange("second life gannetword", "reply");
        }),
    );
    wait_hits(&s, "gannetword");
    common::live::append(
        &path,
        &common::live::render(Q, |r| {
            r.set_time("2026-05-01T12:00:00.000Z");
            r.exchange("still followed boobyword", "reply");
        }),
    );
    assert_eq!(wait_hits(&s, "boobyword"), vec![(Q.to_string(), 1)]);
    wait_caught_up(&s, &root);
    assert_converges_to_fresh(
        &s,
        &root,
        &[],
        &["gannetword", "boobyword", "cormorantword"],
    );
}

#[test]
fn a_subagent_meta_file_written_after_the_transcript_is_taken_into_account() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-meta");
    p.session(P).exchange("parent session", "reply");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let mut sub = s
        .dir
        .project("-home-u-meta")
        .subagent_nested(P, "0f0f", None);
    sub.user("meta later petrelword");
    sub.assistant_text(&new_msg_id(), "done");
    wait_hits(&s, "petrelword");
    let hit = s.search("petrelword")["results"][0].clone();
    assert!(hit.get("agent_type").is_none(), "{hit}");
    let meta = sub.path().with_file_name("agent-0f0f.meta.json");
    std::fs::write(
        &meta,
        json!({"agentType": "Plan", "description": "Plan the petrels"}).to_string(),
    )
    .expect("meta");
    let hit = common::poll_until_desc("the agent type", common::live::DEADLINE, || {
        let hit = s.search("petrelword")["results"][0].clone();
        (hit["agent_type"] == "Plan").then_some(hit)
    });
    assert_eq!(hit["agent_description"], "Plan the petrels", "{hit}");
    assert_eq!(hit["session_id"], format!("{P}/agent-0f0f"), "{hit}");
    assert_eq!(s.hits("petrelword").len(), 1);
    assert_eq!(num(&s.index_status(), "turns"), 2);
}

#[test]
fn a_tree_moved_in_from_elsewhere_is_indexed_whole() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-here")
        .session(P)
        .exchange("resident prompt", "reply");
    let s = serve_live(dir, DEBOUNCE_MS, &["--no-archive"]);
    // built outside the projects directory (on the same file system), then moved in at once
    let staging = ProjectsDir::new();
    for k in 0..4 {
        let project = staging.project(&format!("-home-u-moved{k}"));
        for j in 0..5 {
            project
                .session(&format!("d1e50000-0000-4000-8000-{:012}", 100 + k * 10 + j))
                .exchange(&format!("moved in migrantword {k} {j}"), "reply");
        }
        if k == 0 {
            let mut sub = project.subagent_nested(
                "d1e50000-0000-4000-8000-000000000100",
                "5eed",
                Some(("Explore", "moved")),
            );
            sub.user("moved sub-agent migrantsub");
            sub.assistant_text(&new_msg_id(), "ok");
        }
    }
    for k in 0..4 {
        let name = format!("-home-u-moved{k}");
        std::fs::rename(staging.path().join(&name), s.dir.path().join(&name)).expect("move in");
    }
    poll_until_desc("all 20 moved sessions", common::live::DEADLINE, || {
        (s.hits("migrantword").len() == 20).then_some(())
    });
    wait_hits(&s, "migrantsub");
    let st = wait_caught_up(&s, s.dir.path());
    assert_eq!(
        (
            num(&st, "projects"),
            num(&st, "sessions"),
            num(&st, "subagents")
        ),
        (5, 21, 1),
        "{st}"
    );
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &["migrantword", "migrantsub", "reply"],
    );

    // and the subagents/ directory removed again
    std::fs::remove_dir_all(
        s.dir
            .path()
            .join("-home-u-moved0/d1e50000-0000-4000-8000-000000000100"),
    )
    .expect("rm subagents");
    wait_status(&s, "subagents == 0", |st| num(st, "subagents") == 0);
    assert!(s.hits("migrantsub").is_empty());
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &["migrantword", "migrantsub", "reply"],
    );
}
