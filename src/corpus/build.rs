//! The first build's reading: every file read once, in the order planned (newest first), by
//! several workers in parallel. A worker hands over a finished segment (with the files whose
//! turns it holds) now and then; the writer takes each hand-over in and publishes what it has
//! at most every [`PROGRESS_EVERY`], so searches answer from the first files on while the build
//! runs; those snapshots say `complete: false` and keep generation 0.
use super::BuildProgress;
use super::batch::Batch;
use super::catalog::{ConvId, ConvUpdate};
use super::ingest::{FileState, ReadOutcome};
use crate::index::Segment;
use crate::store::TurnRecord;
use crate::transcript::SourceFile;
use rustc_hash::FxHashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

/// Text a segment of the first build holds before the next one is started.
const SEGMENT_TEXT_BYTES: usize = 64 << 20;
/// A worker's first segment is handed over after this long; each later one after twice the
/// previous wait (so a long build makes few, large segments).
const FIRST_HANDOVER: Duration = Duration::from_millis(250);
/// Least time between two published progress snapshots.
pub(super) const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// Test hook: `CONVERSATION_SEARCH_TEST_BUILD_DELAY_MS` makes each file of the first build
/// take that much longer, so that black-box tests can watch a build in progress. Read once.
fn delay_per_file() -> Option<Duration> {
    static DELAY: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    *DELAY.get_or_init(|| {
        crate::util::time::millis_from_env("CONVERSATION_SEARCH_TEST_BUILD_DELAY_MS")
    })
}

/// A file read by a worker.
pub(super) struct ReadFile {
    pub(super) state: FileState,
    /// Its conversations, without their turns (those went into a segment).
    pub(super) convs: Vec<ConvUpdate>,
    /// Their internal ids.
    pub(super) ids: Vec<ConvId>,
    /// Their turns as store records (only for the store's writer; else empty).
    pub(super) records: Vec<Vec<TurnRecord>>,
}

/// What a worker hands over: finished segments (with their documents' (conversation, turn))
/// and the files whose turns they hold.
pub(super) struct Chunk {
    pub(super) segments: Vec<(Segment, Vec<(ConvId, u32)>)>,
    pub(super) files: Vec<ReadFile>,
}

/// The files to read and the counters the workers share.
pub(super) struct FirstBuild<'a> {
    files: &'a [SourceFile],
    /// Each file's size when the build started.
    sizes: &'a [u64],
    next: AtomicUsize,
    conv_base: AtomicUsize,
    seg_base: AtomicU64,
    progress: &'a BuildProgress,
    /// Whether turns are made into store records (only the store's writer keeps what it reads).
    encode: bool,
    /// Conversations forgotten on request: never indexed again.
    forgotten: &'a FxHashSet<String>,
}

impl<'a> FirstBuild<'a> {
    /// A build of `files` (of these sizes) whose conversation and segment ids start at
    /// `next_ids`.
    pub(super) fn new(
        files: &'a [SourceFile],
        sizes: &'a [u64],
        next_ids: (ConvId, u64),
        progress: &'a BuildProgress,
        encode: bool,
        forgotten: &'a FxHashSet<String>,
    ) -> Self {
        FirstBuild {
            files,
            sizes,
            next: AtomicUsize::new(0),
            conv_base: AtomicUsize::new(next_ids.0 as usize),
            seg_base: AtomicU64::new(next_ids.1),
            progress,
            encode,
            forgotten,
        }
    }

    /// The conversation and segment ids the next ones would get.
    pub(super) fn next_ids(&self) -> (ConvId, u64) {
        (
            self.conv_base.load(Ordering::Relaxed) as ConvId,
            self.seg_base.load(Ordering::Relaxed),
        )
    }

    /// Reads every file on `threads` workers, handing each chunk to `take` (on this thread)
    /// as it arrives; returns once every worker is done.
    pub(super) fn run(&self, threads: usize, mut take: impl FnMut(Chunk, &Self)) {
        let (tx, rx) = channel::<Chunk>();
        std::thread::scope(|s| {
            for _ in 0..threads {
                let tx = tx.clone();
                s.spawn(move || self.worker(tx));
            }
            drop(tx);
            for chunk in rx {
                take(chunk, self);
            }
        });
    }

    /// One worker: takes files until none is left, turning their turns into segments that are
    /// handed over when large enough or after a wait that doubles each time.
    fn worker(&self, tx: Sender<Chunk>) {
        // the builder is kept from segment to segment: its tables stay resident
        let mut batch = Batch::default();
        let mut read: Vec<ReadFile> = Vec::new();
        let mut wait = FIRST_HANDOVER;
        let mut since = Instant::now();
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(src) = self.files.get(i) else { break };
            if let Some(d) = delay_per_file() {
                std::thread::sleep(d);
            }
            if let Some(file) = self.read_one(src, self.sizes[i], &mut batch) {
                read.push(file);
            }
            let full = batch.builder.text_bytes() >= SEGMENT_TEXT_BYTES;
            if full || since.elapsed() >= wait {
                let chunk = self.hand_over(&mut batch, std::mem::take(&mut read));
                if tx.send(chunk).is_err() {
                    return;
                }
                wait *= 2;
                since = Instant::now();
            }
        }
        // finish the last segment here, in parallel with the other workers
        let _ = tx.send(self.hand_over(&mut batch, read));
    }

    /// Reads one file whose size was `size`, adding its turns to `batch`; `None` when it is
    /// gone (or cannot be read from the start).
    fn read_one(&self, src: &SourceFile, size: u64, batch: &mut Batch) -> Option<ReadFile> {
        let mut state = FileState::new(src.clone());
        let convs = match state.read() {
            ReadOutcome::Appended(convs) => convs,
            ReadOutcome::Replaced { changed, .. } => changed,
            ReadOutcome::Unchanged => Vec::new(),
            ReadOutcome::Gone | ReadOutcome::Rewritten => {
                self.progress.file_done(size, 0);
                return None;
            }
        };
        let convs: Vec<_> = convs
            .into_iter()
            .filter(|c| !self.forgotten.contains(&c.id))
            .collect();
        let ids: Vec<ConvId> = convs
            .iter()
            .map(|_| self.conv_base.fetch_add(1, Ordering::Relaxed) as ConvId)
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
            if self.encode {
                // deflated here, in parallel: the backlog holds them until committed
                records.push(turns.iter().map(TurnRecord::packed_of).collect());
            }
            updates.push(update);
        }
        self.progress.file_done(size, turn_count);
        Some(ReadFile {
            state,
            convs: updates,
            ids,
            records,
        })
    }

    /// The segment of what `batch` holds (none when empty) and the files read into it.
    fn hand_over(&self, batch: &mut Batch, files: Vec<ReadFile>) -> Chunk {
        let segments = if batch.is_empty() {
            Vec::new()
        } else {
            let id = self.seg_base.fetch_add(1, Ordering::Relaxed);
            vec![batch.finish_reuse(id)]
        };
        Chunk { segments, files }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Role, SourceFile};

    #[test]
    fn every_file_is_read_once_and_ids_are_handed_out_once() {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut files = Vec::new();
        for n in 0..5 {
            let p = tmp.path().join(format!("s{n}.jsonl"));
            let line = format!(
                r#"{{"type":"user","sessionId":"s{n}","uuid":"u{n}","timestamp":"2025-01-01T00:00:00Z","message":{{"role":"user","content":"question {n}"}}}}"#
            );
            std::fs::write(&p, format!("{line}\n")).expect("write");
            files.push(SourceFile {
                path: p,
                format: "claude",
                group: Some("g".into()),
                role: Role::Session {
                    id: format!("s{n}"),
                },
            });
        }
        files.push(SourceFile {
            path: tmp.path().join("gone.jsonl"),
            format: "claude",
            group: None,
            role: Role::Session { id: "gone".into() },
        });
        let sizes = vec![1; files.len()];
        let progress = BuildProgress::default();
        progress.start(files.len() as u64, sizes.iter().sum());
        let forgotten: FxHashSet<String> = ["s3".to_string()].into_iter().collect();
        let build = FirstBuild::new(&files, &sizes, (10, 4), &progress, true, &forgotten);
        let (mut read, mut docs, mut ids) = (0, 0, Vec::<ConvId>::new());
        build.run(2, |chunk, _| {
            read += chunk.files.len();
            for f in &chunk.files {
                assert_eq!(f.records.len(), f.ids.len(), "encoded for the store");
                ids.extend(&f.ids);
            }
            for (seg, located) in &chunk.segments {
                assert!(seg.id >= 4);
                docs += located.len();
            }
        });
        assert_eq!(read, 5, "the file that is gone yields nothing");
        ids.sort_unstable();
        assert_eq!(ids, [10, 11, 12, 13], "forgotten s3 gets no id");
        assert_eq!(docs, 4);
        assert_eq!(build.next_ids().0, 14);
        assert_eq!(progress.get().files_done, 6);
    }
}
