//! What the index holds and how news changes it: the followed files ([`Files`]), the
//! catalog ([`Catalog`]), the document index ([`DocIndex`]) and the link to the durable store
//! ([`StoreSync`]), with the steps that apply what transcripts (and the store) say to all of
//! them together: a file's news to its conversations, a conversation's turns to the documents
//! and the store's backlog, a vanished transcript to the store-only set, the first build's
//! hand-overs. The writer ([`super::writer`]) says when.
use super::Root;
use super::build::Chunk;
use super::cache_file::Rechecked;
use super::cache_head::Head;
use super::catalog::{Catalog, ConvId, ConvUpdate};
use super::doc_index::DocIndex;
use super::files::{Changes, FileEntry, Files};
use super::ingest::ReadOutcome;
use super::publish::Parts;
use super::store_sync::StoreSync;
use crate::transcript::ConvState;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The index's contents, each part owning its state.
pub(super) struct Contents {
    pub(super) files: Files,
    pub(super) catalog: Catalog,
    pub(super) docs: DocIndex,
    /// The durable store, unless `--no-store` (or it could not be opened).
    pub(super) store: Option<StoreSync>,
}

impl Contents {
    pub(super) fn new(roots: Vec<Root>) -> Self {
        Contents {
            files: Files::new(roots),
            catalog: Catalog::default(),
            docs: DocIndex::default(),
            store: None,
        }
    }

    /// The parts a snapshot is made of.
    pub(super) fn parts(&mut self) -> Parts<'_> {
        Parts {
            files: &self.files,
            catalog: &self.catalog,
            docs: &mut self.docs,
            store: self.store.as_ref(),
        }
    }

    /// Nothing changed since: the files and locations noted as changed are forgotten.
    pub(super) fn clear_changed(&mut self) {
        self.files.clear_changed();
        self.docs.clear_changed();
    }

    /// Commits everything that waits for the store (writer only). Returns whether it committed.
    pub(super) fn store_flush(&mut self) -> bool {
        let catalog = &self.catalog;
        self.store.as_mut().is_some_and(|s| s.flush(catalog))
    }

    /// The store's tick (see [`StoreSync::tick`]); when it changed the index, the update is
    /// settled. Returns whether it did.
    pub(super) fn store_tick(&mut self) -> bool {
        let Some(store) = self.store.as_mut() else {
            return false;
        };
        let roots = Arc::clone(self.files.roots());
        if !store.tick(&mut self.catalog, &mut self.docs, &roots) {
            return false;
        }
        self.settle();
        true
    }

    /// Commits a slice of what waits for the store (all of a small backlog).
    pub(super) fn store_flush_some(&mut self) -> bool {
        let catalog = &self.catalog;
        self.store.as_mut().is_some_and(|s| s.flush_some(catalog))
    }

    /// At the start, before the index says it is complete: store-only conversations join,
    /// stored tails are added, forgotten conversations leave. Does not publish.
    pub(super) fn store_start(&mut self) {
        let Some(store) = self.store.as_mut() else {
            return;
        };
        let roots = Arc::clone(self.files.roots());
        store.start(&mut self.catalog, &mut self.docs, &roots);
        self.settle();
    }

    pub(super) fn index_unfollowed(&mut self) {
        if let Some(s) = self.store.as_mut() {
            s.index_unfollowed(&self.catalog);
        }
    }

    /// Reads changed and new files into the index. Does not publish (a restore publishes once,
    /// with its report). Returns whether anything changed.
    pub(super) fn take_changes(&mut self, changes: Changes) -> bool {
        let Changes { mut targets, fresh } = changes;
        self.files.note_changed(targets.iter().cloned());
        self.files
            .note_changed(fresh.iter().map(|f| f.path.clone()));
        let added_before = self.files.counts.added;
        let fresh_paths: BTreeSet<PathBuf> = fresh.iter().map(|f| f.path.clone()).collect();
        let mut files_changed = false;
        for src in fresh {
            match self.files.get(&src.path) {
                Some(e) if *e.src == src => continue,
                Some(_) => {
                    // description changed: forget the old reading, read again
                    if let Some(old) = self.files.take(&src.path) {
                        self.drop_file(&old);
                    }
                }
                None => {}
            }
            files_changed = true;
            self.files.counts.added += 1;
            targets.insert(src.path.clone());
            self.files.insert(src.path.clone(), FileEntry::new(src));
        }
        let mut changed = files_changed;
        let mut touched = self.files.counts.added - added_before;
        // vanished files first: a file renamed or moved within the roots then finds its
        // conversations in the store-only set and takes them over (no duplicate)
        let (gone_paths, live_paths): (Vec<&PathBuf>, Vec<&PathBuf>) =
            targets.iter().partition(|p| !p.exists());
        for path in gone_paths.into_iter().chain(live_paths) {
            let (c, gone) = self.update_path(path);
            changed |= c;
            files_changed |= gone;
            if (c || gone) && !fresh_paths.contains(path) {
                touched += 1;
            }
        }
        self.files.counts.touched += touched;
        if !changed {
            return false;
        }
        if files_changed {
            self.catalog.set_groups(self.files.groups());
        }
        self.settle();
        true
    }

    /// Makes the update one: stored tails of the conversations just updated join, then the
    /// document index commits (new segment, dead documents, merges). Does not publish.
    pub(super) fn settle(&mut self) {
        if let Some(store) = self.store.as_mut() {
            store.add_tails(&mut self.catalog, &mut self.docs);
        }
        self.docs.commit();
    }

    /// Reads a known file's news. Returns (anything changed, file removed).
    pub(super) fn update_path(&mut self, path: &Path) -> (bool, bool) {
        let Some(mut entry) = self.files.take(path) else {
            return (false, false);
        };
        match entry.state.read() {
            ReadOutcome::Unchanged => {
                self.files.insert(path.to_owned(), entry);
                (false, false)
            }
            ReadOutcome::Appended(states) => {
                self.files.counts.appended += 1;
                let single = entry.convs.len() == 1 && states.len() == 1;
                for state in states {
                    self.apply_state(&mut entry, state, single);
                }
                self.files.insert(path.to_owned(), entry);
                (true, false)
            }
            ReadOutcome::Replaced { changed, present } => {
                self.files.counts.reread += 1;
                for state in changed {
                    self.apply_state(&mut entry, state, false);
                }
                let (keep, gone): (Vec<_>, Vec<_>) = entry
                    .convs
                    .drain(..)
                    .partition(|(id, _)| present.contains(id));
                entry.convs = keep;
                for (_, conv) in gone {
                    self.retire(conv);
                }
                self.files.insert(path.to_owned(), entry);
                (true, false)
            }
            ReadOutcome::Rewritten => {
                self.files.counts.reread += 1;
                self.drop_file(&entry);
                self.files.insert(path.to_owned(), entry.reset());
                let (_, gone) = self.update_path(path);
                (true, gone)
            }
            ReadOutcome::Gone => {
                self.files.counts.removed += 1;
                self.drop_file(&entry);
                (true, true)
            }
        }
    }

    /// Applies one conversation's new state read from `entry`. With `single`, a file holding
    /// one conversation keeps its internal id even when the public id changes (a sub-agent
    /// whose parent became known).
    pub(super) fn apply_state(&mut self, entry: &mut FileEntry, state: ConvState, single: bool) {
        if self
            .store
            .as_ref()
            .is_some_and(|s| s.is_forgotten(&state.id))
        {
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
                let claimed = self.store.as_mut().and_then(|s| s.claim(&state.id));
                let c = claimed.unwrap_or_else(|| self.catalog.allocate());
                entry.convs.push((state.id.clone(), c));
                c
            }
        };
        let (update, new_turns) = ConvUpdate::split(state);
        self.update_conversation(entry, conv, update);
        for t in &new_turns {
            self.docs.add_turn(conv, t);
        }
        if let Some(s) = self.store.as_mut() {
            s.note_turns(conv, &new_turns);
        }
    }

    /// Applies one conversation's new state (its turns are added by the caller): the documents
    /// of turns from the first changed one die, the catalog takes the new state.
    pub(super) fn update_conversation(
        &mut self,
        entry: &FileEntry,
        conv: ConvId,
        update: ConvUpdate,
    ) {
        self.docs.replace_from(conv, update.first_changed);
        let kept = self
            .catalog
            .update(conv, &entry.src, entry.state.offset, update);
        if let (true, Some(s)) = (kept, self.store.as_mut()) {
            s.touched(conv);
        }
    }

    /// Kills every document of a file and forgets its conversations.
    pub(super) fn drop_file(&mut self, entry: &FileEntry) {
        for &(_, conv) in &entry.convs {
            self.retire(conv);
        }
    }

    /// A conversation whose transcript no longer holds it: kept as store-only when the store
    /// keeps it, removed from the index otherwise.
    pub(super) fn retire(&mut self, conv: ConvId) {
        let catalog = &mut self.catalog;
        if !self
            .store
            .as_mut()
            .is_some_and(|s| s.keep_gone(conv, catalog))
        {
            self.docs.forget(conv);
            self.catalog.remove(conv);
        }
    }

    /// The first build handed out ids below these: the next ones follow, and the groups of the
    /// files read so far name the projects.
    pub(super) fn take_ids(&mut self, (next_conv, next_seg): (ConvId, u64)) {
        self.catalog.set_next_id(next_conv);
        self.docs.set_next_seg(next_seg);
        // the first build's segments are the base
        self.docs.mark_base();
        self.catalog.set_groups(self.files.project_groups());
    }

    /// Adds a worker's files and segments.
    pub(super) fn take_chunk(&mut self, chunk: Chunk) {
        for read in chunk.files {
            let path = read.state.src.path.clone();
            let mut entry = FileEntry::restored(read.state, Vec::new());
            let mut records = read.records.into_iter();
            for (c, id) in read.convs.into_iter().zip(read.ids) {
                entry.convs.push((c.id.clone(), id));
                self.update_conversation(&entry, id, c);
                if let Some(s) = self.store.as_mut() {
                    s.note_records(id, records.next().unwrap_or_default());
                }
            }
            self.files.insert(path, entry);
        }
        for (seg, docs) in chunk.segments {
            self.docs.place(seg, &docs, true);
        }
    }

    /// After a restore: drop vanished files, re-read changed ones, add new ones (not published:
    /// the caller publishes once, with the cache report). Files found unchanged while the cache
    /// was read are not looked at again. Returns whether anything changed, and how many files
    /// are new since the cache was written.
    pub(super) fn refresh_restored(&mut self, rechecked: Rechecked) -> (bool, u64) {
        let Rechecked { unchanged, found } = rechecked;
        let targets: BTreeSet<PathBuf> = self
            .files
            .paths()
            .filter(|p| !unchanged.contains(*p))
            .map(Path::to_owned)
            .collect();
        let fresh: Vec<_> = found
            .into_iter()
            .filter(|f| self.files.get(&f.path).is_none_or(|e| *e.src != *f))
            .collect();
        let new_files = fresh
            .iter()
            .filter(|f| !self.files.contains(&f.path))
            .count() as u64;
        (self.take_changes(Changes { targets, fresh }), new_files)
    }

    /// Installs a restored catalog: files, conversations and the ids to hand out next (the
    /// index stays as it is).
    pub(super) fn install_head(&mut self, head: Head) {
        for (state, convs) in head.files {
            let path = state.src.path.clone();
            self.files.insert(path, FileEntry::restored(state, convs));
        }
        for c in head.convs {
            self.catalog.put(c);
        }
        self.catalog.set_next_id(head.next_conv);
        self.docs.set_next_seg(head.next_seg);
        self.catalog.set_groups(self.files.project_groups());
        self.index_unfollowed();
    }

    /// Forgets what was read of a file (its conversations leave the catalog) so that `process`
    /// reads it whole: its earlier turns are in segments this start does not hold.
    pub(super) fn read_again(&mut self, path: &Path, targets: &mut BTreeSet<PathBuf>) {
        let Some(old) = self.files.take(path) else {
            return;
        };
        self.drop_file(&old);
        self.files.insert(path.to_owned(), old.reset());
        targets.insert(path.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::glob::Glob;

    fn user_line(session: &str, n: u32) -> String {
        format!(
            r#"{{"type":"user","sessionId":"{session}","uuid":"u{n}","timestamp":"2025-01-01T00:00:0{n}Z","message":{{"role":"user","content":"question number {n}"}}}}"#
        ) + "\n"
    }

    fn contents(root: &Path) -> Contents {
        Contents::new(vec![Root {
            adapter: crate::transcript::adapter("claude").expect("claude"),
            dir: root.to_owned(),
            pattern: Glob::new("*"),
        }])
    }

    #[test]
    fn a_files_news_reaches_the_catalog_and_the_documents() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("-p").join("s.jsonl");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, user_line("s", 0)).expect("write");
        let mut c = contents(tmp.path());
        let changes = c.files.expand(std::slice::from_ref(&path));
        assert!(c.take_changes(changes));
        assert_eq!(c.files.counts.added, 1);
        assert_eq!(c.catalog.by_id("s").map(|s| s.turn_count), Some(1));
        assert_eq!(c.docs.live_docs(), 1);
        assert!(c.files.changed().contains(&path));
        // an append: one more turn, the open one replaced (a new file's first read counts as
        // one append too)
        assert_eq!(c.files.counts.appended, 1);
        std::fs::write(&path, user_line("s", 0) + &user_line("s", 1)).expect("append");
        let changes = c.files.expand(std::slice::from_ref(&path));
        assert!(c.take_changes(changes));
        assert_eq!(c.files.counts.appended, 2);
        assert_eq!(c.catalog.by_id("s").map(|s| s.turn_count), Some(2));
        assert_eq!(c.docs.live_docs(), 2);
        // nothing new: no update
        let changes = c.files.expand(std::slice::from_ref(&path));
        assert!(!c.take_changes(changes));
        // gone without a store: the conversation and its documents leave
        std::fs::remove_file(&path).expect("rm");
        let changes = c.files.expand(std::slice::from_ref(&path));
        assert!(c.take_changes(changes));
        assert_eq!(c.files.counts.removed, 1);
        assert!(c.catalog.by_id("s").is_none());
        assert_eq!(c.docs.live_docs(), 0);
        assert_eq!(c.files.len(), 0);
    }

    #[test]
    fn a_first_build_hand_over_joins_files_conversations_and_segments() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("-p").join("s.jsonl");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, user_line("s", 0) + &user_line("s", 1)).expect("write");
        let mut c = contents(tmp.path());
        let found = c.files.discover();
        let sizes = vec![0; found.len()];
        let progress = super::super::BuildProgress::default();
        let forgotten = Default::default();
        let build = super::super::build::FirstBuild::new(
            &found,
            &sizes,
            (c.catalog.next_id(), c.docs.next_seg()),
            &progress,
            false,
            &forgotten,
        );
        build.run(1, |chunk, _| c.take_chunk(chunk));
        c.take_ids(build.next_ids());
        assert_eq!(c.files.len(), 1);
        assert_eq!(c.catalog.by_id("s").map(|s| s.turn_count), Some(2));
        assert_eq!(c.docs.live_docs(), 2);
        assert_eq!(c.catalog.next_id(), 1);
        assert_eq!(c.catalog.groups(), ["-p"]);
    }
}
