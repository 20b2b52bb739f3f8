//! A segment's per-document metadata stored column by column (conversation, turn, timestamp,
//! lengths, text span, duplicate key): one integer array per field, owned when the segment was
//! built here, views of the mapped cache file when it was restored (so every server restored
//! from the same file reads the same pages instead of holding its own copy).
use super::schema::{DocMeta, FIELDS};
use crate::util::blob::Column;
use crate::util::codec::{Decoder, Encoder, Source, corrupt};
use std::io::{self, Write};

/// The documents of a segment, one column per field of [`DocMeta`].
#[derive(Debug, Default)]
pub(super) struct DocColumns {
    conv: Column<u32>,
    turn: Column<u32>,
    /// Epoch milliseconds as the bits of an `i64` (`i64::MIN` when unknown).
    stamp: Column<u64>,
    /// Number of terms in the own fields (BM25 length).
    len: Column<u32>,
    /// Number of terms in the context field.
    context_len: Column<u32>,
    text_start: Column<u64>,
    field_len: [Column<u32>; FIELDS],
    /// Duplicate-turn fingerprint (0 = none).
    dup_key: Column<u64>,
}

impl DocColumns {
    /// The columns of `docs`, in order.
    pub(super) fn from_metas(docs: &[DocMeta]) -> Self {
        fn col<T: crate::util::blob::Word>(
            docs: &[DocMeta],
            f: impl Fn(&DocMeta) -> T,
        ) -> Column<T> {
            Column::from(docs.iter().map(f).collect::<Vec<T>>())
        }
        DocColumns {
            conv: col(docs, |d| d.conv),
            turn: col(docs, |d| d.turn),
            stamp: col(docs, |d| d.timestamp as u64),
            len: col(docs, |d| d.len),
            context_len: col(docs, |d| d.context_len),
            text_start: col(docs, |d| d.text_start),
            field_len: std::array::from_fn(|f| col(docs, |d| d.field_len[f])),
            dup_key: col(docs, |d| d.dup_key),
        }
    }

    pub(super) fn count(&self) -> usize {
        self.conv.len()
    }

    /// Document `d`'s metadata (panics past the end, like indexing a slice).
    #[inline]
    pub(super) fn get(&self, d: u32) -> DocMeta {
        let i = d as usize;
        DocMeta {
            conv: self.conv[i],
            turn: self.turn[i],
            timestamp: self.stamp[i] as i64,
            len: self.len[i],
            context_len: self.context_len[i],
            text_start: self.text_start[i],
            field_len: std::array::from_fn(|f| self.field_len[f][i]),
            dup_key: self.dup_key[i],
        }
    }

    /// Every document's length.
    #[inline]
    pub(super) fn lens(&self) -> &[u32] {
        &self.len
    }

    /// Every document's context length.
    #[inline]
    pub(super) fn context_lens(&self) -> &[u32] {
        &self.context_len
    }

    /// Every document's duplicate key.
    #[inline]
    pub(super) fn keys(&self) -> &[u64] {
        &self.dup_key
    }

    /// Every document's conversation.
    #[inline]
    pub(super) fn convs(&self) -> &[u32] {
        &self.conv
    }

    #[inline]
    pub(super) fn timestamp(&self, d: u32) -> i64 {
        self.stamp[d as usize] as i64
    }

    /// Start and end of each field of document `d` in the segment's text (unchecked sums:
    /// [`Self::read`] checked them against the text).
    #[inline]
    pub(super) fn spans(&self, d: u32) -> [usize; FIELDS + 1] {
        let i = d as usize;
        let mut out = [0usize; FIELDS + 1];
        out[0] = self.text_start[i] as usize;
        for f in 0..FIELDS {
            out[f + 1] = out[f] + self.field_len[f][i] as usize;
        }
        out
    }

    /// Heap bytes held (none for views of a mapped file).
    pub(super) fn heap_bytes(&self) -> usize {
        self.conv.heap_bytes()
            + self.turn.heap_bytes()
            + self.stamp.heap_bytes()
            + self.len.heap_bytes()
            + self.context_len.heap_bytes()
            + self.text_start.heap_bytes()
            + self.field_len.iter().map(Column::heap_bytes).sum::<usize>()
            + self.dup_key.heap_bytes()
    }

    pub(super) fn write<W: Write>(&self, e: &mut Encoder<W>) -> io::Result<()> {
        e.column(&self.conv)?;
        e.column(&self.turn)?;
        e.column(&self.stamp)?;
        e.column(&self.len)?;
        e.column(&self.context_len)?;
        e.column(&self.text_start)?;
        for f in &self.field_len {
            e.column(f)?;
        }
        e.column(&self.dup_key)
    }

    /// Reads columns written by [`Self::write`], checking that they are equally long and that
    /// every document's fields lie within `text` (`text_len` bytes) on character boundaries
    /// (`boundary`).
    pub(super) fn read<R: Source>(
        d: &mut Decoder<R>,
        text_len: usize,
        boundary: impl Fn(usize) -> bool,
    ) -> io::Result<Self> {
        let cols = DocColumns {
            conv: d.column()?,
            turn: d.column()?,
            stamp: d.column()?,
            len: d.column()?,
            context_len: d.column()?,
            text_start: d.column()?,
            field_len: [d.column()?, d.column()?, d.column()?, d.column()?],
            dup_key: d.column()?,
        };
        let n = cols.count();
        let same = [cols.turn.len(), cols.stamp.len(), cols.len.len()]
            .into_iter()
            .chain([cols.context_len.len()])
            .chain([cols.text_start.len(), cols.dup_key.len()])
            .chain(cols.field_len.iter().map(|f| f.len()))
            .all(|l| l == n);
        if !same {
            return Err(corrupt("document arrays"));
        }
        for i in 0..n {
            let a = usize::try_from(cols.text_start[i]).unwrap_or(usize::MAX);
            let mut ends = [a; FIELDS + 1];
            for f in 0..FIELDS {
                ends[f + 1] = ends[f].saturating_add(cols.field_len[f][i] as usize);
            }
            if ends[FIELDS] > text_len || !ends.iter().all(|&x| boundary(x)) {
                return Err(corrupt("document text"));
            }
        }
        Ok(cols)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(i: u32) -> DocMeta {
        DocMeta {
            conv: i,
            turn: i * 2,
            timestamp: if i == 0 { i64::MIN } else { -(i as i64) },
            len: 3,
            context_len: i,
            text_start: u64::from(i) * 6,
            field_len: [1, 2, 3, 0],
            dup_key: u64::from(i) << 40,
        }
    }

    #[test]
    fn columns_round_trip_and_are_checked_against_the_text() {
        let docs: Vec<DocMeta> = (0..5).map(meta).collect();
        let cols = DocColumns::from_metas(&docs);
        assert!((0..5).all(|d| cols.get(d) == docs[d as usize]));
        assert_eq!(cols.spans(1), [6, 7, 9, 12, 12]);
        assert_eq!(cols.timestamp(0), i64::MIN);
        let mut e = Encoder::new(Vec::new());
        cols.write(&mut e).expect("write");
        let bytes = e.into_inner();
        let back = DocColumns::read(&mut Decoder::new(&bytes[..]), 30, |_| true).expect("read");
        assert!((0..5).all(|d| back.get(d) == docs[d as usize]));
        assert!(DocColumns::read(&mut Decoder::new(&bytes[..]), 29, |_| true).is_err());
        assert!(DocColumns::read(&mut Decoder::new(&bytes[..]), 30, |i| i != 7).is_err());
        assert!(
            DocColumns::read(&mut Decoder::new(&bytes[..bytes.len() - 1]), 30, |_| true).is_err()
        );
    }
}
