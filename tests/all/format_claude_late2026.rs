//! Claude Code's late-2026 records through the binary: prompts typed while Claude works
//! (`queued_command` attachments) join the running turn as later prompts, image and document
//! blocks are counted as attachments, `<persisted-output>` previews are never prompt text, and
//! record types this version does not know are counted per type in `index_status` (kept by the
//! persistent index) with a format-drift warning for files that yield no turn.

use std::time::Duration;

use crate::common::cache::{cache_args, wait_written};
use crate::common::fixture::{
    ProjectsDir, SessionWriter, image_block, new_msg_id, new_tool_id, text_block,
};
use crate::common::mcp::McpClient;
use crate::common::{poll_until_desc, samples_or_skip, serve, serve_with};
use serde_json::{Value, json};

const SID: &str = "1a7e2026-0000-4000-8000-000000000001";
const LATER: &str = "\n\n[later prompt]\n";

fn total(c: &McpClient, q: &str) -> u64 {
    c.search_with(json!({"query": q, "limit": 100}))["total"]
        .as_u64()
        .expect("total")
}

/// A `queued_command` attachment record delivering `prompt` (a string or a block list).
fn queued(w: &mut SessionWriter, prompt: Value, meta: bool) {
    let mut attachment =
        json!({"type": "queued_command", "prompt": prompt, "commandMode": "prompt"});
    if meta {
        attachment["isMeta"] = json!(true);
    }
    w.conv_record("attachment", json!({"attachment": attachment}));
}

/// The `remove` queue operation that accompanies a mid-turn prompt (no content).
fn removed(w: &mut SessionWriter) {
    let ts = w.next_timestamp();
    w.record(
        json!({"type": "queue-operation", "operation": "remove", "timestamp": ts,
        "sessionId": SID}),
    );
}

#[test]
fn mid_turn_prompts_join_the_running_turn() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-late").session(SID);
    w.exchange("first question about the heron", "heron reply");
    w.user("plan the egret migration");
    let m = new_msg_id();
    w.assistant_text(&m, "Planning the egret migration.");
    removed(&mut w);
    queued(&mut w, json!("also rename the bittern module"), false);
    w.assistant_tool_use(
        &m,
        &new_tool_id(),
        "Read",
        json!({"file_path": "/w/egret.rs"}),
    );
    queued(
        &mut w,
        json!([text_block("and keep the ibis tests"), image_block()]),
        false,
    );
    queued(&mut w, json!("metawordlate"), true);
    queued(
        &mut w,
        json!("<task-notification>notificationwordlate</task-notification>"),
        false,
    );
    w.conv_record(
        "attachment",
        json!({"attachment": {"type": "hook_success", "stdout": "hookwordlate"}}),
    );
    w.assistant_text(&new_msg_id(), "Done with the egret.");
    w.exchange("last question about the stork", "stork reply");
    let s = serve(dir);
    assert_eq!(
        s.user_texts(SID),
        [
            "first question about the heron".to_owned(),
            format!(
                "plan the egret migration{LATER}also rename the bittern module{LATER}and keep the ibis tests"
            ),
            "last question about the stork".to_owned(),
        ]
    );
    assert_eq!(s.hits("bittern"), [(SID.to_owned(), 1)]);
    assert_eq!(s.hits("ibis"), [(SID.to_owned(), 1)]);
    let t = s.read_turn(SID, 1);
    assert_eq!(
        t["assistant_text"],
        "Planning the egret migration.\n\nDone with the egret."
    );
    assert_eq!(
        t["attachments"],
        json!([{"type": "image", "media_type": "image/png"}])
    );
    for word in ["metawordlate", "notificationwordlate", "hookwordlate"] {
        assert_eq!(total(&s, word), 0, "{word} must not be searchable");
    }
}

#[test]
fn a_mid_turn_prompt_appended_live_joins_its_turn() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-late").session(SID);
    w.user("start the crane survey");
    w.assistant_text(&new_msg_id(), "Surveying.");
    let s = serve_with(dir, &["--debounce-ms", "100"]);
    queued(&mut w, json!("count the whooping cranes too"), false);
    poll_until_desc(
        "the later prompt searchable",
        Duration::from_secs(15),
        || (s.hits("whooping") == [(SID.to_owned(), 0)]).then_some(()),
    );
    assert_eq!(s.index_status()["turns"], 1);
}

#[test]
fn image_and_document_blocks_are_counted_as_attachments() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-late").session(SID);
    let pdf = json!({"type": "document", "title": "spec", "source": {"type": "base64",
        "media_type": "application/pdf", "data": "JVBERi0xLjQKdocdatawordlate"}});
    w.user_blocks(vec![
        text_block("compare the gannet screenshot with the spec"),
        image_block(),
        pdf,
    ]);
    w.assistant_text(&new_msg_id(), "They match.");
    w.user_blocks(vec![image_block()]);
    w.assistant_text(&new_msg_id(), "Another gannet.");
    let s = serve(dir);
    assert_eq!(
        s.user_texts(SID),
        ["compare the gannet screenshot with the spec"]
    );
    let t = s.read_turn(SID, 0);
    assert_eq!(
        t["attachments"],
        json!([
            {"type": "image", "media_type": "image/png"},
            {"type": "document", "media_type": "application/pdf"},
            {"type": "image", "media_type": "image/png"}
        ])
    );
    assert_eq!(t["assistant_text"], "They match.\n\nAnother gannet.");
    assert_eq!(total(&s, "JVBERi0xLjQKdocdatawordlate"), 0);
}

#[test]
fn persisted_output_previews_are_never_prompt_text() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-late").session(SID);
    w.exchange("run the puffin build", "Running.");
    let preview = "<persisted-output>\nOutput too large (2MB). Full output saved to: /tmp/x.txt\n\nPreview (first 2KB):\npreviewwordlate\n</persisted-output>";
    w.user(preview);
    w.tool_result(&new_tool_id(), preview, Value::Null);
    w.user(&format!("{preview}\nwhy did the puffin build fail"));
    let s = serve(dir);
    assert_eq!(
        s.user_texts(SID),
        ["run the puffin build", "why did the puffin build fail"]
    );
    assert_eq!(total(&s, "previewwordlate"), 0);
}

#[test]
fn unknown_record_types_are_counted_and_drift_is_reported() {
    let dir = ProjectsDir::new();
    let project = dir.project("-home-u-late");
    let mut w = project.session(SID);
    w.exchange("a normal session", "fine");
    w.record(json!({"type": "brand-new-type", "payload": 1}));
    w.record(json!({"type": "brand-new-type", "payload": 2}));
    w.record(json!({"type": "permission-mode", "permissionMode": "default"}));
    w.record(json!({"type": "pr-link", "prNumber": 1}));
    let mut drifted = project.session("1a7e2026-0000-4000-8000-00000000d41f");
    drifted.record(json!({"type": "message-v3", "role": "human", "text": "driftwordlate"}));
    drifted.record(json!({"type": "message-v3", "role": "bot", "text": "reply"}));
    drifted.record(json!({"type": "summary", "summary": "a title", "leafUuid": "x"}));
    let cache = tempfile::tempdir().unwrap();
    let args = cache_args(cache.path());
    let s = serve_with(dir, &args);
    let src = s.index_status()["sources"][0].clone();
    assert_eq!(
        src["unknown_records"],
        json!({"brand-new-type": 2, "message-v3": 2}),
        "{src}"
    );
    assert_eq!(src["files_without_turns"], 1, "{src}");
    let warning = src["warning"].as_str().expect("drift warning");
    assert!(
        warning.contains("message-v3") && warning.contains("no turns"),
        "{warning}"
    );
    assert_eq!(s.index_status()["warnings"].as_array().unwrap().len(), 1);
    // the persistent index keeps the counts
    wait_written(&s);
    let projects = s.dir.path().to_owned();
    let again = McpClient::indexed(&projects, &args);
    let st = again.index_status();
    assert_eq!(st["cache"]["start"], "restored", "{st}");
    assert_eq!(
        st["sources"][0]["unknown_records"], src["unknown_records"],
        "{st}"
    );
    assert_eq!(st["sources"][0]["warning"], src["warning"], "{st}");
    drop(s);
}

#[test]
fn schema_catalog_sample_has_no_unknown_types_and_reads_queued_commands() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let dir = ProjectsDir::new();
    let file = dir.project("-tmp").path().join("ses_stage0_small.jsonl");
    std::fs::copy(
        samples.join("claude-code/schema-catalog/agent-sessions-claude-small.jsonl"),
        &file,
    )
    .unwrap();
    let s = serve(dir);
    let src = &s.index_status()["sources"][0];
    assert!(
        src.get("unknown_records").is_none(),
        "every record type is known: {src}"
    );
    let turns = s.read_conversation("ses_stage0_small")["turns"].clone();
    let turns = turns.as_array().unwrap();
    let later = turns
        .iter()
        .filter(|t| t["user_text"].as_str().unwrap().contains(LATER.trim()))
        .count();
    assert!(
        later >= 1,
        "queued commands read as later prompts: {turns:?}"
    );
    assert!(
        turns.iter().any(|t| t["attachments"][0]["type"] == "image"),
        "the queued command's image is counted: {turns:?}"
    );
    let projects = samples.join("claude-code/projects");
    let real = McpClient::indexed(&projects, &[]);
    assert!(
        real.index_status()["sources"][0]
            .get("unknown_records")
            .is_none()
    );
}
