//! The corpus: which transcript files are indexed, the conversations they hold, and immutable
//! snapshots that queries read while a single writer prepares the next one.
mod batch;
pub(crate) mod browse;
mod build;
mod cache_file;
mod cache_head;
pub(crate) mod catalog;
mod contents;
mod delta;
pub(crate) mod digest;
mod doc_index;
pub(crate) mod dups;
mod files;
mod fingerprint;
mod generation;
pub(crate) mod ingest;
mod phrase_first;
pub(crate) mod project;
mod publish;
pub(crate) mod query;
pub(crate) use query::Quoted;
mod request;
mod store_backlog;
mod store_news;
mod store_sync;
mod turn_locations;
pub(crate) mod when;
pub(crate) mod writer;

pub(crate) use store_sync::StoreConfig;

use crate::cache::CacheReport;
use crate::index::IndexView;
use crate::transcript::Adapter;
use crate::util::glob::Glob;
use catalog::Catalog;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};

/// A directory of transcripts of one format, filtered by a group pattern.
#[derive(Clone)]
pub(crate) struct Root {
    pub adapter: &'static dyn Adapter,
    pub dir: PathBuf,
    pub pattern: Glob,
}

impl Root {
    /// The bytes that tell this root's configuration from any other, for the persistent
    /// index's key: format, canonical directory and pattern, each length-prefixed.
    fn key_bytes(&self, out: &mut Vec<u8>) {
        let dir = std::fs::canonicalize(&self.dir).unwrap_or_else(|_| self.dir.clone());
        for part in [
            self.adapter.name().as_bytes(),
            dir.as_os_str().as_encoded_bytes(),
            self.pattern.as_str().as_bytes(),
        ] {
            out.extend_from_slice(&(part.len() as u64).to_le_bytes());
            out.extend_from_slice(part);
        }
    }
}

/// The persistent index of the corpus made of `roots`, in `dir`. Its key includes the
/// redaction in force (on/off, rules version and fingerprint): text stored under other rules
/// is never reused, and its file is replaced by one redacted under the current rules. Servers
/// of one key and one durable store (`store`, or none) share the index: one writer reads
/// transcripts, the others follow it.
pub(crate) fn cache_for(
    dir: PathBuf,
    roots: &[Root],
    store: Option<&std::path::Path>,
) -> crate::cache::Cache {
    let mut key = Vec::new();
    for r in roots {
        r.key_bytes(&mut key);
    }
    // a server keeping history holds conversations one without (or with another store) drops
    let store = store.map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_owned()));
    let store = store
        .as_ref()
        .map_or(&b"-"[..], |d| d.as_os_str().as_encoded_bytes());
    crate::cache::Cache::new(dir, &key)
        .with_content(&crate::redact::key_bytes())
        .with_sharing(store)
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
pub(crate) struct SourceHealth {
    pub format: &'static str,
    pub path: PathBuf,
    /// Whether the directory exists (a missing one is watched for).
    pub exists: bool,
    pub files: u64,
    pub sessions: u64,
    pub subagents: u64,
    pub turns: u64,
    pub skipped_lines: u64,
    /// Records of types the format's reader does not know (skipped), per type.
    pub unknown_records: std::collections::BTreeMap<String, u64>,
    /// Files that were read but yielded no turn.
    pub files_without_turns: u64,
    /// Set when the directory does not exist, or when files were read but none yielded a
    /// turn (a format change upstream?).
    pub warning: Option<String>,
}

/// Counters describing what the index holds and how it got there.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stats {
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
    /// Per source directory, in `--source` order.
    pub sources: Vec<SourceHealth>,
}

/// Everything a query needs, frozen at one point in time.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
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
    /// Duplicate-turn keys held by two or more live documents.
    pub dup_multi: Arc<rustc_hash::FxHashSet<u64>>,
    /// The durable store, where turns of conversations whose transcript is gone (or shrank)
    /// are read from.
    pub store: Option<Arc<crate::store::Store>>,
    /// The project the server works for; fixed at start (the first snapshot's is carried over
    /// to every published one).
    pub project: Arc<project::Project>,
    /// How far the first build is, read as of now (shared with [`Shared`] and carried over to
    /// every published snapshot, like the project).
    pub progress: Arc<BuildProgress>,
    /// Per internal conversation id, whether it belongs to the project: computed by the first
    /// query that asks (see [`Snapshot::in_project`]), once per snapshot.
    pub members: std::sync::OnceLock<Arc<[bool]>>,
    /// How many projects, sessions and sub-agents the catalog holds: counted by the first
    /// `index_status` that asks, once per snapshot (a client polling during a first build
    /// asks many times per snapshot, and counting names every conversation's project).
    pub tally: std::sync::OnceLock<Tally>,
}

/// What [`Snapshot::tally`] counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub projects: usize,
    pub sessions: usize,
    pub subagents: usize,
}

impl Snapshot {
    /// Whether the conversation belongs to the project the server works for.
    pub(crate) fn in_project(&self, conv: &catalog::Conversation) -> bool {
        self.members
            .get_or_init(|| self.project.members(&self.catalog).into())
            .get(conv.conv as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The catalog's projects (distinct names), sessions and sub-agents, counted once.
    pub(crate) fn tally(&self) -> Tally {
        *self.tally.get_or_init(|| {
            let mut projects: Vec<String> = Vec::new();
            let mut t = Tally::default();
            for c in self.catalog.iter() {
                if c.is_subagent() {
                    t.subagents += 1;
                } else {
                    t.sessions += 1;
                }
                projects.push(self.catalog.project_name(c));
            }
            projects.sort_unstable();
            projects.dedup();
            t.projects = projects.len();
            t
        })
    }

    /// Whether the conversation is in `scope`.
    pub(crate) fn in_scope(&self, scope: project::Scope, conv: &catalog::Conversation) -> bool {
        scope == project::Scope::All || self.in_project(conv)
    }
}

/// How far the first full build has got (for a progress bar); totals are set once the files
/// are found.
#[derive(Debug, Default)]
pub(crate) struct BuildProgress {
    pub files_total: AtomicU64,
    pub bytes_total: AtomicU64,
    pub files_done: AtomicU64,
    pub bytes_done: AtomicU64,
    pub turns_done: AtomicU64,
}

/// A reading of [`BuildProgress`], for `index_status` and every answer given before the first
/// build completes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
}

impl BuildProgress {
    /// The build found `files` files holding `bytes` bytes.
    pub(crate) fn start(&self, files: u64, bytes: u64) {
        self.files_total.store(files, Ordering::Relaxed);
        self.bytes_total.store(bytes, Ordering::Relaxed);
    }

    /// One more file was read: `bytes` of it, holding `turns` turns.
    pub(crate) fn file_done(&self, bytes: u64, turns: u64) {
        self.files_done.fetch_add(1, Ordering::Relaxed);
        self.bytes_done.fetch_add(bytes, Ordering::Relaxed);
        self.turns_done.fetch_add(turns, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Progress {
        let files_total = self.files_total.load(Ordering::Relaxed);
        let bytes_total = self.bytes_total.load(Ordering::Relaxed);
        Progress {
            files_done: self.files_done.load(Ordering::Relaxed).min(files_total),
            files_total,
            // a file may have grown since it was measured
            bytes_done: self.bytes_done.load(Ordering::Relaxed).min(bytes_total),
            bytes_total,
        }
    }
}

/// The current snapshot, swapped atomically by the writer; readers never wait for an update
/// longer than it takes to clone an `Arc`.
pub(crate) struct Shared {
    current: RwLock<Arc<Snapshot>>,
    complete: Mutex<bool>,
    complete_cv: Condvar,
    /// What the persistent index did so far (read as of now, not as of a snapshot).
    cache: Mutex<CacheReport>,
    /// The durable store as this server sees it (read as of now).
    store: Mutex<crate::store::StoreReport>,
    /// Progress of the first full build.
    pub progress: Arc<BuildProgress>,
}

impl Shared {
    pub(crate) fn new(initial: Snapshot) -> Arc<Self> {
        let progress = Arc::clone(&initial.progress);
        Arc::new(Self {
            current: RwLock::new(Arc::new(initial)),
            complete: Mutex::new(false),
            complete_cv: Condvar::new(),
            cache: Mutex::new(CacheReport::default()),
            store: Mutex::new(crate::store::StoreReport::default()),
            progress,
        })
    }

    /// The durable store as this server sees it.
    pub(crate) fn store_report(&self) -> crate::store::StoreReport {
        self.store.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn update_store(&self, f: impl FnOnce(&mut crate::store::StoreReport)) {
        f(&mut self.store.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// What the persistent index did so far.
    pub(crate) fn cache_report(&self) -> CacheReport {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn update_cache(&self, f: impl FnOnce(&mut CacheReport)) {
        f(&mut self.cache.lock().unwrap_or_else(|p| p.into_inner()));
    }

    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        match self.current.read() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    pub(crate) fn publish(&self, mut snap: Snapshot) {
        let complete = snap.complete;
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        snap.project = Arc::clone(&current.project);
        snap.progress = Arc::clone(&current.progress);
        // computed for this snapshot's catalog and project, by its first query
        snap.members = Default::default();
        snap.tally = Default::default();
        *current = Arc::new(snap);
        drop(current);
        if complete {
            let mut done = self.complete.lock().unwrap_or_else(|p| p.into_inner());
            *done = true;
            self.complete_cv.notify_all();
        }
    }
}
