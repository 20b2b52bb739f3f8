//! The single writer: it says when the parts act. Its [`Contents`] (the followed files, the
//! catalog, the document index with its merge policy, the link to the durable store) change
//! with what transcripts and the store say; its [`Generation`] is the state on disk (written
//! as [`super::delta`] files and [`super::cache_file`]s, read back by followers); its
//! [`Publisher`] freezes the contents into immutable snapshots. It starts (restoring the index
//! cache, following a base, or building from the transcripts), applies changed paths, keeps the
//! store in step, and publishes.
use super::build::{FirstBuild, PROGRESS_EVERY};
use super::cache_file::{self, Rechecked, Restored};
use super::cache_head::read_head;
use super::catalog::ConvId;
use super::contents::Contents;
use super::delta::{Counters, Delta, DeltaOf};
use super::files::{Changes, FileCounts, FileEntry};
use super::generation::{Generation, SEG_SAME};
use super::ingest::FileState;
use super::project::Scope;
use super::publish::Publisher;
use super::store_sync::{StoreConfig, StoreSync};
use super::{Root, Shared};
use crate::cache::{Cache, CacheStart};
use crate::transcript::SourceFile;
use crate::util::blob::Blob;
use crate::util::codec::{Decoder, corrupt};
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Times the digest's sessions are looked up again when reading them moved the selection (a
/// file that changed while it was read).
const DIGEST_ROUNDS: usize = 3;

/// The writer of one corpus.
pub(crate) struct Writer {
    contents: Contents,
    generation: Generation,
    publisher: Publisher,
}

impl Writer {
    pub(crate) fn new(roots: Vec<Root>, shared: Arc<Shared>) -> Self {
        Self {
            contents: Contents::new(roots),
            generation: Generation::default(),
            publisher: Publisher::new(shared),
        }
    }

    /// A writer of the same roots with nothing read, taking this one's store along.
    fn empty_with_store(&mut self) -> Writer {
        let mut w = Writer::new(self.contents.files.roots().as_ref().clone(), self.shared());
        w.contents.store = self.contents.store.take();
        w
    }

    /// Paths of the transcript files indexed now.
    pub(crate) fn file_paths(&self) -> impl Iterator<Item = &Path> {
        self.contents.files.paths()
    }

    pub(crate) fn roots(&self) -> &Arc<Vec<Root>> {
        self.contents.files.roots()
    }

    /// Live documents (turns) of this state.
    pub(crate) fn live_docs(&self) -> u64 {
        self.contents.docs.live_docs()
    }

    fn shared(&self) -> Arc<Shared> {
        Arc::clone(self.publisher.shared())
    }

    /// Publishes an update begun at `started`.
    fn publish(&mut self, started: Instant) {
        self.publisher.publish(started, self.contents.parts());
    }

    /// Publishes what the writer holds without counting an update (the first build's progress).
    fn publish_as_is(&mut self, started: Instant) {
        self.publisher.publish_as_is(started, self.contents.parts());
    }

    /// The update counters as a delta carries them.
    fn counters(&self) -> Counters {
        let c = self.contents.files.counts;
        [
            self.publisher.updates,
            c.reread,
            c.appended,
            c.removed,
            c.added,
            c.touched,
            self.contents.docs.merged(),
            self.publisher.last_update_ms.to_bits(),
        ]
    }

    /// The state now is the generation published: nothing changed since.
    fn mark_generation(&mut self) {
        self.generation
            .mark(&self.contents.catalog, self.contents.docs.view());
        self.contents.clear_changed();
    }

    /// Opens the durable store for this corpus, as its writer when its lock is free. When it
    /// cannot be used, the server runs without it and says why (once on stderr, and in
    /// `index_status`).
    pub(crate) fn open_store(&mut self, cfg: &StoreConfig) {
        self.contents.store = StoreSync::open(cfg, true, self.publisher.shared());
    }

    /// Opens the store without taking its writer lock (a follower; see [`Self::open_store`]).
    pub(crate) fn open_store_reader(&mut self, cfg: &StoreConfig) {
        self.contents.store = StoreSync::open(cfg, false, self.publisher.shared());
    }

    pub(crate) fn has_store(&self) -> bool {
        self.contents.store.is_some()
    }

    /// Gives up writing the store; another server may take over.
    pub(crate) fn close_store(&mut self) {
        if let Some(s) = self.contents.store.as_mut() {
            s.close();
        }
    }

    /// Commits everything that waits for the store (writer only). Returns whether it committed.
    pub(crate) fn store_flush(&mut self) -> bool {
        self.contents.store_flush()
    }

    /// Whether turns read wait to be committed to the store (the cache is written after them:
    /// durability first, and the two never hold their memory at once).
    pub(crate) fn store_backlog_waits(&self) -> bool {
        self.contents
            .store
            .as_ref()
            .is_some_and(StoreSync::backlog_waits)
    }

    /// When the next [`Self::store_tick`] is due (None without a store).
    pub(crate) fn store_due(&self) -> Option<Instant> {
        self.contents.store.as_ref().map(StoreSync::due)
    }

    /// Looks at the store: the writer lock, a full comparison when needed, retention, a slice
    /// of the backlog, and other servers' commits. Returns whether the index changed (then a
    /// snapshot was published).
    pub(crate) fn store_tick(&mut self) -> bool {
        let started = Instant::now();
        if !self.contents.store_tick() {
            return false;
        }
        self.publish(started);
        true
    }

    /// Applies changes at `paths` (files or directories; created, modified or deleted) and
    /// publishes a new snapshot when anything changed. Returns whether it did.
    pub(crate) fn apply(&mut self, paths: &[PathBuf]) -> bool {
        let started = Instant::now();
        let changes = self.contents.files.expand(paths);
        self.process(started, changes)
    }

    /// Full rescan by size and mtime (fallback when file watching is unavailable).
    pub(crate) fn poll(&mut self) -> bool {
        let started = Instant::now();
        let changes = self.contents.files.scan();
        self.process(started, changes)
    }

    /// Rescan by size and mtime of the directories `dirs` only (those that cannot be watched
    /// while the rest is).
    pub(crate) fn poll_dirs(&mut self, dirs: &[PathBuf]) -> bool {
        let started = Instant::now();
        let changes = self.contents.files.scan_dirs(dirs);
        self.process(started, changes)
    }

    /// Applies these changes, publishes them and commits a slice of their turns to the store.
    /// Returns whether anything changed.
    fn process(&mut self, started: Instant, changes: Changes) -> bool {
        if !self.contents.take_changes(changes) {
            return false;
        }
        self.publisher.updates += 1;
        self.publish(started);
        self.contents.store_flush_some();
        true
    }

    /// Reads every file once, in parallel, newest first, publishing progress, then the first
    /// complete snapshot.
    fn initial_build(&mut self) {
        let started = Instant::now();
        crate::util::huge::hold_freed_memory(true);
        let (found, sizes) = newest_first(self.contents.files.discover());
        let shared = self.shared();
        shared
            .progress
            .start(found.len() as u64, sizes.iter().sum());
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 8);
        let forgotten = self
            .contents
            .store
            .as_ref()
            .map(|s| s.forgotten().clone())
            .unwrap_or_default();
        let encode = self
            .contents
            .store
            .as_ref()
            .is_some_and(StoreSync::is_writer);
        let next_ids = (
            self.contents.catalog.next_id(),
            self.contents.docs.next_seg(),
        );
        let build = FirstBuild::new(
            &found,
            &sizes,
            next_ids,
            &shared.progress,
            encode,
            &forgotten,
        );
        let mut published = Instant::now();
        build.run(threads, |chunk, build| {
            self.contents.take_chunk(chunk);
            if published.elapsed() >= PROGRESS_EVERY {
                self.contents.take_ids(build.next_ids());
                self.publish_as_is(started);
                published = Instant::now();
            }
        });
        self.contents.take_ids(build.next_ids());
        // conversations only the store still holds join before the index says it is complete
        self.contents.store_start();
        self.publisher.complete = true;
        self.publish(started);
        self.log_built(started);
        // the workers' tables and read buffers go back to the system now
        crate::util::huge::hold_freed_memory(false);
        crate::util::huge::release_free_memory();
        // the turns read wait for the store, searches do not: a first slice now (all of a small
        // corpus), the rest between live changes (a one-shot command: [`Writer::store_flush`])
        self.contents.store_flush_some();
    }

    fn log_built(&self, started: Instant) {
        let snap = self.publisher.shared().snapshot();
        let mut sizes = [0usize; 5];
        for sv in &snap.index.segs {
            for (a, b) in sizes.iter_mut().zip(sv.seg.breakdown()) {
                *a += b;
            }
        }
        tracing::debug!(
            text_mb = sizes[0] >> 20,
            postings_mb = sizes[1] >> 20,
            dictionary_mb = sizes[2] >> 20,
            documents_mb = sizes[3] >> 20,
            paths_mb = sizes[4] >> 20,
            segments = snap.index.segs.len(),
            "index memory"
        );
        tracing::info!(
            files = snap.stats.files,
            conversations = snap.catalog.iter().count(),
            turns = snap.index.live_docs,
            bytes = snap.stats.bytes_indexed,
            skipped_lines = snap.stats.skipped_lines,
            ms = started.elapsed().as_millis() as u64,
            "index built"
        );
    }

    /// The first build: from the persistent index when it is valid (re-reading only files that
    /// changed since it was written), else from scratch. Publishes a complete snapshot and, when
    /// anything was read, refreshes the cache. Returns whether the cache needs saving.
    pub(crate) fn start(&mut self, cache: Option<&Cache>) -> bool {
        let started = Instant::now();
        self.shared().update_cache(|r| {
            r.path = cache.map(Cache::path);
            r.start = if cache.is_some() {
                CacheStart::Absent
            } else {
                CacheStart::Disabled
            };
        });
        if let Some(cache) = cache {
            cache.sweep();
            match self.load_cache(cache) {
                Ok(Some(rechecked)) => return self.start_restored(cache, rechecked, started),
                Ok(None) => {}
                Err(e) => self.reject_cache(cache, &e),
            }
        }
        // a new lineage: what followers hold (if anything) is not continued
        self.generation.restart();
        self.generation.built = true;
        self.initial_build();
        true
    }

    /// Says why the cache file is not used, moving a damaged one aside.
    fn reject_cache(&self, cache: &Cache, e: &io::Error) {
        let mut because = e.to_string();
        if e.kind() == io::ErrorKind::InvalidData {
            match cache.move_aside() {
                Ok(to) => because.push_str(&format!("; moved to `{}`", to.display())),
                Err(m) => because.push_str(&format!("; not moved aside: {m}")),
            }
        }
        tracing::warn!(
            "ignoring the index cache `{}` ({because}); rebuilding it",
            cache.path().display()
        );
        self.shared().update_cache(|r| {
            r.start = CacheStart::Rejected;
            r.rejected_because = Some(because);
        });
    }

    /// The start from a restored cache file: the deltas after it, then the files that changed
    /// since, then the store. Returns whether the cache needs saving.
    fn start_restored(
        &mut self,
        cache: &Cache,
        mut rechecked: Rechecked,
        started: Instant,
    ) -> bool {
        // generations the last writer published after this base
        let (_, caught) = self.apply_deltas(cache);
        // the deltas may have left conversations to the store alone since the base was read: a
        // transcript found again takes such a conversation over
        self.contents.index_unfollowed();
        rechecked.unchanged.retain(|p| !caught.contains(p));
        let loaded_ms = started.elapsed().as_millis() as u64;
        self.publisher.complete = true;
        let restored = self.contents.files.len() as u64;
        let (changed, new_files) = self.contents.refresh_restored(rechecked);
        let touched = self.contents.files.counts.touched;
        self.shared().update_cache(|r| {
            r.start = CacheStart::Restored;
            r.files_changed = touched;
            r.files_reused = restored.saturating_sub(touched - new_files.min(touched));
        });
        // the start is not an update: live counters begin after it
        self.contents.files.counts = Default::default();
        self.contents.docs.set_merged(0);
        self.publisher.reset_counters();
        let refreshed_ms = started.elapsed().as_millis() as u64;
        self.contents.store_start();
        self.publish(started);
        // the decoding's buffers go back to the system now, not a moment later (several servers
        // each holding them is what sharing the index avoids)
        crate::util::huge::release_free_memory();
        self.contents.store_flush_some();
        tracing::info!(
            files = self.contents.files.len(),
            turns = self.contents.docs.live_docs(),
            changed,
            loaded_ms,
            refreshed_ms,
            ms = started.elapsed().as_millis() as u64,
            "index restored from `{}`",
            cache.path().display()
        );
        // a base of another lineage is replaced by one of ours soon
        changed || !self.generation.based
    }

    /// Replaces the (empty) state with the cache file's (see [`cache_file::read`]). `Ok(None)`
    /// when there is no cache file.
    fn load_cache(&mut self, cache: &Cache) -> io::Result<Option<Rechecked>> {
        let Some((restored, rechecked)) = cache_file::read(cache, &self.contents.files)? else {
            return Ok(None);
        };
        self.install(restored, cache.sharing);
        Ok(Some(rechecked))
    }

    fn install(&mut self, r: Restored, sharing: u64) {
        let (ours, chain, seq) = (r.head.sharing == sharing, r.head.chain, r.head.seq);
        self.contents.install_head(r.head);
        self.contents.docs = r.docs;
        if ours {
            self.generation.restored(
                chain,
                seq,
                &self.contents.catalog,
                self.contents.docs.view(),
            );
        } else {
            // another lineage's (a server with another store): a new one starts from here
            self.generation.restart();
        }
    }

    /// Writes the current state to the cache and notes the outcome for `index_status`.
    /// Returns the file's size.
    pub(crate) fn save_cache(&mut self, cache: &Cache) -> io::Result<u64> {
        // the base holds the generation of the last delta: publish what is pending first
        let result = self.publish_delta(cache).and_then(|_| {
            cache_file::write(
                cache,
                &self.generation,
                &self.contents.files,
                &self.contents.catalog,
                &self.contents.docs,
            )
        });
        if result.is_ok() && !self.generation.based {
            // a new chain: followers can start from here
            self.generation.based = true;
            self.mark_generation();
        }
        self.shared().update_cache(|r| match &result {
            Ok(_) => {
                r.writes += 1;
                r.write_error = None;
            }
            Err(e) => r.write_error = Some(e.to_string()),
        });
        result
    }

    /// The generation this state is: (chain, sequence number).
    pub(crate) fn generation_on_disk(&self) -> (u64, u64) {
        (self.generation.chain, self.generation.seq)
    }

    /// Whether this state came from a base file (a follower that loaded one).
    pub(crate) fn has_base(&self) -> bool {
        self.generation.based
    }

    /// Whether the index was built here and still lives on this server's heap.
    pub(crate) fn built_here(&self) -> bool {
        self.generation.built
    }

    /// Publishes what changed since the last generation as the next one's delta file, when
    /// a base of this chain exists (before that no follower could use it). Returns whether a
    /// delta was written.
    pub(crate) fn publish_delta(&mut self, cache: &Cache) -> io::Result<bool> {
        if !self.generation.based {
            return Ok(false);
        }
        let mut convs: BTreeSet<ConvId> = self
            .contents
            .catalog
            .changed_since(self.generation.catalog())
            .into_iter()
            .collect();
        convs.extend(self.contents.docs.changed().iter().copied());
        let convs: Vec<ConvId> = convs.into_iter().collect();
        let view = self.contents.docs.view();
        let kinds: Vec<u8> = (0..view.segs.len())
            .map(|i| self.generation.seg_kind(view, i))
            .collect();
        let same_segs =
            kinds.iter().all(|&k| k == SEG_SAME) && kinds.len() == self.generation.seg_count();
        if self.contents.files.changed().is_empty() && convs.is_empty() && same_segs {
            return Ok(false);
        }
        let seq = self.generation.seq + 1;
        let delta = DeltaOf {
            chain: self.generation.chain,
            seq,
            files: &self.contents.files,
            catalog: &self.contents.catalog,
            docs: &self.contents.docs,
            convs: &convs,
            kinds: &kinds,
            complete: self.publisher.complete,
            counters: self.counters(),
        };
        cache
            .delta(self.generation.chain, seq)
            .write(|w| delta.write(w))?;
        self.generation.seq = seq;
        self.mark_generation();
        Ok(true)
    }

    /// After the first base file of an index built here: takes the index (segments, catalog,
    /// document locations) from that file instead, so its pages are shared with the servers
    /// that follow and this server's heap holds only what changes. The files' read state (with
    /// the parsers' progress) stays. Nothing changes when the file holds another generation
    /// (replaced meanwhile by a server with another store).
    pub(crate) fn adopt_base(&mut self, cache: &Cache) -> io::Result<bool> {
        self.generation.built = false;
        let mut mapped = self.empty_with_store();
        let loaded = mapped.load_cache(cache);
        self.contents.store = mapped.contents.store.take();
        let same = loaded?.is_some()
            && mapped.generation.based
            && mapped.generation_on_disk() == self.generation_on_disk()
            && mapped.contents.docs.live_docs() == self.contents.docs.live_docs()
            && mapped.contents.catalog.iter().count() == self.contents.catalog.iter().count();
        if !same {
            return Ok(false);
        }
        self.contents.catalog = mapped.contents.catalog;
        self.contents.docs.adopt(mapped.contents.docs);
        self.mark_generation();
        // the last reference to the built index goes with the snapshot replaced here
        self.publish_as_is(Instant::now());
        crate::util::huge::release_free_memory();
        Ok(true)
    }

    /// Replaces the state with the base file's and the deltas after it, and publishes it.
    /// `Ok(false)` when there is no base file yet (the writer's first build is running).
    pub(crate) fn follow_base(&mut self, cache: &Cache) -> io::Result<bool> {
        let started = Instant::now();
        let mut fresh = self.empty_with_store();
        match fresh.load_cache(cache) {
            Ok(Some(_)) => {}
            other => {
                self.contents.store = fresh.contents.store.take();
                return other.map(|_| false);
            }
        }
        *self = fresh;
        self.publisher.complete = true;
        self.shared().update_cache(|r| {
            r.path = Some(cache.path());
            r.start = CacheStart::Restored;
        });
        self.apply_deltas(cache);
        self.publish(started);
        Ok(true)
    }

    /// Applies every delta published after this state, then publishes. Returns how many.
    pub(crate) fn follow_deltas(&mut self, cache: &Cache) -> usize {
        let started = Instant::now();
        let (n, _) = self.apply_deltas(cache);
        if n > 0 {
            self.publish(started);
        }
        n
    }

    /// Becomes the writer of a followed state: files that changed while no server wrote are
    /// read now. Returns whether anything changed.
    pub(crate) fn lead(&mut self) -> bool {
        self.contents.index_unfollowed();
        self.poll()
    }

    /// Applies the deltas after this state (unpublished). Returns how many, and the files
    /// they changed. A delta that cannot be read ends the chain for this state: a writer
    /// starts a new one from here.
    fn apply_deltas(&mut self, cache: &Cache) -> (usize, Vec<PathBuf>) {
        let mut n = 0;
        let mut paths = Vec::new();
        let chain = self.generation.chain;
        while self.generation.based && cache.has_delta(chain, self.generation.seq + 1) {
            let seq = self.generation.seq + 1;
            match self.apply_delta(cache, seq) {
                Ok(mut changed) => {
                    n += 1;
                    paths.append(&mut changed);
                }
                Err(e) => {
                    tracing::warn!(
                        "cannot apply `{}` ({e}); following the next base instead",
                        cache.delta(chain, seq).path().display()
                    );
                    self.generation.restart();
                    break;
                }
            }
        }
        (n, paths)
    }

    /// Reads, verifies and installs delta `seq`. Returns the files it changed.
    fn apply_delta(&mut self, cache: &Cache, seq: u64) -> io::Result<Vec<PathBuf>> {
        let file = cache.delta(self.generation.chain, seq);
        let Some((mut r, payload)) = file.open()? else {
            return Err(io::Error::new(io::ErrorKind::NotFound, "delta vanished"));
        };
        let mut d = Decoder::bounded(&mut r, payload);
        if d.u64()? != self.generation.chain || d.u64()? != seq {
            return Err(corrupt("delta of another generation"));
        }
        let docs = &self.contents.docs;
        let delta =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Delta::read(&mut d, docs)))
                .map_err(|_| corrupt("undecodable delta"))??;
        let sum = d.checksum();
        crate::cache::check_trailer(&mut r, sum, payload)?;
        let paths = delta.files.iter().map(|f| f.0.clone()).collect();
        self.install_delta(delta)?;
        self.generation.seq = seq;
        self.mark_generation();
        Ok(paths)
    }

    /// Installs a verified delta into every part (nothing when its segments or locations do
    /// not fit this state).
    fn install_delta(&mut self, delta: Delta) -> io::Result<()> {
        self.contents.docs.install(delta.segs, delta.locations)?;
        self.contents.catalog.replace_exact(delta.convs);
        self.contents.catalog.set_groups(delta.groups);
        for (path, entry) in delta.files {
            match entry {
                Some((src, cached, convs)) => {
                    let state = FileState::restored(src, cached);
                    self.contents
                        .files
                        .insert(path, FileEntry::restored(state, convs));
                }
                None => {
                    self.contents.files.take(&path);
                }
            }
        }
        self.contents.catalog.set_next_id(delta.next_conv);
        self.contents.docs.set_next_seg(delta.next_seg);
        self.publisher.complete = delta.complete;
        let [
            updates,
            reread,
            appended,
            removed,
            added,
            touched,
            merged,
            ms,
        ] = delta.counters;
        self.publisher.updates = updates;
        self.publisher.last_update_ms = f64::from_bits(ms);
        self.contents.files.counts = FileCounts {
            reread,
            appended,
            removed,
            added,
            touched,
        };
        self.contents.docs.set_merged(merged);
        Ok(())
    }

    /// Starts from the cache's catalog alone and publishes a complete snapshot whose index holds
    /// only the documents of files read since (the segments are never decoded; the state is
    /// partial, so nothing is written back). Returns false, having done nothing, when there is
    /// no usable cache file (then use [`Writer::start`], which also reports why).
    pub(crate) fn start_from_catalog(&mut self, cache: &Cache) -> bool {
        let started = Instant::now();
        let head = match cache
            .open_head()
            .and_then(|h| h.map(|b| read_head(Blob::from(b))).transpose())
        {
            Ok(Some(head)) => head,
            Ok(None) => return false,
            Err(e) => {
                tracing::debug!("cannot start from `{}`: {e}", cache.path().display());
                return false;
            }
        };
        self.contents.install_head(head);
        self.publisher.complete = true;
        let found = self.contents.files.discover();
        let found_paths: BTreeSet<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        let mut targets: BTreeSet<PathBuf> = BTreeSet::new();
        let mut stale: Vec<PathBuf> = Vec::new();
        for (path, entry) in self.contents.files.iter() {
            if !found_paths.contains(path.as_path()) {
                targets.insert(path.clone());
            } else if entry.state.looks_changed() {
                stale.push(path.clone());
            }
        }
        let fresh = found
            .into_iter()
            .filter(|f| {
                self.contents
                    .files
                    .get(&f.path)
                    .is_none_or(|e| *e.src != *f)
            })
            .collect();
        let changed = stale.len();
        for path in stale {
            self.contents.read_again(&path, &mut targets);
        }
        if !self.process(started, Changes { targets, fresh }) {
            self.publish(started);
        }
        tracing::debug!(
            files = self.contents.files.len(),
            changed,
            ms = started.elapsed().as_millis() as u64,
            "catalog restored from `{}`",
            cache.path().display()
        );
        true
    }

    /// Makes sure the `n` sessions [`super::Snapshot::recent`] selects for `scope` have their
    /// documents in the index: the files holding the others are read again.
    pub(crate) fn read_recent(&mut self, scope: Scope, n: usize) {
        self.load_recent_stored(scope, n);
        for _ in 0..DIGEST_ROUNDS {
            let snap = self.publisher.shared().snapshot();
            let missing: BTreeSet<PathBuf> = snap
                .recent(scope, n)
                .iter()
                .filter(|c| c.followed && !self.contents.docs.has_locations(c.conv))
                .map(|c| c.file.path.clone())
                .collect();
            if missing.is_empty() {
                return;
            }
            let mut targets = BTreeSet::new();
            for path in &missing {
                self.contents.read_again(path, &mut targets);
            }
            let changes = Changes {
                targets,
                fresh: Vec::new(),
            };
            if !self.process(Instant::now(), changes) {
                return;
            }
        }
    }

    /// The digest's sessions that only the durable store holds (their transcript is gone): their
    /// turns come from the store (nothing without one).
    fn load_recent_stored(&mut self, scope: Scope, n: usize) {
        let snap = self.publisher.shared().snapshot();
        let stored: Vec<(ConvId, u32)> = snap
            .recent(scope, n)
            .iter()
            .filter(|c| !c.followed && !self.contents.docs.has_locations(c.conv))
            .map(|c| (c.conv, c.turn_count))
            .collect();
        let Some(store) = self.contents.store.as_ref().filter(|_| !stored.is_empty()) else {
            return;
        };
        let started = Instant::now();
        for (conv, to) in stored {
            store.load_turns(
                conv,
                0,
                to,
                &mut self.contents.catalog,
                &mut self.contents.docs,
            );
        }
        self.contents.settle();
        self.publish(started);
    }
}

/// `found` ordered by last modification, most recent first (a file whose metadata cannot be
/// read goes last), with each file's size: a first build reads the conversations a user is
/// most likely to look for before the old ones.
fn newest_first(found: Vec<SourceFile>) -> (Vec<SourceFile>, Vec<u64>) {
    let mut planned: Vec<_> = found
        .into_iter()
        .map(|f| {
            let meta = std::fs::metadata(&f.path).ok();
            let size = meta.as_ref().map_or(0, |m| m.len());
            let mtime = meta.and_then(|m| m.modified().ok());
            (std::cmp::Reverse(mtime), f, size)
        })
        .collect();
    // stable: files of the same moment keep their path order
    planned.sort_by_key(|p| p.0);
    planned.into_iter().map(|(_, f, size)| (f, size)).unzip()
}
