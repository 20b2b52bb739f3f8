//! OpenAI Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, older flat
//! `sessions/rollout-*.jsonl`, and `archived_sessions/rollout-*.jsonl`): the adapter, recursive
//! discovery, and finding a rollout by thread id (the origin a fork replays).
//!
//! The default source covers both `sessions/` and `archived_sessions/`: archiving moves a
//! rollout between them without changing its name or its `session_meta` id, so the
//! conversation keeps its id. The line parser lives in [`parser`]; the replayed-history rule of
//! forks is [`Origin`]'s.
mod parser;

pub(crate) use parser::CodexParser;

use super::dir::{sorted_entries, walk_sorted};
use super::{Adapter, LineParser, Reader, Role, SourceFile};
use crate::util::glob::Glob;
use crate::util::time::format_iso;
use rustc_hash::FxHashSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

pub(crate) const FORMAT: &str = "codex";

/// How deep below the root rollouts are looked for (`YYYY/MM/DD` plus slack).
const MAX_DEPTH: usize = 5;

/// Where rollouts live under the Codex home, and where archived ones are moved to.
const SESSIONS: &str = "sessions";
const ARCHIVED: &str = "archived_sessions";

/// The Codex CLI adapter.
pub(crate) struct Codex;

/// `$CODEX_HOME` when set (as Codex itself does), else `~/.codex`.
fn codex_home(home: &Path) -> PathBuf {
    match std::env::var_os("CODEX_HOME").map(PathBuf::from) {
        Some(d) if d.is_absolute() => d,
        _ => home.join(".codex"),
    }
}

impl Adapter for Codex {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        codex_home(home).join(SESSIONS)
    }

    /// Live and archived rollouts.
    fn default_roots(&self, home: &Path) -> Result<Vec<PathBuf>, &'static str> {
        let h = codex_home(home);
        Ok(vec![h.join(SESSIONS), h.join(ARCHIVED)])
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        walk_sorted(root, root, walk)
    }

    fn discover_under(&self, root: &Path, _pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        walk_sorted(root, dir, walk)
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let depth = path.strip_prefix(root).ok()?.iter().count();
        (1..=MAX_DEPTH + 1).contains(&depth).then(|| source(path))?
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(CodexParser::new(file)))
    }
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<SourceFile>) {
    for e in sorted_entries(dir) {
        if e.is_dir {
            if depth < MAX_DEPTH {
                walk(&e.path, depth + 1, out);
            }
        } else {
            out.extend(source(&e.path));
        }
    }
}

/// The thread id in a rollout's file name: the last 36 characters of
/// `rollout-<YYYY-MM-DDThh-mm-ss>-<uuid>.jsonl` when they look like a uuid, else the whole stem.
fn file_id(name: &str) -> Option<&str> {
    let stem = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    let id = match stem.len().checked_sub(36).and_then(|i| stem.get(i..)) {
        Some(uuid) if stem.len() > 37 && uuid.bytes().filter(|&b| b == b'-').count() == 4 => uuid,
        _ => stem,
    };
    (!id.is_empty()).then_some(id)
}

/// A rollout file → a session whose id is the uuid of its name (the file's `session_meta` id
/// replaces it once read).
fn source(path: &Path) -> Option<SourceFile> {
    let id = file_id(path.file_name()?.to_str()?)?;
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: None,
        role: Role::Session {
            id: format!("{FORMAT}:{id}"),
        },
    })
}

/// Whether `name` is a two- or four-digit date component (`2026`, `05`).
fn is_date_part(name: &str) -> bool {
    matches!(name.len(), 2 | 4) && name.bytes().all(|b| b.is_ascii_digit())
}

/// The rollout directory a file belongs to: the parent of its `YYYY/MM/DD` directories, else
/// the directory holding it.
fn rollout_root(file: &Path) -> Option<&Path> {
    let dir = file.parent()?;
    let dated = dir.ancestors().take(3).all(|a| {
        a.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_date_part)
    });
    match dated {
        true => dir.ancestors().nth(3),
        false => Some(dir),
    }
}

/// The `YYYY/MM/DD` directories where a rollout of thread `id` can be: Codex names threads
/// with UUIDv7s (their first 48 bits are the creation time in epoch ms) and files them by the
/// local date, so the UTC date of the id and the days either side.
fn dated_dirs(root: &Path, id: &str) -> Vec<PathBuf> {
    let hex: String = id.chars().filter(|c| *c != '-').take(12).collect();
    let Ok(ms) = i64::from_str_radix(&hex, 16) else {
        return Vec::new();
    };
    if hex.len() != 12 || id.as_bytes().get(14) != Some(&b'7') {
        return Vec::new();
    }
    (-1..=1)
        .map(|day| {
            let iso = format_iso(ms + day * 86_400_000);
            root.join(&iso[0..4]).join(&iso[5..7]).join(&iso[8..10])
        })
        .collect()
}

/// The rollout of thread `id`, looked for near `file` (another rollout): in the same directory,
/// in the dated directories of the id, and in the sibling `sessions`/`archived_sessions`.
pub(crate) fn find_rollout(file: &Path, id: &str) -> Option<PathBuf> {
    let root = rollout_root(file)?;
    let mut roots = vec![root.to_owned()];
    if let (Some(home), Some(name)) = (root.parent(), root.file_name()) {
        for sibling in [SESSIONS, ARCHIVED] {
            if name != sibling {
                roots.push(home.join(sibling));
            }
        }
    }
    let mut dirs: Vec<PathBuf> = file.parent().map(Path::to_owned).into_iter().collect();
    for r in &roots {
        dirs.push(r.clone());
        dirs.extend(dated_dirs(r, id));
    }
    dirs.dedup();
    let wanted = |name: &str| file_id(name) == Some(id);
    dirs.iter().find_map(|d| {
        sorted_entries(d)
            .into_iter()
            .find(|e| !e.is_dir && wanted(&e.name) && e.path != file)
            .map(|e| e.path)
    })
}

/// The origin rollout of a replayed history, read on demand: the history a Codex rollout
/// replays from another thread, and where it ends.
///
/// When a thread is forked (`codex fork`, `/fork`, a sub-agent spawned with its parent's
/// context), Codex starts the new rollout with its own `session_meta` (carrying
/// `forked_from_id`) and then persists the origin's rollout items as they are — beginning with
/// the origin's own `session_meta` — before anything the fork does itself. Nothing marks where
/// the copy ends: the copied lines get new envelope timestamps and the fork's first own turn
/// looks like any other turn. So the boundary is found by content: the fork's
/// `forked_from_id` (or a later `session_meta` with another thread's id) opens the replay, the
/// fork's prompt keys are chained from the origin's history, and the replay lasts as long as
/// the fork's prompts are prompts the origin has, in the same order (their chained duplicate
/// keys, which hash the whole prompt history, are found in the origin's rollout). The first
/// prompt the origin does not have is the fork's first own turn. The origin is read only as far
/// as needed.
///
/// When the origin rollout cannot be found (deleted, elsewhere), the replayed turns stay in
/// the fork; they carry the origin's duplicate keys, so search still shows them once.
pub(crate) struct Origin {
    reader: Option<BufReader<File>>,
    parser: CodexParser,
    keys: FxHashSet<u64>,
    offset: u64,
    line: Vec<u8>,
}

impl Origin {
    /// The rollout of thread `id`, found near the rollout `fork`.
    pub(crate) fn open(fork: &Path, id: &str) -> Option<Box<Origin>> {
        let path = find_rollout(fork, id)?;
        let file = File::open(&path).ok()?;
        tracing::debug!(origin = %path.display(), fork = %fork.display(), "reading the origin of a replayed history");
        Some(Box::new(Origin {
            reader: Some(BufReader::new(file)),
            parser: CodexParser::keys_only(),
            keys: FxHashSet::default(),
            offset: 0,
            line: Vec::new(),
        }))
    }

    /// Whether the origin holds a prompt with the chained key `key`, reading on as needed.
    pub(crate) fn has(&mut self, key: u64) -> bool {
        while !self.keys.contains(&key) {
            if !self.read_line() {
                return false;
            }
        }
        true
    }

    /// Feeds the origin's next complete line; false at its end.
    fn read_line(&mut self) -> bool {
        let Some(reader) = self.reader.as_mut() else {
            return false;
        };
        self.line.clear();
        match reader.read_until(b'\n', &mut self.line) {
            Ok(n) if n > 0 && self.line.ends_with(b"\n") => {
                let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                // an unreadable line is skipped here as it is when the origin is indexed
                let _ = self.parser.feed_line(self.offset, line);
                self.offset += n as u64;
                self.keys.extend(self.parser.take_keys());
                true
            }
            _ => {
                self.reader = None;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roots_and_dates() {
        let uuid = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000";
        let path = format!("/s/2026/01/02/rollout-2026-01-02T10-00-00-{uuid}.jsonl");
        let id = format!("codex:{uuid}");
        assert_eq!(source(Path::new(&path)).unwrap().role, Role::Session { id });
        assert_eq!(rollout_root(Path::new(&path)), Some(Path::new("/s")));
        let flat = "/h/archived_sessions/rollout-x.jsonl";
        assert_eq!(
            rollout_root(Path::new(flat)),
            Some(Path::new("/h/archived_sessions"))
        );
        // 0x0199aaaabbbb ms = 2025-10-03T15:22Z
        let dirs = dated_dirs(Path::new("/s"), uuid);
        assert_eq!(dirs[1], Path::new("/s/2025/10/03"), "{dirs:?}");
        assert!(dated_dirs(Path::new("/s"), "not-a-uuid").is_empty());
    }
}
