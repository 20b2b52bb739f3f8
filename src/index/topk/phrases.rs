//! Phrase checks on a large index, deferred to the end of an evaluation: checking a phrase reads
//! a document's whole text, so the candidates are checked best first (in rank order, a growing
//! chunk at a time) and the check stops once nothing left can enter the best `k`. The count of
//! such a phrase query is then a lower bound.
use super::{Collector, EvalRequest};
use crate::index::schema::DocMeta;
use crate::index::scoring::Hit;
use std::cmp::Ordering;

/// Candidates ranked and checked in the first round; each later round takes four times more.
const FIRST_CHUNK: usize = 64;

/// How the deferred checks ended.
pub(super) struct Verified {
    /// False when candidates were left unchecked (the count is a lower bound).
    pub exact: bool,
    /// True when the plan's stop condition ended the checks.
    pub stopped: bool,
}

/// Checks the `deferred` candidates' phrases best first, offering those that pass and are
/// accepted to `top`.
pub(super) fn verify<R: Fn(&Hit, &Hit) -> Ordering>(
    mut deferred: Vec<Hit>,
    req: &EvalRequest<'_, R>,
    top: &mut Collector<'_, R>,
    accept: &mut impl FnMut(usize, u32, &DocMeta, u8) -> bool,
) -> Verified {
    let rank = &req.rank;
    let plan = req.plan;
    let mut scratch = String::new();
    let mut rest: &mut [Hit] = &mut deferred;
    let mut chunk = FIRST_CHUNK;
    let mut checked = 0u64;
    while !rest.is_empty() {
        let m = chunk.min(rest.len());
        if m < rest.len() {
            rest.select_nth_unstable_by(m - 1, rank);
        }
        let (head, tail) = rest.split_at_mut(m);
        head.sort_by(rank);
        for h in head.iter() {
            if top.excludes(h) {
                // this one and every one after it rank below the best k
                return Verified {
                    exact: false,
                    stopped: false,
                };
            }
            checked += 1;
            if checked % crate::index::stop::CHECK_EVERY == 0 && plan.stop.check() {
                return Verified {
                    exact: false,
                    stopped: true,
                };
            }
            let Some(sv) = req.view.segs.get(h.seg) else {
                continue;
            };
            if !plan.phrases_ok(&sv.seg.text(h.doc), &mut scratch) {
                continue;
            }
            if !accept(h.seg, h.doc, sv.seg.doc(h.doc), h.fields) {
                continue;
            }
            top.offer(*h);
        }
        rest = tail;
        chunk = chunk.saturating_mul(4);
    }
    Verified {
        exact: true,
        stopped: false,
    }
}
