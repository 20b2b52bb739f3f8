//! Following another server: while a server of the same configuration holds the writer lock,
//! this one reads no transcript and watches nothing; it switches to each generation the writer
//! publishes (polled every [`FOLLOW_POLL`]) and becomes the writer when the lock comes free.
use super::status::{LiveStatus, Role};
use super::watch::Wake;
use crate::cache::Cache;
use crate::cache::sharing::BaseStamp;
use crate::corpus::writer::Writer;
use std::fs::File;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How often a follower looks for a new generation when the generations directory cannot be
/// watched (otherwise a new delta file wakes it at once; the poll stays as a safety net).
pub(crate) const FOLLOW_POLL: Duration = Duration::from_millis(100);
const FOLLOW_POLL_WATCHED: Duration = Duration::from_millis(500);
/// A follower tries the writer lock every this long (a takeover within half a second).
const LOCK_EVERY: Duration = Duration::from_millis(500);

/// How following ended.
pub(crate) enum Followed {
    /// Asked to stop (answer on the sender once done).
    Stop(Sender<()>),
    /// The writer lock is ours: lead from the state followed so far.
    Lead(File),
}

/// Follows the writer's generations until stopped or until the writer lock is taken.
pub(crate) fn follow(
    writer: &mut Writer,
    cache: &Cache,
    status: &LiveStatus,
    (tx, rx): (&Sender<Wake>, &Receiver<Wake>),
) -> Followed {
    status.set_role(Role::Follower);
    status.begin();
    let watcher = watch_gens(cache, tx.clone());
    let poll = if watcher.is_some() {
        FOLLOW_POLL_WATCHED
    } else {
        FOLLOW_POLL
    };
    let mut base = BaseWatch::default();
    let mut next_lock = Instant::now();
    loop {
        base.reload_if_replaced(writer, cache);
        if writer.has_base() {
            writer.follow_deltas(cache);
        }
        status.set_followed(writer.generation_on_disk());
        let lock = if Instant::now() >= next_lock {
            next_lock = Instant::now() + LOCK_EVERY;
            cache.try_lock_writer()
        } else {
            Ok(None)
        };
        match lock {
            Ok(Some(lock)) => {
                // the last writer may have published once more before it let go
                if writer.has_base() {
                    writer.follow_deltas(cache);
                }
                return Followed::Lead(lock);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("cannot take the index writer lock: {e}"),
        }
        let wait = poll.min(next_lock.saturating_duration_since(Instant::now()));
        if let Some(done) = wait_for_news(rx, wait) {
            return Followed::Stop(done);
        }
    }
}

/// The base file as the follower last saw it.
#[derive(Default)]
struct BaseWatch {
    seen: Option<BaseStamp>,
    /// A base was loaded (of any lineage).
    loaded: bool,
}

impl BaseWatch {
    /// A base of another lineage (a new writer's, or the first one) replaces the state.
    fn reload_if_replaced(&mut self, writer: &mut Writer, cache: &Cache) {
        let stamp = cache.base_stamp();
        if stamp.is_none() || stamp == self.seen {
            return;
        }
        self.seen = stamp;
        let (mine, at) = writer.generation_on_disk();
        let reload = match cache.peek_base_generation() {
            Some((sharing, chain, seq)) if sharing == cache.sharing => {
                // a new lineage, or ours moved on past deltas already removed
                !writer.has_base() || chain != mine || (seq > at && !cache.has_delta(chain, at + 1))
            }
            // written by a server with another store: better than nothing, until ours
            Some(_) => !self.loaded,
            None => false,
        };
        if !reload {
            return;
        }
        match writer.follow_base(cache) {
            Ok(true) => {
                self.loaded = true;
                tracing::info!(
                    turns = writer.live_docs(),
                    "following the index writer from `{}`",
                    cache.path().display()
                );
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(
                "cannot follow the index `{}` ({e}); waiting for the writer's next one",
                cache.path().display()
            ),
        }
    }
}

/// Waits up to `wait` for a wake-up; a burst of events (temporary file, rename) is one.
/// Returns the stop's answer channel when asked to stop.
fn wait_for_news(rx: &Receiver<Wake>, wait: Duration) -> Option<Sender<()>> {
    match rx.recv_timeout(wait) {
        Ok(Wake::Stop(done)) => return Some(done),
        Ok(Wake::Fs(..)) => {
            for w in rx.try_iter() {
                if let Wake::Stop(done) = w {
                    return Some(done);
                }
            }
        }
        Err(RecvTimeoutError::Timeout) => {}
        Err(RecvTimeoutError::Disconnected) => std::thread::sleep(FOLLOW_POLL),
    }
    None
}

/// Watches the generations directory so that a new delta wakes the follower at once (`None`
/// when it cannot be watched: then it is polled).
fn watch_gens(
    cache: &Cache,
    tx: Sender<Wake>,
) -> Option<notify_debouncer_full::notify::RecommendedWatcher> {
    use notify_debouncer_full::notify::{self, RecursiveMode, Watcher};
    let dir = cache.gens_dir();
    let mut w = notify::recommended_watcher(move |event| {
        let _ = tx.send(Wake::Fs(event, std::time::Instant::now()));
    })
    .ok()?;
    match w.watch(&dir, RecursiveMode::NonRecursive) {
        Ok(()) => Some(w),
        Err(e) => {
            tracing::debug!("polling `{}` for generations: {e}", dir.display());
            None
        }
    }
}
