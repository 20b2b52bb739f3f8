//! Following another server: while a server of the same configuration holds the writer lock,
//! this one reads no transcript and watches nothing; it switches to each generation the writer
//! publishes (polled every [`FOLLOW_POLL`]) and becomes the writer when the lock comes free.
use super::status::{LiveStatus, Role};
use super::watch::Wake;
use crate::cache::Cache;
use crate::cache::gens::BaseStamp;
use crate::corpus::writer::Writer;
use std::fs::File;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How often a follower looks for a new generation when the generations directory cannot be
/// watched (otherwise a new delta file wakes it at once; the poll stays as a safety net).
pub const FOLLOW_POLL: Duration = Duration::from_millis(100);
const FOLLOW_POLL_WATCHED: Duration = Duration::from_millis(500);
/// A follower tries the writer lock every this long (a takeover within half a second).
const LOCK_EVERY: Duration = Duration::from_millis(500);

/// How following ended.
pub enum Followed {
    /// Asked to stop (answer on the sender once done).
    Stop(Sender<()>),
    /// The writer lock is ours: lead from the state followed so far.
    Lead(File),
}

/// Follows the writer's generations until stopped or until the writer lock is taken.
pub fn follow(
    writer: &mut Writer,
    cache: &Cache,
    status: &LiveStatus,
    (tx, rx): (&Sender<Wake>, &Receiver<Wake>),
) -> Followed {
    status.set_role(Role::Follower);
    let watcher = watch_gens(cache, tx.clone());
    let poll = if watcher.is_some() {
        FOLLOW_POLL_WATCHED
    } else {
        FOLLOW_POLL
    };
    let mut next_lock = Instant::now();
    let mut seen: Option<BaseStamp> = None;
    let mut loaded = false;
    loop {
        // a base of another lineage (a new writer's, or the first one) replaces the state
        let stamp = cache.base_stamp();
        if stamp.is_some() && stamp != seen {
            seen = stamp;
            let mine = writer.generation_on_disk().0;
            let reload = match cache.peek_base_generation() {
                Some((sharing, chain, seq)) if sharing == cache.sharing => {
                    let (_, at) = writer.generation_on_disk();
                    // a new lineage, or ours moved on past deltas already removed
                    !writer.has_base()
                        || chain != mine
                        || (seq > at && !cache.has_delta(chain, at + 1))
                }
                // written by a server with another store: better than nothing, until ours
                Some(_) => !loaded,
                None => false,
            };
            if reload {
                match writer.follow_base(cache) {
                    Ok(true) => {
                        loaded = true;
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
        match rx.recv_timeout(wait) {
            Ok(Wake::Stop(done)) => return Followed::Stop(done),
            Ok(Wake::Fs(_)) => {
                // a burst of events (temporary file, rename) is one wake-up
                for w in rx.try_iter() {
                    if let Wake::Stop(done) = w {
                        return Followed::Stop(done);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(FOLLOW_POLL),
        }
    }
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
        let _ = tx.send(Wake::Fs(event));
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
