//! Black-box tests of redaction and the persistent index: a cache written under other rules
//! (a rules change, simulated with `CONVERSATION_SEARCH_REDACT_EXTRA`, or `--no-redact`) is
//! never reused; it is rejected on start, rebuilt under the rules in force and written over,
//! so its file no longer holds what the new rules redact.

use crate::common::cache::{cache, wait_written};
use crate::common::fixture::ProjectsDir;
use crate::common::mcp::McpClient;
use serde_json::json;
use std::path::{Path, PathBuf};

const SESSION: &str = "ca5e0000-0000-4000-8000-000000000000";

/// Every file of the cache directory: (path, bytes).
/// Every file under the cache directory with its bytes (generations included; the empty
/// writer-lock files left out).
fn cache_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for e in std::fs::read_dir(dir).expect("cache dir").flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(cache_files(&path));
        } else if e.file_name() != "writer.lock" {
            out.push((path.clone(), std::fs::read(&path).expect("cache file")));
        }
    }
    out.sort();
    out
}

fn holds(files: &[(PathBuf, Vec<u8>)], needle: &str) -> bool {
    files
        .iter()
        .any(|(_, b)| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

/// A server over `dir` with its cache in `cache_dir`, once it has written the cache (a restore
/// that changed nothing writes nothing: `written` false).
fn start_with(
    dir: &ProjectsDir,
    cache_dir: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
    written: bool,
) -> McpClient {
    let mut args = vec![
        "--projects-dir",
        dir.path_str(),
        "--cache-dir",
        cache_dir.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let c = McpClient::spawn(&args, env);
    c.initialize();
    c.wait_ready();
    if written {
        wait_written(&c);
    }
    c
}

fn start(dir: &ProjectsDir, cache_dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> McpClient {
    start_with(dir, cache_dir, extra, env, true)
}

fn corpus(text: &str) -> ProjectsDir {
    let dir = ProjectsDir::new();
    let mut s = dir.project("-work-app").session(SESSION);
    s.exchange(&format!("deploymark with {text}"), "done");
    dir
}

#[test]
fn a_rules_change_re_redacts_the_cache_written_before_it() {
    // an in-house secret shape no built-in rule knows: stored as written under rules N
    let secret = format!("zq-{}", 483_920_175 + u64::from(std::process::id() % 1000));
    let dir = corpus(&format!("the deploy code {secret} ok"));
    let cache_dir = tempfile::tempdir().expect("cache dir");

    let before = start(&dir, cache_dir.path(), &[], &[]);
    assert_eq!(cache(&before)["start"], "absent");
    assert!(
        !before.hits(&secret).is_empty(),
        "not a secret under rules N"
    );
    let old = cache_files(cache_dir.path());
    assert!(holds(&old, &secret), "rules N store it as written");
    drop(before);

    // rules N+1 know it: the cache of rules N is not reused but rebuilt, and written over
    let env = [("CONVERSATION_SEARCH_REDACT_EXTRA", r"zq-[0-9]{9}")];
    let after = start(&dir, cache_dir.path(), &[], &env);
    let status = cache(&after);
    assert_eq!(status["start"], "rejected", "{status}");
    assert!(
        after.hits(&secret).is_empty(),
        "searchable after the rules change"
    );
    let turn = after.read_turn(SESSION, 0).to_string();
    assert!(
        !turn.contains(&secret) && turn.contains("[REDACTED:extra]"),
        "{turn}"
    );
    let new = cache_files(cache_dir.path());
    assert!(!holds(&new, &secret), "the old text survived on disk");
    let paths = |f: &[(PathBuf, Vec<u8>)]| f.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(
        paths(&old),
        paths(&new),
        "the same file, rewritten: none left beside it"
    );
    drop(after);

    // unchanged rules: the new cache is reused as is
    let again = start_with(&dir, cache_dir.path(), &[], &env, false);
    assert_eq!(cache(&again)["start"], "restored");
    assert!(again.hits(&secret).is_empty());
}

#[test]
fn no_redact_and_redact_never_share_a_cache() {
    let token = format!("{}{}", "ghp_", "Q7kz2mR8sZiAMfQyuvBjMqQfNXo8Lw3dHe5P");
    let dir = corpus(&format!("GH_TOKEN={token}"));
    let cache_dir = tempfile::tempdir().expect("cache dir");

    let unsafe_run = start(&dir, cache_dir.path(), &["--no-redact"], &[]);
    assert!(!unsafe_run.hits(&token).is_empty());
    assert!(holds(&cache_files(cache_dir.path()), &token));
    drop(unsafe_run);

    let safe = start(&dir, cache_dir.path(), &[], &[]);
    assert_eq!(cache(&safe)["start"], "rejected");
    assert!(safe.hits(&token).is_empty());
    let found = safe.search_with(json!({"query": "deploymark"})).to_string();
    assert!(found.contains("[REDACTED:github_token]"), "{found}");
    let files = cache_files(cache_dir.path());
    assert_eq!(files.len(), 1, "one cache file");
    assert!(
        !holds(&files, &token),
        "the unredacted cache was not replaced"
    );
}
