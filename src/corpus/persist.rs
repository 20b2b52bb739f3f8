//! Saving the writer's state to the persistent index and restoring it: files (with what was
//! read of them), conversations, where each turn's document lives, and the segments. A restored
//! file keeps its documents while its size, mtime and fingerprint are unchanged; anything else
//! is read again, so the cache can only ever save work, never change results.
use super::catalog::{ConvId, Conversation};
use super::ingest::{FileState, Fingerprint, SavedState};
use super::writer::{ConvBook, FileEntry, Writer};
use crate::cache::{Cache, CacheStart};
use crate::index::persist::{read_segment, read_tombstones, write_segment, write_tombstones};
use crate::index::{IndexView, SegView};
use crate::store::record::{get_meta, get_role, put_meta, put_role};
use crate::transcript::{SourceFile, adapter};
use crate::util::codec::{Decoder, Encoder, corrupt};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn put_time<W: Write>(e: &mut Encoder<W>, t: Option<SystemTime>) -> io::Result<()> {
    match t.and_then(|t| t.duration_since(UNIX_EPOCH).ok()) {
        Some(d) => {
            e.u8(1)?;
            e.u64(d.as_secs())?;
            e.u32(d.subsec_nanos())
        }
        None => e.u8(0),
    }
}

fn get_time<R: Read>(d: &mut Decoder<R>) -> io::Result<Option<SystemTime>> {
    if !d.bool()? {
        return Ok(None);
    }
    let secs = d.u64()?;
    let nanos = d.u32()?;
    Ok(UNIX_EPOCH.checked_add(Duration::new(secs, nanos.min(999_999_999))))
}

fn put_source<W: Write>(e: &mut Encoder<W>, s: &SourceFile) -> io::Result<()> {
    e.bytes(s.path.as_os_str().as_encoded_bytes())?;
    e.str(s.format)?;
    e.opt_str(s.group.as_deref())?;
    put_role(e, &s.role)
}

fn get_source<R: Read>(d: &mut Decoder<R>) -> io::Result<SourceFile> {
    let path = PathBuf::from(String::from_utf8(d.bytes()?).map_err(|_| corrupt("path"))?);
    let format = adapter(&d.string()?)
        .ok_or_else(|| corrupt("unknown format"))?
        .name();
    let group = d.opt_string()?;
    let role = get_role(d)?;
    Ok(SourceFile {
        path,
        format,
        group,
        role,
    })
}

/// Everything restored from a cache file, installed only once the whole file checked out.
struct Restored {
    files: Vec<(FileState, Vec<(String, ConvId)>)>,
    convs: Vec<Conversation>,
    books: Vec<(ConvId, ConvBook)>,
    view: IndexView,
    next_conv: ConvId,
    next_seg: u64,
}

impl Writer {
    /// Writes the current state to the cache and notes the outcome for `index_status`.
    /// Returns the file's size.
    pub fn save_cache(&self, cache: &Cache) -> io::Result<u64> {
        let result = self.write_cache(cache);
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
        cache.write(|w| {
            let mut e = Encoder::new(&mut *w);
            e.u32(self.next_conv)?;
            e.u64(self.next_seg)?;
            e.varint(self.files.len() as u64)?;
            let file_index: std::collections::HashMap<&std::path::Path, u64> = self
                .files
                .keys()
                .enumerate()
                .map(|(i, p)| (p.as_path(), i as u64))
                .collect();
            for entry in self.files.values() {
                put_source(&mut e, &entry.src)?;
                let s = entry.state.saved();
                e.u64(s.offset)?;
                e.u64(s.size)?;
                put_time(&mut e, s.mtime)?;
                e.u64(s.fingerprint.head)?;
                e.u64(s.fingerprint.tail)?;
                e.u64(s.fingerprint.prefix)?;
                e.u64(s.fingerprint.sampled)?;
                e.u64(s.skipped)?;
                e.varint(s.unknown.len() as u64)?;
                for (kind, n) in &s.unknown {
                    e.str(kind)?;
                    e.u64(*n)?;
                }
                e.varint(s.stamp.len() as u64)?;
                for st in &s.stamp {
                    match st {
                        Some((size, mtime)) => {
                            e.u8(1)?;
                            e.u64(*size)?;
                            put_time(&mut e, *mtime)?;
                        }
                        None => e.u8(0)?,
                    }
                }
                e.varint(entry.convs.len() as u64)?;
                for (id, conv) in &entry.convs {
                    e.str(id)?;
                    e.u32(*conv)?;
                }
            }
            let convs: Vec<&Arc<Conversation>> = self.catalog.iter().collect();
            e.varint(convs.len() as u64)?;
            for c in convs {
                e.u32(c.conv)?;
                e.str(&c.id)?;
                // one past the last file: the description follows inline (a small number, as the
                // checksum is computed over whole words of each value)
                e.varint(
                    file_index
                        .get(c.file.path.as_path())
                        .copied()
                        .unwrap_or(self.files.len() as u64),
                )?;
                e.opt_str(c.parent.as_deref())?;
                put_meta(&mut e, &c.meta)?;
                e.u32(c.turn_count)?;
                e.u64s(&c.turn_offsets)?;
                e.u64(c.end_offset)?;
                e.u32(c.source_turns)?;
                e.bool(c.followed)?;
                e.opt_i64(c.gone_since)?;
                if !file_index.contains_key(c.file.path.as_path()) {
                    // store-only: its file is not followed, so its description goes inline
                    put_source(&mut e, &c.file)?;
                }
            }
            let mut books: Vec<(&ConvId, &ConvBook)> = self.books.iter().collect();
            books.sort_by_key(|(c, _)| **c);
            e.varint(books.len() as u64)?;
            for (conv, book) in books {
                e.u32(*conv)?;
                e.u64s(&book.docs.iter().map(|d| d.0).collect::<Vec<_>>())?;
                e.u32s(&book.docs.iter().map(|d| d.1).collect::<Vec<_>>())?;
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
    /// reads back with a matching checksum.
    pub fn load_cache(&mut self, cache: &Cache) -> io::Result<bool> {
        let Some(mut r) = cache.open()? else {
            return Ok(false);
        };
        let mut d = Decoder::new(&mut r);
        // the checksum was verified by `open`; a panic here is still a corrupt file, not a
        // dead indexer
        let restored =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_state(&mut d)))
                .map_err(|_| corrupt("undecodable payload"))??;
        let sum = d.checksum();
        let mut trailer = [0u8; 16];
        r.read_exact(&mut trailer)
            .map_err(|_| corrupt("truncated file"))?;
        if u64::from_le_bytes(trailer[..8].try_into().unwrap_or_default()) != sum {
            return Err(corrupt("checksum mismatch"));
        }
        let mut extra = [0u8; 1];
        if r.read(&mut extra)? != 0 {
            return Err(corrupt("trailing bytes"));
        }
        self.install(restored);
        Ok(true)
    }

    fn install(&mut self, r: Restored) {
        for (state, convs) in r.files {
            let path = state.src.path.clone();
            let src = Arc::new(state.src.clone());
            self.files.insert(path, FileEntry { state, convs, src });
        }
        for c in r.convs {
            self.catalog.put(c);
        }
        self.books = r.books.into_iter().collect();
        self.view = r.view;
        self.dups = super::dups::DupTracker::rebuild(&self.view);
        self.next_conv = r.next_conv;
        self.next_seg = r.next_seg;
        let groups = self.project_groups();
        self.catalog.set_groups(groups);
        self.index_unfollowed();
    }
}

fn read_state<R: Read>(d: &mut Decoder<R>) -> io::Result<Restored> {
    let next_conv = d.u32()?;
    let next_seg = d.u64()?;
    let mut files = Vec::new();
    let mut sources: Vec<Arc<SourceFile>> = Vec::new();
    for _ in 0..d.length()? {
        let src = get_source(d)?;
        let offset = d.u64()?;
        let size = d.u64()?;
        let mtime = get_time(d)?;
        let fingerprint = Fingerprint {
            head: d.u64()?,
            tail: d.u64()?,
            prefix: d.u64()?,
            sampled: d.u64()?,
        };
        let skipped = d.u64()?;
        let mut unknown = Vec::new();
        for _ in 0..d.length()? {
            unknown.push((d.string()?, d.u64()?));
        }
        let mut stamp = Vec::new();
        for _ in 0..d.length()? {
            stamp.push(if d.bool()? {
                Some((d.u64()?, get_time(d)?))
            } else {
                None
            });
        }
        let mut convs = Vec::new();
        for _ in 0..d.length()? {
            let id = d.string()?;
            let conv = d.u32()?;
            if conv >= next_conv {
                return Err(corrupt("conversation id"));
            }
            convs.push((id, conv));
        }
        sources.push(Arc::new(src.clone()));
        let saved = SavedState {
            offset,
            size,
            mtime,
            fingerprint,
            skipped,
            unknown,
            stamp,
        };
        files.push((FileState::restored(src, saved), convs));
    }
    let mut convs = Vec::new();
    for _ in 0..d.length()? {
        let conv = d.u32()?;
        let id = d.string()?;
        let file_index = d.varint()?;
        let parent = d.opt_string()?;
        let meta = get_meta(d)?;
        let turn_count = d.u32()?;
        let turn_offsets = d.u64s()?;
        let end_offset = d.u64()?;
        let source_turns = d.u32()?;
        let followed = d.bool()?;
        let gone_since = d.opt_i64()?;
        let file = match sources.get(file_index as usize) {
            Some(f) => Arc::clone(f),
            None if file_index == sources.len() as u64 => Arc::new(get_source(d)?),
            None => return Err(corrupt("file index")),
        };
        if conv >= next_conv
            || (followed && turn_offsets.len() != source_turns as usize)
            || source_turns > turn_count
        {
            return Err(corrupt("conversation"));
        }
        convs.push(Conversation {
            conv,
            id,
            file,
            parent,
            meta,
            turn_count,
            turn_offsets,
            end_offset,
            source_turns,
            followed,
            gone_since,
        });
    }
    let mut books = Vec::new();
    for _ in 0..d.length()? {
        let conv = d.u32()?;
        let segs = d.u64s()?;
        let docs = d.u32s()?;
        if segs.len() != docs.len() {
            return Err(corrupt("document locations"));
        }
        books.push((
            conv,
            ConvBook {
                docs: segs.into_iter().zip(docs).collect(),
            },
        ));
    }
    let mut view = IndexView::default();
    for _ in 0..d.length()? {
        let seg = read_segment(d)?;
        if seg.id >= next_seg || seg.docs().iter().any(|m| m.conv >= next_conv) {
            return Err(corrupt("segment ids"));
        }
        let dead = read_tombstones(d, &seg)?;
        view.live_docs += (seg.doc_count() - dead.count as usize) as u64;
        view.live_len += seg.total_len().saturating_sub(dead.len_sum);
        view.segs.push(SegView {
            seg: Arc::new(seg),
            dead: Arc::new(dead),
        });
    }
    for (_, book) in &books {
        for &(seg, doc) in &book.docs {
            let ok = view
                .segs
                .iter()
                .any(|s| s.seg.id == seg && (doc as usize) < s.seg.doc_count());
            if !ok {
                return Err(corrupt("document location"));
            }
        }
    }
    Ok(Restored {
        files,
        convs,
        books,
        view,
        next_conv,
        next_seg,
    })
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
                Ok(true) => {
                    self.complete = true;
                    let restored = self.files.len() as u64;
                    let (changed, new_files) = self.refresh_restored();
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
                    self.archive_start();
                    self.publish(started);
                    self.store_flush_some();
                    tracing::info!(
                        files = self.files.len(),
                        turns = self.view.live_docs,
                        changed,
                        ms = started.elapsed().as_millis() as u64,
                        "index restored from `{}`",
                        cache.path().display()
                    );
                    return changed;
                }
                Ok(false) => {}
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
        self.initial_build();
        true
    }

    /// After a restore: drop vanished files, re-read changed ones, add new ones (not published:
    /// the caller publishes once, with the cache report). Returns whether anything changed,
    /// and how many files are new since the cache was written.
    fn refresh_restored(&mut self) -> (bool, u64) {
        let found = self.discover();
        let known: Vec<PathBuf> = self.files.keys().cloned().collect();
        let fresh: Vec<SourceFile> = found
            .into_iter()
            .filter(|f| self.files.get(&f.path).is_none_or(|e| *e.src != *f))
            .collect();
        let new_files = fresh
            .iter()
            .filter(|f| !self.files.contains_key(&f.path))
            .count() as u64;
        (
            self.take_changes(known.into_iter().collect(), fresh),
            new_files,
        )
    }
}
