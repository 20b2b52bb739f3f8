//! Which duplicate-turn keys occur more than once among live documents. Turns copied into
//! several files (resume, fork) share a key; a search only has to collapse those, so the set of
//! keys held by two or more live documents is kept up to date as documents come and go, and
//! published with each snapshot.
//!
//! A build counts every key as documents arrive. A restored index does not hold a count per
//! key (a map as large as the index's documents, private to each server): it finds the
//! repeated keys by merging the segments' sorted key columns (which are shared views of the
//! cache file), and recounts the keys that documents added or removed since then, from the
//! index, when a snapshot is published.
use crate::index::{IndexView, SegView};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

#[derive(Debug)]
pub(crate) struct DupTracker {
    /// Live documents per key, when counted as they come (a build); `None` after a restore.
    counts: Option<FxHashMap<u64, u32>>,
    /// Keys added or removed since the last [`Self::multi`], when not counted.
    dirty: Vec<u64>,
    multi: Arc<FxHashSet<u64>>,
}

impl Default for DupTracker {
    fn default() -> Self {
        DupTracker {
            counts: Some(FxHashMap::default()),
            dirty: Vec::new(),
            multi: Arc::default(),
        }
    }
}

impl DupTracker {
    /// The tracker of a restored index: its repeated keys, and no counts.
    pub(crate) fn restored(view: &IndexView) -> Self {
        DupTracker {
            counts: None,
            dirty: Vec::new(),
            multi: Arc::new(repeated_keys(view)),
        }
    }

    pub(crate) fn add(&mut self, key: u64) {
        if key == 0 {
            return;
        }
        let Some(counts) = &mut self.counts else {
            self.dirty.push(key);
            return;
        };
        let c = counts.entry(key).or_insert(0);
        *c += 1;
        if *c == 2 {
            Arc::make_mut(&mut self.multi).insert(key);
        }
    }

    /// Notes that documents with `key` came or went without saying which (a follower applying
    /// another server's generation): the key is counted again from the index when published.
    pub(crate) fn touch(&mut self, key: u64) {
        if key != 0 {
            // counting stops here: from now on repeated keys are found from the index
            self.counts = None;
            self.dirty.push(key);
        }
    }

    pub(crate) fn remove(&mut self, key: u64) {
        if key == 0 {
            return;
        }
        let Some(counts) = &mut self.counts else {
            self.dirty.push(key);
            return;
        };
        if let Some(c) = counts.get_mut(&key) {
            *c -= 1;
            match *c {
                0 => {
                    counts.remove(&key);
                }
                1 => {
                    Arc::make_mut(&mut self.multi).remove(&key);
                }
                _ => {}
            }
        }
    }

    /// Keys held by two or more live documents of `view` (which must hold every document
    /// added and none removed so far).
    pub(crate) fn multi(&mut self, view: &IndexView) -> Arc<FxHashSet<u64>> {
        if !self.dirty.is_empty() {
            let mut dirty = std::mem::take(&mut self.dirty);
            let total: usize = view.segs.iter().map(|s| s.seg.dup_keys().len()).sum();
            if dirty.len() > total / 16 {
                self.multi = Arc::new(repeated_keys(view));
            } else {
                dirty.sort_unstable();
                dirty.dedup();
                for key in dirty {
                    let repeated = live_with(view, key) >= 2;
                    if repeated != self.multi.contains(&key) {
                        let multi = Arc::make_mut(&mut self.multi);
                        if repeated {
                            multi.insert(key);
                        } else {
                            multi.remove(&key);
                        }
                    }
                }
            }
        }
        Arc::clone(&self.multi)
    }

    /// Heap bytes held (approximate: hash tables at their load).
    pub(crate) fn heap_bytes(&self) -> usize {
        let table = |cap: usize, item: usize| cap * (item + 1) * 8 / 7;
        self.counts.as_ref().map_or(0, |c| table(c.capacity(), 12))
            + table(self.multi.capacity(), 8)
            + self.dirty.capacity() * 8
    }
}

/// Live documents of `view` whose key is `key`, counted up to 2.
fn live_with(view: &IndexView, key: u64) -> u32 {
    let mut n = 0;
    for sv in &view.segs {
        for d in sv.seg.docs_with_dup(key) {
            if !sv.dead.contains(d) {
                n += 1;
                if n >= 2 {
                    return n;
                }
            }
        }
    }
    n
}

/// Keys held by two or more live documents: a merge of the segments' sorted key columns.
fn repeated_keys(view: &IndexView) -> FxHashSet<u64> {
    let live = |sv: &SegView, i: usize| !sv.dead.contains(sv.seg.dup_docs()[i]);
    let mut heads: BinaryHeap<Reverse<(u64, usize, usize)>> = view
        .segs
        .iter()
        .enumerate()
        .filter_map(|(s, sv)| sv.seg.dup_keys().first().map(|&k| Reverse((k, s, 0))))
        .collect();
    let mut out = FxHashSet::default();
    let (mut key, mut seen) = (0u64, 0u32);
    while let Some(Reverse((k, s, i))) = heads.pop() {
        if k != key {
            (key, seen) = (k, 0);
        }
        let sv = &view.segs[s];
        let keys = sv.seg.dup_keys();
        // the run of this key within the segment
        let mut j = i;
        while j < keys.len() && keys[j] == k {
            if live(sv, j) {
                seen += 1;
            }
            j += 1;
        }
        if seen >= 2 {
            out.insert(k);
        }
        if let Some(&next) = keys.get(j) {
            heads.push(Reverse((next, s, j)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{NewDoc, SegmentBuilder, Tokenizer};

    fn segment(id: u64, keys: &[u64]) -> Arc<crate::index::Segment> {
        let mut b = SegmentBuilder::new();
        for (i, &k) in keys.iter().enumerate() {
            b.add(&NewDoc {
                conv: i as u32,
                turn: 0,
                timestamp: None,
                dup_key: Some(k),
                fields: ["text", "", "", ""],
            });
        }
        Arc::new(b.finish(id))
    }

    /// A restored tracker (merge, then recounts) agrees with one that counted everything.
    #[test]
    fn a_restored_tracker_agrees_with_a_counting_one() {
        let mut view = IndexView::default();
        view.add(segment(1, &[5, 7, 9, 5, 0, 11]));
        view.add(segment(2, &[7, 12, 13]));
        view.add(segment(3, &[13, 14]));
        let mut counting = DupTracker::default();
        for sv in &view.segs {
            for &k in sv.seg.keys() {
                counting.add(k);
            }
        }
        let mut restored = DupTracker::restored(&view);
        let sorted = |s: Arc<FxHashSet<u64>>| {
            let mut v: Vec<u64> = s.iter().copied().collect();
            v.sort_unstable();
            v
        };
        assert_eq!(sorted(restored.multi(&view)), [5, 7, 13]);
        assert_eq!(sorted(counting.multi(&view)), [5, 7, 13]);
        // kill one copy of 7 and one of 13, add a segment with 9 and 14
        let mut tok = Tokenizer::default();
        for t in [&mut counting, &mut restored] {
            t.remove(7);
            t.remove(13);
            t.add(9);
            t.add(14);
        }
        let s2 = view.segs[1].seg.id;
        view.kill(s2, &[0, 2], &mut tok);
        view.add(segment(4, &[9, 14]));
        assert_eq!(sorted(restored.multi(&view)), [5, 9, 14]);
        assert_eq!(sorted(counting.multi(&view)), [5, 9, 14]);
        assert_eq!(sorted(DupTracker::restored(&view).multi(&view)), [5, 9, 14]);
    }
}
