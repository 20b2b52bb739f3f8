//! What the index stores, and how: a document's fields, the metadata kept per document and
//! its text by field; and the posting-list format — delta-coded doc ids as LEB128 varints
//! ([`crate::util::varint`]), per-field term frequencies packed into one byte when they fit —
//! with the sequential cursor that decodes it without allocating. A leaf: every other index
//! module builds on these definitions and this module imports none of them.
use crate::util::blob::Column;
use crate::util::varint;

/// Indexed fields of a turn.
pub const FIELD_USER: usize = 0;
pub const FIELD_ASSISTANT: usize = 1;
/// Tool names, files touched and commands run.
pub const FIELD_TOOLS: usize = 2;
pub const FIELDS: usize = 3;

/// Term frequencies of one posting, per field.
pub type Tf = [u32; FIELDS];

/// Per-document metadata kept in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocMeta {
    /// The caller's number for the group the document belongs to (a conversation).
    pub conv: u32,
    pub turn: u32,
    /// Epoch milliseconds, `i64::MIN` when unknown.
    pub timestamp: i64,
    /// Number of terms in the document (BM25 length).
    pub len: u32,
    /// Start of the turn's text in the segment's text arena; field lengths follow.
    pub text_start: u64,
    pub field_len: [u32; FIELDS],
    /// Duplicate-turn fingerprint (0 = none).
    pub dup_key: u64,
}

/// One bit per document of a segment (a fact about each, such as "has a word that is not one
/// of its terms", see `tokenizer::words`): owned while a segment is built, a view of the mapped
/// cache file when restored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocBits(Column<u64>);

impl DocBits {
    /// Sets the bit of document `d` (of bits being built: restored ones are copied first).
    pub fn set(&mut self, d: u32) {
        let w = (d >> 6) as usize;
        let mut words = std::mem::take(&mut self.0).into_vec();
        if words.len() <= w {
            words.resize(w + 1, 0);
        }
        words[w] |= 1 << (d & 63);
        self.0 = Column::from(words);
    }

    #[inline]
    pub fn contains(&self, d: u32) -> bool {
        self.0
            .get((d >> 6) as usize)
            .is_some_and(|w| w & (1 << (d & 63)) != 0)
    }

    /// Whether any bit is set.
    pub fn any(&self) -> bool {
        self.0.iter().any(|&w| w != 0)
    }

    pub fn words(&self) -> &[u64] {
        &self.0
    }

    /// The bits stored as `words`, when none lies past document `docs - 1`.
    pub fn from_words(words: impl Into<Column<u64>>, docs: usize) -> Option<Self> {
        let words = words.into();
        let fits = |i: usize, w: u64| w == 0 || i * 64 + (64 - w.leading_zeros() as usize) <= docs;
        words
            .iter()
            .enumerate()
            .all(|(i, &w)| fits(i, w))
            .then_some(Self(words))
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

/// The text of one document, by field.
#[derive(Debug, Clone, Copy)]
pub struct DocText<'a> {
    pub user: &'a str,
    pub assistant: &'a str,
    pub tools: &'a str,
}

impl<'a> DocText<'a> {
    pub fn field(&self, f: usize) -> &'a str {
        match f {
            FIELD_USER => self.user,
            FIELD_ASSISTANT => self.assistant,
            _ => self.tools,
        }
    }
}

/// A document to add: where it belongs and its text by field.
#[derive(Debug, Clone, Copy)]
pub struct NewDoc<'a> {
    pub conv: u32,
    pub turn: u32,
    pub timestamp: Option<i64>,
    pub dup_key: Option<u64>,
    pub fields: [&'a str; FIELDS],
}

/// Encodes per-field frequencies: one byte (user 3 bits, assistant 3 bits, tools 2 bits) when
/// they fit, else an escape byte 0 followed by three varints.
#[inline]
pub fn put_tf(tf: &Tf, mut push: impl FnMut(u8)) {
    if tf[0] < 8 && tf[1] < 8 && tf[2] < 4 {
        push((tf[0] | tf[1] << 3 | tf[2] << 6) as u8);
    } else {
        push(0);
        for &f in tf {
            varint::put_with(u64::from(f), &mut push);
        }
    }
}

#[inline]
pub fn get_tf(buf: &[u8], pos: &mut usize) -> Tf {
    let b = buf.get(*pos).copied().unwrap_or(1);
    *pos += 1;
    if b != 0 {
        return [u32::from(b & 7), u32::from((b >> 3) & 7), u32::from(b >> 6)];
    }
    let mut tf = [0; FIELDS];
    for f in &mut tf {
        *f = varint::get(buf, pos) as u32;
    }
    tf
}

/// A term's postings in one segment.
#[derive(Debug, Clone, Copy)]
pub struct PostingList<'a> {
    pub df: u32,
    pub bytes: &'a [u8],
    pub term_id: u32,
}

/// Sequential reader over a posting list.
pub struct PostingCursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    left: u32,
    pub doc: u32,
    pub tf: Tf,
}

impl<'a> PostingCursor<'a> {
    pub fn new(list: PostingList<'a>) -> Self {
        let mut c = PostingCursor {
            bytes: list.bytes,
            pos: 0,
            left: list.df,
            doc: 0,
            tf: [0; FIELDS],
        };
        c.doc = u32::MAX;
        c.advance_from(0, true);
        c
    }

    fn advance_from(&mut self, base: u32, first: bool) {
        if self.left == 0 {
            self.doc = u32::MAX;
            return;
        }
        self.left -= 1;
        let delta = varint::get(self.bytes, &mut self.pos) as u32;
        self.doc = if first { delta } else { base + delta };
        self.tf = get_tf(self.bytes, &mut self.pos);
    }

    /// A cursor over `bytes` from byte `pos`, with `left` postings to go, the previous
    /// document being `base` (used to jump to a block).
    pub fn resume(bytes: &'a [u8], pos: usize, left: u32, base: u32) -> Self {
        let mut c = PostingCursor {
            bytes,
            pos,
            left,
            doc: base,
            tf: [0; FIELDS],
        };
        c.advance_from(base, false);
        c
    }

    /// Moves to the next posting; `doc` becomes `u32::MAX` at the end.
    #[inline]
    pub fn next(&mut self) {
        let base = self.doc;
        self.advance_from(base, false);
    }
}

#[cfg(test)]
mod tests {
    use super::DocBits;

    #[test]
    fn doc_bits_past_the_last_document_are_refused() {
        let mut b = DocBits::default();
        b.set(3);
        b.set(64);
        assert!(b.contains(3) && b.contains(64) && !b.contains(4) && !b.contains(9999));
        assert!(DocBits::from_words(b.words().to_vec(), 65).is_some());
        assert!(DocBits::from_words(b.words().to_vec(), 64).is_none());
        assert!(DocBits::from_words(vec![0, 0, 0], 1).is_some_and(|b| !b.any()));
    }
}
