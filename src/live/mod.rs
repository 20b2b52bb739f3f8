//! The live index: follows the transcript directories while agents write to them. Events from
//! the file watcher are debounced per path (quiet period, bounded staleness) and applied by the
//! single writer; when watching is impossible the corpus is rescanned periodically instead.
pub(crate) mod follower;
mod indexer;
mod saver;
pub(crate) mod schedule;
pub(crate) mod status;
pub(crate) mod watch;

use crate::cache::Cache;
use crate::corpus::StoreConfig;
use crate::corpus::writer::Writer;
pub(crate) use indexer::Indexer;
pub(crate) use status::{LiveStatus, Role};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;
use watch::Wake;

/// Timing of the live index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiveConfig {
    /// Apply a change once its path has been quiet this long.
    pub debounce: Duration,
    /// Apply a change at the latest this long after its first unapplied event.
    pub max_staleness: Duration,
    /// Rescan interval when polling instead of watching.
    pub poll_interval: Duration,
    /// Poll even when watching would work.
    pub force_poll: bool,
}

impl Default for LiveConfig {
    fn default() -> Self {
        Self {
            debounce: Duration::from_millis(2000),
            max_staleness: Duration::from_millis(10_000),
            poll_interval: Duration::from_millis(5000),
            force_poll: false,
        }
    }
}

/// Asks the indexer thread to save its pending work and stop.
#[derive(Clone)]
pub(crate) struct Stopper(Sender<Wake>);

impl Stopper {
    /// Requests the stop and waits up to `timeout` for the indexer to confirm (it cannot
    /// answer while its first build runs; the cache file is replaced atomically, so exiting
    /// meanwhile loses nothing).
    pub(crate) fn stop(&self, timeout: Duration) {
        let (done_tx, done_rx) = channel();
        if self.0.send(Wake::Stop(done_tx)).is_ok() {
            let _ = done_rx.recv_timeout(timeout);
        }
    }
}

/// The channel that wakes the indexer: the sender side to stop it, the receiver for [`run`].
pub(crate) fn channel_pair() -> (Stopper, Sender<Wake>, Receiver<Wake>) {
    let (tx, rx) = channel();
    (Stopper(tx.clone()), tx, rx)
}

/// Builds the index, then keeps it fresh until stopped (see [`Stopper`]). Runs on its own
/// thread and owns the writer; `tx`/`rx` come from [`channel_pair`]. With a cache, only the
/// server holding its writer lock reads transcripts; the others follow its generations until
/// the lock comes free (see [`follower`]).
pub(crate) fn run(
    writer: Writer,
    status: Arc<LiveStatus>,
    cfg: LiveConfig,
    sources: (Option<Cache>, Option<StoreConfig>),
    channel: (Sender<Wake>, Receiver<Wake>),
) {
    if let Some(indexer) = Indexer::start(writer, status, cfg, sources, channel) {
        indexer.run();
    }
}
