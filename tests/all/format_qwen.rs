//! Qwen Code chats through the binary: typed prompts vs injected and system records, replies,
//! tool rendering, never-indexed thoughts, tool results and telemetry, titles, cwd and branch,
//! rewinds, sidechain sub-agents, the archive and older `tmp` layouts, live appends, chunked
//! delivery, file history across agents, and the samples.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::amp::{AmpThread, a_text, a_tool};
use crate::common::chunks;
use crate::common::droid::{DroidSession, d_text, d_tool};
use crate::common::formats::{CodexRollout, SourceRoot, codex_id, serve_sources};
use crate::common::ids::new_uuid;
use crate::common::qwen::{QwenChat, q_call};
use crate::common::{poll_until_desc, samples_or_skip};
use proptest::prelude::*;
use serde_json::{Value, json};

fn total(c: &common::mcp::McpClient, q: &str) -> u64 {
    c.search_with(json!({"query": q, "limit": 100}))["total"]
        .as_u64()
        .expect("total")
}

fn tool<'a>(turn: &'a Value, name: &str) -> &'a Value {
    let all = turn["tools_used"].as_array().expect("tools_used");
    all.iter()
        .find(|t| t["tool"] == name)
        .unwrap_or_else(|| panic!("no {name} in {turn}"))
}

#[test]
fn prompts_replies_tools_and_metadata() {
    let root = SourceRoot::new("cs-qwen-");
    let mut q = QwenChat::new(
        root.path(),
        "-home-u-qwenproj",
        &new_uuid(),
        "/home/u/qwenproj",
    );
    q.user_shown(
        "explain the pangolin cache\n--- Content from referenced files ---\nrefwordalpha",
        "explain the pangolin cache",
    )
    .system("attribution_snapshot", json!({"snapshot": {"promptCount": 1}}))
    .telemetry("telemetrywordbeta")
    .thought("thoughtwordgamma")
    .assistant(
        "The pangolin cache is an LRU.",
        vec![
            q_call("read_file", json!({"absolute_path": "/home/u/qwenproj/src/cache.rs"})),
            q_call("run_shell_command", json!({"command": "cargo test pangolin", "description": "tests"})),
            q_call("write_file", json!({"file_path": "/home/u/qwenproj/NOTES.md", "content": "abcd"})),
            q_call("replace", json!({"file_path": "/home/u/qwenproj/src/lib.rs", "old_string": "a", "new_string": "b"})),
            q_call("grep_search", json!({"pattern": "fn evict"})),
            q_call("glob", json!({"pattern": "src/**/*.rs"})),
            q_call("web_fetch", json!({"url": "https://example.test/lru"})),
            q_call("task", json!({"subagent_type": "general-purpose", "description": "look around"})),
        ],
    )
    .tool_result("run_shell_command", "toolresultworddelta")
    .user_subtype("notification", "notificationwordepsilon")
    .user_subtype("slash_command", "/compress slashwordzeta")
    .user_provenance("system", "systemwordeta")
    .title("Pangolin auto title", false)
    .set_branch(Some("feature-q"))
    .user("and the armadillo eviction?")
    .assistant("Armadillo evicts oldest first.", vec![])
    .user_subtype("mid_turn_user_message", "also check the aardvark path")
    .assistant("Checked.", vec![]);
    let c = serve_sources(&[root.arg("qwen")], &[]);
    let id = q.id();
    assert_eq!(
        c.user_texts(&id),
        [
            "explain the pangolin cache",
            "and the armadillo eviction?",
            "also check the aardvark path"
        ]
    );
    let t0 = c.read_turn(&id, 0);
    assert_eq!(t0["assistant_text"], "The pangolin cache is an LRU.");
    assert_eq!(
        tool(&t0, "read_file")["file"],
        "/home/u/qwenproj/src/cache.rs"
    );
    assert_eq!(
        tool(&t0, "run_shell_command")["command"],
        "cargo test pangolin"
    );
    assert_eq!(tool(&t0, "write_file")["chars"], 4);
    assert_eq!(tool(&t0, "replace")["file"], "/home/u/qwenproj/src/lib.rs");
    assert_eq!(tool(&t0, "grep_search")["pattern"], "fn evict");
    assert_eq!(tool(&t0, "glob")["pattern"], "src/**/*.rs");
    assert_eq!(tool(&t0, "web_fetch")["url"], "https://example.test/lru");
    assert_eq!(tool(&t0, "task")["type"], "general-purpose");
    for word in [
        "refwordalpha",
        "telemetrywordbeta",
        "thoughtwordgamma",
        "toolresultworddelta",
        "notificationwordepsilon",
        "slashwordzeta",
        "systemwordeta",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let found = c.search_with(json!({"query": "pangolin", "tool": "run_shell_command"}));
    assert_eq!(found["results"][0]["session_id"], id, "{found}");
    let row = &c.list(json!({"source": "qwen"}))["conversations"][0];
    assert_eq!(row["session_id"], id);
    assert_eq!(row["summary"], "Pangolin auto title");
    assert_eq!(row["cwd"], "/home/u/qwenproj");
    assert_eq!(row["project"], "qwenproj");
    assert_eq!(row["git_branch"], "feature-q");
    assert_eq!(row["turn_count"], 3);
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:01.000Z");
}

#[test]
fn rewinds_titles_sidechains_and_layouts() {
    let root = SourceRoot::new("cs-qwen-");
    let mut q = QwenChat::new(root.path(), "-w-rew", &new_uuid(), "/w/rew");
    q.user("start the okapi refactor");
    let first = q.last_uuid();
    q.assistant("abandonedwordtheta answer", vec![])
        .title("Abandoned title", true)
        .rewind_to(&first)
        .set_cwd("/w/rew2")
        .assistant("kept okapi answer", vec![])
        .sidechain("bg-1", "user", "background task about the zorilla")
        .sidechain("bg-1", "assistant", "zorilla report")
        .title("Kept manual title", true)
        .system(
            "session_artifact_snapshot",
            json!({"summary": "artifactwordiota"}),
        );
    // archived and older tmp-layout chats
    let archived = new_uuid();
    let mut a = QwenChat::at(
        root.path()
            .join(format!("projects/-w-arch/chats/archive/{archived}.jsonl")),
        &archived,
        "/w/arch",
    );
    a.user("archived chat about the jerboa");
    let old = new_uuid();
    let mut t = QwenChat::at(
        root.path().join(format!("tmp/0b7dfb12/chats/{old}.jsonl")),
        &old,
        "/w/old",
    );
    t.user("tmp chat about the kiwi");
    let c = serve_sources(&[root.arg("qwen")], &[]);
    let id = q.id();
    assert_eq!(total(&c, "abandonedwordtheta"), 0);
    assert_eq!(total(&c, "artifactwordiota"), 0);
    assert_eq!(c.read_turn(&id, 0)["assistant_text"], "kept okapi answer");
    let rows = c.list(json!({}));
    let row = rows["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == id)
        .cloned()
        .expect("listed");
    assert_eq!(row["summary"], "Kept manual title");
    assert_eq!(row["cwd"], "/w/rew2");
    assert_eq!(row["subagent_count"], 1, "{row}");
    let z = c.search("zorilla");
    assert_eq!(z["results"][0]["session_id"], format!("{id}/bg-1"), "{z}");
    assert_eq!(z["results"][0]["parent_session_id"], id, "{z}");
    assert_eq!(c.hits("jerboa"), [(a.id(), 0)]);
    assert_eq!(c.hits("kiwi"), [(t.id(), 0)]);
    assert_eq!(c.index_status()["sources"][0]["files"], 3);
}

#[test]
fn live_append_and_a_new_chat() {
    let root = SourceRoot::new("cs-qwen-");
    let mut q = QwenChat::new(root.path(), "-w-live", &new_uuid(), "/w/live");
    q.user("first").assistant("ok", vec![]);
    let c = serve_sources(&[root.arg("qwen")], &["--debounce-ms", "100"]);
    q.user("later about the quetzal")
        .assistant("quetzal", vec![]);
    poll_until_desc("appended turn", Duration::from_secs(15), || {
        (c.hits("quetzal") == [(q.id(), 1)]).then_some(())
    });
    let mut n = QwenChat::new(root.path(), "-w-new", &new_uuid(), "/w/new");
    n.user("brand new chat about the tenrec");
    poll_until_desc("new chat", Duration::from_secs(15), || {
        (c.hits("tenrec") == [(n.id(), 0)]).then_some(())
    });
}

/// Reads, writes, edits and commands of several agents on one file, in one history.
#[test]
fn file_history_across_agents() {
    let file = "/w/shared/src/engine.rs";
    let qroot = SourceRoot::new("cs-qwen-");
    let mut q = QwenChat::new(qroot.path(), "-w-shared", &new_uuid(), "/w/shared");
    q.user("qwen reads the engine").assistant(
        "read",
        vec![q_call("read_file", json!({"absolute_path": file}))],
    );
    let droot = SourceRoot::new("cs-droid-");
    let mut d = DroidSession::new(droot.path(), &new_uuid(), "/w/shared", "Engine");
    d.user("droid edits the engine").assistant(vec![
        d_text("editing"),
        d_tool(
            "Edit",
            json!({"file_path": file, "old_str": "a", "new_str": "b"}),
        ),
    ]);
    let aroot = SourceRoot::new("cs-amp-");
    let mut a = AmpThread::new(aroot.path(), "Engine", "/w/shared", "main");
    a.user("amp writes the engine")
        .assistant(vec![
            a_text("writing"),
            a_tool("create_file", json!({"path": file, "content": "x"})),
        ])
        .save();
    let croot = SourceRoot::new("cs-codex-");
    let mut r = CodexRollout::new(croot.path(), &codex_id(), "/w/shared", None);
    r.user_turn("codex patches the engine").custom_tool_call(
        "apply_patch",
        &format!("*** Begin Patch\n*** Update File: {file}\n@@\n-a\n+b\n*** End Patch\n"),
        "ok",
    );
    let c = serve_sources(
        &[
            qroot.arg("qwen"),
            droot.arg("droid"),
            aroot.arg("amp"),
            croot.arg("codex"),
        ],
        &[],
    );
    let h = c.ok("find_file_history", json!({"path": "src/engine.rs"}));
    let mut got: Vec<(String, String)> = h["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|x| {
            (
                x["source"].as_str().unwrap().to_string(),
                x["operation"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let want: Vec<(String, String)> = [
        ("amp", "write"),
        ("codex", "edit"),
        ("droid", "edit"),
        ("qwen", "read"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want, "{h}");
    let edited = c.search_with(json!({"query": "engine", "file": "src/engine.rs", "limit": 20}));
    assert_eq!(edited["total"], 4, "{edited}");
}

#[test]
fn samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let capture = samples.join("qwen-code/local-capture-0.24.4/.qwen");
    let rewound =
        samples.join("qwen-code/agent-sessions/019f0000-0000-7000-8000-000000000004.jsonl");
    if !capture.is_dir() || !rewound.is_file() {
        crate::common::skip("qwen samples: files missing");
        return;
    }
    let copy = SourceRoot::new("cs-qwen-sample-");
    let dest = copy
        .path()
        .join("projects/-tmp-as-qwen-fixture/chats")
        .join(rewound.file_name().unwrap());
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::copy(&rewound, &dest).unwrap();
    let c = serve_sources(
        &[format!("qwen:{}", capture.display()), copy.arg("qwen")],
        &[],
    );
    let cid = "qwen:299083de-ef8b-4a40-847d-482348223259";
    assert_eq!(
        c.user_texts(cid),
        ["List the files here", "Now run ls again please"]
    );
    let t = c.read_turn(cid, 0);
    assert_eq!(
        t["assistant_text"],
        "I'll list the files first.\n\nThe directory contains hello.txt."
    );
    assert_eq!(tool(&t, "run_shell_command")["command"], "ls");
    // `hello.txt` appears only in the tool result and in telemetry
    assert_eq!(total(&c, "Exit Code"), 0);
    let rows = c.list(json!({}));
    let row = rows["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == cid)
        .cloned()
        .expect("capture listed");
    assert_eq!(
        (row["cwd"].as_str(), row["git_branch"].as_str()),
        (Some("/tmp/qcap/proj"), Some("main"))
    );
    let rid = "qwen:019f0000-0000-7000-8000-000000000004";
    assert_eq!(
        c.user_texts(rid),
        [
            "Begin the active-chain fixture.",
            "Continue from the rewound branch."
        ]
    );
    assert_eq!(total(&c, "Discarded"), 0);
    assert_eq!(
        c.read_turn(rid, 1)["assistant_text"],
        "Active branch answer."
    );
    let st = c.index_status();
    assert_eq!(st["skipped_lines"], 0, "{st}");
}

/// One chat rendered whole: turns of a prompt, a thought, a reply with a tool call, a result.
fn render(specs: &[(String, String, bool)]) -> Vec<u8> {
    let scratch = SourceRoot::new("cs-qwen-render-");
    let mut q = QwenChat::at(
        scratch.path().join("c.jsonl"),
        "qwen-chunk-0001",
        "/w/chunks",
    );
    q.title("chunked chat", true);
    for (prompt, reply, tool) in specs {
        q.user(prompt).thought("pondering");
        let calls = match tool {
            true => vec![q_call(
                "read_file",
                json!({"absolute_path": format!("/w/{prompt}.rs")}),
            )],
            false => vec![],
        };
        q.assistant(reply, calls).tool_result("read_file", "output");
    }
    std::fs::read(&q.path).expect("rendered")
}

fn spec() -> impl Strategy<Value = (String, String, bool)> {
    let word = prop::sample::select(vec!["café", "naïve", "größe", "ωmega", "日本語", "kestrel"]);
    (word.clone(), word, any::<bool>()).prop_map(|(p, r, t)| (p.to_string(), r.to_string(), t))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, max_shrink_iters: 8, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn chunked_delivery_equals_the_whole_file(
        specs in prop::collection::vec(spec(), 1..4),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..6),
    ) {
        let whole = render(&specs);
        let root = SourceRoot::new("cs-qwen-chunks-");
        let cuts = chunks::cut_points(whole.len(), &picks);
        let rel = Path::new("projects/-w-chunks/chats/qwen-chunk-0001.jsonl");
        let seen = chunks::check("qwen", root.path(), rel, &whole, &cuts, true);
        prop_assert_eq!(seen.len(), 1);
        prop_assert_eq!(seen[0].2.len(), specs.len());
    }
}
