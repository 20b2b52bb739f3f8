//! The store's control commands (CLI only; the MCP tools stay read-only): `forget` and
//! `store status`. Both open the store's file directly; a running writer is not disturbed
//! (SQLite's own write lock serialises `forget` with it) and every server drops what was
//! forgotten from its index at its next look at the store.
use super::read::{self, StoreCounts};
use super::record::ConvRecord;
use super::{DB_NAME, StoreError, schema};
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// Which conversations `forget` removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selector {
    /// One conversation (and its sub-agents: ids `<ID>/…`).
    Session(String),
    /// Conversations whose project directory or working directory contains this
    /// (case-insensitive).
    Project(String),
    /// Conversations whose last turn is before this instant (epoch ms).
    Before(i64),
    /// Conversations of this format.
    Source(String),
}

/// One conversation `forget` selected.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Selected {
    pub session_id: String,
    pub source: String,
    pub turns: u32,
    pub source_present: bool,
}

/// What `forget` removed (or, without `--yes`, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Forgot {
    pub removed: bool,
    pub conversations: usize,
    pub turns: u64,
    pub sessions: Vec<Selected>,
}

/// `store status`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct StoreStatus {
    pub path: String,
    pub exists: bool,
    pub conversations: u64,
    pub turns: u64,
    pub bytes_on_disk: u64,
    pub oldest_turn: Option<String>,
    pub newest_turn: Option<String>,
    /// Conversations (and their turns) whose transcript is gone: only the store has them.
    pub only_in_store: u64,
    pub turns_only_in_store: u64,
}

fn open(dir: &Path) -> Result<Option<(Connection, PathBuf)>, StoreError> {
    let path = dir.join(DB_NAME);
    if !path.exists() {
        return Ok(None);
    }
    Ok(Some((schema::open_reader(&path)?, path)))
}

/// Every stored conversation (description decoded), in id order.
fn all(conn: &Connection, path: &Path) -> Result<Vec<ConvRecord>, StoreError> {
    let mut out = Vec::new();
    for head in read::heads_since(conn, path, 0)? {
        if let Some(rec) = read::conversation(conn, path, &head.id)? {
            out.push(rec);
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// Whether `sel` picks this conversation.
pub(super) fn selects(sel: &Selector, c: &ConvRecord) -> bool {
    match sel {
        Selector::Session(id) => c.id == *id || c.id.starts_with(&format!("{id}/")),
        Selector::Project(p) => {
            let p = p.to_lowercase();
            let hit = |s: &str| s.to_lowercase().contains(&p);
            c.file.group.as_deref().is_some_and(hit) || c.meta.cwd.as_deref().is_some_and(hit)
        }
        Selector::Before(t) => c.meta.last_ts.or(c.meta.first_ts).is_some_and(|l| l < *t),
        Selector::Source(f) => c.file.format == f,
    }
}

/// Removes the selected conversations from the store (with `apply`; otherwise only says what
/// would go). Forgotten conversations are remembered, so no server stores or indexes them
/// again even while their transcript exists.
pub(crate) fn forget(dir: &Path, sel: &Selector, apply: bool) -> Result<Forgot, StoreError> {
    let Some((mut conn, path)) = open(dir)? else {
        return Ok(Forgot::default());
    };
    let chosen: Vec<ConvRecord> = all(&conn, &path)?
        .into_iter()
        .filter(|c| selects(sel, c))
        .collect();
    let mut out = Forgot {
        removed: apply,
        conversations: chosen.len(),
        turns: chosen.iter().map(|c| u64::from(c.turn_count)).sum(),
        sessions: chosen
            .iter()
            .map(|c| Selected {
                session_id: c.id.clone(),
                source: c.file.format.to_owned(),
                turns: c.turn_count,
                source_present: c.gone_since.is_none(),
            })
            .collect(),
    };
    if !apply {
        return Ok(out);
    }
    let mut ids: Vec<String> = chosen.into_iter().map(|c| c.id).collect();
    if let Selector::Session(id) = sel {
        if !ids.contains(id) {
            // not stored (yet): remembered all the same
            ids.push(id.clone());
        }
    }
    let removed = super::write::commit_on(&mut conn, &path, |tx| tx.remove(&ids, true))?;
    out.turns = removed.turns;
    Ok(out)
}

/// What the store holds.
pub(crate) fn status(dir: &Path) -> Result<StoreStatus, StoreError> {
    let path = dir.join(DB_NAME);
    let mut out = StoreStatus {
        path: path.display().to_string(),
        exists: false,
        conversations: 0,
        turns: 0,
        bytes_on_disk: 0,
        oldest_turn: None,
        newest_turn: None,
        only_in_store: 0,
        turns_only_in_store: 0,
    };
    let Some((conn, path)) = open(dir)? else {
        return Ok(out);
    };
    let StoreCounts {
        conversations,
        turns,
        only_in_store,
        turns_only_in_store,
        oldest_turn_ms,
        newest_turn_ms,
    } = read::counts(&conn, &path)?;
    out.exists = true;
    out.conversations = conversations;
    out.turns = turns;
    out.only_in_store = only_in_store;
    out.turns_only_in_store = turns_only_in_store;
    out.oldest_turn = oldest_turn_ms.map(crate::util::time::format_iso);
    out.newest_turn = newest_turn_ms.map(crate::util::time::format_iso);
    out.bytes_on_disk = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|s| {
            let mut p = path.clone().into_os_string();
            p.push(s);
            std::fs::metadata(p).ok()
        })
        .map(|m| m.len())
        .sum();
    Ok(out)
}
