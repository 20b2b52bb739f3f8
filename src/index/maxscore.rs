//! One segment's share of an evaluation: a cursor per query term (plan terms and prefix
//! expansions) with its BM25 scale and upper bound, ordered for MaxScore, and the scoring of a
//! candidate document with contributions summed in one canonical order. `topk` drives
//! it and owns the threshold; this module only reads it.
//!
//! MaxScore: with the cursors sorted by upper bound, the shortest prefix of them whose bounds
//! add up to at most the threshold is *non-essential*: a document found only in those lists
//! cannot rank, so candidates come from the other (essential) lists, and the non-essential
//! ones are only advanced to score a candidate, largest bound first, while it can still rank.
use super::blockmax::BlockCursor;
use super::query::Plan;
use super::schema::OWN_FIELDS;
use super::scoring::{Bm25, WHOLE_FORM_WEIGHT, idf};
use super::segment::Segment;
use super::view::{IndexView, SegView};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Most dictionary terms one prefix expands to (the view's most frequent ones).
pub(crate) const MAX_PREFIX_EXPANSION: usize = 64;

/// From this many essential lists on, the next candidate and the lists on it are found with a
/// heap by document instead of by looking at every list (a prefix expands to up to 64 lists:
/// looking at each, per candidate, was about 40 % of a prefix search).
const HEAP_FROM: usize = 8;

#[cfg(test)]
thread_local! {
    /// Tests set where the heap takes over (to compare it with looking at every list).
    pub static TEST_HEAP_FROM: std::cell::Cell<usize> = const { std::cell::Cell::new(HEAP_FROM) };
}

/// [`HEAP_FROM`] (in tests, [`TEST_HEAP_FROM`]).
#[inline]
fn heap_from() -> usize {
    #[cfg(test)]
    return TEST_HEAP_FROM.with(|c| c.get());
    #[cfg(not(test))]
    HEAP_FROM
}

/// Idf of the query terms over the whole view (not one segment), each computed once, and what
/// each prefix of the plan expands to over the whole view (once, when first needed).
pub(crate) struct IdfCache<'v> {
    view: &'v IndexView,
    docs: u64,
    known: FxHashMap<String, f32>,
    /// Per prefix of the plan (by position): its terms, in byte order, with their idf.
    expansions: Vec<Option<Vec<(String, f32)>>>,
}

impl<'v> IdfCache<'v> {
    pub(crate) fn new(view: &'v IndexView) -> Self {
        Self {
            view,
            docs: view.live_docs.max(1),
            known: FxHashMap::default(),
            expansions: Vec::new(),
        }
    }

    /// The terms prefix number `i` of the plan, `prefix`, stands for, with their idf.
    fn expansion(&mut self, i: usize, prefix: &str) -> &[(String, f32)] {
        if self.expansions.len() <= i {
            self.expansions.resize_with(i + 1, || None);
        }
        let (view, docs) = (self.view, self.docs);
        self.expansions[i].get_or_insert_with(|| {
            super::expand::expand(view, prefix, MAX_PREFIX_EXPANSION)
                .into_iter()
                .map(|(t, df)| (t, idf(docs, df.max(1))))
                .collect()
        })
    }

    pub(crate) fn of(&mut self, term: &str) -> f32 {
        let (view, docs) = (self.view, self.docs);
        *self
            .known
            .entry(term.to_owned())
            .or_insert_with(|| idf(docs, view.df(term).max(1)))
    }
}

/// A query term's cursor in one segment.
struct TermCursor<'a> {
    cursor: BlockCursor<'a>,
    /// Position in the canonical summation order (plan order, then expansions by term), so a
    /// document's score does not depend on how cursors were sorted or segments cut.
    slot: usize,
    /// weight × idf × (k1 + 1): the contribution is `scale * x / (x + k1)`, `x` being
    /// [`Bm25::weighted_tf`].
    scale: f32,
    group: u16,
    /// The whole-form factor in `scale` (1 for other terms): a term only in the context
    /// does not carry it.
    whole: f32,
    /// Upper bound of the contribution anywhere in this list.
    ub: f32,
}

/// A candidate's score, the groups (clauses) and the fields it matched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scored {
    pub score: f32,
    pub groups: u64,
    pub fields: u8,
}

/// The query terms of one segment, ready for document-at-a-time scoring.
pub(crate) struct SegmentScorer<'a> {
    seg: &'a Segment,
    /// By upper bound, ascending.
    cursors: Vec<TermCursor<'a>>,
    /// `pre[i]`: the sum of the upper bounds of `cursors[..=i]`.
    pre: Vec<f32>,
    /// `cursors[..essential]` are non-essential.
    essential: usize,
    /// Cursors of the excluded terms.
    excluded: Vec<BlockCursor<'a>>,
    /// Cursors of the terms of the required phrases' words (`None`: not in this segment).
    needed: Vec<Option<BlockCursor<'a>>>,
    /// The current candidate's contribution per slot.
    contrib: Vec<f32>,
    /// The essential cursors as (document, index), smallest document on top, while at least
    /// [`HEAP_FROM`] lists are essential.
    heap: BinaryHeap<Reverse<(u32, u32)>>,
    /// `essential` when `heap` was filled (`usize::MAX`: never). The heap is in use only while
    /// this equals `essential`, which only grows.
    heap_for: usize,
    /// With the heap: the slots the current candidate's contributions went to.
    touched: Vec<usize>,
    /// Per slot: the word (index into `Plan::words`) whose forms it is one of, or
    /// `NO_WORD`; empty when a word and its forms sum (see `QueryWeights::form_max`).
    word_of: Vec<u16>,
    /// Per word: the largest contribution of its forms to the current candidate.
    best: Vec<f32>,
    params: Bm25,
    /// The view's average lengths (own fields, context).
    avg: [f32; 2],
    /// Block-max impacts were computed with the segment's average lengths; this scales them to
    /// the view's (never below 1, so bounds stay bounds).
    adjust: f32,
    /// Whether thresholds may skip documents here.
    prune: bool,
    /// Set once pruning skipped anything: the match count is then a lower bound.
    pub pruned: bool,
    /// Documents scored (for tracing).
    pub candidates: u64,
}

impl<'a> SegmentScorer<'a> {
    /// The scorer of `plan` over one segment; `None` when no query term occurs in it. `prune`
    /// says whether thresholds may skip documents (the caller's policy).
    pub(crate) fn new(
        sv: &'a SegView,
        plan: &Plan,
        params: &Bm25,
        idf: &mut IdfCache,
        prune: bool,
    ) -> Option<Self> {
        let seg: &'a Segment = &sv.seg;
        let avg = [idf.view.avg_len(), idf.view.avg_context_len()];
        let bm = seg.blockmax();
        let ratio = |view: f32, seg: f32| view / seg.max(f32::MIN_POSITIVE);
        let adjust = ratio(avg[0], bm.avg)
            .max(ratio(avg[1], bm.avg_context))
            .max(1.0);
        let mut cursors = term_cursors(seg, plan, params, idf, adjust);
        let word_of = words_of(plan, &cursors);
        prefix_cursors(sv, plan, params, idf, adjust, &mut cursors);
        if cursors.is_empty() {
            return None;
        }
        cursors.sort_by(|a, b| a.ub.total_cmp(&b.ub));
        let pre = cursors
            .iter()
            .scan(0.0, |s, c| {
                *s += c.ub;
                Some(*s)
            })
            .collect();
        let excluded = plan
            .excluded
            .iter()
            .filter_map(|t| seg.lookup(t))
            .map(|l| BlockCursor::new(l, seg.blockmax().blocks(l.term_id)))
            .collect();
        let needed = plan
            .needed
            .iter()
            .map(|t| seg.lookup(t))
            .map(|l| l.map(|l| BlockCursor::new(l, seg.blockmax().blocks(l.term_id))))
            .collect();
        Some(Self {
            seg,
            contrib: vec![0.0; cursors.len()],
            heap: BinaryHeap::new(),
            heap_for: usize::MAX,
            touched: Vec::new(),
            best: vec![
                0.0;
                if word_of.is_empty() {
                    0
                } else {
                    plan.words.len()
                }
            ],
            word_of,
            cursors,
            pre,
            essential: 0,
            excluded,
            needed,
            params: *params,
            avg,
            adjust,
            prune,
            pruned: false,
            candidates: 0,
        })
    }

    /// The next document to score, `None` when the segment is done. When pruning, lists whose
    /// bounds cannot reach `theta` first become non-essential, and the last essential list
    /// skips blocks that cannot.
    #[inline]
    pub(crate) fn next_candidate(&mut self, theta: f32) -> Option<u32> {
        if self.prune {
            while self.essential < self.cursors.len() && self.pre[self.essential] <= theta {
                self.essential += 1;
                self.pruned = true;
            }
            if self.essential == self.cursors.len() {
                return None;
            }
            if self.essential + 1 == self.cursors.len() {
                self.skip_blocks(theta);
            }
        }
        if self.cursors.len() - self.essential >= heap_from() {
            if self.heap_for != self.essential {
                self.fill_heap();
            }
            let d = self.heap.peek().map_or(u32::MAX, |top| top.0.0);
            if d == u32::MAX {
                return None;
            }
            self.candidates += 1;
            return Some(d);
        }
        // (a heap filled earlier is out of use: `essential` only grows, so it no longer equals
        // `heap_for`)
        let d = self.cursors[self.essential..]
            .iter()
            .map(|c| c.cursor.doc())
            .min()
            .unwrap_or(u32::MAX);
        if d == u32::MAX {
            return None;
        }
        self.candidates += 1;
        Some(d)
    }

    /// Puts the essential cursors in the heap (again, when lists became non-essential).
    fn fill_heap(&mut self) {
        let e = self.essential;
        self.heap.clear();
        self.heap.extend(
            self.cursors[e..]
                .iter()
                .enumerate()
                .map(|(i, c)| Reverse((c.cursor.doc(), (e + i) as u32))),
        );
        self.heap_for = e;
        self.contrib.fill(0.0);
        self.touched.clear();
    }

    /// With one essential list left: skips its blocks whose best impact, with everything the
    /// other lists could add, cannot reach `theta`. (Inlined like the rest of the loop, so the
    /// scorer's state can stay in registers.)
    #[inline]
    fn skip_blocks(&mut self, theta: f32) {
        let rest = match self.essential {
            0 => 0.0,
            e => self.pre[e - 1],
        };
        let c = &mut self.cursors[self.essential];
        while c.cursor.doc() != u32::MAX
            && c.scale * c.cursor.block_max() * self.adjust + rest <= theta
        {
            c.cursor.skip_block();
            self.pruned = true;
        }
    }

    /// Scores candidate `d` (moving every cursor on it past it): the essential lists, then
    /// the others, largest bound first, while the document can still beat `theta`. `None`
    /// when it cannot.
    #[inline]
    pub(crate) fn score(&mut self, d: u32, theta: f32) -> Option<Scored> {
        let p = &self.params;
        let norm = Norm {
            inv: [
                p.inv_norm(self.seg.len_of(d), self.avg[0]),
                p.inv_norm(self.seg.context_len_of(d), self.avg[1]),
            ],
            params: p,
        };
        let mut acc = Scored {
            score: 0.0,
            groups: 0,
            fields: 0,
        };
        let heaped = self.heap_for == self.essential;
        if heaped {
            // only the slots the last candidate used hold anything
            for &s in &self.touched {
                self.contrib[s] = 0.0;
            }
            self.touched.clear();
            while let Some(mut top) = self.heap.peek_mut() {
                let Reverse((doc, i)) = *top;
                if doc != d {
                    break;
                }
                let c = &mut self.cursors[i as usize];
                take(c, &norm, &mut self.contrib, &mut acc);
                self.touched.push(c.slot);
                *top = Reverse((c.cursor.doc(), i));
            }
        } else {
            self.contrib.fill(0.0);
            for c in self.cursors[self.essential..].iter_mut() {
                if c.cursor.doc() == d {
                    take(c, &norm, &mut self.contrib, &mut acc);
                }
            }
        }
        for i in (0..self.essential).rev() {
            if acc.score + self.pre[i] <= theta {
                self.pruned = true;
                return None;
            }
            let c = &mut self.cursors[i];
            c.cursor.advance_to(d);
            if c.cursor.doc() == d {
                take(c, &norm, &mut self.contrib, &mut acc);
                if heaped {
                    self.touched.push(c.slot);
                }
            }
        }
        // the exact score, summed in canonical order (the slots left out hold zeros, which
        // change no sum)
        if heaped {
            self.touched.sort_unstable();
        }
        acc.score = match (self.word_of.is_empty(), heaped) {
            (true, true) => self.touched.iter().map(|&s| self.contrib[s]).sum(),
            (true, false) => self.contrib.iter().sum(),
            (false, true) => once_per_word(
                &self.word_of,
                &self.contrib,
                &mut self.best,
                self.touched.iter().copied(),
            ),
            (false, false) => once_per_word(
                &self.word_of,
                &self.contrib,
                &mut self.best,
                0..self.contrib.len(),
            ),
        };
        Some(acc)
    }

    /// Moves past candidate `d` without scoring it (the essential cursors on it; the others
    /// are moved when a later candidate is scored).
    #[inline]
    pub(crate) fn pass(&mut self, d: u32) {
        if self.heap_for == self.essential {
            while let Some(mut top) = self.heap.peek_mut() {
                let Reverse((doc, i)) = *top;
                if doc != d {
                    break;
                }
                let c = &mut self.cursors[i as usize].cursor;
                c.next();
                *top = Reverse((c.doc(), i));
            }
            return;
        }
        for c in self.cursors[self.essential..].iter_mut() {
            if c.cursor.doc() == d {
                c.cursor.next();
            }
        }
    }

    /// Whether `d` holds an excluded term (`d` must not decrease between calls).
    #[inline]
    pub(crate) fn excluded(&mut self, d: u32) -> bool {
        // only the turn's own fields count: a word in the previous prompt (the context) does
        // not make this turn one that contains it
        self.excluded.iter_mut().any(|x| {
            x.advance_to(d);
            x.doc() == d && x.inner.tf[..OWN_FIELDS].iter().any(|&n| n > 0)
        })
    }

    /// Whether `d` lacks a term of a required phrase's words (`d` must not decrease between
    /// calls). Such a document holds the phrase only if it is marked as having words that are
    /// not terms ([`Segment::odd_words`]).
    #[inline]
    pub(crate) fn lacks_needed(&mut self, d: u32) -> bool {
        self.needed.iter_mut().any(|n| match n {
            None => true,
            Some(x) => {
                x.advance_to(d);
                x.doc() != d
            }
        })
    }

    /// Lists in play and how many became non-essential (for tracing).
    pub(crate) fn shape(&self) -> (usize, usize) {
        (self.cursors.len(), self.essential)
    }
}

/// The sum of the contributions `contrib` of `slots` (in canonical order), a word and its
/// forms counting once (`word_of`): the largest of theirs, `best` being per word scratch. Never
/// above the plain sum, so bounds stay bounds.
fn once_per_word(
    word_of: &[u16],
    contrib: &[f32],
    best: &mut [f32],
    slots: impl Iterator<Item = usize>,
) -> f32 {
    best.fill(0.0);
    let mut sum = 0.0;
    for s in slots {
        match word_of.get(s) {
            Some(&w) if w != NO_WORD => {
                let b = &mut best[w as usize];
                *b = b.max(contrib[s]);
            }
            _ => sum += contrib[s],
        }
    }
    sum + best.iter().sum::<f32>()
}

/// No word of `Plan::words`.
const NO_WORD: u16 = u16::MAX;

/// Per slot of the term cursors `cursors`, the natural word whose forms its term is one of
/// (every term of a word's clause is: the word as typed and its other forms); empty when forms
/// sum (`QueryWeights::form_max` off) or no word has forms here.
fn words_of(plan: &Plan, cursors: &[TermCursor]) -> Vec<u16> {
    if !super::scoring::QueryWeights::get().form_max {
        return Vec::new();
    }
    let word = |group: u16| plan.words.iter().position(|(_, g)| *g == group);
    let mut out = vec![NO_WORD; cursors.len()];
    let mut forms = vec![0usize; plan.words.len()];
    for c in cursors {
        if let Some(w) = word(c.group) {
            out[c.slot] = w as u16;
            forms[w] += 1;
        }
    }
    if forms.iter().all(|&n| n < 2) {
        return Vec::new();
    }
    out
}

/// The candidate's length normalisation (see [`Bm25::weighted_tf`]).
struct Norm<'p> {
    inv: [f32; 2],
    params: &'p Bm25,
}

/// Adds the contribution of cursor `c`, which is on the document, and moves it past. A term
/// only in the context field scores, but is not one the turn matched (its group is not set).
#[inline]
fn take(c: &mut TermCursor, norm: &Norm, contrib: &mut [f32], acc: &mut Scored) {
    let tf = c.cursor.inner.tf;
    for (f, &n) in tf.iter().enumerate() {
        if n > 0 {
            acc.fields |= 1 << f;
        }
    }
    let x = norm.params.weighted_tf(&tf, norm.inv);
    let own = tf[..OWN_FIELDS].iter().any(|&n| n > 0);
    let mut part = c.scale * x / (x + norm.params.k1);
    if !own {
        // a whole form only in the context weighs as a plain word (below the bound)
        part /= c.whole;
    }
    contrib[c.slot] = part;
    acc.score += part;
    if own {
        acc.groups |= 1u64 << c.group.min(63);
    }
    c.cursor.next();
}

/// Cursors of the plan's terms present in `seg`, in plan order.
fn term_cursors<'a>(
    seg: &'a Segment,
    plan: &Plan,
    params: &Bm25,
    idf: &mut IdfCache,
    adjust: f32,
) -> Vec<TermCursor<'a>> {
    let mut out = Vec::new();
    for t in &plan.terms {
        let Some(list) = seg.lookup(&t.text) else {
            continue;
        };
        let whole = if t.whole { WHOLE_FORM_WEIGHT } else { 1.0 };
        let weight = t.weight * whole;
        let cursor = BlockCursor::new(list, seg.blockmax().blocks(list.term_id));
        let scale = weight * idf.of(&t.text) * (params.k1 + 1.0);
        let ub = scale * cursor.list_max() * adjust;
        out.push(TermCursor {
            cursor,
            slot: out.len(),
            scale,
            group: t.group,
            whole,
            ub,
        });
    }
    out
}

/// Appends the cursors of the prefixes' expansions (see [`super::expand`]) present in `sv`,
/// by term.
fn prefix_cursors<'a>(
    sv: &'a SegView,
    plan: &Plan,
    params: &Bm25,
    idf: &mut IdfCache,
    adjust: f32,
    out: &mut Vec<TermCursor<'a>>,
) {
    let seg: &'a Segment = &sv.seg;
    for (i, (prefix, group)) in plan.prefixes.iter().enumerate() {
        let range = seg.prefix_range(prefix);
        if range.is_empty() {
            continue;
        }
        for (term, term_idf) in idf.expansion(i, prefix) {
            let Some(id) = seg.term_id_in(range.clone(), term.as_bytes()) else {
                continue;
            };
            let scale = term_idf * (params.k1 + 1.0);
            // expansions prune like terms: a two-letter prefix expands to common words
            let cursor = BlockCursor::new(seg.postings(id), seg.blockmax().blocks(id));
            let ub = scale * cursor.list_max() * adjust;
            out.push(TermCursor {
                cursor,
                slot: out.len(),
                scale,
                group: *group,
                whole: 1.0,
                ub,
            });
        }
    }
}
