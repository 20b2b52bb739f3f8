//! OpenCode transcripts under its data directory (`~/.local/share/opencode`): the SQLite
//! database of current versions (`opencode.db`, or `opencode-<channel>.db`), read by our own
//! read-only SQLite reader, or the legacy `storage/` tree of JSON files of older versions.
//!
//! A database is one unit holding every session; a legacy session file is one unit with its
//! messages and parts. When a database exists, the legacy tree is ignored: OpenCode migrated
//! it into the database and keeps the old files, which would otherwise show every session
//! twice. Conversation ids are `opencode:<sessionID>`; child sessions (sub-agents) point to
//! their parent through `ConvMeta::parent_id`.
pub(crate) mod convert;
pub(crate) mod db;
pub(crate) mod storage;

use crate::transcript::dir::sorted_entries;
use crate::transcript::{Adapter, Reader, Role, SourceFile};
use crate::util::glob::Glob;
use std::path::{Path, PathBuf};

pub(crate) use convert::FORMAT;

/// The OpenCode adapter.
pub(crate) struct OpenCode;

/// Database file names OpenCode uses: `opencode.db`, `opencode-<channel>.db`.
fn is_db_name(name: &str) -> bool {
    name == "opencode.db"
        || name
            .strip_prefix("opencode-")
            .and_then(|r| r.strip_suffix(".db"))
            .is_some_and(|channel| !channel.is_empty())
}

/// The databases directly under `root`.
fn databases(root: &Path) -> Vec<PathBuf> {
    sorted_entries(root)
        .into_iter()
        .filter(|e| !e.is_dir && is_db_name(&e.name))
        .map(|e| e.path)
        .collect()
}

fn unit(path: PathBuf) -> SourceFile {
    let id = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    SourceFile {
        path,
        format: FORMAT,
        group: None,
        role: Role::Session { id },
    }
}

impl Adapter for OpenCode {
    fn name(&self) -> &'static str {
        FORMAT
    }

    /// `$XDG_DATA_HOME/opencode` when that is set (as OpenCode itself does), else
    /// `~/.local/share/opencode`.
    fn default_root(&self, home: &Path) -> PathBuf {
        match std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
            Some(d) if d.is_absolute() => d.join("opencode"),
            _ => home.join(".local").join("share").join("opencode"),
        }
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let dbs = databases(root);
        if !dbs.is_empty() {
            return dbs.into_iter().map(unit).collect();
        }
        storage::session_files(&root.join("storage"))
            .into_iter()
            .map(unit)
            .collect()
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let name = path.file_name()?.to_str()?;
        if path.parent() == Some(root) && is_db_name(name) {
            return path.is_file().then(|| unit(path.to_owned()));
        }
        if storage::is_session_file(root, path) && path.is_file() && databases(root).is_empty() {
            return Some(unit(path.to_owned()));
        }
        None
    }

    /// A database's `-wal`, `-shm` or `-journal` → the database; a legacy message or part file
    /// (or directory) → its session file.
    fn transcript_for(&self, path: &Path) -> Option<PathBuf> {
        let name = path.file_name()?.to_str()?;
        for suffix in ["-wal", "-shm", "-journal"] {
            if let Some(db) = name.strip_suffix(suffix).filter(|n| is_db_name(n)) {
                return Some(path.with_file_name(db));
            }
        }
        storage::session_for(path)
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        let is_db = file
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_db_name);
        if is_db {
            Reader::Unit(Box::<db::DbReader>::default())
        } else {
            Reader::Unit(Box::<storage::StorageReader>::default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_files_map_to_their_database() {
        let a = OpenCode;
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(
            a.transcript_for(Path::new("/d/opencode.db-wal")),
            p("/d/opencode.db")
        );
        assert_eq!(
            a.transcript_for(Path::new("/d/opencode.db-shm")),
            p("/d/opencode.db")
        );
        assert_eq!(
            a.transcript_for(Path::new("/d/opencode-beta.db-journal")),
            p("/d/opencode-beta.db")
        );
        assert_eq!(a.transcript_for(Path::new("/d/other.db-wal")), None);
        assert!(is_db_name("opencode-local.db") && !is_db_name("opencode-.db"));
    }
}
