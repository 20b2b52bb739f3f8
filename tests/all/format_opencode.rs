//! OpenCode through the binary, read-only data: the database written by the real SQLite
//! (`fixtures/opencode`, rollback and WAL mode), the legacy storage tree (the shared sample and
//! generated trees), the mapping rules and sub-agents. Live updates: `format_opencode_live.rs`.

use crate::common::mcp::{hit_keys, hit_sessions};
use crate::common::opencode::{
    DataDir, copy_tree, legacy_tree, results, sample_storage_or_skip, source_status,
};
use crate::common::search::listed;
use serde_json::json;

#[test]
fn database_sessions_are_searchable_with_prefixed_ids() {
    let data = DataDir::with_fixture("data");
    let c = data.serve(&[]);
    let hits = results(&c, "quokka zanzibar");
    assert!(!hits.is_empty());
    assert_eq!(hits[0]["session_id"], "opencode:ses_alpha");
    assert_eq!(hits[0]["source"], "opencode");
    assert_eq!(hits[0]["turn_number"], 0);
    // assistant text, also when the text lives on overflow pages
    assert_eq!(
        hit_keys(&c.search("inspect")),
        vec![("opencode:ses_alpha".into(), 0)]
    );
    assert_eq!(
        hit_keys(&c.search("longtextnarwhalword")),
        vec![("opencode:ses_alpha".into(), 1)]
    );
    assert!(hits.iter().all(|h| h["source"] == "opencode"));
    let only = c.search_with(json!({"query": "zanzibar", "source": "opencode"}));
    assert!(!hit_sessions(&only).is_empty());
}

#[test]
fn outputs_reasoning_synthetic_and_ignored_text_are_never_indexed() {
    let data = DataDir::with_fixture("data");
    let c = data.serve(&[]);
    for word in [
        "outputplatypusword",
        "bashoutputwombatword",
        "metadataechidnaword",
        "errorkoalaword",
        "reasoningpelicanword",
        "synthetiqueword",
        "ignoredzebraword",
        "overflowoutputword",
        "syntheticcontinuationword",
    ] {
        assert!(
            hit_keys(&c.search(word)).is_empty(),
            "`{word}` must not be searchable"
        );
    }
    let turn = c.read_turn("opencode:ses_alpha", 0);
    assert_eq!(
        turn["user_text"],
        "Please refactor the zanzibar parser so it handles quokka tokens"
    );
    let all = turn.to_string();
    for word in [
        "synthetiqueword",
        "ignoredzebraword",
        "reasoningpelicanword",
        "outputplatypusword",
    ] {
        assert!(!all.contains(word), "{word} leaked into read_turn: {all}");
    }
}

#[test]
fn tool_calls_render_by_kind() {
    let data = DataDir::with_fixture("data");
    let c = data.serve(&[]);
    let turn = c.read_turn("opencode:ses_alpha", 0);
    let cwd = "/home/dev/alphaproj";
    assert_eq!(
        turn["tools_used"],
        json!([
            {"tool": "read", "file": format!("{cwd}/src/parser.rs")},
            {"tool": "bash", "command": "cargo test --quiet"},
            {"tool": "grep", "pattern": "fn parse_"},
            {"tool": "write", "file": format!("{cwd}/src/lexer.rs"), "chars": 1234},
            {"tool": "edit", "file": format!("{cwd}/src/parser.rs")},
            {"tool": "glob", "pattern": "**/*.rs"},
            {"tool": "list", "pattern": format!("{cwd}/src")},
            {"tool": "webfetch", "url": "https://example.com/zanzibar-spec"},
            {"tool": "websearch", "query": "zanzibar grammar"},
            {"tool": "task", "type": "general", "description": "Investigate flaky test"},
            {"tool": "multiedit", "file": format!("{cwd}/src/ast.rs")},
            {"tool": "todowrite"},
        ])
    );
    assert_eq!(
        turn["assistant_text"],
        "I will inspect the parser module first\n\nThe parser refactor is done"
    );
    // tool names are searchable through the tools field
    assert!(hit_sessions(&c.search("webfetch")).contains(&"opencode:ses_alpha".to_owned()));
}

#[test]
fn turns_follow_message_time_and_skip_synthetic_prompts() {
    let data = DataDir::with_fixture("data");
    let c = data.serve(&[]);
    assert_eq!(
        c.user_texts("opencode:ses_alpha"),
        vec![
            "Please refactor the zanzibar parser so it handles quokka tokens",
            "Now document the marmalade module"
        ]
    );
    // a user message with only synthetic text starts no turn: the reply joins turn 0
    let beta = c.read_conversation("opencode:ses_beta");
    assert_eq!(beta["total_turns"], 1);
    let reply = beta["turns"][0]["assistant_text"].as_str().expect("text");
    assert!(
        reply.contains("missing feature flag") && reply.contains("synthetic prompt about gnarwhal")
    );
}

#[test]
fn list_shows_titles_cwd_projects_and_subagent_counts() {
    let data = DataDir::with_fixture("data");
    let c = data.serve(&[]);
    let convs = listed(&c);
    let by_id = |id: &str| {
        convs
            .iter()
            .find(|v| v["session_id"] == id)
            .unwrap_or_else(|| panic!("{id} not listed: {convs:?}"))
            .clone()
    };
    let ids: Vec<&str> = convs
        .iter()
        .filter_map(|v| v["session_id"].as_str())
        .collect();
    assert_eq!(ids.len(), 3, "main sessions with turns only: {ids:?}");
    let alpha = by_id("opencode:ses_alpha");
    assert_eq!(alpha["summary"], "Refactor the zanzibar parser");
    assert_eq!(alpha["source"], "opencode");
    assert_eq!(alpha["cwd"], "/home/dev/alphaproj");
    assert_eq!(alpha["project"], "alphaproj");
    assert_eq!(alpha["subagent_count"], 1);
    assert_eq!(alpha["turn_count"], 2);
    assert_eq!(alpha["first_timestamp"], "2026-01-01T00:00:01.000Z");
    // a placeholder title falls back to the first prompt
    assert_eq!(
        by_id("opencode:ses_beta")["summary"],
        "Why does the betaproj build fail with gnarwhal errors?"
    );
    // no session directory: the assistant's recorded cwd
    let nodir = by_id("opencode:ses_nodir");
    assert_eq!(nodir["cwd"], "/opt/cwdfromassistant");
    assert_eq!(nodir["project"], "cwdfromassistant");
}

#[test]
fn child_sessions_are_subagents_of_their_parent() {
    let data = DataDir::with_fixture("data");
    let c = data.serve(&[]);
    let hits = results(&c, "childsloth");
    assert_eq!(hits.len(), 1, "{hits:?}");
    let h = &hits[0];
    assert_eq!(h["session_id"], "opencode:ses_alpha_child");
    assert_eq!(h["parent_session_id"], "opencode:ses_alpha");
    assert_eq!(h["agent_type"], "general");
    assert_eq!(h["agent_description"], "Investigate flaky test");
    assert!(
        !listed(&c)
            .iter()
            .any(|v| v["session_id"] == "opencode:ses_alpha_child")
    );
    let own =
        c.search_with(json!({"query": "childsloth", "session_id": "opencode:ses_alpha_child"}));
    assert_eq!(
        hit_sessions(&own),
        vec!["opencode:ses_alpha_child".to_owned()]
    );
    assert_eq!(
        c.read_turn("opencode:ses_alpha_child", 0)["user_text"],
        "Look at the tokenizer tests for the flaky childsloth case"
    );
}

#[test]
fn index_status_counts_sessions_and_skipped_records() {
    let data = DataDir::with_fixture("data");
    let c = data.serve(&[]);
    let s = source_status(&c);
    assert_eq!(s["files"], 1, "{s}");
    assert_eq!(s["sessions"], 3, "{s}");
    assert_eq!(s["subagents"], 1, "{s}");
    assert_eq!(s["turns"], 5, "{s}");
    assert_eq!(
        s["skipped_lines"], 2,
        "a message and a part whose JSON is broken: {s}"
    );
    assert!(s["warning"].is_null(), "{s}");
}

#[test]
fn wal_only_rows_are_read_and_nothing_is_written_next_to_the_database() {
    let data = DataDir::with_fixture("wal");
    let before = std::fs::read(data.path().join("opencode.db-wal")).expect("wal");
    let db_before = std::fs::read(data.db()).expect("db");
    let c = data.serve(&[]);
    assert_eq!(
        hit_keys(&c.search("ocelot")),
        vec![("opencode:ses_walnew".into(), 0)]
    );
    assert_eq!(
        hit_keys(&c.search("tapir")),
        vec![("opencode:ses_walbase".into(), 1)]
    );
    assert_eq!(
        hit_keys(&c.search("pangolin")),
        vec![("opencode:ses_walbase".into(), 0)]
    );
    let walbase = listed(&c)
        .into_iter()
        .find(|v| v["session_id"] == "opencode:ses_walbase");
    assert_eq!(walbase.expect("listed")["summary"], "WAL updated title");
    assert_eq!(
        data.file_names(),
        vec!["opencode.db", "opencode.db-wal"],
        "no -shm/-journal"
    );
    assert_eq!(
        std::fs::read(data.path().join("opencode.db-wal")).expect("wal"),
        before
    );
    assert_eq!(std::fs::read(data.db()).expect("db"), db_before);

    let plain = DataDir::with_fixture("data");
    let c2 = plain.serve(&[]);
    assert!(!hit_keys(&c2.search("zanzibar")).is_empty());
    drop(c2);
    assert_eq!(
        plain.file_names(),
        vec!["opencode.db"],
        "no -wal/-shm/-journal created"
    );
}

#[test]
fn legacy_storage_sample_is_read() {
    let Some(sample) = sample_storage_or_skip() else {
        return;
    };
    let data = DataDir::new();
    copy_tree(&sample, &data.path().join("storage"));
    let c = data.serve(&[]);
    assert_eq!(
        hit_keys(&c.search("Hello")),
        vec![("opencode:s_stage0_small".into(), 0)]
    );
    let turn = c.read_turn("opencode:s_stage0_small", 0);
    assert_eq!(turn["user_text"], "Hello");
    assert_eq!(turn["assistant_text"], "Found 2 files.");
    assert_eq!(
        turn["tools_used"],
        json!([{"tool": "bash", "command": "ls"}])
    );
    assert!(
        hit_keys(&c.search("txt")).is_empty(),
        "tool output is not indexed"
    );
    let convs = listed(&c);
    assert_eq!(convs.len(), 1);
    assert_eq!(convs[0]["summary"], "OpenCode Small");
    assert_eq!(convs[0]["cwd"], "/tmp/repo");
    assert_eq!(convs[0]["source"], "opencode");
}

#[test]
fn legacy_storage_tree_sessions_and_children() {
    let data = legacy_tree();
    let c = data.serve(&[]);
    let turn = c.read_turn("opencode:ses_main", 0);
    assert_eq!(
        turn["user_text"],
        "How do I configure the flamingo exporter?"
    );
    assert_eq!(
        turn["tools_used"],
        json!([{"tool": "read", "file": "/w/legacy/flamingo.toml"}])
    );
    for word in ["synthlegacyword", "legacyreasonword", "legacyoutputword"] {
        assert!(hit_keys(&c.search(word)).is_empty(), "{word}");
    }
    let kid = results(&c, "heronkid");
    assert_eq!(kid[0]["session_id"], "opencode:ses_kid");
    assert_eq!(kid[0]["parent_session_id"], "opencode:ses_main");
    assert_eq!(
        kid[0]["agent_type"], "build",
        "the child's user message agent"
    );
    assert_eq!(kid[0]["agent_description"], "Check exporter");
    let convs = listed(&c);
    assert_eq!(convs.len(), 1);
    assert_eq!(convs[0]["summary"], "Legacy main session");
    assert_eq!(convs[0]["subagent_count"], 1);
}

#[test]
fn a_database_hides_the_legacy_tree_it_was_migrated_from() {
    let data = DataDir::with_fixture("data");
    copy_tree(
        &legacy_tree().path().join("storage"),
        &data.path().join("storage"),
    );
    let c = data.serve(&[]);
    assert!(
        hit_keys(&c.search("flamingo")).is_empty(),
        "legacy files ignored"
    );
    assert!(!hit_keys(&c.search("zanzibar")).is_empty());
}
