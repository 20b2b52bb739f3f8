//! The indexer thread: it owns the writer, starts it (electing who writes the shared index,
//! following the writer meanwhile, opening the store, setting up the watcher before the first
//! build), then handles each wake-up (file-system events, watcher errors, a stop) and ticks:
//! applying the changes that are due, polling what cannot be watched, keeping the store in
//! step, publishing the generation and writing the cache.
use super::LiveConfig;
use super::follower::{self, Followed};
use super::saver::Saver;
use super::schedule::Schedule;
use super::status::{LiveStatus, Role, WatchMode};
use super::watch::{self, Wake, Watch};
use crate::cache::Cache;
use crate::corpus::StoreConfig;
use crate::corpus::writer::Writer;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// Longest that background work (the store's backlog, the cache write) waits for pending live
/// changes to be applied first; past it one piece runs anyway, so that changes that never stop
/// coming do not starve it.
const MAX_YIELD: Duration = Duration::from_secs(1);

/// The live index's loop and everything it keeps between wake-ups.
pub(crate) struct Indexer {
    writer: Writer,
    status: Arc<LiveStatus>,
    cfg: LiveConfig,
    rx: Receiver<Wake>,
    /// `None` while polling instead.
    watch: Option<Watch>,
    roots: Vec<PathBuf>,
    schedule: Schedule,
    saver: Saver,
    /// Only the holder of the index's writer lock publishes generations.
    publishing: bool,
    next_poll: Instant,
    /// Since when background work has waited for pending live changes (None: it is not
    /// waiting).
    yielding_since: Option<Instant>,
    /// The index's writer lock, held while this server writes the shared index.
    _lock: Option<File>,
}

/// What one wake-up brought besides paths to note.
#[derive(Default)]
struct Woken {
    /// Everything must be rescanned (events were lost, or the watcher failed).
    rescan: bool,
    /// Asked to stop: answer here once done.
    stop: Option<Sender<()>>,
}

impl Indexer {
    /// Starts the writer: takes the index's writer lock or follows the server holding it (until
    /// the lock comes free, or a stop: then `None`, the stop answered), opens the store, sets up
    /// watching (before the first build, so that nothing written meanwhile is missed) and runs
    /// the first build.
    pub(crate) fn start(
        mut writer: Writer,
        status: Arc<LiveStatus>,
        cfg: LiveConfig,
        (cache, store): (Option<Cache>, Option<StoreConfig>),
        (tx, rx): (Sender<Wake>, Receiver<Wake>),
    ) -> Option<Self> {
        let lock = elect(
            &mut writer,
            &status,
            cache.as_ref(),
            store.as_ref(),
            (&tx, &rx),
        )?;
        if let (Some(_), Some(c)) = (&lock, &cache) {
            c.sweep_other_gens();
        }
        if let Some(s) = &store {
            if !writer.has_store() {
                writer.open_store(s);
            }
        }
        status
            .debounce_ms
            .store(cfg.debounce.as_millis() as u64, Ordering::Relaxed);
        status
            .max_staleness_ms
            .store(cfg.max_staleness.as_millis() as u64, Ordering::Relaxed);
        let roots: Vec<PathBuf> = writer.roots().iter().map(|r| r.dir.clone()).collect();
        let watch = start_watch(&roots, &cfg, &status, tx);
        if lock.is_some() {
            // said once watching (or polling) is set up
            status.set_role(Role::Writer);
        }
        status.begin();
        // a follower that takes over continues from the generation it followed
        let dirty = if writer.has_base() {
            writer.lead()
        } else {
            writer.start(cache.as_ref())
        };
        let mut indexer = Indexer {
            writer,
            status,
            schedule: Schedule::new(cfg.debounce, cfg.max_staleness),
            cfg,
            rx,
            watch,
            roots,
            saver: Saver::new(cache, dirty),
            publishing: lock.is_some(),
            next_poll: Instant::now() + cfg.poll_interval,
            yielding_since: None,
            _lock: lock,
        };
        // a target written between the first build and its watch is read again
        indexer.note_links();
        indexer.publish_and_save();
        indexer.next_poll = Instant::now() + indexer.cfg.poll_interval;
        Some(indexer)
    }

    /// Keeps the index fresh until stopped.
    pub(crate) fn run(mut self) {
        loop {
            let wake = self.next_wake();
            // as it was before this wake-up (what it brings is polled at the next one)
            let polling = self.polling();
            let woken = match self
                .rx
                .recv_timeout(wake.saturating_duration_since(Instant::now()))
            {
                Ok(first) => {
                    // take everything already queued, then note each path once
                    let mut events = vec![first];
                    events.extend(self.rx.try_iter());
                    self.handle(events)
                }
                Err(RecvTimeoutError::Timeout) => Woken::default(),
                Err(RecvTimeoutError::Disconnected) => {
                    self.disconnected(wake);
                    Woken::default()
                }
            };
            if let Some(done) = woken.stop {
                self.stop(done);
                return;
            }
            self.tick(woken.rescan, polling);
        }
    }

    /// When to wake up at the latest: the first change due, the next poll, the next cache
    /// write, the next look at the store (those two not before [`Self::background_may_run`]
    /// lets them).
    fn next_wake(&self) -> Instant {
        let now = Instant::now();
        let mut wake = self
            .schedule
            .next_deadline()
            .unwrap_or(now + Duration::from_secs(3600));
        if self.polling() {
            wake = wake.min(self.next_poll);
        }
        let not_before =
            (!self.schedule.is_empty()).then(|| self.yielding_since.unwrap_or(now) + MAX_YIELD);
        let background = |due: Instant| not_before.map_or(due, |b| due.max(b));
        if let Some(due) = self.saver.due() {
            wake = wake.min(background(due));
        }
        if let Some(due) = self.writer.store_due() {
            wake = wake.min(background(due));
        }
        wake
    }

    /// Whether background work (a slice of the store's backlog, other servers' commits, a cache
    /// write) may run now: live changes go first, so it waits while any is pending (noted, its
    /// debounce not over), at most [`MAX_YIELD`] at a time.
    fn background_may_run(&mut self, now: Instant) -> bool {
        if self.schedule.is_empty() {
            self.yielding_since = None;
            return true;
        }
        let since = *self.yielding_since.get_or_insert(now);
        if now.saturating_duration_since(since) >= MAX_YIELD {
            self.yielding_since = None;
            return true;
        }
        false
    }

    /// Writes the cache if a write is due and the store's backlog is drained (durability comes
    /// first, and the two never hold their memory at once).
    fn save_if_due(&mut self) {
        if !self.writer.store_backlog_waits() {
            self.saver.maybe_save(&mut self.writer);
        }
    }

    /// Whether anything is polled: everything (no watcher) or the directories that cannot be
    /// watched while the rest is.
    fn polling(&self) -> bool {
        self.watch.is_none() || !self.status.polled().is_empty()
    }

    /// Notes the paths these wake-ups name (each as changed when the watcher saw it), and says
    /// whether to stop or rescan.
    fn handle(&mut self, events: Vec<Wake>) -> Woken {
        let mut woken = Woken::default();
        let mut paths: Vec<(PathBuf, Instant)> = Vec::new();
        for event in events {
            match event {
                Wake::Stop(done) => woken.stop = Some(done),
                Wake::Fs(Ok(event), seen) => {
                    let (p, lost) = watch::changed_paths(event);
                    woken.rescan |= lost;
                    match self.watch.as_ref() {
                        Some(w) => paths.extend(p.into_iter().map(|p| (w.translate(p), seen))),
                        None => paths.extend(p.into_iter().map(|p| (p, seen))),
                    }
                }
                Wake::Fs(Err(e), _) => {
                    self.watch_error(&e);
                    woken.rescan = true;
                }
            }
        }
        // each path once, as last seen
        paths.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        paths.dedup_by(|a, b| a.0 == b.0);
        for (p, seen) in paths {
            if !self.replan(&p, seen) {
                woken.rescan = true;
                // watching is given up: the rest is found by the rescan
                break;
            }
            self.schedule.note(p, seen);
        }
        self.status.events.fetch_add(1, Ordering::Relaxed);
        woken
    }

    /// A watcher error: the directories it names (every root when none) are polled from now
    /// on (the limit reached while running, say).
    fn watch_error(&self, e: &notify_debouncer_full::notify::Error) {
        let reason = watch::why(e);
        tracing::warn!("file watcher error: {reason}");
        let dirs = if e.paths.is_empty() {
            self.roots.clone()
        } else {
            e.paths.clone()
        };
        for dir in dirs {
            self.status.add_polled(dir, reason.clone());
        }
        self.status.set_error(reason);
    }

    /// Watches what a changed path asks for (a root that appeared, a new directory) before it
    /// is rescanned. Returns false when watching failed (then everything is polled).
    fn replan(&mut self, p: &std::path::Path, now: Instant) -> bool {
        let Some(w) = self.watch.as_mut() else {
            return true;
        };
        match w.replan(p) {
            Ok(appeared) => {
                for root in appeared {
                    self.schedule.note(root, now);
                }
                // a new directory is watched (or polled) before it is rescanned
                w.saw(p);
                for (dir, reason) in w.take_polled() {
                    self.status.add_polled(dir, reason);
                }
                for dir in w.take_gone() {
                    self.status.remove_polled(&dir);
                }
                true
            }
            Err(e) => {
                tracing::warn!("file watching failed ({e}); rescanning periodically instead");
                self.status.set_mode(WatchMode::Poll, Some(e));
                self.watch = None;
                false
            }
        }
    }

    /// Every sender is gone: nothing can stop or wake us any more but the clock.
    fn disconnected(&mut self, wake: Instant) {
        if self.watch.is_some() {
            tracing::warn!("file watcher stopped; rescanning periodically instead");
            self.status
                .set_mode(WatchMode::Poll, Some("the file watcher stopped".into()));
            self.watch = None;
        }
        std::thread::sleep(wake.saturating_duration_since(Instant::now()));
    }

    /// Saves what is pending, lets the store go, and says done.
    fn stop(mut self, done: Sender<()>) {
        self.writer.store_flush();
        self.saver.save_now(&mut self.writer);
        // before saying done: the process may exit right after
        self.writer.close_store();
        let _ = done.send(());
    }

    /// Applies what is due: the changes whose time has come, a poll when due (or a rescan when
    /// asked; `polling`: whether anything is polled), the store's news; then publishes the
    /// generation and writes the cache when due.
    fn tick(&mut self, rescan: bool, polling: bool) {
        let now = Instant::now();
        let due = self.schedule.take_due(now);
        let mut changed = false;
        if !due.is_empty() {
            changed |= self.writer.apply(&due);
        }
        if rescan || (polling && now >= self.next_poll) {
            changed |= self.poll(rescan);
            self.next_poll = Instant::now() + self.cfg.poll_interval;
        }
        if changed {
            self.note_links();
        }
        self.saver.dirty |= changed;
        let background = self.background_may_run(Instant::now());
        // other servers' commits, the writer lock, retention, a slice of the backlog
        if background && self.writer.store_due().is_some_and(|d| d <= Instant::now()) {
            self.saver.dirty |= self.writer.store_tick();
        }
        self.status
            .pending
            .store(self.schedule.len(), Ordering::Relaxed);
        if self.saver.dirty {
            self.saver
                .publish(&mut self.writer, self.publishing, &self.status);
        }
        if background {
            self.save_if_due();
        }
    }

    /// Rescans: only the directories that cannot be watched, unless everything is polled (or
    /// a polled directory lies outside the roots: a symlinked file's target).
    fn poll(&mut self, rescan: bool) -> bool {
        let dirs: Vec<PathBuf> = self.status.polled().into_iter().map(|(d, _)| d).collect();
        let whole = rescan
            || self.watch.is_none()
            || dirs
                .iter()
                .any(|d| !self.roots.iter().any(|r| d.starts_with(r)));
        if whole {
            self.writer.poll()
        } else {
            self.writer.poll_dirs(&dirs)
        }
    }

    /// Symlinked transcripts whose target lies outside the roots: the targets are watched and
    /// the links read again.
    fn note_links(&mut self) {
        if let Some(w) = self.watch.as_mut() {
            for link in w.follow_links(self.writer.file_paths()) {
                self.schedule.note(link, Instant::now());
            }
        }
    }

    /// After the start: the generation published and the cache written (once the store's
    /// backlog is drained: see [`Self::save_if_due`]).
    fn publish_and_save(&mut self) {
        self.saver
            .publish(&mut self.writer, self.publishing, &self.status);
        self.save_if_due();
    }
}

/// Who writes the shared index: this server when it takes the writer lock (`Some(Some)`), or
/// when there is no cache or no lock to take (`Some(None)`: alone); else it follows the server
/// holding the lock, reading only the store, until the lock comes free or it is asked to stop
/// (`None`, the stop answered).
fn elect(
    writer: &mut Writer,
    status: &LiveStatus,
    cache: Option<&Cache>,
    store: Option<&StoreConfig>,
    channel: (&Sender<Wake>, &Receiver<Wake>),
) -> Option<Option<File>> {
    let Some(cache) = cache else {
        return Some(None);
    };
    let cache = match cache.try_lock_writer() {
        Ok(Some(lock)) => return Some(Some(lock)),
        Ok(None) => cache,
        Err(e) => {
            tracing::warn!("cannot use the index writer lock ({e}); indexing alone");
            return Some(None);
        }
    };
    if let Some(s) = store {
        // another server stores what it reads; this one only reads the store
        writer.open_store_reader(s);
    }
    match follower::follow(writer, cache, status, channel) {
        Followed::Stop(done) => {
            let _ = done.send(());
            None
        }
        Followed::Lead(lock) => Some(Some(lock)),
    }
}

/// Watches the roots (`None`: polled instead, forced or because watching is unavailable).
fn start_watch(
    roots: &[PathBuf],
    cfg: &LiveConfig,
    status: &LiveStatus,
    tx: Sender<Wake>,
) -> Option<Watch> {
    if cfg.force_poll {
        status.set_mode(WatchMode::Poll, None);
        return None;
    }
    match Watch::start(roots, tx) {
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
}
