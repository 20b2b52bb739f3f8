//! What a `prefix*` stands for: the view's most frequent terms starting so, ranked by live
//! document frequency summed over every segment (ties: the smaller term first). Picked over the
//! whole view, not per segment, so that it does not depend on where the index happens to be cut
//! into segments (which differs between two builds of the same transcripts).
//!
//! Exact without summing every matching term: each segment offers its most frequent matching
//! terms; a term no segment offered has, in each segment, a frequency of at most that segment's
//! least offer, so at most their sum overall. When the `k`-th best offered term is more frequent
//! than that sum, the offers hold the answer; else every segment's matching terms are merged.
use super::view::IndexView;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

/// How many terms each segment offers, per expansion term wanted.
const OFFER_FACTOR: usize = 4;

/// The (at most) `k` most frequent terms of `view` that start with `prefix`, with their live
/// document frequency, in byte order. Terms no live document holds are left out.
pub(super) fn expand(view: &IndexView, prefix: &str, k: usize) -> Vec<(String, u64)> {
    let ranges: Vec<Range<u32>> = view
        .segs
        .iter()
        .map(|sv| sv.seg.prefix_range(prefix))
        .collect();
    let best = from_offers(view, &ranges, k, k.saturating_mul(OFFER_FACTOR))
        .unwrap_or_else(|| merged(view, &ranges, k));
    let mut out: Vec<(String, u64)> = best
        .into_iter()
        .map(|(df, t)| (String::from_utf8_lossy(t).into_owned(), df))
        .collect();
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Ranking order: more frequent first, then the smaller term.
fn better(a: &(u64, &[u8]), b: &(u64, &[u8])) -> std::cmp::Ordering {
    b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1))
}

/// The best `k` among each segment's `depth` most frequent matching terms, when they are surely
/// the best `k` of all; `None` when a term not offered might still rank.
fn from_offers<'v>(
    view: &'v IndexView,
    ranges: &[Range<u32>],
    k: usize,
    depth: usize,
) -> Option<Vec<(u64, &'v [u8])>> {
    let mut offers: Vec<&[u8]> = Vec::new();
    // the most frequent a term no segment offered can be
    let mut bound = 0u64;
    let mut ids: Vec<u32> = Vec::new();
    for (sv, r) in view.segs.iter().zip(ranges) {
        ids.clear();
        ids.extend(r.clone().filter(|&id| sv.df(id) > 0));
        if ids.len() > depth && depth > 0 {
            // which of several equally frequent terms are offered is arbitrary: the bound
            // counts the ones left out
            ids.select_nth_unstable_by_key(depth - 1, |&id| Reverse(sv.df(id)));
            bound += u64::from(sv.df(ids[depth - 1]));
            ids.truncate(depth);
        }
        offers.extend(ids.iter().map(|&id| sv.seg.term(id as usize)));
    }
    offers.sort_unstable();
    offers.dedup();
    let mut ranked: Vec<(u64, &[u8])> = offers
        .into_iter()
        .map(|t| (view_df(view, ranges, t), t))
        .collect();
    ranked.sort_unstable_by(better);
    ranked.truncate(k);
    let sure = bound == 0 || ranked.len() == k && ranked.last().is_some_and(|l| l.0 > bound);
    sure.then_some(ranked)
}

/// Live document frequency of `term` over the view, looked up only in each segment's range.
fn view_df(view: &IndexView, ranges: &[Range<u32>], term: &[u8]) -> u64 {
    view.segs
        .iter()
        .zip(ranges)
        .filter_map(|(sv, r)| sv.seg.term_id_in(r.clone(), term).map(|id| sv.df(id)))
        .map(u64::from)
        .sum()
}

/// The best `k` of all matching terms: every segment's range merged in term order (each is
/// sorted), frequencies of equal terms summed.
fn merged<'v>(view: &'v IndexView, ranges: &[Range<u32>], k: usize) -> Vec<(u64, &'v [u8])> {
    let term = |s: usize, id: u32| view.segs[s].seg.term(id as usize);
    // the next term of each segment, smallest first
    let mut heads: BinaryHeap<Reverse<(&[u8], usize, u32)>> = ranges
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .map(|(s, r)| Reverse((term(s, r.start), s, r.start)))
        .collect();
    // the best k so far, the worst on top
    let mut best: BinaryHeap<(Reverse<u64>, &[u8])> = BinaryHeap::new();
    while let Some(Reverse((t, _, _))) = heads.peek().copied() {
        let mut df = 0u64;
        while let Some(Reverse((u, s, id))) = heads.peek().copied() {
            if u != t {
                break;
            }
            heads.pop();
            df += u64::from(view.segs[s].df(id));
            if id + 1 < ranges[s].end {
                heads.push(Reverse((term(s, id + 1), s, id + 1)));
            }
        }
        if df > 0 {
            best.push((Reverse(df), t));
            if best.len() > k {
                best.pop();
            }
        }
    }
    let mut out: Vec<(u64, &[u8])> = best.into_iter().map(|(Reverse(df), t)| (df, t)).collect();
    out.sort_unstable_by(better);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SegmentBuilder;
    use crate::index::schema::NewDoc;
    use proptest::prelude::*;
    use std::sync::Arc;

    /// An index of `docs`, cut into segments after the documents numbered in `cuts`.
    fn view(docs: &[String], cuts: &[usize]) -> IndexView {
        let mut segs = Vec::new();
        let mut b = SegmentBuilder::new();
        for (i, text) in docs.iter().enumerate() {
            b.add(&NewDoc {
                conv: i as u32,
                turn: 0,
                timestamp: None,
                dup_key: None,
                fields: [text, "", "", ""],
            });
            if cuts.contains(&i) && b.doc_count() > 0 {
                let full = std::mem::take(&mut b);
                segs.push(Arc::new(full.finish(segs.len() as u64)));
            }
        }
        if b.doc_count() > 0 {
            segs.push(Arc::new(b.finish(segs.len() as u64)));
        }
        IndexView::from_segments(segs)
    }

    /// Every matching term of `docs` counted directly, the best `k` in byte order.
    fn by_counting(docs: &[String], prefix: &str, k: usize) -> Vec<(String, u64)> {
        let mut df: std::collections::BTreeMap<&str, u64> = Default::default();
        for d in docs {
            let mut words: Vec<&str> = d.split(' ').filter(|w| w.starts_with(prefix)).collect();
            words.sort_unstable();
            words.dedup();
            for w in words {
                *df.entry(w).or_default() += 1;
            }
        }
        let mut all: Vec<(u64, &[u8])> = df.iter().map(|(t, &n)| (n, t.as_bytes())).collect();
        all.sort_unstable_by(better);
        all.truncate(k);
        let mut out: Vec<(String, u64)> = all
            .into_iter()
            .map(|(n, t)| (String::from_utf8_lossy(t).into_owned(), n))
            .collect();
        out.sort_unstable();
        out
    }

    /// A word of letters only (digits would make the tokenizer add parts): `n` in base 26.
    fn letters(mut n: usize) -> String {
        let mut s = String::new();
        loop {
            s.push(char::from(b'a' + (n % 26) as u8));
            n /= 26;
            if n == 0 {
                return s;
            }
        }
    }

    /// Documents of 40 words, half starting `ab`, half `ac`: word `w` is in every document
    /// numbered a multiple of `w % 13 + 1` (so frequencies differ, and some tie).
    fn ladder(n: usize) -> Vec<String> {
        (0..n)
            .map(|d| {
                (0..40)
                    .filter(|w| d % (w % 13 + 1) == 0)
                    .map(|w| format!("{}{}", if w % 2 == 0 { "ab" } else { "ac" }, letters(w)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn the_expansion_is_the_same_however_the_index_is_cut() {
        let docs = ladder(300);
        let whole = expand(&view(&docs, &[]), "ab", 5);
        assert_eq!(whole, by_counting(&docs, "ab", 5));
        for cuts in [
            vec![0],
            vec![10, 150],
            (0..300).step_by(7).collect::<Vec<_>>(),
        ] {
            assert_eq!(
                expand(&view(&docs, &cuts), "ab", 5),
                whole,
                "cut after {cuts:?}"
            );
        }
        assert!(expand(&view(&docs, &[]), "zz", 5).is_empty());
    }

    #[test]
    fn the_offers_are_used_only_when_they_surely_hold_the_answer() {
        // many equally frequent terms: the offers cannot settle ties, the merge must
        let docs: Vec<String> = (0..200)
            .map(|d| format!("ab{} ab{}", letters(d), letters(d + 1)))
            .collect();
        let v = view(&docs, &[49, 99, 149]);
        let ranges: Vec<_> = v.segs.iter().map(|s| s.seg.prefix_range("ab")).collect();
        assert!(from_offers(&v, &ranges, 3, 4).is_none());
        assert_eq!(expand(&v, "ab", 3), by_counting(&docs, "ab", 3));
        // one clearly most frequent term: the offers settle it
        let docs: Vec<String> = (0..200).map(|d| format!("ab ab{}", letters(d))).collect();
        let v = view(&docs, &[49, 99, 149]);
        let ranges: Vec<_> = v.segs.iter().map(|s| s.seg.prefix_range("ab")).collect();
        let offered = from_offers(&v, &ranges, 1, 4).expect("settled by the offers");
        assert_eq!(offered, vec![(200, &b"ab"[..])]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever the words and the cuts, the expansion is what counting every word gives.
        #[test]
        fn the_expansion_matches_counting(
            docs in prop::collection::vec(
                prop::collection::vec(prop::sample::select(vec!["ab", "abc", "abd", "abcd", "ax", "b", "abe", "abf", "abg", "abz"]), 1..6)
                    .prop_map(|w| w.join(" ")),
                1..80),
            cuts in prop::collection::vec(0usize..80, 0..6),
            k in 1usize..5,
        ) {
            let want = by_counting(&docs, "ab", k);
            prop_assert_eq!(expand(&view(&docs, &cuts), "ab", k), want);
        }
    }
}
