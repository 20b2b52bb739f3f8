//! A one-shot start for the session digest (`context`, run by a SessionStart hook): the catalog
//! from the persistent index's head section (the segments are never decoded), the files whose
//! size or mtime moved since read again, then only the sessions the digest shows read from
//! their transcripts. The state is partial, so nothing is written back to the cache.
use super::catalog::ConvId;
use super::project::Scope;
use super::saved::read_head;
use super::writer::{Batch, FileEntry, Writer};
use crate::cache::Cache;
use crate::util::blob::Blob;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Times the digest's sessions are looked up again when reading them moved the selection (a
/// file that changed while it was read).
const ROUNDS: usize = 3;

impl Writer {
    /// Starts from the cache's catalog alone and publishes a complete snapshot whose index holds
    /// only the documents of files read since. Returns false, having done nothing, when there is
    /// no usable cache file (then use [`Writer::start`], which also reports why).
    pub fn start_from_catalog(&mut self, cache: &Cache) -> bool {
        let started = Instant::now();
        let head = match cache
            .open_head()
            .and_then(|h| h.map(|b| read_head(Blob::from(b))).transpose())
        {
            Ok(Some(head)) => head,
            Ok(None) => return false,
            Err(e) => {
                tracing::debug!("cannot start from `{}`: {e}", cache.path().display());
                return false;
            }
        };
        self.install_head(head);
        self.complete = true;
        let found = self.discover();
        let found_paths: BTreeSet<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        let mut targets: BTreeSet<PathBuf> = BTreeSet::new();
        let mut stale: Vec<PathBuf> = Vec::new();
        for (path, entry) in &self.files {
            if !found_paths.contains(path.as_path()) {
                targets.insert(path.clone());
            } else if entry.state.looks_changed() {
                stale.push(path.clone());
            }
        }
        let fresh = found
            .into_iter()
            .filter(|f| self.files.get(&f.path).is_none_or(|e| *e.src != *f))
            .collect();
        let changed = stale.len();
        for path in stale {
            self.read_again(&path, &mut targets);
        }
        if !self.process(started, targets, fresh) {
            self.publish(started);
        }
        tracing::debug!(
            files = self.files.len(),
            changed,
            ms = started.elapsed().as_millis() as u64,
            "catalog restored from `{}`",
            cache.path().display()
        );
        true
    }

    /// Makes sure the `n` sessions [`super::Snapshot::recent`] selects for `scope` have their
    /// documents in the index: the files holding the others are read again.
    pub fn read_recent(&mut self, scope: Scope, n: usize) {
        self.load_recent_stored(scope, n);
        for _ in 0..ROUNDS {
            let snap = self.shared.snapshot();
            let missing: BTreeSet<PathBuf> = snap
                .recent(scope, n)
                .iter()
                .filter(|c| c.followed && !self.books.contains_key(&c.conv))
                .map(|c| c.file.path.clone())
                .collect();
            if missing.is_empty() {
                return;
            }
            let mut targets = BTreeSet::new();
            for path in &missing {
                self.read_again(path, &mut targets);
            }
            if !self.process(Instant::now(), targets, Vec::new()) {
                return;
            }
        }
    }

    /// The digest's sessions that only the durable store holds (their transcript is gone): their
    /// turns come from the store (nothing without one).
    fn load_recent_stored(&mut self, scope: Scope, n: usize) {
        let snap = self.shared.snapshot();
        let stored: Vec<(ConvId, u32)> = snap
            .recent(scope, n)
            .iter()
            .filter(|c| !c.followed && !self.books.contains_key(&c.conv))
            .map(|c| (c.conv, c.turn_count))
            .collect();
        if stored.is_empty() || !self.has_archive() {
            return;
        }
        let started = Instant::now();
        let mut batch = Batch::default();
        let mut kills = Vec::new();
        for (conv, to) in stored {
            self.load_stored_turns(conv, 0, to, &mut batch, &mut kills);
        }
        self.settle(&mut batch, kills);
        self.publish(started);
    }

    /// Forgets what was read of a file (its conversations leave the catalog) so that `process`
    /// reads it whole: its earlier turns are in segments this start does not hold.
    fn read_again(&mut self, path: &Path, targets: &mut BTreeSet<PathBuf>) {
        let Some(old) = self.files.remove(path) else {
            return;
        };
        let mut kills: Vec<(u64, ConvId)> = Vec::new();
        self.drop_file(&old, &mut kills);
        self.files
            .insert(path.to_owned(), FileEntry::new((*old.src).clone()));
        targets.insert(path.to_owned());
    }
}
