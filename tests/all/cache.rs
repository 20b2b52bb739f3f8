//! Black-box tests of the persistent index (`--cache-dir`, `--no-cache`): a miss builds and
//! writes it, a restart restores it and re-reads only what changed, a corrupt or foreign cache
//! is rejected and rebuilt, servers starting together on one cache neither corrupt it nor each
//! other, and every answer is identical to a server that never used a cache.
use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::cache::*;
use crate::common::fixture::tree_snapshot;
use crate::common::live::num;
use crate::common::mcp::McpClient;
use crate::common::poll_until_desc;
use serde_json::json;

#[test]
fn miss_writes_the_cache_and_a_restart_restores_it_with_identical_answers() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let before = tree_snapshot(corpus.dir.path());

    let first = serve(&corpus, &cache_args(cache_dir.path()));
    let c1 = wait_written(&first);
    assert_eq!(c1["enabled"], true, "{c1}");
    assert_eq!(c1["start"], "absent", "no cache existed yet: {c1}");
    let path = PathBuf::from(c1["path"].as_str().expect("cache.path"));
    assert!(
        path.starts_with(cache_dir.path()),
        "cache outside --cache-dir: {c1}"
    );
    assert!(path.is_file(), "cache file missing after a write: {c1}");
    let seen_first = observe(&first, &[]);
    drop(first);

    let second = serve(&corpus, &cache_args(cache_dir.path()));
    let c2 = cache(&second);
    assert_eq!(c2["start"], "restored", "{c2}");
    assert_eq!(num(&c2, "files_changed"), 0, "nothing changed: {c2}");
    let files = num(&second.index_status(), "files");
    assert_eq!(num(&c2, "files_reused"), files, "every file reused: {c2}");
    assert_same(
        &seen_first,
        &observe(&second, &[]),
        "restored vs first build",
    );
    drop(second);

    let plain = serve(&corpus, &["--no-cache"]);
    assert_same(&seen_first, &observe(&plain, &[]), "cache vs --no-cache");

    assert_eq!(
        before,
        tree_snapshot(corpus.dir.path()),
        "transcripts were modified"
    );
    let leftovers: Vec<_> = fs::read_dir(cache_dir.path())
        .expect("read cache dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );
}

#[test]
fn default_cache_lives_under_xdg_cache_home() {
    let corpus = Corpus::new();
    let c = serve(&corpus, &[]);
    let report = wait_written(&c);
    let path = report["path"].as_str().expect("cache.path");
    assert!(
        path.contains("/conversation-search/index-"),
        "cache not under $XDG_CACHE_HOME/conversation-search: {report}"
    );
    assert!(Path::new(path).is_file(), "{report}");
}

#[test]
fn no_cache_neither_reads_nor_writes() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let mut args = cache_args(cache_dir.path());
    args.push("--no-cache");
    let c = serve(&corpus, &args);
    // an update after the first build would be saved too if the cache were on
    let mut w = corpus.writer("-home-dev-nocache", &common::ids::new_uuid());
    w.exchange("Vorplingquast after start", "noted");
    common::live::wait_hits(&c, "Vorplingquast");
    let report = cache(&c);
    assert_eq!(report["enabled"], false, "{report}");
    assert_eq!(report["start"], "disabled", "{report}");
    assert_eq!(num(&report, "writes"), 0, "{report}");
    assert!(report.get("path").is_none(), "{report}");
    drop(c);
    let entries: Vec<_> = fs::read_dir(cache_dir.path()).expect("cache dir").collect();
    assert!(
        entries.is_empty(),
        "--no-cache wrote into the cache dir: {entries:?}"
    );
}

#[test]
fn changes_while_stopped_are_reread_and_nothing_else() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let first = serve(&corpus, &cache_args(cache_dir.path()));
    wait_written(&first);
    let files = num(&first.index_status(), "files");
    drop(first);

    let sessions = corpus.sessions();
    assert!(
        sessions.len() >= 4,
        "fixture corpus too small: {sessions:?}"
    );
    let (appended, rewritten, deleted) = (&sessions[0], &sessions[1], &sessions[2]);
    let deleted_id = deleted.file_stem().unwrap().to_string_lossy().into_owned();
    {
        let plain = serve(&corpus, &["--no-cache"]);
        let h = plain.search_with(json!({"query": "the", "session_id": deleted_id, "limit": 1}));
        assert!(
            h["results"].as_array().is_some_and(|r| !r.is_empty()),
            "the session to delete must have turns: {h}"
        );
    }

    // 1. an append: a new turn with a word found nowhere else
    let mut w = corpus.writer_for(appended);
    w.exchange(
        "Quorblefrantic appended while stopped",
        "Yes, quorblefrantic.",
    );

    // 2. a rewrite of the same size and modification time: only the content hash can tell
    let meta = fs::metadata(rewritten).expect("stat rewritten");
    let mut bytes = fs::read(rewritten).expect("read rewritten");
    // a word of a labelled query on this session becomes a new word of the same length
    let rewritten_id = rewritten
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let old_word = labelled_word(&rewritten_id);
    let new_word: String = "zyxwquvtsrpnmlkjhgfdcb"[..old_word.len()].to_owned();
    let replaced = replace_all(&mut bytes, old_word.as_bytes(), new_word.as_bytes());
    assert!(replaced > 0, "{old_word} not in {}", rewritten.display());
    fs::write(rewritten, &bytes).expect("rewrite");
    let f = fs::File::options()
        .write(true)
        .open(rewritten)
        .expect("open rewritten");
    f.set_modified(meta.modified().expect("mtime"))
        .expect("restore mtime");
    drop(f);
    assert_eq!(fs::metadata(rewritten).unwrap().len(), meta.len());

    // 3. a deleted session, 4. a new session in a new project
    fs::remove_file(deleted).expect("delete");
    let mut n = corpus.writer("-home-dev-brand-new", &common::ids::new_uuid());
    n.exchange(
        "Glimmerwhistle in a brand new project",
        "Glimmerwhistle noted.",
    );

    let extra = ["Quorblefrantic", new_word.as_str(), "Glimmerwhistle"];
    let restored = serve(&corpus, &cache_args(cache_dir.path()));
    let report = cache(&restored);
    assert_eq!(report["start"], "restored", "{report}");
    assert_eq!(
        num(&report, "files_changed"),
        4,
        "append, rewrite, delete, add: {report}"
    );
    assert_eq!(num(&report, "files_reused"), files - 3, "{report}");
    for word in extra {
        assert!(
            !restored.hits(word).is_empty(),
            "{word} not found after restore"
        );
    }
    let gone = restored.err(
        "search_conversations",
        json!({"query": "the", "session_id": deleted_id, "limit": 1}),
    );
    assert!(
        gone.text.contains(&deleted_id),
        "deleted session must be unknown after restore: {}",
        gone.text
    );
    let seen_restored = observe(&restored, &extra);
    // the changes were saved: the next start reuses everything
    wait_written(&restored);
    drop(restored);

    let plain = serve(&corpus, &["--no-cache"]);
    assert_same(
        &seen_restored,
        &observe(&plain, &extra),
        "restored vs --no-cache",
    );
    drop(plain);

    let again = serve(&corpus, &cache_args(cache_dir.path()));
    let report = cache(&again);
    assert_eq!(report["start"], "restored", "{report}");
    assert_eq!(num(&report, "files_changed"), 0, "{report}");
    assert_same(&seen_restored, &observe(&again, &extra), "second restore");
}

/// Turns a good cache file's bytes into damaged ones.
type Mangle = Box<dyn Fn(&[u8]) -> Vec<u8>>;

/// Ways a cache file can be damaged; each must be detected, ignored and rewritten.
fn manglings() -> Vec<(&'static str, Mangle)> {
    vec![
        ("empty", Box::new(|_: &[u8]| Vec::new())),
        ("truncated header", Box::new(|b: &[u8]| b[..10].to_vec())),
        (
            "truncated body",
            Box::new(|b: &[u8]| b[..b.len() / 2].to_vec()),
        ),
        (
            "last byte missing",
            Box::new(|b: &[u8]| b[..b.len() - 1].to_vec()),
        ),
        (
            "flipped byte",
            Box::new(|b: &[u8]| {
                let mut v = b.to_vec();
                let i = v.len() * 2 / 3;
                v[i] ^= 0x5a;
                v
            }),
        ),
        (
            "trailing garbage",
            Box::new(|b: &[u8]| {
                let mut v = b.to_vec();
                v.extend_from_slice(b"garbage after the end");
                v
            }),
        ),
        (
            "other version",
            Box::new(|b: &[u8]| {
                let mut v = b.to_vec();
                v[8] = v[8].wrapping_add(1);
                v
            }),
        ),
        ("not a cache", Box::new(|b: &[u8]| vec![0x42; b.len()])),
    ]
}

#[test]
fn corrupt_truncated_or_foreign_caches_are_rejected_and_rebuilt() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let first = serve(&corpus, &cache_args(cache_dir.path()));
    let path = PathBuf::from(wait_written(&first)["path"].as_str().expect("cache.path"));
    let expected = observe(&first, &[]);
    drop(first);
    let good = fs::read(&path).expect("read cache");

    for (name, mangle) in manglings() {
        fs::write(&path, mangle(&good)).expect("write mangled cache");
        let c = serve(&corpus, &cache_args(cache_dir.path()));
        let report = cache(&c);
        assert_eq!(report["start"], "rejected", "{name}: {report}");
        assert!(
            report["rejected_because"]
                .as_str()
                .is_some_and(|s| !s.is_empty()),
            "{name}: no reason given: {report}"
        );
        assert_same(&expected, &observe(&c, &[]), name);
        wait_written(&c);
        assert!(c.is_alive(), "{name}: server died");
        drop(c);

        let next = serve(&corpus, &cache_args(cache_dir.path()));
        let report = cache(&next);
        assert_eq!(
            report["start"], "restored",
            "{name}: cache not rebuilt: {report}"
        );
        assert_same(&expected, &observe(&next, &[]), name);
    }
}

#[test]
fn servers_starting_together_share_one_cache_safely() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let expected = observe(&serve(&corpus, &["--no-cache"]), &[]);

    let args = cache_args(cache_dir.path());
    let mut full = vec!["--projects-dir", corpus.path()];
    full.extend_from_slice(&args);
    // spawn all before any finishes its first build
    let servers: Vec<McpClient> = (0..4).map(|_| McpClient::spawn(&full, &[])).collect();
    for s in &servers {
        s.initialize();
    }
    for (i, s) in servers.iter().enumerate() {
        s.wait_ready();
        // a server that started after another's first write restores that cache unchanged
        // and has nothing to write; every other one writes once
        let report = match cache(s)["start"].as_str() {
            Some("restored") => cache(s),
            _ => wait_written(s),
        };
        assert!(
            report["start"] == "absent" || report["start"] == "restored",
            "server {i}: {report}"
        );
        assert!(report.get("write_error").is_none(), "server {i}: {report}");
        assert_same(&expected, &observe(s, &[]), &format!("server {i}"));
    }
    drop(servers);

    let later = serve(&corpus, &args);
    let report = cache(&later);
    assert_eq!(report["start"], "restored", "{report}");
    assert_eq!(num(&report, "files_changed"), 0, "{report}");
    assert_same(&expected, &observe(&later, &[]), "after concurrent writers");
    // besides the cache file: each server's writer lock and generations (each keeps history
    // in its own store here, so none follows another)
    let names: Vec<String> = fs::read_dir(cache_dir.path())
        .expect("read cache dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".gen"))
        .collect();
    assert_eq!(
        names.len(),
        1,
        "one cache file, no temporary files: {names:?}"
    );
}

#[test]
fn updates_after_start_are_saved_for_the_next_start() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let mut args = cache_args(cache_dir.path());
    args.extend(["--debounce-ms", "200"]);
    let c = serve(&corpus, &args);
    wait_written(&c);
    let mut w = corpus.writer("-home-dev-live", &common::ids::new_uuid());
    w.exchange("Fennelwraith written while serving", "ok");
    common::live::wait_hits(&c, "Fennelwraith");
    // closing stdin is a clean shutdown: pending index changes are saved before exit
    c.close_stdin();
    poll_until_desc("server exit", Duration::from_secs(20), || {
        c.try_exit_status()
    });
    drop(c);

    let next = serve(&corpus, &cache_args(cache_dir.path()));
    let report = cache(&next);
    assert_eq!(report["start"], "restored", "{report}");
    assert_eq!(
        num(&report, "files_changed"),
        0,
        "the update was saved: {report}"
    );
    assert!(!next.hits("Fennelwraith").is_empty());
}

#[test]
fn appends_after_a_restore_continue_the_file_without_rereading_it() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let first = serve(&corpus, &cache_args(cache_dir.path()));
    wait_written(&first);
    drop(first);

    let mut args = cache_args(cache_dir.path());
    args.extend(["--debounce-ms", "200"]);
    let restored = serve(&corpus, &args);
    assert_eq!(cache(&restored)["start"], "restored");
    let sessions = corpus.sessions();
    let file = &sessions[sessions.len() / 2];
    let sid = file.file_stem().unwrap().to_string_lossy().into_owned();
    let turns_before = restored.read_conversation(&sid)["total_turns"]
        .as_u64()
        .expect("total_turns");
    assert!(turns_before > 0, "{sid} has no turns");

    // a reply that joins the last turn, then a new turn
    let mut w = corpus.writer_for(file);
    w.assistant_text(
        &common::ids::new_msg_id(),
        "Plinthmorrow joins the last turn",
    );
    w.exchange(
        "Vexquadrant starts a new turn",
        "and Vexquadrant is answered",
    );
    let joined = common::live::wait_hits(&restored, "Plinthmorrow");
    assert_eq!(
        joined,
        vec![(sid.clone(), turns_before - 1)],
        "joins the last turn"
    );
    let added = common::live::wait_hits(&restored, "Vexquadrant");
    assert_eq!(
        added,
        vec![(sid.clone(), turns_before)],
        "a new turn after the others"
    );
    let st = common::live::wait_idle(&restored);
    assert_eq!(
        num(&st, "files_reread"),
        0,
        "read again from the start: {st}"
    );
    assert!(num(&st, "files_appended") >= 1, "{st}");

    let extra = ["Plinthmorrow", "Vexquadrant"];
    let mut seen = observe(&restored, &extra);
    seen.push(restored.read_conversation(&sid));
    drop(restored);
    let plain = serve(&corpus, &["--no-cache"]);
    let mut expected = observe(&plain, &extra);
    expected.push(plain.read_conversation(&sid));
    assert_same(&seen, &expected, "restored + appended vs --no-cache");
}

/// A restored index reads its text and postings from the mapped cache file: replacing that
/// file while the server runs (as another server's write does, by rename) or deleting it
/// changes none of its answers.
#[test]
fn a_restored_server_answers_the_same_after_its_cache_file_is_replaced_or_deleted() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let first = serve(&corpus, &cache_args(cache_dir.path()));
    let path = PathBuf::from(wait_written(&first)["path"].as_str().expect("cache.path"));
    drop(first);
    let restored = serve(&corpus, &cache_args(cache_dir.path()));
    assert_eq!(cache(&restored)["start"], "restored");
    let before = observe(&restored, &[]);
    let len = fs::metadata(&path).expect("cache file").len();
    let other = cache_dir.path().join("other-writer.tmp");
    fs::write(&other, vec![0xA5u8; len as usize]).expect("write");
    fs::rename(&other, &path).expect("rename over the cache file");
    let after = observe(&restored, &[]);
    assert_same(&before, &after, "after the cache file was renamed over");
    fs::remove_file(&path).expect("delete the cache file");
    let after = observe(&restored, &[]);
    assert_same(&before, &after, "after the cache file was deleted");
}
