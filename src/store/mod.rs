//! The durable store: every conversation and turn ever indexed, kept under the data directory
//! (`$XDG_DATA_HOME/conversation-search/`, else `~/.local/share/conversation-search/`, or
//! `--data-dir`) so that history outlives its transcripts.
//!
//! SQLite (bundled, WAL mode) does the hard parts: several processes read one file at once,
//! a commit is atomic, a torn WAL tail is detected by its frame checksums and dropped on
//! recovery. On top of it every record carries its own checksum ([`record`]). One server at a
//! time is the writer: the one holding an exclusive `flock` on `writer.lock`, released by the
//! kernel when that process exits or dies, so another server takes over. The others read.
pub(crate) mod admin;
pub(crate) mod exchange;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod read;
pub(crate) mod record;
mod schema;
pub(crate) mod write;

use rusqlite::Connection;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub(crate) use read::{StoreCounts, StoredHead};
pub(crate) use record::{ConvRecord, TurnRecord};
pub(crate) use schema::SCHEMA_VERSION;

/// File names inside the data directory.
pub(crate) const DB_NAME: &str = "store.sqlite3";
const LOCK_NAME: &str = "writer.lock";

/// What can go wrong with the store. Each message names the path and what to do.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error(
        "cannot use the data directory `{path}`: {source}; running mirror-only (history is not kept once transcripts go). Pass --data-dir DIR for a writable directory, or --no-store to silence this"
    )]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the store `{path}` was written by a newer conversation-search (schema {found}; this build knows up to {SCHEMA_VERSION}); it is left untouched and this server runs mirror-only. Upgrade conversation-search, or pass --data-dir DIR for another store"
    )]
    Newer { path: PathBuf, found: i64 },
    #[error(
        "the store `{path}` is damaged ({reason}); it was moved aside to `{moved_to}` and is rebuilt from the transcripts that remain"
    )]
    MovedAside {
        path: PathBuf,
        reason: String,
        moved_to: PathBuf,
    },
    #[error("the store `{path}` is damaged ({reason}); the writing server moves it aside")]
    Damaged { path: PathBuf, reason: String },
    #[error("store `{path}`: {source}; the change is retried later")]
    Sql {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("a record in the store `{path}` is damaged ({source}); it is skipped")]
    Record {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl StoreError {
    fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Sql {
            path: path.to_owned(),
            source,
        }
    }
}

/// The default data directory: `$XDG_DATA_HOME/conversation-search`, else
/// `~/.local/share/conversation-search`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(base.join("conversation-search"))
}

/// This server's part in the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Role {
    /// No store (`--no-store`, or it could not be opened).
    #[default]
    Off,
    Reader,
    Writer,
}

impl Role {}

/// What the store looks like from this server, for `index_status`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct StoreReport {
    /// The database file; `None` with `--no-store`.
    pub path: Option<PathBuf>,
    pub role: Role,
    /// Bytes on disk (database and its WAL).
    pub bytes: u64,
    pub counts: StoreCounts,
    /// Epoch ms of the last commit seen (by any server).
    pub last_commit_ms: Option<i64>,
    /// Commits this server made.
    pub commits: u64,
    /// Turns this server read and has yet to commit (the writer's backlog after a first build).
    pub pending_turns: u64,
    /// The last problem (cleared by the next successful commit).
    pub error: Option<String>,
    /// Where a damaged store was moved.
    pub moved_aside: Option<PathBuf>,
}

/// An open store: the shared, read-side handle (any thread; the tools read turns through it).
pub(crate) struct Store {
    pub dir: PathBuf,
    pub path: PathBuf,
    read: Mutex<Connection>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.path.display())
    }
}

/// The write side, owned by the one thread that writes; holds the writer lock while it lives.
pub(crate) struct StoreWriter {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    _lock: File,
}

impl Drop for StoreWriter {
    /// Says the store was closed, so the next writer skips the whole-file check.
    fn drop(&mut self) {
        if let Err(e) = schema::set_closed_cleanly(&self.conn, true) {
            tracing::debug!(
                "cannot mark the store `{}` closed: {e}",
                self.path.display()
            );
        }
    }
}

impl StoreWriter {
    /// [`StoreWriter::rekey_redaction`], saying what it did (a failure leaves the text as it
    /// is and is retried by the next writer).
    fn rekey_or_warn(&mut self) {
        match self.rekey_redaction() {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                "the redaction rules changed: redacted {n} stored turns again in `{}`",
                self.path.display()
            ),
            Err(e) => tracing::warn!("cannot redact the store again under the current rules: {e}"),
        }
    }
}

impl Store {
    /// Opens (creating when needed) the store in `dir` and, when no other server holds the
    /// writer lock, takes it. A damaged store found by the writer is moved aside (never deleted)
    /// and a new one started; the error saying so comes back with the new store.
    pub(crate) fn open(
        dir: &Path,
    ) -> Result<(Store, Option<StoreWriter>, Option<StoreError>), StoreError> {
        Self::open_with(dir, true)
    }

    /// [`Store::open`], taking the writer lock only with `write` (a server that follows
    /// another's index stores nothing until it takes over).
    pub(crate) fn open_with(
        dir: &Path,
        write: bool,
    ) -> Result<(Store, Option<StoreWriter>, Option<StoreError>), StoreError> {
        let dir_err = |source| StoreError::Dir {
            path: dir.to_owned(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(dir_err)?;
        let path = dir.join(DB_NAME);
        let mut moved = None;
        let lock = if write {
            Self::try_lock(dir).map_err(dir_err)?
        } else {
            None
        };
        let writer = match lock {
            Some(lock) => {
                let (mut w, m) = schema::open_writer(&path, lock)?;
                moved = m;
                w.rekey_or_warn();
                Some(w)
            }
            None => None,
        };
        let read = schema::open_reader(&path)?;
        Ok((
            Store {
                dir: dir.to_owned(),
                path,
                read: Mutex::new(read),
            },
            writer,
            moved,
        ))
    }

    /// Takes the writer lock if it is free (`Ok(None)` when another server holds it).
    fn try_lock(dir: &Path) -> std::io::Result<Option<File>> {
        use rustix::fs::{FlockOperation, flock};
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_NAME))?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(file)),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Becomes the writer if the lock is free now (the previous writer exited or died).
    pub(crate) fn try_take_over(
        &self,
    ) -> Result<Option<(StoreWriter, Option<StoreError>)>, StoreError> {
        let lock = Self::try_lock(&self.dir).map_err(|source| StoreError::Dir {
            path: self.dir.clone(),
            source,
        })?;
        match lock {
            None => Ok(None),
            Some(lock) => {
                let (mut w, moved) = schema::open_writer(&self.path, lock)?;
                w.rekey_or_warn();
                if moved.is_some() {
                    // the file was replaced: the read connection must see the new one
                    *self.read.lock().unwrap_or_else(|p| p.into_inner()) =
                        schema::open_reader(&self.path)?;
                }
                Ok(Some((w, moved)))
            }
        }
    }

    /// Runs `f` with the read connection.
    pub(crate) fn with_read<T>(
        &self,
        f: impl FnOnce(&Connection, &Path) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = self.read.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn, &self.path)
    }

    /// Bytes on disk: the database and its WAL.
    pub(crate) fn bytes(&self) -> u64 {
        ["", "-wal"]
            .iter()
            .filter_map(|s| {
                let mut p = self.path.clone().into_os_string();
                p.push(s);
                std::fs::metadata(p).ok()
            })
            .map(|m| m.len())
            .sum()
    }
}
