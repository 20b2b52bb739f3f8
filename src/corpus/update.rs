//! Incremental updates: from a set of changed paths (files or directories, new, modified or
//! gone) to new and dead documents, then segment upkeep and a new snapshot. The cost follows the
//! bytes that changed, not the size of the corpus.
use super::ingest::{FileState, ReadOutcome};
use super::writer::{Batch, ConvUpdate, FileEntry, Writer};
use crate::transcript::{ConvState, SourceFile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

impl Writer {
    /// Applies changes at `paths` (files or directories; created, modified or deleted) and
    /// publishes a new snapshot when anything changed. Returns whether it did.
    pub fn apply(&mut self, paths: &[PathBuf]) -> bool {
        let started = Instant::now();
        let mut targets: BTreeSet<PathBuf> = BTreeSet::new();
        let mut fresh: Vec<SourceFile> = Vec::new();
        for p in paths {
            self.expand(p, &mut targets, &mut fresh);
        }
        self.process(started, targets, fresh)
    }

    /// Full rescan by size and mtime (fallback when file watching is unavailable).
    pub fn poll(&mut self) -> bool {
        let started = Instant::now();
        let found = self.discover();
        let mut targets: BTreeSet<PathBuf> = BTreeSet::new();
        let found_paths: BTreeSet<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        for (path, entry) in &self.files {
            if !found_paths.contains(path.as_path()) || entry.state.looks_changed() {
                targets.insert(path.clone());
            }
        }
        let fresh: Vec<SourceFile> = found
            .into_iter()
            .filter(|f| !self.files.contains_key(&f.path))
            .collect();
        self.process(started, targets, fresh)
    }

    /// Rescan by size and mtime of the directories `dirs` only (those that cannot be watched
    /// while the rest is).
    pub fn poll_dirs(&mut self, dirs: &[PathBuf]) -> bool {
        let started = Instant::now();
        let mut found: BTreeMap<PathBuf, SourceFile> = BTreeMap::new();
        for root in self.roots.iter() {
            for dir in dirs
                .iter()
                .filter(|d| d.starts_with(&root.dir) && d.is_dir())
            {
                for f in root.adapter.discover_under(&root.dir, &root.pattern, dir) {
                    found.entry(f.path.clone()).or_insert(f);
                }
            }
        }
        let mut targets: BTreeSet<PathBuf> = BTreeSet::new();
        for (path, entry) in &self.files {
            let under = dirs.iter().any(|d| path.starts_with(d));
            if under && (!found.contains_key(path) || entry.state.looks_changed()) {
                targets.insert(path.clone());
            }
        }
        let fresh: Vec<SourceFile> = found
            .into_values()
            .filter(|f| !self.files.contains_key(&f.path))
            .collect();
        self.process(started, targets, fresh)
    }

    /// Turns one changed path into files to re-read and new files to add.
    fn expand(&self, p: &Path, targets: &mut BTreeSet<PathBuf>, fresh: &mut Vec<SourceFile>) {
        for root in self.roots.iter() {
            // a root that did not exist may just have appeared (event on an ancestor)
            if root.dir.starts_with(p) && root.dir != p {
                if root.dir.is_dir() {
                    fresh.extend(root.adapter.discover(&root.dir, &root.pattern));
                }
                continue;
            }
            if !p.starts_with(&root.dir) {
                continue;
            }
            if let Some(transcript) = root.adapter.transcript_for(p) {
                // side file: refresh the transcript's description (e.g. sub-agent meta) and
                // re-read it (e.g. a database's `-wal`, a message file of a session unit)
                if let Some(src) = root.adapter.classify(&root.dir, &root.pattern, &transcript) {
                    match self.files.get(&transcript) {
                        Some(e) if *e.src == src => {
                            targets.insert(transcript);
                        }
                        _ => fresh.push(src),
                    }
                }
                continue;
            }
            if self.files.contains_key(p) {
                targets.insert(p.to_owned());
                continue;
            }
            // known files under a directory that changed or went away
            for (known, _) in self
                .files
                .range(p.to_owned()..)
                .take_while(|(k, _)| k.starts_with(p))
            {
                targets.insert(known.clone());
            }
            if p.is_dir() {
                fresh.extend(root.adapter.discover_under(&root.dir, &root.pattern, p));
            } else if p.is_file() {
                fresh.extend(root.adapter.classify(&root.dir, &root.pattern, p));
            }
        }
    }

    /// Applies these changes, publishes them and queues their turns for the store. Returns
    /// whether anything changed.
    pub(super) fn process(
        &mut self,
        started: Instant,
        targets: BTreeSet<PathBuf>,
        fresh: Vec<SourceFile>,
    ) -> bool {
        if !self.take_changes(targets, fresh) {
            return false;
        }
        self.publish(started);
        self.store_flush_some();
        true
    }

    /// Reads changed and new files into the index. Does not publish (a restore publishes once,
    /// with its report). Returns whether anything changed.
    pub(super) fn take_changes(
        &mut self,
        mut targets: BTreeSet<PathBuf>,
        fresh: Vec<SourceFile>,
    ) -> bool {
        let mut batch = Batch::default();
        let mut kills: Vec<(u64, u32)> = Vec::new();
        let mut files_changed = false;
        self.gens.files.extend(targets.iter().cloned());
        self.gens.files.extend(fresh.iter().map(|f| f.path.clone()));
        let added_before = self.stats.files_added;
        let fresh_paths: BTreeSet<PathBuf> = fresh.iter().map(|f| f.path.clone()).collect();
        for src in fresh {
            match self.files.get(&src.path) {
                Some(e) if *e.src == src => continue,
                Some(_) => {
                    // description changed: forget the old reading, read again
                    if let Some(old) = self.files.remove(&src.path) {
                        self.drop_file(&old, &mut kills);
                    }
                }
                None => {}
            }
            files_changed = true;
            self.stats.files_added += 1;
            targets.insert(src.path.clone());
            self.files.insert(src.path.clone(), FileEntry::new(src));
        }
        let mut changed = files_changed;
        let mut touched = self.stats.files_added - added_before;
        // vanished files first: a file renamed or moved within the roots then finds its
        // conversations in the store-only set and takes them over (no duplicate)
        let (gone_paths, live_paths): (Vec<&PathBuf>, Vec<&PathBuf>) =
            targets.iter().partition(|p| !p.exists());
        for path in gone_paths.into_iter().chain(live_paths) {
            let (c, gone) = self.update_path(path, &mut batch, &mut kills);
            changed |= c;
            files_changed |= gone;
            if (c || gone) && !fresh_paths.contains(path) {
                touched += 1;
            }
        }
        self.stats.files_touched += touched;
        if !changed {
            return false;
        }
        if files_changed {
            let groups = self
                .files
                .values()
                .filter_map(|f| f.src.group.clone())
                .collect();
            self.catalog.set_groups(groups);
        }
        self.settle(&mut batch, kills);
        self.stats.updates += 1;
        true
    }

    /// Adds the batch's documents (and stored tails of the conversations just updated), kills
    /// the dead ones and keeps the segments in shape. Does not publish.
    pub(super) fn settle(&mut self, batch: &mut Batch, mut kills: Vec<(u64, u32)>) {
        self.add_stored_tails(batch, &mut kills);
        self.finish_batch(std::mem::take(batch));
        let mut by_seg: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for (seg, doc) in kills {
            by_seg.entry(seg).or_default().push(doc);
        }
        for (seg, mut docs) in by_seg {
            docs.sort_unstable();
            docs.dedup();
            if let Some(i) = self.view.seg_index(seg) {
                let sv = &self.view.segs[i];
                for &d in &docs {
                    if (d as usize) < sv.seg.doc_count() && !sv.dead.contains(d) {
                        self.dups.remove(sv.seg.doc(d).dup_key);
                    }
                }
            }
            self.view.kill(seg, &docs, &mut self.tokenizer);
        }
        self.view.segs.retain(|s| s.live_count() > 0);
        self.maintain_segments();
    }

    /// Applies one conversation's new state read from `entry`. With `single`, a file holding
    /// one conversation keeps its internal id even when the public id changes (a sub-agent
    /// whose parent became known).
    fn apply_state(
        &mut self,
        entry: &mut FileEntry,
        state: ConvState,
        single: bool,
        batch: &mut Batch,
        kills: &mut Vec<(u64, u32)>,
    ) {
        if self.is_forgotten(&state.id) {
            return;
        }
        let conv = match entry.convs.iter().find(|(k, _)| *k == state.id) {
            Some(&(_, c)) => c,
            None if single => {
                entry.convs[0].0 = state.id.clone();
                entry.convs[0].1
            }
            None => {
                // a conversation the store kept (its file vanished, moved or is restored) is
                // taken over under its id, so nothing is doubled
                let c = self.claim_stored(&state.id).unwrap_or_else(|| {
                    let c = self.next_conv;
                    self.next_conv += 1;
                    c
                });
                entry.convs.push((state.id.clone(), c));
                c
            }
        };
        let (update, new_turns) = ConvUpdate::split(state);
        self.update_conversation(entry, conv, update, kills);
        for t in &new_turns {
            batch.add(conv, t);
        }
        self.note_for_store(conv, &new_turns);
    }

    /// Kills every document of a file and forgets its conversations.
    pub(super) fn drop_file(&mut self, entry: &FileEntry, kills: &mut Vec<(u64, u32)>) {
        for &(_, conv) in &entry.convs {
            self.retire(conv, kills);
        }
    }

    /// Reads a known file's news. Returns (anything changed, file removed).
    fn update_path(
        &mut self,
        path: &Path,
        batch: &mut Batch,
        kills: &mut Vec<(u64, u32)>,
    ) -> (bool, bool) {
        let Some(mut entry) = self.files.remove(path) else {
            return (false, false);
        };
        match entry.state.read() {
            ReadOutcome::Unchanged => {
                self.files.insert(path.to_owned(), entry);
                (false, false)
            }
            ReadOutcome::Appended(states) => {
                self.stats.files_appended += 1;
                let single = entry.convs.len() == 1 && states.len() == 1;
                for state in states {
                    self.apply_state(&mut entry, state, single, batch, kills);
                }
                self.files.insert(path.to_owned(), entry);
                (true, false)
            }
            ReadOutcome::Replaced { changed, present } => {
                self.stats.files_reread += 1;
                for state in changed {
                    self.apply_state(&mut entry, state, false, batch, kills);
                }
                let (keep, gone): (Vec<_>, Vec<_>) = entry
                    .convs
                    .drain(..)
                    .partition(|(id, _)| present.contains(id));
                entry.convs = keep;
                for (_, conv) in gone {
                    self.retire(conv, kills);
                }
                self.files.insert(path.to_owned(), entry);
                (true, false)
            }
            ReadOutcome::Rewritten => {
                self.stats.files_reread += 1;
                self.drop_file(&entry, kills);
                let fresh = FileEntry {
                    state: FileState::new((*entry.src).clone()),
                    convs: Vec::new(),
                    src: entry.src,
                };
                self.files.insert(path.to_owned(), fresh);
                let (_, gone) = self.update_path(path, batch, kills);
                (true, gone)
            }
            ReadOutcome::Gone => {
                self.stats.files_removed += 1;
                self.drop_file(&entry, kills);
                (true, true)
            }
        }
    }
}
