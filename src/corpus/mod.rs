//! The corpus: which transcript files are indexed, the conversations they hold, and immutable
//! snapshots that queries read while a single writer prepares the next one.
pub mod browse;
mod build;
pub mod catalog;
pub mod dups;
mod fingerprint;
pub mod ingest;
mod merge;
mod persist;
pub mod progress;
pub mod query;
mod update;
pub mod writer;

use crate::index::IndexView;
use crate::transcript::Adapter;
use crate::util::glob::Glob;
use catalog::Catalog;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

/// A directory of transcripts of one format, filtered by a group pattern.
#[derive(Clone)]
pub struct Root {
    pub adapter: &'static dyn Adapter,
    pub dir: PathBuf,
    pub pattern: Glob,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} ({})",
            self.adapter.name(),
            self.dir.display(),
            self.pattern.as_str()
        )
    }
}

/// Health of one source directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceHealth {
    pub format: &'static str,
    pub path: PathBuf,
    pub files: u64,
    pub sessions: u64,
    pub subagents: u64,
    pub turns: u64,
    pub skipped_lines: u64,
    /// Files that were read but yielded no turn.
    pub files_without_turns: u64,
    /// Set when files were read but none yielded a turn (a format change upstream?).
    pub warning: Option<String>,
}

/// Counters describing what the index holds and how it got there.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub files: u64,
    pub bytes_indexed: u64,
    pub skipped_lines: u64,
    /// Duration of the last update, in milliseconds.
    pub last_update_ms: f64,
    pub updates: u64,
    pub files_reread: u64,
    pub files_appended: u64,
    pub files_removed: u64,
    pub files_added: u64,
    /// Distinct files an update found new, changed or gone (a rewrite that is read again
    /// counts once, unlike in the counters above).
    pub files_touched: u64,
    pub segments_merged: u64,
    /// Per source directory, in `--source` order.
    pub sources: Vec<SourceHealth>,
}

/// Everything a query needs, frozen at one point in time.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Incremented by every published update; 0 until the first full build.
    pub generation: u64,
    /// True once every file found at start-up has been indexed.
    pub complete: bool,
    /// Epoch ms of the last update.
    pub indexed_at: Option<i64>,
    pub catalog: Catalog,
    pub index: IndexView,
    pub stats: Stats,
    pub roots: Arc<Vec<Root>>,
    /// Live-index state (shared with [`Shared`], read as of now).
    pub live: Arc<LiveStatus>,
    /// Duplicate-turn keys held by two or more live documents.
    pub dup_multi: Arc<crate::util::hash::FxHashSet<u64>>,
}

/// What the live index is doing, for `index_status`.
#[derive(Debug, Default)]
pub struct LiveStatus {
    pub watching: AtomicBool,
    /// `watch`, `poll`, or empty when the index is not live (one-shot commands).
    mode: Mutex<String>,
    error: Mutex<Option<String>>,
    pub pending: AtomicUsize,
    pub events: AtomicU64,
    pub debounce_ms: AtomicU64,
    pub max_staleness_ms: AtomicU64,
    cache: Mutex<crate::cache::CacheReport>,
    /// How far the first build is.
    pub build: progress::BuildProgress,
}

impl LiveStatus {
    pub fn set_mode(&self, mode: &str, error: Option<String>) {
        self.watching.store(mode == "watch", Ordering::Relaxed);
        *self.mode.lock().unwrap_or_else(|p| p.into_inner()) = mode.to_owned();
        if error.is_some() {
            *self.error.lock().unwrap_or_else(|p| p.into_inner()) = error;
        }
    }

    pub fn set_error(&self, error: String) {
        *self.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
    }

    pub fn mode(&self) -> String {
        self.mode.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What the persistent index did so far.
    pub fn cache(&self) -> crate::cache::CacheReport {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn update_cache(&self, f: impl FnOnce(&mut crate::cache::CacheReport)) {
        f(&mut self.cache.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

/// The current snapshot, swapped atomically by the writer; readers never wait for an update
/// longer than it takes to clone an `Arc`.
pub struct Shared {
    current: RwLock<Arc<Snapshot>>,
    complete: Mutex<bool>,
    complete_cv: Condvar,
    pub live: Arc<LiveStatus>,
}

impl Shared {
    pub fn new(initial: Snapshot) -> Arc<Self> {
        let live = Arc::clone(&initial.live);
        Arc::new(Self {
            current: RwLock::new(Arc::new(initial)),
            complete: Mutex::new(false),
            complete_cv: Condvar::new(),
            live,
        })
    }

    pub fn snapshot(&self) -> Arc<Snapshot> {
        match self.current.read() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    pub fn publish(&self, snap: Snapshot) {
        let complete = snap.complete;
        let snap = Arc::new(snap);
        match self.current.write() {
            Ok(mut g) => *g = snap,
            Err(poisoned) => *poisoned.into_inner() = snap,
        }
        if complete {
            let mut done = self.complete.lock().unwrap_or_else(|p| p.into_inner());
            *done = true;
            self.complete_cv.notify_all();
        }
    }

    /// Waits until the first full build is published or `timeout` passes; returns the snapshot
    /// either way (check `complete`).
    pub fn wait_complete(&self, timeout: Duration) -> Arc<Snapshot> {
        let done = self.complete.lock().unwrap_or_else(|p| p.into_inner());
        let _unused = self
            .complete_cv
            .wait_timeout_while(done, timeout, |d| !*d)
            .unwrap_or_else(|p| p.into_inner());
        self.snapshot()
    }
}
