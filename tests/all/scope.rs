//! This project: `--project-root` (or the current directory), its subfolders and the other
//! worktrees of its git repository; scope=project|all on search, list and file history,
//! this_project on every row, a session that moved into the project counted, the ranking prior.

use crate::common::mcp::McpClient;
use crate::common::project::{
    ELSEWHERE, IN_ROOT, MINE, MOVED_IN, NESTED, OTHERS, ProjectTree, SIBLING, WORKTREE,
    project_tree,
};
use crate::common::run_cli_json;
use serde_json::{Value, json};
use std::collections::BTreeSet;

fn serve(tree: &ProjectTree, extra: &[&str]) -> McpClient {
    let root = tree.root_str();
    let mut args = vec!["--project-root", root.as_str(), "--no-cache"];
    args.extend_from_slice(extra);
    McpClient::indexed(tree.projects.path(), &args)
}

/// `(session_id, this_project)` of every row of `rows`.
fn flags(rows: &Value) -> BTreeSet<(String, bool)> {
    rows.as_array()
        .unwrap_or_else(|| panic!("not an array: {rows}"))
        .iter()
        .map(|r| {
            let flag = r["this_project"]
                .as_bool()
                .unwrap_or_else(|| panic!("row without this_project: {r}"));
            (r["session_id"].as_str().unwrap().to_owned(), flag)
        })
        .collect()
}

fn expected(ids: &[&str]) -> BTreeSet<(String, bool)> {
    ids.iter()
        .map(|id| (id.to_string(), MINE.contains(id)))
        .collect()
}

#[test]
fn every_row_says_whether_it_is_this_project() {
    let tree = project_tree();
    let c = serve(&tree, &[]);
    let all = [IN_ROOT, NESTED, WORKTREE, MOVED_IN, ELSEWHERE, SIBLING];
    let s = c.search_with(json!({"query": "zebracorn", "limit": 50}));
    assert_eq!(flags(&s["results"]), expected(&all), "{s}");
    let l = c.ok("list_conversations", json!({}));
    assert_eq!(flags(&l["conversations"]), expected(&all), "{l}");
    let f = c.ok("find_file_history", json!({"path": "src/lib.rs"}));
    assert_eq!(flags(&f["results"]), expected(&MINE), "{f}");
}

#[test]
fn scope_project_keeps_root_nested_worktree_and_moved_in_sessions() {
    let tree = project_tree();
    let c = serve(&tree, &[]);
    let s = c.search_with(json!({"query": "zebracorn", "limit": 50, "scope": "project"}));
    assert_eq!(flags(&s["results"]), expected(&MINE), "{s}");
    assert_eq!(s["total"], 4);
    let l = c.ok("list_conversations", json!({"scope": "project"}));
    assert_eq!(flags(&l["conversations"]), expected(&MINE), "{l}");
    assert_eq!(l["total"], 4);
    let l = c.ok("list_conversations", json!({"scope": "all"}));
    assert_eq!(l["total"], 6);
    let f = c.ok(
        "find_file_history",
        json!({"path": "lib.rs", "scope": "project"}),
    );
    assert_eq!(flags(&f["results"]), expected(&MINE), "{f}");
    for id in OTHERS {
        assert!(
            !s.to_string().contains(id),
            "{id} leaked into scope=project"
        );
    }
}

#[test]
fn a_linked_worktree_as_root_finds_the_main_worktree() {
    let tree = project_tree();
    let wt = tree.dir("repo-wt").display().to_string();
    let c = McpClient::indexed(
        tree.projects.path(),
        &["--project-root", wt.as_str(), "--no-cache"],
    );
    let l = c.ok("list_conversations", json!({"scope": "project"}));
    assert_eq!(flags(&l["conversations"]), expected(&MINE), "{l}");
}

#[test]
fn a_bad_scope_is_named() {
    let tree = project_tree();
    let c = serve(&tree, &[]);
    for tool in [
        "search_conversations",
        "list_conversations",
        "find_file_history",
    ] {
        let r = c.err(
            tool,
            json!({"query": "zebracorn", "path": "lib.rs", "scope": "mine"}),
        );
        assert!(
            r.text.contains("`scope` must be `project` or `all`"),
            "{}",
            r.text
        );
    }
}

#[test]
fn the_prior_multiplies_this_projects_scores_unless_turned_off() {
    let tree = project_tree();
    let with = serve(&tree, &[]);
    let without = serve(&tree, &["--no-project-prior"]);
    let scores = |c: &McpClient| {
        let s = c.search_with(json!({"query": "zebracorn answer", "limit": 10}));
        s["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let id = r["session_id"].as_str().unwrap().to_owned();
                let turn = r["turn_number"].as_u64().unwrap();
                let mine = r["this_project"].as_bool().unwrap();
                ((id, turn), (r["score"].as_f64().unwrap(), mine))
            })
            .collect::<Vec<_>>()
    };
    let boosted = scores(&with);
    let plain: std::collections::BTreeMap<_, _> = scores(&without).into_iter().collect();
    assert_eq!(boosted.len(), 6, "{boosted:?}");
    for w in boosted.windows(2) {
        assert!(w[0].1.0 >= w[1].1.0, "not in score order: {boosted:?}");
    }
    for (key, (score, mine)) in &boosted {
        let base = plain[key].0;
        let want = if *mine { base * 1.25 } else { base };
        assert!(
            (score - want).abs() < 2e-4,
            "{key:?}: {score} vs {base} (mine: {mine})"
        );
    }
}

#[test]
fn the_cli_takes_the_current_directory_as_the_project() {
    let tree = project_tree();
    let out = crate::common::IsolatedEnv::new()
        .command(
            &[
                "--projects-dir",
                tree.projects_str(),
                "--no-cache",
                "list",
                "--scope",
                "project",
            ],
            &[],
        )
        .current_dir(tree.dir("repo/src/deep"))
        .output()
        .unwrap();
    // started below the root: the project is that folder, where only NESTED worked
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(flags(&v["conversations"]), expected(&[NESTED]), "{v}");
    let v = run_cli_json(&[
        "--projects-dir",
        tree.projects_str(),
        "--no-cache",
        "--project-root",
        &tree.root_str(),
        "search",
        "zebracorn",
        "--scope",
        "project",
    ]);
    assert_eq!(flags(&v["results"]), expected(&MINE), "{v}");
}

/// Which conversations belong to the project is worked out per index snapshot: a session of
/// the project that appears after searches already ran is this project's in the next ones
/// (search rows, scope=project, the prior's split), and one elsewhere is not.
#[test]
fn a_session_that_appears_while_running_is_placed_in_or_out_of_the_project() {
    let tree = project_tree();
    let c = serve(&tree, &["--debounce-ms", "50"]);
    let s = c.search_with(json!({"query": "zebracorn", "limit": 50}));
    assert_eq!(s["results"].as_array().map(Vec::len), Some(6), "{s}");
    let (mine, other) = (
        "77777777-0000-4000-8000-000000000007",
        "88888888-0000-4000-8000-000000000008",
    );
    for (id, cwd) in [(mine, tree.root()), (other, tree.dir("elsewhere"))] {
        let mut w = tree.projects.project("-p-late").session(id);
        w.set_cwd(Some(&cwd.display().to_string()));
        w.exchange("quillowhisk arrived late", "noted quillowhisk");
    }
    let found = crate::common::poll_until_desc(
        "both late sessions searchable",
        std::time::Duration::from_secs(20),
        || {
            let s = c.search_with(json!({"query": "quillowhisk", "limit": 10}));
            (s["results"].as_array().map(Vec::len) == Some(2)).then_some(s)
        },
    );
    assert_eq!(
        flags(&found["results"]),
        [(mine.to_owned(), true), (other.to_owned(), false)].into(),
        "{found}"
    );
    let scoped = c.search_with(json!({"query": "quillowhisk", "scope": "project"}));
    assert_eq!(
        flags(&scoped["results"]),
        [(mine.to_owned(), true)].into(),
        "{scoped}"
    );
}
