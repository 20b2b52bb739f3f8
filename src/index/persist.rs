//! Segments and tombstones on disk (for the persistent index): bulk arrays in, bulk arrays out,
//! and a consistency check of everything read so that a damaged file can never make a query
//! index out of bounds.
use super::schema::{DocMeta, FIELDS};
use super::segment::Segment;
use super::view::Tombstones;
use crate::util::codec::{Decoder, Encoder, corrupt};
use std::io::{self, Read, Write};

pub fn write_segment<W: Write>(e: &mut Encoder<W>, s: &Segment) -> io::Result<()> {
    e.u64(s.id)?;
    e.bytes(&s.term_bytes)?;
    e.u32s(&s.term_offsets)?;
    e.u64s(&s.post_offsets)?;
    e.u32s(&s.dfs)?;
    e.bytes(&s.postings)?;
    let docs = &s.docs;
    e.u32s(&docs.iter().map(|d| d.conv).collect::<Vec<_>>())?;
    e.u32s(&docs.iter().map(|d| d.turn).collect::<Vec<_>>())?;
    e.u64s(&docs.iter().map(|d| d.timestamp as u64).collect::<Vec<_>>())?;
    e.u32s(&docs.iter().map(|d| d.len).collect::<Vec<_>>())?;
    e.u64s(&docs.iter().map(|d| d.text_start).collect::<Vec<_>>())?;
    for f in 0..FIELDS {
        e.u32s(&docs.iter().map(|d| d.field_len[f]).collect::<Vec<_>>())?;
    }
    e.u64s(&docs.iter().map(|d| d.dup_key).collect::<Vec<_>>())?;
    e.str(&s.text)?;
    e.u64(s.total_len)?;
    e.varint(s.paths.len() as u64)?;
    for p in &s.paths {
        e.str(p)?;
    }
    e.u32s(&s.path_refs.iter().map(|r| r.0).collect::<Vec<_>>())?;
    e.u32s(&s.path_refs.iter().map(|r| r.1).collect::<Vec<_>>())?;
    e.bytes(&s.path_refs.iter().map(|r| r.2).collect::<Vec<_>>())?;
    e.u64s(&s.dups.iter().map(|r| r.0).collect::<Vec<_>>())?;
    e.u32s(&s.dups.iter().map(|r| r.1).collect::<Vec<_>>())
}

fn check(ok: bool, what: &str) -> io::Result<()> {
    if ok { Ok(()) } else { Err(corrupt(what)) }
}

fn monotone_within<T: Copy + PartialOrd + Into<u64>>(v: &[T], end: u64) -> bool {
    v.windows(2).all(|w| w[0] <= w[1])
        && v.last().is_none_or(|&x| x.into() == end)
        && v.first().is_none_or(|&x| x.into() == 0)
}

/// Reads a segment written by [`write_segment`], checking every offset and reference.
pub fn read_segment<R: Read>(d: &mut Decoder<R>) -> io::Result<Segment> {
    let mut seg = Segment {
        id: d.u64()?,
        ..Segment::default()
    };
    read_dictionary(d, &mut seg)?;
    read_docs(d, &mut seg)?;
    read_paths(d, &mut seg)?;
    read_dups(d, &mut seg)?;
    seg.derive();
    Ok(seg)
}

/// The sorted terms and their postings.
fn read_dictionary<R: Read>(d: &mut Decoder<R>, seg: &mut Segment) -> io::Result<()> {
    seg.term_bytes = d.bytes()?;
    seg.term_offsets = d.u32s()?;
    seg.post_offsets = d.u64s()?;
    seg.dfs = d.u32s()?;
    seg.postings = d.bytes()?;
    let terms = seg.dfs.len();
    check(
        seg.term_offsets.len() == terms + 1 && seg.post_offsets.len() == terms + 1,
        "dictionary sizes",
    )?;
    check(
        monotone_within(&seg.term_offsets, seg.term_bytes.len() as u64),
        "term offsets",
    )?;
    check(
        monotone_within(&seg.post_offsets, seg.postings.len() as u64),
        "postings offsets",
    )?;
    check(
        std::str::from_utf8(&seg.term_bytes).is_ok(),
        "terms are not UTF-8",
    )
}

/// The documents' metadata (stored column by column), their text and total length.
fn read_docs<R: Read>(d: &mut Decoder<R>, seg: &mut Segment) -> io::Result<()> {
    let conv = d.u32s()?;
    let turn = d.u32s()?;
    let ts = d.u64s()?;
    let len = d.u32s()?;
    let start = d.u64s()?;
    let mut field_len: Vec<Vec<u32>> = Vec::with_capacity(FIELDS);
    for _ in 0..FIELDS {
        field_len.push(d.u32s()?);
    }
    let dup = d.u64s()?;
    let n = conv.len();
    check(
        [turn.len(), ts.len(), len.len(), start.len(), dup.len()]
            .iter()
            .all(|&l| l == n)
            && field_len.iter().all(|f| f.len() == n),
        "document arrays",
    )?;
    let text = d.string()?;
    seg.docs = (0..n)
        .map(|i| DocMeta {
            conv: conv[i],
            turn: turn[i],
            timestamp: ts[i] as i64,
            len: len[i],
            text_start: start[i],
            field_len: [field_len[0][i], field_len[1][i], field_len[2][i]],
            dup_key: dup[i],
        })
        .collect();
    for m in &seg.docs {
        let a = usize::try_from(m.text_start).unwrap_or(usize::MAX);
        let b = a.saturating_add(m.field_len[0] as usize);
        let c = b.saturating_add(m.field_len[1] as usize);
        let e = c.saturating_add(m.field_len[2] as usize);
        check(
            e <= text.len() && [a, b, c, e].iter().all(|&i| text.is_char_boundary(i)),
            "document text",
        )?;
    }
    seg.text = text;
    seg.total_len = d.u64()?;
    Ok(())
}

/// The file table: distinct paths and (path, document, op) references.
fn read_paths<R: Read>(d: &mut Decoder<R>, seg: &mut Segment) -> io::Result<()> {
    let path_count = d.length()?;
    let mut paths: Vec<Box<str>> = Vec::with_capacity(path_count.min(1 << 20));
    for _ in 0..path_count {
        paths.push(d.string()?.into_boxed_str());
    }
    let p_path = d.u32s()?;
    let p_doc = d.u32s()?;
    let p_op = d.bytes()?;
    check(
        p_path.len() == p_doc.len() && p_doc.len() == p_op.len(),
        "path arrays",
    )?;
    check(
        p_path.iter().all(|&p| (p as usize) < paths.len())
            && p_doc.iter().all(|&x| (x as usize) < seg.docs.len()),
        "path references",
    )?;
    seg.paths = paths;
    seg.path_refs = p_path
        .into_iter()
        .zip(p_doc)
        .zip(p_op)
        .map(|((p, x), o)| (p, x, o))
        .collect();
    Ok(())
}

/// (duplicate key, document) pairs.
fn read_dups<R: Read>(d: &mut Decoder<R>, seg: &mut Segment) -> io::Result<()> {
    let dup_keys = d.u64s()?;
    let dup_docs = d.u32s()?;
    check(
        dup_keys.len() == dup_docs.len() && dup_docs.iter().all(|&x| (x as usize) < seg.docs.len()),
        "duplicate keys",
    )?;
    seg.dups = dup_keys.into_iter().zip(dup_docs).collect();
    Ok(())
}

pub fn write_tombstones<W: Write>(e: &mut Encoder<W>, t: &Tombstones) -> io::Result<()> {
    e.u64s(&t.bits)?;
    e.u32(t.count)?;
    e.u64(t.len_sum)?;
    let mut df: Vec<(u32, u32)> = t.df.iter().map(|(&k, &v)| (k, v)).collect();
    df.sort_unstable();
    e.u32s(&df.iter().map(|p| p.0).collect::<Vec<_>>())?;
    e.u32s(&df.iter().map(|p| p.1).collect::<Vec<_>>())
}

pub fn read_tombstones<R: Read>(d: &mut Decoder<R>, seg: &Segment) -> io::Result<Tombstones> {
    let bits = d.u64s()?;
    let count = d.u32()?;
    let len_sum = d.u64()?;
    let keys = d.u32s()?;
    let vals = d.u32s()?;
    check(bits.len() <= seg.doc_count().div_ceil(64), "tombstone bits")?;
    check(
        bits.iter().map(|w| w.count_ones()).sum::<u32>() == count,
        "tombstone count",
    )?;
    check(
        keys.len() == vals.len() && keys.iter().all(|&k| (k as usize) < seg.term_count()),
        "tombstone df",
    )?;
    check(
        keys.iter()
            .zip(&vals)
            .all(|(&k, &v)| v <= seg.postings(k).df),
        "tombstone df values",
    )?;
    Ok(Tombstones {
        bits,
        count,
        len_sum,
        df: keys.into_iter().zip(vals).collect(),
    })
}
