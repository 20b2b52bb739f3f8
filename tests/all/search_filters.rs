//! search_conversations filters — since/until (ISO date, ISO datetime, relative age),
//! git_branch, role, tool, file, source — and list_conversations since/until/offset; every
//! invalid value is an isError result naming the parameter and what it accepts.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::{hit_keys, k, listed_sessions};
use crate::common::search::{
    DAY, HOUR, assert_rejected, bash, edit, iso_ago, merged, read, tool_turn,
};
use crate::common::{Served, serve};
use serde_json::{Value, json};

fn keys(s: &Served, args: Value) -> Vec<(String, u64)> {
    let mut args = args;
    args["limit"] = json!(100);
    let r = s.search_with(args);
    let mut k = hit_keys(&r);
    assert_eq!(r["total"].as_u64(), Some(k.len() as u64), "{r}");
    k.sort();
    k
}

const NONE: [u64; 0] = [];

/// Three sessions at fixed dates, one at a relative age; each turn holds `timeword`.
fn dated() -> Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-dated");
    for (id, start) in [
        ("d1", "2026-03-01T10:00:00.000Z"),
        ("d2", "2026-03-02T23:59:00.000Z"),
        ("d3", "2026-03-03T00:00:30.000Z"),
    ] {
        let mut w = p.session(id);
        w.set_time(start);
        w.exchange("timeword first", "ok");
    }
    let mut w = p.session("rel");
    w.set_time(&iso_ago(10 * DAY));
    w.exchange("timeword ten days ago", "ok");
    w.set_time(&iso_ago(2 * DAY));
    w.exchange("timeword two days ago", "ok");
    w.set_time(&iso_ago(HOUR));
    w.exchange("timeword an hour ago", "ok");
    serve(dir)
}

#[test]
fn since_and_until_take_iso_dates_and_datetimes() {
    let s = dated();
    let q = |extra: Value| {
        let a = merged(json!({"query": "timeword", "project": "dated"}), &extra);
        keys(&s, a)
            .into_iter()
            .filter(|(id, _)| id.starts_with('d'))
            .collect::<Vec<_>>()
    };
    assert_eq!(q(json!({"since": "2026-03-02"})), [k("d2", 0), k("d3", 0)]);
    assert_eq!(q(json!({"until": "2026-03-02"})), [k("d1", 0), k("d2", 0)]);
    assert_eq!(
        q(json!({"since": "2026-03-02", "until": "2026-03-02"})),
        [k("d2", 0)],
        "a date-only until includes that whole day"
    );
    assert_eq!(
        q(json!({"until": "2026-03-02T23:59:00Z"})),
        [k("d1", 0)],
        "a datetime until is exclusive"
    );
    assert_eq!(
        q(json!({"since": "2026-03-02T23:59:00.000Z"})),
        [k("d2", 0), k("d3", 0)]
    );
    assert_eq!(
        q(json!({"since": "2026-03-03T01:00:30+01:00"})),
        [k("d3", 0)]
    );
    assert_eq!(q(json!({"since": "2026-03-04", "until": "2026-03-01"})), []);
}

#[test]
fn since_and_until_take_relative_ages_and_apply_per_turn() {
    let s = dated();
    let rel = |extra: Value| {
        let a = merged(json!({"query": "timeword", "session_id": "rel"}), &extra);
        keys(&s, a).into_iter().map(|(_, n)| n).collect::<Vec<_>>()
    };
    assert_eq!(rel(json!({"since": "7d"})), [1, 2]);
    assert_eq!(rel(json!({"since": "1w"})), [1, 2]);
    assert_eq!(rel(json!({"since": "12h"})), [2]);
    assert_eq!(rel(json!({"since": "90m"})), [2]);
    assert_eq!(rel(json!({"until": "7d"})), [0]);
    assert_eq!(rel(json!({"since": "30d", "until": "1d"})), [0, 1]);
}

#[test]
fn bad_times_are_rejected_naming_the_parameter_and_the_accepted_forms() {
    let s = dated();
    for bad in ["yesterday", "2026-13-01", "7 days", "7y", "12:00", "-3d"] {
        for param in ["since", "until"] {
            assert_rejected(
                &s,
                "search_conversations",
                json!({"query": "timeword", param: bad}),
                &[param, "iso", "7d"],
            );
            assert_rejected(
                &s,
                "list_conversations",
                json!({param: bad}),
                &[param, "iso"],
            );
        }
    }
}

#[test]
fn git_branch_filter_matches_the_session_branch() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-branches");
    for (id, branch) in [("b1", Some("main")), ("b2", Some("feat/x")), ("b3", None)] {
        let mut w = p.session(id);
        w.set_git_branch(branch);
        w.exchange("branchword here", "ok");
    }
    let s = serve(dir);
    let q = |b: &str| keys(&s, json!({"query": "branchword", "git_branch": b}));
    assert_eq!(q("feat/x"), [k("b2", 0)]);
    assert_eq!(q("main"), [k("b1", 0)]);
    assert_eq!(
        q("feat"),
        [],
        "a branch is matched whole, not as a substring"
    );
    assert_eq!(q("nosuchbranch"), []);
    assert_eq!(keys(&s, json!({"query": "branchword"})).len(), 3);
}

#[test]
fn role_filter_says_where_the_match_must_be() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-roles").session("r1");
    w.exchange("please fix the rolword bug", "done");
    w.exchange("anything else", "I renamed rolword everywhere");
    w.exchange("rolword again", "and rolword in the reply too");
    let s = serve(dir);
    let q = |role: &str| {
        keys(&s, json!({"query": "rolword", "role": role}))
            .into_iter()
            .map(|(_, n)| n)
            .collect::<Vec<_>>()
    };
    assert_eq!(q("user"), [0, 2]);
    assert_eq!(q("assistant"), [1, 2]);
    assert_eq!(q(""), [0, 1, 2], "an empty role is no filter");
    for bad in ["system", "both", "users"] {
        assert_rejected(
            &s,
            "search_conversations",
            json!({"query": "rolword", "role": bad}),
            &["role", "user", "assistant"],
        );
    }
}

/// Turns with different tool calls, all holding `facetword` in the prompt.
fn tooled() -> Served {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-tools").session("t1");
    let root = "/home/u/work/tools";
    tool_turn(
        &mut w,
        "facetword read",
        "",
        &[read(&format!("{root}/src/index/mod.rs"))],
    );
    tool_turn(
        &mut w,
        "facetword edit",
        "",
        &[edit(&format!("{root}/src/corpus/query.rs"))],
    );
    tool_turn(&mut w, "facetword shell", "", &[bash("cargo test --lib")]);
    tool_turn(&mut w, "facetword none", "no tools", &[]);
    tool_turn(
        &mut w,
        "facetword both",
        "",
        &[bash("ls"), read(&format!("{root}/README.md"))],
    );
    serve(dir)
}

#[test]
fn tool_filter_keeps_turns_that_used_the_tool() {
    let s = tooled();
    let q = |tool: &str| {
        keys(&s, json!({"query": "facetword", "tool": tool}))
            .into_iter()
            .map(|(_, n)| n)
            .collect::<Vec<_>>()
    };
    assert_eq!(q("Bash"), [2, 4]);
    assert_eq!(q("bash"), [2, 4], "tool names are case-insensitive");
    assert_eq!(q("Read"), [0, 4]);
    assert_eq!(q("Edit"), [1]);
    assert_eq!(q("Write"), NONE);
    assert_eq!(q("Bas"), NONE, "a tool name is matched whole");
}

#[test]
fn file_filter_keeps_turns_whose_calls_touched_a_matching_path() {
    let s = tooled();
    let q = |file: &str| {
        keys(&s, json!({"query": "facetword", "file": file}))
            .into_iter()
            .map(|(_, n)| n)
            .collect::<Vec<_>>()
    };
    assert_eq!(q("src/index/mod.rs"), [0]);
    assert_eq!(q("mod.rs"), [0], "a suffix matches");
    assert_eq!(q("index/"), [0], "a substring matches");
    assert_eq!(q("SRC/"), [0, 1], "case-insensitive");
    assert_eq!(q(".md"), [4]);
    assert_eq!(q("cargo"), NONE, "commands are not files");
    assert_eq!(q("nosuchfile"), NONE);
}

#[test]
fn source_filter_accepts_known_agents_and_rejects_others() {
    let s = tooled();
    assert_eq!(
        keys(&s, json!({"query": "facetword", "source": "claude"})).len(),
        5
    );
    assert_eq!(
        keys(&s, json!({"query": "facetword", "source": "codex"})),
        []
    );
    let msg = assert_rejected(
        &s,
        "search_conversations",
        json!({"query": "facetword", "source": "no-such-agent"}),
        &["source", "claude", "codex"],
    );
    assert!(
        msg.contains("no-such-agent"),
        "the error repeats the bad value: {msg}"
    );
    assert_rejected(
        &s,
        "list_conversations",
        json!({"source": "no-such-agent"}),
        &["source", "claude"],
    );
}

#[test]
fn other_bad_arguments_name_the_parameter_and_what_is_accepted() {
    let s = tooled();
    let cases: &[(Value, &[&str])] = &[
        (json!({"sort": "newest"}), &["sort", "relevance", "recent"]),
        (json!({"limit": 0}), &["limit", "1"]),
        (json!({"offset": -1}), &["offset", "0"]),
        (json!({"max_chars": 10}), &["max_chars", "500"]),
        (json!({"session_id": "no-such-session"}), &["session_id"]),
    ];
    for (extra, words) in cases {
        let args = merged(json!({"query": "facetword"}), extra);
        assert_rejected(&s, "search_conversations", args, words);
    }
    assert_rejected(
        &s,
        "search_conversations",
        json!({"query": "  "}),
        &["query"],
    );
}

#[test]
fn list_conversations_filters_by_time_and_pages_with_offset() {
    let s = dated();
    let ids = |args: Value| listed_sessions(&s.list(args));
    assert_eq!(
        ids(json!({})),
        ["rel", "d3", "d2", "d1"],
        "most recently active first"
    );
    assert_eq!(ids(json!({"since": "2026-03-02"})), ["rel", "d3", "d2"]);
    assert_eq!(ids(json!({"until": "2026-03-02"})), ["d2", "d1"]);
    assert_eq!(ids(json!({"since": "5d"})), ["rel"], "active at or after");
    assert_eq!(
        ids(json!({"until": "5d"})),
        ["rel", "d3", "d2", "d1"],
        "started before"
    );
    let all = ids(json!({}));
    let mut paged = Vec::new();
    let mut offset = 0;
    loop {
        let page = s.list(json!({"limit": 1, "offset": offset}));
        assert_eq!(page["total"], 4, "{page}");
        paged.extend(listed_sessions(&page));
        match page["next_offset"].as_u64() {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(paged, all);
    assert_eq!(ids(json!({"offset": 99})), Vec::<String>::new());
    assert_rejected(&s, "list_conversations", json!({"offset": -2}), &["offset"]);
    assert_rejected(&s, "list_conversations", json!({"limit": 0}), &["limit"]);
}

#[test]
fn wrongly_typed_arguments_name_the_parameter() {
    let s = tooled();
    let cases: &[(Value, &str)] = &[
        (json!({"query": "facetword", "limit": "ten"}), "limit"),
        (json!({"query": "facetword", "since": 7}), "since"),
        (json!({"query": "facetword", "role": 5}), "role"),
        (json!({"query": "facetword", "max_chars": 1.5}), "max_chars"),
        (json!({"query": 7}), "query"),
    ];
    for (args, param) in cases {
        assert_rejected(&s, "search_conversations", args.clone(), &[param]);
    }
    assert_rejected(
        &s,
        "list_conversations",
        json!({"offset": "2"}),
        &["offset"],
    );
}
