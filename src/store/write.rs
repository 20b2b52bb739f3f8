//! Writing the store, only ever by the server holding the writer lock (or the `forget` command,
//! serialised by SQLite's own write lock): each commit is one transaction that bumps the
//! commit counter readers poll.
use super::record::{ConvRecord, TurnRecord};
use super::{StoreError, StoreWriter};
use rusqlite::{OptionalExtension, Transaction, params};
use std::path::Path;

/// One open commit.
pub(crate) struct Commit<'a> {
    tx: Transaction<'a>,
    path: &'a Path,
    /// This commit's number (every row it writes carries it).
    pub seq: i64,
}

/// What [`Commit::merge`] did with a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Merged {
    /// New to the store: stored with this many turns.
    Added(u64),
    /// Already held: this many of its turns were new.
    Extended(u64),
    /// Forgotten here on request: not stored.
    Forgotten,
}

/// What a removal took away.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Removed {
    pub conversations: Vec<String>,
    pub turns: u64,
}

impl StoreWriter {
    /// Runs `f` in one transaction that becomes visible to readers at once or not at all (a
    /// failure, e.g. a full disk, rolls everything back).
    pub(crate) fn commit<T>(
        &mut self,
        f: impl FnOnce(&mut Commit) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        commit_on(&mut self.conn, &self.path, f)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// [`StoreWriter::commit`] on any connection (the `forget` command has no writer lock: SQLite's
/// own lock serialises it with the writing server).
pub(crate) fn commit_on<T, E: From<StoreError>>(
    conn: &mut rusqlite::Connection,
    path: &Path,
    f: impl FnOnce(&mut Commit) -> Result<T, E>,
) -> Result<T, E> {
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
    pub(crate) fn is_forgotten(&self, id: &str) -> Result<bool, StoreError> {
        self.tx
            .prepare_cached("SELECT 1 FROM removed WHERE id = ?1 AND forgotten = 1")
            .map_err(self.e())?
            .query_row([id], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
            .map_err(self.e())
    }

    /// Stores a conversation and the given turns (each stored once: an unchanged turn is left
    /// alone, a changed one replaces the old version, a copy of another conversation's turn keeps
    /// no second body). Turns the record no longer reaches stay (a transcript that shrank).
    /// Returns false for a forgotten conversation (nothing stored).
    pub(crate) fn put(
        &mut self,
        conv: &ConvRecord,
        turns: &[TurnRecord],
    ) -> Result<bool, StoreError> {
        if self.is_forgotten(&conv.id)? {
            return Ok(false);
        }
        let (hash, blob) = conv.blob();
        let cid: i64 = self
            .tx
            .prepare_cached("INSERT INTO conversations(id, source, path, grp, turn_count, end_offset,
                     first_ts, last_ts, gone_since, seq, hash, blob)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                 ON CONFLICT(id) DO UPDATE SET source = excluded.source, path = excluded.path,
                     grp = excluded.grp, turn_count = max(turn_count, excluded.turn_count),
                     end_offset = excluded.end_offset,
                     first_ts = COALESCE(min(first_ts, excluded.first_ts), excluded.first_ts, first_ts),
                     last_ts = COALESCE(max(last_ts, excluded.last_ts), excluded.last_ts, last_ts),
                     gone_since = excluded.gone_since, seq = excluded.seq,
                     hash = excluded.hash, blob = excluded.blob
                 RETURNING cid")
            .map_err(self.e())?
            .query_row(
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
            .prepare_cached("DELETE FROM removed WHERE id = ?1 AND forgotten = 0")
            .map_err(self.e())?
            .execute([&conv.id])
            .map_err(self.e())?;
        for t in turns {
            self.put_turn(cid, t)?;
        }
        Ok(true)
    }

    /// Merges a conversation from elsewhere (`import`): a new one is stored whole; one the
    /// store holds keeps its description and every turn it has, and gains only the turn
    /// numbers it lacks (so merging the same records twice adds nothing). A forgotten one is
    /// not stored.
    pub(crate) fn merge(
        &mut self,
        conv: &ConvRecord,
        turns: &[TurnRecord],
    ) -> Result<Merged, StoreError> {
        if self.is_forgotten(&conv.id)? {
            return Ok(Merged::Forgotten);
        }
        let held: Option<(i64, u32)> = self
            .tx
            .prepare_cached("SELECT cid, turn_count FROM conversations WHERE id = ?1")
            .map_err(self.e())?
            .query_row([&conv.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(self.e())?;
        let Some((cid, count)) = held else {
            self.put(conv, turns)?;
            return Ok(Merged::Added(turns.len() as u64));
        };
        let mut added = 0;
        for t in turns {
            let present = self
                .tx
                .prepare_cached("SELECT 1 FROM turns WHERE cid = ?1 AND number = ?2")
                .map_err(self.e())?
                .query_row(params![cid, t.number], |_| Ok(()))
                .optional()
                .map_err(self.e())?
                .is_some();
            if !present {
                self.put_turn(cid, t)?;
                added += 1;
            }
        }
        if added > 0 || conv.turn_count > count {
            self.tx
                .prepare_cached(
                    "UPDATE conversations SET turn_count = max(turn_count, ?1),
                         first_ts = COALESCE(min(first_ts, ?2), ?2, first_ts),
                         last_ts = COALESCE(max(last_ts, ?3), ?3, last_ts), seq = ?4
                     WHERE cid = ?5",
                )
                .map_err(self.e())?
                .execute(params![
                    conv.turn_count,
                    conv.meta.first_ts,
                    conv.meta.last_ts,
                    self.seq,
                    cid
                ])
                .map_err(self.e())?;
        }
        Ok(Merged::Extended(added))
    }

    fn put_turn(&mut self, cid: i64, t: &TurnRecord) -> Result<(), StoreError> {
        let old: Option<i64> = self
            .tx
            .prepare_cached("SELECT hash FROM turns WHERE cid = ?1 AND number = ?2")
            .map_err(self.e())?
            .query_row(params![cid, t.number], |r| r.get(0))
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
                .prepare_cached(
                    "SELECT 1 FROM turns WHERE dup_key = ?1 AND hash = ?2 AND body IS NOT NULL
                       AND NOT (cid = ?3 AND number = ?4) LIMIT 1",
                )
                .map_err(self.e())?
                .query_row(params![k, t.hash as i64, cid, t.number], |_| Ok(()))
                .optional()
                .map_err(self.e())?
                .is_some(),
            None => false,
        };
        self.tx
            .prepare_cached(
                "INSERT OR REPLACE INTO turns(cid, number, ts, dup_key, hash, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .map_err(self.e())?
            .execute(params![
                cid,
                t.number,
                t.timestamp,
                dup,
                t.hash as i64,
                (!copied).then(|| super::record::packed(&t.body))
            ])
            .map_err(self.e())?;
        Ok(())
    }

    /// Before a turn row with a body goes: hands the body to a copy that relies on it.
    fn release(&mut self, cid: i64, number: u32) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "UPDATE turns SET body = (SELECT body FROM turns WHERE cid = ?1 AND number = ?2)
                 WHERE rowid = (SELECT c.rowid FROM turns c, turns o
                     WHERE o.cid = ?1 AND o.number = ?2 AND o.body IS NOT NULL
                       AND c.dup_key = o.dup_key AND c.hash = o.hash AND c.body IS NULL
                     LIMIT 1)",
            )
            .map_err(self.e())?
            .execute(params![cid, number])
            .map_err(self.e())?;
        Ok(())
    }

    /// Notes that a conversation's transcript is gone (the first time only).
    pub(crate) fn mark_gone(&mut self, id: &str, since: i64) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "UPDATE conversations SET gone_since = ?1, seq = ?2
                 WHERE id = ?3 AND gone_since IS NULL",
            )
            .map_err(self.e())?
            .execute(params![since, self.seq, id])
            .map_err(self.e())?;
        Ok(())
    }

    /// Removes conversations and their turns. `forget`: on request, so never stored again
    /// (retention removals are not remembered that way).
    pub(crate) fn remove(&mut self, ids: &[String], forget: bool) -> Result<Removed, StoreError> {
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
                    .prepare_cached("INSERT OR REPLACE INTO removed(id, seq, forgotten, at) VALUES (?1, ?2, ?3, ?4)")
                    .map_err(self.e())?
                    .execute(
                        params![id, self.seq, forget, crate::util::time::now_ms()],
                    )
                    .map_err(self.e())?;
            }
        }
        Ok(out)
    }

    /// Removes a conversation's turns (those older than `before`, epoch ms, when given); returns
    /// how many went. Bodies that copies rely on are handed to them first.
    pub(crate) fn remove_turns(
        &mut self,
        cid: i64,
        before: Option<i64>,
    ) -> Result<u64, StoreError> {
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
                .prepare_cached("DELETE FROM turns WHERE cid = ?1 AND number = ?2")
                .map_err(self.e())?
                .execute(params![cid, n])
                .map_err(self.e())?;
        }
        Ok(numbers.len() as u64)
    }

    /// Drops turns older than `cutoff` (epoch ms) of conversations whose transcript is gone
    /// (a transcript that still exists is the source of its turns); a conversation left empty is
    /// removed. Conversations touched get this commit's number, so readers reload them.
    pub(crate) fn retain(&mut self, cutoff: i64) -> Result<Removed, StoreError> {
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
                    .prepare_cached("INSERT OR REPLACE INTO removed(id, seq, forgotten, at) VALUES (?1, ?2, 0, ?3)")
                    .map_err(self.e())?
                    .execute(
                        params![id, self.seq, crate::util::time::now_ms()],
                    )
                    .map_err(self.e())?;
            } else {
                self.tx
                    .prepare_cached("UPDATE conversations SET seq = ?1 WHERE cid = ?2")
                    .map_err(self.e())?
                    .execute(params![self.seq, cid])
                    .map_err(self.e())?;
            }
            out.conversations.push(id);
        }
        Ok(out)
    }
}

/// The `meta` key holding which redaction the stored text went through.
const REDACT_KEY: &str = "redact_key";

/// [`crate::redact::key_bytes`] as stored in `meta`.
fn redact_key() -> i64 {
    xxhash_rust::xxh3::xxh3_64(&crate::redact::key_bytes()) as i64
}

impl StoreWriter {
    /// Brings the stored text under the redaction rules in force when it was stored under
    /// others (or before the store recorded them): every stored turn and conversation
    /// description is redacted again with the current rules, in one commit, and the rules'
    /// key recorded. Conversations whose transcript still exists are stored again anyway from
    /// the redacting readers (the persistent index, keyed on the same rules, is rebuilt, and a
    /// turn whose text changed replaces its stored version); store-only ones can only be
    /// redacted further: text an earlier rule removed stays removed. Returns the turns changed.
    pub(crate) fn rekey_redaction(&mut self) -> Result<u64, StoreError> {
        let key = redact_key();
        let stored: Option<i64> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [REDACT_KEY], |r| {
                r.get(0)
            })
            .optional()
            .map_err(StoreError::sql(&self.path))?;
        if stored == Some(key) {
            return Ok(0);
        }
        let changed = self.commit(|c| c.redact_again(key))?;
        // the old text's pages may still be in the write-ahead log: copy the log into the
        // database (where secure_delete zeroed what was replaced) and empty it
        if let Err(e) = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        {
            tracing::warn!(
                "cannot empty the write-ahead log of the store `{}`: {e}",
                self.path.display()
            );
        }
        Ok(changed)
    }
}

impl Commit<'_> {
    /// Redacts every stored turn and conversation again with today's rules and records `key`
    /// as the rules they were redacted with. Returns the turns changed.
    fn redact_again(&mut self, key: i64) -> Result<u64, StoreError> {
        let changed = self.redact_turns_again()?;
        self.redact_conversations_again()?;
        self.tx
            .prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")
            .map_err(self.e())?
            .execute(params![REDACT_KEY, key])
            .map_err(self.e())?;
        Ok(changed)
    }

    /// Every stored turn with a body of its own, redacted again; a turn whose text changed is
    /// rewritten, and its copies (no body of their own) follow it. Returns the turns changed.
    fn redact_turns_again(&mut self) -> Result<u64, StoreError> {
        use super::record::TurnRecord;
        let e = StoreError::sql(self.path);
        let rows: Vec<(i64, TurnRecord)> = {
            let mut st = self
                .tx
                .prepare(
                    "SELECT rowid, number, ts, dup_key, hash, body FROM turns
                     WHERE body IS NOT NULL",
                )
                .map_err(&e)?;
            st.query_map([], |r| {
                let record = TurnRecord {
                    number: r.get(1)?,
                    timestamp: r.get(2)?,
                    dup_key: r.get::<_, Option<i64>>(3)?.map(|k| k as u64),
                    hash: r.get::<_, i64>(4)? as u64,
                    body: r.get(5)?,
                };
                Ok((r.get(0)?, record))
            })
            .map_err(&e)?
            .collect::<Result<_, _>>()
            .map_err(&e)?
        };
        let mut changed = 0;
        for (rowid, old) in rows {
            // a damaged row is left to the integrity checks that report it
            let Ok(mut turn) = old.turn() else { continue };
            crate::transcript::redacted::turn(&mut turn);
            let new = TurnRecord::of(&turn);
            if new.hash == old.hash {
                continue;
            }
            // copies (no body of their own) follow the row they rely on
            self.tx
                .prepare_cached(
                    "UPDATE turns SET hash = ?1 WHERE dup_key IS ?2 AND hash = ?3
                       AND body IS NULL",
                )
                .map_err(self.e())?
                .execute(params![
                    new.hash as i64,
                    old.dup_key.map(|k| k as i64),
                    old.hash as i64
                ])
                .map_err(&e)?;
            self.tx
                .prepare_cached("UPDATE turns SET hash = ?1, body = ?2 WHERE rowid = ?3")
                .map_err(self.e())?
                .execute(params![
                    new.hash as i64,
                    super::record::packed(&new.body),
                    rowid
                ])
                .map_err(&e)?;
            changed += 1;
        }
        Ok(changed)
    }

    /// Every stored conversation's metadata, redacted again; rewritten where it changed.
    fn redact_conversations_again(&mut self) -> Result<(), StoreError> {
        let e = StoreError::sql(self.path);
        let convs: Vec<(i64, i64, Vec<u8>)> = {
            let mut st = self
                .tx
                .prepare("SELECT cid, hash, blob FROM conversations")
                .map_err(&e)?;
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(&e)?
                .collect::<Result<_, _>>()
                .map_err(&e)?
        };
        for (cid, hash, blob) in convs {
            let mut rec = ConvRecord::bare(String::new(), "", Default::default(), None);
            if rec.read_blob(hash as u64, &blob).is_err() {
                continue;
            }
            crate::transcript::redacted::meta(&mut rec.meta);
            let (new_hash, new_blob) = rec.blob();
            if new_hash as i64 != hash {
                self.tx
                    .prepare_cached("UPDATE conversations SET hash = ?1, blob = ?2 WHERE cid = ?3")
                    .map_err(self.e())?
                    .execute(params![new_hash as i64, new_blob, cid])
                    .map_err(&e)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::transcript::Turn;

    fn body_of(w: &StoreWriter) -> Turn {
        let (number, hash, body): (u32, i64, Vec<u8>) = w
            .conn
            .query_row("SELECT number, hash, body FROM turns", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        TurnRecord {
            number,
            hash: hash as u64,
            timestamp: None,
            dup_key: None,
            body,
        }
        .turn()
        .expect("decodes")
    }

    #[test]
    fn text_stored_under_other_redaction_rules_is_redacted_again() {
        let dir = tempfile::tempdir().unwrap();
        let (_store, w, _) = Store::open(dir.path()).unwrap();
        let mut w = w.expect("writer lock");
        let key = format!("ghp_{}", "k9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5P");
        let turn = Turn {
            user_text: format!("use token {key} please"),
            ..Turn::default()
        };
        let mut conv = ConvRecord::bare(
            "c1".into(),
            "claude",
            std::path::PathBuf::from("/x.jsonl"),
            None,
        );
        conv.meta.first_prompt = Some(format!("token {key}"));
        conv.turn_count = 1;
        // as if written before the store recorded its rules (or under others)
        w.commit(|c| c.put(&conv, &[TurnRecord::of(&turn)]))
            .unwrap();
        w.conn
            .execute("DELETE FROM meta WHERE key = ?1", [REDACT_KEY])
            .unwrap();
        assert!(body_of(&w).user_text.contains(&key));
        assert_eq!(w.rekey_redaction().unwrap(), 1);
        let back = body_of(&w);
        assert!(!back.user_text.contains(&key), "{}", back.user_text);
        assert!(back.user_text.starts_with("use token "));
        let (hash, blob): (i64, Vec<u8>) = w
            .conn
            .query_row("SELECT hash, blob FROM conversations", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let mut rec = ConvRecord::bare(String::new(), "", Default::default(), None);
        rec.read_blob(hash as u64, &blob).unwrap();
        assert!(!rec.meta.first_prompt.unwrap().contains(&key));
        // recorded: the next writer does nothing
        assert_eq!(w.rekey_redaction().unwrap(), 0);
    }
}
