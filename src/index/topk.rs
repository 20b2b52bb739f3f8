//! Query evaluation: document-at-a-time over the query terms' postings, keeping the best `k`
//! in a heap. On large segments, relevance-ordered searches prune with MaxScore and block-max
//! bounds ([`super::maxscore`]): terms whose combined upper bound cannot beat the current k-th
//! score only score documents found through the other terms, and blocks of postings whose
//! largest impact cannot make a document rank are skipped undecoded. Pruning never changes the
//! results; it only makes the match count a lower bound.
//!
//! The pieces: an [`EvalRequest`] says what to evaluate; a `Collector` owns the best `k` so
//! far, the match count and the threshold; per segment, a [`SegmentScorer`] yields candidates
//! and their scores, and `Evaluator::scan` applies the plan's constraints and the caller's
//! filters to each before offering it to the collector.
use super::maxscore::{IdfCache, SegmentScorer};
use super::query::Plan;
use super::schema::DocMeta;
use super::scoring::{Bm25, Hit, quantize};
use super::segment::Segment;
use super::view::IndexView;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

/// Splits the segments of `view` into two halves of about equal size (for two threads).
pub(crate) fn halves(view: &IndexView) -> [Vec<usize>; 2] {
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
pub(crate) const PRUNE_MIN_DOCS: usize = 1024;

/// How pruning is allowed for one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pruning {
    /// Relevance order (rounded score, then a key): bounds on scores may prune.
    ByScore,
    /// Any other order: every match is visited.
    Off,
}

/// The first key of an evaluation's rank, which its `rank` must order by before anything else:
/// deferred candidates are selected by it, cheaply, before the rank orders them fully.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lead {
    /// Rounded score, highest first (relevance).
    Score,
    /// Timestamp, newest first (recency).
    Newest,
}

impl Lead {
    /// The lead key of `hit` in `seg`: smaller ranks first.
    #[inline]
    fn key(self, seg: &Segment, hit: &Hit) -> i64 {
        match self {
            Lead::Score => -hit.rounded,
            // `!t` orders like `-t` without overflowing at i64::MIN (no timestamp)
            Lead::Newest => !seg.timestamp_of(hit.doc),
        }
    }
}

/// The outcome of an evaluation.
#[derive(Debug, Clone)]
pub(crate) struct Evaluation {
    /// Accepted matches; a lower bound when `exact` is false.
    pub total: usize,
    pub exact: bool,
    pub hits: Vec<Hit>,
    /// True when the plan's stop condition ended the evaluation early.
    pub stopped: bool,
}

/// What to evaluate, over which segments, and what to keep.
pub(crate) struct EvalRequest<'a, R> {
    pub view: &'a IndexView,
    /// Indices into `view.segs` to scan; statistics always come from the whole view.
    pub scan: &'a [usize],
    pub plan: &'a Plan,
    pub params: &'a Bm25,
    /// How many of the best hits to keep.
    pub k: usize,
    /// The result order (`Less`: better).
    pub rank: R,
    /// What `rank` orders by first.
    pub lead: Lead,
    pub pruning: Pruning,
    /// The k-th best score found by another evaluation over other segments of the same view
    /// (f32 bits; scores are positive, so bits order like values): a document below it cannot
    /// be among the best `k` of all segments either. Read and raised in relevance order only.
    pub shared: Option<&'a AtomicU32>,
    /// Documents whose acceptance depends on the order they are offered in (copies collapsed
    /// to the first accepted): their deferred phrase checks wait for the end, so that they are
    /// accepted in rank order.
    pub ordered: &'a dyn Fn(&Segment, u32) -> bool,
}

/// Evaluates `req`. `accept` sees each matching live document (and the fields it matched in)
/// and decides whether it counts. A document that cannot enter the best `k` and for which
/// `surely(segment, doc)` holds (no filter could reject it) is counted without calling
/// `accept`. Returns the accepted matches' count and the best `k` in `rank` order.
pub(crate) fn evaluate<R>(
    req: &EvalRequest<'_, R>,
    accept: impl FnMut(usize, u32, &DocMeta, u8) -> bool,
    surely: impl Fn(&Segment, u32) -> bool,
) -> Evaluation
where
    R: Fn(&Hit, &Hit) -> Ordering,
{
    // another evaluation's threshold only makes sense in relevance order
    let shared = req.shared.filter(|_| req.pruning == Pruning::ByScore);
    let mut ev = Evaluator {
        req,
        top: Collector::new(req.k, &req.rank, shared),
        idf: IdfCache::new(req.view),
        accept,
        surely,
        scratch: String::new(),
        exact: true,
        stopped: false,
        // on a large index, checking phrases (reading texts) is deferred and done in rounds,
        // best first
        defer: req.plan.has_phrases() && req.view.live_docs >= PRUNE_MIN_DOCS as u64,
        deferred: Vec::new(),
        held: Vec::new(),
        round_at: FIRST_ROUND,
        cut: None,
    };
    for &si in req.scan {
        if ev.stopped || req.plan.stop.check() {
            ev.stopped = true;
            break;
        }
        ev.scan(si);
    }
    if !ev.stopped {
        let deferred = std::mem::take(&mut ev.deferred);
        ev.verify(deferred, false);
    }
    if !ev.stopped {
        let held = std::mem::take(&mut ev.held);
        ev.verify(held, true);
    }
    Evaluation {
        total: ev.top.total,
        exact: ev.exact && !ev.stopped,
        hits: ev.top.into_hits(),
        stopped: ev.stopped,
    }
}

/// One evaluation in progress.
struct Evaluator<'r, R, A, S> {
    req: &'r EvalRequest<'r, R>,
    top: Collector<'r, R>,
    idf: IdfCache<'r>,
    accept: A,
    surely: S,
    /// Reused by phrase checks.
    scratch: String,
    /// False once any segment pruned.
    exact: bool,
    /// Set once the plan's stop condition fired.
    stopped: bool,
    /// Whether phrase checks are deferred and done in rounds by [`phrases::verify`].
    defer: bool,
    /// Candidates whose phrases are still to be checked, with their lead key.
    deferred: Vec<(i64, Hit)>,
    /// Deferred candidates that must be accepted in rank order ([`EvalRequest::ordered`]):
    /// checked at the end only.
    held: Vec<(i64, Hit)>,
    /// Size of `deferred` that starts the next round of checks.
    round_at: usize,
    /// Once `k` hits are kept: the lead key of the worst. A candidate whose lead key is larger
    /// cannot rank.
    cut: Option<i64>,
}

/// Deferred candidates that start the first round of phrase checks during a scan; each later
/// round waits for twice as many.
const FIRST_ROUND: usize = 1024;

impl<'r, R, A, S> Evaluator<'r, R, A, S>
where
    R: Fn(&Hit, &Hit) -> Ordering,
    A: FnMut(usize, u32, &DocMeta, u8) -> bool,
    S: Fn(&Segment, u32) -> bool,
{
    /// Whether pruning is allowed in segment `seg`: relevance order, a bounded `k`, a segment
    /// large enough to gain, and impacts computed with these parameters. Prefix expansions
    /// prune like terms: a two-letter prefix expands to common words.
    fn prunes(&self, seg: &Segment) -> bool {
        let req = self.req;
        req.pruning == Pruning::ByScore
            && req.k > 0
            && seg.doc_count() >= PRUNE_MIN_DOCS
            && seg.blockmax().usable(req.params)
    }

    /// The score a document must beat, or none when this segment does not prune.
    #[inline]
    fn theta(&self, prune: bool) -> f32 {
        if prune {
            self.top.threshold()
        } else {
            f32::NEG_INFINITY
        }
    }

    /// Checks the phrases of deferred candidates best first ([`phrases::verify`]); `in_rank_order`
    /// when their acceptance depends on order.
    fn verify(&mut self, deferred: Vec<(i64, Hit)>, in_rank_order: bool) {
        if deferred.is_empty() {
            return;
        }
        let round = phrases::Round {
            accept: &mut self.accept,
            cut: &mut self.cut,
            in_rank_order,
        };
        let v = phrases::verify(deferred, self.req, &mut self.top, round);
        self.exact &= v.exact;
        self.stopped |= v.stopped;
    }

    /// Checking a phrase reads the document's text: a candidate of `seg` whose phrases are to
    /// be checked waits, and the waiting ones are checked in rounds, best first (each round
    /// twice the size of the last).
    fn defer_hit(&mut self, seg: &Segment, hit: Hit) {
        let req = self.req;
        let key = req.lead.key(seg, &hit);
        if self.cut.is_some_and(|c| key > c) {
            self.exact = false;
        } else if (req.ordered)(seg, hit.doc) {
            self.held.push((key, hit));
        } else {
            self.deferred.push((key, hit));
            if self.deferred.len() >= self.round_at {
                let round = std::mem::take(&mut self.deferred);
                self.verify(round, false);
                self.round_at = self.round_at.saturating_mul(2);
            }
        }
    }

    /// Evaluates segment `si` of the view. Longer than 80 lines: one hot loop over the
    /// segment's candidates, where each constraint (stop, required phrase words, the recency
    /// cut, score, groups, exclusions, phrases, the k-th score, the caller's filter) is a
    /// `continue` sharing the scorer, the segment and the collector; the setup before it
    /// decides whether the segment is read at all.
    fn scan(&mut self, si: usize) {
        let req = self.req;
        let Some(sv) = req.view.segs.get(si) else {
            return;
        };
        let seg = &sv.seg;
        let needs = !req.plan.needed.is_empty();
        let odd = seg.odd_words().any();
        if needs && !odd && req.plan.needed.iter().any(|t| seg.term_id(t).is_none()) {
            // a required phrase has a word none of these documents holds
            return;
        }
        let prune = self.prunes(seg);
        let Some(mut scorer) = SegmentScorer::new(sv, req.plan, req.params, &mut self.idf, prune)
        else {
            return;
        };
        let plan = req.plan;
        let context_finds = super::scoring::QueryWeights::get().context_finds;
        let has_phrases = plan.has_phrases();
        // in recent order the lead key is known before scoring
        let early = self.defer && req.lead == Lead::Newest;
        while let Some(d) = scorer.next_candidate(self.theta(prune)) {
            if scorer.candidates % super::stop::CHECK_EVERY == 0 && plan.stop.check() {
                self.stopped = true;
                break;
            }
            if needs && !(odd && seg.odd_words().contains(d)) && scorer.lacks_needed(d) {
                // it lacks a word of a required phrase
                scorer.pass(d);
                continue;
            }
            if early && self.cut.is_some_and(|c| !seg.timestamp_of(d) > c) {
                // newer matches fill the best k already
                scorer.pass(d);
                self.exact = false;
                continue;
            }
            let Some(s) = scorer.score(d, self.theta(prune)) else {
                continue;
            };
            if sv.dead.contains(d) || s.groups & plan.required != plan.required || s.score <= 0.0 {
                continue;
            }
            if s.groups == 0 && !context_finds {
                continue;
            }
            if scorer.excluded(d) {
                continue;
            }
            let rounded = quantize(s.score);
            let hit = Hit {
                seg: si,
                doc: d,
                score: s.score,
                groups: s.groups,
                fields: s.fields,
                rounded,
            };
            if self.defer {
                self.defer_hit(seg, hit);
                if self.stopped {
                    break;
                }
                continue;
            }
            if has_phrases && !plan.phrases_ok(&seg.text(d), &mut self.scratch) {
                continue;
            }
            // below the current k-th: only counted (ties on the rounded score still compete)
            if self.top.below(rounded) && req.pruning == Pruning::ByScore && (self.surely)(seg, d) {
                self.top.total += 1;
                continue;
            }
            if !(self.accept)(si, d, &seg.doc(d), s.fields) {
                continue;
            }
            self.top.offer(hit);
        }
        self.exact &= !scorer.pruned;
        let (lists, essential) = scorer.shape();
        tracing::trace!(
            segment = si,
            docs = seg.doc_count(),
            candidates = scorer.candidates,
            lists,
            essential,
            "segment evaluated"
        );
    }
}

/// A hit ordered by the evaluation's rank, so that a max-heap holds the worst kept hit on top.
struct Ranked<'r, R> {
    hit: Hit,
    rank: &'r R,
}

impl<R: Fn(&Hit, &Hit) -> Ordering> Ord for Ranked<'_, R> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.rank)(&self.hit, &other.hit)
    }
}

impl<R: Fn(&Hit, &Hit) -> Ordering> PartialOrd for Ranked<'_, R> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<R: Fn(&Hit, &Hit) -> Ordering> PartialEq for Ranked<'_, R> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<R: Fn(&Hit, &Hit) -> Ordering> Eq for Ranked<'_, R> {}

/// The best `k` hits so far (a `std` binary heap: on pushes of 200k hits it took 0.48-0.86x
/// the time of the hand-written heap it replaced), the count of accepted matches, and the
/// threshold a document must beat to be worth scoring.
struct Collector<'r, R> {
    k: usize,
    heap: BinaryHeap<Ranked<'r, R>>,
    rank: &'r R,
    shared: Option<&'r AtomicU32>,
    /// Score and rounded score of the worst kept hit once `k` are kept (the heap's root),
    /// cached: every candidate reads them, few change them.
    floor: Option<(f32, i64)>,
    /// Accepted matches.
    total: usize,
}

impl<'r, R: Fn(&Hit, &Hit) -> Ordering> Collector<'r, R> {
    fn new(k: usize, rank: &'r R, shared: Option<&'r AtomicU32>) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k.min(1024)),
            rank,
            shared,
            floor: None,
            total: 0,
        }
    }

    /// Whether `hit` cannot enter the best `k`: `k` are kept and it does not rank above the
    /// worst of them.
    fn excludes(&self, hit: &Hit) -> bool {
        self.heap.len() == self.k
            && self
                .heap
                .peek()
                .is_some_and(|w| (self.rank)(hit, &w.hit) != Ordering::Less)
    }

    /// Whether a document with this rounded score ranks below every kept hit.
    #[inline]
    fn below(&self, rounded: i64) -> bool {
        self.floor.is_some_and(|(_, r)| rounded < r)
    }

    /// A score a document must exceed to be worth scoring: the k-th score (here or in the
    /// other evaluation), less a margin so that rounding to 4 decimals and float error never
    /// prune a document that could tie.
    #[inline]
    fn threshold(&self) -> f32 {
        let own = self.floor.map_or(f32::NEG_INFINITY, |(score, _)| score);
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

    /// Counts an accepted match and keeps it if it is among the best `k`; publishes the new
    /// k-th best score to the other evaluation.
    #[inline]
    fn offer(&mut self, hit: Hit) {
        self.total += 1;
        if self.k == 0 {
            return;
        }
        if self.heap.len() < self.k {
            self.heap.push(Ranked {
                hit,
                rank: self.rank,
            });
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if (self.rank)(&hit, &worst.hit) == Ordering::Less {
                worst.hit = hit;
            }
        }
        if self.heap.len() == self.k {
            self.floor = self.heap.peek().map(|r| (r.hit.score, r.hit.rounded));
        }
        if let (Some(shared), Some((score, _))) = (self.shared, self.floor) {
            if score > 0.0 {
                shared.fetch_max(score.to_bits(), AtomicOrdering::Relaxed);
            }
        }
    }

    /// The kept hits, best first.
    fn into_hits(self) -> Vec<Hit> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|r| r.hit)
            .collect()
    }
}

mod phrases;
#[cfg(test)]
mod tests;
