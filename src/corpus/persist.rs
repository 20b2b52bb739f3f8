//! Saving the writer's state to the persistent index and restoring it: the catalog first, as the
//! file's head section (files with what was read of them, conversations; see [`super::saved`]),
//! then where each turn's document lives, and the segments. A restored file keeps its documents
//! while its size, mtime and fingerprint are unchanged; anything else is read again, so the
//! cache can only ever save work, never change results.
use super::books::ConvBook;
use super::catalog::ConvId;
use super::dups::DupTracker;
use super::ingest::FileState;
use super::saved::{Head, read_head};
use super::writer::{FileEntry, Writer};
use crate::cache::{self, Cache, CacheStart, HEAD_FRAME, split_frame};
use crate::index::persist::{
    RawSegment, read_segment, read_tombstones, write_segment, write_tombstones,
};
use crate::index::{IndexView, SegView, Tombstones};
use crate::transcript::SourceFile;
use crate::util::codec::{Decoder, Encoder, Source, corrupt};
use rustc_hash::FxHashSet;
use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender};

/// Everything restored from a cache file, installed only once the whole file checked out.
struct Restored {
    head: Head,
    books: Vec<(ConvId, ConvBook)>,
    view: IndexView,
    dups: DupTracker,
}

impl Writer {
    /// Writes the current state to the cache and notes the outcome for `index_status`.
    /// Returns the file's size.
    pub fn save_cache(&mut self, cache: &Cache) -> io::Result<u64> {
        // the base holds the generation of the last delta: publish what is pending first
        let result = self
            .publish_delta(cache)
            .and_then(|_| self.write_cache(cache));
        if result.is_ok() && !self.gens.based {
            // a new chain: followers can start from here
            self.gens.based = true;
            self.gens.mark(&self.catalog, &self.view);
        }
        self.shared.update_cache(|r| match &result {
            Ok(_) => {
                r.writes += 1;
                r.write_error = None;
            }
            Err(e) => r.write_error = Some(e.to_string()),
        });
        result
    }

    fn write_cache(&self, cache: &Cache) -> io::Result<u64> {
        let head = self.head_bytes(cache.sharing)?;
        cache.write(|w| {
            let mut e = Encoder::new(&mut *w);
            e.bytes_raw(&crate::cache::head_frame(&head))?;
            e.bytes_raw(&head)?;
            let mut books: Vec<(&ConvId, &ConvBook)> = self.books.iter().collect();
            books.sort_by_key(|(c, _)| **c);
            e.varint(books.len() as u64)?;
            for (conv, book) in books {
                e.u32(*conv)?;
                book.write(&mut e)?;
            }
            e.varint(self.view.segs.len() as u64)?;
            for sv in &self.view.segs {
                write_segment(&mut e, &sv.seg)?;
                write_tombstones(&mut e, &sv.dead)?;
            }
            let (sum, len) = (e.checksum(), e.written());
            w.write_all(&sum.to_le_bytes())?;
            w.write_all(&len.to_le_bytes())?;
            Ok(())
        })
    }

    /// Replaces the (empty) state with the cache's. Nothing is installed unless the whole file
    /// reads back with a matching checksum (verified in the same pass as it is decoded, every
    /// length bounded by what is left of the file). While the payload is decoded on another
    /// thread, this one looks at the disk: which restored files are unchanged, and which files
    /// exist now. `Ok(None)` when there is no cache file.
    pub fn load_cache(&mut self, cache: &Cache) -> io::Result<Option<Rechecked>> {
        let Some((mut r, payload)) = cache.open()? else {
            return Ok(None);
        };
        let mut d = Decoder::bounded(&mut r, payload);
        let mut frame = [0u8; HEAD_FRAME];
        d.fill(&mut frame)?;
        let (head_len, _) = split_frame(&frame);
        if head_len > payload {
            return Err(corrupt("head length out of range"));
        }
        let head = d.raw_blob(head_len as usize)?;
        cache::check_head(&frame, &head)?;
        let mut head = read_head(head)?;
        let (next_conv, next_seg) = (head.next_conv, head.next_seg);
        let (tx, rx) = std::sync::mpsc::sync_channel::<(RawSegment, Tombstones)>(2);
        let decoder = &mut d;
        let t0 = std::time::Instant::now();
        let (books, (view, dups), rechecked) = std::thread::scope(|s| {
            let decoding = s.spawn(move || read_state(decoder, tx));
            let rechecked = Rechecked {
                unchanged: unchanged_files(&mut head.files),
                found: self.discover(),
            };
            let recheck_ms = t0.elapsed().as_millis() as u64;
            // the block maxima of each segment are computed here while the next one is read
            let view = assemble(rx, next_conv, next_seg);
            tracing::debug!(
                recheck_ms,
                read_ms = t0.elapsed().as_millis() as u64,
                "cache payload read"
            );
            // a panic while decoding (the checksum is not verified yet) is a corrupt file,
            // not a dead indexer
            let books = decoding
                .join()
                .map_err(|_| corrupt("undecodable payload"))?;
            io::Result::Ok((books?, view?, rechecked))
        })?;
        check_books(&books, &view)?;
        let sum = d.checksum();
        cache::check_trailer(&mut r, sum, payload)?;
        log_restored_memory(&view, &books, &dups);
        self.install(
            Restored {
                head,
                books,
                view,
                dups,
            },
            cache.sharing,
        );
        Ok(Some(rechecked))
    }

    fn install(&mut self, r: Restored, sharing: u64) {
        let (ours, chain, seq) = (r.head.sharing == sharing, r.head.chain, r.head.seq);
        self.install_head(r.head);
        self.books = r.books.into_iter().collect();
        self.view = r.view;
        self.dups = r.dups;
        if ours {
            self.gens.restored(chain, seq, &self.catalog, &self.view);
        } else {
            // another lineage's (a server with another store): a new one starts from here
            self.gens.restart();
        }
    }

    /// Installs a restored catalog: files, conversations and the ids to hand out next (the
    /// index stays as it is).
    pub(super) fn install_head(&mut self, head: Head) {
        for (state, convs) in head.files {
            let path = state.src.path.clone();
            let src = Arc::new(state.src.clone());
            self.files.insert(path, FileEntry { state, convs, src });
        }
        for c in head.convs {
            self.catalog.put(c);
        }
        self.next_conv = head.next_conv;
        self.next_seg = head.next_seg;
        let groups = self.project_groups();
        self.catalog.set_groups(groups);
        self.index_unfollowed();
    }
}

/// What the disk holds now, looked at while a cache was read: the restored files found exactly
/// as recorded (not read again), and every file there is.
pub struct Rechecked {
    unchanged: FxHashSet<PathBuf>,
    found: Vec<SourceFile>,
}

/// The restored files that are still exactly as recorded (size, mtime, fingerprint).
fn unchanged_files(files: &mut [(FileState, Vec<(String, ConvId)>)]) -> FxHashSet<PathBuf> {
    files
        .iter_mut()
        .filter_map(|(state, _)| state.still_as_restored().then(|| state.path().to_owned()))
        .collect()
}

type Books = Vec<(ConvId, ConvBook)>;

/// The rest of the payload after the head: where the documents live, then the segments, each
/// handed over as soon as it is read.
fn read_state<R: Source>(
    d: &mut Decoder<R>,
    segments: SyncSender<(RawSegment, Tombstones)>,
) -> io::Result<Books> {
    let mut books = Vec::new();
    for _ in 0..d.length()? {
        let conv = d.u32()?;
        books.push((conv, ConvBook::read(d)?));
    }
    for _ in 0..d.length()? {
        let seg = read_segment(d)?;
        let dead = read_tombstones(d, &seg)?;
        if segments.send((seg, dead)).is_err() {
            break;
        }
    }
    Ok(books)
}

/// The index view of the segments read by [`read_state`], checked against the head's ids,
/// and the duplicate keys of its live documents. Stops at the first bad segment (which drops
/// the channel, so the reader stops too).
fn assemble(
    segments: Receiver<(RawSegment, Tombstones)>,
    next_conv: u32,
    next_seg: u64,
) -> io::Result<(IndexView, DupTracker)> {
    let mut view = IndexView::default();
    for (raw, dead) in segments {
        let seg = raw.finish();
        if seg.id >= next_seg || seg.convs().iter().any(|&c| c >= next_conv) {
            return Err(corrupt("segment ids"));
        }
        view.live_docs += (seg.doc_count() - dead.count as usize) as u64;
        view.live_len += seg.total_len().saturating_sub(dead.len_sum);
        let sv = SegView {
            seg: Arc::new(seg),
            dead: Arc::new(dead),
        };
        view.segs.push(sv);
    }
    let dups = DupTracker::restored(&view);
    Ok((view, dups))
}

/// Heap bytes a restored index holds, by structure (what is not a view of the mapped file).
fn log_restored_memory(view: &IndexView, books: &Books, dups: &DupTracker) {
    let mut parts: Vec<(&str, usize)> = Vec::new();
    for sv in &view.segs {
        for (i, (name, bytes)) in sv.seg.heap_parts().into_iter().enumerate() {
            match parts.get_mut(i) {
                Some(p) => p.1 += bytes,
                None => parts.push((name, bytes)),
            }
        }
    }
    let tombstones = view.segs.iter().map(|s| s.dead.heap_bytes()).sum();
    let books = books.iter().map(|b| b.1.heap_bytes() + 32).sum::<usize>();
    parts.extend([
        ("tombstones", tombstones),
        ("document locations", books),
        ("duplicate tracking", dups.heap_bytes()),
    ]);
    let mb = |b: usize| b as f64 / (1u64 << 20) as f64;
    tracing::debug!(
        "restored index heap: {}",
        parts
            .iter()
            .map(|(k, v)| format!("{k} {:.1} MB", mb(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// Every document location points into a segment that was read.
fn check_books(books: &Books, view: &IndexView) -> io::Result<()> {
    for (_, book) in books {
        for (seg, doc) in book.locs() {
            let ok = view
                .segs
                .iter()
                .any(|s| s.seg.id == seg && (doc as usize) < s.seg.doc_count());
            if !ok {
                return Err(corrupt("document location"));
            }
        }
    }
    Ok(())
}

impl Writer {
    /// The first build: from the persistent index when it is valid (re-reading only files that
    /// changed since it was written), else from scratch. Publishes a complete snapshot and, when
    /// anything was read, refreshes the cache. Returns whether the cache needs saving.
    pub fn start(&mut self, cache: Option<&Cache>) -> bool {
        let started = std::time::Instant::now();
        let shared = Arc::clone(&self.shared);
        shared.update_cache(|r| {
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
                Ok(Some(mut rechecked)) => {
                    // generations the last writer published after this base
                    let (_, caught) = self.apply_deltas(cache);
                    // the deltas may have left conversations to the store alone since the base
                    // was read: a transcript found again takes such a conversation over
                    self.index_unfollowed();
                    rechecked.unchanged.retain(|p| !caught.contains(p));
                    let loaded_ms = started.elapsed().as_millis() as u64;
                    self.complete = true;
                    let restored = self.files.len() as u64;
                    let (changed, new_files) = self.refresh_restored(rechecked);
                    let s = &self.stats;
                    let touched = s.files_touched;
                    shared.update_cache(|r| {
                        r.start = CacheStart::Restored;
                        r.files_changed = touched;
                        r.files_reused = restored.saturating_sub(touched - new_files.min(touched));
                    });
                    // the start is not an update: live counters begin after it
                    let sources = std::mem::take(&mut self.stats.sources);
                    self.stats = super::Stats {
                        sources,
                        ..super::Stats::default()
                    };
                    let refreshed_ms = started.elapsed().as_millis() as u64;
                    self.archive_start();
                    self.publish(started);
                    // the decoding's buffers go back to the system now, not a moment later
                    // (several servers each holding them is what sharing the index avoids)
                    crate::util::huge::release_free_memory();
                    self.store_flush_some();
                    tracing::info!(
                        files = self.files.len(),
                        turns = self.view.live_docs,
                        changed,
                        loaded_ms,
                        refreshed_ms,
                        ms = started.elapsed().as_millis() as u64,
                        "index restored from `{}`",
                        cache.path().display()
                    );
                    // a base of another lineage is replaced by one of ours soon
                    return changed || !self.gens.based;
                }
                Ok(None) => {}
                Err(e) => {
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
                    shared.update_cache(|r| {
                        r.start = CacheStart::Rejected;
                        r.rejected_because = Some(because);
                    });
                }
            }
        }
        // a new lineage: what followers hold (if anything) is not continued
        self.gens.restart();
        self.gens.built = true;
        self.initial_build();
        true
    }

    /// After a restore: drop vanished files, re-read changed ones, add new ones (not published:
    /// the caller publishes once, with the cache report). Files found unchanged while the cache
    /// was read are not looked at again. Returns whether anything changed, and how many files
    /// are new since the cache was written.
    fn refresh_restored(&mut self, rechecked: Rechecked) -> (bool, u64) {
        let Rechecked { unchanged, found } = rechecked;
        let known: BTreeSet<PathBuf> = self
            .files
            .keys()
            .filter(|p| !unchanged.contains(*p))
            .cloned()
            .collect();
        let fresh: Vec<SourceFile> = found
            .into_iter()
            .filter(|f| self.files.get(&f.path).is_none_or(|e| *e.src != *f))
            .collect();
        let new_files = fresh
            .iter()
            .filter(|f| !self.files.contains_key(&f.path))
            .count() as u64;
        (self.take_changes(known, fresh), new_files)
    }
}
