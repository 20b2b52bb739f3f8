//! Building a [`Segment`]: documents are tokenized into an interned dictionary and posting
//! lists in a byte pool as they are added; [`SegmentBuilder::finish`] sorts the dictionary and
//! lays everything out as the immutable segment.
use super::columns::DocColumns;
use super::intern::{self, Interner, Terms};
use super::lookahead::Lookahead;
use super::pool::{List, Pool};
use super::schema::{DocBits, DocMeta, FIELD_CONTEXT, FIELD_TOOLS, FIELDS, NewDoc, Tf, put_tf};
use super::segment::Segment;
use super::tokenizer::Tokenizer;
use crate::util::blob::{Blob, Column, Text, TextBuf};
use crate::util::huge::{HugeVec, prefetch};
use crate::util::{SHORT, extend_short, varint};
use rustc_hash::FxHashMap;

/// How many of a document's terms ahead their posting list's tail is prefetched (and twice as
/// many, their state).
const PREFETCH_AHEAD: usize = 8;

/// How many terms ahead in dictionary order a term's postings and bytes are prefetched while a
/// segment is laid out (and twice as many, its state and location).
const LAY_OUT_AHEAD: usize = 8;

/// Most new terms a document is given room for before it is read.
const RESERVE_TERMS: usize = 4096;

/// Accumulates documents and produces a [`Segment`].
#[derive(Default)]
pub(crate) struct SegmentBuilder {
    terms: Interner,
    /// Per term id, everything indexing touches (one place in memory per token); in huge pages
    /// once large.
    state: HugeVec<TermState>,
    /// Every term's postings.
    pool: Pool,
    doc_terms: Vec<(u32, Tf)>,
    docs: Vec<DocMeta>,
    text: TextBuf,
    total_len: u64,
    total_context_len: u64,
    tokenizer: Tokenizer,
    /// Terms between the tokenizer and the interner (their slots being prefetched).
    ahead: Lookahead,
    path_ids: FxHashMap<Box<str>, u32>,
    paths: Vec<Box<str>>,
    path_refs: Vec<(u32, u32, u8)>,
    dups: Vec<(u64, u32)>,
    odd: DocBits,
}

/// A term's postings under construction.
#[derive(Clone, Copy, Default)]
struct TermState {
    list: List,
    df: u32,
    /// Last document with a posting written (`u32::MAX`: none yet).
    prev_doc: u32,
}

/// The interner's per-term word while a document is tokenized: the document (+1, 0 = none)
/// in the high half, the term's position in `doc_terms` in the low half.
#[inline]
fn pack(doc: u32, slot: u32) -> u64 {
    (u64::from(doc) + 1) << 32 | u64::from(slot)
}

/// Counts one occurrence of term `bytes` (of hash `h`) in field `f` of document `d`: interns
/// it, and adds it to the document's terms or bumps its frequency there.
#[inline]
fn count_term(
    terms: &mut Interner,
    state: &mut HugeVec<TermState>,
    doc_terms: &mut Vec<(u32, Tf)>,
    d: u32,
    bytes: &[u8],
    h: u64,
    f: u8,
) {
    let (id, new, extra) = terms.entry_hashed(bytes, h, 0);
    if new {
        state.push(TermState {
            prev_doc: u32::MAX,
            ..TermState::default()
        });
    }
    let f = usize::from(f);
    if *extra >> 32 == u64::from(d) + 1 {
        doc_terms[(*extra & 0xffff_ffff) as usize].1[f] += 1;
    } else {
        *extra = pack(d, doc_terms.len() as u32);
        // its state is read once the document is tokenized: start bringing it in now
        if let Some(s) = state.get(id as usize) {
            prefetch(s);
        }
        // the frequencies are set where they are stored: built on the stack, the one set at a
        // run-time index was read back as a wider load than its stores, which the processor
        // cannot forward (a stall at every new term of a document)
        doc_terms.push((id, [0; FIELDS]));
        if let Some((_, tf)) = doc_terms.last_mut() {
            tf[f] += 1;
        }
    }
}

impl SegmentBuilder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    #[cfg(test)]
    pub(crate) fn doc_count(&self) -> usize {
        self.docs.len()
    }

    /// Bytes of text held so far.
    pub(crate) fn text_bytes(&self) -> usize {
        self.text.len()
    }

    /// Adds a document: its terms counted, their postings appended, the files its tool calls
    /// touched recorded, its text and metadata kept.
    pub(crate) fn add(&mut self, doc: &NewDoc) {
        let d = self.docs.len() as u32;
        let text_start = self.text.len() as u64;
        let ([len, context_len], field_len) = self.count_terms(doc, d);
        self.append_postings(d);
        self.add_file_refs(doc, d);
        if let Some(key) = doc.dup_key.filter(|&k| k != 0) {
            self.dups.push((key, d));
        }
        self.total_len += u64::from(len);
        self.total_context_len += u64::from(context_len);
        self.docs.push(DocMeta {
            conv: doc.conv,
            turn: doc.turn,
            timestamp: doc.timestamp.unwrap_or(i64::MIN),
            len,
            context_len,
            text_start,
            field_len,
            dup_key: doc.dup_key.unwrap_or(0),
        });
    }

    /// Tokenizes the fields of document `d` into `doc_terms` (each term with its frequency per
    /// field) and appends their text. Returns the terms counted in the own fields and in the
    /// context, and each field's length in bytes.
    #[inline]
    fn count_terms(&mut self, doc: &NewDoc, d: u32) -> ([u32; 2], [u32; FIELDS]) {
        self.doc_terms.clear();
        // room for the terms a document this long usually brings (a longer one may still
        // grow the table mid-document)
        let bytes: usize = doc.fields.iter().map(|t| t.len()).sum();
        self.terms.reserve_fresh(bytes.min(RESERVE_TERMS), 0);
        // terms per field group: the own fields, then the context
        let mut lens = [0u32; 2];
        let mut field_len = [0u32; FIELDS];
        for (f, text) in doc.fields.iter().enumerate() {
            if f == FIELD_CONTEXT && self.tokenizer.take_odd() {
                // whether the turn's own words are all terms (the context is not searched for
                // phrases)
                self.odd.set(d);
            }
            self.text.push_str(text);
            field_len[f] = text.len() as u32;
            let len = &mut lens[usize::from(f == FIELD_CONTEXT)];
            let Self {
                terms,
                state,
                doc_terms,
                tokenizer,
                ahead,
                ..
            } = self;
            tokenizer.for_each_term(text, |term| {
                *len += 1;
                let bytes = term.as_bytes();
                let h = intern::hash(bytes);
                if !Lookahead::fits(bytes) {
                    while let Some((t, h, f)) = ahead.pop() {
                        count_term(terms, state, doc_terms, d, t, h, f);
                    }
                    count_term(terms, state, doc_terms, d, bytes, h, f as u8);
                    return;
                }
                terms.prefetch(h);
                if let Some((t, h, f)) = ahead.push(bytes, h, f as u8) {
                    count_term(terms, state, doc_terms, d, t, h, f);
                }
            });
        }
        let Self {
            terms,
            state,
            doc_terms,
            ahead,
            ..
        } = self;
        while let Some((t, h, f)) = ahead.pop() {
            count_term(terms, state, doc_terms, d, t, h, f);
        }
        // the context's odd words do not count
        self.tokenizer.take_odd();
        (lens, field_len)
    }

    /// Appends document `d` to the posting list of each term in `doc_terms`.
    #[inline]
    fn append_postings(&mut self, d: u32) {
        // each term's state and the tail of its posting list are elsewhere in memory: they are
        // prefetched, the state some terms ahead and the tail (which the state locates) fewer
        let doc_terms = &self.doc_terms;
        for (i, &(id, tf)) in doc_terms.iter().enumerate() {
            if let Some(&(far, _)) = doc_terms.get(i + 2 * PREFETCH_AHEAD) {
                prefetch(&self.state[far as usize]);
            }
            if let Some(&(near, _)) = doc_terms.get(i + PREFETCH_AHEAD) {
                self.pool.prefetch(&self.state[near as usize].list);
            }
            let t = &mut self.state[id as usize];
            let delta = if t.prev_doc == u32::MAX {
                d
            } else {
                d - t.prev_doc
            };
            let (pool, list) = (&mut self.pool, &mut t.list);
            varint::put_with(u64::from(delta), |b| pool.push(list, b));
            put_tf(&tf, |b| pool.push(list, b));
            t.prev_doc = d;
            t.df += 1;
        }
    }

    /// Records the files document `d`'s tool calls touched in the segment's file table.
    fn add_file_refs(&mut self, doc: &NewDoc, d: u32) {
        for (op, path) in super::facts::files(doc.fields[FIELD_TOOLS]) {
            let id = match self.path_ids.get(path) {
                Some(&id) => id,
                None => {
                    let id = self.paths.len() as u32;
                    self.path_ids.insert(path.into(), id);
                    self.paths.push(path.into());
                    id
                }
            };
            self.path_refs.push((id, d, op));
        }
    }

    /// Sorts the dictionary and lays postings out contiguously.
    pub(crate) fn finish(mut self, id: u64) -> Segment {
        let terms = std::mem::take(&mut self.terms).into_terms();
        let text = self.take_text();
        self.lay_out(id, &terms, text)
    }

    /// [`Self::finish`], leaving the builder empty for the next segment with its big tables
    /// kept: the interner's slots and term buffers, the per-term state and the posting pool stay
    /// resident, so a worker of the first build does not fault in and zero fresh memory for
    /// every segment.
    pub(crate) fn finish_reuse(&mut self, id: u64) -> Segment {
        let terms = self.terms.take_terms();
        let text = self.take_text();
        let seg = self.lay_out(id, &terms, text);
        self.terms.recycle(terms);
        self.state.clear();
        self.pool.clear();
        self.docs.clear();
        self.path_ids.clear();
        self.path_refs.clear();
        self.total_len = 0;
        self.total_context_len = 0;
        seg
    }

    /// The text of the segment being finished, without spare room (and without a copy).
    fn take_text(&mut self) -> Text {
        std::mem::take(&mut self.text).freeze()
    }

    /// The segment of what was added (`terms`: the interner's terms, and `text`, taken out);
    /// takes the paths, duplicate keys and marks out of the builder.
    fn lay_out(&mut self, id: u64, terms: &Terms, text: Text) -> Segment {
        let order = super::termsort::sorted_ids(terms);
        let total_term_bytes = terms.total_bytes();
        let total_post = self.pool.written();
        let mut path_order: Vec<u32> = (0..self.paths.len() as u32).collect();
        path_order.sort_unstable_by(|&a, &b| self.paths[a as usize].cmp(&self.paths[b as usize]));
        let mut path_rank = vec![0u32; self.paths.len()];
        for (rank, &p) in path_order.iter().enumerate() {
            path_rank[p as usize] = rank as u32;
        }
        let mut path_refs: Vec<(u32, u32, u8)> = self
            .path_refs
            .iter()
            .map(|&(p, d, op)| (path_rank[p as usize], d, op))
            .collect();
        path_refs.sort_unstable();
        let mut old_paths = std::mem::take(&mut self.paths);
        let paths: Vec<Box<str>> = path_order
            .iter()
            .map(|&p| std::mem::take(&mut old_paths[p as usize]))
            .collect();
        let mut dups = std::mem::take(&mut self.dups);
        dups.sort_unstable();
        let mut term_bytes = Vec::with_capacity(total_term_bytes + SHORT);
        let mut term_offsets = Vec::with_capacity(order.len() + 1);
        let mut post_offsets = Vec::with_capacity(order.len() + 1);
        let mut dfs = Vec::with_capacity(order.len());
        let mut postings: Vec<u8> = Vec::with_capacity(total_post + SHORT);
        let state = &self.state;
        // the terms come in byte order, so their states, bytes and postings are read from all
        // over memory: each is prefetched some terms ahead (its state and location twice as far,
        // since the postings' and bytes' places are read from them)
        for (i, &t) in order.iter().enumerate() {
            if let Some(&far) = order.get(i + 2 * LAY_OUT_AHEAD) {
                prefetch(&state[far as usize]);
                terms.prefetch(far);
            }
            if let Some(&near) = order.get(i + LAY_OUT_AHEAD) {
                self.pool.prefetch_head(&state[near as usize].list);
                terms.prefetch_bytes(near);
            }
            let t = t as usize;
            term_offsets.push(term_bytes.len() as u32);
            extend_short(&mut term_bytes, terms.get(t as u32));
            post_offsets.push(postings.len() as u64);
            self.pool.copy_out(&state[t].list, &mut postings);
            dfs.push(state[t].df);
        }
        term_offsets.push(term_bytes.len() as u32);
        post_offsets.push(postings.len() as u64);
        let mut seg = Segment {
            id,
            paths,
            path_refs,
            dup_keys: Column::from(dups.iter().map(|r| r.0).collect::<Vec<_>>()),
            dup_docs: Column::from(dups.iter().map(|r| r.1).collect::<Vec<_>>()),
            term_bytes: Blob::from(term_bytes),
            term_offsets: Column::from(term_offsets),
            post_offsets: Column::from(post_offsets),
            dfs: Column::from(dfs),
            postings: Blob::from(postings),
            docs: DocColumns::from_metas(&self.docs),
            odd: std::mem::take(&mut self.odd),
            blockmax: Default::default(),
            forms: Default::default(),
            text,
            total_len: self.total_len,
            total_context_len: self.total_context_len,
        };
        seg.derive();
        seg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::schema::PostingCursor;

    fn doc<'a>(conv: u32, user: &'a str, assistant: &'a str) -> NewDoc<'a> {
        NewDoc {
            conv,
            turn: 0,
            timestamp: None,
            dup_key: None,
            fields: [user, assistant, "", ""],
        }
    }

    /// The documents of one segment of [`a_reused_builder_lays_out_what_a_fresh_one_does`]:
    /// overlapping vocabularies, tool paths, duplicate keys and a marked turn, so that every
    /// table the builder keeps or takes out is exercised.
    fn batch(seed: usize, n: usize) -> Vec<(String, String, String, Option<u64>)> {
        (0..n)
            .map(|i| {
                let k = seed * 1000 + i;
                let odd = if i % 50 == 0 { " ke\u{301}rr" } else { "" };
                (
                    format!("word{} shared common{} t{k}{odd}", k % 97, i % 5),
                    format!("reply{} shared longerthansixteenbytes{}", k % 13, k % 3),
                    format!("Read src/f{}.rs", k % 7),
                    (i % 4 == 0).then_some(k as u64 + 1),
                )
            })
            .collect()
    }

    fn add_all(b: &mut SegmentBuilder, docs: &[(String, String, String, Option<u64>)]) {
        for (i, (u, a, t, dup)) in docs.iter().enumerate() {
            b.add(&NewDoc {
                conv: i as u32,
                turn: i as u32,
                timestamp: Some(i as i64),
                dup_key: *dup,
                fields: [u, a, t, ""],
            });
        }
    }

    #[test]
    fn a_reused_builder_lays_out_what_a_fresh_one_does() {
        use crate::index::segment_codec::write_segment;
        use crate::util::codec::Encoder;
        let encoded = |seg: &Segment| {
            let mut bytes = Vec::new();
            write_segment(&mut Encoder::new(&mut bytes), seg).expect("write");
            bytes
        };
        let mut reused = SegmentBuilder::new();
        // the first batch grows the tables well past what the later, smaller ones need
        for (round, n) in [(0, 3000), (1, 40), (2, 1), (3, 700)] {
            let docs = batch(round, n);
            add_all(&mut reused, &docs);
            let mut fresh = SegmentBuilder::new();
            add_all(&mut fresh, &docs);
            let (a, b) = (
                reused.finish_reuse(round as u64),
                fresh.finish(round as u64),
            );
            assert_eq!(a.doc_count(), n, "round {round}");
            assert_eq!(encoded(&a), encoded(&b), "round {round}");
            assert!(a.lookup("shared").is_some());
        }
        assert!(reused.text.is_empty() && reused.docs.is_empty() && reused.dups.is_empty());
    }

    #[test]
    fn builds_postings_with_field_frequencies() {
        let mut b = SegmentBuilder::new();
        b.add(&doc(0, "alpha beta", "beta beta"));
        b.add(&doc(1, "gamma", ""));
        b.add(&doc(2, "beta", ""));
        let seg = b.finish(7);
        assert_eq!(seg.doc_count(), 3);
        let list = seg.lookup("beta").unwrap();
        assert_eq!(list.df, 2);
        let mut c = PostingCursor::new(list);
        assert_eq!((c.doc, c.tf), (0, [1, 2, 0, 0]));
        c.next();
        assert_eq!((c.doc, c.tf), (2, [1, 0, 0, 0]));
        c.next();
        assert_eq!(c.doc, u32::MAX);
        assert!(seg.lookup("delta").is_none());
        assert_eq!(seg.text(0).assistant, "beta beta");
        let r = seg.prefix_range("be");
        assert_eq!(seg.term_str(r.start), "beta");
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn escapes_large_frequencies() {
        let mut b = SegmentBuilder::new();
        let many = "x ".repeat(300);
        b.add(&doc(0, &many, "x"));
        let seg = b.finish(1);
        let c = PostingCursor::new(seg.lookup("x").unwrap());
        assert_eq!(c.tf, [300, 1, 0, 0]);
    }
}
