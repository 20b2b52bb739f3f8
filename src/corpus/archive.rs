//! Durable history in the corpus: conversations whose transcript vanished stay in the index as
//! store-only conversations (read back from the store), a transcript that comes back takes its
//! conversation over under the same id, and the server holding the store's writer lock stores
//! every turn it reads. See [`crate::store`] for the store itself and `archive_sync` for keeping
//! this server in step with what other servers commit.
use super::catalog::{ConvId, Conversation};
use super::history::{Archive, ArchiveConfig};
use super::writer::{Batch, Writer};
use crate::store::{ConvRecord, Role, Store, StoreError, TurnRecord};
use crate::transcript::Turn;
use crate::util::time::now_ms;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::Instant;

/// Turns per commit while a backlog drains (about 0.1 s of work on a 2-core machine).
const FLUSH_TURNS: usize = 4000;

impl Writer {
    /// Opens the store for this corpus. When it cannot be used, the server runs mirror-only and
    /// says why (once on stderr, and in `index_status`).
    pub fn open_archive(&mut self, cfg: &ArchiveConfig) {
        self.open_archive_as(cfg, true);
    }

    /// Opens the store without taking its writer lock (a follower; see
    /// [`Writer::open_archive`]).
    pub fn open_archive_reader(&mut self, cfg: &ArchiveConfig) {
        self.open_archive_as(cfg, false);
    }

    fn open_archive_as(&mut self, cfg: &ArchiveConfig, write: bool) {
        let path = cfg.dir.join(crate::store::DB_NAME);
        self.shared.update_store(|r| r.path = Some(path.clone()));
        match Store::open_with(&cfg.dir, write) {
            Ok((store, writer, note)) => {
                let role = if writer.is_some() {
                    Role::Writer
                } else {
                    Role::Reader
                };
                if let Some(n) = &note {
                    tracing::error!("{n}");
                }
                self.shared.update_store(|r| {
                    r.role = role;
                    r.moved_aside = match &note {
                        Some(StoreError::MovedAside { moved_to, .. }) => Some(moved_to.clone()),
                        _ => None,
                    };
                    r.error = note.as_ref().map(ToString::to_string);
                });
                let forgotten = store
                    .with_read(crate::store::read::forgotten)
                    .unwrap_or_default();
                // what is stored, so a transcript found gone at start keeps its conversation
                let stored = store
                    .with_read(|c, p| crate::store::read::heads_since(c, p, 0))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|h| (h.id, h.turn_count))
                    .collect();
                self.archive = Some(Archive {
                    store: Arc::new(store),
                    writer,
                    unfollowed: FxHashMap::default(),
                    stored,
                    forgotten: forgotten.into_iter().collect(),
                    seq: 0,
                    pending: Vec::new(),
                    pending_gone: Vec::new(),
                    resync: true,
                    retain_ms: cfg.retain_days.map(|d| i64::from(d) * 86_400_000),
                    next_retention: Instant::now(),
                    next_tick: Instant::now(),
                });
            }
            Err(e) => {
                tracing::warn!("{e}");
                self.shared.update_store(|r| {
                    r.role = Role::Off;
                    r.error = Some(e.to_string());
                });
            }
        }
    }

    /// Gives up writing the store (marking it closed, see [`crate::store::StoreWriter`]'s
    /// `Drop`); another server may take over.
    pub fn close_store(&mut self) {
        if let Some(a) = self.archive.as_mut() {
            a.writer = None;
        }
    }

    pub fn has_archive(&self) -> bool {
        self.archive.is_some()
    }

    pub(super) fn is_forgotten(&self, id: &str) -> bool {
        self.archive
            .as_ref()
            .is_some_and(|a| a.forgotten.contains(id))
    }

    /// The internal id of a store-only conversation with this public id, now taken over by a
    /// transcript again.
    pub(super) fn claim_stored(&mut self, id: &str) -> Option<ConvId> {
        let a = self.archive.as_mut()?;
        let conv = a.unfollowed.remove(id)?;
        a.pending_gone.retain(|(g, _)| g != id);
        Some(conv)
    }

    /// A conversation whose transcript no longer holds it: kept as store-only when history is
    /// kept, removed from the index otherwise.
    pub(super) fn retire(&mut self, conv: ConvId, kills: &mut Vec<(u64, u32)>) {
        // kept only when the store has it (or is about to): its turns are read from there
        let stored = |id: &str| {
            self.archive.as_ref().is_some_and(|a| {
                !a.forgotten.contains(id)
                    && (a.stored.get(id).is_some_and(|&n| n > 0)
                        || a.pending.iter().any(|(c, _)| *c == conv))
            })
        };
        let keep = self
            .catalog
            .get(conv)
            .filter(|c| c.turn_count > 0 && stored(&c.id));
        let Some(old) = keep.cloned() else {
            self.gens.books.insert(conv);
            if let Some(book) = self.books.remove(&conv) {
                kills.extend(book.locs());
            }
            self.catalog.remove(conv);
            return;
        };
        let since = old.gone_since.unwrap_or_else(now_ms);
        if let Some(a) = self.archive.as_mut() {
            a.unfollowed.insert(old.id.clone(), conv);
            a.pending_gone.push((old.id.clone(), since));
        }
        let mut c = (*old).clone();
        c.followed = false;
        c.gone_since = Some(since);
        c.source_turns = 0;
        self.catalog.put(c);
    }

    /// Keeps a conversation's newly read turns for the next commit (writer only).
    pub(super) fn note_for_store(&mut self, conv: ConvId, turns: &[Turn]) {
        if self.archive.as_ref().is_some_and(Archive::is_writer) {
            let records = turns.iter().map(TurnRecord::of).collect();
            self.note_records(conv, records);
        }
    }

    pub(super) fn note_records(&mut self, conv: ConvId, records: Vec<TurnRecord>) {
        if let Some(a) = self.archive.as_mut().filter(|a| a.is_writer()) {
            a.pending.push((conv, records));
            self.report_pending();
        }
    }

    /// Conversations just updated whose stored turns reach further than their transcript now
    /// does (it shrank, or was rewound): the stored tail joins the index again.
    pub(super) fn add_stored_tails(&mut self, batch: &mut Batch, kills: &mut Vec<(u64, u32)>) {
        let touched = std::mem::take(&mut self.touched);
        let Some(a) = self.archive.as_ref() else {
            return;
        };
        let mut want = Vec::new();
        for conv in touched {
            let Some(c) = self.catalog.get(conv) else {
                continue;
            };
            let stored = a.stored.get(&c.id).copied().unwrap_or(0);
            if c.followed && stored > c.turn_count {
                want.push((conv, c.turn_count, stored));
            }
        }
        want.sort_unstable();
        want.dedup();
        for (conv, from, to) in want {
            self.load_stored_turns(conv, from, to, batch, kills);
        }
    }

    /// Reads turns `from..to` of a conversation from the store into `batch` (replacing whatever
    /// the index holds from `from` on) and extends the conversation to them. Returns false,
    /// changing nothing, when the store could not be read or no longer holds the conversation
    /// (removed after the news being applied was read: the next catch-up removes it here too).
    pub(super) fn load_stored_turns(
        &mut self,
        conv: ConvId,
        from: u32,
        to: u32,
        batch: &mut Batch,
        kills: &mut Vec<(u64, u32)>,
    ) -> bool {
        let (Some(a), Some(c)) = (self.archive.as_ref(), self.catalog.get(conv)) else {
            return false;
        };
        let records = a
            .store
            .with_read(|conn, path| crate::store::read::stored_turns(conn, path, &c.id, from, to));
        match records {
            Ok(Some(records)) => {
                self.apply_stored_turns(conv, from, to, &records, batch, kills);
                true
            }
            Ok(None) => false,
            Err(e) => {
                tracing::warn!("{e}");
                false
            }
        }
    }

    /// Puts turns `from..to` read from the store in place of what the index holds from `from`
    /// on, and sets the conversation's turn count to what they reach.
    pub(super) fn apply_stored_turns(
        &mut self,
        conv: ConvId,
        from: u32,
        to: u32,
        records: &[TurnRecord],
        batch: &mut Batch,
        kills: &mut Vec<(u64, u32)>,
    ) {
        let Some(c) = self.catalog.get(conv).cloned() else {
            return;
        };
        self.gens.books.insert(conv);
        if let Some(book) = self.books.get_mut(&conv) {
            book.truncate(from as usize, kills);
        }
        // only turns that decode count: a damaged row (or a turn count that says more than
        // the rows hold) never extends the conversation
        let mut reached = from;
        for r in records {
            match r.turn() {
                Ok(t) => {
                    if t.number == reached {
                        reached += 1;
                    }
                    batch.add(conv, &t);
                }
                Err(e) => tracing::warn!(
                    "skipping turn {} of `{}` in the store `{}`: {e}",
                    r.number,
                    c.id,
                    self.archive.as_ref().map_or_else(String::new, |a| a
                        .store
                        .path
                        .display()
                        .to_string())
                ),
            }
        }
        let mut c = (*c).clone();
        // the turns before `from` stay; the stored ones extend them
        c.turn_count = c.turn_count.min(from).max(reached.min(to));
        self.catalog.put(c);
    }

    /// What the store keeps of a conversation of the catalog.
    pub(super) fn record_of(c: &Conversation, stored: u32) -> ConvRecord {
        ConvRecord {
            id: c.id.clone(),
            file: (*c.file).clone(),
            parent: c.parent.clone(),
            meta: c.meta.clone(),
            turn_count: c.turn_count.max(stored),
            end_offset: c.end_offset,
            gone_since: c.gone_since,
        }
    }

    /// Commits everything read and noted vanished since the last commit (writer only; a reader
    /// drops it: the writer reads the same transcripts). A failed commit changes nothing on disk
    /// and is retried by comparing the whole index with the store. Returns whether it committed.
    pub fn store_flush(&mut self) -> bool {
        self.store_commit(usize::MAX)
    }

    /// Commits at most about [`FLUSH_TURNS`] turns of what is waiting (all of a small backlog),
    /// so that the indexer returns to live changes between the commits of a first build's
    /// backlog. Returns whether it committed.
    pub(super) fn store_flush_some(&mut self) -> bool {
        self.store_commit(FLUSH_TURNS)
    }

    /// Whether more than one commit's worth of turns waits for the store.
    pub(super) fn store_backlog(&self) -> bool {
        self.archive
            .as_ref()
            .is_some_and(|a| a.is_writer() && !a.pending.is_empty())
    }

    /// One commit: the vanished transcripts noted, and conversations from the front of the
    /// queue until `max_turns` turns are taken (at least one conversation).
    fn store_commit(&mut self, max_turns: usize) -> bool {
        let Some(a) = self.archive.as_mut() else {
            return false;
        };
        if a.writer.is_none() {
            a.pending.clear();
            a.pending_gone.clear();
            self.report_pending();
            return false;
        }
        let mut take = 0;
        let mut turns = 0;
        while take < a.pending.len() && (take == 0 || turns < max_turns) {
            turns += a.pending[take].1.len();
            take += 1;
        }
        let pending: Vec<_> = a.pending.drain(..take).collect();
        let done = self.commit_records(&pending);
        self.report_pending();
        done
    }

    /// Publishes the backlog's size for `index_status`.
    fn report_pending(&self) {
        let n = self.archive.as_ref().map_or(0, |a| {
            a.pending.iter().map(|(_, r)| r.len() as u64).sum::<u64>()
        });
        self.shared.update_store(|r| r.pending_turns = n);
    }

    /// One commit of these conversations' turns and of the vanished transcripts noted.
    pub(super) fn commit_records(&mut self, pending: &[(ConvId, Vec<TurnRecord>)]) -> bool {
        let Some(a) = self.archive.as_mut() else {
            return false;
        };
        let gone = std::mem::take(&mut a.pending_gone);
        let Some(w) = a.writer.as_mut() else {
            return false;
        };
        if pending.is_empty() && gone.is_empty() {
            return false;
        }
        let catalog = &self.catalog;
        let stored = &mut a.stored;
        let result = w.commit(|tx| {
            for (id, since) in &gone {
                tx.mark_gone(id, *since)?;
            }
            for (conv, records) in pending {
                let Some(c) = catalog.get(*conv) else {
                    continue;
                };
                let have = stored.get(&c.id).copied().unwrap_or(0);
                if tx.put(&Self::record_of(c, have), records)? {
                    stored.insert(c.id.clone(), have.max(c.turn_count));
                }
            }
            Ok(())
        });
        let ok = result.is_ok();
        self.after_commit(result.map(|_| ()));
        ok
    }

    /// Notes a commit's outcome for `index_status`.
    pub(super) fn after_commit(&mut self, result: Result<(), StoreError>) {
        let Some(a) = self.archive.as_mut() else {
            return;
        };
        match result {
            Ok(()) => self.shared.update_store(|r| {
                r.commits += 1;
                r.last_commit_ms = Some(now_ms());
                r.error = None;
            }),
            Err(e) => {
                tracing::warn!("{e}");
                a.resync = true;
                self.shared.update_store(|r| r.error = Some(e.to_string()));
            }
        }
    }
}
