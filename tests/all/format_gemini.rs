//! Gemini CLI chats through the binary: messages, tool rendering, never-indexed thoughts,
//! results and notices, last-write-wins records, `$set` and `$rewindTo`, project naming,
//! sub-agent chats, legacy `.json` files, live rewrites and the real samples.

use crate::common;

use std::time::Duration;

use crate::common::formats::{GeminiChat, SourceRoot, gm_tool, serve_sources};
use crate::common::search::{tool_used, total};
use crate::common::{poll_until_desc, samples_or_skip, skip};
use serde_json::{Value, json};

#[test]
fn messages_tools_and_metadata() {
    let root = SourceRoot::new("cs-gemini-");
    GeminiChat::project_root(root.path(), "gemslug", "/home/u/gemroot");
    let mut g = GeminiChat::new(
        root.path(),
        "gemslug",
        "5d1f0a2e-1111-4222-8333-944455556666",
    );
    g.user("u1", "explain the narwhal allocator")
        .message("i1", "info", json!({"content": "Model switched infowordalpha"}))
        .gemini(
            "g1",
            "The narwhal allocator uses arenas.",
            vec![
                gm_tool("read_file", json!({"file_path": "/home/u/gemroot/src/alloc.rs"}), "resultwordbeta"),
                gm_tool("run_shell_command", json!({"command": "cargo bench narwhal", "description": "bench"}), "resultwordgamma"),
                gm_tool("replace", json!({"file_path": "/home/u/gemroot/src/lib.rs", "old_string": "a", "new_string": "b"}), "ok"),
                gm_tool("write_file", json!({"file_path": "/home/u/gemroot/NOTES.md", "content": "four"}), "ok"),
                gm_tool("glob", json!({"pattern": "src/**/*.rs"}), "resultworddelta"),
                gm_tool("search_file_content", json!({"pattern": "fn alloc"}), "ok"),
                gm_tool("google_web_search", json!({"query": "arena allocator rust"}), "ok"),
                gm_tool("web_fetch", json!({"prompt": "summarise https://example.test/arenas"}), "ok"),
                gm_tool("read_many_files", json!({"paths": ["/a/x.rs", "/a/y.rs"]}), "ok"),
            ],
            &["thoughtwordepsilon"],
        )
        .message("e1", "error", json!({"content": "Quota exceeded errorwordzeta"}))
        .set(json!({"summary": "Narwhal allocator deep dive", "lastUpdated": "2026-05-01T11:00:00.000Z"}))
        .user("u2", "and the walrus free list?")
        .gemini("g2", "Walrus free list explained.", vec![], &[]);
    let c = serve_sources(&[root.arg("gemini")], &[]);
    let id = g.id();
    assert_eq!(id, "gemini:5d1f0a2e-1111-4222-8333-944455556666");

    let r = c.search("narwhal");
    let hit = &r["results"][0];
    assert_eq!(
        (hit["session_id"].as_str(), hit["source"].as_str()),
        (Some(id.as_str()), Some("gemini"))
    );
    assert_eq!(hit["project"], "gemroot");
    let t = c.read_turn(&id, 0);
    assert_eq!(t["user_text"], "explain the narwhal allocator");
    assert_eq!(t["assistant_text"], "The narwhal allocator uses arenas.");
    assert_eq!(
        tool_used(&t, "read_file")["file"],
        "/home/u/gemroot/src/alloc.rs"
    );
    assert_eq!(
        tool_used(&t, "run_shell_command")["command"],
        "cargo bench narwhal"
    );
    assert_eq!(
        tool_used(&t, "replace")["file"],
        "/home/u/gemroot/src/lib.rs"
    );
    assert_eq!(
        (
            tool_used(&t, "write_file")["file"].as_str(),
            tool_used(&t, "write_file")["chars"].as_u64()
        ),
        (Some("/home/u/gemroot/NOTES.md"), Some(4))
    );
    assert_eq!(tool_used(&t, "glob")["pattern"], "src/**/*.rs");
    assert_eq!(tool_used(&t, "search_file_content")["pattern"], "fn alloc");
    assert_eq!(
        tool_used(&t, "google_web_search")["query"],
        "arena allocator rust"
    );
    assert_eq!(
        tool_used(&t, "web_fetch")["query"],
        "summarise https://example.test/arenas"
    );
    let many: Vec<&Value> = t["tools_used"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["tool"] == "read_many_files")
        .collect();
    assert_eq!((many.len(), many[1]["file"].as_str()), (2, Some("/a/y.rs")));

    for word in [
        "infowordalpha",
        "resultwordbeta",
        "resultwordgamma",
        "resultworddelta",
        "thoughtwordepsilon",
        "errorwordzeta",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let row = &c.list(json!({}))["conversations"][0];
    assert_eq!(row["summary"], "Narwhal allocator deep dive");
    assert_eq!(
        (row["cwd"].as_str(), row["project"].as_str()),
        (Some("/home/u/gemroot"), Some("gemroot"))
    );
    assert_eq!(row["turn_count"], 2);
    assert_eq!(row["last_timestamp"], "2026-05-01T11:00:00.000Z");
}

#[test]
fn last_write_wins_set_and_rewind() {
    let root = SourceRoot::new("cs-gemini-");
    let mut g = GeminiChat::new(root.path(), "lww", "aaaa1111-0000-4000-8000-000000000001");
    g.user("u1", "question about the dugong")
        .gemini("g1", "draftwordone", vec![], &[])
        .gemini("g1", "finalwordone", vec![], &[])
        .user("u2", "rewoundwordtwo prompt")
        .gemini("g2", "rewoundwordthree reply", vec![], &[])
        .rewind("u2")
        .user("u3", "kept prompt about the manatee");
    let mut h = GeminiChat::new(root.path(), "lww", "bbbb2222-0000-4000-8000-000000000002");
    h.user("x1", "oldhistoryword prompt")
        .gemini("x2", "old reply", vec![], &[])
        .set(json!({"messages": [
            {"id": "y1", "timestamp": "2026-05-01T12:00:00.000Z", "type": "user", "content": [{"text": "replacedhistoryword prompt"}]},
            {"id": "y2", "timestamp": "2026-05-01T12:00:01.000Z", "type": "gemini", "content": "replaced reply"}
        ]}))
        .user("y3", "after the set");
    common::formats::append_line(&h.path, "{ not json");
    h.record(&json!({"someFutureRecord": true}));
    let c = serve_sources(&[root.arg("gemini")], &[]);
    assert_eq!(total(&c, "draftwordone"), 0);
    assert_eq!(c.hits("finalwordone"), [(g.id(), 0)]);
    for word in ["rewoundwordtwo", "rewoundwordthree", "oldhistoryword"] {
        assert_eq!(total(&c, word), 0, "{word} must be gone");
    }
    assert_eq!(
        c.user_texts(&g.id()),
        ["question about the dugong", "kept prompt about the manatee"]
    );
    assert_eq!(
        c.user_texts(&h.id()),
        ["replacedhistoryword prompt", "after the set"]
    );
    // an unreadable record is counted, an unknown one ignored
    assert_eq!(c.index_status()["sources"][0]["skipped_lines"], 1);
}

#[test]
fn project_names_without_a_recorded_root() {
    let root = SourceRoot::new("cs-gemini-");
    // no marker: the project directory names the project
    let mut a = GeminiChat::new(
        root.path(),
        "quollslug",
        "cccc3333-0000-4000-8000-000000000003",
    );
    a.user("a1", "quoll prompt");
    // a registry next to tmp/ (`~/.gemini/projects.json`) maps the root to the slug
    let gemini_home = SourceRoot::new("cs-gemini-home-");
    let tmp = gemini_home.path().join("tmp");
    std::fs::write(
        gemini_home.path().join("projects.json"),
        json!({"projects": {"/home/u/numbat-root": "numbat"}}).to_string(),
    )
    .unwrap();
    let mut b = GeminiChat::new(&tmp, "numbat", "dddd4444-0000-4000-8000-000000000004");
    b.user("b1", "numbat prompt");
    let c = serve_sources(
        &[root.arg("gemini"), format!("gemini:{}", tmp.display())],
        &[],
    );
    let qa = &c.search("quoll")["results"][0];
    assert_eq!(
        (qa["session_id"].as_str(), qa["project"].as_str()),
        (Some(a.id().as_str()), Some("quollslug"))
    );
    let list = c.list(json!({"project": "numbat"}));
    let row = &list["conversations"][0];
    assert_eq!(
        (row["cwd"].as_str(), row["project"].as_str()),
        (Some("/home/u/numbat-root"), Some("numbat-root"))
    );
    assert_eq!(
        c.list(json!({"project": "quollslug"}))["conversations"][0]["cwd"],
        Value::Null
    );
}

#[test]
fn subagent_chats_and_legacy_json() {
    let root = SourceRoot::new("cs-gemini-");
    GeminiChat::project_root(root.path(), "p", "/w/gemsub");
    let parent_sid = "eeee5555-0000-4000-8000-000000000005";
    let mut p = GeminiChat::new(root.path(), "p", parent_sid);
    p.user("p1", "parent prompt about the pangolin");
    let mut s = GeminiChat::subagent(
        root.path(),
        "p",
        parent_sid,
        "ffff6666-0000-4000-8000-000000000006",
    );
    s.user("s1", "subagent task about the pangolin scales");
    // a legacy one-document chat, and one that was migrated to .jsonl (only the .jsonl counts)
    let chats = root.path().join("p/chats");
    let legacy = |sid: &str, text: &str| {
        json!({"sessionId": sid, "projectHash": "h", "startTime": "2025-12-16T23:47:00.000Z", "lastUpdated": "2025-12-16T23:48:00.000Z",
            "messages": [{"id": "m1", "timestamp": "2025-12-16T23:47:01.000Z", "type": "user", "content": text},
                         {"id": "m2", "timestamp": "2025-12-16T23:47:02.000Z", "type": "model", "parts": [{"text": "legacy reply"}]}]})
    };
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    std::fs::write(
        chats.join("session-2025-12-16T23-47-legacy01.json"),
        pretty(&legacy("legacy-one", "legacy solenodon prompt")),
    )
    .unwrap();
    std::fs::write(
        chats.join("session-2025-12-16T23-48-migrate1.json"),
        pretty(&legacy("migrated-one", "migrated tenrec prompt")),
    )
    .unwrap();
    let mut m = GeminiChat::new(root.path(), "p", "migrated-one");
    std::fs::rename(
        &m.path,
        chats.join("session-2025-12-16T23-48-migrate1.jsonl"),
    )
    .unwrap();
    m.path = chats.join("session-2025-12-16T23-48-migrate1.jsonl");
    m.user("m1", "migrated tenrec prompt");

    let c = serve_sources(&[root.arg("gemini")], &[]);
    let hit = &c.search("pangolin scales subagent")["results"][0];
    assert_eq!(hit["session_id"], s.id());
    assert_eq!(hit["parent_session_id"], p.id());
    let list = c.list(json!({}));
    let rows = list["conversations"].as_array().unwrap();
    let prow = rows
        .iter()
        .find(|r| r["session_id"] == p.id())
        .expect("parent listed");
    assert_eq!(prow["subagent_count"], 1);
    assert_eq!(c.hits("solenodon"), [("gemini:legacy-one".to_string(), 0)]);
    assert_eq!(
        c.read_turn("gemini:legacy-one", 0)["assistant_text"],
        "legacy reply"
    );
    assert_eq!(c.hits("tenrec").len(), 1);
    assert_eq!(c.index_status()["sources"][0]["files"], 4);
}

#[test]
fn live_rewrites_are_followed() {
    let root = SourceRoot::new("cs-gemini-");
    let mut g = GeminiChat::new(root.path(), "live", "abab7777-0000-4000-8000-000000000007");
    g.user("u1", "first prompt")
        .gemini("g1", "reply", vec![], &[]);
    let c = serve_sources(
        &[root.arg("gemini")],
        &["--debounce-ms", "200", "--no-archive"],
    );
    g.user("u2", "question about the axolotlive");
    poll_until_desc(
        "appended message searchable",
        Duration::from_secs(15),
        || (total(&c, "axolotlive") == 1).then_some(()),
    );
    g.rewind("u2").user("u3", "replacement about the olmlive");
    poll_until_desc(
        "rewound message gone, new one searchable",
        Duration::from_secs(15),
        || (total(&c, "axolotlive") == 0 && total(&c, "olmlive") == 1).then_some(()),
    );
    assert_eq!(
        c.user_texts(&g.id()),
        ["first prompt", "replacement about the olmlive"]
    );
    // the file rewritten from scratch (e.g. a legacy chat migrated in place)
    let header = json!({"sessionId": g.session_id, "projectHash": "h", "startTime": "2026-05-02T00:00:00.000Z"});
    let msg = json!({"id": "n1", "timestamp": "2026-05-02T00:00:01.000Z", "type": "user", "content": "rewritten about the tuataralive"});
    std::fs::write(&g.path, format!("{header}\n{msg}\n")).unwrap();
    poll_until_desc("rewritten file re-read", Duration::from_secs(15), || {
        (total(&c, "olmlive") == 0 && total(&c, "tuataralive") == 1).then_some(())
    });
    assert_eq!(c.read_conversation(&g.id())["total_turns"], 1);
}

#[test]
fn real_samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let jsonl = samples.join("gemini/agent-sessions-gemini-jsonl_v040.jsonl");
    let legacy = samples.join("gemini/agent-sessions-gemini-large.json");
    if !jsonl.is_file() || !legacy.is_file() {
        skip(
            "../shared/samples/gemini/agent-sessions-gemini-{jsonl_v040.jsonl,large.json} not found",
        );
        return;
    }
    let root = SourceRoot::new("cs-gemini-");
    let chats = root.path().join("0b7dfb1274ee51b3/chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::write(
        chats.join("session-2026-04-29T21-39-gemini_s.jsonl"),
        std::fs::read(&jsonl).unwrap(),
    )
    .unwrap();
    std::fs::write(
        chats.join("session-2025-12-16T23-47-b4f17607.json"),
        std::fs::read(&legacy).unwrap(),
    )
    .unwrap();
    let c = serve_sources(&[root.arg("gemini")], &[]);
    let t = c.read_turn("gemini:gemini_stage0_jsonl", 0);
    assert_eq!(t["user_text"], "Say hello and list files.");
    assert_eq!(t["assistant_text"], "Hello! I listed the files.");
    assert_eq!(tool_used(&t, "run_shell_command")["command"], "ls -F");
    let l = c.read_conversation("gemini:session-2025-12-16T23-47-b4f17607");
    assert_eq!(l["total_turns"], 2, "{l}");
    assert_eq!(l["project"], "0b7dfb1274ee51b3");
    // "AgentSessions"/"PGID" are only in tool results, "Placeholder" only in thoughts,
    // "cancelled" only in an info notice
    for word in ["AgentSessions", "PGID", "Placeholder", "cancelled"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    assert_eq!(c.index_status()["sources"][0]["skipped_lines"], 0);
}
