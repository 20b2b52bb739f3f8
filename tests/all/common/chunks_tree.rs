//! Chunked delivery for any `--source` format: a transcript written whole by a test's writer
//! (in a scratch tree) is appended to a watched copy of that tree in arbitrary pieces (cuts
//! inside lines and inside UTF-8 sequences included), and the live server must end up reading
//! its conversations exactly as a fresh server over the finished files does.

use std::fs;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::fixture::tree_snapshot;
use super::formats::{SourceRoot, serve_sources};
use super::live::{append, num, turns, wait_status};
use super::mcp::McpClient;

/// Debounce of the live server.
const DEBOUNCE_MS: &str = "50";

/// Byte positions (1..len) where the file is cut, from proptest's picks.
pub fn cut_points(len: usize, picks: &[prop::sample::Index]) -> Vec<usize> {
    if len < 2 {
        return Vec::new();
    }
    let mut at: Vec<usize> = picks.iter().map(|i| 1 + i.index(len - 1)).collect();
    at.sort_unstable();
    at.dedup();
    at
}

/// Offset just past the last newline of `bytes` (what the server can have read).
fn complete_prefix(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i as u64 + 1)
}

/// Copies every file of `from` into `to` except `skip` (relative), creating directories.
fn copy_tree_except(from: &Path, to: &Path, skip: &Path) {
    for (rel, (is_dir, _, _)) in tree_snapshot(from) {
        let dest = to.join(&rel);
        if is_dir {
            fs::create_dir_all(&dest).expect("copy dir");
        } else if rel != skip {
            fs::create_dir_all(dest.parent().unwrap()).expect("copy parent");
            fs::copy(from.join(&rel), &dest).expect("copy file");
        }
    }
    fs::create_dir_all(to.join(skip).parent().unwrap()).expect("transcript dir");
}

/// What the server says about conversations `ids`: every turn of each (`None` for an id it
/// does not know), and the counts.
fn observe(c: &McpClient, ids: &[String]) -> (Vec<Option<Vec<Value>>>, Vec<Value>) {
    let st = c.index_status();
    let counts = ["turns", "sessions", "subagents", "skipped_lines"]
        .iter()
        .map(|k| st[*k].clone())
        .collect();
    let known = |id: &String| {
        let probe = json!({"session_id": id, "offset": 0, "limit": 1});
        !c.call_tool("read_conversation", probe).is_error
    };
    let convs = ids
        .iter()
        .map(|id| known(id).then(|| turns(c, id)))
        .collect();
    (convs, counts)
}

/// Delivers `<scratch>/<rel>` in pieces cut at `cuts` into a watched copy of the scratch tree
/// and compares the conversations `ids` with a fresh server's reading.
pub fn chunked_equals_whole(
    format: &str,
    scratch: &Path,
    rel: &Path,
    cuts: &[usize],
    ids: &[String],
) {
    let whole = fs::read(scratch.join(rel)).expect("whole transcript");
    let live_root = SourceRoot::new("cs-chunks-");
    copy_tree_except(scratch, live_root.path(), rel);
    let path = live_root.path().join(rel);
    let c = serve_sources(&[live_root.arg(format)], &["--debounce-ms", DEBOUNCE_MS]);
    let base = num(&c.index_status(), "bytes_indexed");
    let mut start = 0;
    for end in cuts.iter().copied().chain([whole.len()]) {
        append(&path, &whole[start..end]);
        start = end;
        let want = base + complete_prefix(&whole[..end]);
        if want > base {
            wait_status(&c, "the chunk read", |st| num(st, "bytes_indexed") == want);
        }
    }
    let live = observe(&c, ids);
    let fresh = observe(&serve_sources(&[live_root.arg(format)], &[]), ids);
    assert_eq!(
        live,
        fresh,
        "{format}: live reading differs from a fresh one with the file in {} pieces",
        cuts.len() + 1
    );
    assert_eq!(live.1[3], 0, "no line skipped: {:?}", live.1);
}
