//! Phrase checks on a large index, deferred to the end of an evaluation: checking a phrase reads
//! a document's whole text, so the candidates are checked best first (in rank order, a growing
//! chunk at a time) and the check stops once nothing left can enter the best `k`. The count of
//! such a phrase query is then a lower bound.
use super::{Evaluation, TopK};
use crate::index::scoring::{Hit, Plan, phrases_ok};
use crate::index::segment::DocMeta;
use crate::index::view::IndexView;
use std::cmp::Ordering;

/// Candidates ranked and checked in the first round; each later round takes four times more.
const FIRST_CHUNK: usize = 64;

/// Checks the `deferred` candidates' phrases best first, pushing those that pass and are
/// accepted into `top`.
pub(super) fn verify<C: Fn(&Hit, &Hit) -> Ordering>(
    mut deferred: Vec<Hit>,
    view: &IndexView,
    plan: &Plan,
    top: &mut TopK<'_, C>,
    accept: &mut impl FnMut(usize, u32, &DocMeta, u8) -> bool,
    out: &mut Evaluation,
) {
    let rank = top.cmp;

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
            if top.floor().is_some_and(|f| rank(h, f) != Ordering::Less) {
                // this one and every one after it rank below the best k
                out.exact = false;
                return;
            }
            checked += 1;
            if checked % super::super::stop::CHECK_EVERY == 0 && plan.stop.check() {
                out.stopped = true;
                out.exact = false;
                return;
            }
            let Some(sv) = view.segs.get(h.seg) else {
                continue;
            };
            if !phrases_ok(plan, &sv.seg.text(h.doc), &mut scratch) {
                continue;
            }
            if !accept(h.seg, h.doc, sv.seg.doc(h.doc), h.fields) {
                continue;
            }
            out.total += 1;
            top.push(*h);
        }
        rest = tail;
        chunk = chunk.saturating_mul(4);
    }
}
