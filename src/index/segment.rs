//! Immutable index segments: a sorted term dictionary, compact postings (delta-varint doc ids
//! with per-field term frequencies), per-document metadata and the one stored copy of each
//! turn's text. A segment is built once and then only read; updates add new segments and mark
//! replaced documents dead (see `view`). Restored segments hold no copies of their arrays: they
//! are views of the mapped cache file ([`crate::util::blob`]).
use super::blockmax::BlockMax;
use super::columns::DocColumns;
use super::schema::{DocBits, DocMeta, DocText, PostingList};
use super::scoring::Bm25;
use crate::util::blob::{Blob, Column, Text};

/// An immutable segment.
#[derive(Debug, Default)]
pub(crate) struct Segment {
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
    /// Summed length of the documents' context fields.
    pub(super) total_context_len: u64,
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
    /// The word forms found for the stems queries asked for (memory only).
    pub(super) forms: FormCache,
}

/// The terms (ids into the segment's dictionary) found for each stem a query asked for, kept
/// for the next query (see `forms`); memory only, never written.
#[derive(Debug, Default)]
pub(crate) struct FormCache(
    pub(super) std::sync::Mutex<rustc_hash::FxHashMap<Box<str>, Box<[u32]>>>,
);

impl Segment {
    pub(crate) fn doc_count(&self) -> usize {
        self.docs.count()
    }

    pub(crate) fn term_count(&self) -> usize {
        self.dfs.len()
    }

    pub(crate) fn total_len(&self) -> u64 {
        self.total_len
    }

    pub(crate) fn total_context_len(&self) -> u64 {
        self.total_context_len
    }

    /// Document `d`'s metadata, gathered from the columns.
    #[inline]
    pub(crate) fn doc(&self, d: u32) -> DocMeta {
        self.docs.get(d)
    }

    /// Every document's conversation.
    pub(crate) fn convs(&self) -> &[u32] {
        self.docs.convs()
    }

    /// Every document's duplicate key (0 = none).
    pub(crate) fn keys(&self) -> &[u64] {
        self.docs.keys()
    }

    /// Documents with a word that is not one of their terms: only the others surely lack a
    /// phrase whose word-terms they lack.
    pub(crate) fn odd_words(&self) -> &DocBits {
        &self.odd
    }

    /// Length of document `d`.
    #[inline]
    pub(crate) fn len_of(&self, d: u32) -> u32 {
        self.docs.lens()[d as usize]
    }

    /// Length of document `d`'s context field.
    #[inline]
    pub(crate) fn context_len_of(&self, d: u32) -> u32 {
        self.docs.context_lens()[d as usize]
    }

    /// Duplicate key of document `d` (0 = none).
    #[inline]
    pub(crate) fn key_of(&self, d: u32) -> u64 {
        self.docs.keys()[d as usize]
    }

    /// Timestamp of document `d` (epoch ms, `i64::MIN` when unknown).
    #[inline]
    pub(crate) fn timestamp_of(&self, d: u32) -> i64 {
        self.docs.timestamp(d)
    }

    /// Computes the block-max metadata.
    pub(super) fn derive(&mut self) {
        let lists = (0..self.term_count() as u32).map(|id| self.postings(id));
        let lens = [self.docs.lens(), self.docs.context_lens()];
        self.blockmax = BlockMax::build(lists, lens, &Bm25::default());
    }

    pub(crate) fn blockmax(&self) -> &BlockMax {
        &self.blockmax
    }

    pub(crate) fn text(&self, d: u32) -> DocText<'_> {
        let [a, b, c, e, x] = self.docs.spans(d);
        DocText {
            user: &self.text[a..b],
            assistant: &self.text[b..c],
            tools: &self.text[c..e],
            context: &self.text[e..x],
        }
    }

    pub(super) fn term(&self, i: usize) -> &[u8] {
        &self.term_bytes[self.term_offsets[i] as usize..self.term_offsets[i + 1] as usize]
    }

    /// Term id of `term`, by binary search.
    pub(crate) fn term_id(&self, term: &str) -> Option<u32> {
        self.term_id_in(0..self.dfs.len() as u32, term.as_bytes())
    }

    /// Term id of `key`, looked for only among the ids in `range` (a part of the sorted
    /// dictionary, such as a [`Self::prefix_range`]).
    pub(crate) fn term_id_in(&self, range: std::ops::Range<u32>, key: &[u8]) -> Option<u32> {
        let (mut lo, mut hi) = (
            range.start as usize,
            (range.end as usize).min(self.dfs.len()),
        );
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
    pub(crate) fn prefix_range(&self, prefix: &str) -> std::ops::Range<u32> {
        let key = prefix.as_bytes();
        let lo = partition(self.dfs.len(), |i| self.term(i) < key);
        let hi = partition(self.dfs.len(), |i| {
            let t = self.term(i);
            t < key || t.starts_with(key)
        });
        lo as u32..hi.max(lo) as u32
    }

    #[cfg(test)]
    pub(crate) fn term_str(&self, id: u32) -> &str {
        std::str::from_utf8(self.term(id as usize)).unwrap_or("")
    }

    pub(crate) fn postings(&self, id: u32) -> PostingList<'_> {
        let i = id as usize;
        PostingList {
            df: self.dfs[i],
            bytes: &self.postings[self.post_offsets[i] as usize..self.post_offsets[i + 1] as usize],
            term_id: id,
        }
    }

    pub(crate) fn lookup(&self, term: &str) -> Option<PostingList<'_>> {
        self.term_id(term).map(|id| self.postings(id))
    }

    /// Distinct file paths recorded in this segment, sorted.
    pub(crate) fn paths(&self) -> &[Box<str>] {
        &self.paths
    }

    /// Documents that touched path number `path` (index into [`Self::paths`]), with the op.
    pub(crate) fn path_docs(&self, path: u32) -> &[(u32, u32, u8)] {
        let lo = self.path_refs.partition_point(|r| r.0 < path);
        let hi = self.path_refs.partition_point(|r| r.0 <= path);
        &self.path_refs[lo..hi]
    }

    /// Documents whose duplicate key is `key`.
    pub(crate) fn docs_with_dup(&self, key: u64) -> impl Iterator<Item = u32> + '_ {
        let lo = self.dup_keys.partition_point(|&k| k < key);
        let hi = lo + self.dup_keys[lo..].partition_point(|&k| k == key);
        self.dup_docs[lo..hi].iter().copied()
    }

    /// The duplicate keys of the documents that have one, sorted (with repeats).
    pub(crate) fn dup_keys(&self) -> &[u64] {
        &self.dup_keys
    }

    /// The document of each of [`Self::dup_keys`].
    pub(crate) fn dup_docs(&self) -> &[u32] {
        &self.dup_docs
    }

    /// Bytes held by (text, postings, dictionary, documents, paths), for diagnostics.
    pub(crate) fn breakdown(&self) -> [usize; 5] {
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
    pub(crate) fn heap_parts(&self) -> [(&'static str, usize); 9] {
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
