//! Live updates of individual transcript files: a prompt and its reply written separately end
//! up in one turn; a half-written line waits for its end and is read once, whole (also a line
//! longer than any read buffer); a file rewritten shorter, in place with a changed prefix, or
//! replaced by rename is re-read whole; a deleted file's turns leave search, listings and
//! index_status, with BM25 statistics exact afterwards; appends during the first build are kept.

use crate::common;

use crate::common::fixture::{ProjectsDir, new_msg_id, new_tool_id};
use crate::common::live::{
    DEBOUNCE_MS, append, assert_converges_to_fresh, num, overwrite_in_place, render, serve_live,
    wait_caught_up, wait_hits, wait_idle, wait_no_hits, wait_status,
};
use crate::common::mcp::listed_sessions;
use serde_json::json;

const A: &str = "f11e0000-0000-4000-8000-00000000000a";
const B: &str = "f11e0000-0000-4000-8000-00000000000b";
const C: &str = "f11e0000-0000-4000-8000-00000000000c";

#[test]
fn a_prompt_and_its_reply_written_separately_form_one_turn() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-turns");
    let mut w = p.session(A);
    w.exchange("first prompt", "first reply");
    w.exchange("second prompt", "second reply");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);

    w.user("please explain the heronprompt module");
    assert_eq!(wait_hits(&s, "heronprompt"), vec![(A.to_string(), 2)]);
    let open = s.read_turn(A, 2);
    assert!(
        open["user_text"].as_str().unwrap().contains("heronprompt"),
        "{open}"
    );

    let msg = new_msg_id();
    w.assistant_text(&msg, "The heronreply module parses flags.");
    w.assistant_tool_use(
        &msg,
        &new_tool_id(),
        "Read",
        json!({"file_path": "/home/u/turns/src/heron.rs"}),
    );
    assert_eq!(wait_hits(&s, "heronreply"), vec![(A.to_string(), 2)]);
    let turn = s.read_turn(A, 2);
    assert!(
        turn["user_text"].as_str().unwrap().contains("heronprompt"),
        "{turn}"
    );
    assert!(
        turn["assistant_text"]
            .as_str()
            .unwrap()
            .contains("heronreply"),
        "{turn}"
    );
    wait_status(&s, "the Read call indexed", |_| {
        s.read_turn(A, 2)["tools_used"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    });
    // the open turn's old document was replaced, not kept beside the new one
    assert_eq!(s.hits("heronprompt"), vec![(A.to_string(), 2)]);
    assert_eq!(s.read_conversation(A)["total_turns"], 3);
    let st = s.index_status();
    assert_eq!(num(&st, "turns"), 3, "{st}");
    assert_eq!(
        num(&st, "files_reread"),
        0,
        "appends are read incrementally: {st}"
    );
}

#[test]
fn a_half_written_line_is_read_once_whole() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-partial");
    let mut w = p.session(A);
    w.exchange("opening prompt", "opening reply");
    let path = w.path().to_path_buf();
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let st0 = s.index_status();

    // A complete record (a marker) and the first half of the next one, in one write; the cut
    // falls inside a multi-byte character.
    let marker = render(A, |r| {
        r.set_time("2026-05-01T11:00:00.000Z");
        r.exchange("marker plovermark prompt", "marker reply");
    });
    let record = render(A, |r| {
        r.set_time("2026-05-01T11:01:00.000Z");
        r.exchange(
            "tell me about the sandpiperword café résumé 日本語 naïve handling",
            "sandpiperreply: done",
        );
    });
    let cut = record
        .iter()
        .position(|&b| b >= 0x80)
        .expect("a multi-byte character")
        + 1;
    assert!(
        std::str::from_utf8(&record[..cut]).is_err(),
        "cut inside a character"
    );
    let mut first = marker.clone();
    first.extend_from_slice(&record[..cut]);
    append(&path, &first);
    // The server has certainly looked at the file once the marker is searchable and nothing is
    // pending: the half line was there when it read.
    wait_hits(&s, "plovermark");
    let st1 = wait_idle(&s);
    assert!(num(&st1, "updates") > num(&st0, "updates"), "{st1}");
    assert!(
        s.hits("sandpiperword").is_empty(),
        "half a line is not read"
    );
    assert_eq!(st1["skipped_lines"], st0["skipped_lines"], "{st1}");
    assert_eq!(
        num(&st1, "bytes_indexed"),
        num(&st0, "bytes_indexed") + marker.len() as u64,
        "read up to the last complete line: {st1}"
    );

    append(&path, &record[cut..]);
    assert_eq!(wait_hits(&s, "sandpiperword"), vec![(A.to_string(), 2)]);
    assert_eq!(wait_hits(&s, "sandpiperreply"), vec![(A.to_string(), 2)]);
    let st2 = wait_caught_up(&s, s.dir.path());
    assert_eq!(st2["skipped_lines"], st0["skipped_lines"], "{st2}");
    assert_eq!(num(&st2, "files_reread"), 0, "{st2}");
    for word in ["café", "résumé", "naïve", "日本語"] {
        assert_eq!(s.hits(word), vec![(A.to_string(), 2)], "{word}");
    }
    let turn = s.read_turn(A, 2);
    assert_eq!(
        turn["user_text"],
        "tell me about the sandpiperword café résumé 日本語 naïve handling"
    );
    assert_eq!(turn["assistant_text"], "sandpiperreply: done");
}

fn words_of(s: &common::Served, words: &[&str]) -> Vec<usize> {
    words.iter().map(|w| s.hits(w).len()).collect()
}

#[test]
fn a_file_rewritten_shorter_is_read_again_whole() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-rewrite");
    let mut w = p.session(A);
    w.exchange("one tanagerword", "reply one");
    w.exchange("two tanagerword lapwingword", "reply two");
    w.exchange("three lapwingword", "reply three");
    let path = w.path().to_path_buf();
    p.session(B)
        .exchange("bystander tanagerword lapwingword", "stays");
    let s = serve_live(dir, DEBOUNCE_MS, &["--no-archive"]);
    assert_eq!(words_of(&s, &["tanagerword", "lapwingword"]), [3, 3]);

    let shorter = render(A, |r| {
        r.exchange("only curlewword now", "rewritten reply");
    });
    assert!((shorter.len() as u64) < std::fs::metadata(&path).unwrap().len());
    std::fs::write(&path, &shorter).expect("rewrite");
    assert_eq!(wait_hits(&s, "curlewword"), vec![(A.to_string(), 0)]);
    wait_caught_up(&s, s.dir.path());
    assert_eq!(s.hits("tanagerword"), vec![(B.to_string(), 0)]);
    assert_eq!(s.hits("lapwingword"), vec![(B.to_string(), 0)]);
    assert_eq!(s.read_conversation(A)["total_turns"], 1);
    let st = s.index_status();
    assert!(num(&st, "files_reread") >= 1, "{st}");
    assert_eq!(num(&st, "turns"), 2, "{st}");
    assert_eq!(num(&st, "files"), 2, "{st}");
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &[
            "tanagerword",
            "lapwingword",
            "curlewword",
            "reply",
            "rewritten",
        ],
    );
}

#[test]
fn a_same_length_rewrite_with_a_changed_prefix_is_noticed() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-inplace");
    let mut w = p.session(A);
    w.exchange("the avocetword opening", "first answer");
    w.exchange("middle prompt", "middle answer");
    let path = w.path().to_path_buf();
    p.session(B).exchange("bystander avocetword", "stays");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let before = std::fs::read(&path).unwrap();
    let text = String::from_utf8(before.clone()).unwrap();
    assert_eq!(text.matches("avocetword").count(), 1);
    let after = text.replace("avocetword", "godwitword");
    assert_eq!(after.len(), before.len());
    overwrite_in_place(&path, after.as_bytes());
    assert_eq!(wait_hits(&s, "godwitword"), vec![(A.to_string(), 0)]);
    assert_eq!(s.hits("avocetword"), vec![(B.to_string(), 0)]);
    let st = wait_idle(&s);
    assert!(num(&st, "files_reread") >= 1, "{st}");
    assert_eq!(num(&st, "turns"), 3, "{st}");
    assert_eq!(s.read_turn(A, 0)["user_text"], "the godwitword opening");
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &["avocetword", "godwitword", "answer", "bystander"],
    );
}

fn listed(s: &common::Served) -> Vec<String> {
    listed_sessions(&s.list(json!({"limit": 100})))
}

#[test]
fn a_deleted_file_leaves_search_listing_and_counts() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-keep");
    p.session(A)
        .exchange("shared grebeword survivor", "kept reply about grebeword");
    p.session(B)
        .exchange("grebeword grebeword doomed ternword", "reply grebeword");
    let q = dir.project("-home-u-gone");
    q.session(C).exchange("other ternword project", "reply");
    let s = serve_live(dir, DEBOUNCE_MS, &["--no-archive"]);
    let st0 = s.index_status();
    assert_eq!(
        (
            num(&st0, "sessions"),
            num(&st0, "projects"),
            num(&st0, "files")
        ),
        (3, 2, 3)
    );
    let queries = ["grebeword", "ternword", "survivor", "reply"];

    std::fs::remove_file(s.dir.path().join("-home-u-keep").join(format!("{B}.jsonl")))
        .expect("delete B");
    wait_no_hits(&s, "doomed");
    let st = wait_status(&s, "files_removed == 1", |st| num(st, "files_removed") == 1);
    assert_eq!(s.hits("grebeword"), vec![(A.to_string(), 0)]);
    assert_eq!(s.hits("ternword"), vec![(C.to_string(), 0)]);
    let mut l = listed(&s);
    l.sort();
    assert_eq!(l, [A, C]);
    assert_eq!(
        (num(&st, "sessions"), num(&st, "files"), num(&st, "turns")),
        (2, 2, 2),
        "{st}"
    );
    let e = s.err("read_turn", json!({"session_id": B, "turn_number": 0}));
    assert!(
        e.error_message().contains("Unknown session_id"),
        "{}",
        e.text
    );
    assert_converges_to_fresh(&s, s.dir.path(), &[], &queries);

    // a whole project directory removed at once
    std::fs::remove_dir_all(s.dir.path().join("-home-u-gone")).expect("rm -r");
    wait_no_hits(&s, "ternword");
    let st = wait_status(&s, "files_removed == 2", |st| num(st, "files_removed") == 2);
    assert_eq!(
        (
            num(&st, "sessions"),
            num(&st, "projects"),
            num(&st, "files")
        ),
        (1, 1, 1),
        "{st}"
    );
    assert_eq!(listed(&s), [A]);
    assert_converges_to_fresh(&s, s.dir.path(), &[], &queries);
}

#[test]
fn a_line_longer_than_the_read_buffer_is_appended_whole() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-long");
    let mut w = p.session(A);
    w.exchange("short opening", "short reply");
    let path = w.path().to_path_buf();
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    // a 3 MB prompt (longer than any read buffer), delivered in three writes
    let big = format!("kittiwakestart {} kittiwakeend", "filler ".repeat(450_000));
    let bytes = render(A, |r| {
        r.set_time("2026-05-01T12:00:00.000Z");
        r.exchange(&big, "long reply");
    });
    let third = bytes.len() / 3;
    append(&path, &bytes[..third]);
    std::thread::sleep(std::time::Duration::from_millis(DEBOUNCE_MS + 100));
    append(&path, &bytes[third..2 * third]);
    append(&path, &bytes[2 * third..]);
    assert_eq!(wait_hits(&s, "kittiwakeend"), vec![(A.to_string(), 1)]);
    let st = wait_caught_up(&s, s.dir.path());
    assert_eq!(num(&st, "skipped_lines"), 0, "{st}");
    assert_eq!(s.hits("kittiwakestart"), vec![(A.to_string(), 1)]);
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &["kittiwakestart", "filler", "short"],
    );
}

#[test]
fn a_file_replaced_by_rename_is_read_again() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-atomic");
    let mut w = p.session(A);
    w.exchange("original puffinword prompt", "reply");
    let path = w.path().to_path_buf();
    p.session(B).exchange("bystander puffinword", "reply");
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    // the way editors save: write a temporary file beside it, then rename it over the original
    let tmp = path.with_extension("jsonl.tmp");
    std::fs::write(
        &tmp,
        render(A, |r| {
            r.exchange("replacement razorbillword prompt", "reply");
            r.exchange("second razorbillword turn", "reply");
        }),
    )
    .expect("write tmp");
    std::fs::rename(&tmp, &path).expect("rename");
    assert_eq!(wait_hits(&s, "razorbillword").len(), 2);
    wait_caught_up(&s, s.dir.path());
    assert_eq!(s.hits("puffinword"), vec![(B.to_string(), 0)]);
    let st = s.index_status();
    assert_eq!((num(&st, "files"), num(&st, "turns")), (2, 3), "{st}");
    assert_converges_to_fresh(
        &s,
        s.dir.path(),
        &[],
        &["puffinword", "razorbillword", "reply"],
    );
}

#[test]
fn a_same_length_change_in_the_middle_of_a_large_file_is_noticed() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-middle");
    let mut w = p.session(A);
    for i in 0..40 {
        if i == 20 {
            w.exchange("the middle shearwaterword turn", "middle reply");
        }
        w.exchange(
            &format!("padding prompt {i} {}", "lorem ".repeat(40)),
            "padding reply",
        );
    }
    let path = w.path().to_path_buf();
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let before = std::fs::read_to_string(&path).unwrap();
    let at = before.find("shearwaterword").unwrap();
    assert!(
        at > 4096 && before.len() - at > 4096,
        "the change is more than 4 KiB away from both ends"
    );
    overwrite_in_place(
        &path,
        before
            .replace("shearwaterword", "stormpetrelxyz")
            .as_bytes(),
    );
    // a later append makes sure the server has looked at the file again
    w.exchange("appended fulmarword", "reply");
    wait_hits(&s, "fulmarword");
    wait_idle(&s);
    assert_eq!(
        s.hits("stormpetrelxyz"),
        vec![(A.to_string(), 20)],
        "the changed middle of the file was not re-read"
    );
    assert!(s.hits("shearwaterword").is_empty());
}

#[test]
fn appends_during_the_first_build_are_not_lost() {
    let dir = ProjectsDir::new();
    let mut writers = Vec::new();
    for i in 0..150 {
        let p = dir.project(&format!("-home-u-bulk{}", i % 10));
        let mut w = p.session(&format!("f11e0000-0000-4000-8000-{:012}", 1000 + i));
        for k in 0..10 {
            w.exchange(
                &format!("bulk prompt {k} {}", "words ".repeat(30)),
                "bulk reply",
            );
        }
        if i % 50 == 0 {
            writers.push(w);
        }
    }
    let root = dir.path().to_path_buf();
    // start without waiting for the index, and write while it is being built
    let ms = DEBOUNCE_MS.to_string();
    let c = common::mcp::McpClient::start(&[
        "--projects-dir",
        root.to_str().unwrap(),
        "--debounce-ms",
        &ms,
    ]);
    let mut during = 0;
    for round in 0..20 {
        for w in &mut writers {
            w.exchange(
                &format!("racing {}", common::live::tag("racer", round)),
                "reply",
            );
        }
        if num(&c.index_status(), "generation") == 0 {
            during += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    eprintln!("{during} of 20 rounds written before the first build was published");
    for round in 0..20 {
        let word = common::live::tag("racer", round);
        common::poll_until_desc(
            &format!("{word} in every file"),
            common::live::DEADLINE,
            || (c.hits(&word).len() == writers.len()).then_some(()),
        );
    }
    wait_caught_up(&c, &root);
    assert_converges_to_fresh(&c, &root, &[], &["racing", "bulk", "racerk", "reply"]);
}
