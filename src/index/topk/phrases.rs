//! Phrase checks on a large index, deferred and done in rounds: checking a phrase reads a
//! document's whole text, so the scan only collects candidates and their lead key (the first
//! key of the rank: rounded score, or timestamp), and each round checks them best key first,
//! a growing chunk at a time, until nothing left can enter the best `k`. Once `k` are kept,
//! the scan drops candidates whose lead key is larger than the worst kept one's (the `cut`)
//! and, in relevance order, MaxScore prunes on the kept scores. The count of such a phrase
//! query is then a lower bound.
//!
//! The order of the checks does not change the result for a document whose acceptance does
//! not depend on what was accepted before: those are checked by lead key alone (comparing the
//! full rank, which reads document metadata and conversation ids, took ~40% of a search for a
//! phrase found nowhere), and until `k` are kept they are checked in the scan's order, which
//! is the order of their texts in memory. Collapsed copies are accepted first come, so those
//! are checked in full rank order among themselves.
use super::{Collector, EvalRequest};
use crate::index::schema::DocMeta;
use crate::index::scoring::Hit;
use std::cmp::Ordering;

/// Candidates checked in the first chunk of a round; each later chunk takes four times more.
const FIRST_CHUNK: usize = 64;

/// How a round of checks ended.
pub(super) struct Verified {
    /// False when candidates were left unchecked (the count is a lower bound).
    pub exact: bool,
    /// True when the plan's stop condition ended the checks.
    pub stopped: bool,
}

/// What a round updates besides the collector.
pub(super) struct Round<'c, A> {
    pub accept: &'c mut A,
    /// The lead key of the worst kept hit once `k` are kept.
    pub cut: &'c mut Option<i64>,
    /// Whether the candidates must be accepted in full rank order.
    pub in_rank_order: bool,
}

/// Checks the phrases of `deferred` (candidates with their lead key) best key first, offering
/// those that pass and are accepted to `top`.
pub(super) fn verify<R: Fn(&Hit, &Hit) -> Ordering, A>(
    mut deferred: Vec<(i64, Hit)>,
    req: &EvalRequest<'_, R>,
    top: &mut Collector<'_, R>,
    mut round: Round<'_, A>,
) -> Verified
where
    A: FnMut(usize, u32, &DocMeta, u8) -> bool,
{
    let mut checks = Checks {
        scratch: String::new(),
        checked: 0,
    };
    let mut start = 0;
    if !round.in_rank_order {
        // until k are kept, any order gives the same result: the scan's (memory order, so
        // reading the texts of a phrase found nowhere is mostly sequential, not a miss each)
        while start < deferred.len() && top.heap.len() < top.k {
            if checks.check(&deferred[start].1, req, top, &mut round) {
                return stopped();
            }
            start += 1;
        }
    }
    let mut rest: &mut [(i64, Hit)] = &mut deferred[start..];
    let mut chunk = FIRST_CHUNK;
    let mut exact = true;
    while !rest.is_empty() {
        let m = take_best(rest, chunk, round.in_rank_order, &req.rank);
        let (head, tail) = rest.split_at_mut(m);
        for (key, h) in head.iter() {
            if round.cut.is_some_and(|c| *key > c) {
                // this one and every one after it rank below the best k
                return Verified {
                    exact: false,
                    stopped: false,
                };
            }
            if top.excludes(h) {
                if round.in_rank_order {
                    // and so does every one after it
                    return Verified {
                        exact: false,
                        stopped: false,
                    };
                }
                exact = false;
                continue;
            }
            if checks.check(h, req, top, &mut round) {
                return stopped();
            }
        }
        rest = tail;
        chunk = chunk.saturating_mul(4);
    }
    Verified {
        exact,
        stopped: false,
    }
}

fn stopped() -> Verified {
    Verified {
        exact: false,
        stopped: true,
    }
}

/// State of the checks of one round.
struct Checks {
    scratch: String,
    checked: u64,
}

impl Checks {
    /// Checks `h`'s phrases and offers it to `top` if they pass and it is accepted; notes the
    /// new cut. True when the plan's stop condition fired.
    fn check<R: Fn(&Hit, &Hit) -> Ordering, A>(
        &mut self,
        h: &Hit,
        req: &EvalRequest<'_, R>,
        top: &mut Collector<'_, R>,
        round: &mut Round<'_, A>,
    ) -> bool
    where
        A: FnMut(usize, u32, &DocMeta, u8) -> bool,
    {
        self.checked += 1;
        if self.checked % crate::index::stop::CHECK_EVERY == 0 && req.plan.stop.check() {
            return true;
        }
        let Some(sv) = req.view.segs.get(h.seg) else {
            return false;
        };
        if !req.plan.phrases_ok(&sv.seg.text(h.doc), &mut self.scratch)
            || !(round.accept)(h.seg, h.doc, &sv.seg.doc(h.doc), h.fields)
        {
            return false;
        }
        top.offer(*h);
        if top.heap.len() == top.k {
            *round.cut = top.heap.peek().and_then(|w| {
                let sv = req.view.segs.get(w.hit.seg)?;
                Some(req.lead.key(&sv.seg, &w.hit))
            });
        }
        false
    }
}

/// Moves the candidates with the `m` smallest lead keys to the front of `items`, sorted by
/// key, and returns how many it moved. In rank order, every candidate tied with the largest of
/// those keys joins them and ties are ordered by `rank` (which orders by the lead key first).
fn take_best<R: Fn(&Hit, &Hit) -> Ordering>(
    items: &mut [(i64, Hit)],
    m: usize,
    in_rank_order: bool,
    rank: &R,
) -> usize {
    let mut lead = items.len();
    if m < items.len() {
        items.select_nth_unstable_by_key(m - 1, |e| e.0);
        lead = m;
        if in_rank_order {
            // ties with the m-th key may rank before it: bring them all to the front
            let bound = items[m - 1].0;
            for j in m..items.len() {
                if items[j].0 == bound {
                    items.swap(lead, j);
                    lead += 1;
                }
            }
        }
    }
    let front = &mut items[..lead];
    if in_rank_order {
        front.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| rank(&a.1, &b.1)));
    } else {
        front.sort_unstable_by_key(|e| e.0);
    }
    lead
}
