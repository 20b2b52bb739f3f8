//! Keeping the index and the durable store in step, as one server does: the store handles and
//! this server's role (writer or reader), what it knows of the store (store-only
//! conversations, stored turn counts, forgotten ids, the last commit seen), the turns waiting
//! to be committed ([`Backlog`]), and the work done every [`TICK`]: taking the writer lock over
//! when it comes free, comparing the whole index with the store after becoming the writer,
//! retention, and catching up with what other servers commit ([`News`]).
//!
//! Conversations whose transcript vanished stay in the index as store-only conversations (read
//! back from the store); a transcript that comes back takes its conversation over under the same
//! id. See [`crate::store`] for the store itself.
use super::Shared;
use super::catalog::{Catalog, ConvId, Conversation};
use super::doc_index::DocIndex;
use super::store_backlog::Backlog;
use super::store_news::News;
use super::{Root, browse};
use crate::store::{
    ConvRecord, Role, Store, StoreError, StoreWriter, StoredHead, TurnRecord, read,
};
use crate::transcript::Turn;
use crate::util::time::now_ms;
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the store is looked at for other servers' commits and the writer lock.
pub(super) const TICK: Duration = Duration::from_millis(100);
/// How often retention runs.
const RETENTION_EVERY: Duration = Duration::from_secs(3600);
/// Conversations per commit when the whole index is compared with the store.
const SYNC_CHUNK: usize = 256;
/// Turns per commit while a backlog drains (about 0.1 s of work on a 2-core machine).
const FLUSH_TURNS: usize = 4000;

/// Test hook: `CONVERSATION_SEARCH_TEST_CATCH_UP_PAUSE_MS` makes every catch-up that found
/// news wait that long between reading them and applying them, after saying so on stderr with
/// the ids it is about to apply, so that a black-box test can commit (`forget`) in between.
/// Read once.
fn catch_up_pause() -> Option<Duration> {
    static PAUSE: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    *PAUSE.get_or_init(|| {
        crate::util::time::millis_from_env("CONVERSATION_SEARCH_TEST_CATCH_UP_PAUSE_MS")
    })
}

/// Test hook: `CONVERSATION_SEARCH_TEST_SLOW_COMMITS_MS` makes every slice of the backlog
/// ([`StoreSync::flush_some`]) one conversation that takes that much longer (a slow disk), so
/// that a black-box test can act while a first build's backlog drains. Read once.
fn slow_commits() -> Option<Duration> {
    static SLOW: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    *SLOW.get_or_init(|| {
        crate::util::time::millis_from_env("CONVERSATION_SEARCH_TEST_SLOW_COMMITS_MS")
    })
}

/// How the durable store is kept.
#[derive(Debug, Clone)]
pub(crate) struct StoreConfig {
    /// The data directory holding the store.
    pub dir: PathBuf,
    /// Drop stored turns older than this many days whose transcript is gone (None: keep).
    pub retain_days: Option<u32>,
}

/// The store as one server uses it, and what it knows of it.
pub(super) struct StoreSync {
    store: Arc<Store>,
    writer: Option<StoreWriter>,
    /// Where this server's view of the store is reported (`index_status`).
    shared: Arc<Shared>,
    /// Conversations in the catalog that no followed transcript holds, by id.
    unfollowed: FxHashMap<String, ConvId>,
    /// Turns the store holds per conversation (as last seen).
    stored: FxHashMap<String, u32>,
    /// Conversations forgotten on request: never indexed or stored again.
    forgotten: FxHashSet<String>,
    /// The last commit this server has caught up with.
    seq: i64,
    /// What waits for the next commit (writer only).
    backlog: Backlog,
    /// Conversations updated since their stored tails were last checked.
    touched: Vec<ConvId>,
    /// The store must be compared with the whole index (just became the writer, or a commit
    /// failed).
    resync: bool,
    retain_ms: Option<i64>,
    next_retention: Instant,
    next_tick: Instant,
}

impl std::fmt::Debug for StoreSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreSync({})", self.store.path.display())
    }
}

impl StoreSync {
    /// Opens the store of `cfg`, as its writer when `write` and the lock is free. When it
    /// cannot be used, the server runs without it and says why (once on stderr, and in
    /// `index_status`): `None`.
    pub(super) fn open(cfg: &StoreConfig, write: bool, shared: &Arc<Shared>) -> Option<Self> {
        let path = cfg.dir.join(crate::store::DB_NAME);
        shared.update_store(|r| r.path = Some(path.clone()));
        let (store, writer, note) = match Store::open_with(&cfg.dir, write) {
            Ok(opened) => opened,
            Err(e) => {
                tracing::warn!("{e}");
                shared.update_store(|r| {
                    r.role = Role::Off;
                    r.error = Some(e.to_string());
                });
                return None;
            }
        };
        let role = if writer.is_some() {
            Role::Writer
        } else {
            Role::Reader
        };
        if let Some(n) = &note {
            tracing::error!("{n}");
        }
        shared.update_store(|r| {
            r.role = role;
            r.moved_aside = match &note {
                Some(StoreError::MovedAside { moved_to, .. }) => Some(moved_to.clone()),
                _ => None,
            };
            r.error = note.as_ref().map(ToString::to_string);
        });
        let forgotten = store.with_read(read::forgotten).unwrap_or_default();
        // what is stored, so a transcript found gone at start keeps its conversation
        let stored = store
            .with_read(|c, p| read::heads_since(c, p, 0))
            .unwrap_or_default()
            .into_iter()
            .map(|h| (h.id, h.turn_count))
            .collect();
        Some(StoreSync {
            store: Arc::new(store),
            writer,
            shared: Arc::clone(shared),
            unfollowed: FxHashMap::default(),
            stored,
            forgotten: forgotten.into_iter().collect(),
            seq: 0,
            backlog: Backlog::default(),
            touched: Vec::new(),
            resync: true,
            retain_ms: cfg.retain_days.map(|d| i64::from(d) * 86_400_000),
            next_retention: Instant::now(),
            next_tick: Instant::now(),
        })
    }

    /// The store, for snapshots (turns of store-only conversations are read from it).
    pub(super) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(super) fn is_writer(&self) -> bool {
        self.writer.is_some()
    }

    /// Gives up writing the store (marking it closed, see [`StoreWriter`]'s `Drop`); another
    /// server may take over.
    pub(super) fn close(&mut self) {
        self.writer = None;
    }

    /// Conversations forgotten on request.
    pub(super) fn forgotten(&self) -> &FxHashSet<String> {
        &self.forgotten
    }

    pub(super) fn is_forgotten(&self, id: &str) -> bool {
        self.forgotten.contains(id)
    }

    /// Notes the store-only conversations of the catalog (the persistent index may hold some).
    pub(super) fn index_unfollowed(&mut self, catalog: &Catalog) {
        self.unfollowed = catalog
            .iter()
            .filter(|c| !c.followed)
            .map(|c| (c.id.clone(), c.conv))
            .collect();
    }

    /// The internal id of a store-only conversation with this public id, now taken over by a
    /// transcript again.
    pub(super) fn claim(&mut self, id: &str) -> Option<ConvId> {
        let conv = self.unfollowed.remove(id)?;
        self.backlog.unnote_gone(id);
        Some(conv)
    }

    /// A conversation whose transcript no longer holds it: kept in `catalog` as store-only when
    /// the store has it (or is about to), its turns read from there. Returns whether it was
    /// kept (else the caller removes it from the index).
    pub(super) fn keep_gone(&mut self, conv: ConvId, catalog: &mut Catalog) -> bool {
        let stored = |id: &str| {
            !self.forgotten.contains(id)
                && (self.stored.get(id).is_some_and(|&n| n > 0) || self.backlog.holds(conv))
        };
        let Some(old) = catalog
            .get(conv)
            .filter(|c| c.turn_count > 0 && stored(&c.id))
            .cloned()
        else {
            return false;
        };
        let since = old.gone_since.unwrap_or_else(now_ms);
        self.unfollowed.insert(old.id.clone(), conv);
        self.backlog.note_gone(old.id.clone(), since);
        let mut c = (*old).clone();
        c.followed = false;
        c.gone_since = Some(since);
        c.source_turns = 0;
        catalog.put(c);
        true
    }

    /// Notes that `conv` was just updated from its transcript (its stored tail is checked at
    /// [`Self::add_tails`]).
    pub(super) fn touched(&mut self, conv: ConvId) {
        self.touched.push(conv);
    }

    /// Keeps a conversation's newly read turns for the next commit (writer only).
    pub(super) fn note_turns(&mut self, conv: ConvId, turns: &[Turn]) {
        if self.is_writer() {
            let records = turns.iter().map(TurnRecord::of).collect();
            self.note_records(conv, records);
        }
    }

    /// Keeps turns made into records for the next commit (writer only).
    pub(super) fn note_records(&mut self, conv: ConvId, records: Vec<TurnRecord>) {
        if self.is_writer() {
            self.backlog.push(conv, records);
            self.report_backlog();
        }
    }

    /// Conversations just updated whose stored turns reach further than their transcript now
    /// does (it shrank, or was rewound): the stored tail joins the index again.
    pub(super) fn add_tails(&mut self, catalog: &mut Catalog, docs: &mut DocIndex) {
        let touched = std::mem::take(&mut self.touched);
        let mut want = Vec::new();
        for conv in touched {
            let Some(c) = catalog.get(conv) else {
                continue;
            };
            let stored = self.stored.get(&c.id).copied().unwrap_or(0);
            if c.followed && stored > c.turn_count {
                want.push((conv, c.turn_count, stored));
            }
        }
        want.sort_unstable();
        want.dedup();
        for (conv, from, to) in want {
            self.load_turns(conv, from, to, catalog, docs);
        }
    }

    /// Reads turns `from..to` of a conversation from the store into `docs` (replacing whatever
    /// the index holds from `from` on) and extends the conversation to them. Returns false,
    /// changing nothing, when the store could not be read or no longer holds the conversation
    /// (removed after the news being applied was read: the next catch-up removes it here too).
    pub(super) fn load_turns(
        &self,
        conv: ConvId,
        from: u32,
        to: u32,
        catalog: &mut Catalog,
        docs: &mut DocIndex,
    ) -> bool {
        let Some(c) = catalog.get(conv) else {
            return false;
        };
        let records = self
            .store
            .with_read(|conn, path| read::stored_turns(conn, path, &c.id, from, to));
        match records {
            Ok(Some(records)) => {
                self.apply_turns(conv, from, to, &records, catalog, docs);
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
    fn apply_turns(
        &self,
        conv: ConvId,
        from: u32,
        to: u32,
        records: &[TurnRecord],
        catalog: &mut Catalog,
        docs: &mut DocIndex,
    ) {
        let Some(c) = catalog.get(conv).cloned() else {
            return;
        };
        docs.truncate(conv, from);
        // only turns that decode count: a damaged row (or a turn count that says more than
        // the rows hold) never extends the conversation
        let mut reached = from;
        for r in records {
            match r.turn() {
                Ok(t) => {
                    if t.number == reached {
                        reached += 1;
                    }
                    docs.add_turn(conv, &t);
                }
                Err(e) => tracing::warn!(
                    "skipping turn {} of `{}` in the store `{}`: {e}",
                    r.number,
                    c.id,
                    self.store.path.display()
                ),
            }
        }
        let mut c = (*c).clone();
        // the turns before `from` stay; the stored ones extend them
        c.turn_count = c.turn_count.min(from).max(reached.min(to));
        catalog.put(c);
    }

    /// Commits everything read and noted vanished since the last commit (writer only; a reader
    /// drops it: the writer reads the same transcripts). A failed commit changes nothing on disk
    /// and is retried by comparing the whole index with the store. Returns whether it committed.
    pub(super) fn flush(&mut self, catalog: &Catalog) -> bool {
        self.commit_backlog(usize::MAX, catalog)
    }

    /// Commits at most about [`FLUSH_TURNS`] turns of what is waiting (all of a small backlog),
    /// so that the indexer returns to live changes between the commits of a first build's
    /// backlog. Returns whether it committed.
    pub(super) fn flush_some(&mut self, catalog: &Catalog) -> bool {
        let Some(slow) = slow_commits().filter(|_| self.backlog.has_turns()) else {
            return self.commit_backlog(FLUSH_TURNS, catalog);
        };
        std::thread::sleep(slow);
        self.commit_backlog(1, catalog)
    }

    /// One commit: the vanished transcripts noted, and conversations from the front of the
    /// backlog until `max_turns` turns are taken (at least one conversation).
    fn commit_backlog(&mut self, max_turns: usize, catalog: &Catalog) -> bool {
        if self.writer.is_none() {
            self.backlog.clear();
            self.report_backlog();
            return false;
        }
        let pending = self.backlog.take(max_turns);
        let started = Instant::now();
        let done = self.commit(&pending, catalog);
        self.report_backlog();
        if !pending.is_empty() {
            tracing::debug!(
                turns = pending.iter().map(|(_, r)| r.len()).sum::<usize>(),
                waiting = self.backlog.turns(),
                ms = started.elapsed().as_millis() as u64,
                "store backlog committed"
            );
        }
        done
    }

    /// Publishes the backlog's size for `index_status`.
    fn report_backlog(&self) {
        let n = self.backlog.turns();
        self.shared.update_store(|r| r.pending_turns = n);
    }

    /// Whether turns wait to be committed (writer only).
    pub(super) fn backlog_waits(&self) -> bool {
        self.is_writer() && self.backlog.has_turns()
    }

    /// When the next [`Self::tick`] is due: now while a backlog drains (commit after commit,
    /// live changes in between).
    pub(super) fn due(&self) -> Instant {
        if self.backlog_waits() {
            Instant::now()
        } else {
            self.next_tick
        }
    }

    /// One commit of these conversations' turns (described by `catalog`) and of the vanished
    /// transcripts noted.
    fn commit(&mut self, pending: &[(ConvId, Vec<TurnRecord>)], catalog: &Catalog) -> bool {
        let gone = self.backlog.take_gone();
        let Some(w) = self.writer.as_mut() else {
            return false;
        };
        if pending.is_empty() && gone.is_empty() {
            return false;
        }
        let stored = &mut self.stored;
        let result = w.commit(|tx| {
            for (id, since) in &gone {
                tx.mark_gone(id, *since)?;
            }
            for (conv, records) in pending {
                let Some(c) = catalog.get(*conv) else {
                    continue;
                };
                let have = stored.get(&c.id).copied().unwrap_or(0);
                if tx.put(&record_of(c, have), records)? {
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
    fn after_commit(&mut self, result: Result<(), StoreError>) {
        match result {
            Ok(()) => self.shared.update_store(|r| {
                r.commits += 1;
                r.last_commit_ms = Some(now_ms());
                r.error = None;
            }),
            Err(e) => {
                tracing::warn!("{e}");
                self.resync = true;
                self.shared.update_store(|r| r.error = Some(e.to_string()));
            }
        }
    }

    /// At the start, before the index says it is complete: store-only conversations join,
    /// forgotten conversations leave (the caller commits `docs`).
    pub(super) fn start(&mut self, catalog: &mut Catalog, docs: &mut DocIndex, roots: &[Root]) {
        self.index_unfollowed(catalog);
        self.touched.clear();
        self.catch_up(catalog, docs, roots);
    }

    /// Looks at the store (every [`TICK`]): takes the writer lock if it came free, compares the
    /// index with the store when needed, runs retention, commits a slice of the backlog and
    /// catches up with new commits. Returns whether the index changed (then the caller commits
    /// `docs` and publishes).
    pub(super) fn tick(
        &mut self,
        catalog: &mut Catalog,
        docs: &mut DocIndex,
        roots: &[Root],
    ) -> bool {
        self.next_tick = Instant::now() + TICK;
        if self.writer.is_none() {
            self.try_take_over();
        }
        self.full_sync_if_needed(catalog);
        self.retention_if_due();
        self.flush_some(catalog);
        self.catch_up(catalog, docs, roots)
    }

    /// Takes the store's writer lock when it came free.
    fn try_take_over(&mut self) {
        match self.store.try_take_over() {
            Ok(Some((w, note))) => {
                tracing::info!("this server now writes the store `{}`", w.path().display());
                self.writer = Some(w);
                self.resync = true;
                self.shared.update_store(|r| {
                    r.role = Role::Writer;
                    if let Some(n) = &note {
                        r.error = Some(n.to_string());
                    }
                    if let Some(StoreError::MovedAside { moved_to, .. }) = &note {
                        r.moved_aside = Some(moved_to.clone());
                    }
                });
            }
            Ok(None) => {}
            Err(e) => self.shared.update_store(|r| r.error = Some(e.to_string())),
        }
    }

    /// Reads what was committed since this server last looked and applies it to the index.
    fn catch_up(&mut self, catalog: &mut Catalog, docs: &mut DocIndex, roots: &[Root]) -> bool {
        let since = self.seq;
        let news = self.store.with_read(|conn, path| {
            read::at_one_commit(conn, path, |conn| News::since(conn, path, since))
        });
        let news = match news {
            Ok(Some(n)) => n,
            Ok(None) => return false,
            Err(e) => {
                let msg = e.to_string();
                if self.shared.store_report().error.as_deref() != Some(msg.as_str()) {
                    tracing::warn!("{msg}");
                    self.shared.update_store(|r| r.error = Some(msg));
                }
                return false;
            }
        };
        let bytes = self.store.bytes();
        self.shared.update_store(|r| {
            r.counts = news.counts;
            r.bytes = bytes;
            r.last_commit_ms = news.commit_ms.or(r.last_commit_ms);
        });
        if let Some(pause) = catch_up_pause() {
            let ids: Vec<&str> = news.heads.iter().map(|h| h.id.as_str()).collect();
            tracing::info!(
                "test hook: catch-up to commit {} paused; heads {ids:?}",
                news.seq
            );
            std::thread::sleep(pause);
        }
        self.seq = news.seq;
        let mut changed = false;
        for (id, forgotten) in news.removed {
            changed |= self.note_removed(&id, forgotten, catalog, docs);
        }
        for head in news.heads {
            changed |= self.note_head(head, catalog, docs, roots);
        }
        changed
    }

    /// A conversation removed from the store: forgotten ones leave the index even while their
    /// transcript exists; store-only ones leave it.
    fn note_removed(
        &mut self,
        id: &str,
        forgotten: bool,
        catalog: &mut Catalog,
        docs: &mut DocIndex,
    ) -> bool {
        self.stored.remove(id);
        if forgotten {
            self.forgotten.insert(id.to_owned());
        }
        let Some(c) = catalog.by_id(id).cloned() else {
            return false;
        };
        if !forgotten && c.followed {
            return false;
        }
        self.unfollowed.remove(id);
        docs.forget(c.conv);
        catalog.remove(c.conv);
        true
    }

    /// A conversation written to the store: joins the index when this server does not have it,
    /// is reloaded when it lives in the store only, gets its stored tail when its transcript
    /// holds fewer turns.
    fn note_head(
        &mut self,
        head: StoredHead,
        catalog: &mut Catalog,
        docs: &mut DocIndex,
        roots: &[Root],
    ) -> bool {
        if !root_matches(roots, &head) || self.forgotten.contains(&head.id) {
            return false;
        }
        self.stored.insert(head.id.clone(), head.turn_count);
        match catalog.by_id(&head.id).cloned() {
            Some(c) if c.followed => {
                if head.turn_count <= c.turn_count {
                    return false;
                }
                self.load_turns(c.conv, c.turn_count, head.turn_count, catalog, docs);
            }
            Some(c) => {
                // read again whole; left as it is when the store dropped it meanwhile
                if !self.load_turns(c.conv, 0, head.turn_count, catalog, docs) {
                    return false;
                }
                if let Some(now) = catalog.get(c.conv) {
                    let mut fresh = (**now).clone();
                    fresh.gone_since = head.gone_since.or(c.gone_since);
                    catalog.put(fresh);
                }
            }
            None => return self.add_from_store(&head.id, catalog, docs),
        }
        true
    }

    /// A conversation only the store holds joins the index.
    fn add_from_store(&mut self, id: &str, catalog: &mut Catalog, docs: &mut DocIndex) -> bool {
        // the description and the turns at one commit, so a removal between them is not half seen
        let read = self.store.with_read(|conn, path| {
            read::at_one_commit(conn, path, |conn| {
                let Some(rec) = read::conversation(conn, path, id)? else {
                    return Ok(None);
                };
                let turns = read::turns(conn, path, id, 0, rec.turn_count)?;
                Ok(Some((rec, turns)))
            })
        });
        let (rec, records) = match read {
            Ok(Some(r)) => r,
            Ok(None) => return false,
            Err(e) => {
                tracing::warn!("{e}");
                return false;
            }
        };
        let conv = catalog.allocate();
        let turns = rec.turn_count;
        // stored as present, but its transcript is not there (deleted while no server ran):
        // gone from now on (the writer records it at its next full comparison)
        let gone_since = rec
            .gone_since
            .or_else(|| (!rec.file.path.exists()).then(now_ms));
        catalog.put(Conversation {
            conv,
            id: rec.id.clone(),
            file: Arc::new(rec.file),
            parent: rec.parent,
            meta: rec.meta,
            turn_count: 0,
            turn_offsets: Default::default(),
            end_offset: rec.end_offset,
            source_turns: 0,
            followed: false,
            gone_since,
        });
        self.unfollowed.insert(rec.id, conv);
        self.apply_turns(conv, 0, turns, &records, catalog, docs);
        true
    }

    /// After becoming the writer (or a failed commit): stores every conversation whose stored
    /// row does not match what this server indexed, re-reading its turns from the transcript,
    /// and notes transcripts this server saw vanish. Commits in chunks.
    fn full_sync_if_needed(&mut self, catalog: &Catalog) {
        if !(self.resync && self.is_writer()) {
            return;
        }
        self.resync = false;
        let heads = self
            .store
            .with_read(|conn, path| read::heads_since(conn, path, 0));
        let heads: FxHashMap<String, StoredHead> = match heads {
            Ok(h) => h.into_iter().map(|h| (h.id.clone(), h)).collect(),
            Err(e) => {
                self.resync = true;
                self.shared.update_store(|r| r.error = Some(e.to_string()));
                return;
            }
        };
        let (todo, gone) = self.out_of_step(catalog, &heads);
        for (id, h) in &heads {
            self.stored.insert(id.clone(), h.turn_count);
        }
        let started = Instant::now();
        let count = todo.len();
        self.backlog.extend_gone(gone);
        for chunk in todo.chunks(SYNC_CHUNK) {
            let mut records = Vec::new();
            for c in chunk {
                match browse::read_file_turns(c, 0, c.source_turns) {
                    Ok(turns) => records.push((c.conv, turns.iter().map(TurnRecord::of).collect())),
                    Err(e) => tracing::debug!("not stored yet: {e}"),
                }
            }
            self.commit(&records, catalog);
            if self.resync {
                break;
            }
        }
        // the vanished transcripts noted, when no chunk took them
        self.commit(&[], catalog);
        if count > 0 {
            tracing::info!(
                conversations = count,
                ms = started.elapsed().as_millis() as u64,
                "store brought up to date with the index"
            );
        }
    }

    /// The conversations of `catalog` whose stored row (in `heads`) is not what this server
    /// indexed, and the store-only ones whose vanishing the store does not know yet.
    fn out_of_step(
        &self,
        catalog: &Catalog,
        heads: &FxHashMap<String, StoredHead>,
    ) -> (Vec<Arc<Conversation>>, Vec<(String, i64)>) {
        // conversations whose every turn already waits to be committed (a first build's) are
        // not read again
        let queued = self.backlog.whole();
        let (mut todo, mut gone) = (Vec::new(), Vec::new());
        for c in catalog.iter().filter(|c| !self.forgotten.contains(&c.id)) {
            let head = heads.get(&c.id);
            if queued
                .get(&c.conv)
                .is_some_and(|&n| n >= c.turn_count as usize)
            {
                continue;
            }
            if c.followed {
                let current = head.is_some_and(|h| {
                    h.path == c.file.path
                        && h.end_offset == c.end_offset
                        && h.turn_count >= c.turn_count
                });
                if !current {
                    todo.push(Arc::clone(c));
                }
            } else if let (Some(since), Some(h)) = (c.gone_since, head) {
                if h.gone_since.is_none() {
                    gone.push((c.id.clone(), since));
                }
            }
        }
        (todo, gone)
    }

    /// Drops stored turns past the retention period (writer only, hourly).
    fn retention_if_due(&mut self) {
        let (Some(retain), Some(w)) = (self.retain_ms, self.writer.as_mut()) else {
            return;
        };
        if Instant::now() < self.next_retention {
            return;
        }
        self.next_retention = Instant::now() + RETENTION_EVERY;
        let cutoff = now_ms() - retain;
        let result = w.commit(|tx| tx.retain(cutoff));
        if let Ok(r) = &result {
            if !r.conversations.is_empty() {
                tracing::info!(
                    conversations = r.conversations.len(),
                    turns = r.turns,
                    "retention dropped stored turns"
                );
            }
        }
        self.after_commit(result.map(|_| ()));
    }
}

/// What the store keeps of a conversation of the catalog.
fn record_of(c: &Conversation, stored: u32) -> ConvRecord {
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

/// Whether a stored conversation belongs to a server over these roots: a root of its format
/// holds its transcript (directory and, for formats whose groups the pattern filters,
/// pattern), or no root could hold it and only the store has it (its transcript is gone, or
/// was never on this machine: history moved by `import`, a projects directory that moved),
/// shown with its original path. A transcript under another server's roots is that server's.
fn root_matches(roots: &[Root], head: &StoredHead) -> bool {
    let pattern_ok = |r: &Root| {
        !r.adapter.filters_groups() || head.group.as_deref().is_none_or(|g| r.pattern.matches(g))
    };
    if roots.iter().any(|r| head.path.starts_with(&r.dir)) {
        return roots.iter().any(|r| {
            r.adapter.name() == head.format && head.path.starts_with(&r.dir) && pattern_ok(r)
        });
    }
    let only_in_store = head.gone_since.is_some() || !head.path.exists();
    only_in_store
        && crate::transcript::adapter(head.format).is_some_and(|a| {
            !a.filters_groups()
                || head
                    .group
                    .as_deref()
                    .is_none_or(|g| roots.iter().all(|r| r.pattern.matches(g)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Snapshot;
    use crate::corpus::catalog::ConvUpdate;
    use crate::transcript::{ConvMeta, Role as FileRole, SourceFile};
    use crate::util::glob::Glob;

    struct World {
        _tmp: tempfile::TempDir,
        cfg: StoreConfig,
        roots: Vec<Root>,
        file: Arc<SourceFile>,
    }

    fn world() -> World {
        let tmp = tempfile::tempdir().expect("tmp");
        let projects = tmp.path().join("projects");
        let path = projects.join("-p").join("s.jsonl");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "").expect("transcript");
        World {
            cfg: StoreConfig {
                dir: tmp.path().join("data"),
                retain_days: None,
            },
            roots: vec![Root {
                adapter: crate::transcript::adapter("claude").expect("claude"),
                dir: projects,
                pattern: Glob::new("*"),
            }],
            file: Arc::new(SourceFile {
                path,
                format: "claude",
                group: Some("-p".into()),
                role: FileRole::Session { id: "s".into() },
            }),
            _tmp: tmp,
        }
    }

    fn turns(n: u32) -> Vec<Turn> {
        (0..n)
            .map(|number| Turn {
                number,
                user_text: format!("question {number}"),
                ..Turn::default()
            })
            .collect()
    }

    /// A conversation `s` of `n` turns read from the world's transcript, into `sync`.
    fn read_conversation(w: &World, sync: &mut StoreSync, catalog: &mut Catalog, n: u32) -> ConvId {
        let conv = catalog.allocate();
        let update = ConvUpdate {
            id: "s".into(),
            meta: ConvMeta::default(),
            turn_count: n,
            first_changed: 0,
            offsets: (0..u64::from(n)).collect(),
        };
        assert!(catalog.update(conv, &w.file, u64::from(n), update));
        sync.note_turns(conv, &turns(n));
        conv
    }

    fn shared() -> Arc<Shared> {
        Shared::new(Snapshot::default())
    }

    #[test]
    fn the_writer_commits_its_backlog_and_a_reader_catches_up() {
        let w = world();
        let writer_shared = shared();
        let mut writer = StoreSync::open(&w.cfg, true, &writer_shared).expect("writer");
        assert!(writer.is_writer());
        let mut catalog = Catalog::default();
        read_conversation(&w, &mut writer, &mut catalog, 3);
        assert_eq!(writer_shared.store_report().pending_turns, 3);
        assert!(writer.due() <= Instant::now(), "a backlog is due at once");
        assert!(writer.flush_some(&catalog));
        assert_eq!(writer_shared.store_report().pending_turns, 0);
        assert_eq!(writer_shared.store_report().commits, 1);
        assert!(!writer.flush(&catalog), "nothing left");
        // a second server: a reader (the lock is held) that finds the conversation stored
        let mut reader = StoreSync::open(&w.cfg, true, &shared()).expect("reader");
        assert!(!reader.is_writer());
        let (mut theirs, mut docs) = (Catalog::default(), DocIndex::default());
        assert!(reader.tick(&mut theirs, &mut docs, &w.roots));
        docs.commit();
        let c = theirs.by_id("s").expect("joined from the store");
        assert!(!c.followed);
        assert_eq!(c.turn_count, 3);
        assert_eq!(docs.live_docs(), 3);
        // nothing new: nothing changes
        assert!(!reader.tick(&mut theirs, &mut docs, &w.roots));
        // the writer lets go: the reader takes over at its next tick
        writer.close();
        drop(writer);
        reader.tick(&mut theirs, &mut docs, &w.roots);
        assert!(reader.is_writer());
    }

    #[test]
    fn a_vanished_transcript_keeps_its_conversation_only_when_stored() {
        let w = world();
        let mut sync = StoreSync::open(&w.cfg, true, &shared()).expect("store");
        let mut catalog = Catalog::default();
        let conv = read_conversation(&w, &mut sync, &mut catalog, 2);
        // waiting in the backlog counts as stored
        assert!(sync.keep_gone(conv, &mut catalog));
        let c = catalog.get(conv).expect("kept");
        assert!(!c.followed && c.gone_since.is_some() && c.source_turns == 0);
        // taken over again under its id by a transcript that comes back
        assert_eq!(sync.claim("s"), Some(conv));
        assert_eq!(sync.claim("s"), None);
        // a conversation the store never saw is not kept
        let mut other = Catalog::default();
        let update = ConvUpdate {
            id: "t".into(),
            meta: ConvMeta::default(),
            turn_count: 1,
            first_changed: 0,
            offsets: vec![0],
        };
        other.set_next_id(conv + 1);
        let t = other.allocate();
        other.update(t, &w.file, 1, update);
        assert!(!sync.keep_gone(t, &mut other));
        assert!(
            other.get(t).is_some_and(|c| c.followed),
            "left to the caller"
        );
    }

    #[test]
    fn stored_turns_past_the_transcript_join_the_index() {
        let w = world();
        let mut sync = StoreSync::open(&w.cfg, true, &shared()).expect("store");
        let mut catalog = Catalog::default();
        let conv = read_conversation(&w, &mut sync, &mut catalog, 4);
        assert!(sync.flush(&catalog));
        let mut docs = DocIndex::default();
        // the transcript was rewound to 2 turns: the stored tail (turns 2 and 3) comes back
        let update = ConvUpdate {
            id: "s".into(),
            meta: ConvMeta::default(),
            turn_count: 2,
            first_changed: 0,
            offsets: vec![0, 1],
        };
        catalog.update(conv, &w.file, 2, update);
        sync.touched(conv);
        sync.add_tails(&mut catalog, &mut docs);
        docs.commit();
        assert_eq!(catalog.get(conv).map(|c| c.turn_count), Some(4));
        assert_eq!(docs.live_docs(), 2, "only the tail was loaded");
    }

    #[test]
    fn a_store_that_cannot_be_opened_is_reported_and_left_out() {
        let tmp = tempfile::tempdir().expect("tmp");
        // a data directory whose parent is a file cannot be created, even by root
        let file = tmp.path().join("file");
        std::fs::write(&file, "").expect("file");
        let cfg = StoreConfig {
            dir: file.join("data"),
            retain_days: None,
        };
        let shared = shared();
        assert!(StoreSync::open(&cfg, true, &shared).is_none());
        let report = shared.store_report();
        assert_eq!(report.role, Role::Off);
        assert!(report.error.is_some());
    }
}
