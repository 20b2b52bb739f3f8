//! Segment merging: the policy that picks which segments to merge, and the copy of their live
//! documents into one new segment. Every update adds a small segment, so segments of similar
//! size are merged (tiers by a factor of [`TIER_FANOUT`] in live documents) and segments that
//! are mostly dead are rebuilt. Merging copies live documents (metadata and text) into a new
//! segment, so the work done per document stays logarithmic in the number of updates.
use super::builder::SegmentBuilder;
use super::schema::NewDoc;
use super::view::IndexView;

/// A tier with this many segments is merged into one.
const TIER_FANOUT: usize = 4;
/// Never keep more small segments than this; the smallest are merged first.
const MAX_SEGMENTS: usize = 12;
/// Segments with this many live documents (those of the first build) are left alone unless
/// mostly dead: merging them would redo work the size of the corpus.
const BIG_DOCS: usize = 1 << 16;
/// A segment must hold more documents than this to be rebuilt for being mostly dead.
const DEAD_HEAVY_MIN_DOCS: usize = 16;
/// Never keep more segments under [`BIG_DOCS`], base ones included, than this; the smallest
/// are merged first (a base is the first build's output, or a restored state: see [`pick`]).
const MAX_WITH_BASE: usize = 32;

/// The tier of a segment holding `live_docs` live documents: `log4` of it, rounded down.
fn tier(live_docs: usize) -> u32 {
    let mut t = 0;
    let mut n = live_docs.max(1);
    while n >= TIER_FANOUT {
        n /= TIER_FANOUT;
        t += 1;
    }
    t
}

/// The segments of `view` to merge next, by id (`None`: the segments are in shape). Segments
/// with ids below `base_below` are the base (the first build's, or those of a restored state):
/// they are left out of tiers, so that the first live change after a build or a restart is not
/// held up by merging most of the index. In order of preference: a full tier of small segments
/// outside the base; the [`TIER_FANOUT`] smallest of those when there are more than
/// [`MAX_SEGMENTS`]; the [`TIER_FANOUT`] smallest of all when more than [`MAX_WITH_BASE`]
/// segments are under [`BIG_DOCS`]; a segment with more dead than live documents.
pub(crate) fn pick(view: &IndexView, base_below: u64) -> Option<Vec<u64>> {
    let mut by_tier: std::collections::BTreeMap<u32, Vec<u64>> = Default::default();
    let mut dead_heavy: Vec<u64> = Vec::new();
    let mut small: Vec<(usize, u64)> = Vec::new();
    let mut with_base: Vec<(usize, u64)> = Vec::new();
    for s in &view.segs {
        let live = s.live_count();
        if s.dead.count as usize > live && s.seg.doc_count() > DEAD_HEAVY_MIN_DOCS {
            dead_heavy.push(s.seg.id);
        }
        if live >= BIG_DOCS {
            continue;
        }
        with_base.push((live, s.seg.id));
        if s.seg.id >= base_below {
            by_tier.entry(tier(live)).or_default().push(s.seg.id);
            small.push((live, s.seg.id));
        }
    }
    let smallest = |mut of: Vec<(usize, u64)>| {
        of.sort_unstable();
        Some(of.iter().take(TIER_FANOUT).map(|&(_, id)| id).collect())
    };
    if let Some(full) = by_tier.values().find(|ids| ids.len() >= TIER_FANOUT) {
        Some(full.clone())
    } else if small.len() > MAX_SEGMENTS {
        smallest(small)
    } else if with_base.len() > MAX_WITH_BASE {
        smallest(with_base)
    } else {
        dead_heavy.first().map(|&id| vec![id])
    }
}

/// Copies the live documents of the segments `ids` of `view` into `into`, in segment order;
/// returns each copied document's (conversation, turn), in the order added.
pub(crate) fn copy_live(
    view: &IndexView,
    ids: &[u64],
    into: &mut SegmentBuilder,
) -> Vec<(u32, u32)> {
    let mut docs = Vec::new();
    for &id in ids {
        let Some(i) = view.seg_index(id) else {
            continue;
        };
        let sv = &view.segs[i];
        for d in 0..sv.seg.doc_count() as u32 {
            if sv.dead.contains(d) {
                continue;
            }
            let meta = sv.seg.doc(d);
            let text = sv.seg.text(d);
            into.add(&NewDoc {
                conv: meta.conv,
                turn: meta.turn,
                timestamp: (meta.timestamp != i64::MIN).then_some(meta.timestamp),
                dup_key: (meta.dup_key != 0).then_some(meta.dup_key),
                fields: [text.user, text.assistant, text.tools, text.context],
            });
            docs.push((meta.conv, meta.turn));
        }
    }
    docs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Tokenizer;
    use std::sync::Arc;

    /// A view of segments holding `sizes[i]` documents each (ids from 1).
    fn view(sizes: &[usize]) -> IndexView {
        let mut v = IndexView::default();
        for (i, &n) in sizes.iter().enumerate() {
            let mut b = SegmentBuilder::new();
            for d in 0..n {
                b.add(&NewDoc {
                    conv: d as u32,
                    turn: i as u32,
                    timestamp: Some(d as i64),
                    dup_key: None,
                    fields: ["user words", "assistant words", "", ""],
                });
            }
            v.add(Arc::new(b.finish(i as u64 + 1)));
        }
        v
    }

    /// The policy with no base.
    fn pick_all(v: &IndexView) -> Option<Vec<u64>> {
        pick(v, 0)
    }

    #[test]
    fn the_base_is_left_out_of_tiers_until_there_are_too_many_segments() {
        // four of a tier, three of them the base (ids 1..=3): not a full tier
        let v = view(&[100, 100, 100, 100]);
        assert_eq!(pick(&v, 4), None);
        assert_eq!(pick(&v, 0), Some(vec![1, 2, 3, 4]));
        // live changes' segments still merge among themselves
        let v = view(&[100, 100, 1, 1, 1, 1]);
        assert_eq!(pick(&v, 3), Some(vec![3, 4, 5, 6]));
        // past the bound with the base, the smallest of all go, base ones included
        let sizes: Vec<usize> = (0..MAX_WITH_BASE + 1).map(|i| 50 + 7 * i).collect();
        assert_eq!(pick(&view(&sizes), u64::MAX), Some(vec![1, 2, 3, 4]));
        assert_eq!(pick(&view(&sizes[1..]), u64::MAX), None);
    }

    #[test]
    fn tiers_grow_by_a_factor_of_four() {
        assert_eq!(tier(0), 0);
        assert_eq!(tier(3), 0);
        assert_eq!(tier(4), 1);
        assert_eq!(tier(15), 1);
        assert_eq!(tier(16), 2);
    }

    #[test]
    fn a_full_tier_is_merged_and_three_are_left_alone() {
        assert_eq!(pick_all(&view(&[1, 2, 3])), None);
        assert_eq!(pick_all(&view(&[1, 2, 3, 1])), Some(vec![1, 2, 3, 4]));
        // one of each tier: nothing to do
        assert_eq!(pick_all(&view(&[1, 5, 20, 70])), None);
    }

    #[test]
    fn too_many_small_segments_merge_the_smallest() {
        // thirteen segments, no tier holding four: the four smallest go
        let sizes = [1, 1, 1, 4, 4, 4, 16, 16, 16, 64, 64, 64, 256];
        let picked = pick_all(&view(&sizes)).expect("over the bound");
        assert_eq!(picked, vec![1, 2, 3, 4]);
    }

    #[test]
    fn a_mostly_dead_segment_is_rebuilt() {
        let mut v = view(&[40]);
        assert_eq!(pick_all(&v), None);
        let dead: Vec<u32> = (0..21).collect();
        v.kill(1, &dead, &mut Tokenizer::new());
        assert_eq!(pick_all(&v), Some(vec![1]));
    }

    #[test]
    fn copying_keeps_only_live_documents_with_their_metadata() {
        let mut v = view(&[3, 2]);
        v.kill(1, &[1], &mut Tokenizer::new());
        let mut b = SegmentBuilder::new();
        let docs = copy_live(&v, &[1, 2, 99], &mut b);
        assert_eq!(docs, [(0, 0), (2, 0), (0, 1), (1, 1)]);
        let seg = b.finish(7);
        assert_eq!(seg.doc_count(), 4);
        assert_eq!(seg.doc(1).conv, 2);
        assert_eq!(seg.doc(1).timestamp, 2);
        assert_eq!(seg.text(3).user, "user words");
    }
}
