//! Query evaluation: document-at-a-time over the query terms' postings, keeping the best `k`
//! in a heap. On large segments, relevance-ordered searches prune with MaxScore and block-max
//! bounds: terms whose combined upper bound cannot beat the current k-th score only score
//! documents found through the other terms, and blocks of postings whose largest impact cannot
//! make a document rank are skipped undecoded. Pruning never changes the results; it only makes
//! the match count a lower bound.
use super::blockmax::BlockCursor;
use super::scoring::{
    Bm25, Hit, MAX_PREFIX_EXPANSION, Plan, WHOLE_FORM_WEIGHT, idf, phrases_ok, quantize,
};
use super::segment::{DocMeta, FIELDS, Segment};
use super::view::IndexView;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

/// Splits the segments of `view` into two halves of about equal size (for two threads).
pub fn halves(view: &IndexView) -> [Vec<usize>; 2] {
    let mut order: Vec<usize> = (0..view.segs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(view.segs[i].seg.doc_count()));
    let mut out = [Vec::new(), Vec::new()];
    let mut size = [0usize; 2];
    for i in order {
        let side = usize::from(size[1] < size[0]);
        size[side] += view.segs[i].seg.doc_count();
        out[side].push(i);
    }
    out
}

/// Segments with fewer documents are evaluated exhaustively (exact counts). Low enough that
/// a 300 MB corpus (a few segments of ~2.5k turns) prunes: 4 common terms p50 0.45 -> 0.26 ms.
pub const PRUNE_MIN_DOCS: usize = 1024;

/// How pruning is allowed for one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pruning {
    /// Relevance order (rounded score, then a key): bounds on scores may prune.
    ByScore,
    /// Any other order: every match is visited.
    Off,
}

/// The outcome of an evaluation.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// Accepted matches; a lower bound when `exact` is false.
    pub total: usize,
    pub exact: bool,
    pub hits: Vec<Hit>,
    /// True when the plan's stop condition ended the evaluation early.
    pub stopped: bool,
}

/// The best `k` hits seen so far: a heap whose root is the worst of them.
struct TopK<'c, C: Fn(&Hit, &Hit) -> Ordering> {
    k: usize,
    heap: Vec<Hit>,
    cmp: &'c C,
    /// The k-th best score found by another evaluation over other segments of the same view
    /// (f32 bits; scores are positive, so bits order like values): a document below it cannot
    /// be among the best `k` of all segments either.
    shared: Option<&'c AtomicU32>,
}

impl<'c, C: Fn(&Hit, &Hit) -> Ordering> TopK<'c, C> {
    fn worse(&self, a: usize, b: usize) -> bool {
        (self.cmp)(&self.heap[a], &self.heap[b]) == Ordering::Greater
    }

    fn push(&mut self, hit: Hit) {
        if self.k == 0 {
            return;
        }
        if self.heap.len() < self.k {
            self.heap.push(hit);
            let mut i = self.heap.len() - 1;
            while i > 0 && self.worse(i, (i - 1) / 2) {
                self.heap.swap(i, (i - 1) / 2);
                i = (i - 1) / 2;
            }
            return;
        }
        if (self.cmp)(&hit, &self.heap[0]) != Ordering::Less {
            return;
        }
        self.heap[0] = hit;
        let mut i = 0;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < self.heap.len() && self.worse(l, m) {
                m = l;
            }
            if r < self.heap.len() && self.worse(r, m) {
                m = r;
            }
            if m == i {
                break;
            }
            self.heap.swap(i, m);
            i = m;
        }
    }

    /// The worst kept hit, once `k` are kept.
    fn floor(&self) -> Option<&Hit> {
        (self.heap.len() == self.k && self.k > 0).then(|| &self.heap[0])
    }

    /// A score a document must exceed to be worth scoring: the k-th score, less a margin so
    /// that rounding to 4 decimals and float error never prune a document that could tie.
    fn threshold(&self) -> f32 {
        let own = self.floor().map_or(f32::NEG_INFINITY, |f| f.score);
        let other = self.shared.map_or(f32::NEG_INFINITY, |s| {
            f32::from_bits(s.load(AtomicOrdering::Relaxed))
        });
        let best = own.max(other);
        if best == f32::NEG_INFINITY {
            best
        } else {
            best - 2e-4 - best.abs() * 1e-5
        }
    }

    /// Publishes this evaluation's k-th best score to the other one.
    fn publish(&self) {
        if let (Some(shared), Some(f)) = (self.shared, self.floor()) {
            if f.score > 0.0 {
                shared.fetch_max(f.score.to_bits(), AtomicOrdering::Relaxed);
            }
        }
    }
}

/// A query term's cursor in one segment.
struct TermCursor<'a> {
    cursor: BlockCursor<'a>,
    /// Position in the canonical summation order (plan order, then expansions by term), so a
    /// document's score does not depend on how cursors were sorted or segments cut.
    slot: usize,
    /// weight × idf × (k1 + 1): the contribution is `scale * tfw / (tfw + norm)`.
    scale: f32,
    group: u16,
    /// Upper bound of the contribution anywhere in this list.
    ub: f32,
}

/// Evaluates `plan` over the segments `scan` of `view` (statistics always come from the whole
/// view). `accept` sees each matching live document (and the fields it matched in) and decides
/// whether it counts. A document that cannot enter the best `k` and for which
/// `surely(segment, doc)` holds (no filter could reject it) is counted without calling
/// `accept`. Returns the accepted matches' count and the best `k` in `rank` order.
#[allow(clippy::too_many_arguments)]
pub fn evaluate(
    view: &IndexView,
    scan: &[usize],
    plan: &Plan,
    params: &Bm25,
    mut accept: impl FnMut(usize, u32, &DocMeta, u8) -> bool,
    surely: impl Fn(&Segment, u32) -> bool,
    k: usize,
    rank: impl Fn(&Hit, &Hit) -> Ordering,
    pruning: Pruning,
    shared: Option<&AtomicU32>,
) -> Evaluation {
    let n = view.live_docs.max(1);
    let avg = view.avg_len();
    // another evaluation's threshold only makes sense in relevance order
    let shared = shared.filter(|_| pruning == Pruning::ByScore);
    let mut top = TopK {
        k,
        heap: Vec::new(),
        cmp: &rank,
        shared,
    };
    let mut out = Evaluation {
        total: 0,
        exact: true,
        hits: Vec::new(),
        stopped: false,
    };
    let mut scratch = String::new();
    let mut global_idf = crate::util::hash::FxHashMap::<String, f32>::default();
    let mut idf_of = |term: &str| -> f32 {
        *global_idf
            .entry(term.to_owned())
            .or_insert_with(|| idf(n, view.df(term).max(1)))
    };
    let has_phrases = !plan.phrases.is_empty() || !plan.excluded_phrases.is_empty();
    // on a large index, checking phrases (reading texts) waits until the candidates can be
    // taken best first
    let defer = has_phrases && view.live_docs >= PRUNE_MIN_DOCS as u64;
    let mut deferred: Vec<Hit> = Vec::new();
    // BM25 length normalisation: k1 * (1 - b + b * len / avg) = norm0 + norm1 * len
    let norm0 = params.k1 * (1.0 - params.b);
    let norm1 = params.k1 * params.b / avg;
    for &si in scan {
        let Some(sv) = view.segs.get(si) else {
            continue;
        };
        if plan.stop.check() {
            out.stopped = true;
            out.exact = false;
            break;
        }
        let seg = &sv.seg;
        let bm = seg.blockmax();
        let prune = pruning == Pruning::ByScore
            && k > 0
            && seg.doc_count() >= PRUNE_MIN_DOCS
            && bm.usable(params);
        // impacts were computed with the segment's average; scale them to this search's
        let adjust = (avg / bm.avg.max(f32::MIN_POSITIVE)).max(1.0);
        let mut cursors: Vec<TermCursor> = Vec::new();
        for t in &plan.terms {
            if let Some(list) = seg.lookup(&t.text) {
                let weight = if t.whole {
                    t.weight * WHOLE_FORM_WEIGHT
                } else {
                    t.weight
                };
                let cursor = BlockCursor::new(list, bm.blocks(list.term_id));
                let scale = weight * idf_of(&t.text) * (params.k1 + 1.0);
                let ub = scale * cursor.list_max() * adjust;
                cursors.push(TermCursor {
                    cursor,
                    slot: cursors.len(),
                    scale,
                    group: t.group,
                    ub,
                });
            }
        }
        for (prefix, group) in &plan.prefixes {
            let mut ids: Vec<u32> = seg.prefix_range(prefix).collect();
            if ids.len() > MAX_PREFIX_EXPANSION {
                ids.sort_by(|&a, &b| sv.df(b).cmp(&sv.df(a)).then(a.cmp(&b)));
                ids.truncate(MAX_PREFIX_EXPANSION);
                ids.sort_unstable();
            }
            for id in ids {
                let scale = idf_of(seg.term_str(id)) * (params.k1 + 1.0);
                // expansions prune like terms: a one-letter prefix expands to common words
                let cursor = BlockCursor::new(seg.postings(id), bm.blocks(id));
                let ub = scale * cursor.list_max() * adjust;
                cursors.push(TermCursor {
                    cursor,
                    slot: cursors.len(),
                    scale,
                    group: *group,
                    ub,
                });
            }
        }
        if cursors.is_empty() {
            continue;
        }
        let mut excluded: Vec<BlockCursor> = plan
            .excluded
            .iter()
            .filter_map(|t| seg.lookup(t))
            .map(|l| BlockCursor::new(l, bm.blocks(l.term_id)))
            .collect();
        // MaxScore: cursors by upper bound, ascending; pre[i] = sum of ub[..=i]
        cursors.sort_by(|a, b| a.ub.total_cmp(&b.ub));
        let pre: Vec<f32> = cursors
            .iter()
            .scan(0.0, |s, c| {
                *s += c.ub;
                Some(*s)
            })
            .collect();
        let mut essential = 0usize;
        let mut contrib = vec![0.0f32; cursors.len()];
        let mut candidates = 0u64;
        loop {
            if prune {
                let theta = top.threshold();
                while essential < cursors.len() && pre[essential] <= theta {
                    essential += 1;
                    out.exact = false;
                }
                if essential == cursors.len() {
                    break;
                }
                // one essential list left: skip its blocks that cannot reach the threshold
                if essential + 1 == cursors.len() {
                    let rest = if essential > 0 {
                        pre[essential - 1]
                    } else {
                        0.0
                    };
                    let c = &mut cursors[essential];
                    while c.cursor.doc() != u32::MAX
                        && c.scale * c.cursor.block_max() * adjust + rest <= theta
                    {
                        c.cursor.skip_block();
                        out.exact = false;
                    }
                }
            }
            let d = cursors[essential..]
                .iter()
                .map(|c| c.cursor.doc())
                .min()
                .unwrap_or(u32::MAX);
            if d == u32::MAX {
                break;
            }
            candidates += 1;
            if candidates % super::stop::CHECK_EVERY == 0 && plan.stop.check() {
                out.stopped = true;
                out.exact = false;
                break;
            }
            let norm = norm0 + norm1 * seg.len_of(d) as f32;
            let (mut score, mut groups, mut fields) = (0.0f32, 0u64, 0u8);
            contrib.iter_mut().for_each(|c| *c = 0.0);
            let mut add = |c: &mut TermCursor, score: &mut f32| {
                let tf = c.cursor.inner.tf;
                let mut tfw = 0.0f32;
                for (f, (&n, &w)) in tf
                    .iter()
                    .zip(&params.field_weights)
                    .enumerate()
                    .take(FIELDS)
                {
                    if n > 0 {
                        tfw += w * n as f32;
                        fields |= 1 << f;
                    }
                }
                let part = c.scale * tfw / (tfw + norm);
                contrib[c.slot] = part;
                *score += part;
                groups |= 1u64 << c.group.min(63);
                c.cursor.next();
            };
            for c in cursors[essential..].iter_mut() {
                if c.cursor.doc() == d {
                    add(c, &mut score);
                }
            }
            // the other lists, largest bound first, while the document can still rank
            let mut ranks = true;
            let theta = if prune {
                top.threshold()
            } else {
                f32::NEG_INFINITY
            };
            for i in (0..essential).rev() {
                if score + pre[i] <= theta {
                    ranks = false;
                    break;
                }
                let c = &mut cursors[i];
                c.cursor.advance_to(d);
                if c.cursor.doc() == d {
                    add(c, &mut score);
                }
            }
            if !ranks {
                out.exact = false;
                continue;
            }
            // the exact score, summed in canonical order
            let score: f32 = contrib.iter().sum();
            if sv.dead.contains(d) || groups & plan.required != plan.required || score <= 0.0 {
                continue;
            }
            if !excluded.is_empty()
                && excluded.iter_mut().any(|x| {
                    x.advance_to(d);
                    x.doc() == d
                })
            {
                continue;
            }
            let rounded = quantize(score);
            if defer {
                // checking a phrase reads the document's text: done last, best first
                deferred.push(Hit {
                    seg: si,
                    doc: d,
                    score,
                    groups,
                    fields,
                    rounded,
                });
                continue;
            }
            if has_phrases && !phrases_ok(plan, &seg.text(d), &mut scratch) {
                continue;
            }
            let below = top.floor().is_some_and(|f| rounded < f.rounded);
            // below the current k-th: only counted (ties on the rounded score still compete)
            if below && pruning == Pruning::ByScore && surely(seg, d) {
                out.total += 1;
                continue;
            }
            if !accept(si, d, seg.doc(d), fields) {
                continue;
            }
            out.total += 1;
            top.push(Hit {
                seg: si,
                doc: d,
                score,
                groups,
                fields,
                rounded,
            });
            top.publish();
        }
        tracing::trace!(
            segment = si,
            docs = seg.doc_count(),
            candidates,
            essential,
            "segment evaluated"
        );
    }
    if !deferred.is_empty() {
        phrases::verify(deferred, view, plan, &mut top, &mut accept, &mut out);
    }
    out.hits = top.heap;
    out.hits.sort_by(&rank);
    out
}

mod phrases;
#[cfg(test)]
mod tests;
