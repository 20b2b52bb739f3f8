//! Keeping one server in step with the store: catching up with commits (its own and other
//! servers', and the `forget` command's), taking the writer lock over when it comes free,
//! comparing the whole index with the store when it becomes the writer, and retention.
use super::catalog::{ConvId, Conversation};
use super::history::Archive;
use super::writer::{Batch, Writer};
use crate::store::{Role, StoreCounts, StoreError, StoredHead, TurnRecord, read};
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the store is looked at for other servers' commits and the writer lock.
pub const TICK: Duration = Duration::from_millis(100);
/// How often retention runs.
const RETENTION_EVERY: Duration = Duration::from_secs(3600);
/// Conversations per commit when the whole index is compared with the store.
const SYNC_CHUNK: usize = 256;

/// Test hook: `CONVERSATION_SEARCH_TEST_CATCH_UP_PAUSE_MS` makes every catch-up that found
/// news wait that long between reading them and applying them, after saying so on stderr with
/// the ids it is about to apply, so that a black-box test can commit (`forget`) in between.
/// Read once.
fn catch_up_pause() -> Option<Duration> {
    static PAUSE: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    *PAUSE.get_or_init(|| {
        std::env::var("CONVERSATION_SEARCH_TEST_CATCH_UP_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
    })
}

/// What changed in the store since a commit.
struct News {
    seq: i64,
    commit_ms: Option<i64>,
    removed: Vec<(String, bool)>,
    heads: Vec<StoredHead>,
    counts: StoreCounts,
}

impl News {
    /// What was committed after `since` (None when nothing was), all read at one commit.
    fn since(
        conn: &rusqlite::Connection,
        path: &std::path::Path,
        since: i64,
    ) -> Result<Option<News>, StoreError> {
        let (seq, commit_ms) = read::last_commit(conn, path)?;
        if seq == since {
            return Ok(None);
        }
        Ok(Some(News {
            seq,
            commit_ms,
            removed: read::removed_since(conn, path, since)?,
            heads: read::heads_since(conn, path, since)?,
            counts: read::counts(conn, path)?,
        }))
    }
}

impl Writer {
    /// At the start, before the index says it is complete: store-only conversations join, stored
    /// tails are added, forgotten conversations leave. Does not publish.
    pub(super) fn archive_start(&mut self) {
        if self.archive.is_none() {
            return;
        }
        self.index_unfollowed();
        self.touched.clear();
        let mut batch = Batch::default();
        let mut kills = Vec::new();
        self.catch_up(&mut batch, &mut kills);
        self.settle(&mut batch, kills);
    }

    /// Notes the store-only conversations of the catalog (the persistent index may hold some).
    pub(super) fn index_unfollowed(&mut self) {
        if let Some(a) = self.archive.as_mut() {
            a.unfollowed = self
                .catalog
                .iter()
                .filter(|c| !c.followed)
                .map(|c| (c.id.clone(), c.conv))
                .collect();
        }
    }

    /// When the next [`Writer::store_tick`] is due (None without a store).
    pub fn store_due(&self) -> Option<Instant> {
        let a = self.archive.as_ref()?;
        // a backlog of turns to store drains commit after commit, live changes in between
        Some(if self.store_backlog() {
            Instant::now()
        } else {
            a.next_tick
        })
    }

    /// Looks at the store (every [`TICK`]): takes the writer lock if it came free, compares the
    /// index with the store when needed, runs retention, and catches up with new commits.
    /// Returns whether the index changed (then a snapshot was published).
    pub fn store_tick(&mut self) -> bool {
        let Some(a) = self.archive.as_mut() else {
            return false;
        };
        a.next_tick = Instant::now() + TICK;
        if a.writer.is_none() {
            match a.store.try_take_over() {
                Ok(Some((w, note))) => {
                    tracing::info!("this server now writes the store `{}`", w.path().display());
                    a.writer = Some(w);
                    a.resync = true;
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
        self.full_sync_if_needed();
        self.retention_if_due();
        self.store_flush_some();
        let started = Instant::now();
        let mut batch = Batch::default();
        let mut kills = Vec::new();
        if !self.catch_up(&mut batch, &mut kills) {
            return false;
        }
        self.settle(&mut batch, kills);
        self.publish(started);
        true
    }

    /// Reads what was committed since this server last looked and applies it to the index.
    fn catch_up(&mut self, batch: &mut Batch, kills: &mut Vec<(u64, u32)>) -> bool {
        let Some(a) = self.archive.as_ref() else {
            return false;
        };
        let since = a.seq;
        let news = a.store.with_read(|conn, path| {
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
        let bytes = a.store.bytes();
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
        if let Some(a) = self.archive.as_mut() {
            a.seq = news.seq;
        }
        let mut changed = false;
        for (id, forgotten) in news.removed {
            changed |= self.note_removed(&id, forgotten, kills);
        }
        for head in news.heads {
            changed |= self.note_head(head, batch, kills);
        }
        changed
    }

    /// A conversation removed from the store: forgotten ones leave the index even while their
    /// transcript exists; store-only ones leave it.
    fn note_removed(&mut self, id: &str, forgotten: bool, kills: &mut Vec<(u64, u32)>) -> bool {
        let Some(a) = self.archive.as_mut() else {
            return false;
        };
        a.stored.remove(id);
        if forgotten {
            a.forgotten.insert(id.to_owned());
        }
        let Some(c) = self.catalog.by_id(id).cloned() else {
            return false;
        };
        if !forgotten && c.followed {
            return false;
        }
        a.unfollowed.remove(id);
        self.gens.books.insert(c.conv);
        if let Some(book) = self.books.remove(&c.conv) {
            kills.extend(book.locs());
        }
        self.catalog.remove(c.conv);
        true
    }

    /// A conversation written to the store: joins the index when this server does not have it,
    /// is reloaded when it lives in the store only, gets its stored tail when its transcript
    /// holds fewer turns.
    fn note_head(
        &mut self,
        head: StoredHead,
        batch: &mut Batch,
        kills: &mut Vec<(u64, u32)>,
    ) -> bool {
        if !self.root_matches(&head) {
            return false;
        }
        let Some(a) = self.archive.as_mut() else {
            return false;
        };
        if a.forgotten.contains(&head.id) {
            return false;
        }
        a.stored.insert(head.id.clone(), head.turn_count);
        match self.catalog.by_id(&head.id).cloned() {
            Some(c) if c.followed => {
                if head.turn_count <= c.turn_count {
                    return false;
                }
                self.load_stored_turns(c.conv, c.turn_count, head.turn_count, batch, kills);
            }
            Some(c) => {
                // read again whole; left as it is when the store dropped it meanwhile
                if !self.load_stored_turns(c.conv, 0, head.turn_count, batch, kills) {
                    return false;
                }
                if let Some(now) = self.catalog.get(c.conv) {
                    let mut fresh = (**now).clone();
                    fresh.gone_since = head.gone_since.or(c.gone_since);
                    self.catalog.put(fresh);
                }
            }
            None => return self.add_from_store(&head.id, batch, kills),
        }
        true
    }

    /// Whether a stored conversation belongs to this server's roots (format, directory and, for
    /// formats whose groups the pattern filters, pattern).
    fn root_matches(&self, head: &StoredHead) -> bool {
        self.roots.iter().any(|r| {
            r.adapter.name() == head.format
                && head.path.starts_with(&r.dir)
                && (!r.adapter.filters_groups()
                    || head.group.as_deref().is_none_or(|g| r.pattern.matches(g)))
        })
    }

    /// A conversation only the store holds joins the index.
    fn add_from_store(&mut self, id: &str, batch: &mut Batch, kills: &mut Vec<(u64, u32)>) -> bool {
        let Some(a) = self.archive.as_ref() else {
            return false;
        };
        // the description and the turns at one commit, so a removal between them is not half seen
        let read = a.store.with_read(|conn, path| {
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
        let conv = self.next_conv;
        self.next_conv += 1;
        let turns = rec.turn_count;
        // stored as present, but its transcript is not there (deleted while no server ran):
        // gone from now on (the writer records it at its next full comparison)
        let gone_since = rec
            .gone_since
            .or_else(|| (!rec.file.path.exists()).then(crate::util::time::now_ms));
        self.catalog.put(Conversation {
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
        if let Some(a) = self.archive.as_mut() {
            a.unfollowed.insert(rec.id, conv);
        }
        self.apply_stored_turns(conv, 0, turns, &records, batch, kills);
        true
    }

    /// After becoming the writer (or a failed commit): stores every conversation whose stored
    /// row does not match what this server indexed, re-reading its turns from the transcript,
    /// and notes transcripts this server saw vanish. Commits in chunks.
    fn full_sync_if_needed(&mut self) {
        let Some(a) = self.archive.as_mut().filter(|a| a.resync && a.is_writer()) else {
            return;
        };
        a.resync = false;
        let heads = a
            .store
            .with_read(|conn, path| read::heads_since(conn, path, 0));
        let heads: FxHashMap<String, StoredHead> = match heads {
            Ok(h) => h.into_iter().map(|h| (h.id.clone(), h)).collect(),
            Err(e) => {
                a.resync = true;
                self.shared.update_store(|r| r.error = Some(e.to_string()));
                return;
            }
        };
        // conversations whose every turn already waits to be committed (a first build's) are
        // not read again
        let queued: FxHashMap<ConvId, usize> = a
            .pending
            .iter()
            .filter(|(_, r)| r.first().is_some_and(|t| t.number == 0))
            .map(|(c, r)| (*c, r.len()))
            .collect();
        let (mut todo, mut gone) = (Vec::new(), Vec::new());
        for c in self.catalog.iter().filter(|c| !a.forgotten.contains(&c.id)) {
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
        for (id, h) in &heads {
            a.stored.insert(id.clone(), h.turn_count);
        }
        let started = Instant::now();
        let count = todo.len();
        a.pending_gone.extend(gone);
        for chunk in todo.chunks(SYNC_CHUNK) {
            let mut records = Vec::new();
            for c in chunk {
                match super::browse::read_file_turns(c, 0, c.source_turns) {
                    Ok(turns) => records.push((c.conv, turns.iter().map(TurnRecord::of).collect())),
                    Err(e) => tracing::debug!("not stored yet: {e}"),
                }
            }
            self.commit_records(&records);
            if self.archive.as_ref().is_some_and(|a| a.resync) {
                break;
            }
        }
        // the vanished transcripts noted, when no chunk took them
        self.commit_records(&[]);
        if count > 0 {
            tracing::info!(
                conversations = count,
                ms = started.elapsed().as_millis() as u64,
                "store brought up to date with the index"
            );
        }
    }

    /// Drops stored turns past the retention period (writer only, hourly).
    fn retention_if_due(&mut self) {
        let Some(a) = self.archive.as_mut() else {
            return;
        };
        let (Some(retain), Some(w)) = (a.retain_ms, a.writer.as_mut()) else {
            return;
        };
        if Instant::now() < a.next_retention {
            return;
        }
        a.next_retention = Instant::now() + RETENTION_EVERY;
        let cutoff = crate::util::time::now_ms() - retain;
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

    /// This server's role in the store.
    pub fn store_role(&self) -> Role {
        self.archive.as_ref().map_or(Role::Off, Archive::role)
    }
}
