//! Segments and tombstones in the index cache file: bulk arrays in, bulk arrays out,
//! and a consistency check of everything read so that a damaged file can never make a query
//! index out of bounds.
use super::blockmax::BlockMax;
use super::columns::DocColumns;
use super::schema::DocBits;
use super::scoring::Bm25;
use super::segment::Segment;
use super::view::Tombstones;
use crate::util::codec::{Decoder, Encoder, Source, corrupt};
use std::io::{self, Write};

pub(crate) fn write_segment<W: Write>(e: &mut Encoder<W>, s: &Segment) -> io::Result<()> {
    e.u64(s.id)?;
    e.bytes(&s.term_bytes)?;
    e.column(&s.term_offsets)?;
    e.column(&s.post_offsets)?;
    e.column(&s.dfs)?;
    e.bytes(&s.postings)?;
    e.str(&s.text)?;
    s.docs.write(e)?;
    e.column(s.odd.words())?;
    e.u64(s.total_len)?;
    e.u64(s.total_context_len)?;
    e.varint(s.paths.len() as u64)?;
    for p in &s.paths {
        e.str(p)?;
    }
    e.u32s(&s.path_refs.iter().map(|r| r.0).collect::<Vec<_>>())?;
    e.u32s(&s.path_refs.iter().map(|r| r.1).collect::<Vec<_>>())?;
    e.bytes(&s.path_refs.iter().map(|r| r.2).collect::<Vec<_>>())?;
    e.column(&s.dup_keys)?;
    e.column(&s.dup_docs)?;
    s.blockmax().write(e)
}

fn check(ok: bool, what: &str) -> io::Result<()> {
    if ok { Ok(()) } else { Err(corrupt(what)) }
}

fn monotone_within<T: Copy + PartialOrd + Into<u64>>(v: &[T], end: u64) -> bool {
    v.windows(2).all(|w| w[0] <= w[1])
        && v.last().is_none_or(|&x| x.into() == end)
        && v.first().is_none_or(|&x| x.into() == 0)
}

/// A segment as read back, before what is derived from it (the block maxima) is computed:
/// [`RawSegment::finish`] does that, on whichever thread is free.
pub(crate) struct RawSegment(Segment);

impl RawSegment {
    /// Computes the block maxima again when they were written with other scoring parameters
    /// than this process uses.
    pub(crate) fn finish(mut self) -> Segment {
        if !self.0.blockmax.usable(&Bm25::default()) {
            self.0.derive();
        }
        self.0
    }
}

/// Reads a segment written by [`write_segment`], checking every offset and reference.
pub(crate) fn read_segment<R: Source>(d: &mut Decoder<R>) -> io::Result<RawSegment> {
    let mut seg = Segment {
        id: d.u64()?,
        ..Segment::default()
    };
    read_dictionary(d, &mut seg)?;
    read_docs(d, &mut seg)?;
    read_paths(d, &mut seg)?;
    read_dups(d, &mut seg)?;
    let terms = seg.term_count() as u32;
    let blocks = BlockMax::read(d, |t| (t < terms).then(|| seg.postings(t)), seg.doc_count())?;
    seg.blockmax = blocks;
    Ok(RawSegment(seg))
}

/// The sorted terms and their postings.
fn read_dictionary<R: Source>(d: &mut Decoder<R>, seg: &mut Segment) -> io::Result<()> {
    seg.term_bytes = d.blob()?;
    seg.term_offsets = d.column()?;
    seg.post_offsets = d.column()?;
    seg.dfs = d.column()?;
    seg.postings = d.blob()?;
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

/// The documents' text, their metadata (stored column by column) and total length.
fn read_docs<R: Source>(d: &mut Decoder<R>, seg: &mut Segment) -> io::Result<()> {
    let text = d.text()?;
    seg.docs = DocColumns::read(d, text.len(), |i| text.is_char_boundary(i))?;
    seg.odd = DocBits::from_words(d.column::<u64>()?, seg.doc_count())
        .ok_or_else(|| corrupt("document bits"))?;
    seg.text = text;
    seg.total_len = d.u64()?;
    seg.total_context_len = d.u64()?;
    Ok(())
}

/// The file table: distinct paths and (path, document, op) references.
fn read_paths<R: Source>(d: &mut Decoder<R>, seg: &mut Segment) -> io::Result<()> {
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
            && p_doc.iter().all(|&x| (x as usize) < seg.doc_count()),
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
fn read_dups<R: Source>(d: &mut Decoder<R>, seg: &mut Segment) -> io::Result<()> {
    let dup_keys = d.column::<u64>()?;
    let dup_docs = d.column::<u32>()?;
    check(
        dup_keys.len() == dup_docs.len()
            && dup_docs.iter().all(|&x| (x as usize) < seg.doc_count())
            && dup_keys.windows(2).all(|w| w[0] <= w[1]),
        "duplicate keys",
    )?;
    seg.dup_keys = dup_keys;
    seg.dup_docs = dup_docs;
    Ok(())
}

pub(crate) fn write_tombstones<W: Write>(e: &mut Encoder<W>, t: &Tombstones) -> io::Result<()> {
    e.u64s(&t.bits)?;
    e.u32(t.count)?;
    e.u64(t.len_sum)?;
    e.u64(t.context_len_sum)?;
    let mut df: Vec<(u32, u32)> = t.df.iter().map(|(&k, &v)| (k, v)).collect();
    df.sort_unstable();
    e.u32s(&df.iter().map(|p| p.0).collect::<Vec<_>>())?;
    e.u32s(&df.iter().map(|p| p.1).collect::<Vec<_>>())
}

pub(crate) fn read_tombstones<R: Source>(
    d: &mut Decoder<R>,
    seg: &RawSegment,
) -> io::Result<Tombstones> {
    read_tombstones_of(d, &seg.0)
}

/// [`read_tombstones`] of a segment already in use (a follower's new tombstones for it).
pub(crate) fn read_tombstones_of<R: Source>(
    d: &mut Decoder<R>,
    seg: &Segment,
) -> io::Result<Tombstones> {
    let bits = d.u64s()?;
    let count = d.u32()?;
    let len_sum = d.u64()?;
    let context_len_sum = d.u64()?;
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
        context_len_sum,
        df: keys.into_iter().zip(vals).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SegmentBuilder;
    use crate::index::schema::NewDoc;
    use crate::util::blob::Cursor;
    use std::io::Write;

    /// 1,000 documents: `common` in all (8 blocks), `half` in every other one, `rare` once.
    fn segment() -> Segment {
        let texts: Vec<String> = (0..1000)
            .map(|i| {
                let half = if i % 2 == 0 { " half" } else { "" };
                let rare = if i == 500 { " rare" } else { "" };
                // a word that is not a term (`err`) every 100 documents
                let odd = if i % 100 == 0 { " ke\u{301}rr" } else { "" };
                format!("common{half}{rare}{odd} {}", "pad ".repeat(i % 7))
            })
            .collect();
        built(&texts, "", 3)
    }

    /// A segment of one document per text (`tools` as every document's tool field).
    fn built(texts: &[String], tools: &str, id: u64) -> Segment {
        let mut b = SegmentBuilder::new();
        for (i, t) in texts.iter().enumerate() {
            b.add(&NewDoc {
                conv: i as u32,
                turn: 0,
                timestamp: None,
                dup_key: None,
                fields: [t, "reply", tools, ""],
            });
        }
        b.finish(id)
    }

    /// `seg` written to a file and read back from its mapping.
    fn read_back(seg: &Segment) -> Segment {
        let mut file = tempfile::tempfile().expect("temp file");
        file.write_all(&encoded(seg)).expect("write");
        let mut cursor = Cursor::map(&file, 0).expect("map");
        read_segment(&mut Decoder::new(&mut cursor))
            .expect("read")
            .finish()
    }

    fn encoded(seg: &Segment) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_segment(&mut Encoder::new(&mut bytes), seg).expect("write");
        bytes
    }

    #[test]
    fn a_mapped_segment_reads_back_with_its_blocks_and_without_copying_its_text() {
        let seg = segment();
        let back = read_back(&seg);
        assert!(back.text.heap_bytes() == 0 && back.postings.heap_bytes() == 0);
        assert_eq!(back.text(500).user, seg.text(500).user);
        assert_eq!(back.odd_words(), seg.odd_words());
        assert!((0..1000).all(|d| seg.odd_words().contains(d) == (d % 100 == 0)));
        for term in ["common", "half", "rare", "pad"] {
            let id = seg.term_id(term).expect("term");
            assert_eq!(back.term_id(term), Some(id));
            assert_eq!(
                back.blockmax().blocks(id),
                seg.blockmax().blocks(id),
                "{term}"
            );
        }
        assert_eq!(
            back.blockmax().blocks(seg.term_id("common").unwrap()).len(),
            8
        );
        assert!(back.blockmax().usable(&Bm25::default()));
    }

    #[test]
    fn a_text_past_two_mib_is_kept_where_it_was_written_and_reads_back() {
        let texts: Vec<String> = (0..300)
            .map(|i| format!("doc{i} {}", "filler words here ".repeat(600)))
            .collect();
        let seg = built(&texts, "Read src/big.rs", 4);
        // in the mapping it was written in: held by the process, not on the heap's books
        assert!(seg.text.len() > 2 << 20 && seg.text.in_place());
        assert_eq!(seg.text.heap_bytes(), seg.text.len());
        let back = read_back(&seg);
        for d in [0, 157, 299] {
            assert_eq!(seg.text(d).user, texts[d as usize]);
            assert_eq!(back.text(d).user, texts[d as usize]);
            assert_eq!(back.text(d).tools, "Read src/big.rs");
        }
        assert_eq!(back.term_id("doc157"), seg.term_id("doc157"));
    }

    #[test]
    fn blocks_that_do_not_fit_their_lists_are_refused() {
        let seg = segment();
        let mut bytes = Vec::new();
        seg.blockmax()
            .write(&mut Encoder::new(&mut bytes))
            .expect("write");
        let terms = seg.term_count() as u32;
        let read = |docs: usize| {
            BlockMax::read(
                &mut Decoder::new(&bytes[..]),
                |t| (t < terms).then(|| seg.postings(t)),
                docs,
            )
        };
        assert!(read(seg.doc_count()).is_ok());
        // a last document past the segment's end
        assert!(read(10).is_err());
        // lists shorter than the blocks say (every term given the list of `rare`)
        let rare = seg.term_id("rare").expect("rare");
        let short = BlockMax::read(
            &mut Decoder::new(&bytes[..]),
            |t| (t < terms).then(|| seg.postings(rare)),
            seg.doc_count(),
        );
        assert!(short.is_err());
    }
}
