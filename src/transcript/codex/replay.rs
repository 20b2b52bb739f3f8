//! The history a Codex rollout replays from another thread, and where it ends.
//!
//! When a thread is forked (`codex fork`, `/fork`, a sub-agent spawned with its parent's
//! context), Codex starts the new rollout with its own `session_meta` (carrying
//! `forked_from_id`) and then persists the origin's rollout items as they are — beginning with
//! the origin's own `session_meta` — before anything the fork does itself. Nothing marks where
//! the copy ends: the copied lines get new envelope timestamps and the fork's first own turn
//! looks like any other turn. So the boundary is found by content: a later `session_meta`
//! with another thread's id opens the replay, and the replay lasts as long as the fork's
//! prompts are prompts the origin has, in the same order (their chained duplicate keys, which
//! hash the whole prompt history, are found in the origin's rollout). The first prompt the
//! origin does not have is the fork's first own turn. The origin is read only as far as needed.
//!
//! When the origin rollout cannot be found (deleted, elsewhere), the replayed turns stay in
//! the fork; they carry the origin's duplicate keys, so search still shows them once.
use super::find_rollout;
use super::parser::CodexParser;
use crate::transcript::LineParser;
use crate::util::hash::FxHashSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The origin rollout of a replayed history, read on demand.
pub struct Origin {
    reader: Option<BufReader<File>>,
    parser: CodexParser,
    keys: FxHashSet<u64>,
    offset: u64,
    line: Vec<u8>,
}

impl Origin {
    /// The rollout of thread `id`, found near the rollout `fork`.
    pub fn open(fork: &Path, id: &str) -> Option<Box<Origin>> {
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
    pub fn has(&mut self, key: u64) -> bool {
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
