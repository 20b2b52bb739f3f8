//! The command line for people: readable search/list blocks (forced with --color always, off
//! with --color never / NO_COLOR), the same JSON as the MCP tools when piped or with --json,
//! `show` and `status`, completions for every shell and the man page.

use crate::common::mcp::McpClient;
use crate::common::project::{IN_ROOT, ProjectTree, project_tree};
use crate::common::run_cli;
use serde_json::{Value, json};

fn cli(tree: &ProjectTree, args: &[&str], envs: &[(&str, &str)]) -> String {
    let root = tree.root_str();
    let mut all = vec![
        "--projects-dir",
        tree.projects_str(),
        "--no-cache",
        "--project-root",
        root.as_str(),
    ];
    all.extend_from_slice(args);
    let out = run_cli(&all, envs);
    assert!(
        out.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn search_is_readable_and_highlighted_with_color_always() {
    let tree = project_tree();
    let out = cli(&tree, &["search", "zebracorn", "--color", "always"], &[]);
    assert!(out.contains("\x1b[1;33mzebracorn\x1b[0m"), "{out}");
    assert!(out.contains(" · turn 0 · \x1b[2m2026-05-01 13:00"), "{out}");
    assert!(out.contains("(this project)"), "{out}");
    assert!(out.contains("of 6 matching turns"), "{out}");
    assert!(serde_json::from_str::<Value>(&out).is_err());
    let list = cli(
        &tree,
        &["list", "--color", "always", "--scope", "project"],
        &[],
    );
    assert!(
        list.contains(IN_ROOT) && list.contains("4 of 4 sessions"),
        "{list}"
    );
}

#[test]
fn piped_output_is_the_tools_json_unchanged() {
    let tree = project_tree();
    let root = tree.root_str();
    let c = McpClient::indexed(
        tree.projects.path(),
        &["--project-root", root.as_str(), "--no-cache"],
    );
    let piped: Value = serde_json::from_str(&cli(&tree, &["search", "zebracorn"], &[])).unwrap();
    let tool = c.search_with(json!({"query": "zebracorn"}));
    assert_eq!(piped, tool);
    let forced: Value =
        serde_json::from_str(&cli(&tree, &["list", "--json", "--color", "always"], &[])).unwrap();
    assert_eq!(forced, c.ok("list_conversations", json!({"limit": 50})));
}

#[test]
fn never_has_no_colours_and_always_beats_no_color() {
    let tree = project_tree();
    let never = cli(&tree, &["search", "zebracorn", "--color", "never"], &[]);
    // never colours; off a terminal that is JSON
    assert!(!never.contains('\x1b'));
    let plain = cli(
        &tree,
        &["show", IN_ROOT, "--color", "always"],
        &[("NO_COLOR", "1")],
    );
    // an explicit --color always wins over NO_COLOR (which only turns `auto` off: unit-tested)
    assert!(plain.contains("\x1b[36m> user\x1b[0m"), "{plain}");
}

#[test]
fn show_prints_a_conversation_or_a_turn_and_status_the_index() {
    let tree = project_tree();
    let conv = cli(&tree, &["show", IN_ROOT, "--color", "always"], &[]);
    assert!(
        conv.contains("zebracorn question from repo") && conv.contains("3 turns"),
        "{conv}"
    );
    assert!(conv.contains("[Edit]"), "{conv}");
    let turn = cli(&tree, &["show", IN_ROOT, "2", "--color", "always"], &[]);
    assert!(
        turn.contains("turn 2") && turn.contains("last prompt of 11111111"),
        "{turn}"
    );
    let json: Value = serde_json::from_str(&cli(&tree, &["show", IN_ROOT, "2"], &[])).unwrap();
    assert_eq!(json["turn_number"], 2);
    let status = cli(&tree, &["status", "--color", "never"], &[]);
    let v: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["sessions"], 6, "{v}");
    let text = cli(&tree, &["status", "--color", "always"], &[]);
    assert!(text.contains("sessions\x1b[0m: 6"), "{text}");
}

#[test]
fn completions_for_every_shell_and_the_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run_cli(&["completions", shell], &[]);
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("conversation-search") && text.contains("project-root"),
            "{shell}"
        );
    }
    let man = run_cli(&["man"], &[]);
    let text = String::from_utf8(man.stdout).unwrap();
    assert!(
        text.starts_with(".ie") || text.contains(".TH conversation-search 1"),
        "{text}"
    );
    assert!(text.contains("context"), "{text}");
}
