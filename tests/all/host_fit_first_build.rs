//! Host fit, first build (issue point 1): while the first index build runs (no cache yet),
//! every tool answers at once from what is indexed so far; every such answer says
//! `complete: false`, `total_exact: false` and how far the build is (files and bytes done of
//! total); `index_status` counts grow as files finish; nothing claims exactness before the
//! build is complete.
//!
//! A cold first build reads the most recently modified transcripts first (issue 40, point 4),
//! and a live change right after it goes before the store's backlog and the cache write
//! (point 3).
//!
//! The build is slowed with the test hook `CONVERSATION_SEARCH_TEST_BUILD_DELAY_MS` (each file
//! takes that much longer), so that it is still running when the first requests arrive.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::McpClient;
use crate::common::poll_until_desc;
use crate::common::raw::{ERAS, Era, Raw};
use crate::common::store::{StoreEnv, wait_committed, wait_stored};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime};

const FILES: u64 = 40;

fn corpus() -> ProjectsDir {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-build");
    for i in 0..FILES {
        p.session(&format!("b0000000-0000-4000-8000-{i:012}"))
            .exchange(&format!("buildword fileword{i} prompt"), "buildword reply");
    }
    dir
}

fn start(dir: &ProjectsDir, era: Era) -> Raw {
    Raw::start(
        &["--projects-dir", dir.path_str(), "--no-cache"],
        &[("CONVERSATION_SEARCH_TEST_BUILD_DELAY_MS", "400")],
        era,
    )
}

/// Checks what an answer given during the build says about it.
fn assert_partial(r: &Value, what: &str) {
    assert_eq!(r["complete"], false, "{what}: {r}");
    let b = &r["build"];
    assert_eq!(b["files_total"], FILES, "{what}: {r}");
    assert!(b["files_done"].as_u64().unwrap() <= FILES, "{what}: {r}");
    assert!(b["bytes_total"].as_u64().unwrap() > 0, "{what}: {r}");
}

#[test]
fn answers_during_the_first_build_are_partial_and_say_how_far_it_is() {
    for era in ERAS {
        let dir = corpus();
        let mut s = start(&dir, era);
        // the files are found first (milliseconds), then read (seconds)
        poll_until_desc("the files to be found", Duration::from_secs(30), || {
            let st = s.tool_ok("index_status", json!({}));
            (st["build"]["files_total"] == FILES || st["complete"] == true).then_some(())
        });
        let r = s.tool_ok(
            "search_conversations",
            json!({"query": "buildword", "limit": 100}),
        );
        assert_partial(&r, "search");
        assert_eq!(r["total_exact"], false, "{era:?}: {r}");
        assert!(
            r["note"]
                .as_str()
                .is_some_and(|n| n.contains("index build")),
            "{r}"
        );
        let l = s.tool_ok("list_conversations", json!({}));
        assert_partial(&l, "list");
        assert_eq!(l["total_exact"], false, "{l}");
        let h = s.tool_ok("find_file_history", json!({"path": "nothing-touched"}));
        assert_partial(&h, "file history");
        let st = s.tool_ok("index_status", json!({}));
        assert_partial(&st, "index_status");
        assert_eq!(st["generation"], 0, "{st}");
        // once done: complete, exact, everything found
        let done = wait_done(&mut s);
        assert_eq!(done["files"], FILES, "{done}");
        let r = s.tool_ok(
            "search_conversations",
            json!({"query": "buildword", "limit": 100}),
        );
        assert_eq!(
            (r["complete"].clone(), r["total"].clone()),
            (json!(true), json!(FILES)),
            "{r}"
        );
        assert_eq!(r["total_exact"], true, "{r}");
        assert!(r.get("build").is_none(), "{r}");
    }
}

fn wait_done(s: &mut Raw) -> Value {
    poll_until_desc("the first build to finish", Duration::from_secs(60), || {
        let st = s.tool_ok("index_status", json!({}));
        (st["complete"] == true).then_some(st)
    })
}

#[test]
fn index_status_counts_grow_as_files_finish() {
    let dir = corpus();
    let mut s = start(&dir, Era::Init("2025-06-18"));
    let mut turns_seen = Vec::new();
    let mut done_seen = Vec::new();
    let last = poll_until_desc("the first build to finish", Duration::from_secs(60), || {
        let st = s.tool_ok("index_status", json!({}));
        turns_seen.push(st["turns"].as_u64().unwrap());
        if let Some(d) = st["build"]["files_done"].as_u64() {
            done_seen.push(d);
        }
        (st["complete"] == true).then_some(st)
    });
    assert_eq!(last["turns"], FILES, "{last}");
    assert!(
        turns_seen.iter().any(|&t| t > 0 && t < FILES),
        "turns went from 0 to {FILES} at once: {turns_seen:?}"
    );
    assert!(
        done_seen.windows(2).all(|w| w[0] <= w[1]) && done_seen.iter().any(|&d| d > 0 && d < FILES),
        "files done did not grow: {done_seen:?}"
    );
}

#[test]
fn a_session_not_indexed_yet_is_reported_as_such() {
    let dir = corpus();
    let mut s = start(&dir, Era::Init("2025-06-18"));
    // the files are found in milliseconds; reading all 40 takes 16 s (400 ms each)
    poll_until_desc("the files to be found", Duration::from_secs(30), || {
        let st = s.tool_ok("index_status", json!({}));
        (st["build"]["files_total"] == FILES || st["complete"] == true).then_some(())
    });
    // the last file in path order is read last
    let last = format!("b0000000-0000-4000-8000-{:012}", FILES - 1);
    let r = s.tool("read_turn", json!({"session_id": last, "turn_number": 0}));
    let result = &r["result"];
    assert_eq!(result["isError"], true, "{r}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("index build is still running"), "{r}");
    // once the build is done, the same session reads
    wait_done(&mut s);
    let r = s.tool_ok("read_turn", json!({"session_id": last, "turn_number": 0}));
    assert!(
        r.to_string().contains(&format!("fileword{}", FILES - 1)),
        "{r}"
    );
}

#[test]
fn the_newest_transcript_is_searchable_before_older_ones() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-build");
    let day_ago = SystemTime::now() - Duration::from_secs(86_400);
    for i in 0..FILES - 1 {
        let mut w = p.session(&format!("b0000000-0000-4000-8000-{i:012}"));
        w.exchange(&format!("oldword fileword{i} prompt"), "oldword reply");
        let f = std::fs::File::options()
            .write(true)
            .open(w.path())
            .expect("open old transcript");
        f.set_modified(day_ago - Duration::from_secs(i))
            .expect("age the transcript");
    }
    // last in path order: without newest first it would be read last
    p.session(&format!("b0000000-0000-4000-8000-{:012}", FILES - 1))
        .exchange("newestword prompt", "newestword reply");
    let mut s = start(&dir, Era::Init("2025-06-18"));
    let (newest, old) = poll_until_desc(
        "the newest transcript to be searchable",
        Duration::from_secs(60),
        || {
            let r = s.tool_ok("search_conversations", json!({"query": "newestword"}));
            (r["total"].as_u64() > Some(0)).then(|| {
                let old = s.tool_ok(
                    "search_conversations",
                    json!({"query": "oldword", "limit": 100}),
                );
                (r, old)
            })
        },
    );
    assert_eq!(
        newest["complete"], false,
        "found only once the build was done: {newest}"
    );
    let old_found = old["total"].as_u64().unwrap();
    assert!(
        old_found < FILES / 2,
        "{old_found} of {} older transcripts were searchable before the newest: {old}",
        FILES - 1
    );
    let done = wait_done(&mut s);
    assert_eq!(done["files"], FILES, "{done}");
}

#[test]
fn an_append_right_after_the_first_build_goes_before_the_stores_backlog_and_the_cache() {
    let env = StoreEnv::new();
    let p = env.projects.project("-home-u-work-first");
    let mut writers: Vec<_> = (0..FILES)
        .map(|i| {
            let mut w = p.session(&format!("f1000000-0000-4000-8000-{i:012}"));
            w.exchange(&format!("firstword fileword{i}"), "firstword reply");
            w
        })
        .collect();
    // a slow disk: the backlog commits one conversation at a time, 400 ms each (16 s in all)
    let s = McpClient::spawn(
        &env.args(&[]),
        &[("CONVERSATION_SEARCH_TEST_SLOW_COMMITS_MS", "400")],
    );
    s.initialize();
    s.wait_ready();
    writers[FILES as usize / 2].exchange("appendedword right after the build", "ok");
    let st = poll_until_desc(
        "the append to be searchable",
        Duration::from_secs(60),
        || (!s.hits("appendedword").is_empty()).then(|| s.index_status()),
    );
    assert!(
        st["store"]["pending_turns"].as_u64() > Some(0),
        "the append waited for the store's backlog: {st}"
    );
    assert_eq!(
        st["cache"]["writes"], 0,
        "the cache is written once the backlog is committed: {st}"
    );
    // then every turn reaches the store, the append's too, and the cache is written
    wait_committed(&s);
    wait_stored(&s, FILES + 1);
    poll_until_desc("the cache to be written", Duration::from_secs(60), || {
        (s.index_status()["cache"]["writes"].as_u64() >= Some(1)).then_some(())
    });
}

#[test]
fn a_turn_found_during_the_first_build_reads_at_once() {
    let dir = corpus();
    let mut s = start(&dir, Era::Init("2025-06-18"));
    // a session found before the build is done reads at once (not "unknown session")
    let hit = poll_until_desc(
        "a first hit during the build",
        Duration::from_secs(60),
        || {
            let r = s.tool_ok("search_conversations", json!({"query": "buildword"}));
            r["results"].as_array().and_then(|a| a.first()).cloned()
        },
    );
    let id = hit["session_id"].as_str().expect("session_id").to_owned();
    let r = s.tool("read_turn", json!({"session_id": id, "turn_number": 0}));
    assert_ne!(r["result"]["isError"], true, "the hit reads: {r}");
    let page = s.tool("read_conversation", json!({"session_id": id}));
    assert_ne!(
        page["result"]["isError"], true,
        "its conversation reads: {page}"
    );
    let st = s.tool_ok("index_status", json!({}));
    assert_eq!(
        st["complete"], false,
        "read during the build (else the test shows nothing): {st}"
    );
}
