//! "Where we left off": the `context` command (Markdown sections, the SessionStart hook JSON,
//! --max-chars never exceeded, the same digest from a warm cache as without one) and the
//! `recent_context` tool (scope, sessions, max_chars).

use crate::common::mcp::McpClient;
use crate::common::project::{IN_ROOT, MINE, NESTED, OTHERS, ProjectTree, WORKTREE, project_tree};

/// A session added after the cache was written.
const ADDED: &str = "77777777-0000-4000-8000-000000000007";
use crate::common::run_cli;
use serde_json::{Value, json};

fn context(tree: &ProjectTree, extra: &[&str]) -> String {
    context_with(tree, &["--no-cache"], extra)
}

/// `context` with `cache` (`--no-cache` or `--cache-dir DIR`) and `extra` arguments.
fn context_with(tree: &ProjectTree, cache: &[&str], extra: &[&str]) -> String {
    let root = tree.root_str();
    let mut args = vec!["--projects-dir", tree.projects_str()];
    args.extend_from_slice(cache);
    args.extend_from_slice(&["--project-root", root.as_str(), "context"]);
    args.extend_from_slice(extra);
    let out = run_cli(&args, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn markdown_has_one_section_per_recent_session_of_this_project() {
    let tree = project_tree();
    let md = context(&tree, &[]);
    assert!(md.starts_with("# Recent sessions in `"), "{md}");
    let sections: Vec<&str> = md.split("\n## ").skip(1).collect();
    assert_eq!(sections.len(), 3, "{md}");
    // newest first: IN_ROOT, NESTED, WORKTREE
    for (section, id) in sections.iter().zip([IN_ROOT, NESTED, WORKTREE]) {
        assert!(section.contains(id), "{id} missing from {section}");
        assert!(section.contains(" turns"), "{section}");
        assert!(section.contains("src/lib.rs"), "{section}");
        assert!(
            section.contains(&format!(
                "last prompt (turn 2): last prompt of {}",
                &id[..8]
            )),
            "{section}"
        );
        assert!(
            section.contains("last reply began: The last reply starts here"),
            "{section}"
        );
    }
    for id in OTHERS {
        assert!(!md.contains(id), "{id} is another project's");
    }
    let md = context(&tree, &["--sessions", "10"]);
    assert_eq!(md.matches("\n## ").count(), MINE.len(), "{md}");
}

#[test]
fn max_chars_is_never_exceeded() {
    let tree = project_tree();
    for max in ["500", "700", "1000", "2000"] {
        let md = context(&tree, &["--sessions", "20", "--max-chars", max]);
        let n: usize = max.parse().unwrap();
        assert!(
            md.trim_end().chars().count() <= n,
            "{max}: {} chars\n{md}",
            md.len()
        );
        assert!(md.contains("\n## "), "{md}");
    }
}

#[test]
fn the_claude_hook_format_is_the_session_start_json() {
    let tree = project_tree();
    let out = context(&tree, &["--format", "claude-hook", "--max-chars", "800"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let hook = &v["hookSpecificOutput"];
    assert_eq!(hook["hookEventName"], "SessionStart");
    let text = hook["additionalContext"].as_str().unwrap();
    assert!(
        text.contains(IN_ROOT) && text.chars().count() <= 800,
        "{text}"
    );
}

#[test]
fn recent_context_tool_respects_scope_sessions_and_budget() {
    let tree = project_tree();
    let root = tree.root_str();
    let c = McpClient::indexed(
        tree.projects.path(),
        &["--project-root", root.as_str(), "--no-cache"],
    );
    let r = c.ok("recent_context", json!({}));
    assert_eq!(r["session_ids"], json!([IN_ROOT, NESTED, WORKTREE]), "{r}");
    assert!(r.to_string().len() <= 2000, "{r}");
    let r = c.ok("recent_context", json!({"scope": "all", "sessions": 20}));
    assert_eq!(r["session_ids"].as_array().unwrap().len(), 6, "{r}");
    for max in [500, 900, 1500] {
        let r = c.ok(
            "recent_context",
            json!({"scope": "all", "sessions": 20, "max_chars": max}),
        );
        assert!(r.to_string().chars().count() <= max, "{max}: {r}");
        assert_eq!(r["truncated"], true, "{r}");
    }
    let e = c.err("recent_context", json!({"sessions": 0}));
    assert!(
        e.text.contains("`sessions` must be between 1 and 20"),
        "{}",
        e.text
    );
    let e = c.err("recent_context", json!({"scope": "everything"}));
    assert!(e.text.contains("`scope`"), "{}", e.text);
}

#[test]
fn a_warm_cache_gives_the_same_digest_as_no_cache_even_after_changes() {
    let tree = project_tree();
    let dir = tempfile::tempdir().unwrap();
    let cache = ["--cache-dir", dir.path().to_str().unwrap()];
    let cases: [&[&str]; 4] = [
        &[],
        &["--sessions", "20"],
        &["--scope", "all", "--sessions", "20"],
        &["--format", "claude-hook", "--max-chars", "800"],
    ];
    let same_as_no_cache = |when: &str| {
        for extra in cases {
            let uncached = context(&tree, extra);
            let warm = context_with(&tree, &cache, extra);
            assert_eq!(warm, uncached, "{when}, {extra:?}");
        }
    };
    // the first run builds the index and writes the cache
    same_as_no_cache("cold");
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "bin"))
        .expect("the cache was written");
    let written = std::fs::read(&file).unwrap();
    same_as_no_cache("warm");

    // after the cache was written: a new session of the project (the newest), a turn
    // appended to another and a third one gone
    let repo = tree.root_str();
    let mut w = tree.projects.project("-p-77777777").session(ADDED);
    w.set_time("2026-05-02T09:00:00.000Z");
    w.set_cwd(Some(&repo));
    w.exchange(
        "a prompt added after the cache",
        "A reply added after the cache.",
    );
    let mut w = tree
        .projects
        .project(&format!("-p-{}", &NESTED[..8]))
        .session(NESTED);
    w.set_time("2026-05-02T08:00:00.000Z");
    w.set_cwd(Some(&repo));
    w.exchange("appended after the cache", "An appended reply.");
    let gone = tree
        .projects
        .path()
        .join(format!("-p-{}", &WORKTREE[..8]))
        .join(format!("{WORKTREE}.jsonl"));
    std::fs::remove_file(gone).unwrap();
    same_as_no_cache("changed");
    let md = context_with(&tree, &cache, &[]);
    let sections: Vec<&str> = md.split("\n## ").skip(1).collect();
    assert!(sections[0].contains(ADDED), "{md}");
    assert!(
        sections[1].contains(NESTED) && sections[1].contains("appended after"),
        "{md}"
    );
    assert!(!md.contains(WORKTREE), "{md}");
    // `context` only reads the cache
    assert_eq!(
        std::fs::read(&file).unwrap(),
        written,
        "context wrote the cache"
    );

    // a damaged cache is not trusted: the digest is still the uncached one
    let mut damaged = written.clone();
    damaged[40] ^= 0x55;
    std::fs::write(&file, &damaged).unwrap();
    same_as_no_cache("damaged head");
    std::fs::write(&file, &written[..written.len() - 5]).unwrap();
    same_as_no_cache("truncated");
}

#[test]
fn a_session_only_the_store_holds_is_digested_from_a_warm_cache_like_without_one() {
    let tree = project_tree();
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let data_arg = ["--data-dir", data.path().to_str().unwrap()];
    let with = |cache_args: &[&str]| {
        let mut extra: Vec<&str> = data_arg.to_vec();
        extra.extend_from_slice(cache_args);
        context_with(&tree, &extra, &["--sessions", "20"])
    };
    let cached = ["--cache-dir", cache.path().to_str().unwrap()];
    // a first run stores every session and writes the cache
    let before = with(&cached);
    assert!(before.contains(WORKTREE), "{before}");
    // then a transcript goes: the store keeps its session
    let gone = tree
        .projects
        .path()
        .join(format!("-p-{}", &WORKTREE[..8]))
        .join(format!("{WORKTREE}.jsonl"));
    std::fs::remove_file(gone).unwrap();
    let uncached = with(&["--no-cache"]);
    let section = uncached
        .split("\n## ")
        .find(|s| s.contains(WORKTREE))
        .unwrap_or_else(|| panic!("the stored session is in the digest: {uncached}"));
    assert!(section.contains("- last prompt (turn 2)"), "{section}");
    assert_eq!(
        with(&cached),
        uncached,
        "warm cache, session only in the store"
    );
}
