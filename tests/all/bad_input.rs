//! Robustness: malformed JSON, non-UTF-8 bytes, missing `type`, user/assistant without message,
//! empty / unreadable / truncated files, huge lines; skipped_lines accounting, one warning per
//! file, unknown types ignored silently, the server never crashes and never writes to the tree.

use crate::common;

use crate::common::fixture::{ProjectsDir, new_msg_id, tree_snapshot};
use crate::common::{Served, serve, skip};
use serde_json::json;

const GOOD: &str = "600d0000-0000-4000-8000-000000000001";
const BAD: &str = "bad00000-0000-4000-8000-000000000002";

/// A clean session GOOD plus a session BAD whose lines are produced by `f` between two good
/// exchanges ("beforeword" turn 0, "afterword" turn 1).
fn with_bad(f: impl FnOnce(&mut common::fixture::SessionWriter)) -> Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-bad");
    p.session(GOOD).exchange("clean session cleanword", "ok");
    let mut w = p.session(BAD);
    w.exchange("beforeword prompt", "ok");
    f(&mut w);
    w.exchange("afterword prompt", "ok");
    serve(dir)
}

fn assert_good_content_kept(s: &Served) {
    assert_eq!(s.search("cleanword")["total"], 1);
    assert_eq!(s.user_texts(BAD), ["beforeword prompt", "afterword prompt"]);
}

/// Lines of stderr that mention `needle` and look like warnings.
fn warning_lines(s: &Served, needle: &str) -> usize {
    s.stderr_text()
        .lines()
        .filter(|l| l.contains(needle) && l.to_lowercase().contains("warn"))
        .count()
}

#[test]
fn malformed_json_lines_are_skipped_and_counted() {
    let s = with_bad(|w| {
        w.raw_line(
            "{\"type\": \"user\", \"message\": {\"role\": \"user\", \"content\": \"lostword",
        );
        w.raw_line("not json at all lostword");
        w.raw_line("{]");
    });
    assert_good_content_kept(&s);
    assert_eq!(s.search("lostword")["total"], 0);
    assert_eq!(s.index_status()["skipped_lines"], 3);
}

#[test]
fn one_warning_per_file_on_stderr() {
    let s = with_bad(|w| {
        w.raw_line("garbage one");
        w.raw_line("garbage two");
        w.raw_line("garbage three");
    });
    assert_eq!(
        warning_lines(&s, BAD),
        1,
        "exactly one warning naming the file expected; stderr:\n{}",
        s.stderr_text()
    );
    assert_eq!(warning_lines(&s, GOOD), 0, "no warning for the clean file");
}

#[test]
fn non_utf8_bytes_in_a_string_read_as_replacement_characters() {
    let s = with_bad(|w| {
        let mut line =
            br#"{"type":"user","uuid":"x1","message":{"role":"user","content":"bytesword "#
                .to_vec();
        line.extend_from_slice(&[0xff, 0xfe, 0xc3]);
        line.extend_from_slice(b"\"}}\n");
        w.raw_bytes(&line);
    });
    assert_eq!(s.search("cleanword")["total"], 1);
    assert_eq!(
        s.user_texts(BAD),
        [
            "beforeword prompt",
            "bytesword \u{fffd}\u{fffd}\u{fffd}",
            "afterword prompt"
        ]
    );
    assert_eq!(s.index_status()["skipped_lines"], 0);
}

#[test]
fn records_without_type_or_message_are_skipped_and_counted() {
    let s = with_bad(|w| {
        w.record(json!({"uuid": "t1", "message": {"role": "user", "content": "notypeword"}}));
        w.record(json!({"type": "user", "uuid": "t2", "timestamp": "2026-05-01T11:00:00.000Z"}));
        w.record(
            json!({"type": "assistant", "uuid": "t3", "timestamp": "2026-05-01T11:00:01.000Z"}),
        );
        w.record(json!([1, 2, 3]));
        w.record(json!("just a string"));
    });
    assert_good_content_kept(&s);
    assert_eq!(s.search("notypeword")["total"], 0);
    assert_eq!(s.index_status()["skipped_lines"], 5);
}

#[test]
fn unknown_record_types_are_ignored_and_not_counted() {
    let s = with_bad(|w| {
        w.record(json!({"type": "brand-new-record-kind", "payload": "unknowntypeword"}));
        w.record(json!({"type": "worktree-state", "state": {}}));
        w.record(json!({"type": "atis-latch"}));
    });
    assert_good_content_kept(&s);
    assert_eq!(s.search("unknowntypeword")["total"], 0);
    assert_eq!(s.index_status()["skipped_lines"], 0);
    assert_eq!(
        warning_lines(&s, BAD),
        0,
        "unknown types are not warned about"
    );
}

#[test]
fn odd_but_valid_shapes_do_not_break_the_file() {
    let s = with_bad(|w| {
        w.conv_record("user", json!({"message": {"role": "user", "content": 42}}));
        w.conv_record(
            "user",
            json!({"message": {"role": "user", "content": null}}),
        );
        w.conv_record(
            "assistant",
            json!({"message": {"id": "m", "content": "not a list"}}),
        );
        w.conv_record(
            "assistant",
            json!({"message": {"id": "m2", "content": [42, null, {"type": "text"}]}}),
        );
        w.raw_line("");
        w.raw_line("   ");
    });
    assert_good_content_kept(&s);
}

#[test]
fn empty_file_is_harmless() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-empty");
    p.session(GOOD).exchange("clean session cleanword", "ok");
    p.write_file("empty-session.jsonl", b"");
    let s = serve(dir);
    assert_eq!(s.search("cleanword")["total"], 1);
    assert!(s.is_alive());
}

#[test]
fn truncated_last_line_keeps_earlier_turns() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-trunc");
    let mut w = p.session(BAD);
    w.exchange("complete prompt keptword", "complete reply");
    w.raw_bytes(br#"{"type":"user","message":{"role":"user","content":"partialword"#);
    let s = serve(dir);
    assert_eq!(s.search("keptword")["total"], 1);
    assert_eq!(s.search("partialword")["total"], 0);
    assert_eq!(s.user_texts(BAD), ["complete prompt keptword"]);
}

#[test]
fn unreadable_file_is_skipped() {
    use std::os::unix::fs::PermissionsExt;
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-perm");
    p.session(GOOD).exchange("clean session cleanword", "ok");
    let mut locked = p.session("locked");
    locked.exchange("lockedword prompt", "ok");
    let path = locked.path().to_path_buf();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&path).is_ok() {
        skip("running with permissions that can read a chmod 000 file (root?)");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        return;
    }
    let s = serve(dir);
    assert_eq!(s.search("cleanword")["total"], 1);
    assert_eq!(s.search("lockedword")["total"], 0);
    assert!(
        s.stderr_text().contains("locked"),
        "a warning naming the file expected"
    );
    assert!(s.is_alive());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn very_long_lines_are_indexed() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-long").session("long");
    let big = format!("{} needleword", "padding ".repeat(300_000)); // ~2.4 MB
    w.user(&big);
    w.assistant_text(&new_msg_id(), "ok");
    w.exchange("after the big one", "ok");
    let s = serve(dir);
    assert_eq!(s.search("needleword")["results"][0]["session_id"], "long");
    assert_eq!(s.read_conversation("long")["total_turns"], 2);
}

#[test]
fn skipped_lines_sum_over_files() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-sum");
    for (sid, bad) in [("a", 1), ("b", 2), ("c", 0)] {
        let mut w = p.session(sid);
        w.exchange("prompt", "ok");
        for _ in 0..bad {
            w.raw_line("{oops");
        }
    }
    let s = serve(dir);
    assert_eq!(s.index_status()["skipped_lines"], 3);
    assert_eq!(s.index_status()["sessions"], 3);
}

#[test]
fn nothing_is_written_under_the_projects_dir() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-ro");
    let mut w = p.session("ro-1");
    w.exchange("readonly prompt roword", "ok");
    w.raw_line("{bad");
    p.subagent_nested("ro-1", "abc", Some(("Explore", "look")))
        .exchange("sub prompt", "ok");
    p.subagent_flat("def", "ro-1").exchange("flat prompt", "ok");
    let before = tree_snapshot(dir.path());
    let s = serve(dir);
    s.search("roword");
    s.list(json!({}));
    s.read_turn("ro-1", 0);
    s.read_conversation("ro-1");
    s.read_conversation("ro-1/agent-abc");
    s.index_status();
    s.err(
        "read_turn",
        json!({"session_id": "ro-1", "turn_number": 99}),
    );
    let after = tree_snapshot(s.dir.path());
    assert_eq!(before, after, "the projects tree must not change");
}

/// `mkfifo path`; false when the command is unavailable.
fn mkfifo(path: &std::path::Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn fifos_named_like_transcripts_never_block_the_indexer() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-fifo");
    p.session(GOOD).exchange("clean session cleanword", "ok");
    let early = p.path().join("fade0000-0000-4000-8000-000000000001.jsonl");
    if !mkfifo(&early) {
        skip("mkfifo is not available");
        return;
    }
    // the first build finishes (opening the FIFO would block it forever)
    let s = serve_live_path(&dir);
    assert_eq!(s.search("cleanword")["total"], 1);
    // a FIFO appearing later is not read either, and later changes still arrive
    assert!(mkfifo(
        &p.path().join("fade0000-0000-4000-8000-000000000002.jsonl")
    ));
    p.session(BAD).exchange("laterword after the fifo", "ok");
    common::live::wait_hits(&s, "laterword");
    let st = s.index_status();
    assert_eq!(st["sessions"], 2, "{st}");
}

fn serve_live_path(dir: &ProjectsDir) -> common::mcp::McpClient {
    common::live::serve_path(dir.path(), common::live::DEBOUNCE_MS, &[])
}
