//! Which generation a writer's state is (chain, sequence number, whether a base of the chain
//! exists) and what changed since the last generation it published: files and document
//! locations noted as they change, the catalog and view of that generation to compare with.
use super::catalog::{Catalog, ConvId};
use crate::index::IndexView;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

/// Segment entry kinds in a delta.
pub(super) const SEG_SAME: u8 = 0;
pub(super) const SEG_DEAD: u8 = 1;
pub(super) const SEG_NEW: u8 = 2;

/// Which generation the writer's state is and what changed since the last one published.
pub(super) struct Gens {
    /// The lineage of states (random; see [`crate::cache::gens`]).
    pub(super) chain: u64,
    /// The last generation published (in a delta, or a base of this chain).
    pub(super) seq: u64,
    /// A base file of this chain exists, so deltas can be followed.
    pub(super) based: bool,
    /// The index was built here (not restored): it lives on this server's heap until
    /// [`crate::corpus::writer::Writer::adopt_base`] maps it from the base file written.
    pub(super) built: bool,
    /// Files read, added or dropped since the last generation.
    pub(super) files: BTreeSet<PathBuf>,
    /// Conversations whose document locations changed since the last generation.
    pub(super) books: BTreeSet<ConvId>,
    /// The catalog and view of the last generation.
    catalog: Catalog,
    view: IndexView,
}

impl Default for Gens {
    fn default() -> Self {
        Gens {
            chain: new_chain(),
            seq: 0,
            based: false,
            built: false,
            files: BTreeSet::new(),
            books: BTreeSet::new(),
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

impl Gens {
    /// The state is generation `seq` of `chain`, as a base file holds it.
    pub(super) fn restored(&mut self, chain: u64, seq: u64, catalog: &Catalog, view: &IndexView) {
        self.chain = chain;
        self.seq = seq;
        self.based = true;
        self.mark(catalog, view);
    }

    /// The state now is the published one: nothing changed since.
    pub(super) fn mark(&mut self, catalog: &Catalog, view: &IndexView) {
        self.files.clear();
        self.books.clear();
        self.catalog = catalog.clone();
        self.view = view.clone();
    }

    /// Starts a new lineage (nothing a follower holds can be continued from here).
    pub(super) fn restart(&mut self) {
        self.chain = new_chain();
        self.seq = 0;
        self.based = false;
    }

    /// Whether the index was built here and is not yet mapped from a base file.
    pub fn built_here(&self) -> bool {
        self.built
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
