//! Helpers for the live-index tests: servers with a short debounce, waiting (with deadlines)
//! until the index has caught up with the files, byte-level file edits, timing checks that
//! never assert after a fixed sleep, and comparisons with a freshly started server.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::fixture::{ProjectsDir, SessionWriter};
use super::mcp::{McpClient, hit_keys};
use super::{Served, poll_until_desc, serve_with};

/// The debounce most live tests run with.
pub const DEBOUNCE_MS: u64 = 300;
/// Allowance on top of a timing bound, for slow CI machines.
pub const MARGIN: Duration = Duration::from_secs(3);
/// Deadline for waits that are not timing assertions.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Starts a server over `dir` with `--debounce-ms debounce_ms` plus `extra` and waits for the
/// first build.
pub fn serve_live(dir: ProjectsDir, debounce_ms: u64, extra: &[&str]) -> Served {
    let ms = debounce_ms.to_string();
    let mut args = vec!["--debounce-ms", ms.as_str()];
    args.extend_from_slice(extra);
    serve_with(dir, &args)
}

/// Starts a server over an arbitrary path (which may not exist yet).
pub fn serve_path(projects_dir: &Path, debounce_ms: u64, extra: &[&str]) -> McpClient {
    let ms = debounce_ms.to_string();
    let mut args = vec!["--debounce-ms", ms.as_str()];
    args.extend_from_slice(extra);
    McpClient::indexed(projects_dir, &args)
}

/// An unsigned field of an `index_status` reply.
#[track_caller]
pub fn num(st: &Value, key: &str) -> u64 {
    st[key]
        .as_u64()
        .unwrap_or_else(|| panic!("index_status.{key} is not an unsigned integer: {st}"))
}

/// Polls `index_status` until `pred` holds.
pub fn wait_status(c: &McpClient, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    poll_until_desc(what, DEADLINE, || {
        let st = c.index_status();
        pred(&st).then_some(st)
    })
}

/// Polls until no change is waiting for its debounce period.
pub fn wait_idle(c: &McpClient) -> Value {
    wait_status(c, "pending_changes == 0", |st| {
        num(st, "pending_changes") == 0
    })
}

/// Polls until `query` has at least one hit; returns the hits.
pub fn wait_hits(c: &McpClient, query: &str) -> Vec<(String, u64)> {
    wait_hits_within(c, query, DEADLINE)
}

/// Polls until `query` has at least one hit, failing after `deadline`.
pub fn wait_hits_within(c: &McpClient, query: &str, deadline: Duration) -> Vec<(String, u64)> {
    poll_until_desc(&format!("a hit for {query:?}"), deadline, || {
        let h = c.hits(query);
        (!h.is_empty()).then_some(h)
    })
}

/// Polls until `query` has no hit.
pub fn wait_no_hits(c: &McpClient, query: &str) {
    poll_until_desc(&format!("no hit for {query:?}"), DEADLINE, || {
        c.hits(query).is_empty().then_some(())
    })
}

/// Searches for `query` every ~5 ms until it has a hit; returns when (the moment the reply
/// arrived). Fails once `deadline` has passed.
pub fn visible_at(c: &McpClient, query: &str, deadline: Instant) -> Instant {
    loop {
        if !c.hits(query).is_empty() {
            return Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "{query:?} not searchable by its deadline\nstderr tail:\n{}",
            super::tail(&c.stderr_text(), 2000)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Checks that `query` has no hit in replies that arrive before `until` (the earliest moment
/// the server may legitimately apply the change). Searches until shortly before `until`;
/// replies arriving later prove nothing and are ignored. Returns how many replies counted:
/// 0 on a machine too slow to ask in time, when nothing was checked, so the caller must retry
/// or fail (never pass) on 0.
#[must_use = "0 means nothing was checked: retry or fail"]
pub fn assert_invisible_until(c: &McpClient, query: &str, until: Instant) -> usize {
    let mut counted = 0;
    loop {
        let sent = Instant::now();
        if sent + Duration::from_millis(15) >= until {
            return counted;
        }
        let hits = c.hits(query);
        if Instant::now() < until {
            assert!(
                hits.is_empty(),
                "{query:?} became searchable {:?} before the debounce period could have ended: {hits:?}",
                until - Instant::now()
            );
            counted += 1;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Appends raw bytes to a file (created if missing), in one write.
pub fn append(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.write_all(bytes).expect("append");
    f.flush().expect("flush");
}

/// Overwrites a file from its start without truncating it first (so its size never drops
/// below the bytes already read), then truncates to `bytes.len()` if it was longer.
pub fn overwrite_in_place(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.seek(SeekFrom::Start(0)).expect("seek");
    f.write_all(bytes).expect("write");
    f.set_len(bytes.len() as u64).expect("set_len");
    f.flush().expect("flush");
}

/// The bytes `f` writes through a session writer for `session_id` (rendered in a scratch
/// directory), for tests that deliver records in pieces.
pub fn render(session_id: &str, f: impl FnOnce(&mut SessionWriter)) -> Vec<u8> {
    let scratch = ProjectsDir::new();
    let mut w = scratch.project("-scratch").session(session_id);
    f(&mut w);
    fs::read(w.path()).unwrap_or_default()
}

/// Total size of the `.jsonl` files below `root` (what `bytes_indexed` reaches once every
/// complete line of every transcript has been read).
pub fn jsonl_bytes(root: &Path) -> u64 {
    super::fixture::tree_snapshot(root)
        .iter()
        .filter(|(p, (is_dir, _, _))| !is_dir && p.extension().is_some_and(|e| e == "jsonl"))
        .map(|(_, (_, len, _))| len)
        .sum()
}

/// Polls until every byte of the `.jsonl` files below `root` is indexed and nothing is
/// pending (only meaningful when every file ends with a newline).
pub fn wait_caught_up(c: &McpClient, root: &Path) -> Value {
    poll_until_desc(
        "bytes_indexed == size of the .jsonl files",
        DEADLINE,
        || {
            let want = jsonl_bytes(root);
            let st = c.index_status();
            (num(&st, "bytes_indexed") == want && num(&st, "pending_changes") == 0).then_some(st)
        },
    )
}

/// `(total, (session, turn) → score)` of a search (limit 100).
pub type Scores = (u64, BTreeMap<(String, u64), f64>);

pub fn scores(c: &McpClient, query: &str) -> Scores {
    let r = c.search_with(json!({"query": query, "limit": 100, "max_chars": 60000}));
    assert_eq!(r["truncated"], false, "{query:?}: reply truncated: {r}");
    let keys = hit_keys(&r);
    let map = keys
        .into_iter()
        .zip(r["results"].as_array().expect("results"))
        .map(|(k, hit)| (k, hit["score"].as_f64().expect("score")))
        .collect();
    (r["total"].as_u64().expect("total"), map)
}

/// Scores of every query.
pub fn score_table(c: &McpClient, queries: &[&str]) -> BTreeMap<String, Scores> {
    queries
        .iter()
        .map(|q| (q.to_string(), scores(c, q)))
        .collect()
}

/// Differences between two score tables (empty when equal to 4 decimals).
pub fn table_diff(live: &BTreeMap<String, Scores>, fresh: &BTreeMap<String, Scores>) -> String {
    let mut out = String::new();
    for (q, (ftotal, fmap)) in fresh {
        let Some((ltotal, lmap)) = live.get(q) else {
            out += &format!("{q:?}: missing\n");
            continue;
        };
        if ltotal != ftotal {
            out += &format!("{q:?}: total {ltotal} live vs {ftotal} fresh\n");
        }
        for (k, fs) in fmap {
            match lmap.get(k) {
                None => out += &format!("{q:?} {k:?}: only fresh ({fs})\n"),
                Some(ls) if (ls - fs).abs() > 1e-9 => {
                    out += &format!("{q:?} {k:?}: score {ls} live vs {fs} fresh\n")
                }
                _ => {}
            }
        }
        for (k, ls) in lmap {
            if !fmap.contains_key(k) {
                out += &format!("{q:?} {k:?}: only live ({ls})\n");
            }
        }
    }
    out
}

/// What a fresh server over the same directory (same extra args) says; the live server must
/// reach exactly that (every result's score equal to 4 decimals), within the deadline.
/// Returns the fresh table.
pub fn assert_converges_to_fresh(
    live: &McpClient,
    projects_dir: &Path,
    extra: &[&str],
    queries: &[&str],
) -> BTreeMap<String, Scores> {
    let fresh = McpClient::indexed(projects_dir, extra);
    let want = score_table(&fresh, queries);
    let fresh_status = fresh.index_status();
    drop(fresh);
    let start = Instant::now();
    loop {
        let got = score_table(live, queries);
        let diff = table_diff(&got, &want);
        let st = live.index_status();
        let counts_same = ["turns", "sessions", "subagents", "files", "projects"]
            .iter()
            .all(|k| st[k] == fresh_status[k]);
        if diff.is_empty() && counts_same {
            return want;
        }
        if start.elapsed() > DEADLINE {
            panic!(
                "live index never matched a fresh server over the same files:\n{diff}\nlive status: {st}\nfresh status: {fresh_status}\nstderr tail:\n{}",
                super::tail(&live.stderr_text(), 2000)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every turn of a conversation as `{turn_number, user_text, assistant_text, tools_used,
/// timestamp}` (read in pages of 100, up to 60000 characters each).
pub fn turns(c: &McpClient, session_id: &str) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        let r = c.ok(
            "read_conversation",
            json!({"session_id": session_id, "offset": out.len(), "limit": 100, "max_chars": 60000}),
        );
        let page = r["turns"].as_array().expect("turns array");
        for t in page {
            assert_eq!(t["truncated"], false, "turn truncated: {t}");
            out.push(json!({
                "turn_number": t["turn_number"],
                "user_text": t["user_text"],
                "assistant_text": t["assistant_text"],
                "tools_used": t["tools_used"],
                "timestamp": t["timestamp"],
            }));
        }
        let total = r["total_turns"].as_u64().expect("total_turns") as usize;
        if page.is_empty() || out.len() >= total {
            return out;
        }
    }
}

/// A search term unique to the test: `prefix` followed by `n` in letters (`a`, `b`, …,
/// `ba`, …), then `0`. Letters and a digit: the tokenizer never splits it into shared parts,
/// and it is no English word, so no other tag is a form of it (`index::forms`).
pub fn tag(prefix: &str, n: usize) -> String {
    let mut digits = Vec::new();
    let mut n = n;
    loop {
        digits.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    format!("{prefix}{}0", String::from_utf8(digits).expect("ascii"))
}
