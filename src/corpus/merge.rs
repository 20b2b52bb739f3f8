//! Segment upkeep: every update adds a small segment, so segments of similar size are merged
//! (tiers by a factor of 4 in live documents) and segments that are mostly dead are rebuilt.
//! Merging copies live documents (metadata and text) into a new segment, so the work done per
//! document stays logarithmic in the number of updates.
use super::writer::{Batch, Writer};
use crate::index::NewDoc;

/// A tier with this many segments is merged into one.
const TIER_FANOUT: usize = 4;
/// Never keep more small segments than this; the smallest are merged first.
const MAX_SEGMENTS: usize = 12;
/// Segments with this many live documents (those of the first build) are left alone unless
/// mostly dead: merging them would redo work the size of the corpus.
const BIG_DOCS: usize = 1 << 16;

fn tier(live_docs: usize) -> u32 {
    let mut t = 0;
    let mut n = live_docs.max(1);
    while n >= TIER_FANOUT {
        n /= TIER_FANOUT;
        t += 1;
    }
    t
}

impl Writer {
    /// Merges segments until no tier is full and the segment count is bounded.
    pub(super) fn maintain_segments(&mut self) {
        loop {
            let mut by_tier: std::collections::BTreeMap<u32, Vec<u64>> = Default::default();
            let mut dead_heavy: Vec<u64> = Vec::new();
            let mut small: Vec<(usize, u64)> = Vec::new();
            for s in &self.view.segs {
                let live = s.live_count();
                if s.dead.count as usize > live && s.seg.doc_count() > 16 {
                    dead_heavy.push(s.seg.id);
                }
                if live < BIG_DOCS {
                    by_tier.entry(tier(live)).or_default().push(s.seg.id);
                    small.push((live, s.seg.id));
                }
            }
            let pick: Vec<u64> =
                if let Some(full) = by_tier.values().find(|ids| ids.len() >= TIER_FANOUT) {
                    full.clone()
                } else if small.len() > MAX_SEGMENTS {
                    small.sort_unstable();
                    small.iter().take(TIER_FANOUT).map(|&(_, id)| id).collect()
                } else if let Some(&id) = dead_heavy.first() {
                    vec![id]
                } else {
                    return;
                };
            self.merge(&pick);
        }
    }

    /// Copies the live documents of `ids` into one new segment and drops the old ones.
    fn merge(&mut self, ids: &[u64]) {
        let mut batch = Batch::default();
        for &id in ids {
            let Some(i) = self.view.seg_index(id) else {
                continue;
            };
            let view = self.view.segs[i].clone();
            for d in 0..view.seg.doc_count() as u32 {
                if view.dead.contains(d) {
                    continue;
                }
                let meta = view.seg.doc(d);
                let text = view.seg.text(d);
                batch.builder.add(&NewDoc {
                    conv: meta.conv,
                    turn: meta.turn,
                    timestamp: (meta.timestamp != i64::MIN).then_some(meta.timestamp),
                    dup_key: (meta.dup_key != 0).then_some(meta.dup_key),
                    fields: [text.user, text.assistant, text.tools],
                });
                batch.docs.push((meta.conv, meta.turn));
            }
        }
        for &id in ids {
            self.view.remove_segment(id);
        }
        self.stats.segments_merged += ids.len() as u64;
        if !batch.docs.is_empty() {
            let id = self.next_seg;
            self.next_seg += 1;
            let seg = batch.builder.finish(id);
            self.place_segment(seg, &batch.docs, false);
        }
    }
}
