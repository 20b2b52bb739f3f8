//! Per-session metadata: summary precedence (custom-title > ai-title > summary > slug > first
//! prompt), slug, project naming (common prefix / cwd), cwd and git_branch, project filters,
//! list_conversations fields, order, limit and total.

use crate::common::fixture::{ProjectsDir, SessionWriter};
use crate::common::mcp::listed_sessions;
use crate::common::search::listed_conv;
use crate::common::{Served, assert_fields, serve, serve_session, serve_with};
use serde_json::{Value, json};

const SID: &str = "3e7ada7a-0000-4000-8000-00000000000e";

fn one(f: impl FnOnce(&mut SessionWriter)) -> Served {
    serve_session("-home-u-work-meta", SID, f)
}

fn summary(s: &Served) -> Value {
    listed_conv(s, SID)["summary"].clone()
}

#[test]
fn last_custom_title_wins() {
    let s = one(|w| {
        w.set_slug(Some("quiet-green-heron"));
        let u = w.exchange("a prompt", "ok");
        w.summary("A summary", &u);
        w.custom_title("first custom");
        w.ai_title("an ai title");
        w.custom_title("final custom title");
        w.ai_title("a later ai title");
    });
    assert_eq!(summary(&s), "final custom title");
}

#[test]
fn last_ai_title_wins_without_custom_title() {
    let s = one(|w| {
        w.set_slug(Some("quiet-green-heron"));
        let u = w.exchange("a prompt", "ok");
        w.summary("A summary", &u);
        w.ai_title("draft ai title");
        w.ai_title("refined ai title");
    });
    assert_eq!(summary(&s), "refined ai title");
}

#[test]
fn summary_whose_leaf_is_in_this_file_is_preferred() {
    let s = one(|w| {
        w.set_slug(Some("quiet-green-heron"));
        w.summary(
            "Summary pointing elsewhere",
            "00000000-dead-4bee-8000-000000000000",
        );
        let u = w.exchange("a prompt", "ok");
        w.summary("Summary of this session", &u);
        w.summary(
            "Later summary pointing elsewhere",
            "00000000-dead-4bee-8000-000000000001",
        );
    });
    assert_eq!(summary(&s), "Summary of this session");
}

#[test]
fn last_summary_is_used_when_no_leaf_matches() {
    let s = one(|w| {
        w.set_slug(Some("quiet-green-heron"));
        w.summary(
            "Older foreign summary",
            "00000000-dead-4bee-8000-000000000002",
        );
        w.summary(
            "Newest foreign summary",
            "00000000-dead-4bee-8000-000000000003",
        );
        w.exchange("a prompt", "ok");
    });
    assert_eq!(summary(&s), "Newest foreign summary");
}

#[test]
fn slug_is_used_without_titles_or_summaries() {
    let s = one(|w| {
        w.set_slug(Some("quiet-green-heron"));
        w.exchange("a prompt", "ok");
    });
    let c = listed_conv(&s, SID);
    assert_eq!(c["summary"], "quiet-green-heron");
    assert_eq!(c["slug"], "quiet-green-heron");
}

#[test]
fn first_prompt_prefix_is_the_last_resort() {
    // 300 characters, multi-byte ones included: the cut must count characters, not bytes
    let prompt: String = "é".repeat(10) + &"refactor the loader ".repeat(15);
    assert_eq!(prompt.chars().count(), 310);
    let s = one(|w| {
        w.exchange(&prompt, "ok");
        w.exchange("second prompt", "ok");
    });
    let c = listed_conv(&s, SID);
    let want: String = prompt.chars().take(200).collect();
    assert_eq!(c["summary"].as_str().unwrap().trim_end(), want.trim_end());
    assert_eq!(c["slug"], Value::Null);
}

#[test]
fn short_first_prompt_is_the_whole_summary() {
    let s = one(|w| {
        w.user_meta("Caveat: meta text is not a prompt");
        w.exchange("Fix the flaky test", "ok");
    });
    assert_eq!(summary(&s), "Fix the flaky test");
}

#[test]
fn project_strips_the_common_prefix_of_all_directories() {
    let dir = ProjectsDir::new();
    dir.project("-home-gbr-work-001-sites-diff-website")
        .session("dw")
        .exchange("prompt", "ok");
    dir.project("-home-gbr-work-001-sites-blog")
        .session("bl")
        .exchange("prompt", "ok");
    let s = serve(dir);
    assert_eq!(listed_conv(&s, "dw")["project"], "diff-website");
    assert_eq!(listed_conv(&s, "bl")["project"], "blog");
}

#[test]
fn common_prefix_is_cut_back_to_a_dash_boundary() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-proj-alpha")
        .session("a")
        .exchange("p", "ok");
    dir.project("-home-u-proj-alps")
        .session("b")
        .exchange("p", "ok");
    let s = serve(dir);
    assert_eq!(listed_conv(&s, "a")["project"], "alpha");
    assert_eq!(listed_conv(&s, "b")["project"], "alps");
}

#[test]
fn common_prefix_is_computed_over_matched_directories_only() {
    let dir = ProjectsDir::new();
    dir.project("-srv-a-x-one")
        .session("one")
        .exchange("p", "ok");
    dir.project("-srv-a-x-two")
        .session("two")
        .exchange("p", "ok");
    dir.project("-opt-zzz").session("zzz").exchange("p", "ok");
    let s = serve_with(dir, &["*srv-a-*"]);
    assert_eq!(s.list(json!({}))["total"], 2);
    assert_eq!(listed_conv(&s, "one")["project"], "one");
    assert_eq!(listed_conv(&s, "two")["project"], "two");
}

#[test]
fn single_directory_project_is_the_last_cwd_component() {
    let s = one(|w| {
        w.set_cwd(Some("/home/u/code/My Project.v2"));
        w.exchange("prompt", "ok");
    });
    assert_eq!(listed_conv(&s, SID)["project"], "My Project.v2");
}

#[test]
fn single_directory_without_cwd_uses_the_directory_name() {
    let s = one(|w| {
        w.set_cwd(None);
        w.exchange("prompt", "ok");
    });
    assert_eq!(listed_conv(&s, SID)["project"], "-home-u-work-meta");
    assert_eq!(listed_conv(&s, SID)["cwd"], Value::Null);
}

#[test]
fn cwd_and_git_branch_come_from_the_first_record_carrying_them() {
    let s = one(|w| {
        w.set_cwd(None).set_git_branch(None);
        w.user_meta("Caveat: no cwd yet");
        w.set_cwd(Some("/home/u/first/cwd"));
        w.exchange("prompt one", "ok");
        w.set_git_branch(Some("feature/late-branch"));
        w.exchange("prompt two", "ok");
        w.set_cwd(Some("/home/u/second/cwd"))
            .set_git_branch(Some("other"));
        w.exchange("prompt three", "ok");
    });
    let c = listed_conv(&s, SID);
    assert_eq!(c["cwd"], "/home/u/first/cwd");
    assert_eq!(c["git_branch"], "feature/late-branch");
    let rc = s.read_conversation(SID);
    assert_eq!(rc["cwd"], "/home/u/first/cwd");
    assert_eq!(rc["git_branch"], "feature/late-branch");
}

#[test]
fn list_entry_has_all_fields() {
    let s = one(|w| {
        w.set_time("2026-05-04T08:00:00.000Z");
        w.set_git_branch(Some("main"));
        w.set_cwd(Some("/home/u/work/meta"));
        w.user("first");
        w.user("second");
        w.user("third");
    });
    let c = listed_conv(&s, SID);
    assert_fields(
        &c,
        &json!({
            "session_id": SID,
            "project": "meta",
            "summary": "first",
            "first_timestamp": "2026-05-04T08:00:00.000Z",
            "last_timestamp": "2026-05-04T08:00:02.000Z",
            "turn_count": 3,
            "cwd": "/home/u/work/meta",
            "git_branch": "main",
            "subagent_count": 0
        }),
    );
    // absent values are left out (result schemas have no null types)
    assert!(c.get("slug").is_none(), "{c}");
}

fn three_dated_sessions() -> Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-dated");
    for (sid, start) in [
        ("old", "2026-01-01T00:00:00.000Z"),
        ("new", "2026-03-01T00:00:00.000Z"),
        ("mid", "2026-02-01T00:00:00.000Z"),
    ] {
        let mut w = p.session(sid);
        w.set_time(start);
        w.user(&format!("{sid} prompt"));
        w.user(&format!("{sid} follow-up"));
    }
    serve(dir)
}

#[test]
fn list_is_sorted_by_last_timestamp_descending() {
    let s = three_dated_sessions();
    let l = s.list(json!({}));
    let ids = listed_sessions(&l);
    assert_eq!(ids, ["new", "mid", "old"]);
    assert_eq!(l["total"], 3);
}

#[test]
fn list_limit_keeps_the_newest_and_total_counts_all() {
    let s = three_dated_sessions();
    let l = s.list(json!({"limit": 2}));
    let ids = listed_sessions(&l);
    assert_eq!(ids, ["new", "mid"]);
    assert_eq!(l["total"], 3);
}

fn filter_corpus() -> Served {
    let dir = ProjectsDir::new();
    let mut a = dir
        .project("-home-gbr-work-001-sites-diff-website")
        .session("site");
    a.set_cwd(Some("/srv/checkout/www"));
    a.exchange("ocelot site", "ok");
    let mut b = dir.project("-home-gbr-work-001-sites-blog").session("blog");
    b.set_cwd(Some("/home/gbr/play/blog"));
    b.exchange("ocelot blog", "ok");
    serve(dir)
}

fn listed(s: &Served, project: &str) -> Vec<String> {
    let mut ids = listed_sessions(&s.list(json!({"project": project})));
    ids.sort();
    ids
}

#[test]
fn project_filter_matches_project_name_case_insensitively() {
    let s = filter_corpus();
    assert_eq!(listed(&s, "DIFF-WEB"), ["site"]);
    assert_eq!(listed(&s, "Blog"), ["blog"]);
}

#[test]
fn project_filter_matches_the_directory_name() {
    let s = filter_corpus();
    // projects are "diff-website" and "blog"; these occur only in directory names
    assert_eq!(listed(&s, "SITES-DIFF"), ["site"]);
    assert_eq!(listed(&s, "work-001"), ["blog", "site"]);
}

#[test]
fn project_filter_matches_the_cwd() {
    let s = filter_corpus();
    // "checkout" occurs only in the cwd
    assert_eq!(listed(&s, "CHECKOUT"), ["site"]);
    let r = s.search_with(json!({"query": "ocelot", "project": "/srv/checkout"}));
    assert_eq!(r["total"], 1);
    assert_eq!(r["results"][0]["session_id"], "site");
}

#[test]
fn project_filter_without_match_returns_nothing() {
    let s = filter_corpus();
    assert!(listed(&s, "no-such-project").is_empty());
    let r = s.search_with(json!({"query": "ocelot", "project": "no-such-project"}));
    assert_eq!(r["total"], 0);
}
