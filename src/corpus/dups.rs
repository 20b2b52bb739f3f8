//! Which duplicate-turn keys occur more than once among live documents. Turns copied into
//! several files (resume, fork) share a key; a search only has to collapse those, so the set of
//! keys held by two or more live documents is kept up to date as documents come and go, and
//! published with each snapshot.
use crate::index::SegView;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct DupTracker {
    counts: FxHashMap<u64, u32>,
    multi: Arc<FxHashSet<u64>>,
}

impl DupTracker {
    /// Counts the live documents of one more segment.
    pub fn add_segment(&mut self, sv: &SegView) {
        self.counts.reserve(sv.live_count());
        for (d, meta) in sv.seg.docs().iter().enumerate() {
            if !sv.dead.contains(d as u32) {
                self.add(meta.dup_key);
            }
        }
    }

    pub fn add(&mut self, key: u64) {
        if key == 0 {
            return;
        }
        let c = self.counts.entry(key).or_insert(0);
        *c += 1;
        if *c == 2 {
            Arc::make_mut(&mut self.multi).insert(key);
        }
    }

    pub fn remove(&mut self, key: u64) {
        if key == 0 {
            return;
        }
        if let Some(c) = self.counts.get_mut(&key) {
            *c -= 1;
            match *c {
                0 => {
                    self.counts.remove(&key);
                }
                1 => {
                    Arc::make_mut(&mut self.multi).remove(&key);
                }
                _ => {}
            }
        }
    }

    /// Keys held by two or more live documents.
    pub fn multi(&self) -> Arc<FxHashSet<u64>> {
        Arc::clone(&self.multi)
    }
}
