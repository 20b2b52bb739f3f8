//! Which generation a writer's state is on disk (chain, sequence number, whether a base of the
//! chain exists, whether the index was built here) and the catalog and view of the last
//! generation published, to find what changed since (the files and document locations that
//! changed are noted by their owners, [`super::files`] and [`super::doc_index`]).
use super::catalog::Catalog;
use crate::index::IndexView;
use std::sync::Arc;

/// Segment entry kinds in a delta.
pub(super) const SEG_SAME: u8 = 0;
pub(super) const SEG_DEAD: u8 = 1;
pub(super) const SEG_NEW: u8 = 2;

/// Which generation the writer's state is, and the last one published.
pub(super) struct Generation {
    /// The lineage of states (random; see [`crate::cache::sharing`]).
    pub(super) chain: u64,
    /// The last generation published (in a delta, or a base of this chain).
    pub(super) seq: u64,
    /// A base file of this chain exists, so deltas can be followed.
    pub(super) based: bool,
    /// The index was built here (not restored): it lives on this server's heap until
    /// [`crate::corpus::writer::Writer::adopt_base`] maps it from the base file written.
    pub(super) built: bool,
    /// The catalog and view of the last generation.
    catalog: Catalog,
    view: IndexView,
}

impl Default for Generation {
    fn default() -> Self {
        Generation {
            chain: new_chain(),
            seq: 0,
            based: false,
            built: false,
            catalog: Catalog::default(),
            view: IndexView::default(),
        }
    }
}

/// A chain id no other writer picks: the clock, the process and a counter, hashed.
fn new_chain() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h = xxhash_rust::xxh3::Xxh3Default::new();
    h.update(&nanos.to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    h.update(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.digest()
}

impl Generation {
    /// The state is generation `seq` of `chain`, as a base file holds it.
    pub(super) fn restored(&mut self, chain: u64, seq: u64, catalog: &Catalog, view: &IndexView) {
        self.chain = chain;
        self.seq = seq;
        self.based = true;
        self.mark(catalog, view);
    }

    /// The state now is the published one: nothing changed since.
    pub(super) fn mark(&mut self, catalog: &Catalog, view: &IndexView) {
        self.catalog = catalog.clone();
        self.view = view.clone();
    }

    /// Starts a new lineage (nothing a follower holds can be continued from here).
    pub(super) fn restart(&mut self) {
        self.chain = new_chain();
        self.seq = 0;
        self.based = false;
    }

    /// The catalog of the last generation.
    pub(super) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Segments of the last generation.
    pub(super) fn seg_count(&self) -> usize {
        self.view.segs.len()
    }

    /// Whether segment `i` of `view` is new, or has other tombstones, since the last
    /// generation.
    pub(super) fn seg_kind(&self, view: &IndexView, i: usize) -> u8 {
        let sv = &view.segs[i];
        match self.view.segs.iter().find(|o| o.seg.id == sv.seg.id) {
            None => SEG_NEW,
            Some(o) if !Arc::ptr_eq(&o.dead, &sv.dead) => SEG_DEAD,
            Some(_) => SEG_SAME,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{NewDoc, SegmentBuilder, Tokenizer};

    fn segment(id: u64) -> Arc<crate::index::Segment> {
        let mut b = SegmentBuilder::new();
        for turn in 0..2 {
            b.add(&NewDoc {
                conv: 0,
                turn,
                timestamp: None,
                dup_key: None,
                fields: ["text", "", "", ""],
            });
        }
        Arc::new(b.finish(id))
    }

    #[test]
    fn segments_are_compared_with_the_last_generation_marked() {
        let mut view = IndexView::default();
        view.add(segment(1));
        view.add(segment(2));
        let mut g = Generation::default();
        g.restored(7, 3, &Catalog::default(), &view);
        assert_eq!((g.chain, g.seq, g.based), (7, 3, true));
        assert_eq!(g.seg_count(), 2);
        view.kill(2, &[0], &mut Tokenizer::new());
        view.add(segment(3));
        let kinds: Vec<u8> = (0..3).map(|i| g.seg_kind(&view, i)).collect();
        assert_eq!(kinds, [SEG_SAME, SEG_DEAD, SEG_NEW]);
        g.mark(&Catalog::default(), &view);
        assert!((0..3).all(|i| g.seg_kind(&view, i) == SEG_SAME));
    }

    #[test]
    fn a_restart_is_a_new_lineage() {
        let mut g = Generation::default();
        g.restored(7, 3, &Catalog::default(), &IndexView::default());
        g.restart();
        assert_ne!(g.chain, 7);
        assert_eq!((g.seq, g.based), (0, false));
        assert_ne!(Generation::default().chain, Generation::default().chain);
    }
}
