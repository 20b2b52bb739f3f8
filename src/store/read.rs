//! Reading the store: what changed since a commit, one conversation, a range of turns, counts.
//! Every reader (any server, the CLI) goes through these; none of them writes.
use super::record::{ConvRecord, TurnRecord};
use super::{StoreError, schema};
use crate::transcript::adapter;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};

/// A conversation's row without its packed description: enough to tell what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredHead {
    pub id: String,
    pub format: &'static str,
    pub path: PathBuf,
    pub group: Option<String>,
    pub turn_count: u32,
    pub end_offset: u64,
    pub last_ts: Option<i64>,
    pub gone_since: Option<i64>,
    pub seq: i64,
}

/// What the store holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StoreCounts {
    pub conversations: u64,
    pub turns: u64,
    /// Conversations whose transcript is gone, and their turns.
    pub only_in_store: u64,
    pub turns_only_in_store: u64,
    pub oldest_turn_ms: Option<i64>,
    pub newest_turn_ms: Option<i64>,
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    StoreError::sql(path)
}

/// Whether the schema exists yet (a reader may open the file before the writer set it up).
pub(crate) fn ready(conn: &Connection, path: &Path) -> Result<bool, StoreError> {
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql(path))?;
    Ok(v >= 1 && v <= schema::SCHEMA_VERSION)
}

/// Runs `f` in one read transaction, so that all it reads comes from the same commit: a commit
/// landing between two separate reads (another server's, or `forget`) would be half seen.
pub(crate) fn at_one_commit<T>(
    conn: &Connection,
    path: &Path,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = conn.unchecked_transaction().map_err(sql(path))?;
    let out = f(&tx)?;
    tx.commit().map_err(sql(path))?;
    Ok(out)
}

/// The commit counter and the time of the last commit (0, None before any).
pub(crate) fn last_commit(
    conn: &Connection,
    path: &Path,
) -> Result<(i64, Option<i64>), StoreError> {
    if !ready(conn, path)? {
        return Ok((0, None));
    }
    let get = |k: &str| -> Result<i64, StoreError> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| r.get(0))
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(sql(path))
    };
    let ms = get("commit_ms")?;
    Ok((get("seq")?, (ms > 0).then_some(ms)))
}

/// Conversations written after commit `seq`, oldest commit first.
pub(crate) fn heads_since(
    conn: &Connection,
    path: &Path,
    seq: i64,
) -> Result<Vec<StoredHead>, StoreError> {
    if !ready(conn, path)? {
        return Ok(Vec::new());
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, source, path, grp, turn_count, end_offset, last_ts, gone_since, seq
             FROM conversations WHERE seq > ?1 ORDER BY seq, id",
        )
        .map_err(sql(path))?;
    let rows = stmt
        .query_map([seq], |r| {
            Ok((
                StoredHead {
                    id: r.get(0)?,
                    format: "",
                    path: PathBuf::from(r.get::<_, String>(2)?),
                    group: r.get(3)?,
                    turn_count: r.get(4)?,
                    end_offset: r.get::<_, i64>(5)? as u64,
                    last_ts: r.get(6)?,
                    gone_since: r.get(7)?,
                    seq: r.get(8)?,
                },
                r.get::<_, String>(1)?,
            ))
        })
        .map_err(sql(path))?;
    let mut out = Vec::new();
    for row in rows {
        let (mut head, source) = row.map_err(sql(path))?;
        // a format this build does not know is skipped
        if let Some(a) = adapter(&source) {
            head.format = a.name();
            out.push(head);
        }
    }
    Ok(out)
}

/// Conversations removed after commit `seq`: (id, forgotten on request).
pub(crate) fn removed_since(
    conn: &Connection,
    path: &Path,
    seq: i64,
) -> Result<Vec<(String, bool)>, StoreError> {
    if !ready(conn, path)? {
        return Ok(Vec::new());
    }
    let mut stmt = conn
        .prepare_cached("SELECT id, forgotten FROM removed WHERE seq > ?1 ORDER BY seq, id")
        .map_err(sql(path))?;
    let rows = stmt
        .query_map([seq], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? != 0)))
        .map_err(sql(path))?;
    rows.collect::<Result<_, _>>().map_err(sql(path))
}

/// One conversation in full (description decoded and checked).
pub(crate) fn conversation(
    conn: &Connection,
    path: &Path,
    id: &str,
) -> Result<Option<ConvRecord>, StoreError> {
    if !ready(conn, path)? {
        return Ok(None);
    }
    let row = conn
        .query_row(
            "SELECT source, path, grp, turn_count, end_offset, gone_since, hash, blob
             FROM conversations WHERE id = ?1",
            [id],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, u32>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, Option<i64>>(5)?,
                    r.get::<_, i64>(6)?,
                    r.get::<_, Vec<u8>>(7)?,
                ))
            },
        )
        .optional()
        .map_err(sql(path))?;
    let Some((source, file, group, turn_count, end_offset, gone_since, hash, blob)) = row else {
        return Ok(None);
    };
    let Some(format) = adapter(&source).map(|a| a.name()) else {
        return Ok(None);
    };
    let mut rec = ConvRecord::bare(id.to_owned(), format, PathBuf::from(file), group);
    rec.turn_count = turn_count;
    rec.end_offset = end_offset as u64;
    rec.gone_since = gone_since;
    rec.read_blob(hash as u64, &blob)
        .map_err(|source| StoreError::Record {
            path: path.to_owned(),
            source,
        })?;
    Ok(Some(rec))
}

/// Turns `from..to` of a conversation, read at one commit; None when the store no longer holds
/// the conversation (removed since its row was last read).
pub(crate) fn stored_turns(
    conn: &Connection,
    path: &Path,
    id: &str,
    from: u32,
    to: u32,
) -> Result<Option<Vec<TurnRecord>>, StoreError> {
    at_one_commit(conn, path, |conn| {
        if !ready(conn, path)? {
            return Ok(None);
        }
        let held = conn
            .query_row(
                "SELECT 1 FROM conversations WHERE id = ?1",
                [id],
                |_| Ok(()),
            )
            .optional()
            .map_err(sql(path))?;
        match held {
            Some(()) => turns(conn, path, id, from, to).map(Some),
            None => Ok(None),
        }
    })
}

/// Turns `from..to` of a conversation, in order (missing numbers are skipped). A copy's body is
/// found through the turn it copies.
pub(crate) fn turns(
    conn: &Connection,
    path: &Path,
    id: &str,
    from: u32,
    to: u32,
) -> Result<Vec<TurnRecord>, StoreError> {
    if !ready(conn, path)? || from >= to {
        return Ok(Vec::new());
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT t.number, t.ts, t.dup_key, t.hash,
                    COALESCE(t.body, (SELECT o.body FROM turns o WHERE o.dup_key = t.dup_key
                        AND o.hash = t.hash AND o.body IS NOT NULL LIMIT 1))
             FROM turns t JOIN conversations c ON c.cid = t.cid
             WHERE c.id = ?1 AND t.number >= ?2 AND t.number < ?3 ORDER BY t.number",
        )
        .map_err(sql(path))?;
    let rows = stmt
        .query_map(params![id, from, to], |r| {
            Ok(TurnRecord {
                number: r.get(0)?,
                timestamp: r.get(1)?,
                dup_key: r.get::<_, Option<i64>>(2)?.map(|k| k as u64),
                hash: r.get::<_, i64>(3)? as u64,
                body: r.get::<_, Option<Vec<u8>>>(4)?.unwrap_or_default(),
            })
        })
        .map_err(sql(path))?;
    rows.collect::<Result<_, _>>().map_err(sql(path))
}

/// Ids of every conversation forgotten on request.
pub(crate) fn forgotten(conn: &Connection, path: &Path) -> Result<Vec<String>, StoreError> {
    if !ready(conn, path)? {
        return Ok(Vec::new());
    }
    let mut stmt = conn
        .prepare_cached("SELECT id FROM removed WHERE forgotten = 1 ORDER BY id")
        .map_err(sql(path))?;
    let rows = stmt.query_map([], |r| r.get(0)).map_err(sql(path))?;
    rows.collect::<Result<_, _>>().map_err(sql(path))
}

/// How much the store holds.
pub(crate) fn counts(conn: &Connection, path: &Path) -> Result<StoreCounts, StoreError> {
    if !ready(conn, path)? {
        return Ok(StoreCounts::default());
    }
    // from the conversation rows alone (one per conversation, not per turn): cheap at 1M turns
    let row: (i64, i64, i64, i64, Option<i64>, Option<i64>) = conn
        .query_row(
            "SELECT count(*), COALESCE(sum(turn_count), 0), COALESCE(sum(gone_since IS NOT NULL), 0),
                    COALESCE(sum(CASE WHEN gone_since IS NOT NULL THEN turn_count END), 0),
                    min(first_ts), max(last_ts)
             FROM conversations",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .map_err(sql(path))?;
    let (conversations, turns, only_in_store, turns_only_in_store, oldest, newest) = row;
    Ok(StoreCounts {
        conversations: conversations as u64,
        turns: turns as u64,
        only_in_store: only_in_store as u64,
        turns_only_in_store: turns_only_in_store as u64,
        oldest_turn_ms: oldest,
        newest_turn_ms: newest,
    })
}
