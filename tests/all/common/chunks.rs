//! Chunked delivery for any `--source` format: one transcript file written in pieces (cut
//! anywhere, inside lines and inside UTF-8 sequences) while a server watches ends up with the
//! same conversations and turns as the whole file read by a fresh server.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::formats::serve_sources;
use super::live::{num, turns, wait_status};
use super::mcp::McpClient;

/// Debounce of the watching server.
const DEBOUNCE_MS: &str = "50";

/// Byte positions where a file of `len` bytes is cut: the picked ones.
pub fn cut_points(len: usize, picks: &[proptest::sample::Index]) -> Vec<usize> {
    let mut at: Vec<usize> = picks
        .iter()
        .filter(|_| len > 1)
        .map(|i| 1 + i.index(len - 1))
        .collect();
    at.sort_unstable();
    at.dedup();
    at
}

/// Offset just past the last newline of `bytes`.
fn complete_prefix(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i as u64 + 1)
}

/// Every listed conversation with its turns, sorted by id.
pub fn snapshot(c: &McpClient) -> Vec<(String, Value, Vec<Value>)> {
    let list = c.list(json!({"limit": 100}));
    let mut rows: Vec<(String, Value, Vec<Value>)> = list["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .map(|r| {
            let id = r["session_id"].as_str().expect("id").to_string();
            let row = json!({"summary": r["summary"], "turn_count": r["turn_count"],
                "cwd": r["cwd"], "git_branch": r["git_branch"]});
            let t = turns(c, &id);
            (id, row, t)
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// Writes `whole` to `root/rel` in pieces cut at `cuts` under a watching server of `format`
/// (a `unit` format re-reads the whole file, so every piece is awaited; a line format reads
/// complete lines only), then checks the result equals a fresh server's reading of the whole
/// file. Returns the conversations seen.
pub fn check(
    format: &str,
    root: &Path,
    rel: &Path,
    whole: &[u8],
    cuts: &[usize],
    unit: bool,
) -> Vec<(String, Value, Vec<Value>)> {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    let arg = format!("{format}:{}", root.display());
    let c = serve_sources(std::slice::from_ref(&arg), &["--debounce-ms", DEBOUNCE_MS]);
    let base = num(&c.index_status(), "bytes_indexed");
    let mut start = 0;
    let mut read = 0;
    for end in cuts.iter().copied().chain([whole.len()]) {
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("open");
        f.write_all(&whole[start..end]).expect("append");
        f.flush().expect("flush");
        drop(f);
        start = end;
        let want = if unit {
            end as u64
        } else {
            complete_prefix(&whole[..end])
        };
        if want > read {
            wait_status(&c, "the piece read", |st| {
                num(st, "bytes_indexed") == base + want && num(st, "pending_changes") == 0
            });
            read = want;
        } else {
            std::thread::sleep(Duration::from_millis(80));
        }
    }
    let live = snapshot(&c);
    let fresh = serve_sources(&[arg], &[]);
    let whole_read = snapshot(&fresh);
    assert_eq!(
        live, whole_read,
        "live (pieces at {cuts:?}) differs from a fresh reading"
    );
    assert_eq!(c.index_status()["skipped_lines"], 0);
    live
}
