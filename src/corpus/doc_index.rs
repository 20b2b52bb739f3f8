//! The document index of the corpus: the segments and their dead documents (the view queries
//! read), where each conversation's turns live in them, which duplicate-turn keys are held
//! twice, and the update in progress (turns added, documents to kill), committed into a new
//! segment and kept in shape by the merge policy of [`crate::index::merge`].
use super::batch::Batch;
use super::catalog::ConvId;
use super::dups::DupTracker;
use super::turn_locations::TurnLocations;
use crate::index::{IndexView, SegView, Segment, SegmentBuilder, Tokenizer, Tombstones, merge};
use crate::transcript::Turn;
use crate::util::codec::corrupt;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::sync::Arc;

/// How one segment changed from one generation to the next (see `delta`).
pub(super) enum SegmentChange {
    Same,
    Dead(Tombstones),
    New(Box<Segment>, Tombstones),
}

/// The segments, the turns' locations in them, and the update in progress.
pub(super) struct DocIndex {
    view: IndexView,
    locations: FxHashMap<ConvId, TurnLocations>,
    dups: DupTracker,
    /// The id the next finished segment gets.
    next_seg: u64,
    /// Re-tokenizes a killed document's text to take its terms out of the statistics.
    tokenizer: Tokenizer,
    /// Turns added since the last commit.
    pending: Batch,
    /// Documents to kill at the next commit: (segment id, document).
    kills: Vec<(u64, u32)>,
    /// Conversations whose locations changed since [`DocIndex::clear_changed`].
    changed: BTreeSet<ConvId>,
    /// Segments merged away so far.
    merged: u64,
    /// Segments with ids below this are the base (the first build's, or restored): left out
    /// of tier merges (see [`merge::pick`]).
    base_below: u64,
}

impl Default for DocIndex {
    fn default() -> Self {
        DocIndex {
            view: IndexView::default(),
            locations: FxHashMap::default(),
            dups: DupTracker::default(),
            next_seg: 1,
            tokenizer: Tokenizer::new(),
            pending: Batch::default(),
            kills: Vec::new(),
            changed: BTreeSet::new(),
            merged: 0,
            base_below: 0,
        }
    }
}

impl DocIndex {
    /// A document index read back from the persistent index: every location must point into
    /// one of the segments.
    pub(super) fn restored(
        view: IndexView,
        locations: Vec<(ConvId, TurnLocations)>,
        dups: DupTracker,
        next_seg: u64,
    ) -> io::Result<Self> {
        for (_, locs) in &locations {
            if !locs.locs().all(|loc| located(&view, loc)) {
                return Err(corrupt("document location"));
            }
        }
        Ok(DocIndex {
            view,
            locations: locations.into_iter().collect(),
            dups,
            next_seg,
            base_below: next_seg,
            ..DocIndex::default()
        })
    }

    pub(super) fn view(&self) -> &IndexView {
        &self.view
    }

    /// Live documents (turns).
    pub(super) fn live_docs(&self) -> u64 {
        self.view.live_docs
    }

    /// Whether any turn of `conv` has a document here.
    pub(super) fn has_locations(&self, conv: ConvId) -> bool {
        self.locations.contains_key(&conv)
    }

    pub(super) fn locations(&self, conv: ConvId) -> Option<&TurnLocations> {
        self.locations.get(&conv)
    }

    /// Every conversation's locations, by conversation id.
    pub(super) fn sorted_locations(&self) -> Vec<(ConvId, &TurnLocations)> {
        let mut all: Vec<(ConvId, &TurnLocations)> =
            self.locations.iter().map(|(&c, l)| (c, l)).collect();
        all.sort_by_key(|(c, _)| *c);
        all
    }

    /// The id the next segment gets.
    pub(super) fn next_seg(&self) -> u64 {
        self.next_seg
    }

    /// Segment ids below `next` are taken (by the first build's workers, or a restored state).
    pub(super) fn set_next_seg(&mut self, next: u64) {
        self.next_seg = next;
    }

    /// Every segment held now is the base: left out of tier merges, so that live changes
    /// after the first build never wait for most of the index to be merged.
    pub(super) fn mark_base(&mut self) {
        self.base_below = self.next_seg;
    }

    /// Segments merged away so far, and the count to continue from (another server's).
    pub(super) fn merged(&self) -> u64 {
        self.merged
    }

    pub(super) fn set_merged(&mut self, merged: u64) {
        self.merged = merged;
    }

    /// Conversations whose locations changed since [`Self::clear_changed`].
    pub(super) fn changed(&self) -> &BTreeSet<ConvId> {
        &self.changed
    }

    pub(super) fn clear_changed(&mut self) {
        self.changed.clear();
    }

    /// Adds turn `turn` of `conv` to the next commit, with the prompt of the turn before it
    /// as its context (from the turns added, else from the index).
    pub(super) fn add_turn(&mut self, conv: ConvId, turn: &Turn) {
        let n = turn.number;
        let earlier = match n {
            0 => None,
            _ if self.pending.follows_last(conv, n) => None,
            _ => self.indexed_prompt(conv, n - 1),
        };
        self.pending.add_after(conv, turn, earlier.as_deref());
    }

    /// The prompt of turn `t` of `conv` as the index holds it.
    fn indexed_prompt(&self, conv: ConvId, t: u32) -> Option<String> {
        let locs = self.locations.get(&conv)?;
        if t as usize >= locs.len() {
            return None;
        }
        let (seg, doc) = locs.get(t as usize);
        let sv = &self.view.segs[self.view.seg_index(seg)?];
        (doc < sv.seg.doc_count() as u32).then(|| sv.seg.text(doc).user.to_owned())
    }

    /// The documents of turns `from..` of `conv` die at the next commit; the conversation has
    /// locations from now on (none yet when new).
    pub(super) fn replace_from(&mut self, conv: ConvId, from: u32) {
        self.changed.insert(conv);
        let locs = self.locations.entry(conv).or_default();
        locs.truncate(from as usize, &mut self.kills);
    }

    /// The documents of turns `from..` of `conv` die at the next commit, if it has any.
    pub(super) fn truncate(&mut self, conv: ConvId, from: u32) {
        self.changed.insert(conv);
        if let Some(locs) = self.locations.get_mut(&conv) {
            locs.truncate(from as usize, &mut self.kills);
        }
    }

    /// Every document of `conv` dies at the next commit, and it has no locations any more.
    pub(super) fn forget(&mut self, conv: ConvId) {
        self.changed.insert(conv);
        if let Some(locs) = self.locations.remove(&conv) {
            self.kills.extend(locs.locs());
        }
    }

    /// Adds a finished segment and records where its documents went. `new_docs`: the
    /// documents are new to the index (not moved by a merge), so they count for duplicate
    /// tracking.
    pub(super) fn place(&mut self, seg: Segment, docs: &[(ConvId, u32)], new_docs: bool) {
        let id = seg.id;
        if new_docs {
            for &key in seg.keys() {
                self.dups.add(key);
            }
        }
        for (doc, &(conv, turn)) in docs.iter().enumerate() {
            self.changed.insert(conv);
            let locs = self.locations.entry(conv).or_default();
            locs.set(turn as usize, (id, doc as u32));
        }
        self.view.add(Arc::new(seg));
    }

    /// Makes the update in progress one: the turns added become a segment, the documents to
    /// kill die, empty segments go and the merge policy keeps the segments in shape.
    pub(super) fn commit(&mut self) {
        let batch = std::mem::take(&mut self.pending);
        if !batch.is_empty() {
            let id = self.take_seg_id();
            let (seg, docs) = batch.finish(id);
            self.place(seg, &docs, true);
        }
        let mut by_seg: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for (seg, doc) in std::mem::take(&mut self.kills) {
            by_seg.entry(seg).or_default().push(doc);
        }
        for (seg, mut docs) in by_seg {
            docs.sort_unstable();
            docs.dedup();
            if let Some(i) = self.view.seg_index(seg) {
                let sv = &self.view.segs[i];
                for &d in &docs {
                    if (d as usize) < sv.seg.doc_count() && !sv.dead.contains(d) {
                        self.dups.remove(sv.seg.doc(d).dup_key);
                    }
                }
            }
            self.view.kill(seg, &docs, &mut self.tokenizer);
        }
        self.view.segs.retain(|s| s.live_count() > 0);
        while let Some(ids) = merge::pick(&self.view, self.base_below) {
            self.merge(&ids);
        }
    }

    fn take_seg_id(&mut self) -> u64 {
        let id = self.next_seg;
        self.next_seg += 1;
        id
    }

    /// Copies the live documents of `ids` into one new segment and drops the old ones.
    fn merge(&mut self, ids: &[u64]) {
        let mut builder = SegmentBuilder::new();
        let docs = merge::copy_live(&self.view, ids, &mut builder);
        for &id in ids {
            self.view.remove_segment(id);
        }
        self.merged += ids.len() as u64;
        if !docs.is_empty() {
            let id = self.take_seg_id();
            self.place(builder.finish(id), &docs, false);
        }
    }

    /// Keys held by two or more live documents, as of now.
    pub(super) fn dup_multi(&mut self) -> Arc<FxHashSet<u64>> {
        self.dups.multi(&self.view)
    }

    /// Takes another index's segments, locations and duplicate keys (the same state, mapped
    /// from the file it was written to); the ids to hand out stay.
    pub(super) fn adopt(&mut self, other: DocIndex) {
        self.view = other.view;
        self.locations = other.locations;
        self.dups = other.dups;
    }

    /// The segment `id` of the view (a delta naming one this state lacks is of another
    /// lineage).
    pub(super) fn segment(&self, id: u64) -> io::Result<Arc<Segment>> {
        self.view
            .segs
            .iter()
            .find(|s| s.seg.id == id)
            .map(|s| Arc::clone(&s.seg))
            .ok_or_else(|| corrupt("delta names a segment this state lacks"))
    }

    /// Installs another server's generation: the whole ordered list of segments (each the
    /// same, with other tombstones, or new) and the conversations whose locations changed.
    /// Nothing changes unless every segment named is known and every location points into
    /// the new view.
    pub(super) fn install(
        &mut self,
        segs: Vec<(u64, SegmentChange)>,
        locations: Vec<(ConvId, Option<TurnLocations>)>,
    ) -> io::Result<()> {
        let view = self.next_view(segs)?;
        let all_located = locations.iter().all(|(_, l)| {
            l.as_ref()
                .is_none_or(|l| l.locs().all(|loc| located(&view, loc)))
        });
        if !all_located {
            return Err(corrupt("document location"));
        }
        for gone in self
            .view
            .segs
            .iter()
            .filter(|o| view.seg_index(o.seg.id).is_none())
        {
            for &key in gone.seg.keys() {
                self.dups.touch(key);
            }
        }
        self.view = view;
        for (conv, locs) in locations {
            match locs {
                Some(l) => self.locations.insert(conv, l),
                None => self.locations.remove(&conv),
            };
        }
        Ok(())
    }

    /// The view made of the current one and `segs`; the duplicate keys of documents that
    /// came or went are noted for a recount.
    fn next_view(&mut self, segs: Vec<(u64, SegmentChange)>) -> io::Result<IndexView> {
        let mut view = IndexView::default();
        for (id, change) in segs {
            let prior = self.view.segs.iter().find(|s| s.seg.id == id);
            let sv = match (change, prior) {
                (SegmentChange::Same, Some(p)) => p.clone(),
                (SegmentChange::Dead(dead), Some(p)) => {
                    for d in 0..p.seg.doc_count() as u32 {
                        if dead.contains(d) && !p.dead.contains(d) {
                            self.dups.touch(p.seg.doc(d).dup_key);
                        }
                    }
                    SegView {
                        seg: Arc::clone(&p.seg),
                        dead: Arc::new(dead),
                    }
                }
                (SegmentChange::New(seg, dead), _) => {
                    for &key in seg.keys() {
                        self.dups.touch(key);
                    }
                    SegView {
                        seg: Arc::new(*seg),
                        dead: Arc::new(dead),
                    }
                }
                (_, None) => return Err(corrupt("delta names a segment this state lacks")),
            };
            view.push(sv);
        }
        Ok(view)
    }

    /// Heap bytes held, by structure (what is not a view of a mapped file), for a log line.
    pub(super) fn heap_parts(&self) -> Vec<(&'static str, usize)> {
        let mut parts: Vec<(&'static str, usize)> = Vec::new();
        for sv in &self.view.segs {
            for (i, (name, bytes)) in sv.seg.heap_parts().into_iter().enumerate() {
                match parts.get_mut(i) {
                    Some(p) => p.1 += bytes,
                    None => parts.push((name, bytes)),
                }
            }
        }
        let tombstones = self.view.segs.iter().map(|s| s.dead.heap_bytes()).sum();
        let locations = self
            .locations
            .values()
            .map(|l| l.heap_bytes() + 32)
            .sum::<usize>();
        parts.extend([
            ("tombstones", tombstones),
            ("document locations", locations),
            ("duplicate tracking", self.dups.heap_bytes()),
        ]);
        parts
    }
}

/// Whether `(segment, document)` is a document of `view`.
fn located(view: &IndexView, (seg, doc): (u64, u32)) -> bool {
    view.segs
        .iter()
        .any(|s| s.seg.id == seg && (doc as usize) < s.seg.doc_count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(number: u32, text: &str, dup_key: Option<u64>) -> Turn {
        Turn {
            number,
            user_text: text.into(),
            dup_key,
            ..Turn::default()
        }
    }

    /// (segment id, document) of every turn of `conv`.
    fn locs(docs: &DocIndex, conv: ConvId) -> Vec<(u64, u32)> {
        docs.locations(conv)
            .map(|l| l.locs().collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_commit_makes_a_segment_and_records_where_each_turn_went() {
        let mut docs = DocIndex::default();
        docs.replace_from(7, 0);
        docs.add_turn(7, &turn(0, "alpha", None));
        docs.add_turn(7, &turn(1, "beta", None));
        docs.commit();
        assert_eq!(docs.live_docs(), 2);
        assert_eq!(locs(&docs, 7), [(1, 0), (1, 1)]);
        assert_eq!(docs.next_seg(), 2);
        assert!(docs.changed().contains(&7));
        docs.clear_changed();
        assert!(docs.changed().is_empty());
    }

    #[test]
    fn replaced_turns_die_at_the_next_commit_and_forgotten_ones_leave() {
        let mut docs = DocIndex::default();
        for (conv, n) in [(1, 3), (2, 2)] {
            docs.replace_from(conv, 0);
            for t in 0..n {
                docs.add_turn(conv, &turn(t, "words", None));
            }
        }
        docs.commit();
        assert_eq!(docs.live_docs(), 5);
        // turn 2 of conversation 1 is rewritten: its old document dies
        docs.replace_from(1, 2);
        docs.add_turn(1, &turn(2, "new words", None));
        assert_eq!(docs.live_docs(), 5, "nothing changes before the commit");
        docs.commit();
        assert_eq!(docs.live_docs(), 5);
        assert_eq!(locs(&docs, 1), [(1, 0), (1, 1), (2, 0)]);
        docs.forget(2);
        docs.commit();
        assert_eq!(docs.live_docs(), 3);
        assert!(!docs.has_locations(2));
        // truncating a conversation without locations creates none
        docs.truncate(9, 0);
        assert!(!docs.has_locations(9));
        docs.replace_from(9, 0);
        assert!(docs.has_locations(9));
    }

    #[test]
    fn many_small_commits_are_merged_and_locations_follow() {
        let mut docs = DocIndex::default();
        for t in 0..20 {
            docs.replace_from(1, t);
            docs.add_turn(1, &turn(t, "one more turn", None));
            docs.commit();
        }
        assert_eq!(docs.live_docs(), 20);
        assert!(docs.merged() > 0);
        assert!(
            docs.view().segs.len() < 4,
            "{} segments",
            docs.view().segs.len()
        );
        let ids: Vec<u64> = docs.view().segs.iter().map(|s| s.seg.id).collect();
        let l = locs(&docs, 1);
        assert_eq!(l.len(), 20);
        assert!(l.iter().all(|(seg, _)| ids.contains(seg)));
        for (t, &(seg, d)) in l.iter().enumerate() {
            let i = docs.view().seg_index(seg).expect("segment");
            assert_eq!(docs.view().segs[i].seg.doc(d).turn, t as u32);
        }
    }

    #[test]
    fn repeated_keys_come_and_go_with_their_documents() {
        let mut docs = DocIndex::default();
        docs.replace_from(1, 0);
        docs.add_turn(1, &turn(0, "copied", Some(42)));
        docs.replace_from(2, 0);
        docs.add_turn(2, &turn(0, "copied", Some(42)));
        docs.commit();
        assert!(docs.dup_multi().contains(&42));
        docs.forget(2);
        docs.commit();
        assert!(!docs.dup_multi().contains(&42));
    }

    #[test]
    fn installing_a_generation_checks_segments_and_locations() {
        let mut docs = DocIndex::default();
        docs.replace_from(1, 0);
        docs.add_turn(1, &turn(0, "kept", None));
        docs.commit();
        let change = || {
            let mut batch = Batch::default();
            batch.add(2, &turn(0, "new", None));
            let (seg, _) = batch.finish(5);
            SegmentChange::New(Box::new(seg), Tombstones::default())
        };
        // a location past the new view: refused, nothing changed
        let bad = TurnLocations::Owned(vec![(5, 3)]);
        let refused = docs.install(
            vec![(1, SegmentChange::Same), (5, change())],
            vec![(2, Some(bad))],
        );
        assert!(refused.is_err());
        assert_eq!(docs.view().segs.len(), 1);
        // a segment this state lacks: refused
        assert!(
            docs.install(vec![(3, SegmentChange::Same)], vec![])
                .is_err()
        );
        let good = TurnLocations::Owned(vec![(5, 0)]);
        docs.install(
            vec![(1, SegmentChange::Same), (5, change())],
            vec![(2, Some(good)), (1, None)],
        )
        .expect("installed");
        assert_eq!(docs.live_docs(), 2);
        assert_eq!(locs(&docs, 2), [(5, 0)]);
        assert!(!docs.has_locations(1));
    }

    #[test]
    fn a_restored_index_refuses_locations_outside_its_segments() {
        let mut docs = DocIndex::default();
        docs.replace_from(1, 0);
        docs.add_turn(1, &turn(0, "text", None));
        docs.commit();
        let view = docs.view().clone();
        let ok = vec![(1, TurnLocations::Owned(vec![(1, 0)]))];
        assert!(DocIndex::restored(view.clone(), ok, DupTracker::restored(&view), 2).is_ok());
        let bad = vec![(1, TurnLocations::Owned(vec![(1, 1)]))];
        assert!(DocIndex::restored(view.clone(), bad, DupTracker::restored(&view), 2).is_err());
    }
}
