//! One index for every server of a configuration: the first server holding the cache's writer
//! lock reads transcripts and publishes generations; servers started after it follow them
//! (reading no transcript), answer exactly like it, see its appends, and one of them takes
//! over when it exits, however it exits.
use crate::common;
use common::cache::{Corpus, assert_same, cache_args, observe, wait_written};
use common::live::{DEADLINE, num, wait_hits, wait_status};
use common::mcp::McpClient;
use serde_json::Value;
use std::path::Path;

/// A server over `corpus` sharing `cache_dir` and the durable store beside it (servers share
/// an index only when they keep history in the same store).
fn spawn(corpus: &Corpus, cache_dir: &Path, envs: &[(&str, &str)]) -> McpClient {
    let data = cache_dir.join("data");
    let data = data.to_str().expect("utf-8 path");
    let mut args = vec!["--projects-dir", corpus.path(), "--debounce-ms", "100"];
    args.extend(["--data-dir", data]);
    args.extend(cache_args(cache_dir));
    let c = McpClient::spawn(&args, envs);
    c.initialize();
    c
}

fn role(c: &McpClient) -> String {
    c.index_status()["sharing"]["role"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn wait_role(c: &McpClient, want: &str) -> Value {
    wait_status(c, &format!("role == {want}"), |st| {
        st["sharing"]["role"] == want
    })
}

#[test]
fn followers_answer_like_the_writer_and_see_its_appends() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let writer = spawn(&corpus, cache_dir.path(), &[]);
    writer.wait_ready();
    wait_written(&writer);
    assert_eq!(role(&writer), "writer");
    let followers: Vec<McpClient> = (0..2)
        .map(|_| spawn(&corpus, cache_dir.path(), &[]))
        .collect();
    let expected = observe(&writer, &[]);
    for (i, f) in followers.iter().enumerate() {
        f.wait_ready();
        let st = wait_role(f, "follower");
        // a follower watches nothing: it reads no transcript
        assert_eq!(st["watch_mode"], "", "follower {i}: {st}");
        assert_same(&expected, &observe(f, &[]), &format!("follower {i}"));
    }

    // an append, a new session and a second append: each reaches every follower
    let mut w = corpus.writer("-home-dev-shared", &common::ids::new_uuid());
    w.exchange("Quillobrand seen by the writer", "ok");
    wait_hits(&writer, "Quillobrand");
    for f in &followers {
        wait_hits(f, "Quillobrand");
    }
    w.exchange("Tessaplume in a later turn", "done");
    wait_hits(&writer, "Tessaplume");
    let session = corpus.sessions()[0].clone();
    corpus
        .writer_for(&session)
        .exchange("Mirthglade appended to an old session", "ok");
    wait_hits(&writer, "Mirthglade");
    for (i, f) in followers.iter().enumerate() {
        wait_hits(f, "Tessaplume");
        wait_hits(f, "Mirthglade");
        let st = f.index_status();
        assert_eq!(st["sharing"]["role"], "follower", "follower {i}: {st}");
        assert!(num(&st["sharing"], "generation") >= 2, "follower {i}: {st}");
    }
    let expected = observe(&writer, &["Quillobrand", "Tessaplume", "Mirthglade"]);
    for (i, f) in followers.iter().enumerate() {
        let got = observe(f, &["Quillobrand", "Tessaplume", "Mirthglade"]);
        assert_same(&expected, &got, &format!("follower {i} after appends"));
        // the turns read from a follower are the writer's
        let hits = f.hits("Mirthglade");
        let (sid, turn) = hits[0].clone();
        assert_eq!(
            f.read_turn(&sid, turn as i64),
            writer.read_turn(&sid, turn as i64),
            "follower {i}"
        );
    }
}

#[test]
fn a_follower_takes_over_when_the_writer_is_killed() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let writer = spawn(&corpus, cache_dir.path(), &[]);
    writer.wait_ready();
    wait_written(&writer);
    let follower = spawn(&corpus, cache_dir.path(), &[]);
    follower.wait_ready();
    wait_role(&follower, "follower");
    let mut w = corpus.writer("-home-dev-shared", &common::ids::new_uuid());
    w.exchange("Brindlequay before the kill", "ok");
    wait_hits(&follower, "Brindlequay");

    // SIGKILL: the lock goes with the process
    drop(writer);
    let st = wait_role(&follower, "writer");
    assert_eq!(st["watch_mode"], "watch", "{st}");
    // what was written while nobody wrote is read on takeover, later appends live
    w.exchange("Corvantile after the takeover", "ok");
    wait_hits(&follower, "Corvantile");
    assert!(!follower.hits("Brindlequay").is_empty());

    // and a server started now follows the new writer
    let next = spawn(&corpus, cache_dir.path(), &[]);
    next.wait_ready();
    wait_role(&next, "follower");
    w.exchange("Pellucidorn for the next follower", "ok");
    wait_hits(&follower, "Pellucidorn");
    wait_hits(&next, "Pellucidorn");
    assert_same(
        &observe(&follower, &["Corvantile"]),
        &observe(&next, &["Corvantile"]),
        "follower of the new writer",
    );
}

#[test]
fn a_follower_started_during_the_first_build_completes_from_the_writers_index() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    // the writer's first build takes a while: the follower starts before any base exists
    let writer = spawn(
        &corpus,
        cache_dir.path(),
        &[("CONVERSATION_SEARCH_TEST_BUILD_DELAY_MS", "100")],
    );
    wait_status(&writer, "build started", |st| st["build"].is_object());
    let follower = spawn(&corpus, cache_dir.path(), &[]);
    // its indexer thread takes its role just after start (`alone` until then)
    let early = wait_role(&follower, "follower");
    assert_eq!(early["complete"], false, "{early}");
    writer.wait_ready();
    let st = common::poll_until_desc("follower complete", DEADLINE, || {
        let st = follower.index_status();
        (st["complete"] == true).then_some(st)
    });
    assert_eq!(st["sharing"]["role"], "follower", "{st}");
    assert_same(&observe(&writer, &[]), &observe(&follower, &[]), "follower");
}

#[test]
fn servers_with_and_without_history_do_not_follow_each_other() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let data = tempfile::tempdir().expect("data dir");
    let data_arg = data.path().to_str().expect("utf-8");
    let mut args = vec!["--projects-dir", corpus.path()];
    args.extend(cache_args(cache_dir.path()));
    let with_store = McpClient::spawn(&[args.as_slice(), &["--data-dir", data_arg]].concat(), &[]);
    with_store.initialize();
    with_store.wait_ready();
    let without = McpClient::spawn(&[args.as_slice(), &["--no-archive"]].concat(), &[]);
    without.initialize();
    without.wait_ready();
    assert_eq!(role(&with_store), "writer");
    assert_eq!(role(&without), "writer");
}

/// Waits until `c` has applied `generation` (its `index_status.sharing.generation`).
fn wait_generation(c: &McpClient, generation: u64) -> Value {
    wait_status(c, &format!("shared generation >= {generation}"), |st| {
        st["sharing"]["generation"].as_u64().unwrap_or(0) >= generation
    })
}

#[test]
fn followers_stay_identical_through_merges_deletions_and_rewrites() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let writer = spawn(&corpus, cache_dir.path(), &[]);
    writer.wait_ready();
    wait_written(&writer);
    let follower = spawn(&corpus, cache_dir.path(), &[]);
    follower.wait_ready();
    wait_role(&follower, "follower");

    let settle = |word: &str| {
        wait_hits(&writer, word);
        let st = wait_status(&writer, "no pending change", |st| {
            num(st, "pending_changes") == 0
        });
        wait_generation(&follower, num(&st["sharing"], "generation"));
    };
    // one update each: more small segments than the writer keeps, so it merges them
    let mut live = corpus.writer("-home-dev-churn", &common::ids::new_uuid());
    for i in 0..16 {
        let word = format!("Churnword{i}x");
        live.exchange(&format!("{word} turn {i}"), "ok");
        settle(&word);
    }
    let st = writer.index_status();
    assert!(num(&st, "segments") < 16, "the updates were merged: {st}");
    // a sub-agent of the live session
    let mut sub = corpus
        .dir
        .project("-home-dev-churn")
        .subagent_flat("a1b2c3d", live.session_id());
    sub.exchange("Subwordzeta inside a sub-agent", "done");
    settle("Subwordzeta");
    // a session deleted (its turns stay, from the store) and one rewritten shorter
    let sessions = corpus.sessions();
    std::fs::remove_file(&sessions[0]).expect("delete a session");
    let mut rewritten = corpus.writer_for(&sessions[1]);
    std::fs::write(&sessions[1], b"").expect("truncate");
    rewritten.exchange("Rewordomega after the rewrite", "ok");
    settle("Rewordomega");

    let words = ["Churnword3x", "Churnword15x", "Subwordzeta", "Rewordomega"];
    assert_same(
        &observe(&writer, &words),
        &observe(&follower, &words),
        "follower after merges, a deletion and a rewrite",
    );
    // a server started now restores the cache file and the generations after it
    let late = spawn(&corpus, cache_dir.path(), &[]);
    late.wait_ready();
    wait_role(&late, "follower");
    assert_same(
        &observe(&writer, &words),
        &observe(&late, &words),
        "a follower started late",
    );
}
