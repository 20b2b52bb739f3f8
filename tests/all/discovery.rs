//! Which files are conversations: `*.jsonl` directly in a project dir matching PATTERN
//! (session_id = file stem); agent files, journals, nested or non-jsonl files and files outside
//! project dirs are not sessions.

use crate::common;

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::{hit_sessions, listed_sessions};
use crate::common::{serve, serve_with};
use serde_json::json;

fn listed_ids(s: &common::Served) -> Vec<String> {
    let mut ids = listed_sessions(&s.list(json!({"limit": 100})));
    ids.sort();
    ids
}

#[test]
fn session_id_is_the_file_stem_even_if_records_disagree() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-stem").session("file-stem-id");
    w.set_record_session_id("record-session-id");
    w.exchange("stemword prompt", "ok");
    let s = serve(dir);
    assert_eq!(listed_ids(&s), ["file-stem-id"]);
    assert_eq!(hit_sessions(&s.search("stemword")), ["file-stem-id"]);
    assert_eq!(
        s.read_turn("file-stem-id", 0)["user_text"],
        "stemword prompt"
    );
}

#[test]
fn each_jsonl_file_in_a_project_dir_is_a_session() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-many");
    for i in 0..4 {
        p.session(&format!("sess-{i}"))
            .exchange(&format!("prompt {i}"), "ok");
    }
    dir.project("-home-u-work-other")
        .session("sess-x")
        .exchange("prompt x", "ok");
    let s = serve(dir);
    assert_eq!(
        listed_ids(&s),
        ["sess-0", "sess-1", "sess-2", "sess-3", "sess-x"]
    );
    let st = s.index_status();
    assert_eq!(st["sessions"], 5);
    assert_eq!(st["projects"], 2);
}

#[test]
fn non_session_files_are_ignored() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-ignore");
    p.session("real").exchange("real prompt visibleword", "ok");
    let line = |w: &str| {
        format!(
            "{}\n",
            json!({"type": "user", "uuid": "u-1", "parentUuid": null, "sessionId": "real",
                   "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/x",
                   "message": {"role": "user", "content": format!("hidden {w}")}})
        )
    };
    p.write_file("memory/notes.md", b"# memory ignoredmemoryword\n");
    p.write_file("sessions-index.json", line("ignoredindexword").as_bytes());
    p.write_file("real/tool-results/toolu_1.txt", b"ignoredspillword");
    p.write_file(
        "real/subagents/journal.jsonl",
        line("ignoredjournalword").as_bytes(),
    );
    p.write_file("nested/deeper.jsonl", line("ignorednestedword").as_bytes());
    p.write_file("notes.txt", line("ignoredtxtword").as_bytes());
    p.write_file("real.jsonl.bak", line("ignoredbakword").as_bytes());
    std::fs::write(dir.path().join("stray.jsonl"), line("ignoredrootword")).unwrap();
    let s = serve(dir);
    for w in [
        "ignoredmemoryword",
        "ignoredindexword",
        "ignoredspillword",
        "ignoredjournalword",
        "ignorednestedword",
        "ignoredtxtword",
        "ignoredbakword",
        "ignoredrootword",
    ] {
        assert_eq!(s.search(w)["total"], 0, "{w} must not be indexed");
    }
    assert_eq!(s.search("visibleword")["total"], 1, "control");
    assert_eq!(listed_ids(&s), ["real"]);
    assert_eq!(s.index_status()["subagents"], 0);
}

#[test]
fn agent_files_are_not_listed_as_sessions() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-agentfile");
    p.session("main-1").exchange("main prompt", "ok");
    p.subagent_flat("deadbeef", "main-1")
        .exchange("agent prompt", "ok");
    let s = serve(dir);
    assert_eq!(listed_ids(&s), ["main-1"]);
    assert_eq!(s.index_status()["sessions"], 1);
}

#[test]
fn pattern_is_a_glob_on_directory_names() {
    let dir = ProjectsDir::new();
    for name in ["-home-u-api-server", "-home-u-api-client", "-home-u-web"] {
        dir.project(name)
            .session(&format!("s{name}"))
            .exchange("globword prompt", "ok");
    }
    let s = serve_with(dir, &["*-api-*"]);
    let mut ids = hit_sessions(&s.search("globword"));
    ids.sort();
    assert_eq!(ids, ["s-home-u-api-client", "s-home-u-api-server"]);
    assert_eq!(s.index_status()["pattern"], "*-api-*");
}

#[test]
fn pattern_matching_nothing_gives_an_empty_index() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-web")
        .session("w")
        .exchange("globword prompt", "ok");
    let s = serve_with(dir, &["*no-such-dir*"]);
    let st = s.index_status();
    assert_eq!(st["sessions"], 0);
    assert_eq!(st["projects"], 0);
    assert_eq!(s.search("globword")["total"], 0);
}

#[test]
fn files_directly_in_the_projects_root_are_not_sessions() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-work-rooted")
        .session("inside")
        .exchange("rootword inside", "ok");
    let mut outside = dir.project(".").session("outside");
    outside.exchange("rootword outside", "ok");
    let s = serve(dir);
    assert_eq!(hit_sessions(&s.search("rootword")), ["inside"]);
}

/// `index_status` counts sessions, sub-agents and projects once per published index: asked
/// again after a live change, it counts the new ones (a new project, its session and a
/// sub-agent).
#[test]
fn status_counts_follow_live_changes() {
    use crate::common::live::{DEBOUNCE_MS, serve_live, wait_status};
    let dir = ProjectsDir::new();
    dir.project("-home-u-work-countone")
        .session("count-1")
        .exchange("first prompt", "ok");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    for _ in 0..2 {
        let st = s.index_status();
        assert_eq!(
            (&st["projects"], &st["sessions"], &st["subagents"]),
            (&json!(1), &json!(1), &json!(0)),
            "{st}"
        );
    }
    let p = s.dir.project("-home-u-work-counttwo");
    p.session("count-2").exchange("second prompt", "ok");
    p.subagent_flat("feedbeef", "count-2")
        .exchange("agent prompt", "ok");
    let st = wait_status(&s, "the new session and sub-agent counted", |st| {
        st["sessions"] == 2 && st["subagents"] == 1
    });
    assert_eq!(st["projects"], 2, "{st}");
}
