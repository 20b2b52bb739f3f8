//! What a turn contains and what is indexed: assistant text joining, streamed-duplicate
//! handling (same message.id), thinking / tool results / toolUseResult / metadata records
//! never searchable, the `tools:` line, tool inputs not indexed.

use crate::common::fixture::{SessionWriter, new_msg_id};
use crate::common::{Served, serve_session};
use serde_json::json;

const SID: &str = "c0a7e470-0000-4000-8000-00000000000b";

fn session(f: impl FnOnce(&mut SessionWriter)) -> Served {
    serve_session("-home-u-work-content", SID, f)
}

fn assistant_text(s: &Served, turn: i64) -> String {
    s.read_turn(SID, turn)["assistant_text"]
        .as_str()
        .expect("assistant_text")
        .to_string()
}

#[test]
fn assistant_text_blocks_are_joined_with_a_blank_line() {
    let s = session(|w| {
        w.user("explain");
        let m1 = new_msg_id();
        w.assistant_text(&m1, "First paragraph.");
        w.assistant_tool_use(&m1, "toolu_a", "Bash", json!({"command": "true"}));
        w.tool_result("toolu_a", "", json!({"stdout": ""}));
        let m2 = new_msg_id();
        w.assistant_text(&m2, "Second paragraph.");
        w.assistant_text(&m2, "Third paragraph.");
    });
    assert_eq!(
        assistant_text(&s, 0),
        "First paragraph.\n\nSecond paragraph.\n\nThird paragraph."
    );
}

#[test]
fn identical_streamed_duplicate_of_a_block_counts_once() {
    let s = session(|w| {
        w.user("say it");
        let m = new_msg_id();
        w.assistant_text(&m, "The answer is duplicatedword.");
        w.assistant_text(&m, "The answer is duplicatedword.");
    });
    assert_eq!(assistant_text(&s, 0), "The answer is duplicatedword.");
}

#[test]
fn partial_streamed_prefix_is_replaced_by_the_longer_text() {
    let s = session(|w| {
        w.user("stream it");
        let m = new_msg_id();
        w.assistant_text(&m, "Hello wor");
        w.assistant_text(&m, "Hello world, streamingword complete.");
    });
    assert_eq!(
        assistant_text(&s, 0),
        "Hello world, streamingword complete."
    );
}

#[test]
fn same_text_in_different_messages_is_kept_twice() {
    let s = session(|w| {
        w.user("repeat");
        w.assistant_text(&new_msg_id(), "Done.");
        w.assistant_text(&new_msg_id(), "Done.");
    });
    assert_eq!(assistant_text(&s, 0), "Done.\n\nDone.");
}

#[test]
fn duplicate_tool_use_id_is_counted_once() {
    let s = session(|w| {
        w.user("read it");
        let m = new_msg_id();
        let input = json!({"file_path": "/src/lib.rs"});
        w.assistant_tool_use(&m, "toolu_dup", "Read", input.clone());
        w.assistant_tool_use(&m, "toolu_dup", "Read", input);
        w.assistant_tool_use(
            &m,
            "toolu_other",
            "Read",
            json!({"file_path": "/src/main.rs"}),
        );
    });
    assert_eq!(
        s.read_turn(SID, 0)["tools_used"],
        json!([
            {"tool": "Read", "file": "/src/lib.rs"},
            {"tool": "Read", "file": "/src/main.rs"}
        ])
    );
}

#[test]
fn thinking_is_never_indexed_or_returned() {
    let s = session(|w| {
        w.user("think hard visibleword");
        let m = new_msg_id();
        w.assistant_thinking(&m, "private thinkonlyword musings");
        w.assistant_redacted_thinking(&m, "redactedonlyword");
        w.assistant_text(&m, "Visible conclusion.");
    });
    assert_eq!(s.search("thinkonlyword")["total"], 0);
    assert_eq!(s.search("redactedonlyword")["total"], 0);
    assert_eq!(s.search("visibleword")["total"], 1, "control");
    let t = s.read_turn(SID, 0);
    assert_eq!(t["assistant_text"], "Visible conclusion.");
    let whole = s.read_conversation(SID).to_string();
    assert!(!whole.contains("thinkonlyword"), "{whole}");
    assert!(!whole.contains("redactedonlyword"), "{whole}");
}

#[test]
fn tool_results_and_tool_use_results_are_never_indexed_or_returned() {
    let s = session(|w| {
        w.user("run the tests visibleword");
        let m = new_msg_id();
        w.assistant_tool_use(&m, "toolu_b", "Bash", json!({"command": "cargo test"}));
        w.tool_result(
            "toolu_b",
            "test result: resultonlyword ok",
            json!({"stdout": "structuredonlyword", "stderr": "", "interrupted": false}),
        );
        w.user_blocks(vec![
            json!({"type": "tool_result", "tool_use_id": "toolu_b",
            "content": [{"type": "text", "text": "blockresultonlyword"}], "is_error": true}),
        ]);
        w.assistant_text(&new_msg_id(), "All green.");
    });
    for word in [
        "resultonlyword",
        "structuredonlyword",
        "blockresultonlyword",
    ] {
        assert_eq!(s.search(word)["total"], 0, "{word} must not be searchable");
    }
    assert_eq!(s.search("visibleword")["total"], 1, "control");
    let whole = s.read_conversation(SID).to_string();
    assert!(!whole.contains("resultonlyword"), "{whole}");
    assert!(!whole.contains("structuredonlyword"), "{whole}");
}

#[test]
fn metadata_records_are_never_indexed() {
    let s = session(|w| {
        let u = w.user("metadata test visibleword");
        w.assistant_text(&new_msg_id(), "ok");
        w.summary("summaryonlyword title", &u);
        w.custom_title("customtitleonlyword");
        w.ai_title("aititleonlyword");
        w.last_prompt("lastpromptonlyword");
        w.queue_operation("enqueue", "queueonlyword");
        w.file_history_snapshot();
        w.record(json!({"type": "agent-name", "agentName": "agentnameonlyword", "sessionId": SID}));
        w.record(json!({"type": "pr-link", "prNumber": 7, "prUrl": "https://x/prlinkonlyword"}));
    });
    for word in [
        "summaryonlyword",
        "customtitleonlyword",
        "aititleonlyword",
        "lastpromptonlyword",
        "queueonlyword",
        "agentnameonlyword",
        "prlinkonlyword",
    ] {
        assert_eq!(s.search(word)["total"], 0, "{word} must not be searchable");
    }
    assert_eq!(s.search("visibleword")["total"], 1, "control");
}

#[test]
fn system_attachment_and_progress_records_are_never_indexed() {
    let s = session(|w| {
        w.user("harness records visibleword");
        w.system("away_summary", "systemonlyword recap prose");
        // (a `queued_command` attachment is a prompt sent mid-turn: format_claude_late2026)
        w.conv_record(
            "attachment",
            json!({"attachment": {"type": "hook_additional_context", "content": ["attachmentonlyword"]}}),
        );
        w.conv_record(
            "progress",
            json!({"data": {"type": "hook_progress", "hookName": "progressonlyword"}}),
        );
        w.assistant_text(&new_msg_id(), "ok");
    });
    for word in ["systemonlyword", "attachmentonlyword", "progressonlyword"] {
        assert_eq!(s.search(word)["total"], 0, "{word} must not be searchable");
    }
    assert_eq!(s.hits("visibleword"), vec![(SID.to_string(), 0)]);
}

#[test]
fn tool_names_are_indexed_on_the_tools_line() {
    let s = session(|w| {
        w.user("do the thing");
        let m = new_msg_id();
        w.assistant_tool_use(&m, "toolu_z1", "Zebratool", json!({"x": 1}));
        w.assistant_tool_use(&m, "toolu_z2", "Quokkatool", json!({}));
        w.exchange("unrelated prompt", "unrelated reply");
    });
    assert_eq!(s.hits("zebratool"), vec![(SID.to_string(), 0)]);
    assert_eq!(s.hits("Quokkatool"), vec![(SID.to_string(), 0)]);
}

/// Tool inputs beyond the tool name are not indexed. (Shell commands and touched file paths
/// are deliberately left out of this check: a later feature indexes them as "tool facts".)
#[test]
fn tool_input_details_are_not_indexed() {
    let s = session(|w| {
        w.user("inspect the repo visibleword");
        let m = new_msg_id();
        w.assistant_tool_use(
            &m,
            "toolu_i1",
            "Bash",
            json!({"command": "true", "description": "descriptiononlyword"}),
        );
        w.assistant_tool_use(
            &m,
            "toolu_i2",
            "Write",
            json!({"file_path": "/tmp/x.txt", "content": "contentonlyword"}),
        );
        w.assistant_tool_use(
            &m,
            "toolu_i3",
            "WebFetch",
            json!({"url": "https://example.com", "prompt": "promptonlyword"}),
        );
        w.assistant_tool_use(
            &m,
            "toolu_i4",
            "Edit",
            json!({"file_path": "/tmp/x.txt", "old_string": "oldonlyword", "new_string": "newonlyword"}),
        );
    });
    for word in [
        "descriptiononlyword",
        "contentonlyword",
        "promptonlyword",
        "oldonlyword",
        "newonlyword",
    ] {
        assert_eq!(s.search(word)["total"], 0, "{word} must not be searchable");
    }
    assert_eq!(s.search("visibleword")["total"], 1, "control");
}

#[test]
fn user_and_assistant_text_are_both_indexed() {
    let s = session(|w| {
        w.exchange("prompt mentions userword", "reply mentions replyword");
        w.exchange("nothing special", "nothing either");
    });
    assert_eq!(s.hits("userword"), vec![(SID.to_string(), 0)]);
    assert_eq!(s.hits("replyword"), vec![(SID.to_string(), 0)]);
}
