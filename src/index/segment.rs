//! Immutable index segments: a sorted term dictionary, compact postings (delta-varint doc ids
//! with per-field term frequencies), per-document metadata and the one stored copy of each
//! turn's text. A segment is built once and then only read; updates add new segments and mark
//! replaced documents dead (see `view`). Restored segments hold no copies of their arrays: they
//! are views of the mapped cache file ([`crate::util::blob`]).
use super::blockmax::BlockMax;
use super::columns::DocColumns;
use super::intern::{Interner, Terms};
use super::pool::{List, Pool};
use super::schema::{
    DocBits, DocMeta, DocText, FIELD_TOOLS, FIELDS, NewDoc, PostingList, Tf, put_tf,
};
use super::scoring::Bm25;
use super::tokenizer::Tokenizer;
use crate::util::blob::{Blob, Column, Text};
use crate::util::huge::HugeVec;
use crate::util::varint;
use rustc_hash::FxHashMap;

/// An immutable segment.
#[derive(Debug, Default)]
pub struct Segment {
    /// Unique id (never reused within a process).
    pub id: u64,
    pub(super) term_bytes: Blob,
    /// Start of each term in `term_bytes` (sorted terms), plus one final end offset.
    pub(super) term_offsets: Column<u32>,
    /// Start of each term's postings in `postings`, plus one final end offset.
    pub(super) post_offsets: Column<u64>,
    pub(super) dfs: Column<u32>,
    /// Owned, or a range of the mapped cache file it was restored from (like every array here).
    pub(super) postings: Blob,
    pub(super) docs: DocColumns,
    pub(super) text: Text,
    /// Documents with a word that is not one of their terms (see `tokenizer::words`).
    pub(super) odd: DocBits,
    pub(super) total_len: u64,
    /// Distinct file paths touched by the documents' tool calls, sorted.
    pub(super) paths: Vec<Box<str>>,
    /// (path index, document, op), sorted by path then document.
    pub(super) path_refs: Vec<(u32, u32, u8)>,
    /// Duplicate keys of the documents that have one, sorted, and those documents (sorted
    /// by (key, document)).
    pub(super) dup_keys: Column<u64>,
    pub(super) dup_docs: Column<u32>,
    /// Block-max metadata of the long posting lists. Derived.
    pub(super) blockmax: BlockMax,
}

impl Segment {
    pub fn doc_count(&self) -> usize {
        self.docs.count()
    }

    pub fn term_count(&self) -> usize {
        self.dfs.len()
    }

    pub fn total_len(&self) -> u64 {
        self.total_len
    }

    /// Document `d`'s metadata, gathered from the columns.
    #[inline]
    pub fn doc(&self, d: u32) -> DocMeta {
        self.docs.get(d)
    }

    /// Every document's conversation.
    pub fn convs(&self) -> &[u32] {
        self.docs.convs()
    }

    /// Every document's duplicate key (0 = none).
    pub fn keys(&self) -> &[u64] {
        self.docs.keys()
    }

    /// Documents with a word that is not one of their terms: only the others surely lack a
    /// phrase whose word-terms they lack.
    pub fn odd_words(&self) -> &DocBits {
        &self.odd
    }

    /// Length of document `d`.
    #[inline]
    pub fn len_of(&self, d: u32) -> u32 {
        self.docs.lens()[d as usize]
    }

    /// Duplicate key of document `d` (0 = none).
    #[inline]
    pub fn key_of(&self, d: u32) -> u64 {
        self.docs.keys()[d as usize]
    }

    /// Timestamp of document `d` (epoch ms, `i64::MIN` when unknown).
    #[inline]
    pub fn timestamp_of(&self, d: u32) -> i64 {
        self.docs.timestamp(d)
    }

    /// Computes the block-max metadata.
    pub(super) fn derive(&mut self) {
        let lists = (0..self.term_count() as u32).map(|id| self.postings(id));
        self.blockmax = BlockMax::build(lists, self.docs.lens(), &Bm25::default());
    }

    pub fn blockmax(&self) -> &BlockMax {
        &self.blockmax
    }

    pub fn text(&self, d: u32) -> DocText<'_> {
        let [a, b, c, e] = self.docs.spans(d);
        DocText {
            user: &self.text[a..b],
            assistant: &self.text[b..c],
            tools: &self.text[c..e],
        }
    }

    fn term(&self, i: usize) -> &[u8] {
        &self.term_bytes[self.term_offsets[i] as usize..self.term_offsets[i + 1] as usize]
    }

    /// Term id of `term`, by binary search.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        let (mut lo, mut hi) = (0usize, self.dfs.len());
        let key = term.as_bytes();
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.term(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        None
    }

    /// Term ids of every term starting with `prefix` (a contiguous range of the sorted dictionary).
    pub fn prefix_range(&self, prefix: &str) -> std::ops::Range<u32> {
        let key = prefix.as_bytes();
        let lo = partition(self.dfs.len(), |i| self.term(i) < key);
        let hi = partition(self.dfs.len(), |i| {
            let t = self.term(i);
            t < key || t.starts_with(key)
        });
        lo as u32..hi.max(lo) as u32
    }

    pub fn term_str(&self, id: u32) -> &str {
        std::str::from_utf8(self.term(id as usize)).unwrap_or("")
    }

    pub fn postings(&self, id: u32) -> PostingList<'_> {
        let i = id as usize;
        PostingList {
            df: self.dfs[i],
            bytes: &self.postings[self.post_offsets[i] as usize..self.post_offsets[i + 1] as usize],
            term_id: id,
        }
    }

    pub fn lookup(&self, term: &str) -> Option<PostingList<'_>> {
        self.term_id(term).map(|id| self.postings(id))
    }

    /// Distinct file paths recorded in this segment, sorted.
    pub fn paths(&self) -> &[Box<str>] {
        &self.paths
    }

    /// Documents that touched path number `path` (index into [`Self::paths`]), with the op.
    pub fn path_docs(&self, path: u32) -> &[(u32, u32, u8)] {
        let lo = self.path_refs.partition_point(|r| r.0 < path);
        let hi = self.path_refs.partition_point(|r| r.0 <= path);
        &self.path_refs[lo..hi]
    }

    /// Documents whose duplicate key is `key`.
    pub fn docs_with_dup(&self, key: u64) -> impl Iterator<Item = u32> + '_ {
        let lo = self.dup_keys.partition_point(|&k| k < key);
        let hi = lo + self.dup_keys[lo..].partition_point(|&k| k == key);
        self.dup_docs[lo..hi].iter().copied()
    }

    /// The duplicate keys of the documents that have one, sorted (with repeats).
    pub fn dup_keys(&self) -> &[u64] {
        &self.dup_keys
    }

    /// The document of each of [`Self::dup_keys`].
    pub fn dup_docs(&self) -> &[u32] {
        &self.dup_docs
    }

    /// Bytes held by (text, postings, dictionary, documents, paths), for diagnostics.
    pub fn breakdown(&self) -> [usize; 5] {
        [
            self.text.len(),
            self.postings.len(),
            self.term_bytes.len()
                + self.term_offsets.len() * 4
                + self.post_offsets.len() * 8
                + self.dfs.len() * 4,
            self.doc_count() * std::mem::size_of::<DocMeta>() + self.dup_keys.len() * 12,
            self.paths.iter().map(|p| p.len()).sum::<usize>() + self.path_refs.len() * 12,
        ]
    }

    /// Heap bytes held, by structure (views of a mapped file hold none).
    pub fn heap_parts(&self) -> [(&'static str, usize); 9] {
        [
            (
                "dictionary",
                self.term_bytes.heap_bytes()
                    + self.term_offsets.heap_bytes()
                    + self.post_offsets.heap_bytes()
                    + self.dfs.heap_bytes(),
            ),
            ("postings", self.postings.heap_bytes()),
            ("documents", self.docs.heap_bytes()),
            ("text", self.text.heap_bytes()),
            (
                "paths",
                self.paths.iter().map(|p| p.len() + 16).sum::<usize>()
                    + self.path_refs.capacity() * 12,
            ),
            (
                "duplicate keys",
                self.dup_keys.heap_bytes() + self.dup_docs.heap_bytes(),
            ),
            ("block maxima", self.blockmax.heap_bytes()),
            ("document bits", self.odd.heap_bytes()),
            ("segment", std::mem::size_of::<Segment>()),
        ]
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.heap_parts().iter().map(|p| p.1).sum()
    }
}

/// First index in `0..n` for which `pred` is false (pred must be monotone true→false).
fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The term ids in the terms' byte order. Sorted by each term's first 8 bytes (big-endian,
/// zero-padded) first, so that nearly every comparison is one of two integers held in the
/// array instead of two strings elsewhere in memory; ties compare the whole terms.
fn sorted_ids(terms: &Terms) -> Vec<u32> {
    let mut keyed: Vec<(u64, u32)> = (0..terms.len() as u32)
        .map(|id| {
            let t = terms.get(id);
            let mut head = [0u8; 8];
            let n = t.len().min(8);
            head[..n].copy_from_slice(&t[..n]);
            (u64::from_be_bytes(head), id)
        })
        .collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| terms.get(a.1).cmp(terms.get(b.1)))
    });
    keyed.into_iter().map(|(_, id)| id).collect()
}

/// Most new terms a document is given room for before it is read.
const RESERVE_TERMS: usize = 4096;

/// Accumulates documents and produces a [`Segment`].
#[derive(Default)]
pub struct SegmentBuilder {
    terms: Interner,
    /// Per term id, everything indexing touches (one place in memory per token); in huge pages
    /// once large.
    state: HugeVec<TermState>,
    /// Every term's postings.
    pool: Pool,
    doc_terms: Vec<(u32, Tf)>,
    docs: Vec<DocMeta>,
    text: String,
    total_len: u64,
    tokenizer: Tokenizer,
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

impl SegmentBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn doc_count(&self) -> usize {
        self.docs.len()
    }

    /// Bytes of text held so far.
    pub fn text_bytes(&self) -> usize {
        self.text.len()
    }

    pub fn add(&mut self, doc: &NewDoc) {
        let d = self.docs.len() as u32;
        self.doc_terms.clear();
        // room for the terms a document this long usually brings (a longer one may still
        // grow the table mid-document)
        let bytes: usize = doc.fields.iter().map(|t| t.len()).sum();
        self.terms.reserve_fresh(bytes.min(RESERVE_TERMS), 0);
        let mut len = 0u32;
        let text_start = self.text.len() as u64;
        let mut field_len = [0u32; FIELDS];
        for (f, text) in doc.fields.iter().enumerate() {
            self.text.push_str(text);
            field_len[f] = text.len() as u32;
            let Self {
                terms,
                state,
                doc_terms,
                tokenizer,
                ..
            } = self;
            let here = u64::from(d) + 1;
            tokenizer.for_each_term(text, |term| {
                len += 1;
                let (id, new, extra) = terms.entry(term, 0);
                if new {
                    state.push(TermState {
                        prev_doc: u32::MAX,
                        ..TermState::default()
                    });
                }
                if *extra >> 32 == here {
                    doc_terms[(*extra & 0xffff_ffff) as usize].1[f] += 1;
                } else {
                    *extra = pack(d, doc_terms.len() as u32);
                    let mut tf = [0; FIELDS];
                    tf[f] = 1;
                    doc_terms.push((id, tf));
                }
            });
        }
        if self.tokenizer.take_odd() {
            self.odd.set(d);
        }
        for &(id, tf) in &self.doc_terms {
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
        if let Some(key) = doc.dup_key.filter(|&k| k != 0) {
            self.dups.push((key, d));
        }
        self.total_len += u64::from(len);
        self.docs.push(DocMeta {
            conv: doc.conv,
            turn: doc.turn,
            timestamp: doc.timestamp.unwrap_or(i64::MIN),
            len,
            text_start,
            field_len,
            dup_key: doc.dup_key.unwrap_or(0),
        });
    }

    /// Sorts the dictionary and lays postings out contiguously.
    pub fn finish(self, id: u64) -> Segment {
        let terms = self.terms.into_terms();
        let order = sorted_ids(&terms);
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
        let mut old_paths = self.paths;
        let paths: Vec<Box<str>> = path_order
            .iter()
            .map(|&p| std::mem::take(&mut old_paths[p as usize]))
            .collect();
        let mut dups = self.dups;
        dups.sort_unstable();
        let mut term_bytes = Vec::with_capacity(total_term_bytes);
        let mut term_offsets = Vec::with_capacity(order.len() + 1);
        let mut post_offsets = Vec::with_capacity(order.len() + 1);
        let mut dfs = Vec::with_capacity(order.len());
        let mut postings: Vec<u8> = Vec::with_capacity(total_post);
        let state = self.state;
        for &t in &order {
            let t = t as usize;
            term_offsets.push(term_bytes.len() as u32);
            term_bytes.extend_from_slice(terms.get(t as u32));
            post_offsets.push(postings.len() as u64);
            self.pool.copy_out(&state[t].list, &mut postings);
            dfs.push(state[t].df);
        }
        term_offsets.push(term_bytes.len() as u32);
        post_offsets.push(postings.len() as u64);
        let mut text = self.text;
        text.shrink_to_fit();
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
            odd: self.odd,
            blockmax: Default::default(),
            text: Text::from(text),
            total_len: self.total_len,
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
            fields: [user, assistant, ""],
        }
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
        assert_eq!((c.doc, c.tf), (0, [1, 2, 0]));
        c.next();
        assert_eq!((c.doc, c.tf), (2, [1, 0, 0]));
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
        assert_eq!(c.tf, [300, 1, 0]);
    }
}
