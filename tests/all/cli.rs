//! Command line: --help/--version/bad flags, `search` and `list` one-shot commands (same JSON
//! as the MCP tools), `serve`/default server mode, PATTERN, default projects dir resolution.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::{McpClient, hit_sessions};
use crate::common::{IsolatedEnv, bin_path, run_cli, run_cli_json};
use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

const ALPHA: &str = "aaaaaaaa-0000-4000-8000-000000000001";
const BETA: &str = "bbbbbbbb-0000-4000-8000-000000000002";

/// Two projects, each with one session mentioning `zebracorn`; only beta mentions `quokkafin`.
fn two_projects() -> ProjectsDir {
    let dir = ProjectsDir::new();
    let mut a = dir.project("-home-u-work-alpha").session(ALPHA);
    a.exchange(
        "zebracorn migration plan for alpha",
        "Here is the alpha plan.",
    );
    a.exchange("second alpha question", "second alpha answer zebracorn");
    let mut b = dir.project("-home-u-work-beta").session(BETA);
    b.set_time("2026-06-01T08:00:00.000Z");
    b.exchange("zebracorn and quokkafin in beta", "Beta reply.");
    dir
}

fn cmd(iso: &IsolatedEnv) -> Command {
    let mut c = Command::new(bin_path());
    c.env("HOME", iso.home.path())
        .env("XDG_CACHE_HOME", iso.cache.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .timeout(std::time::Duration::from_secs(60));
    c
}

#[test]
fn help_exits_zero_and_lists_commands_and_flags() {
    let iso = IsolatedEnv::new();
    cmd(&iso)
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("--projects-dir"))
        .stdout(predicate::str::contains("search"))
        .stdout(predicate::str::contains("list"))
        .stdout(predicate::str::contains("serve"));
}

#[test]
fn version_prints_cargo_version() {
    let iso = IsolatedEnv::new();
    cmd(&iso)
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains("0.1.0"))
        .stdout(predicate::str::starts_with("conversation-search"));
}

#[test]
fn unknown_flag_exits_2_with_message_on_stderr() {
    let iso = IsolatedEnv::new();
    cmd(&iso)
        .arg("--definitely-not-a-flag")
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("definitely-not-a-flag"));
}

#[test]
fn unknown_subcommand_flag_and_bad_limit_exit_2() {
    let dir = two_projects();
    let iso = IsolatedEnv::new();
    cmd(&iso)
        .args([
            "search",
            "zebracorn",
            "--bogus",
            "--projects-dir",
            dir.path_str(),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--bogus"));
    cmd(&iso)
        .args([
            "search",
            "zebracorn",
            "--limit",
            "many",
            "--projects-dir",
            dir.path_str(),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::is_empty().not());
}

#[test]
fn search_command_prints_the_same_json_as_the_tool() {
    let dir = two_projects();
    let out = run_cli(
        &["search", "zebracorn", "--projects-dir", dir.path_str()],
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("\n  \""),
        "output should be pretty-printed JSON:\n{stdout}"
    );
    let cli: Value = serde_json::from_str(&stdout).unwrap();
    let server = McpClient::indexed(dir.path(), &[]);
    let tool = server.search("zebracorn");
    assert_eq!(cli, tool);
    assert_eq!(cli["total"], 3);
    assert_eq!(cli["query"], "zebracorn");
}

#[test]
fn search_command_options_match_the_tool_arguments() {
    let dir = two_projects();
    let d = dir.path_str();
    let server = McpClient::indexed(dir.path(), &[]);

    let cli = run_cli_json(&["search", "zebracorn", "--limit", "1", "--projects-dir", d]);
    assert_eq!(cli["results"].as_array().unwrap().len(), 1);
    assert_eq!(cli["total"], 3);
    assert_eq!(
        cli,
        server.search_with(json!({"query": "zebracorn", "limit": 1}))
    );

    let cli = run_cli_json(&[
        "search",
        "zebracorn",
        "--project",
        "beta",
        "--projects-dir",
        d,
    ]);
    assert_eq!(hit_sessions(&cli), vec![BETA.to_string()]);
    assert_eq!(
        cli,
        server.search_with(json!({"query": "zebracorn", "project": "beta"}))
    );

    let cli = run_cli_json(&[
        "search",
        "zebracorn",
        "--session-id",
        ALPHA,
        "--projects-dir",
        d,
    ]);
    assert_eq!(
        hit_sessions(&cli),
        vec![ALPHA.to_string(), ALPHA.to_string()]
    );
    assert_eq!(
        cli,
        server.search_with(json!({"query": "zebracorn", "session_id": ALPHA}))
    );
}

#[test]
fn search_command_pattern_restricts_projects() {
    let dir = two_projects();
    let cli = run_cli_json(&[
        "search",
        "zebracorn",
        "*beta",
        "--projects-dir",
        dir.path_str(),
    ]);
    assert_eq!(hit_sessions(&cli), vec![BETA.to_string()]);
    assert_eq!(cli["total"], 1);
}

#[test]
fn list_command_prints_the_same_json_as_the_tool() {
    let dir = two_projects();
    let d = dir.path_str();
    let server = McpClient::indexed(dir.path(), &[]);
    let cli = run_cli_json(&["list", "--projects-dir", d]);
    assert_eq!(cli, server.list(json!({})));
    assert_eq!(cli["total"], 2);
    // beta's last record is newer: it comes first
    assert_eq!(cli["conversations"][0]["session_id"], BETA);

    let cli = run_cli_json(&["list", "--project", "ALPHA", "--projects-dir", d]);
    assert_eq!(cli, server.list(json!({"project": "ALPHA"})));
    assert_eq!(cli["total"], 1);
    assert_eq!(cli["conversations"][0]["session_id"], ALPHA);

    let cli = run_cli_json(&["list", "--limit", "1", "--projects-dir", d]);
    assert_eq!(cli, server.list(json!({"limit": 1})));
    assert_eq!(cli["conversations"].as_array().unwrap().len(), 1);
    assert_eq!(cli["total"], 2);
}

#[test]
fn list_command_pattern_restricts_projects() {
    let dir = two_projects();
    let cli = run_cli_json(&["list", "*alpha", "--projects-dir", dir.path_str()]);
    assert_eq!(cli["total"], 1);
    assert_eq!(cli["conversations"][0]["session_id"], ALPHA);
}

/// The spec calls `--projects-dir` a global flag: it must also work before the subcommand
/// (the other tests put it after the subcommand).
#[test]
fn projects_dir_is_a_global_flag_also_before_the_subcommand() {
    let dir = two_projects();
    let d = dir.path_str();
    let cli = run_cli_json(&["--projects-dir", d, "search", "quokkafin"]);
    assert_eq!(hit_sessions(&cli), vec![BETA.to_string()]);
    let cli = run_cli_json(&["--projects-dir", d, "list"]);
    assert_eq!(cli["total"], 2);
    let c = McpClient::start(&["--projects-dir", d, "serve"]);
    let st = c.wait_ready();
    assert_eq!(st["sessions"], 2, "{st}");
    assert_eq!(
        st["pattern"], "*",
        "`serve` must not be taken as the PATTERN: {st}"
    );
}

#[test]
fn default_and_serve_modes_both_run_the_server() {
    let dir = two_projects();
    for args in [
        vec!["--projects-dir", dir.path_str()],
        vec!["serve", "--projects-dir", dir.path_str()],
    ] {
        let c = McpClient::start(&args);
        let st = c.wait_ready();
        assert_eq!(st["sessions"], 2, "{args:?}: {st}");
        assert_eq!(st["pattern"], "*", "{args:?}: default pattern");
        assert_eq!(hit_sessions(&c.search("quokkafin")), vec![BETA.to_string()]);
        c.assert_clean_stdout();
    }
}

#[test]
fn server_pattern_argument_restricts_indexing() {
    let dir = two_projects();
    for args in [
        vec!["--projects-dir", dir.path_str(), "*alpha"],
        vec!["serve", "*alpha", "--projects-dir", dir.path_str()],
    ] {
        let c = McpClient::start(&args);
        let st = c.wait_ready();
        assert_eq!(st["sessions"], 1, "{args:?}: {st}");
        assert_eq!(st["projects"], 1, "{args:?}: {st}");
        assert_eq!(st["pattern"], "*alpha");
        assert_eq!(c.search("quokkafin")["total"], 0, "beta is not indexed");
        assert_eq!(c.search("zebracorn")["total"], 2);
    }
}

#[test]
fn missing_projects_dir_is_an_empty_index_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("does-not-exist");
    let missing_s = missing.to_str().unwrap();
    let c = McpClient::indexed(&missing, &[]);
    let st = c.index_status();
    assert_eq!(st["sessions"], 0);
    assert_eq!(st["turns"], 0);
    assert_eq!(c.search("zebracorn")["total"], 0);
    assert_eq!(c.list(json!({}))["total"], 0);
    assert!(
        !c.stderr_text().trim().is_empty(),
        "a note on stderr expected"
    );
    assert!(
        !missing.exists(),
        "the server must not create the projects dir"
    );

    let out = run_cli(&["search", "zebracorn", "--projects-dir", missing_s], &[]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], 0);
    assert!(!out.stderr.is_empty(), "a note on stderr expected");
}

#[test]
fn default_projects_dir_comes_from_claude_config_dir() {
    // the temp root plays $CLAUDE_CONFIG_DIR: sessions live in <root>/projects/<project>/
    let cfg = ProjectsDir::new();
    let mut s = cfg.project("projects/-home-u-cfg").session("cfg-session");
    s.exchange("zebracorn in config dir", "ok");
    let out = run_cli(
        &["search", "zebracorn"],
        &[("CLAUDE_CONFIG_DIR", cfg.path_str())],
    );
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hit_sessions(&v), vec!["cfg-session".to_string()]);
}

#[test]
fn default_projects_dir_is_home_dot_claude_projects() {
    // the temp root plays $HOME: sessions live in <root>/.claude/projects/<project>/
    let home = ProjectsDir::new();
    let mut s = home
        .project(".claude/projects/-home-u-x")
        .session("home-session");
    s.exchange("zebracorn at home", "ok");
    let out = run_cli(&["search", "zebracorn"], &[("HOME", home.path_str())]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hit_sessions(&v), vec!["home-session".to_string()]);
}

#[test]
fn claude_config_dir_wins_over_home() {
    let home = ProjectsDir::new();
    let mut s = home
        .project(".claude/projects/-home-u-x")
        .session("home-session");
    s.exchange("zebracorn at home", "ok");
    let cfg = ProjectsDir::new();
    let mut s = cfg.project("projects/-home-u-cfg").session("cfg-session");
    s.exchange("quokkafin in config dir", "ok");
    let out = run_cli(
        &["search", "zebracorn"],
        &[
            ("HOME", home.path_str()),
            ("CLAUDE_CONFIG_DIR", cfg.path_str()),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], 0, "HOME's projects must not be used: {v}");
    let out = run_cli(
        &["search", "quokkafin"],
        &[
            ("HOME", home.path_str()),
            ("CLAUDE_CONFIG_DIR", cfg.path_str()),
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hit_sessions(&v), vec!["cfg-session".to_string()]);
}
