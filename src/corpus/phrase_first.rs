//! Quoted phrases rank first and never filter: the turns holding every quoted phrase come
//! first, in the search's own order, then the turns holding only their words (the query with
//! its phrases read as keywords), so a misspelt title or one only in an image still finds its
//! turns. Two evaluations: the query as its plan reads it (phrases required, their checks
//! bounded as in `index::topk`), then its words, which fill the page and give the count.
use super::Snapshot;
use super::query::{Quoted, Search, SearchHit, SearchOutcome};
use crate::index::{Hit, Plan};
use rustc_hash::FxHashSet;

impl Snapshot {
    /// The turns `exact` finds (its plan requires phrases), best first, then those `words`
    /// finds that are not among them. The count is that of the words' matches, which every
    /// phrase holder is one of: what paging reaches.
    pub(super) fn phrase_first(&self, exact: &Search<'_>, words: &Plan) -> SearchOutcome {
        let req = exact.req;
        let first = exact.run();
        let (held, held_exact) = exact.count(&first);
        let quoted = Some(Quoted {
            phrases: exact.plan.phrase_labels(),
            held,
            held_exact,
        });
        if first.stopped || words.is_empty() {
            let hits = first
                .hits
                .iter()
                .skip(req.offset)
                .filter_map(|h| exact.hit(h))
                .collect();
            return SearchOutcome {
                total: held,
                total_exact: held_exact,
                hits,
                searchable: true,
                stopped: first.stopped,
                time: None,
                quoted,
            };
        }
        // fewer than `k` holders are all the holders: `k` more word matches fill the page
        let more = Search {
            plan: words,
            filters: exact.filters.clone(),
            k: exact.k + first.hits.len(),
            ..*exact
        };
        let second = more.run();
        let (total, total_exact) = more.count(&second);
        let holders: FxHashSet<(bool, u64)> = first.hits.iter().map(|h| self.turn_id(h)).collect();
        let rest = second
            .hits
            .iter()
            .filter(|h| !holders.contains(&self.turn_id(h)));
        let hits: Vec<SearchHit> = first
            .hits
            .iter()
            .map(|h| (exact, h))
            .chain(rest.map(|h| (&more, h)))
            .take(exact.k)
            .skip(req.offset)
            .filter_map(|(s, h)| s.hit(h))
            .collect();
        SearchOutcome {
            total: total.max(held),
            total_exact: total_exact && total >= held,
            hits,
            searchable: true,
            stopped: second.stopped,
            time: None,
            quoted,
        }
    }

    /// What identifies a hit's turn across evaluations: its duplicate key when its copies are
    /// collapsed to one, else its document.
    fn turn_id(&self, h: &Hit) -> (bool, u64) {
        let key = self.index.segs[h.seg].seg.key_of(h.doc);
        if self.collapsible(key) {
            (true, key)
        } else {
            (false, (h.seg as u64) << 32 | u64::from(h.doc))
        }
    }
}
