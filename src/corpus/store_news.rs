//! What was committed to the durable store since a commit this server has seen (its own, other
//! servers', the `forget` command's): the conversations written and removed, and the store's
//! counts, all read at one commit.
use crate::store::{StoreCounts, StoreError, StoredHead, read};
use std::path::Path;

/// What changed in the store since a commit.
pub(super) struct News {
    /// The last commit, which the news bring this server to.
    pub(super) seq: i64,
    pub(super) commit_ms: Option<i64>,
    /// Removed conversations, and whether each was forgotten on request.
    pub(super) removed: Vec<(String, bool)>,
    /// Conversations written.
    pub(super) heads: Vec<StoredHead>,
    pub(super) counts: StoreCounts,
}

impl News {
    /// What was committed after `since` (None when nothing was); the caller reads at one
    /// commit ([`read::at_one_commit`]).
    pub(super) fn since(
        conn: &rusqlite::Connection,
        path: &Path,
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
