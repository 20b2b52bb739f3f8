//! What the index stores, and how: a document's fields, the metadata kept per document and
//! its text by field; and the posting-list format — delta-coded doc ids as LEB128 varints
//! ([`crate::util::varint`]), per-field term frequencies packed into one byte when they fit, two
//! when only the context field holds the term —
//! with the sequential cursor that decodes it without allocating. A leaf: every other index
//! module builds on these definitions and this module imports none of them.
use crate::util::blob::Column;
use crate::util::varint;

/// Indexed fields of a turn.
pub(crate) const FIELD_USER: usize = 0;
pub(crate) const FIELD_ASSISTANT: usize = 1;
/// Tool names, files touched and commands run.
pub(crate) const FIELD_TOOLS: usize = 2;
/// The turn's context: the prompt of the turn before it in its conversation (at most
/// [`CONTEXT_BYTES`] of it). Scored as a field of its own, with its own length normalisation
/// and a lower weight, so the answer that follows a topic is found by the topic's words; never
/// shown, and never what a hit's matched terms or snippet are made of.
pub(crate) const FIELD_CONTEXT: usize = 3;
/// The fields a turn's own text is in (the ones before [`FIELD_CONTEXT`]).
pub(crate) const OWN_FIELDS: usize = 3;
pub(crate) const FIELDS: usize = 4;
/// Most bytes of the previous prompt a turn's context field keeps (cut at a word boundary):
/// the topic is named early, and a pasted log must not double the index.
pub(crate) const CONTEXT_BYTES: usize = 1024;

/// The context field of a turn whose previous prompt is `prompt`: at most [`CONTEXT_BYTES`] of
/// it, cut before the word that crosses the limit.
pub(crate) fn context_of(prompt: &str) -> &str {
    if prompt.len() <= CONTEXT_BYTES {
        return prompt;
    }
    let mut end = CONTEXT_BYTES;
    while !prompt.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &prompt[..end];
    match cut.rfind(char::is_whitespace) {
        Some(i) if i > 0 => &cut[..i],
        _ => cut,
    }
}

/// Term frequencies of one posting, per field.
pub(crate) type Tf = [u32; FIELDS];

/// Per-document metadata kept in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DocMeta {
    /// The caller's number for the group the document belongs to (a conversation).
    pub conv: u32,
    pub turn: u32,
    /// Epoch milliseconds, `i64::MIN` when unknown.
    pub timestamp: i64,
    /// Number of terms in the document's own fields (BM25 length).
    pub len: u32,
    /// Number of terms in its context field (that field's BM25 length).
    pub context_len: u32,
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
pub(crate) struct DocBits(Column<u64>);

impl DocBits {
    /// Sets the bit of document `d` (of bits being built: restored ones are copied first).
    pub(crate) fn set(&mut self, d: u32) {
        let w = (d >> 6) as usize;
        let mut words = std::mem::take(&mut self.0).into_vec();
        if words.len() <= w {
            words.resize(w + 1, 0);
        }
        words[w] |= 1 << (d & 63);
        self.0 = Column::from(words);
    }

    #[inline]
    pub(crate) fn contains(&self, d: u32) -> bool {
        self.0
            .get((d >> 6) as usize)
            .is_some_and(|w| w & (1 << (d & 63)) != 0)
    }

    /// Whether any bit is set.
    pub(crate) fn any(&self) -> bool {
        self.0.iter().any(|&w| w != 0)
    }

    pub(crate) fn words(&self) -> &[u64] {
        &self.0
    }

    /// The bits stored as `words`, when none lies past document `docs - 1`.
    pub(crate) fn from_words(words: impl Into<Column<u64>>, docs: usize) -> Option<Self> {
        let words = words.into();
        let fits = |i: usize, w: u64| w == 0 || i * 64 + (64 - w.leading_zeros() as usize) <= docs;
        words
            .iter()
            .enumerate()
            .all(|(i, &w)| fits(i, w))
            .then_some(Self(words))
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

/// The text of one document, by field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DocText<'a> {
    pub user: &'a str,
    pub assistant: &'a str,
    pub tools: &'a str,
    /// The previous prompt, as indexed (see [`FIELD_CONTEXT`]).
    pub context: &'a str,
}

impl<'a> DocText<'a> {
    pub(crate) fn field(&self, f: usize) -> &'a str {
        match f {
            FIELD_USER => self.user,
            FIELD_ASSISTANT => self.assistant,
            FIELD_TOOLS => self.tools,
            _ => self.context,
        }
    }
}

/// A document to add: where it belongs and its text by field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewDoc<'a> {
    pub conv: u32,
    pub turn: u32,
    pub timestamp: Option<i64>,
    pub dup_key: Option<u64>,
    /// Text by field; the context is the previous prompt, cut by [`context_of`].
    pub fields: [&'a str; FIELDS],
}

/// The one-byte form of the own fields' frequencies (user 3 bits, assistant 3 bits, tools 2
/// bits), when they fit and are not all zero.
#[inline]
fn packed(tf: &Tf) -> Option<u8> {
    let b = tf[0] | tf[1] << 3 | tf[2] << 6;
    (tf[0] < 8 && tf[1] < 8 && tf[2] < 4 && b != 0).then_some(b as u8)
}

/// Encodes per-field frequencies. Without context: one byte ([`packed`]) when the own fields'
/// fit. Otherwise an escape byte 0, then the varint `context << 1 | own`, where `own` says
/// whether the own fields hold the term; if they do, the packed byte follows, or 0 and three
/// varints. A term only in the context takes two bytes.
#[inline]
pub(crate) fn put_tf(tf: &Tf, mut push: impl FnMut(u8)) {
    let c = tf[FIELD_CONTEXT];
    let p = packed(tf);
    if let (0, Some(b)) = (c, p) {
        push(b);
        return;
    }
    push(0);
    let own = tf[..OWN_FIELDS].iter().any(|&f| f > 0);
    varint::put_with(u64::from(c) << 1 | u64::from(own), &mut push);
    if !own {
        return;
    }
    match p {
        Some(b) => push(b),
        None => {
            push(0);
            for &f in &tf[..OWN_FIELDS] {
                varint::put_with(u64::from(f), &mut push);
            }
        }
    }
}

#[inline]
fn unpack(b: u8) -> Tf {
    [
        u32::from(b & 7),
        u32::from((b >> 3) & 7),
        u32::from(b >> 6),
        0,
    ]
}

#[inline]
pub(crate) fn get_tf(buf: &[u8], pos: &mut usize) -> Tf {
    let b = buf.get(*pos).copied().unwrap_or(1);
    *pos += 1;
    if b != 0 {
        return unpack(b);
    }
    let h = varint::get(buf, pos);
    let c = (h >> 1) as u32;
    if h & 1 == 0 {
        return [0, 0, 0, c];
    }
    let b = buf.get(*pos).copied().unwrap_or(1);
    *pos += 1;
    let mut tf = if b != 0 { unpack(b) } else { [0; FIELDS] };
    if b == 0 {
        for f in &mut tf[..OWN_FIELDS] {
            *f = varint::get(buf, pos) as u32;
        }
    }
    tf[FIELD_CONTEXT] = c;
    tf
}

/// A term's postings in one segment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PostingList<'a> {
    pub df: u32,
    pub bytes: &'a [u8],
    pub term_id: u32,
}

/// Sequential reader over a posting list.
pub(crate) struct PostingCursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    left: u32,
    pub doc: u32,
    pub tf: Tf,
}

impl<'a> PostingCursor<'a> {
    pub(crate) fn new(list: PostingList<'a>) -> Self {
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
    pub(crate) fn resume(bytes: &'a [u8], pos: usize, left: u32, base: u32) -> Self {
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
    pub(crate) fn next(&mut self) {
        let base = self.doc;
        self.advance_from(base, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_round_trip_in_every_form() {
        let cases: [Tf; 8] = [
            [1, 0, 0, 0],
            [7, 7, 3, 0],
            [8, 0, 0, 0],
            [0, 0, 0, 1],
            [0, 0, 0, 300],
            [2, 1, 0, 1],
            [0, 9, 4, 2],
            [100_000, 0, 1, 0],
        ];
        let mut buf = Vec::new();
        for tf in &cases {
            put_tf(tf, |b| buf.push(b));
        }
        let mut pos = 0;
        for tf in &cases {
            assert_eq!(get_tf(&buf, &mut pos), *tf);
        }
        assert_eq!(pos, buf.len());
        let mut only_context = Vec::new();
        put_tf(&[0, 0, 0, 1], |b| only_context.push(b));
        assert_eq!(only_context.len(), 2);
    }

    #[test]
    fn a_long_prompt_is_cut_before_a_word() {
        assert_eq!(context_of("short prompt"), "short prompt");
        let long = "word ".repeat(CONTEXT_BYTES);
        let c = context_of(&long);
        assert!(c.len() <= CONTEXT_BYTES && c.ends_with("word"));
        let wide = "é".repeat(CONTEXT_BYTES);
        assert!(context_of(&wide).len() <= CONTEXT_BYTES);
    }

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
