//! SQLite databases written by test code through python3's `sqlite3` (tests that need one
//! are skipped, visibly, when it is unavailable), with the Goose and Crush schemas of their
//! upstream migrations.

use std::path::Path;
use std::process::{Command, Stdio};

/// Whether python3 with its sqlite3 module can be run.
pub fn available() -> bool {
    Command::new("python3")
        .args(["-c", "import sqlite3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `script` (SQL statements) on the database at `db`, created when missing, committed,
/// optionally in WAL mode (left un-checkpointed).
pub fn exec(db: &Path, script: &str, wal: bool) {
    let py = "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\n\
        if sys.argv[3]=='1': c.execute('pragma journal_mode=wal')\n\
        c.executescript(sys.argv[2])\nc.commit()\nc.close()";
    let status = Command::new("python3")
        .args(["-c", py])
        .arg(db)
        .arg(script)
        .arg(if wal { "1" } else { "0" })
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .expect("run python3");
    assert!(status.success(), "sqlite script failed: {script}");
}

/// A SQL string literal.
pub fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Goose's `sessions` and `messages` tables (schema version 13 of its migrations, plus the
/// newer `parent_session_id`).
pub const GOOSE_SCHEMA: &str = "
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT, description TEXT, user_set_name INTEGER NOT NULL DEFAULT 0,
  session_type TEXT, working_dir TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, extension_data TEXT,
  total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER, accumulated_total_tokens INTEGER,
  accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, accumulated_cost REAL, provider_name TEXT,
  model_config_json TEXT, goose_mode TEXT, archived_at TEXT, project_id TEXT, parent_session_id TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL,
  role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TEXT,
  tokens TEXT, metadata_json TEXT);
";

/// Crush's tables after its upstream migrations (indexes and triggers left out).
pub const CRUSH_SCHEMA: &str = "
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
  parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE read_files (session_id TEXT NOT NULL, path TEXT NOT NULL, read_at INTEGER NOT NULL);
";
