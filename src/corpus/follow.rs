//! Generations on disk, follower side: a server that does not hold the writer lock reads no
//! transcript; it restores the base file and applies each delta the writer publishes (see
//! `delta`), and takes over as the writer when the lock comes free.
use super::books::ConvBook;
use super::catalog::{ConvId, Conversation};
use super::gens::{SEG_DEAD, SEG_NEW, SEG_SAME};
use super::ingest::FileState;
use super::saved::{SavedFile, get_conv_fields, get_file_entry};
use super::writer::{FileEntry, Writer};
use crate::cache::{Cache, CacheStart};
use crate::index::persist::{read_segment, read_tombstones, read_tombstones_of};
use crate::index::{IndexView, SegView, Segment, Tombstones};
use crate::util::codec::{Decoder, Source, corrupt};
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

type FileChange = (PathBuf, Option<SavedFile>);

enum SegChange {
    Same,
    Dead(Tombstones),
    New(Box<Segment>, Tombstones),
}

/// One generation's change, decoded and verified before anything is installed.
struct Delta {
    next_conv: ConvId,
    next_seg: u64,
    complete: bool,
    counters: [u64; 8],
    groups: Vec<String>,
    files: Vec<FileChange>,
    convs: Vec<(ConvId, Option<Conversation>, Option<ConvBook>)>,
    segs: Vec<(u64, SegChange)>,
}

impl Writer {
    /// Whether this state came from a base file (a follower that loaded one).
    pub fn has_base(&self) -> bool {
        self.gens.based
    }

    /// Live documents (turns) of this state.
    pub fn live_docs(&self) -> u64 {
        self.view.live_docs
    }

    /// The generation this state is: (chain, sequence number).
    pub fn generation_on_disk(&self) -> (u64, u64) {
        (self.gens.chain, self.gens.seq)
    }

    /// Replaces the state with the base file's and the deltas after it, and publishes it.
    /// `Ok(false)` when there is no base file yet (the writer's first build is running).
    pub fn follow_base(&mut self, cache: &Cache) -> io::Result<bool> {
        let started = Instant::now();
        let mut fresh = Writer::new(self.roots.as_ref().clone(), Arc::clone(&self.shared));
        fresh.archive = self.archive.take();
        match fresh.load_cache(cache) {
            Ok(Some(_)) => {}
            other => {
                self.archive = fresh.archive.take();
                return other.map(|_| false);
            }
        }
        *self = fresh;
        self.complete = true;
        self.shared.update_cache(|r| {
            r.path = Some(cache.path());
            r.start = CacheStart::Restored;
        });
        self.apply_deltas(cache);
        self.publish(started);
        Ok(true)
    }

    /// Applies every delta published after this state, then publishes. Returns how many.
    pub fn follow_deltas(&mut self, cache: &Cache) -> usize {
        let started = Instant::now();
        let (n, _) = self.apply_deltas(cache);
        if n > 0 {
            self.publish(started);
        }
        n
    }

    /// Applies the deltas after this state (unpublished). Returns how many, and the files
    /// they changed. A delta that cannot be read ends the chain for this state: a writer
    /// starts a new one from here.
    pub(super) fn apply_deltas(&mut self, cache: &Cache) -> (usize, Vec<PathBuf>) {
        let mut n = 0;
        let mut paths = Vec::new();
        while self.gens.based && cache.has_delta(self.gens.chain, self.gens.seq + 1) {
            let seq = self.gens.seq + 1;
            match self.apply_delta(cache, seq) {
                Ok(mut changed) => {
                    n += 1;
                    paths.append(&mut changed);
                }
                Err(e) => {
                    tracing::warn!(
                        "cannot apply `{}` ({e}); following the next base instead",
                        cache.delta(self.gens.chain, seq).path().display()
                    );
                    self.gens.restart();
                    break;
                }
            }
        }
        (n, paths)
    }

    /// Reads, verifies and installs delta `seq`. Returns the files it changed.
    fn apply_delta(&mut self, cache: &Cache, seq: u64) -> io::Result<Vec<PathBuf>> {
        let file = cache.delta(self.gens.chain, seq);
        let Some((mut r, payload)) = file.open()? else {
            return Err(io::Error::new(io::ErrorKind::NotFound, "delta vanished"));
        };
        let mut d = Decoder::bounded(&mut r, payload);
        if d.u64()? != self.gens.chain || d.u64()? != seq {
            return Err(corrupt("delta of another generation"));
        }
        let delta =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.read_delta(&mut d)))
                .map_err(|_| corrupt("undecodable delta"))??;
        let sum = d.checksum();
        crate::cache::check_trailer(&mut r, sum, payload)?;
        let paths = delta.files.iter().map(|f| f.0.clone()).collect();
        self.install_delta(delta)?;
        self.gens.seq = seq;
        self.gens.mark(&self.catalog, &self.view);
        Ok(paths)
    }

    fn read_delta<R: Source>(&self, d: &mut Decoder<R>) -> io::Result<Delta> {
        let next_conv = d.u32()?;
        let next_seg = d.u64()?;
        let complete = d.bool()?;
        let mut counters = [0u64; 8];
        for c in &mut counters {
            *c = d.u64()?;
        }
        let groups = (0..d.length()?)
            .map(|_| d.string())
            .collect::<io::Result<_>>()?;
        let mut files = Vec::new();
        for _ in 0..d.length()? {
            let path = PathBuf::from(String::from_utf8(d.bytes()?).map_err(|_| corrupt("path"))?);
            if !d.bool()? {
                files.push((path, None));
                continue;
            }
            let entry = get_file_entry(d, next_conv)?;
            if entry.0.path != path {
                return Err(corrupt("file path"));
            }
            files.push((path, Some(entry)));
        }
        let mut convs = Vec::new();
        for _ in 0..d.length()? {
            let conv = d.u32()?;
            if conv >= next_conv {
                return Err(corrupt("conversation id"));
            }
            let c = if d.bool()? {
                Some(get_conv_fields(d, conv, None)?)
            } else {
                None
            };
            let book = if d.bool()? {
                Some(ConvBook::read(d)?)
            } else {
                None
            };
            convs.push((conv, c, book));
        }
        let mut segs = Vec::new();
        for _ in 0..d.length()? {
            let id = d.u64()?;
            let change = match d.u8()? {
                SEG_SAME => SegChange::Same,
                SEG_DEAD => {
                    let old = self.segment(id)?;
                    SegChange::Dead(read_tombstones_of(d, &old)?)
                }
                SEG_NEW => {
                    let raw = read_segment(d)?;
                    let dead = read_tombstones(d, &raw)?;
                    let seg = raw.finish();
                    if seg.id != id || id >= next_seg || seg.convs().iter().any(|&c| c >= next_conv)
                    {
                        return Err(corrupt("segment ids"));
                    }
                    SegChange::New(Box::new(seg), dead)
                }
                _ => return Err(corrupt("segment kind")),
            };
            segs.push((id, change));
        }
        Ok(Delta {
            next_conv,
            next_seg,
            complete,
            counters,
            groups,
            files,
            convs,
            segs,
        })
    }

    /// A segment of the current view (a delta naming one this state lacks is of another
    /// lineage).
    fn segment(&self, id: u64) -> io::Result<Arc<Segment>> {
        self.view
            .segs
            .iter()
            .find(|s| s.seg.id == id)
            .map(|s| Arc::clone(&s.seg))
            .ok_or_else(|| corrupt("delta names a segment this state lacks"))
    }

    fn install_delta(&mut self, delta: Delta) -> io::Result<()> {
        let old = std::mem::take(&mut self.view);
        let mut view = IndexView::default();
        for (id, change) in delta.segs {
            let prior = old.segs.iter().find(|s| s.seg.id == id);
            let sv = match (change, prior) {
                (SegChange::Same, Some(p)) => p.clone(),
                (SegChange::Dead(dead), Some(p)) => {
                    for d in 0..p.seg.doc_count() as u32 {
                        if dead.contains(d) && !p.dead.contains(d) {
                            self.dups.touch(p.seg.doc(d).dup_key);
                        }
                    }
                    SegView {
                        seg: Arc::clone(&p.seg),
                        dead: Arc::new(dead),
                    }
                }
                (SegChange::New(seg, dead), _) => {
                    for &key in seg.keys() {
                        self.dups.touch(key);
                    }
                    SegView {
                        seg: Arc::new(*seg),
                        dead: Arc::new(dead),
                    }
                }
                (_, None) => {
                    self.view = old;
                    return Err(corrupt("delta names a segment this state lacks"));
                }
            };
            view.live_docs += sv.live_count() as u64;
            view.live_len += sv.seg.total_len().saturating_sub(sv.dead.len_sum);
            view.segs.push(sv);
        }
        for gone in old
            .segs
            .iter()
            .filter(|o| view.seg_index(o.seg.id).is_none())
        {
            for &key in gone.seg.keys() {
                self.dups.touch(key);
            }
        }
        let located = |book: &ConvBook| {
            book.locs().all(|(seg, doc)| {
                view.segs
                    .iter()
                    .any(|s| s.seg.id == seg && (doc as usize) < s.seg.doc_count())
            })
        };
        if !delta
            .convs
            .iter()
            .all(|(_, _, b)| b.as_ref().is_none_or(located))
        {
            self.view = old;
            return Err(corrupt("document location"));
        }
        self.view = view;
        let mut changes = Vec::with_capacity(delta.convs.len());
        for (conv, c, book) in delta.convs {
            match book {
                Some(b) => self.books.insert(conv, b),
                None => self.books.remove(&conv),
            };
            changes.push((conv, c));
        }
        self.catalog.replace_exact(changes);
        self.catalog.set_groups(delta.groups);
        for (path, entry) in delta.files {
            match entry {
                Some((src, saved, convs)) => {
                    let src_arc = Arc::new(src.clone());
                    let state = FileState::restored(src, saved);
                    self.files.insert(
                        path,
                        FileEntry {
                            state,
                            convs,
                            src: src_arc,
                        },
                    );
                }
                None => {
                    self.files.remove(&path);
                }
            }
        }
        self.next_conv = delta.next_conv;
        self.next_seg = delta.next_seg;
        self.complete = delta.complete;
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
        let s = &mut self.stats;
        (s.updates, s.files_reread, s.files_appended, s.files_removed) =
            (updates, reread, appended, removed);
        (s.files_added, s.files_touched, s.segments_merged) = (added, touched, merged);
        s.last_update_ms = f64::from_bits(ms);
        Ok(())
    }

    /// Whether the index was built here and still lives on this server's heap.
    pub fn built_here(&self) -> bool {
        self.gens.built_here()
    }

    /// After the first base file of an index built here: takes the index (segments, catalog,
    /// document locations) from that file instead, so its pages are shared with the servers
    /// that follow and this server's heap holds only what changes. The files' read state (with
    /// the parsers' progress) stays. Nothing changes when the file holds another generation
    /// (replaced meanwhile by a server with another store).
    pub fn adopt_base(&mut self, cache: &Cache) -> io::Result<bool> {
        self.gens.built = false;
        let mut mapped = Writer::new(self.roots.as_ref().clone(), Arc::clone(&self.shared));
        mapped.archive = self.archive.take();
        let loaded = mapped.load_cache(cache);
        self.archive = mapped.archive.take();
        let same = loaded?.is_some()
            && mapped.gens.based
            && (mapped.gens.chain, mapped.gens.seq) == (self.gens.chain, self.gens.seq)
            && mapped.view.live_docs == self.view.live_docs
            && mapped.catalog.iter().count() == self.catalog.iter().count();
        if !same {
            return Ok(false);
        }
        self.catalog = mapped.catalog;
        self.books = mapped.books;
        self.view = mapped.view;
        self.dups = mapped.dups;
        self.gens.mark(&self.catalog, &self.view);
        // the last reference to the built index goes with the snapshot replaced here
        self.publish_as_is(Instant::now());
        crate::util::huge::release_free_memory();
        Ok(true)
    }

    /// Becomes the writer of a followed state: files that changed while no server wrote are
    /// read now. Returns whether anything changed.
    pub fn lead(&mut self) -> bool {
        self.index_unfollowed();
        self.poll()
    }
}
