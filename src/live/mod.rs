//! The live index: follows the transcript directories while agents write to them. Events from
//! the file watcher are debounced per path (quiet period, bounded staleness) and applied by the
//! single writer; when watching is impossible the corpus is rescanned periodically instead.
pub mod follow;
pub mod schedule;
pub mod status;
pub mod watch;

use crate::cache::Cache;
use crate::corpus::history::ArchiveConfig;
use crate::corpus::writer::Writer;
use schedule::Schedule;
pub use status::{LiveStatus, Role, WatchMode};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};
use watch::{Wake, Watch};

/// Timing of the live index.
#[derive(Debug, Clone, Copy)]
pub struct LiveConfig {
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
pub struct Stopper(Sender<Wake>);

impl Stopper {
    /// Requests the stop and waits up to `timeout` for the indexer to confirm (it cannot
    /// answer while its first build runs; the cache file is replaced atomically, so exiting
    /// meanwhile loses nothing).
    pub fn stop(&self, timeout: Duration) {
        let (done_tx, done_rx) = channel();
        if self.0.send(Wake::Stop(done_tx)).is_ok() {
            let _ = done_rx.recv_timeout(timeout);
        }
    }
}

/// The channel that wakes the indexer: the sender side to stop it, the receiver for [`run`].
pub fn channel_pair() -> (Stopper, Sender<Wake>, Receiver<Wake>) {
    let (tx, rx) = channel();
    (Stopper(tx.clone()), tx, rx)
}

/// Builds the index, then keeps it fresh until stopped (see [`Stopper`]). Runs on its own
/// thread and owns the writer; `tx`/`rx` come from [`channel_pair`]. With a cache, only the
/// server holding its writer lock reads transcripts; the others follow its generations until
/// the lock comes free (see [`follow`]).
pub fn run(
    mut writer: Writer,
    status: Arc<LiveStatus>,
    cfg: LiveConfig,
    (cache, archive): (Option<Cache>, Option<ArchiveConfig>),
    (tx, rx): (Sender<Wake>, Receiver<Wake>),
) {
    let status = &*status;
    let lock = match &cache {
        None => None,
        Some(c) => match c.try_lock_writer() {
            Ok(Some(lock)) => Some(lock),
            Ok(None) => {
                if let Some(a) = &archive {
                    // another server stores what it reads; this one only reads the store
                    writer.open_archive_reader(a);
                }
                match follow::follow(&mut writer, c, status, (&tx, &rx)) {
                    follow::Followed::Stop(done) => {
                        let _ = done.send(());
                        return;
                    }
                    follow::Followed::Lead(lock) => Some(lock),
                }
            }
            Err(e) => {
                tracing::warn!("cannot use the index writer lock ({e}); indexing alone");
                None
            }
        },
    };
    if let (Some(_), Some(c)) = (&lock, &cache) {
        c.sweep_other_gens();
    }
    if let Some(a) = &archive {
        if !writer.has_archive() {
            writer.open_archive(a);
        }
    }
    // only the lock holder publishes generations (and then its cache is the shared one)
    let publishing = lock.is_some();
    status
        .debounce_ms
        .store(cfg.debounce.as_millis() as u64, Ordering::Relaxed);
    status
        .max_staleness_ms
        .store(cfg.max_staleness.as_millis() as u64, Ordering::Relaxed);
    let roots: Vec<PathBuf> = writer.roots().iter().map(|r| r.dir.clone()).collect();
    // Watch before the first build so that nothing written meanwhile is missed.
    let mut watch = if cfg.force_poll {
        status.set_mode(WatchMode::Poll, None);
        None
    } else {
        match Watch::start(&roots, tx) {
            Ok(mut w) => {
                status.set_mode(WatchMode::Watch, None);
                for (dir, reason) in w.take_polled() {
                    status.add_polled(dir, reason);
                }
                Some(w)
            }
            Err(e) => {
                tracing::warn!(
                    "file watching unavailable ({e}); rescanning every {} ms instead",
                    cfg.poll_interval.as_millis()
                );
                status.set_mode(WatchMode::Poll, Some(e));
                None
            }
        }
    };
    if lock.is_some() {
        // said once watching (or polling) is set up
        status.set_role(Role::Writer);
    }
    // a follower that takes over continues from the generation it followed
    let dirty = if writer.has_base() {
        writer.lead()
    } else {
        writer.start(cache.as_ref())
    };
    let mut schedule = Schedule::new(cfg.debounce, cfg.max_staleness);
    if let Some(w) = watch.as_mut() {
        // a target written between the first build and its watch is read again
        for link in w.follow_links(writer.file_paths()) {
            schedule.note(link, Instant::now());
        }
    }
    let mut saver = Saver {
        cache,
        dirty,
        // restored unchanged: the first change waits for the interval like any other
        last: (!dirty).then(Instant::now),
        took: Duration::ZERO,
    };
    saver.publish(&mut writer, publishing, status);
    saver.maybe_save(&mut writer);
    let mut next_poll = Instant::now() + cfg.poll_interval;
    loop {
        let now = Instant::now();
        let mut wake = schedule
            .next_deadline()
            .unwrap_or(now + Duration::from_secs(3600));
        // directories that cannot be watched are polled while the rest is watched
        let polling = watch.is_none() || !status.polled().is_empty();
        if polling {
            wake = wake.min(next_poll);
        }
        if let Some(due) = saver.due() {
            wake = wake.min(due);
        }
        if let Some(due) = writer.store_due() {
            wake = wake.min(due);
        }
        let mut rescan = false;
        let mut stop = None;
        match rx.recv_timeout(wake.saturating_duration_since(now)) {
            Ok(first) => {
                // take everything already queued, then note each path once
                let now = Instant::now();
                let mut events = vec![first];
                events.extend(rx.try_iter());
                let mut paths: Vec<PathBuf> = Vec::new();
                for event in events {
                    match event {
                        Wake::Stop(done) => stop = Some(done),
                        Wake::Fs(Ok(event)) => {
                            let (p, lost) = watch::changed_paths(event);
                            rescan |= lost;
                            match watch.as_ref() {
                                Some(w) => paths.extend(p.into_iter().map(|p| w.translate(p))),
                                None => paths.extend(p),
                            }
                        }
                        Wake::Fs(Err(e)) => {
                            let reason = watch::why(&e);
                            tracing::warn!("file watcher error: {reason}");
                            // a directory the watcher could not add (the limit reached while
                            // running) is polled from now on
                            let dirs = if e.paths.is_empty() {
                                roots.clone()
                            } else {
                                e.paths
                            };
                            for dir in dirs {
                                status.add_polled(dir, reason.clone());
                            }
                            status.set_error(reason);
                            rescan = true;
                        }
                    }
                }
                paths.sort();
                paths.dedup();
                for p in paths {
                    if let Some(w) = watch.as_mut() {
                        match w.replan(&p) {
                            Ok(appeared) => {
                                for root in appeared {
                                    schedule.note(root, now);
                                }
                                // a new directory is watched (or polled) before it is rescanned
                                w.saw(&p);
                                for (dir, reason) in w.take_polled() {
                                    status.add_polled(dir, reason);
                                }
                                for dir in w.take_gone() {
                                    status.remove_polled(&dir);
                                }
                            }
                            Err(e) => {
                                tracing::warn!(
                                    "file watching failed ({e}); rescanning periodically instead"
                                );
                                status.set_mode(WatchMode::Poll, Some(e));
                                watch = None;
                                rescan = true;
                                break;
                            }
                        }
                    }
                    schedule.note(p, now);
                }
                status.events.fetch_add(1, Ordering::Relaxed);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // every sender is gone: nothing can stop or wake us any more but the clock
                if watch.is_some() {
                    tracing::warn!("file watcher stopped; rescanning periodically instead");
                    status.set_mode(WatchMode::Poll, Some("the file watcher stopped".into()));
                    watch = None;
                }
                std::thread::sleep(wake.saturating_duration_since(Instant::now()));
            }
        }
        if let Some(done) = stop {
            writer.store_flush();
            saver.save_now(&mut writer);
            // before saying done: the process may exit right after
            writer.close_store();
            let _ = done.send(());
            return;
        }
        let now = Instant::now();
        let due = schedule.take_due(now);
        let mut changed = false;
        if !due.is_empty() {
            changed |= writer.apply(&due);
        }
        if rescan || (polling && now >= next_poll) {
            let dirs: Vec<PathBuf> = status.polled().into_iter().map(|(d, _)| d).collect();
            // only the directories that cannot be watched, unless everything is polled (or a
            // polled directory lies outside the roots: a symlinked file's target)
            let whole = rescan
                || watch.is_none()
                || dirs.iter().any(|d| !roots.iter().any(|r| d.starts_with(r)));
            changed |= if whole {
                writer.poll()
            } else {
                writer.poll_dirs(&dirs)
            };
            next_poll = Instant::now() + cfg.poll_interval;
        }
        if let (true, Some(w)) = (changed, watch.as_mut()) {
            for link in w.follow_links(writer.file_paths()) {
                schedule.note(link, Instant::now());
            }
        }
        saver.dirty |= changed;
        // other servers' commits, the writer lock, retention
        if writer.store_due().is_some_and(|d| d <= Instant::now()) {
            saver.dirty |= writer.store_tick();
        }
        status.pending.store(schedule.len(), Ordering::Relaxed);
        if saver.dirty {
            saver.publish(&mut writer, publishing, status);
        }
        saver.maybe_save(&mut writer);
    }
}

/// Most frequent cache write while transcripts keep changing.
const SAVE_INTERVAL: Duration = Duration::from_secs(30);

/// Writes the persistent index after the first build and then at most every
/// [`SAVE_INTERVAL`] while changes keep coming (less often when a write takes long: the writer
/// thread spends at most 1/[`SAVE_BUSY_RATIO`] of its time saving), and on shutdown.
struct Saver {
    cache: Option<Cache>,
    dirty: bool,
    /// When the last write ended (or the start, when the cache was restored unchanged).
    last: Option<Instant>,
    /// How long the last write took.
    took: Duration,
}

/// A save may come again only after `SAVE_BUSY_RATIO` times its own duration.
const SAVE_BUSY_RATIO: u32 = 20;

impl Saver {
    fn due(&self) -> Option<Instant> {
        match (self.dirty, self.cache.is_some(), self.last) {
            (true, true, Some(last)) => Some(last + SAVE_INTERVAL.max(self.took * SAVE_BUSY_RATIO)),
            (true, true, None) => Some(Instant::now()),
            _ => None,
        }
    }

    /// Publishes the changes since the last generation for the servers following this one.
    fn publish(&self, writer: &mut Writer, publishing: bool, status: &LiveStatus) {
        let Some(cache) = self.cache.as_ref().filter(|_| publishing) else {
            return;
        };
        if let Err(e) = writer.publish_delta(cache) {
            tracing::warn!(
                "cannot publish a generation under `{}`: {e}",
                cache.gens_dir().display()
            );
        }
        status.set_followed(writer.generation_on_disk());
    }

    fn maybe_save(&mut self, writer: &mut Writer) {
        if self.due().is_some_and(|d| d <= Instant::now()) {
            self.save_now(writer);
        }
    }

    /// Saves now if anything changed since the last save.
    fn save_now(&mut self, writer: &mut Writer) {
        let Some(cache) = &self.cache else { return };
        if !self.dirty {
            return;
        }
        let started = Instant::now();
        match writer.save_cache(cache) {
            Ok(bytes) => {
                tracing::debug!(
                    bytes,
                    ms = started.elapsed().as_millis() as u64,
                    "index cache written"
                );
                let (chain, seq) = writer.generation_on_disk();
                cache.prune_deltas(chain, seq);
                if writer.built_here() {
                    match writer.adopt_base(cache) {
                        Ok(true) => tracing::debug!("the index built here is now mapped"),
                        Ok(false) => {}
                        Err(e) => tracing::warn!(
                            "cannot map the index just written to `{}`: {e}",
                            cache.path().display()
                        ),
                    }
                }
            }
            Err(e) => tracing::warn!(
                "cannot write the index cache `{}`: {e}",
                cache.path().display()
            ),
        }
        self.dirty = false;
        self.took = started.elapsed();
        self.last = Some(Instant::now());
    }
}
