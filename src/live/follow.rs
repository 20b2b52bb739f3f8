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
use std::time::Duration;

/// How often a follower looks for a new generation.
pub const FOLLOW_POLL: Duration = Duration::from_millis(100);
/// A follower tries the writer lock every this many polls (a takeover within half a second).
const LOCK_EVERY: u32 = 5;

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
    rx: &Receiver<Wake>,
) -> Followed {
    status.set_role(Role::Follower);
    let mut seen: Option<BaseStamp> = None;
    let mut loaded = false;
    let mut polls: u32 = 0;
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
        polls += 1;
        let lock = if polls % LOCK_EVERY == 1 {
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
        match rx.recv_timeout(FOLLOW_POLL) {
            Ok(Wake::Stop(done)) => return Followed::Stop(done),
            Ok(Wake::Fs(_)) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(FOLLOW_POLL),
        }
    }
}
