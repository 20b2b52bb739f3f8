//! The durable store as one server uses it: the store handles, this server's role, and what it
//! knows of the store (store-only conversations, stored turn counts, forgotten ids, pending
//! writes). The behaviour lives in `archive` and `archive_sync`.
use super::catalog::ConvId;
use crate::store::{Role, Store, StoreWriter, TurnRecord};
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// How history is kept.
#[derive(Debug, Clone)]
pub struct ArchiveConfig {
    /// The data directory holding the store.
    pub dir: PathBuf,
    /// Drop stored turns older than this many days whose transcript is gone (None: keep).
    pub retain_days: Option<u32>,
}

/// The store as one server uses it.
pub struct Archive {
    pub store: Arc<Store>,
    pub(super) writer: Option<StoreWriter>,
    /// Conversations in the catalog that no followed transcript holds, by id.
    pub(super) unfollowed: FxHashMap<String, ConvId>,
    /// Turns the store holds per conversation (as last seen).
    pub(super) stored: FxHashMap<String, u32>,
    /// Conversations forgotten on request: never indexed or stored again.
    pub forgotten: FxHashSet<String>,
    /// The last commit this server has caught up with.
    pub(super) seq: i64,
    /// Turns read since the last commit, to store (writer only).
    pub(super) pending: Vec<(ConvId, Vec<TurnRecord>)>,
    /// Conversations whose transcript went since the last commit.
    pub(super) pending_gone: Vec<(String, i64)>,
    /// The store must be compared with the whole index (just became the writer, or a commit
    /// failed).
    pub(super) resync: bool,
    pub(super) retain_ms: Option<i64>,
    pub(super) next_retention: Instant,
    pub(super) next_tick: Instant,
}

impl Archive {
    pub fn is_writer(&self) -> bool {
        self.writer.is_some()
    }

    pub fn role(&self) -> Role {
        if self.writer.is_some() {
            Role::Writer
        } else {
            Role::Reader
        }
    }
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Archive({})", self.store.path.display())
    }
}
