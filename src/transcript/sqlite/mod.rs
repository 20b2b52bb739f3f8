//! A read-only reader of SQLite database files in pure Rust, enough to scan table b-trees the
//! way a SQLite reader would see them: file header, pages overlaid by the committed frames of
//! the write-ahead log, `sqlite_schema`, `CREATE TABLE` column order, records with overflow.
//!
//! It never writes anything and never creates the `-shm`, `-wal` or `-journal` files a SQLite
//! connection would; it takes no locks. Instead, [`Database::is_current`] tells whether the
//! snapshot survived the read (no checkpoint wrote the main file, the WAL was not restarted):
//! callers read, check, and read again when a writer got in the way. A file that is not a
//! consistent database (bad header, pointer out of range, truncated) yields an
//! `InvalidData` error; a WAL whose tail is torn or fails its checksum is read up to its last
//! valid commit, as SQLite does.
mod btree;
mod pager;
mod record;
mod schema;
mod wal;

#[cfg(test)]
mod tests;

pub(crate) use btree::ScanStats;
pub(crate) use pager::side_path;
pub(crate) use record::Row;
pub(crate) use schema::Table;

#[cfg(test)]
pub(crate) use record::Value;
use std::io;
use std::path::Path;
#[cfg(test)]
pub(crate) use wal::{FrameInfo, frames as wal_frames};

/// Attempts of [`read_consistent`] before giving up on a database that keeps changing.
const ATTEMPTS: u32 = 4;

/// Runs `read` on snapshots of the database at `path` until one stays current for the whole
/// read (a few attempts, backing off): a checkpoint or WAL restart in the middle of a read may
/// have mixed two states. Errors that a concurrent writer can cause are retried too.
pub(crate) fn read_consistent<T>(
    path: &Path,
    mut read: impl FnMut(&Database) -> io::Result<T>,
) -> io::Result<T> {
    let mut last = None;
    for n in 0..ATTEMPTS {
        if n > 0 {
            std::thread::sleep(std::time::Duration::from_millis(25 << n));
        }
        let db = Database::open(path)?;
        match read(&db) {
            Ok(v) if db.is_current()? => return Ok(v),
            Ok(_) => {}
            Err(e) if !db.is_current()? => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::WouldBlock,
            "the database kept changing while being read",
        )
    }))
}

/// An `InvalidData` error: the file is not a consistent database.
pub(crate) fn corrupt(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// One consistent snapshot of a database file and its WAL.
pub(crate) struct Database {
    pager: pager::Pager,
}

impl Database {
    /// Opens a snapshot (read-only; nothing is created next to the file).
    pub(crate) fn open(path: &Path) -> io::Result<Database> {
        Ok(Database {
            pager: pager::Pager::open(path)?,
        })
    }

    #[cfg(test)]
    pub(crate) fn page_size(&self) -> u32 {
        self.pager.page_size
    }

    /// Commits taken from the WAL (0 when there is none).
    #[cfg(test)]
    pub(crate) fn wal_commits(&self) -> u32 {
        self.pager.wal_commits()
    }

    /// Every ordinary table of the schema (virtual tables, which have no b-tree, and tables
    /// whose `CREATE TABLE` cannot be parsed are left out).
    pub(crate) fn tables(&self) -> io::Result<Vec<Table>> {
        let mut out = Vec::new();
        if self.pager.page_count == 0 {
            return Ok(out);
        }
        let schema = Table::schema_table();
        self.scan(&schema, |row| {
            if row.raw(0)?.as_str() != Some("table") {
                return Ok(());
            }
            let Some(name) = row.raw(1)?.into_string() else {
                return Ok(());
            };
            let root = row.raw(3)?.as_int().unwrap_or(0);
            let Ok(root) = u32::try_from(root) else {
                return Ok(());
            };
            let sql = row.raw(4)?.into_string().unwrap_or_default();
            if root == 0 {
                return Ok(());
            }
            if let Some((columns, rowid_alias, without_rowid)) = schema::parse_create_table(&sql) {
                out.push(Table {
                    name,
                    root,
                    columns,
                    rowid_alias,
                    without_rowid,
                });
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The table named `name` (ASCII case-insensitive), if the schema has it.
    pub(crate) fn table(&self, name: &str) -> io::Result<Option<Table>> {
        Ok(self
            .tables()?
            .into_iter()
            .find(|t| t.name.eq_ignore_ascii_case(name)))
    }

    /// Calls `each` for every row of `table`, in rowid order.
    pub(crate) fn scan<F>(&self, table: &Table, mut each: F) -> io::Result<ScanStats>
    where
        F: FnMut(&mut Row<'_>) -> io::Result<()>,
    {
        if table.without_rowid {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("`{}` is a WITHOUT ROWID table", table.name),
            ));
        }
        let pager = &self.pager;
        btree::scan(pager, table.root, &mut |cell| {
            let mut row = Row::new(
                pager,
                table,
                cell.rowid,
                cell.local,
                cell.payload_len,
                cell.overflow,
            );
            each(&mut row)
        })
    }

    /// Whether the files still hold this snapshot (see the module doc). A read whose snapshot
    /// is no longer current may have mixed two states and must be repeated.
    pub(crate) fn is_current(&self) -> io::Result<bool> {
        self.pager.is_current()
    }
}

/// How the rows of one table are read.
pub(crate) type ReadTable<T> = fn(&Database, &Table) -> io::Result<Vec<T>>;

/// The rows of the `sessions` and `messages` tables of the database at `path` (where coding
/// agents keep their conversations), read from one consistent snapshot; none without either.
pub(crate) fn sessions_and_messages<S, M>(
    path: &Path,
    sessions: ReadTable<S>,
    messages: ReadTable<M>,
) -> io::Result<(Vec<S>, Vec<M>)> {
    read_consistent(path, |db| {
        let (Some(st), Some(mt)) = (db.table("sessions")?, db.table("messages")?) else {
            return Ok((Vec::new(), Vec::new()));
        };
        Ok((sessions(db, &st)?, messages(db, &mt)?))
    })
}
