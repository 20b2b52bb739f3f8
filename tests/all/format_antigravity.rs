//! Antigravity CLI transcripts through the binary: `<USER_REQUEST>` prompts without the
//! metadata and settings blocks, planner replies without thinking, tool calls with JSON-encoded
//! argument values rendered like Claude Code's, tool-result and system steps not indexed, the
//! workspace from history.jsonl, the unclipped transcript preferred, live appends, any chunking
//! of a transcript, and the samples.

use crate::common;

use std::time::Duration;

use crate::common::agents::AntigravityTranscript;
use crate::common::chunks_tree::{chunked_equals_whole, cut_points};
use crate::common::formats::{SourceRoot, append_line, serve_sources};
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
fn prompts_replies_tools_and_workspace() {
    let root = SourceRoot::new("cs-ag-");
    let mut a = AntigravityTranscript::new(root.path(), "4a7e0000-aaaa", "/home/u/agproj");
    a.user("tidy the puffin module")
        .step("SYSTEM", "EPHEMERAL_MESSAGE", json!({"content": "ephemeralwordag"}))
        .planner(
            Some("Tidying it."),
            &[
                ("view_file", json!({"AbsolutePath": "/home/u/agproj/src/puffin.rs"})),
                ("run_command", json!({"CommandLine": "cargo fmt", "Cwd": "/home/u/agproj"})),
                ("grep_search", json!({"Query": "puffin", "SearchPath": "/home/u/agproj"})),
                ("write_to_file", json!({"TargetFile": "/home/u/agproj/src/auk.rs", "CodeContent": "fn auk() {}"})),
                ("replace_file_content", json!({"TargetFile": "/home/u/agproj/src/lib.rs", "ReplacementContent": "x"})),
                ("search_web", json!({"query": "puffin beak"})),
                ("list_dir", json!({"DirectoryPath": "/home/u/agproj"})),
            ],
        )
        .result("VIEW_FILE", "resultwordag")
        .result("RUN_COMMAND", "commandoutputwordag")
        .planner(Some("Puffin module tidied."), &[])
        .step("SYSTEM", "SYSTEM_MESSAGE", json!({"content": "systemwordag"}))
        .step("SYSTEM", "CHECKPOINT", json!({"content": "# Resuming from a compaction"}))
        .user("and the guillemot")
        .planner(Some("guillemot answer"), &[]);
    let c = serve_sources(&[root.arg("antigravity")], &[]);
    assert_eq!(a.id, "antigravity:4a7e0000-aaaa");
    assert_eq!(
        c.user_texts(&a.id),
        ["tidy the puffin module", "and the guillemot"]
    );
    let t = c.read_turn(&a.id, 0);
    assert_eq!(t["assistant_text"], "Tidying it.\n\nPuffin module tidied.");
    assert_eq!(
        tool(&t, "view_file")["file"],
        "/home/u/agproj/src/puffin.rs"
    );
    assert_eq!(tool(&t, "run_command")["command"], "cargo fmt");
    assert_eq!(tool(&t, "grep_search")["pattern"], "puffin");
    let w = tool(&t, "write_to_file");
    assert_eq!(
        (w["file"].as_str(), w["chars"].as_u64()),
        (Some("/home/u/agproj/src/auk.rs"), Some(11))
    );
    assert_eq!(
        tool(&t, "replace_file_content")["file"],
        "/home/u/agproj/src/lib.rs"
    );
    assert_eq!(tool(&t, "search_web")["query"], "puffin beak");
    for word in [
        "metadatawordag",
        "settingswordag",
        "thinkingwordag",
        "ephemeralwordag",
        "resultwordag",
        "commandoutputwordag",
        "systemwordag",
        "compaction",
    ] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let row = &c.list(json!({"source": "antigravity"}))["conversations"][0];
    assert_eq!(row["cwd"], "/home/u/agproj");
    assert_eq!(row["project"], "agproj");
    assert_eq!(row["summary"], "tidy the puffin module");
    assert_eq!(row["first_timestamp"], "2026-05-01T10:00:01.000Z");
    let h = c.ok("find_file_history", json!({"path": "src/auk.rs"}));
    assert_eq!(h["results"][0]["operation"], "write", "{h}");
}

#[test]
fn the_unclipped_transcript_is_read_when_both_exist() {
    let root = SourceRoot::new("cs-ag-");
    let mut a = AntigravityTranscript::new(root.path(), "both", "/w/both");
    a.user("clipped version about the razorbill");
    let full = a.path.with_file_name("transcript_full.jsonl");
    let line = json!({"step_index": 0, "source": "USER_EXPLICIT", "type": "USER_INPUT", "status": "DONE",
        "created_at": "2026-05-01T10:00:00Z", "content": "<USER_REQUEST>full version about the razorbill</USER_REQUEST>"});
    append_line(&full, &line.to_string());
    let c = serve_sources(&[root.arg("antigravity")], &[]);
    assert_eq!(c.user_texts(&a.id), ["full version about the razorbill"]);
    assert_eq!(c.index_status()["files"], 1);
}

#[test]
fn live_appends_are_searchable() {
    let root = SourceRoot::new("cs-ag-");
    let mut a = AntigravityTranscript::new(root.path(), "live", "/w/live");
    a.user("start").planner(Some("ok"), &[]);
    let c = serve_sources(&[root.arg("antigravity")], &["--debounce-ms", "100"]);
    a.user("later about the skua").planner(Some("answer"), &[]);
    poll_until_desc("appended turn", Duration::from_secs(15), || {
        (c.hits("skua") == [(a.id.clone(), 1)]).then_some(())
    });
    let mut b = AntigravityTranscript::new(root.path(), "live-2", "/w/live");
    b.user("a new conversation about the gannet");
    poll_until_desc("new conversation", Duration::from_secs(15), || {
        (c.hits("gannet") == [(b.id.clone(), 0)]).then_some(())
    });
}

#[test]
fn samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let s = samples.join("antigravity-cli");
    let root = SourceRoot::new("cs-ag-");
    let logs = ".system_generated/logs";
    let put = |from: String, to: String| {
        let dest = root.path().join("brain").join(to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(s.join(from), dest).unwrap();
    };
    let cass = "aaaa1111-bbbb-2222-cccc-333344445555";
    put(
        format!("cass/brain/{cass}/{logs}/transcript.jsonl"),
        format!("{cass}/{logs}/transcript.jsonl"),
    );
    put(
        format!("cass/brain/{cass}/{logs}/transcript_full.jsonl"),
        format!("{cass}/{logs}/transcript_full.jsonl"),
    );
    put(
        format!("ctx-handwritten/brain/agy-resume/{logs}/transcript_full.jsonl"),
        format!("agy-resume/{logs}/transcript_full.jsonl"),
    );
    put(
        "agent-sessions-cli_schema_drift.jsonl".into(),
        format!("drift/{logs}/transcript.jsonl"),
    );
    let c = serve_sources(&[root.arg("antigravity")], &[]);
    let st = c.index_status();
    assert_eq!(
        (st["files"].as_u64(), st["sessions"].as_u64()),
        (Some(3), Some(3)),
        "{st}"
    );
    assert_eq!(st["skipped_lines"], 0, "{st}");
    let id = format!("antigravity:{cass}");
    let t = c.read_turn(&id, 0);
    assert_eq!(
        t["user_text"],
        "Search the codebase for the FLYWHEEL marker and summarize it."
    );
    assert_eq!(
        t["assistant_text"],
        "I'll grep for the FLYWHEEL marker now.\n\nFound the FLYWHEEL marker in notes.txt; the associated magic number is 42."
    );
    assert_eq!(tool(&t, "grep_search")["pattern"], "FLYWHEEL");
    for word in ["Indexing", "Gemini", "ephemeral"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    assert_eq!(
        c.user_texts("antigravity:agy-resume"),
        ["Continue the previous import smoke test."]
    );
    assert_eq!(c.user_texts("antigravity:drift"), ["Go"]);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        max_shrink_iters: 8,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_chunking_of_a_transcript_reads_like_the_whole_file(
        ops in prop::collection::vec(0..5u8, 1..12),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..7),
    ) {
        let scratch = SourceRoot::new("cs-ag-scratch-");
        let mut a = AntigravityTranscript::new(scratch.path(), "chunky", "/w/ω");
        for op in &ops {
            match op {
                0 => a.user("café naïve"),
                1 => a.planner(Some("größe 日本語"), &[]),
                2 => a.planner(None, &[("run_command", json!({"CommandLine": "ls ω"}))]),
                3 => a.result("RUN_COMMAND", "kestrel output"),
                _ => a.step("SYSTEM", "SYSTEM_MESSAGE", json!({"content": "plover"})),
            };
        }
        let rel = a.path.strip_prefix(scratch.path()).unwrap().to_owned();
        let len = std::fs::metadata(&a.path).unwrap().len() as usize;
        chunked_equals_whole("antigravity", scratch.path(), &rel, &cut_points(len, &picks), &[a.id.clone()]);
    }
}
