//! The first build: every file read once, in parallel. Workers hand over a finished segment
//! (with the files whose turns it holds) now and then, and the writer publishes what it has at
//! most every [`PROGRESS_EVERY`], so searches answer from the first files on while the build
//! runs; those snapshots say `complete: false` and keep generation 0.
use super::catalog::ConvId;
use super::ingest::{FileState, ReadOutcome};
use super::writer::{Batch, ConvUpdate, FileEntry, Writer};
use crate::index::Segment;
use crate::store::TurnRecord;
use crate::transcript::SourceFile;
use rustc_hash::FxHashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

/// Text a segment of the first build holds before the next one is started.
const SEGMENT_TEXT_BYTES: usize = 64 << 20;
/// A worker's first segment is handed over after this long; each later one after twice the
/// previous wait (so a long build makes few, large segments).
const FIRST_HANDOVER: Duration = Duration::from_millis(250);
/// Least time between two published progress snapshots.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// Test hook: `CONVERSATION_SEARCH_TEST_BUILD_DELAY_MS` makes each file of the first build
/// take that much longer, so that black-box tests can watch a build in progress. Read once.
fn delay_per_file() -> Option<Duration> {
    static DELAY: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    *DELAY.get_or_init(|| {
        std::env::var("CONVERSATION_SEARCH_TEST_BUILD_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
    })
}

/// A file read by a worker: its state, its conversations, their ids and (for the store's
/// writer) their turns as store records.
type Read = (
    FileState,
    Vec<ConvUpdate>,
    Vec<ConvId>,
    Vec<Vec<TurnRecord>>,
);
/// What a worker hands over: finished segments (with their documents' places) and the files
/// whose turns they hold.
type Chunk = (Vec<(Segment, Vec<(ConvId, u32)>)>, Vec<Read>);

/// Counters the workers share.
struct Shared<'a> {
    files: &'a [SourceFile],
    /// Each file's size when the build started.
    sizes: &'a [u64],
    next: AtomicUsize,
    conv_base: AtomicUsize,
    seg_base: AtomicU64,
    progress: &'a super::BuildProgress,
    /// Whether turns are made into store records (only the store's writer keeps what it reads).
    encode: bool,
    /// Conversations forgotten on request: never indexed again.
    forgotten: &'a FxHashSet<String>,
}

impl Writer {
    /// Reads every file once, in parallel, publishing progress, then the first complete
    /// snapshot.
    pub fn initial_build(&mut self) {
        let started = Instant::now();
        crate::util::huge::hold_freed_memory(true);
        let files = self.discover();
        let sizes: Vec<u64> = files
            .iter()
            .map(|f| std::fs::metadata(&f.path).map_or(0, |m| m.len()))
            .collect();
        let shared = Arc::clone(&self.shared);
        shared
            .progress
            .start(files.len() as u64, sizes.iter().sum());
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 8);
        let forgotten = self
            .archive
            .as_ref()
            .map(|a| a.forgotten.clone())
            .unwrap_or_default();
        let work = Shared {
            encode: self.archive.as_ref().is_some_and(|a| a.is_writer()),
            forgotten: &forgotten,
            files: &files,
            sizes: &sizes,
            next: AtomicUsize::new(0),
            conv_base: AtomicUsize::new(self.next_conv as usize),
            seg_base: AtomicU64::new(self.next_seg),
            progress: &shared.progress,
        };
        let (tx, rx) = channel::<Chunk>();
        std::thread::scope(|s| {
            for _ in 0..threads {
                let tx = tx.clone();
                let work = &work;
                s.spawn(move || worker(work, tx));
            }
            drop(tx);
            let mut published = Instant::now();
            for chunk in rx {
                self.take_chunk(chunk);
                if published.elapsed() >= PROGRESS_EVERY {
                    self.next_conv = work.conv_base.load(Ordering::Relaxed) as ConvId;
                    self.next_seg = work.seg_base.load(Ordering::Relaxed);
                    let groups = self.project_groups();
                    self.catalog.set_groups(groups);
                    self.publish_as_is(started);
                    published = Instant::now();
                }
            }
        });
        self.next_conv = work.conv_base.load(Ordering::Relaxed) as ConvId;
        self.next_seg = work.seg_base.load(Ordering::Relaxed);
        let groups = self.project_groups();
        self.catalog.set_groups(groups);
        // conversations only the store still holds join before the index says it is complete
        self.archive_start();
        self.complete = true;
        self.publish(started);
        self.log_built(started);
        // the workers' tables and read buffers go back to the system now
        crate::util::huge::hold_freed_memory(false);
        crate::util::huge::release_free_memory();
        // the turns read wait for the store, searches do not: a first slice now (all of a small
        // corpus), the rest between live changes (a one-shot command: [`Writer::store_flush`])
        self.store_flush_some();
    }

    /// Adds a worker's files and segments.
    fn take_chunk(&mut self, (segments, read): Chunk) {
        for (state, convs, ids, records) in read {
            let path = state.src.path.clone();
            let src = Arc::new(state.src.clone());
            let mut entry = FileEntry {
                state,
                convs: Vec::new(),
                src,
            };
            let mut records = records.into_iter();
            for (c, id) in convs.into_iter().zip(ids) {
                entry.convs.push((c.id.clone(), id));
                self.update_conversation(&entry, id, c, &mut Vec::new());
                self.note_records(id, records.next().unwrap_or_default());
            }
            self.files.insert(path, entry);
        }
        for (seg, docs) in segments {
            self.place_segment(seg, &docs, true);
        }
    }

    fn log_built(&self, started: Instant) {
        let snap = self.shared.snapshot();
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
}

/// One worker: takes files until none is left, turning their turns into segments that are
/// handed over when large enough or after a wait that doubles each time.
fn worker(work: &Shared, tx: Sender<Chunk>) {
    let mut batch = Batch::default();
    let mut read: Vec<Read> = Vec::new();
    let mut wait = FIRST_HANDOVER;
    let mut since = Instant::now();
    // the builder is kept from segment to segment: its tables stay resident
    let finish = |batch: &mut Batch| {
        let id = work.seg_base.fetch_add(1, Ordering::Relaxed);
        (
            batch.builder.finish_reuse(id),
            std::mem::take(&mut batch.docs),
        )
    };
    loop {
        let i = work.next.fetch_add(1, Ordering::Relaxed);
        let Some(src) = work.files.get(i) else { break };
        if let Some(d) = delay_per_file() {
            std::thread::sleep(d);
        }
        let mut state = FileState::new(src.clone());
        let convs = match state.read() {
            ReadOutcome::Appended(convs) => convs,
            ReadOutcome::Replaced { changed, .. } => changed,
            ReadOutcome::Unchanged => Vec::new(),
            ReadOutcome::Gone | ReadOutcome::Rewritten => {
                work.progress.file_done(work.sizes[i], 0);
                continue;
            }
        };
        let convs: Vec<_> = convs
            .into_iter()
            .filter(|c| !work.forgotten.contains(&c.id))
            .collect();
        let ids: Vec<ConvId> = convs
            .iter()
            .map(|_| work.conv_base.fetch_add(1, Ordering::Relaxed) as ConvId)
            .collect();
        // the turns go into the segment; only their summary is kept
        let mut updates = Vec::with_capacity(convs.len());
        let mut records = Vec::new();
        let mut turn_count = 0;
        for (c, &id) in convs.into_iter().zip(&ids) {
            let (update, turns) = ConvUpdate::split(c);
            for t in &turns {
                batch.add(id, t);
            }
            turn_count += turns.len() as u64;
            if work.encode {
                records.push(turns.iter().map(TurnRecord::of).collect());
            }
            updates.push(update);
        }
        work.progress.file_done(work.sizes[i], turn_count);
        read.push((state, updates, ids, records));
        let full = batch.builder.text_bytes() >= SEGMENT_TEXT_BYTES;
        if full || since.elapsed() >= wait {
            let segments = if batch.docs.is_empty() {
                Vec::new()
            } else {
                vec![finish(&mut batch)]
            };
            if tx.send((segments, std::mem::take(&mut read))).is_err() {
                return;
            }
            wait *= 2;
            since = Instant::now();
        }
    }
    // finish the last segment here, in parallel with the other workers
    let segments = if batch.docs.is_empty() {
        Vec::new()
    } else {
        vec![finish(&mut batch)]
    };
    let _ = tx.send((segments, read));
}
