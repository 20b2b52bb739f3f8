//! Block-max metadata for dynamic pruning: each long posting list is cut into blocks of 128
//! postings, and each block records its last document, where it ends, and the largest
//! length-normalised term frequency ("impact") in it. A cursor can then skip a whole block
//! without decoding it, and a search can tell that no document of a block can rank.
//!
//! Impacts are computed with the segment's own average lengths (of the own fields and of the
//! context); a search with other averages scales the bound by the largest of 1 and
//! `avg_query / avg_segment` of each, which keeps it an upper bound.
use super::schema::{PostingCursor, PostingList, get_tf};
use super::scoring::Bm25;
use crate::util::codec::{Decoder, Encoder, corrupt};
use crate::util::varint;
use std::io::{self, Read, Write};

/// Postings per block.
pub(crate) const BLOCK: u32 = 128;

/// One block of a posting list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Block {
    pub last_doc: u32,
    /// Byte offset, within the term's postings, where the block ends.
    pub end: u32,
    /// Largest `x / (x + k1)` in the block, `x` being [`Bm25::weighted_tf`].
    pub max_impact: f32,
}

/// Blocks of the terms that have more than one block's worth of postings.
#[derive(Debug, Default, Clone)]
pub(crate) struct BlockMax {
    /// Term ids with blocks, sorted; `first[i]` is where term `terms[i]`'s blocks start.
    terms: Vec<u32>,
    first: Vec<u32>,
    blocks: Vec<Block>,
    /// Parameters the impacts were computed with: the average lengths, and BM25's.
    pub avg: f32,
    pub avg_context: f32,
    pub params: Option<Bm25>,
}

impl BlockMax {
    /// Computes the blocks of every long list among a segment's posting `lists` (in term id
    /// order), given the lengths of each of its documents (own fields, context).
    pub(crate) fn build<'a>(
        lists: impl Iterator<Item = PostingList<'a>>,
        [lens, context_lens]: [&[u32]; 2],
        params: &Bm25,
    ) -> Self {
        let avg_of = |lens: &[u32]| {
            let sum = lens.iter().map(|&l| u64::from(l)).sum::<u64>();
            if sum == 0 {
                1.0
            } else {
                (sum as f64 / lens.len() as f64) as f32
            }
        };
        let (avg, avg_context) = (avg_of(lens), avg_of(context_lens));
        let mut out = BlockMax {
            avg,
            avg_context,
            params: Some(*params),
            ..BlockMax::default()
        };
        for list in lists {
            if list.df <= BLOCK {
                continue;
            }
            out.terms.push(list.term_id);
            out.first.push(out.blocks.len() as u32);
            let (mut pos, mut doc, mut n) = (0usize, 0u32, 0u32);
            let mut max = 0.0f32;
            while n < list.df {
                let delta = varint::get(list.bytes, &mut pos) as u32;
                doc = if n == 0 { delta } else { doc + delta };
                let tf = get_tf(list.bytes, &mut pos);
                let len = |lens: &[u32]| lens.get(doc as usize).copied().unwrap_or(0);
                let inv = [
                    params.inv_norm(len(lens), avg),
                    params.inv_norm(len(context_lens), avg_context),
                ];
                let x = params.weighted_tf(&tf, inv);
                let impact = x / (x + params.k1);
                max = max.max(impact);
                n += 1;
                if n % BLOCK == 0 || n == list.df {
                    out.blocks.push(Block {
                        last_doc: doc,
                        end: pos as u32,
                        max_impact: max,
                    });
                    max = 0.0;
                }
            }
        }
        out.first.push(out.blocks.len() as u32);
        out
    }

    /// Whether the impacts hold for a search with `params`.
    pub(crate) fn usable(&self, params: &Bm25) -> bool {
        self.params.is_some_and(|p| {
            p.k1 == params.k1 && p.b == params.b && p.field_weights == params.field_weights
        })
    }

    /// The blocks of a term (empty for short lists, whose impact is bounded by 1).
    pub(crate) fn blocks(&self, term_id: u32) -> &[Block] {
        match self.terms.binary_search(&term_id) {
            Ok(i) => &self.blocks[self.first[i] as usize..self.first[i + 1] as usize],
            Err(_) => &[],
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.terms.capacity() * 4 + self.first.capacity() * 4 + self.blocks.capacity() * 12
    }

    /// Writes the blocks for the persistent index (so a restart need not decode every posting
    /// list again to recompute them).
    pub(crate) fn write<W: Write>(&self, e: &mut Encoder<W>) -> io::Result<()> {
        e.u32(self.avg.to_bits())?;
        e.u32(self.avg_context.to_bits())?;
        match &self.params {
            Some(p) => {
                e.u8(1)?;
                let mut v = vec![p.k1.to_bits(), p.b.to_bits()];
                v.extend(p.field_weights.iter().map(|w| w.to_bits()));
                e.u32s(&v)?;
            }
            None => e.u8(0)?,
        }
        e.u32s(&self.terms)?;
        e.u32s(&self.first)?;
        e.u32s(&self.blocks.iter().map(|b| b.last_doc).collect::<Vec<_>>())?;
        e.u32s(&self.blocks.iter().map(|b| b.end).collect::<Vec<_>>())?;
        e.u32s(
            &self
                .blocks
                .iter()
                .map(|b| b.max_impact.to_bits())
                .collect::<Vec<_>>(),
        )
    }

    /// Reads blocks written by [`Self::write`], checked against the segment's posting lists
    /// (`list(term)`, `None` past the last term) and document count, so that damaged blocks can
    /// never send a cursor out of its list.
    pub(crate) fn read<'a, R: Read>(
        d: &mut Decoder<R>,
        list: impl Fn(u32) -> Option<PostingList<'a>>,
        docs: usize,
    ) -> io::Result<BlockMax> {
        let avg = f32::from_bits(d.u32()?);
        let avg_context = f32::from_bits(d.u32()?);
        let params = match d.u8()? {
            0 => None,
            1 => {
                let v = d.u32s()?;
                let f = |i: usize| v.get(i).map(|&x| f32::from_bits(x));
                match (f(0), f(1), f(2), f(3), f(4), f(5), v.len()) {
                    (Some(k1), Some(b), Some(u), Some(a), Some(t), Some(c), 6) => Some(Bm25 {
                        k1,
                        b,
                        field_weights: [u, a, t, c],
                    }),
                    _ => return Err(corrupt("block parameters")),
                }
            }
            _ => return Err(corrupt("block parameters")),
        };
        let terms = d.u32s()?;
        let first = d.u32s()?;
        let (last, end, max) = (d.u32s()?, d.u32s()?, d.u32s()?);
        let ok = first.len() == terms.len() + 1
            && last.len() == end.len()
            && last.len() == max.len()
            && first.first() == Some(&0)
            && first.last().is_some_and(|&n| n as usize == last.len())
            && terms.windows(2).all(|w| w[0] < w[1])
            && first.windows(2).all(|w| w[0] <= w[1]);
        if !ok {
            return Err(corrupt("block tables"));
        }
        for (i, &t) in terms.iter().enumerate() {
            let l = list(t).ok_or_else(|| corrupt("block term"))?;
            let (a, b) = (first[i] as usize, first[i + 1] as usize);
            let ends = &end[a..b];
            let fits = b - a == l.df.div_ceil(BLOCK) as usize
                && ends.windows(2).all(|w| w[0] < w[1])
                && ends.last().is_some_and(|&e| e as usize == l.bytes.len())
                && last[a..b].iter().all(|&x| (x as usize) < docs);
            if !fits {
                return Err(corrupt("blocks of a term"));
            }
        }
        let blocks = (0..last.len())
            .map(|i| Block {
                last_doc: last[i],
                end: end[i],
                max_impact: f32::from_bits(max[i]),
            })
            .collect();
        Ok(BlockMax {
            terms,
            first,
            blocks,
            avg,
            avg_context,
            params,
        })
    }
}

/// A posting cursor that can skip blocks.
pub(crate) struct BlockCursor<'a> {
    pub inner: PostingCursor<'a>,
    blocks: &'a [Block],
    bytes: &'a [u8],
    df: u32,
    /// Index of the current posting.
    n: u32,
}

impl<'a> BlockCursor<'a> {
    pub(crate) fn new(list: PostingList<'a>, blocks: &'a [Block]) -> Self {
        BlockCursor {
            inner: PostingCursor::new(list),
            blocks,
            bytes: list.bytes,
            df: list.df,
            n: 0,
        }
    }

    #[inline]
    pub(crate) fn doc(&self) -> u32 {
        self.inner.doc
    }

    #[inline]
    pub(crate) fn next(&mut self) {
        self.inner.next();
        self.n += 1;
    }

    /// Largest impact in the current block (1 when the list has no blocks).
    #[inline]
    pub(crate) fn block_max(&self) -> f32 {
        self.blocks
            .get((self.n / BLOCK) as usize)
            .map_or(1.0, |b| b.max_impact)
    }

    /// Largest impact of the whole list.
    pub(crate) fn list_max(&self) -> f32 {
        if self.blocks.is_empty() {
            1.0
        } else {
            self.blocks.iter().map(|b| b.max_impact).fold(0.0, f32::max)
        }
    }

    /// Skips to the first posting of the next block.
    pub(crate) fn skip_block(&mut self) {
        let b = (self.n / BLOCK) as usize;
        match self.blocks.get(b) {
            Some(block) if b + 1 < self.blocks.len() => self.jump(b + 1, block.last_doc, block.end),
            _ => {
                self.inner.doc = u32::MAX;
                self.n = self.df;
            }
        }
    }

    /// Positions on block `b` (≥ 1), whose predecessor ends at `end` with `last_doc`.
    fn jump(&mut self, b: usize, last_doc: u32, end: u32) {
        self.n = b as u32 * BLOCK;
        self.inner = PostingCursor::resume(self.bytes, end as usize, self.df - self.n, last_doc);
    }

    /// Moves to the first posting at or after `target`, skipping whole blocks that end before.
    pub(crate) fn advance_to(&mut self, target: u32) {
        if self.inner.doc >= target {
            return;
        }
        let mut b = (self.n / BLOCK) as usize;
        if b < self.blocks.len() && self.blocks[b].last_doc < target {
            while b + 1 < self.blocks.len() && self.blocks[b].last_doc < target {
                b += 1;
            }
            if self.blocks[b].last_doc < target {
                self.inner.doc = u32::MAX;
                self.n = self.df;
                return;
            }
            let prev = self.blocks[b - 1];
            self.jump(b, prev.last_doc, prev.end);
        }
        while self.inner.doc < target {
            self.next();
        }
    }
}
