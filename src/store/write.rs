//! Writing the store, only ever by the server holding the writer lock (or the `forget` command,
//! serialised by SQLite's own write lock): each commit is one transaction that bumps the
//! commit counter readers poll.
use super::record::{ConvRecord, TurnRecord};
use super::{StoreError, StoreWriter};
use rusqlite::{OptionalExtension, Transaction, params};
use std::path::Path;

/// One open commit.
pub struct Commit<'a> {
    tx: Transaction<'a>,
    path: &'a Path,
    /// This commit's number (every row it writes carries it).
    pub seq: i64,
}

/// What a removal took away.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    pub conversations: Vec<String>,
    pub turns: u64,
}

impl StoreWriter {
    /// Runs `f` in one transaction that becomes visible to readers at once or not at all (a
    /// failure, e.g. a full disk, rolls everything back).
    pub fn commit<T>(
        &mut self,
        f: impl FnOnce(&mut Commit) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        commit_on(&mut self.conn, &self.path, f)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// [`StoreWriter::commit`] on any connection (the `forget` command has no writer lock: SQLite's
/// own lock serialises it with the writing server).
pub fn commit_on<T>(
    conn: &mut rusqlite::Connection,
    path: &Path,
    f: impl FnOnce(&mut Commit) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let e = StoreError::sql(path);
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(&e)?;
    let seq: i64 = tx
        .query_row(
            "UPDATE meta SET value = value + 1 WHERE key = 'seq' RETURNING value",
            [],
            |r| r.get(0),
        )
        .map_err(&e)?;
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'commit_ms'",
        [crate::util::time::now_ms()],
    )
    .map_err(&e)?;
    let mut c = Commit { tx, path, seq };
    let out = f(&mut c)?;
    c.tx.commit().map_err(&e)?;
    Ok(out)
}

impl Commit<'_> {
    fn e(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        StoreError::sql(self.path)
    }

    /// Whether `id` was forgotten on request (it is never stored again).
    pub fn is_forgotten(&self, id: &str) -> Result<bool, StoreError> {
        self.tx
            .query_row(
                "SELECT 1 FROM removed WHERE id = ?1 AND forgotten = 1",
                [id],
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
            .map_err(self.e())
    }

    /// Stores a conversation and the given turns (each stored once: an unchanged turn is left
    /// alone, a changed one replaces the old version, a copy of another conversation's turn keeps
    /// no second body). Turns the record no longer reaches stay (a transcript that shrank).
    /// Returns false for a forgotten conversation (nothing stored).
    pub fn put(&mut self, conv: &ConvRecord, turns: &[TurnRecord]) -> Result<bool, StoreError> {
        if self.is_forgotten(&conv.id)? {
            return Ok(false);
        }
        let (hash, blob) = conv.blob();
        let cid: i64 = self
            .tx
            .query_row(
                "INSERT INTO conversations(id, source, path, grp, turn_count, end_offset,
                     first_ts, last_ts, gone_since, seq, hash, blob)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                 ON CONFLICT(id) DO UPDATE SET source = excluded.source, path = excluded.path,
                     grp = excluded.grp, turn_count = max(turn_count, excluded.turn_count),
                     end_offset = excluded.end_offset,
                     first_ts = COALESCE(min(first_ts, excluded.first_ts), excluded.first_ts, first_ts),
                     last_ts = COALESCE(max(last_ts, excluded.last_ts), excluded.last_ts, last_ts),
                     gone_since = excluded.gone_since, seq = excluded.seq,
                     hash = excluded.hash, blob = excluded.blob
                 RETURNING cid",
                params![
                    conv.id,
                    conv.file.format,
                    conv.file.path.to_string_lossy(),
                    conv.file.group,
                    conv.turn_count,
                    conv.end_offset as i64,
                    conv.meta.first_ts,
                    conv.meta.last_ts,
                    conv.gone_since,
                    self.seq,
                    hash as i64,
                    blob
                ],
                |r| r.get(0),
            )
            .map_err(self.e())?;
        self.tx
            .execute(
                "DELETE FROM removed WHERE id = ?1 AND forgotten = 0",
                [&conv.id],
            )
            .map_err(self.e())?;
        for t in turns {
            self.put_turn(cid, t)?;
        }
        Ok(true)
    }

    fn put_turn(&mut self, cid: i64, t: &TurnRecord) -> Result<(), StoreError> {
        let old: Option<i64> = self
            .tx
            .query_row(
                "SELECT hash FROM turns WHERE cid = ?1 AND number = ?2",
                params![cid, t.number],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.e())?;
        if old == Some(t.hash as i64) {
            return Ok(());
        }
        if old.is_some() {
            self.release(cid, t.number)?;
        }
        let dup = t.dup_key.map(|k| k as i64);
        let copied = match dup {
            Some(k) => self
                .tx
                .query_row(
                    "SELECT 1 FROM turns WHERE dup_key = ?1 AND hash = ?2 AND body IS NOT NULL
                       AND NOT (cid = ?3 AND number = ?4) LIMIT 1",
                    params![k, t.hash as i64, cid, t.number],
                    |_| Ok(()),
                )
                .optional()
                .map_err(self.e())?
                .is_some(),
            None => false,
        };
        self.tx
            .execute(
                "INSERT OR REPLACE INTO turns(cid, number, ts, dup_key, hash, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    cid,
                    t.number,
                    t.timestamp,
                    dup,
                    t.hash as i64,
                    (!copied).then_some(&t.body)
                ],
            )
            .map_err(self.e())?;
        Ok(())
    }

    /// Before a turn row with a body goes: hands the body to a copy that relies on it.
    fn release(&mut self, cid: i64, number: u32) -> Result<(), StoreError> {
        self.tx
            .execute(
                "UPDATE turns SET body = (SELECT body FROM turns WHERE cid = ?1 AND number = ?2)
                 WHERE rowid = (SELECT c.rowid FROM turns c, turns o
                     WHERE o.cid = ?1 AND o.number = ?2 AND o.body IS NOT NULL
                       AND c.dup_key = o.dup_key AND c.hash = o.hash AND c.body IS NULL
                     LIMIT 1)",
                params![cid, number],
            )
            .map_err(self.e())?;
        Ok(())
    }

    /// Notes that a conversation's transcript is gone (the first time only).
    pub fn mark_gone(&mut self, id: &str, since: i64) -> Result<(), StoreError> {
        self.tx
            .execute(
                "UPDATE conversations SET gone_since = ?1, seq = ?2
                 WHERE id = ?3 AND gone_since IS NULL",
                params![since, self.seq, id],
            )
            .map_err(self.e())?;
        Ok(())
    }

    /// Removes conversations and their turns. `forget`: on request, so never stored again
    /// (retention removals are not remembered that way).
    pub fn remove(&mut self, ids: &[String], forget: bool) -> Result<Removed, StoreError> {
        let mut out = Removed::default();
        for id in ids {
            let cid: Option<i64> = self
                .tx
                .query_row("SELECT cid FROM conversations WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(self.e())?;
            if let Some(cid) = cid {
                out.turns += self.remove_turns(cid, None)?;
                self.tx
                    .execute("DELETE FROM conversations WHERE cid = ?1", [cid])
                    .map_err(self.e())?;
                out.conversations.push(id.clone());
            }
            if cid.is_some() || forget {
                self.tx
                    .execute(
                        "INSERT OR REPLACE INTO removed(id, seq, forgotten, at) VALUES (?1, ?2, ?3, ?4)",
                        params![id, self.seq, forget, crate::util::time::now_ms()],
                    )
                    .map_err(self.e())?;
            }
        }
        Ok(out)
    }

    /// Removes a conversation's turns (those older than `before`, epoch ms, when given); returns
    /// how many went. Bodies that copies rely on are handed to them first.
    pub fn remove_turns(&mut self, cid: i64, before: Option<i64>) -> Result<u64, StoreError> {
        let numbers: Vec<u32> = {
            let mut stmt = self
                .tx
                .prepare_cached(
                    "SELECT number FROM turns WHERE cid = ?1 AND (?2 IS NULL OR ts < ?2)",
                )
                .map_err(self.e())?;
            let rows = stmt
                .query_map(params![cid, before], |r| r.get(0))
                .map_err(self.e())?;
            rows.collect::<Result<_, _>>().map_err(self.e())?
        };
        for &n in &numbers {
            self.release(cid, n)?;
            self.tx
                .execute(
                    "DELETE FROM turns WHERE cid = ?1 AND number = ?2",
                    params![cid, n],
                )
                .map_err(self.e())?;
        }
        Ok(numbers.len() as u64)
    }

    /// Drops turns older than `cutoff` (epoch ms) of conversations whose transcript is gone
    /// (a transcript that still exists is the source of its turns); a conversation left empty is
    /// removed. Conversations touched get this commit's number, so readers reload them.
    pub fn retain(&mut self, cutoff: i64) -> Result<Removed, StoreError> {
        let convs: Vec<(i64, String)> = {
            let mut stmt = self
                .tx
                .prepare_cached(
                    "SELECT DISTINCT c.cid, c.id FROM conversations c JOIN turns t ON t.cid = c.cid
                     WHERE c.gone_since IS NOT NULL AND t.ts < ?1 ORDER BY c.id",
                )
                .map_err(self.e())?;
            let rows = stmt
                .query_map([cutoff], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(self.e())?;
            rows.collect::<Result<_, _>>().map_err(self.e())?
        };
        let mut out = Removed::default();
        for (cid, id) in convs {
            out.turns += self.remove_turns(cid, Some(cutoff))?;
            let left: i64 = self
                .tx
                .query_row("SELECT count(*) FROM turns WHERE cid = ?1", [cid], |r| {
                    r.get(0)
                })
                .map_err(self.e())?;
            if left == 0 {
                self.tx
                    .execute("DELETE FROM conversations WHERE cid = ?1", [cid])
                    .map_err(self.e())?;
                self.tx
                    .execute(
                        "INSERT OR REPLACE INTO removed(id, seq, forgotten, at) VALUES (?1, ?2, 0, ?3)",
                        params![id, self.seq, crate::util::time::now_ms()],
                    )
                    .map_err(self.e())?;
            } else {
                self.tx
                    .execute(
                        "UPDATE conversations SET seq = ?1 WHERE cid = ?2",
                        params![self.seq, cid],
                    )
                    .map_err(self.e())?;
            }
            out.conversations.push(id);
        }
        Ok(out)
    }
}
