//! Exact statistics after live updates: after appends, rewrites (shorter, longer, same length),
//! deletions and new sessions, every search result's BM25 score equals (to 4 decimals) what a
//! freshly started server over the same final files gives: as a scripted scenario checked after
//! every step, and as a property over random edit sequences.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::fixture::ProjectsDir;
use crate::common::live::{append, assert_converges_to_fresh, render, serve_live, wait_caught_up};
use crate::common::words;
use proptest::prelude::*;

/// Vocabulary with overlapping documents, so document frequencies and lengths matter.
const VOCAB: &[&str] = &[
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
];

/// Queries covering plain keywords, several terms, a phrase, a prefix and an exclusion.
const QUERIES: &[&str] = &[
    "alpha",
    "bravo",
    "charlie",
    "delta echo",
    "foxtrot golf hotel",
    "india juliet alpha",
    "\"alpha bravo\"",
    "ech*",
    "golf -hotel",
    "reply",
];

const SLOTS: &[(&str, &str)] = &[
    ("-home-u-stats-one", "57a70000-0000-4000-8000-000000000001"),
    ("-home-u-stats-one", "57a70000-0000-4000-8000-000000000002"),
    ("-home-u-stats-two", "57a70000-0000-4000-8000-000000000003"),
    (
        "-home-u-stats-three",
        "57a70000-0000-4000-8000-000000000004",
    ),
];

type Exchanges = Vec<(String, String)>;

fn session_bytes(sid: &str, ex: &Exchanges) -> Vec<u8> {
    render(sid, |w| {
        for (p, r) in ex {
            w.exchange(p, r);
        }
    })
}

fn slot_path(root: &Path, slot: usize) -> PathBuf {
    let (project, sid) = SLOTS[slot];
    root.join(project).join(format!("{sid}.jsonl"))
}

fn write_session(root: &Path, slot: usize, ex: &Exchanges) {
    let path = slot_path(root, slot);
    std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
    std::fs::write(&path, session_bytes(SLOTS[slot].1, ex)).expect("write");
}

fn ex(pairs: &[(&str, &str)]) -> Exchanges {
    pairs
        .iter()
        .map(|(p, r)| (p.to_string(), r.to_string()))
        .collect()
}

#[test]
fn scores_match_a_fresh_server_after_every_kind_of_update() {
    let dir = ProjectsDir::new();
    let root = dir.path().to_path_buf();
    let mut model: Vec<Exchanges> = vec![
        ex(&[
            ("alpha bravo charlie", "reply alpha"),
            ("delta echo", "reply delta delta"),
        ]),
        ex(&[
            ("alpha alpha foxtrot", "reply golf"),
            ("hotel india", "reply juliet alpha bravo"),
            ("echo echo echo", "reply"),
        ]),
        ex(&[("golf hotel", "reply india")]),
        ex(&[("juliet", "reply alpha bravo charlie delta echo")]),
    ];
    for (slot, e) in model.iter().enumerate() {
        write_session(&root, slot, e);
    }
    let s = serve_live(dir, 100, &["--no-archive"]);
    assert_converges_to_fresh(&s, &root, &[], QUERIES);
    let check = |step: &str| {
        eprintln!("step: {step}");
        wait_caught_up(&s, &root);
        assert_converges_to_fresh(&s, &root, &[], QUERIES);
    };

    // appends (the last turn changes, then new turns)
    let tail = render(SLOTS[0].1, |w| {
        w.set_time("2026-05-02T10:00:00.000Z");
        w.exchange("foxtrot alpha", "reply echo");
        w.exchange("charlie charlie", "reply golf golf");
    });
    append(&slot_path(&root, 0), &tail);
    check("append");
    // rewritten shorter
    model[1].truncate(1);
    write_session(&root, 1, &model[1]);
    check("rewrite shorter");
    // rewritten to the same length (same text, new ids: only the bytes differ)
    let before = std::fs::metadata(slot_path(&root, 3)).unwrap().len();
    let same = session_bytes(
        SLOTS[3].1,
        &ex(&[("juliet", "reply alpha bravo charlie delta golf")]),
    );
    assert_eq!(same.len() as u64, before);
    common::live::overwrite_in_place(&slot_path(&root, 3), &same);
    check("rewrite same length");
    // deleted
    std::fs::remove_file(slot_path(&root, 2)).expect("delete");
    check("delete");
    // a new session in a new project, then longer rewrite of an existing one
    write_session(&root, 2, &ex(&[("india india hotel", "reply bravo")]));
    model[1].push((
        "echo foxtrot golf hotel india".into(),
        "reply juliet".into(),
    ));
    model[1].push(("alpha".into(), "reply alpha alpha".into()));
    write_session(&root, 1, &model[1]);
    check("new session and longer rewrite");
    // everything at once, without waiting in between
    std::fs::remove_file(slot_path(&root, 0)).expect("delete");
    append(
        &slot_path(&root, 3),
        &render(SLOTS[3].1, |w| {
            w.set_time("2026-05-03T10:00:00.000Z");
            w.exchange("delta delta delta", "reply hotel");
        }),
    );
    write_session(&root, 0, &ex(&[("bravo charlie", "reply")]));
    check("burst of mixed changes");
    let st = s.index_status();
    assert!(st["updates"].as_u64().unwrap() >= 6, "{st}");
    assert!(st["files_removed"].as_u64().unwrap() >= 1, "{st}");
}

#[test]
fn many_small_updates_merge_segments_and_keep_scores_exact() {
    let dir = ProjectsDir::new();
    let root = dir.path().to_path_buf();
    for slot in 0..3 {
        write_session(&root, slot, &ex(&[("alpha bravo", "reply charlie")]));
    }
    let s = serve_live(dir, 30, &["--no-archive"]);
    let rounds = 48;
    for i in 0..rounds {
        let slot = i % 3;
        let (a, b) = (VOCAB[i % VOCAB.len()], VOCAB[(i * 7 + 3) % VOCAB.len()]);
        if i % 8 == 7 {
            // now and then a rewrite, leaving dead documents behind
            write_session(
                &root,
                slot,
                &ex(&[(a, "reply rewritten"), (b, "reply again")]),
            );
        } else {
            let bytes = render(SLOTS[slot].1, |w| {
                w.set_time(&format!("2026-07-01T10:{:02}:00.000Z", i % 60));
                w.exchange(&format!("{a} {b} {a}"), &format!("reply {b}"));
            });
            append(&slot_path(&root, slot), &bytes);
        }
        wait_caught_up(&s, &root);
    }
    let st = s.index_status();
    let (updates, segments) = (
        st["updates"].as_u64().unwrap(),
        st["segments"].as_u64().unwrap(),
    );
    assert!(updates >= rounds as u64 - 8, "{st}");
    assert!(
        segments <= 16,
        "segments are merged: {segments} after {updates} updates\n{st}"
    );
    assert_converges_to_fresh(&s, &root, &[], QUERIES);
}

#[derive(Debug, Clone)]
enum Op {
    /// Append exchanges to a slot (creating the file when missing).
    Append(usize, Exchanges),
    /// Replace a slot's file by these exchanges (shorter, longer or the same length).
    Rewrite(usize, Exchanges),
    /// Keep only the first `n` exchanges of a slot.
    Truncate(usize, usize),
    Delete(usize),
}

fn exchanges() -> impl Strategy<Value = Exchanges> {
    prop::collection::vec(
        (words(VOCAB, 5), words(VOCAB, 4)).prop_map(|(p, r)| (p, format!("reply {r}"))),
        1..4,
    )
}

fn op() -> impl Strategy<Value = Op> {
    let slot = 0..SLOTS.len();
    prop_oneof![
        3 => (slot.clone(), exchanges()).prop_map(|(s, e)| Op::Append(s, e)),
        2 => (slot.clone(), exchanges()).prop_map(|(s, e)| Op::Rewrite(s, e)),
        1 => (slot.clone(), 0..3usize).prop_map(|(s, n)| Op::Truncate(s, n)),
        1 => slot.prop_map(Op::Delete),
    ]
}

/// Applies `op` to the files and the model (each slot's exchanges; `None` = no file).
fn apply(root: &Path, model: &mut [Option<Exchanges>], op: &Op, clock: &mut u32) {
    match op {
        Op::Append(slot, e) => {
            *clock += 1;
            let bytes = render(SLOTS[*slot].1, |w| {
                w.set_time(&format!("2026-06-01T10:{:02}:00.000Z", *clock % 60));
                for (p, r) in e {
                    w.exchange(p, r);
                }
            });
            let path = slot_path(root, *slot);
            std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
            append(&path, &bytes);
            model[*slot].get_or_insert_with(Vec::new).extend(e.clone());
        }
        Op::Rewrite(slot, e) => {
            write_session(root, *slot, e);
            model[*slot] = Some(e.clone());
        }
        Op::Truncate(slot, n) => {
            if let Some(m) = model[*slot].as_mut() {
                m.truncate(*n);
                let m = m.clone();
                write_session(root, *slot, &m);
            }
        }
        Op::Delete(slot) => {
            if model[*slot].take().is_some() {
                std::fs::remove_file(slot_path(root, *slot)).expect("delete");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        max_shrink_iters: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random edit sequences; after each edit the test either waits until the server caught up
    /// or goes on at once (changes racing the watcher), then compares with a fresh server.
    #[test]
    fn random_edit_sequences_keep_scores_exact(
        initial in prop::collection::vec(prop::option::of(exchanges()), SLOTS.len()),
        ops in prop::collection::vec((op(), any::<bool>(), 0..40u64), 1..9),
    ) {
        let dir = ProjectsDir::new();
        let root = dir.path().to_path_buf();
        let mut model: Vec<Option<Exchanges>> = initial.clone();
        for (slot, e) in initial.iter().enumerate() {
            if let Some(e) = e {
                write_session(&root, slot, e);
            }
        }
        let s = serve_live(dir, 50, &["--no-archive"]);
        let mut clock = 0;
        for (op, settle, pause_ms) in &ops {
            apply(&root, &mut model, op, &mut clock);
            if *settle {
                wait_caught_up(&s, &root);
            } else {
                std::thread::sleep(Duration::from_millis(*pause_ms));
            }
        }
        wait_caught_up(&s, &root);
        assert_converges_to_fresh(&s, &root, &[], QUERIES);
        let turns: usize = model.iter().flatten().map(Vec::len).sum();
        let st = s.index_status();
        prop_assert_eq!(st["turns"].as_u64(), Some(turns as u64), "{}", st);
    }
}
