//! find_file_history(path, limit=20, offset, since, max_chars): the turns whose Read / Write /
//! Edit / MultiEdit / NotebookEdit calls touched a path matching the argument (substring or
//! suffix, case-insensitive), newest first, with operation, session, project, timestamp and
//! turn number; since, limit and paging; bad arguments named in isError results.

use crate::common::fixture::ProjectsDir;
use crate::common::search::{
    DAY, HOUR, assert_rejected, bash, edit, grep, iso_ago, merged, multi_edit, notebook_edit,
    page_all, read, results, strings, tool_turn, write,
};
use crate::common::{Served, serve};
use serde_json::{Value, json};

const ROOT: &str = "/home/u/work/hist";

fn path(rel: &str) -> String {
    format!("{ROOT}/{rel}")
}

/// Session `h1` (turns 0..7, one hour apart from 2026-04-01T10:00Z) and `h2` (a day later)
/// touching `src/index/mod.rs` in different ways, plus unrelated files and non-file tools.
fn history() -> Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-hist");
    let m = path("src/index/mod.rs");
    let mut w = p.session("h1");
    w.set_time("2026-04-01T10:00:00.000Z");
    w.set_step_ms(HOUR / 4);
    tool_turn(&mut w, "look at it", "", &[read(&m)]); // 0
    tool_turn(&mut w, "change it", "", &[edit(&m)]); // 1
    tool_turn(&mut w, "rewrite it", "", &[write(&m)]); // 2
    tool_turn(&mut w, "many edits", "", &[multi_edit(&m)]); // 3
    tool_turn(
        &mut w,
        "read then edit",
        "",
        &[read(&m), edit(&m), read(&m)],
    ); // 4
    tool_turn(
        &mut w,
        "other file",
        "",
        &[read(&path("src/corpus/mod.rs"))],
    ); // 5
    tool_turn(
        &mut w,
        "shell and grep",
        "",
        &[bash(&format!("cat {m}")), grep("fn", &m)],
    ); // 6
    tool_turn(
        &mut w,
        "notebook",
        "",
        &[notebook_edit(&path("notes/analysis.ipynb"))],
    ); // 7
    let mut w = p.session("h2");
    w.set_time("2026-04-02T10:00:00.000Z");
    tool_turn(&mut w, "again", "", &[read(&m)]); // 0
    tool_turn(
        &mut w,
        "and the test",
        "",
        &[edit(&path("tests/index_mod.rs"))],
    ); // 1
    serve(dir)
}

fn rows(s: &Served, args: Value) -> Value {
    s.ok("find_file_history", args)
}

/// (session, turn, operation) of every row.
fn touches(r: &Value) -> Vec<(String, u64, String)> {
    results(r)
        .iter()
        .map(|x| {
            (
                x["session_id"].as_str().unwrap().to_string(),
                x["turn_number"].as_u64().unwrap(),
                x["operation"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn t(s: &str, n: u64, op: &str) -> (String, u64, String) {
    (s.to_string(), n, op.to_string())
}

#[test]
fn reads_edits_and_writes_are_listed_newest_first_with_their_operation() {
    let s = history();
    let r = rows(&s, json!({"path": "src/index/mod.rs"}));
    assert_eq!(
        touches(&r),
        [
            t("h2", 0, "read"),
            t("h1", 4, "edit"),
            t("h1", 3, "edit"),
            t("h1", 2, "write"),
            t("h1", 1, "edit"),
            t("h1", 0, "read"),
        ],
        "{r}"
    );
    assert_eq!(r["total"], 6);
    let both = &results(&r)[1];
    assert_eq!(strings(&both["operations"]), ["read", "edit"], "{both}");
    let first = &results(&r)[0];
    assert_eq!(first["path"], path("src/index/mod.rs"));
    assert_eq!(first["project"], "hist");
    assert_eq!(first["source"], "claude");
    assert_eq!(first["timestamp"], "2026-04-02T10:00:00.000Z");
    let stamps: Vec<&str> = results(&r)
        .iter()
        .map(|x| x["timestamp"].as_str().unwrap())
        .collect();
    let mut sorted = stamps.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(stamps, sorted);
}

#[test]
fn every_row_can_be_read_with_read_turn() {
    let s = history();
    let r = rows(&s, json!({"path": "mod.rs", "limit": 100}));
    assert!(!results(&r).is_empty(), "no rows to check: {r}");
    for row in results(&r) {
        let turn = s.read_turn(
            row["session_id"].as_str().unwrap(),
            row["turn_number"].as_i64().unwrap(),
        );
        let files: Vec<String> = turn["tools_used"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["file"].as_str().map(str::to_string))
            .collect();
        assert!(
            files.contains(&row["path"].as_str().unwrap().to_string()),
            "{row} vs {turn}"
        );
    }
}

#[test]
fn the_path_matches_as_a_case_insensitive_substring_or_suffix() {
    let s = history();
    let count = |p: &str| {
        rows(&s, json!({"path": p, "limit": 100}))["total"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(
        count(&path("src/index/mod.rs")),
        6,
        "the full absolute path"
    );
    assert_eq!(count("index/mod.rs"), 6, "a suffix");
    assert_eq!(
        count("MOD.RS"),
        8,
        "case-insensitive: src/index/mod.rs, src/corpus/mod.rs, tests/index_mod.rs"
    );
    assert_eq!(count("/index/"), 6, "a directory");
    assert_eq!(count("index_mod"), 1, "tests/index_mod.rs");
    assert_eq!(
        count("analysis.ipynb"),
        1,
        "NotebookEdit touches the notebook"
    );
    assert_eq!(count("nosuchfile.rs"), 0);
    let nb = rows(&s, json!({"path": "ipynb"}));
    assert_eq!(touches(&nb), [t("h1", 7, "edit")]);
}

#[test]
fn shell_commands_and_searches_are_not_file_touches() {
    let s = history();
    let r = rows(&s, json!({"path": "src/index/mod.rs", "limit": 100}));
    assert!(!touches(&r).is_empty(), "no rows to check: {r}");
    assert!(
        touches(&r)
            .iter()
            .all(|(id, n, _)| !(id == "h1" && *n == 6)),
        "Bash and Grep mentioning the path are not reads or edits: {r}"
    );
}

#[test]
fn since_limit_and_offset_select_and_page() {
    let s = history();
    let q = |extra: Value| {
        touches(&rows(
            &s,
            merged(json!({"path": "src/index/mod.rs"}), &extra),
        ))
    };
    assert_eq!(q(json!({"since": "2026-04-02"})), [t("h2", 0, "read")]);
    assert_eq!(q(json!({"since": "2026-04-01T10:30:00Z"})).len(), 5);
    assert_eq!(
        q(json!({"limit": 2})),
        [t("h2", 0, "read"), t("h1", 4, "edit")]
    );
    assert_eq!(
        q(json!({"limit": 2, "offset": 2})),
        [t("h1", 3, "edit"), t("h1", 2, "write")]
    );
    assert_eq!(q(json!({"offset": 6})), []);
    let r = rows(&s, json!({"path": "src/index/mod.rs", "limit": 2}));
    assert_eq!(r["next_offset"], 2, "{r}");
    assert_eq!(r["total"], 6);
    let all: Vec<String> = page_all(
        &s,
        "find_file_history",
        json!({"path": "mod.rs", "limit": 3}),
        "results",
        &["session_id", "turn_number", "path"],
        60_000,
    );
    let one: Vec<String> = page_all(
        &s,
        "find_file_history",
        json!({"path": "mod.rs", "limit": 100}),
        "results",
        &["session_id", "turn_number", "path"],
        60_000,
    );
    assert_eq!(all, one);
    assert_eq!(one.len(), 8);
}

#[test]
fn since_takes_a_relative_age() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-hist").session("r1");
    let f = path("src/lib.rs");
    w.set_time(&iso_ago(10 * DAY));
    tool_turn(&mut w, "old", "", &[edit(&f)]);
    w.set_time(&iso_ago(3 * HOUR));
    tool_turn(&mut w, "new", "", &[read(&f)]);
    let s = serve(dir);
    let r = rows(&s, json!({"path": "lib.rs", "since": "7d"}));
    assert_eq!(touches(&r), [t("r1", 1, "read")]);
    let r = rows(&s, json!({"path": "lib.rs", "since": "1h"}));
    assert_eq!(touches(&r), []);
    assert_eq!(rows(&s, json!({"path": "lib.rs"}))["total"], 2);
}

#[test]
fn the_default_limit_is_twenty() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-hist").session("l1");
    for i in 0..25 {
        tool_turn(
            &mut w,
            &format!("step {i}"),
            "",
            &[read(&path("src/main.rs"))],
        );
    }
    let s = serve(dir);
    let r = rows(&s, json!({"path": "main.rs"}));
    assert_eq!(results(&r).len(), 20);
    assert_eq!(r["total"], 25);
    assert_eq!(r["next_offset"], 20);
    assert_eq!(results(&r)[0]["turn_number"], 24, "newest first");
}

#[test]
fn bad_arguments_are_rejected_naming_the_parameter() {
    let s = history();
    assert_rejected(&s, "find_file_history", json!({"path": ""}), &["path"]);
    assert_rejected(&s, "find_file_history", json!({"path": "   "}), &["path"]);
    assert_rejected(
        &s,
        "find_file_history",
        json!({"path": "mod.rs", "limit": 0}),
        &["limit"],
    );
    assert_rejected(
        &s,
        "find_file_history",
        json!({"path": "mod.rs", "offset": -1}),
        &["offset"],
    );
    assert_rejected(
        &s,
        "find_file_history",
        json!({"path": "mod.rs", "since": "last week"}),
        &["since", "iso", "7d"],
    );
    assert_rejected(
        &s,
        "find_file_history",
        json!({"path": "mod.rs", "max_chars": 100}),
        &["max_chars", "500"],
    );
}
