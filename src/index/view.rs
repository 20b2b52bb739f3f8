//! A point-in-time view of the index: the live segments, which of their documents are dead
//! (replaced or deleted), and exact corpus statistics (live document count, total length,
//! per-term document frequency with dead documents subtracted).
use super::schema::FIELDS;
use super::segment::Segment;
use super::tokenizer::Tokenizer;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Dead documents of one segment and what they contributed to the statistics.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tombstones {
    pub(super) bits: Vec<u64>,
    pub count: u32,
    pub len_sum: u64,
    /// Summed context length of the dead documents.
    pub context_len_sum: u64,
    /// Document frequency held by dead documents, per segment term id.
    pub df: FxHashMap<u32, u32>,
}

impl Tombstones {
    /// Heap bytes held (approximate for the map).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.df.capacity() * 9 * 8 / 7
    }

    #[inline]
    pub(crate) fn contains(&self, doc: u32) -> bool {
        self.bits
            .get((doc >> 6) as usize)
            .is_some_and(|w| w & (1 << (doc & 63)) != 0)
    }
}

/// A segment as seen by one snapshot.
#[derive(Debug, Clone)]
pub(crate) struct SegView {
    pub seg: Arc<Segment>,
    pub dead: Arc<Tombstones>,
}

impl SegView {
    pub(crate) fn new(seg: Arc<Segment>) -> Self {
        Self {
            seg,
            dead: Arc::new(Tombstones::default()),
        }
    }

    pub(crate) fn live_count(&self) -> usize {
        self.seg.doc_count() - self.dead.count as usize
    }

    /// Live document frequency of a segment term.
    pub(crate) fn df(&self, term_id: u32) -> u32 {
        let dead = self.dead.df.get(&term_id).copied().unwrap_or(0);
        self.seg.postings(term_id).df - dead
    }
}

/// Segments plus exact statistics over their live documents.
#[derive(Debug, Clone, Default)]
pub(crate) struct IndexView {
    pub segs: Vec<SegView>,
    pub live_docs: u64,
    pub live_len: u64,
    /// Summed context length of the live documents.
    pub live_context_len: u64,
}

impl IndexView {
    #[cfg(test)]
    pub(crate) fn from_segments(segs: Vec<Arc<Segment>>) -> Self {
        let mut v = IndexView::default();
        for s in segs {
            v.add(s);
        }
        v
    }

    pub(crate) fn add(&mut self, seg: Arc<Segment>) {
        self.push(SegView::new(seg));
    }

    /// Adds a segment with its dead documents (restored), counting its live ones.
    pub(crate) fn push(&mut self, sv: SegView) {
        self.live_docs += sv.live_count() as u64;
        self.live_len += sv.seg.total_len().saturating_sub(sv.dead.len_sum);
        self.live_context_len +=
            (sv.seg.total_context_len()).saturating_sub(sv.dead.context_len_sum);
        self.segs.push(sv);
    }

    /// Removes a segment whose documents are all dead (or that was merged elsewhere).
    pub(crate) fn remove_segment(&mut self, seg_id: u64) {
        if let Some(i) = self.segs.iter().position(|s| s.seg.id == seg_id) {
            let s = self.segs.remove(i);
            self.live_docs -= s.live_count() as u64;
            self.live_len -= s.seg.total_len() - s.dead.len_sum;
            self.live_context_len -= s.seg.total_context_len() - s.dead.context_len_sum;
        }
    }

    pub(crate) fn seg_index(&self, seg_id: u64) -> Option<usize> {
        self.segs.iter().position(|s| s.seg.id == seg_id)
    }

    pub(crate) fn avg_len(&self) -> f32 {
        if self.live_docs == 0 {
            1.0
        } else {
            (self.live_len as f64 / self.live_docs as f64) as f32
        }
    }

    /// Average length of the live documents' context fields (1 when there are none).
    pub(crate) fn avg_context_len(&self) -> f32 {
        if self.live_docs == 0 || self.live_context_len == 0 {
            1.0
        } else {
            (self.live_context_len as f64 / self.live_docs as f64) as f32
        }
    }

    /// Live document frequency of `term` across all segments.
    pub(crate) fn df(&self, term: &str) -> u64 {
        self.segs
            .iter()
            .filter_map(|s| s.seg.term_id(term).map(|id| u64::from(s.df(id))))
            .sum()
    }

    /// Marks documents of segment `seg_id` dead, subtracting their statistics. Already-dead
    /// documents are ignored. Copy-on-write: snapshots holding the old view are unaffected.
    pub(crate) fn kill(&mut self, seg_id: u64, docs: &[u32], tokenizer: &mut Tokenizer) {
        let Some(i) = self.seg_index(seg_id) else {
            return;
        };
        let view = &mut self.segs[i];
        let seg = Arc::clone(&view.seg);
        let dead = Arc::make_mut(&mut view.dead);
        if dead.bits.len() < seg.doc_count().div_ceil(64) {
            dead.bits.resize(seg.doc_count().div_ceil(64), 0);
        }
        let mut seen = rustc_hash::FxHashSet::default();
        for &d in docs {
            if d as usize >= seg.doc_count() || dead.contains(d) {
                continue;
            }
            dead.bits[(d >> 6) as usize] |= 1 << (d & 63);
            dead.count += 1;
            let meta = seg.doc(d);
            dead.len_sum += u64::from(meta.len);
            dead.context_len_sum += u64::from(meta.context_len);
            self.live_docs -= 1;
            self.live_len -= u64::from(meta.len);
            self.live_context_len -= u64::from(meta.context_len);
            // Re-tokenize the stored text to find which terms the document held.
            seen.clear();
            let text = seg.text(d);
            for f in 0..FIELDS {
                tokenizer.for_each_term(text.field(f), |t| {
                    if let Some(id) = seg.term_id(t) {
                        if seen.insert(id) {
                            *dead.df.entry(id).or_insert(0) += 1;
                        }
                    }
                });
            }
        }
    }
}
