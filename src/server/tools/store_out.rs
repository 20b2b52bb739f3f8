//! The durable store's section of `index_status` (see [`crate::store::StoreReport`]).
use super::iso;
use crate::store::{Role, StoreReport};
use rmcp::schemars::JsonSchema;
use serde::Serialize;

/// This server's part in the durable store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars")]
pub(crate) enum StoreRole {
    Writer,
    Reader,
    Off,
}

/// What the durable store holds and this server's part in it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct StoreOut {
    /// False with `--no-store` or `--no-redact`, or when the store
    /// cannot be used (then `error` says why and the server runs mirror-only).
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `writer` (this server stores what it reads), `reader` (another server does) or `off`.
    pub role: StoreRole,
    /// Bytes on disk (database and its write-ahead log).
    pub bytes: u64,
    pub conversations: u64,
    pub turns: u64,
    /// Conversations (and their turns) whose transcript is gone: only the store has them.
    pub only_in_store: u64,
    pub turns_only_in_store: u64,
    /// Time of the last commit to the store (by any server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_commit: Option<String>,
    /// Commits made by this server.
    pub commits: u64,
    /// Turns read but not yet committed (a first build's backlog drains in slices).
    pub pending_turns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where a damaged store was moved (it is never deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_aside: Option<String>,
}

impl From<StoreReport> for StoreOut {
    fn from(r: StoreReport) -> Self {
        StoreOut {
            enabled: r.role != Role::Off,
            path: r.path.map(|p| p.display().to_string()),
            role: match r.role {
                Role::Writer => StoreRole::Writer,
                Role::Reader => StoreRole::Reader,
                Role::Off => StoreRole::Off,
            },
            bytes: r.bytes,
            conversations: r.counts.conversations,
            turns: r.counts.turns,
            only_in_store: r.counts.only_in_store,
            turns_only_in_store: r.counts.turns_only_in_store,
            last_commit: iso(r.last_commit_ms),
            commits: r.commits,
            pending_turns: r.pending_turns,
            error: r.error,
            moved_aside: r.moved_aside.map(|p| p.display().to_string()),
        }
    }
}
