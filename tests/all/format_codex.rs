//! Codex CLI rollouts through the binary: prompts vs injected context, one copy of text that
//! arrives on several channels, tool rendering, never-indexed reasoning and outputs, metadata,
//! forks that replay their parent, resumed and flat layouts, live appends, the real sample.

use crate::common;

use std::time::Duration;

use crate::common::formats::{CodexRollout, SourceRoot, codex_id, serve_sources};
use crate::common::search::total;
use crate::common::{poll_until_desc, samples_or_skip, skip};
use serde_json::{Value, json};

fn tools<'a>(turn: &'a Value, name: &str) -> Vec<&'a Value> {
    let all = turn["tools_used"].as_array().expect("tools_used");
    all.iter().filter(|t| t["tool"] == name).collect()
}

const PATCH: &str = "*** Begin Patch\n*** Add File: src/platypus.rs\n+pub fn p() {}\n*** Update File: src/lib.rs\n@@\n-old\n+mod platypus;\n*** End Patch\n";

#[test]
fn prompts_channels_tools_and_metadata() {
    let root = SourceRoot::new("cs-codex-");
    let id = codex_id();
    let mut r = CodexRollout::new(root.path(), &id, "/home/u/codexproj", Some("feature-x"));
    r.message("developer", "input_text", "<permissions instructions>developerwordkappa")
        .message("user", "input_text", "# AGENTS.md instructions for /home/u/codexproj\n\n<INSTRUCTIONS>agentsmdwordlambda</INSTRUCTIONS>")
        .message("user", "input_text", "<environment_context>\n  <cwd>/home/u/codexproj</cwd>\n  <shell>zsh envwordmu</shell>\n</environment_context>")
        .turn_context("/home/u/codexproj")
        .user_turn("investigate the platypus crash")
        .reasoning("**Thinking** reasoningwordnu")
        .function_call("shell", json!({"command": ["bash", "-lc", "cargo build --release"], "workdir": "/home/u/codexproj"}), "outputwordxi compiled")
        .exec_end("execendwordomicron")
        .function_call("exec_command", json!({"cmd": "rg platypus src", "yield_time_ms": 1000}), "src/lib.rs:1 outputwordpi")
        .function_call("read_file", json!({"path": "/home/u/codexproj/src/main.rs"}), "fn main() {}")
        .custom_tool_call("apply_patch", PATCH, "Success. outputwordrho")
        .local_shell(&["git", "status"])
        .web_search("platypus null pointer")
        .assistant("The platypus crash comes from a null deref.")
        .line("event_msg", json!({"type": "token_count", "info": null, "rate_limits": null}))
        .thread_name("Platypus crash")
        // a 0.148+ turn: the prompt and reply on three channels each
        .user_event("now fix the echidna test")
        .item_user("now fix the echidna test")
        .message("user", "input_text", "now fix the echidna test")
        .message("assistant", "output_text", "Fixed the echidna test.")
        .item_agent("Fixed the echidna test.")
        .line("event_msg", json!({"type": "agent_message", "message": "Fixed the echidna test."}))
        .message("user", "input_text", "<turn_aborted>abortedwordsigma</turn_aborted>");
    let c = serve_sources(&[root.arg("codex")], &[]);
    let cid = r.id();
    assert_eq!(cid, format!("codex:{id}"));

    assert_eq!(c.hits("platypus crash investigate")[0], (cid.clone(), 0));
    assert_eq!(
        c.user_texts(&cid),
        ["investigate the platypus crash", "now fix the echidna test"]
    );
    let t0 = c.read_turn(&cid, 0);
    assert_eq!(
        t0["assistant_text"],
        "The platypus crash comes from a null deref."
    );
    assert_eq!(
        c.read_turn(&cid, 1)["assistant_text"],
        "Fixed the echidna test."
    );

    assert_eq!(tools(&t0, "shell")[0]["command"], "cargo build --release");
    assert_eq!(tools(&t0, "exec_command")[0]["command"], "rg platypus src");
    assert_eq!(
        tools(&t0, "read_file")[0]["file"],
        "/home/u/codexproj/src/main.rs"
    );
    let patch = tools(&t0, "apply_patch");
    assert_eq!(patch.len(), 2, "{t0}");
    assert_eq!(patch[0]["file"], "src/platypus.rs");
    assert!(
        patch[0]["chars"].as_u64().is_some(),
        "added file is a write: {t0}"
    );
    assert_eq!(patch[1]["file"], "src/lib.rs");
    assert_eq!(tools(&t0, "local_shell")[0]["command"], "git status");
    assert_eq!(
        tools(&t0, "web_search")[0]["query"],
        "platypus null pointer"
    );

    for word in [
        "developerwordkappa",
        "agentsmdwordlambda",
        "envwordmu",
        "reasoningwordnu",
        "outputwordxi",
        "execendwordomicron",
        "outputwordpi",
        "outputwordrho",
        "abortedwordsigma",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }

    let row = &c.list(json!({"source": "codex"}))["conversations"][0];
    assert_eq!(row["session_id"], cid);
    assert_eq!(row["source"], "codex");
    assert_eq!(row["summary"], "Platypus crash");
    assert_eq!(row["cwd"], "/home/u/codexproj");
    assert_eq!(row["project"], "codexproj");
    assert_eq!(row["git_branch"], "feature-x");
    assert_eq!(row["turn_count"], 2);
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:01.000Z");
}

#[test]
fn forked_rollout_does_not_duplicate_the_replayed_history() {
    let root = SourceRoot::new("cs-codex-");
    let pid = codex_id();
    let mut parent = CodexRollout::new(root.path(), &pid, "/w/forks", None);
    parent
        .user_turn("first question about the tapir module")
        .function_call(
            "read_file",
            json!({"path": "/w/forks/src/tapir.rs"}),
            "fn t() {}",
        )
        .assistant("tapir answer")
        .thread_name("Tapir thread")
        .user_turn("second question about yak shaving")
        .assistant("yak answer");
    let mut child = CodexRollout::fork(root.path(), &codex_id(), &parent, "/w/forks");
    child
        .user_turn("child-only follow-up about the gnu parser")
        .assistant("gnu answer");
    // the parent goes on after the fork: the fork replayed a prefix of it
    parent
        .user_turn("parent keeps going about the okapi")
        .assistant("okapi answer");
    // an unrelated session that happens to start with the same prompt is not folded
    let mut other = CodexRollout::new(root.path(), &codex_id(), "/w/other", None);
    other.user_turn("first question about the tapir module");

    let c = serve_sources(&[root.arg("codex")], &[]);
    // the fork's own turns start after the replayed history
    assert_eq!(c.read_conversation(&child.id())["total_turns"], 1);
    assert_eq!(
        c.user_texts(&child.id()),
        ["child-only follow-up about the gnu parser"]
    );
    let tapir = c.hits("tapir");
    assert_eq!(tapir.len(), 2, "found once in the parent: {tapir:?}");
    assert!(tapir.contains(&(parent.id(), 0)), "{tapir:?}");
    assert!(tapir.contains(&(other.id(), 0)), "{tapir:?}");
    assert_eq!(c.hits("yak shaving"), [(parent.id(), 1)]);
    let in_fork = c.search_with(json!({"query": "tapir yak", "session_id": child.id()}));
    assert_eq!(in_fork["total"], 0, "{in_fork}");
    let history = c.ok("find_file_history", json!({"path": "src/tapir.rs"}));
    let sessions: Vec<&str> = history["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["session_id"].as_str())
        .collect();
    assert_eq!(sessions, [parent.id().as_str()], "{history}");
    let gnu = c.search("gnu parser");
    assert_eq!(gnu["results"][0]["session_id"], child.id());
    assert_eq!(gnu["results"][0]["parent_session_id"], parent.id());
    // a fork is a session of its own: listed, not counted as a sub-agent; its title and
    // first prompt are its own, not the origin's
    let list = c.list(json!({}));
    let rows = list["conversations"].as_array().unwrap();
    let p = rows
        .iter()
        .find(|r| r["session_id"] == parent.id())
        .expect("parent listed");
    assert_eq!(p["subagent_count"], 0);
    assert_eq!(p["turn_count"], 3);
    let f = rows
        .iter()
        .find(|r| r["session_id"] == child.id())
        .unwrap_or_else(|| panic!("fork listed: {rows:?}"));
    assert_eq!(f["turn_count"], 1);
    assert_eq!(f["summary"], "child-only follow-up about the gnu parser");
    assert_eq!(c.read_turn(&child.id(), 0)["assistant_text"], "gnu answer");
}

#[test]
fn forks_of_forks_subagents_and_missing_origins() {
    let root = SourceRoot::new("cs-codex-");
    let mut a = CodexRollout::new(root.path(), &codex_id(), "/w/forks", None);
    a.user_turn("grandparent asks about the quagga")
        .assistant("quagga");
    let mut b = CodexRollout::fork(root.path(), &codex_id(), &a, "/w/forks");
    b.user_turn("middle fork asks about the serval")
        .assistant("serval");
    let mut c3 = CodexRollout::fork(root.path(), &codex_id(), &b, "/w/forks");
    c3.user_turn("grandchild asks about the caracal")
        .assistant("caracal");
    // a sub-agent spawned with its parent's context: linked, not listed, replay stripped
    let mut sub = CodexRollout::spawned(root.path(), &codex_id(), &a, "explorer");
    sub.user_turn("sub-agent task about the fossa")
        .function_call(
            "shell",
            json!({"command": ["bash", "-lc", "rg fossa"]}),
            "x",
        )
        .assistant("fossa found");
    // a copy that does not repeat the origin's `session_meta` is recognised too
    let bare_id = codex_id();
    let mut bare = CodexRollout::empty(
        root.path().join(format!(
            "2026/05/01/rollout-2026-05-01T12-00-00-{bare_id}.jsonl"
        )),
        &bare_id,
    );
    bare.session_meta(&bare_id, "/w/forks", None, Some(&a.session_id));
    let mut without_meta = a.lines.clone();
    without_meta.remove(0);
    for line in without_meta {
        let v: Value = serde_json::from_str(&line).unwrap();
        bare.raw(&v);
    }
    bare.user_turn("bare fork asks about the zorro");
    // a fork whose origin is not on disk keeps what it replayed (nothing to fold it into)
    let elsewhere = SourceRoot::new("cs-codex-gone-");
    let mut gone = CodexRollout::new(elsewhere.path(), &codex_id(), "/w/gone", None);
    gone.user_turn("vanished origin asked about the dhole")
        .assistant("dhole");
    let mut orphan = CodexRollout::fork(root.path(), &codex_id(), &gone, "/w/gone");
    orphan.user_turn("orphan's own question about the genet");
    drop(elsewhere);

    let c = serve_sources(&[root.arg("codex")], &[]);
    assert_eq!(c.user_texts(&b.id()), ["middle fork asks about the serval"]);
    assert_eq!(
        c.user_texts(&c3.id()),
        ["grandchild asks about the caracal"]
    );
    assert_eq!(c.hits("quagga"), [(a.id(), 0)]);
    assert_eq!(c.user_texts(&bare.id()), ["bare fork asks about the zorro"]);
    assert_eq!(c.hits("serval"), [(b.id(), 0)]);
    assert_eq!(c.user_texts(&sub.id()), ["sub-agent task about the fossa"]);
    let fossa = c.search("fossa");
    assert_eq!(fossa["results"][0]["session_id"], sub.id());
    assert_eq!(fossa["results"][0]["parent_session_id"], a.id());
    let t = c.read_turn(&sub.id(), 0);
    assert_eq!(t["tools_used"][0]["command"], "rg fossa");
    let listed = c.list(json!({}));
    let row = listed["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == a.id())
        .cloned()
        .expect("origin listed");
    assert_eq!(row["subagent_count"], 1, "{row}");
    assert!(
        !listed
            .to_string()
            .contains(&format!("\"session_id\":\"{}\"", sub.id())),
        "sub-agents are not listed as sessions: {listed}"
    );
    assert_eq!(
        c.user_texts(&orphan.id()),
        [
            "vanished origin asked about the dhole",
            "orphan's own question about the genet"
        ]
    );
    assert_eq!(c.hits("dhole"), [(orphan.id(), 0)]);
}

#[test]
fn live_fork_indexes_only_its_own_turns() {
    let root = SourceRoot::new("cs-codex-");
    let mut parent = CodexRollout::new(root.path(), &codex_id(), "/w/live", None);
    parent
        .user_turn("parent prompt about the binturong")
        .assistant("ok");
    let c = serve_sources(&[root.arg("codex")], &["--debounce-ms", "100"]);
    let mut child = CodexRollout::fork(root.path(), &codex_id(), &parent, "/w/live");
    child
        .user_turn("fork prompt about the kinkajou")
        .assistant("ok");
    poll_until_desc("fork indexed", Duration::from_secs(15), || {
        (total(&c, "kinkajou") == 1).then_some(())
    });
    child.user_turn("second fork prompt about the olingo");
    poll_until_desc("fork append indexed", Duration::from_secs(15), || {
        (total(&c, "olingo") == 1).then_some(())
    });
    assert_eq!(
        c.user_texts(&child.id()),
        [
            "fork prompt about the kinkajou",
            "second fork prompt about the olingo"
        ]
    );
    assert_eq!(c.hits("binturong"), [(parent.id(), 0)]);
}

#[test]
fn encrypted_reasoning_is_never_indexed() {
    let root = SourceRoot::new("cs-codex-");
    let mut r = CodexRollout::new(root.path(), &codex_id(), "/w/enc", None);
    r.user_turn("why is the civet slow")
        .encrypted_reasoning("rawreasoningwordupsilon", "gAAAAencryptedwordphi")
        .reasoning("summarywordchi")
        .assistant("Because of the lock.");
    let c = serve_sources(&[root.arg("codex")], &[]);
    assert_eq!(c.hits("civet"), [(r.id(), 0)]);
    for word in [
        "rawreasoningwordupsilon",
        "gAAAAencryptedwordphi",
        "encryptedwordphi",
        "summarywordchi",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let t = c.read_turn(&r.id(), 0);
    assert_eq!(t["assistant_text"], "Because of the lock.");
    assert!(!t.to_string().contains("encryptedwordphi"), "{t}");
}

#[test]
fn resumed_and_flat_rollouts() {
    let root = SourceRoot::new("cs-codex-");
    // old flat layout, resumed: two session_meta lines make one conversation
    let id = codex_id();
    let path = root
        .path()
        .join(format!("rollout-2025-09-01T08-00-00-{id}.jsonl"));
    let mut r = CodexRollout::empty(path, &id);
    r.session_meta(&id, "/w/flat", Some("main"), None)
        .user_turn("before resume about ibis")
        .assistant("ok")
        .session_meta(&id, "/w/flat", Some("main"), None)
        .user_turn("after resume about ibis");
    common::formats::append_line(&r.path, "{ not json");
    common::formats::append_line(
        &r.path,
        r#"{"timestamp":"2026-01-01T00:00:00Z","type":"world_state","payload":{"full":true}}"#,
    );
    // ≤0.2x: bare session meta, bare response items and state lines, no envelopes
    let lid = "0196a8b4-1111-4222-8333-444455556666";
    let legacy = root
        .path()
        .join(format!("rollout-2025-05-07T17-24-21-{lid}.jsonl"));
    for line in [
        json!({"id": lid, "timestamp": "2025-05-07T17:24:21.123Z", "instructions": null}),
        json!({"record_type": "state"}),
        json!({"type": "message", "id": null, "role": "user", "content": [{"type": "input_text", "text": "legacy prompt about the civet"}]}),
        json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\",\"-la\"]}", "call_id": "c1"}),
        json!({"type": "function_call_output", "call_id": "c1", "output": "{\"output\":\"legacyoutputword\"}"}),
        json!({"type": "message", "id": null, "role": "assistant", "content": [{"type": "output_text", "text": "civet reply"}]}),
    ] {
        common::formats::append_line(&legacy, &line.to_string());
    }
    let c = serve_sources(&[root.arg("codex")], &[]);
    let lt = c.read_turn(&format!("codex:{lid}"), 0);
    assert_eq!(
        (lt["user_text"].as_str(), lt["assistant_text"].as_str()),
        (Some("legacy prompt about the civet"), Some("civet reply"))
    );
    assert_eq!(lt["tools_used"][0]["command"], "ls -la");
    assert_eq!(total(&c, "legacyoutputword"), 0);
    assert_eq!(
        c.user_texts(&r.id()),
        ["before resume about ibis", "after resume about ibis"]
    );
    let src = &c.index_status()["sources"][0];
    assert_eq!(
        (src["files"].as_u64(), src["sessions"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(src["skipped_lines"], 1, "{src}");
}

/// Rows of `list_conversations` whose id is `id`.
fn listed(c: &common::mcp::McpClient, id: &str) -> usize {
    c.list(json!({"limit": 100}))["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .filter(|r| r["session_id"] == id)
        .count()
}

#[test]
fn archived_sessions_are_read_and_archiving_keeps_the_session() {
    let home = SourceRoot::new("cs-codex-home-");
    let sessions = home.path().join(".codex/sessions");
    let archived = home.path().join(".codex/archived_sessions");
    std::fs::create_dir_all(&archived).unwrap();
    let mut live = CodexRollout::new(&sessions, &codex_id(), "/w/arch", None);
    live.user_turn("active thread about the numbat")
        .assistant("numbat");
    let old = codex_id();
    let mut done = CodexRollout::empty(
        archived.join(format!("rollout-2026-04-01T09-00-00-{old}.jsonl")),
        &old,
    );
    done.session_meta(&old, "/w/arch", None, None)
        .user_turn("archived thread about the quoll")
        .assistant("quoll");
    let home_str = home.path().to_str().unwrap();
    let c = common::mcp::McpClient::spawn(
        &["--source", "codex", "--debounce-ms", "100"],
        &[("HOME", home_str)],
    );
    c.initialize();
    c.wait_ready();
    assert_eq!(c.hits("quoll"), [(done.id(), 0)]);
    assert_eq!(c.hits("numbat"), [(live.id(), 0)]);
    let st = c.index_status();
    let dirs: Vec<&str> = st["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(dirs.len(), 2, "{st}");
    assert!(dirs[1].ends_with("archived_sessions"), "{st}");

    // Codex archives a thread by moving its rollout: same file name, same thread id
    let moved = archived.join(live.path.file_name().unwrap());
    std::fs::rename(&live.path, &moved).unwrap();
    poll_until_desc("the move applied", Duration::from_secs(15), || {
        let st = c.index_status();
        let in_archive = st["sources"][1]["files"].as_u64() == Some(2);
        (in_archive && st["pending_changes"] == 0).then_some(())
    });
    assert_eq!(listed(&c, &live.id()), 1);
    assert_eq!(c.hits("numbat"), [(live.id(), 0)]);
    assert_eq!(c.read_turn(&live.id(), 0)["assistant_text"], "numbat");
    let st = c.index_status();
    assert_eq!(st["sessions"], 2, "{st}");
    assert!(
        !c.list(json!({})).to_string().contains('@'),
        "no id was suffixed"
    );
}

#[test]
fn source_auto_indexes_every_agent_whose_default_location_exists() {
    let home = SourceRoot::new("cs-auto-home-");
    let h = home.path();
    let sid = common::ids::new_uuid();
    let claude = h.join(format!(".claude/projects/-w-auto/{sid}.jsonl"));
    for (i, (kind, message)) in [
        ("user", json!({"role": "user", "content": "claude asks about the auto wallaby"})),
        ("assistant", json!({"role": "assistant", "id": "msg_auto", "content": [{"type": "text", "text": "ok"}]})),
    ]
    .into_iter()
    .enumerate()
    {
        let line = json!({"type": kind, "uuid": format!("{sid}-{i}"), "sessionId": sid,
            "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/w/auto", "message": message});
        common::formats::append_line(&claude, &line.to_string());
    }
    let mut r = CodexRollout::new(&h.join(".codex/sessions"), &codex_id(), "/w/auto", None);
    r.user_turn("codex asks about the auto wallaby");
    let mut q = common::qwen::QwenChat::new(
        &h.join(".qwen"),
        "-w-auto",
        &common::ids::new_uuid(),
        "/w/auto",
    );
    q.user("qwen asks about the auto wallaby");
    let mut d = common::droid::DroidSession::new(
        &h.join(".factory/sessions"),
        &common::ids::new_uuid(),
        "/w/auto",
        "Auto",
    );
    d.user("droid asks about the auto wallaby");
    let mut a = common::amp::AmpThread::new(
        &h.join(".local/share/amp/threads"),
        "Auto",
        "/w/auto",
        "main",
    );
    a.user("amp asks about the auto wallaby").save();
    let mut g = common::formats::GeminiChat::new(
        &h.join(".gemini/tmp"),
        "proj",
        "7a7a7a7a-0000-4000-8000-00000000aaaa",
    );
    g.user("u1", "gemini asks about the auto wallaby");
    // an aider history has no default location: given as well
    let repo = SourceRoot::new("cs-auto-aider-");
    let mut ah = common::aider::AiderHistory::new(repo.path());
    ah.session("2026-05-01 10:00:00")
        .prompt("aider asks about the auto wallaby");
    let data = h.join(".local/share");
    let envs = [
        ("HOME", h.to_str().unwrap()),
        ("XDG_DATA_HOME", data.to_str().unwrap()),
    ];
    let aider = repo.arg("aider");
    let c = common::mcp::McpClient::spawn(&["--source", "auto", "--source", &aider], &envs);
    c.initialize();
    c.wait_ready();
    let mut found: Vec<String> =
        c.search_with(json!({"query": "auto wallaby", "limit": 50}))["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["source"].as_str().unwrap().to_string())
            .collect();
    found.sort();
    assert_eq!(
        found,
        ["aider", "amp", "claude", "codex", "droid", "gemini", "qwen"]
    );
    let st = c.index_status();
    let sources: Vec<(String, bool, u64)> = st["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let name = s["source"].as_str().unwrap().to_string();
            (
                name,
                s["exists"].as_bool().unwrap(),
                s["sessions"].as_u64().unwrap(),
            )
        })
        .collect();
    let names: Vec<&str> = sources.iter().map(|s| s.0.as_str()).collect();
    // only existing default locations (no OpenClaw, OpenCode or archived Codex sessions here)
    assert_eq!(
        names,
        ["claude", "codex", "gemini", "qwen", "droid", "amp", "aider"],
        "{st}"
    );
    assert!(sources.iter().all(|s| s.1 && s.2 == 1), "{st}");
    assert!(st["warnings"].as_array().unwrap().is_empty(), "{st}");
}

#[test]
fn a_missing_source_directory_is_reported() {
    let root = SourceRoot::new("cs-codex-");
    let missing = root.path().join("not-yet");
    let arg = format!("codex:{}", missing.display());
    let c = serve_sources(&[arg], &[]);
    let st = c.index_status();
    let s = &st["sources"][0];
    assert_eq!(s["exists"], false, "{st}");
    assert!(
        s["warning"].as_str().unwrap().contains("does not exist"),
        "{st}"
    );
    assert_eq!(st["warnings"].as_array().unwrap().len(), 1, "{st}");
    let mut r = CodexRollout::new(&missing, &codex_id(), "/w/late", None);
    r.user_turn("late arrival about the mara");
    poll_until_desc("the directory appears", Duration::from_secs(15), || {
        let st = c.index_status();
        (st["sources"][0]["exists"] == true && total(&c, "mara") == 1).then_some(())
    });
    assert!(c.index_status()["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn live_append_is_searchable() {
    let root = SourceRoot::new("cs-codex-");
    let mut r = CodexRollout::new(root.path(), &codex_id(), "/w/live", None);
    r.user_turn("start").assistant("ok");
    let c = serve_sources(&[root.arg("codex")], &["--debounce-ms", "200"]);
    r.user_turn("later question about the kinkajoulive")
        .assistant("answer");
    poll_until_desc("appended turn searchable", Duration::from_secs(15), || {
        (total(&c, "kinkajoulive") == 1).then_some(())
    });
    assert_eq!(c.hits("kinkajoulive"), [(r.id(), 1)]);
    // a rollout in a new day directory is discovered
    let mut n = CodexRollout::empty(
        root.path().join(format!(
            "2026/06/07/rollout-2026-06-07T01-02-03-{}.jsonl",
            "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001"
        )),
        "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001",
    );
    n.session_meta("0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001", "/w/new", None, None)
        .user_turn("new day margaylive");
    poll_until_desc("new rollout searchable", Duration::from_secs(15), || {
        (total(&c, "margaylive") == 1).then_some(())
    });
}

#[test]
fn real_sample() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let src = samples.join("codex/agent-sessions-codex-small.jsonl");
    if !src.is_file() {
        skip("../shared/samples/codex/agent-sessions-codex-small.jsonl not found");
        return;
    }
    let root = SourceRoot::new("cs-codex-");
    let id = "019fc8be-3658-7ca3-9e29-000000000000";
    let dest = root
        .path()
        .join(format!("2026/08/03/rollout-2026-08-03T10-48-56-{id}.jsonl"));
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(&dest, std::fs::read(&src).unwrap()).unwrap();
    let c = serve_sources(&[root.arg("codex")], &[]);
    let cid = format!("codex:{id}");
    let row = &c.list(json!({}))["conversations"][0];
    assert_eq!(row["session_id"], cid);
    assert_eq!(
        (row["cwd"].as_str(), row["git_branch"].as_str()),
        (Some("/tmp/repo"), Some("main"))
    );
    // the first prompt arrives as event_msg and response_item: one turn, one reply
    let t = c.read_turn(&cid, 0);
    assert_eq!(t["user_text"], "List the files");
    assert_eq!(t["assistant_text"], "Found 2 files.");
    assert!(row["turn_count"].as_u64().unwrap() >= 1);
    // "b.txt" is only in a tool output, "example.invalid" only in metadata and output events
    for word in ["b.txt", "example.invalid"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let status = c.index_status();
    assert_eq!(status["sources"][0]["skipped_lines"], 0, "{status}");
}
