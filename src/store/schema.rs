//! Opening the store's database: pragmas, the schema and its version, the integrity check the
//! writer runs, and moving a damaged file aside (never deleting it).
use super::{StoreError, StoreWriter};
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The layout version, kept in `PRAGMA user_version`. A store with a higher one was written by
/// a newer build: refused, never overwritten.
pub(crate) const SCHEMA_VERSION: i64 = 1;

/// Conversations (one row each, the description packed and checksummed), turns (one row per
/// conversation and turn number; a turn copied by a resume or fork keeps its body once: the
/// copy's `body` is NULL and found by `dup_key` and `hash`), conversations forgotten on
/// request (never stored again) or dropped by retention, and the commit counter.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS conversations(
    cid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    grp TEXT,
    turn_count INTEGER NOT NULL,
    end_offset INTEGER NOT NULL,
    first_ts INTEGER,
    last_ts INTEGER,
    gone_since INTEGER,
    seq INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    blob BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_seq ON conversations(seq);
CREATE TABLE IF NOT EXISTS turns(
    cid INTEGER NOT NULL,
    number INTEGER NOT NULL,
    ts INTEGER,
    dup_key INTEGER,
    hash INTEGER NOT NULL,
    body BLOB,
    PRIMARY KEY(cid, number)
);
CREATE INDEX IF NOT EXISTS turns_dup ON turns(dup_key, hash) WHERE dup_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS removed(
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    forgotten INTEGER NOT NULL,
    at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta(key, value) VALUES ('seq', 0), ('commit_ms', 0);
";

/// Whether an SQLite error means the file is damaged (or not a database at all).
pub(super) fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    StoreError::sql(path)
}

/// The schema version of an open database, refusing a newer one.
fn check_version(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql(path))?;
    if v > SCHEMA_VERSION {
        return Err(StoreError::Newer {
            path: path.to_owned(),
            found: v,
        });
    }
    Ok(v)
}

/// A read connection. An empty file (the writer has not created the schema yet) reads as an
/// empty store.
pub(super) fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql(path))?;
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(sql(path))?;
    match check_version(&conn, path) {
        Err(StoreError::Sql { source, .. }) if is_damage(&source) => Err(StoreError::Damaged {
            path: path.to_owned(),
            reason: source.to_string(),
        }),
        Err(e) => Err(e),
        Ok(_) => Ok(conn),
    }
}

/// Opens the database for writing (holding `lock`), checking it first; a damaged file is moved
/// aside and replaced by a new store, and the error saying so is returned with it.
pub(super) fn open_writer(
    path: &Path,
    lock: File,
) -> Result<(StoreWriter, Option<StoreError>), StoreError> {
    match try_open_writer(path) {
        Ok(conn) => Ok((
            StoreWriter {
                conn,
                path: path.to_owned(),
                _lock: lock,
            },
            None,
        )),
        Err((e, true)) => {
            let moved_to = move_aside(path).map_err(|source| StoreError::Dir {
                path: path.to_owned(),
                source,
            })?;
            tracing::error!(
                "the store `{}` is damaged ({e}); moved it aside to `{}` and starting a new one from the transcripts that remain",
                path.display(),
                moved_to.display()
            );
            let conn = try_open_writer(path).map_err(|(e, _)| e)?;
            Ok((
                StoreWriter {
                    conn,
                    path: path.to_owned(),
                    _lock: lock,
                },
                Some(StoreError::MovedAside {
                    path: path.to_owned(),
                    reason: e.to_string(),
                    moved_to,
                }),
            ))
        }
        Err((e, false)) => Err(e),
    }
}

/// Opens, checks and sets up the database. The flag says whether the failure is damage.
fn try_open_writer(path: &Path) -> Result<Connection, (StoreError, bool)> {
    let err = |e: rusqlite::Error| {
        if is_damage(&e) {
            let reason = e.to_string();
            return (
                StoreError::Damaged {
                    path: path.to_owned(),
                    reason,
                },
                true,
            );
        }
        (sql(path)(e), false)
    };
    let conn = Connection::open(path).map_err(err)?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(err)?;
    let version = check_version(&conn, path).map_err(|e| match e {
        StoreError::Sql { source, .. } => err(source),
        e => (e, false),
    })?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .map_err(err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(
            "the store `{}` could not switch to WAL mode (got {mode})",
            path.display()
        );
    }
    // WAL + NORMAL: a commit survives the process being killed at any instant; a power loss
    // may lose the last commits but never corrupts the file. secure_delete: text replaced or
    // removed (a turn redacted again, `forget`) is overwritten on disk, not left in free pages.
    conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA secure_delete=ON;")
        .map_err(err)?;
    // the whole-file check reads every page (~0.1 s per 60 MB): only after a writer that did
    // not close the store (killed, crashed); records carry their own checksums either way
    if version > 0 && !closed_cleanly(&conn) {
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(err)?;
        if check != "ok" {
            return Err((
                StoreError::Damaged {
                    path: path.to_owned(),
                    reason: format!("integrity check: {check}"),
                },
                true,
            ));
        }
    }
    conn.execute_batch(SCHEMA).map_err(err)?;
    conn.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(err)?;
    set_closed_cleanly(&conn, false).map_err(err)?;
    Ok(conn)
}

/// The `meta` key saying the last writer closed the store (see [`set_closed_cleanly`]).
const CLEAN_KEY: &str = "closed_cleanly";

/// Whether the last writer closed the store itself (false after a kill or crash).
fn closed_cleanly(conn: &Connection) -> bool {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [CLEAN_KEY], |r| {
        r.get::<_, i64>(0)
    })
    .is_ok_and(|v| v == 1)
}

/// Notes that a writer has the store open (false) or closed it (true).
pub(super) fn set_closed_cleanly(conn: &Connection, clean: bool) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
        rusqlite::params![CLEAN_KEY, i64::from(clean)],
    )
    .map(|_| ())
}

/// Renames the database and its WAL and shared-memory files to `<name>.damaged-<ms>`.
fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    let stamp = crate::util::time::now_ms();
    let with = |p: &Path, suffix: &str| {
        let mut s = p.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s)
    };
    let target = with(path, &format!(".damaged-{stamp}"));
    std::fs::rename(path, &target)?;
    for side in ["-wal", "-shm"] {
        let from = with(path, side);
        if from.exists() {
            std::fs::rename(&from, with(&target, side))?;
        }
    }
    Ok(target)
}
