//! Real Claude Code transcripts from ../shared/samples (skipped when absent): turn counts and
//! prompts, subagent attachment, summaries, slugs, cwd/branch, ordering, tools_used, thinking
//! not searchable. Expected values were checked by hand with a Python script over the files.
//! Also a smoke test over the committed synthetic corpus in fixtures/claude/projects.

use crate::common::mcp::{McpClient, hit_keys};
use crate::common::search::listed_conv;
use crate::common::{fixtures_projects_dir, samples_or_skip, skip};
use serde_json::{Value, json};

const JSS: &str = "7acd37a8-2745-4b58-a8a9-46164b22ad9e";
const LOG: &str = "fe869ecb-c176-478f-9734-7e4b8ef12cff";
const IDEAS: &str = "03eb5929-52b3-4b13-ada3-b93ae35806b8";
const WORKTREES: &str = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
const DEEP: &str = "a7da6a22-facc-4fcd-8bab-f83c87862004";
const NESTED_AGENT: &str = "ef958aa1-0e93-49f0-bb71-150f63befcd1/agent-a4ca7529859c158c2";
const FLAT_AGENT: &str = "a7da6a22-facc-4fcd-8bab-f83c87862004/agent-c8d9b115";

/// A server over `<samples>/claude-code/projects`, or None (test skipped) without samples.
fn server(extra: &[&str]) -> Option<McpClient> {
    let samples = samples_or_skip()?;
    Some(McpClient::indexed(
        &samples.join("claude-code/projects"),
        extra,
    ))
}

#[test]
fn index_status_counts() {
    let Some(c) = server(&[]) else { return };
    let st = c.index_status();
    assert_eq!(st["projects"], 5, "{st}");
    assert_eq!(st["sessions"], 5, "{st}");
    assert_eq!(st["subagents"], 2, "{st}");
    assert_eq!(st["skipped_lines"], 0, "{st}");
}

#[test]
fn turn_counts_and_prompts_match_the_files() {
    let Some(c) = server(&[]) else { return };
    let expected: [(&str, &[&str]); 7] = [
        (
            JSS,
            &[
                "",
                "OK, so this was just so you know what th",
                "I have both Node and Python, but I don't",
                "ok, fine, let's do vite",
                "yes please, and let's make it cross-brow",
                "Let's also Migrate to AudioWorklet",
            ],
        ),
        (
            LOG,
            &[
                "Hey Claude, can you please add a Github ",
                "Wait, does it only run on main? I think ",
            ],
        ),
        (
            IDEAS,
            &[
                "Ok, so there's isn't much to see here, m",
                "I very much like this idea, and I used i",
                "OK, so, to be fair, maybe also list 5 we",
                "Fair enough. Can you write a balanced op",
                "I actually don't like much this idea, an",
                "Ok, so, to be fair, maybe also list 5 st",
                "Fair enough. Can you write a balanced op",
            ],
        ),
        (
            WORKTREES,
            &[
                "OK, we're going to make a little experim",
                "Well, the subagents seem to be either st",
            ],
        ),
        (
            DEEP,
            &[
                "It's been a while - I see that I have pe",
                "Is everything OK with this project? Do a",
                "The above \"status report\" is very intere",
                "New feature: we support .zip, but I've s",
                "I saw in passing that in case of BadZipF",
                "OK, so first commit the changes related ",
                "Excellent work, thank you!",
            ],
        ),
        (NESTED_AGENT, &["You are **alice**, a teammate in an expe"]),
        (FLAT_AGENT, &[""]),
    ];
    for (sid, prefixes) in expected {
        let texts = c.user_texts(sid);
        assert_eq!(texts.len(), prefixes.len(), "{sid}: {texts:#?}");
        for (i, (got, want)) in texts.iter().zip(prefixes.iter()).enumerate() {
            assert!(
                got.trim().starts_with(want),
                "{sid} turn {i}: {got:?} should start with {want:?}"
            );
            assert!(
                !got.contains("<ide_"),
                "{sid} turn {i}: IDE tags not stripped"
            );
        }
    }
    assert_eq!(
        c.read_turn(DEEP, 6)["user_text"],
        "Excellent work, thank you!"
    );
    assert_eq!(
        c.read_turn(JSS, 5)["user_text"].as_str().unwrap().trim(),
        "Let's also Migrate to AudioWorklet"
    );
    assert_eq!(
        c.read_turn(DEEP, 0)["timestamp"],
        "2025-11-29T15:18:16.513Z"
    );
}

#[test]
fn known_prompt_is_found() {
    let Some(c) = server(&[]) else { return };
    let keys = hit_keys(&c.search_with(json!({"query": "AudioWorklet", "limit": 100})));
    assert!(keys.contains(&(JSS.to_string(), 5)), "{keys:?}");
    let keys = hit_keys(&c.search_with(json!({"query": "BadZipFile", "limit": 100})));
    assert!(keys.contains(&(DEEP.to_string(), 4)), "{keys:?}");
}

#[test]
fn subagents_are_attached_to_their_parents() {
    let Some(c) = server(&[]) else { return };
    let r = c.search_with(json!({"query": "gathering", "limit": 100}));
    let hit = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["session_id"] == NESTED_AGENT)
        .unwrap_or_else(|| panic!("nested subagent not found: {r}"));
    assert_eq!(hit["parent_session_id"], WORKTREES);
    assert_eq!(hit["agent_type"], "general-purpose");
    assert_eq!(hit["agent_description"], "Research Claude Code plan mode");

    let r = c.search_with(json!({"query": "examining", "limit": 100}));
    let hit = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["session_id"] == FLAT_AGENT)
        .unwrap_or_else(|| panic!("flat subagent not found: {r}"));
    assert_eq!(hit["parent_session_id"], DEEP);

    assert_eq!(listed_conv(&c, WORKTREES)["subagent_count"], 1);
    assert_eq!(listed_conv(&c, DEEP)["subagent_count"], 1);
    for sid in [JSS, LOG, IDEAS] {
        assert_eq!(listed_conv(&c, sid)["subagent_count"], 0, "{sid}");
    }
    assert_eq!(c.list(json!({}))["total"], 5, "subagents are not listed");
}

#[test]
fn summaries_slugs_cwd_and_branches() {
    let Some(c) = server(&[]) else { return };
    let deep = listed_conv(&c, DEEP);
    assert_eq!(deep["summary"], "Claude Code CLI Tool Development Summary");
    assert_eq!(deep["slug"], "humble-doodling-wolf");
    assert_eq!(deep["cwd"], "/src/deep-manifest");
    assert_eq!(deep["git_branch"], "master");
    let log = listed_conv(&c, LOG);
    assert_eq!(
        log["summary"],
        "Test Suite Reorganization: Improved Test File Structure"
    );
    assert_eq!(log["slug"], Value::Null);
    assert_eq!(log["cwd"], "/Users/dain/workspace/claude-code-log");
    assert_eq!(log["git_branch"], Value::Null);
    let ideas = listed_conv(&c, IDEAS);
    assert_eq!(ideas["summary"], "zippy-wondering-wadler");
    assert_eq!(ideas["slug"], "zippy-wondering-wadler");
    assert_eq!(ideas["git_branch"], "HEAD");
    assert_eq!(ideas["cwd"], "/home/user/project");
    let wt = listed_conv(&c, WORKTREES);
    let first = c.read_turn(WORKTREES, 0)["user_text"]
        .as_str()
        .unwrap()
        .to_string();
    let want: String = first.chars().take(200).collect();
    assert_eq!(wt["summary"].as_str().unwrap().trim_end(), want.trim_end());
    assert!(want.starts_with("OK, we're going to make a little experiment here."));
    assert_eq!(wt["git_branch"], "master");
    let jss = listed_conv(&c, JSS);
    assert_eq!(jss["cwd"], "/Users/dain/workspace/JSSoundRecorder");
    assert_eq!(jss["git_branch"], "gh-pages");
    assert_eq!(jss["turn_count"], 6);
}

#[test]
fn list_is_ordered_by_last_activity() {
    let Some(c) = server(&[]) else { return };
    let l = c.list(json!({}));
    let rows: Vec<(&str, &str)> = l["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["session_id"].as_str().unwrap(),
                x["last_timestamp"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (WORKTREES, "2026-04-18T15:09:30.093Z"),
            (IDEAS, "2026-02-17T00:13:55.281Z"),
            (DEEP, "2025-11-29T17:11:28.749Z"),
            (JSS, "2025-11-18T00:18:57.199Z"),
            (LOG, "2025-06-15T00:00:51.982Z"),
        ]
    );
}

#[test]
fn single_project_is_named_after_its_cwd() {
    let Some(c) = server(&["*JSSoundRecorder"]) else {
        return;
    };
    let l = c.list(json!({}));
    assert_eq!(l["total"], 1);
    assert_eq!(l["conversations"][0]["project"], "JSSoundRecorder");
    let Some(c) = server(&["*deep-manifest"]) else {
        return;
    };
    let d = listed_conv(&c, DEEP);
    assert_eq!(d["project"], "deep-manifest");
    assert_eq!(d["subagent_count"], 1);
    assert_eq!(c.index_status()["subagents"], 1);
}

/// Compares a tools_used entry with the expected one; Bash commands longer than 200
/// characters only need to be a (possibly ellipsised) prefix of at most 200 characters.
fn assert_tool(got: &Value, want: &Value) {
    if want["tool"] == "Bash" {
        let full = want["command"].as_str().unwrap();
        let cmd = got["command"].as_str().unwrap_or_else(|| panic!("{got}"));
        if full.chars().count() <= 200 {
            assert_eq!(cmd, full);
        } else {
            assert!(cmd.chars().count() <= 200, "{cmd:?}");
            assert!(
                full.starts_with(cmd.trim_end_matches(['…', '.'])),
                "{cmd:?}"
            );
        }
        assert_eq!(got["tool"], "Bash");
    } else {
        assert_eq!(got, want);
    }
}

#[test]
fn tools_used_of_known_turns() {
    let Some(c) = server(&[]) else { return };
    let want = json!([
        {"tool": "Bash", "command": "pytest"},
        {"tool": "Read", "file": "/src/deep-manifest/deep_manifest/deep_manifest.py"},
        {"tool": "Bash", "command": "(source .venv/bin/activate && pytest)"},
        {"tool": "Bash", "command": "(source .venv/bin/activate && deep-manifest --help)"},
        {"tool": "Read", "file": "/src/deep-manifest/README.md"},
        {"tool": "Glob", "pattern": "**/*"},
        {"tool": "Glob", "pattern": "**/*"},
        {"tool": "Bash", "command": "(source .venv/bin/activate && ruff check deep_manifest/)"}
    ]);
    assert_eq!(c.read_turn(DEEP, 1)["tools_used"], want);

    let got = c.read_turn(WORKTREES, 1)["tools_used"].clone();
    let got = got.as_array().unwrap();
    let names: Vec<&str> = got.iter().map(|t| t["tool"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "Bash",
            "TaskList",
            "Bash",
            "ToolSearch",
            "Agent",
            "Agent",
            "Agent",
            "TaskUpdate",
            "TaskUpdate",
            "Bash",
            "Bash",
            "TaskUpdate",
            "Bash"
        ]
    );
    assert_tool(
        &got[0],
        &json!({"tool": "Bash", "command": "git log --all --oneline --graph -20"}),
    );
    assert_eq!(got[1], json!({"tool": "TaskList"}));
    let long = "for d in .claude/worktrees/agent-*; do echo \"=== $d ===\"; git -C \"$d\" log --oneline -3 2>/dev/null; echo \"-- status --\"; git -C \"$d\" status --short 2>/dev/null; echo \"-- branch --\"; git -C \"$d\" branch";
    let got2 = got[2]["command"].as_str().unwrap();
    assert!(got2.chars().count() <= 200 && long.starts_with(got2.trim_end_matches(['…', '.'])));
    assert_eq!(
        got[4],
        json!({"tool": "Agent", "type": "general-purpose", "description": "Round 2: alice comparison"})
    );
}

#[test]
fn thinking_text_is_never_searchable() {
    let Some(c) = server(&[]) else { return };
    // "undertaking" occurs in the samples only inside one thinking block of JSSoundRecorder
    assert_eq!(c.search("undertaking")["total"], 0);
    assert!(
        c.search("AudioWorklet")["total"].as_u64().unwrap() > 0,
        "control"
    );
}

#[test]
fn committed_fixture_corpus_smoke() {
    let Some(dir) = fixtures_projects_dir() else {
        skip("fixtures/claude/projects not found");
        return;
    };
    let c = McpClient::indexed(&dir, &[]);
    let st = c.index_status();
    let sessions = st["sessions"].as_u64().unwrap();
    assert!(sessions >= 1, "{st}");
    assert!(st["turns"].as_u64().unwrap() >= 1, "{st}");
    let l = c.list(json!({"limit": 100}));
    assert_eq!(l["total"].as_u64().unwrap(), sessions);
    // a long word from some turn must find that turn
    let sid = l["conversations"][0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let conv = c.read_conversation(&sid);
    let text = conv["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let u = t["user_text"].as_str().unwrap_or("");
            let a = t["assistant_text"].as_str().unwrap_or("");
            format!("{u} {a} ")
        })
        .collect::<String>();
    // the longest plain lowercase word (no identifier splitting involved)
    let word = text
        .split(|ch: char| !ch.is_alphanumeric())
        .filter(|w| w.chars().all(|ch| ch.is_ascii_lowercase()))
        .max_by_key(|w| w.len())
        .unwrap_or("")
        .to_string();
    assert!(word.len() >= 6, "no usable word in {sid}: {text:?}");
    let keys = hit_keys(&c.search_with(json!({"query": word, "limit": 100})));
    assert!(
        keys.iter().any(|(s, _)| s == &sid),
        "{word:?} should find {sid}: {keys:?}"
    );
}
