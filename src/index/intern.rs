//! Term interning while a segment is built: exact string → dense id. An open-addressing table
//! whose 32-byte slots hold part of the key's hash, its length and, for keys of up to 16 bytes
//! (nearly all terms), the key itself: a lookup touches one cache line and compares in
//! registers; longer keys are compared with the stored string. Different words never share an
//! id. The terms are stored end to end in one buffer.

use crate::util::huge::{HugeVec, prefetch};
use crate::util::{eq_bytes, extend_short};
use rustc_hash::FxHasher;
use std::hash::Hasher;

/// Keys up to this many bytes live inside the slot.
const INLINE: usize = 16;
/// How many terms ahead a rebuild of the table prefetches the slot a term goes to.
const REHASH_AHEAD: usize = 16;

/// One table slot (32 bytes: two per cache line, so a probe touches one line). `extra` is the
/// caller's per-term word, kept beside the key so that the per-token bookkeeping touches the
/// same cache line as the lookup.
#[derive(Clone, Copy, Default)]
#[repr(align(32))]
struct Slot {
    /// The key's hash (high 24 bits) and length (low 8 bits, at most 255): see [`tag`].
    tag: u32,
    /// Id + 1; 0 marks an empty slot.
    id: u32,
    /// The key's first [`INLINE`] bytes, zero-padded, as little-endian words.
    key: [u64; 2],
    extra: u64,
}

/// Interned terms and their ids (ids are dense, in first-seen order). The terms live end to
/// end in one buffer (one allocation, not one per term).
#[derive(Default)]
pub(crate) struct Interner {
    /// In huge pages once large: every lookup lands at random in it.
    slots: HugeVec<Slot>,
    bytes: Vec<u8>,
    /// Start of each term in `bytes`, plus the end of the last.
    ends: Vec<u32>,
}

/// The slot hash of a key: rustc's Fx hash (its byte hash handles a 16-byte word per step).
#[inline]
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish()
}

/// A slot's tag: 24 bits of the hash (not those that choose the slot) and the key's length
/// (255 standing for any longer key).
#[inline]
fn tag(full: u64, len: usize) -> u32 {
    ((full >> 32) as u32 & !0xff) | len.min(255) as u32
}

/// The key's first [`INLINE`] bytes, zero-padded, as a slot holds them: read straight into
/// registers by a few loads from the key, some overlapping, never written to memory first. (Built
/// in a stack array by short stores and then compared as wider words, the key was read back
/// before those stores could be forwarded to the load: a stall on every lookup.)
#[inline]
fn inline_key(bytes: &[u8]) -> [u64; 2] {
    let n = bytes.len();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| {
        u64::from(u32::from_le_bytes(
            bytes[at..at + 4].try_into().expect("4 bytes"),
        ))
    };
    match n {
        16.. => [word(0), word(8)],
        // the last eight bytes, shifted down so that bytes past the key are zeros
        9..=15 => [word(0), word(n - 8) >> (8 * (16 - n))],
        8 => [word(0), 0],
        // two overlapping halves: the bytes they share are the same bytes
        4..=7 => [half(0) | half(n - 4) << (8 * (n - 4)), 0],
        1..=3 => {
            let b = |i: usize| u64::from(bytes[i]) << (8 * i);
            [b(0) | b(n / 2) | b(n - 1), 0]
        }
        0 => [0, 0],
    }
}

/// The terms of an [`Interner`], by id.
#[derive(Default)]
pub(crate) struct Terms {
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl Terms {
    pub(crate) fn len(&self) -> usize {
        self.ends.len().saturating_sub(1)
    }

    /// Term `id`'s bytes (UTF-8: only `&str`s are interned).
    #[inline]
    pub(crate) fn get(&self, id: u32) -> &[u8] {
        let i = id as usize;
        &self.bytes[self.ends[i] as usize..self.ends[i + 1] as usize]
    }

    /// Starts bringing where term `id` is located into cache (see [`Self::prefetch_bytes`]).
    #[inline]
    pub(crate) fn prefetch(&self, id: u32) {
        if let Some(e) = self.ends.get(id as usize) {
            prefetch(e);
        }
    }

    /// Starts bringing term `id`'s bytes into cache (its location read, so best some time
    /// after [`Self::prefetch`]).
    #[inline]
    pub(crate) fn prefetch_bytes(&self, id: u32) {
        if let Some(b) = self
            .ends
            .get(id as usize)
            .and_then(|&e| self.bytes.get(e as usize))
        {
            prefetch(b);
        }
    }

    /// Bytes of all terms.
    pub(crate) fn total_bytes(&self) -> usize {
        self.bytes.len()
    }
}

impl Interner {
    pub(crate) fn len(&self) -> usize {
        self.ends.len().saturating_sub(1)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of `term`, inserting it when new; the flag says whether it was new.
    #[inline]
    #[cfg(test)]
    pub(crate) fn get_or_insert(&mut self, term: &str) -> (u32, bool) {
        let (id, new, _) = self.entry(term, 0);
        (id, new)
    }

    /// Like [`Self::get_or_insert`], with the term's `extra` word (set to `init` when new).
    #[inline]
    #[cfg(test)]
    pub(crate) fn entry(&mut self, term: &str, init: u64) -> (u32, bool, &mut u64) {
        self.entry_hashed(term.as_bytes(), hash(term.as_bytes()), init)
    }

    /// Starts bringing the slot where a key of hash `full` is looked for into cache (see
    /// [`Self::entry_hashed`]).
    #[inline]
    pub(crate) fn prefetch(&self, full: u64) {
        if let Some(s) = self
            .slots
            .get(full as usize & self.slots.len().wrapping_sub(1))
        {
            prefetch(s);
        }
    }

    /// [`Self::entry`] of the bytes of a `&str` whose [`hash`] is `full`.
    #[inline]
    pub(crate) fn entry_hashed(
        &mut self,
        bytes: &[u8],
        full: u64,
        init: u64,
    ) -> (u32, bool, &mut u64) {
        if self.len() * 2 >= self.slots.len() {
            self.grow();
        }
        let t = tag(full, bytes.len());
        let key = inline_key(bytes);
        let mask = self.slots.len() - 1;
        let mut i = (full as usize) & mask;
        loop {
            let s = &self.slots[i];
            if s.id == 0 {
                let id = self.len() as u32;
                self.slots[i] = Slot {
                    tag: t,
                    id: id + 1,
                    key,
                    extra: init,
                };
                extend_short(&mut self.bytes, bytes);
                self.ends.push(self.bytes.len() as u32);
                return (id, true, &mut self.slots[i].extra);
            }
            // same length and first 16 bytes: the same key when it fits the slot
            if s.tag == t && s.key == key {
                let id = s.id - 1;
                if bytes.len() <= INLINE || eq_bytes(self.term_bytes(id), bytes) {
                    return (id, false, &mut self.slots[i].extra);
                }
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn term_bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        &self.bytes[self.ends[i] as usize..self.ends[i + 1] as usize]
    }

    /// Makes room for `more` new terms without growing the table in [`Self::entry`], where a
    /// grow must keep every slot's `extra` word: here, between documents, the words are stale
    /// (they name earlier documents) and are reset to `init`, so the table is rebuilt in id
    /// order, reading the terms' buffer from start to end instead of at random (the grows took
    /// 2-4% of the first build).
    pub(crate) fn reserve_fresh(&mut self, more: usize, init: u64) {
        if (self.len() + more) * 2 < self.slots.len() {
            return;
        }
        if self.ends.is_empty() {
            self.ends.push(0);
        }
        let mut size = self.slots.len().max(1024);
        while (self.len() + more) * 2 >= size {
            size *= 2;
        }
        self.empty_table(size);
        let n = self.len();
        let (slots, mask) = (&mut self.slots, size - 1);
        let (ends, all) = (&self.ends, &self.bytes);
        let term = |id: usize| &all[ends[id] as usize..ends[id + 1] as usize];
        // each term lands at random in a table larger than the caches: its slot is prefetched
        // [`REHASH_AHEAD`] terms before it is written, its hash kept until then
        let mut ahead = [0u64; REHASH_AHEAD];
        for id in 0..n.min(REHASH_AHEAD) {
            ahead[id] = hash(term(id));
            prefetch(&slots[ahead[id] as usize & mask]);
        }
        for id in 0..n {
            let full = ahead[id % REHASH_AHEAD];
            if id + REHASH_AHEAD < n {
                let next = hash(term(id + REHASH_AHEAD));
                ahead[id % REHASH_AHEAD] = next;
                prefetch(&slots[next as usize & mask]);
            }
            let bytes = term(id);
            let mut i = (full as usize) & mask;
            while slots[i].id != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = Slot {
                tag: tag(full, bytes.len()),
                id: id as u32 + 1,
                key: inline_key(bytes),
                extra: init,
            };
        }
    }

    /// Makes the table `size` empty slots, where it is: its memory is kept and grown in place
    /// (see [`HugeVec`]), so only the added room is new memory. A new table for each doubling
    /// took fresh pages for every size passed through, each zeroed by the kernel: 6% of a
    /// first build's CPU.
    fn empty_table(&mut self, size: usize) {
        self.slots.clear();
        self.slots.resize(size, Slot::default());
    }

    /// Doubles the table, keeping every slot as it is.
    fn grow(&mut self) {
        if self.ends.is_empty() {
            self.ends.push(0);
        }
        let size = (self.slots.len() * 2).max(1024);
        // (rare: a document bringing more new terms than `reserve_fresh` made room for)
        let kept: Vec<Slot> = self.slots.iter().filter(|s| s.id != 0).copied().collect();
        self.empty_table(size);
        let mask = size - 1;
        for s in kept {
            let full = hash(self.term_bytes(s.id - 1));
            let mut i = (full as usize) & mask;
            while self.slots[i].id != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    #[cfg(test)]
    pub(crate) fn term(&self, id: u32) -> &str {
        std::str::from_utf8(self.term_bytes(id)).unwrap_or("")
    }

    /// The terms, by id.
    pub(crate) fn into_terms(mut self) -> Terms {
        self.terms_out()
    }

    /// The terms, by id, leaving the interner empty with its table kept (every slot emptied in
    /// place: rewriting resident memory is cheaper than the kernel's zeroing of a new mapping).
    pub(crate) fn take_terms(&mut self) -> Terms {
        self.slots.fill(Slot::default());
        let terms = self.terms_out();
        // a kept table skips the start of `reserve_fresh`/`grow`, which would put this there
        self.ends.push(0);
        terms
    }

    /// Gives the buffers of `terms` (taken by [`Self::take_terms`]) back to the emptied
    /// interner, so that the next terms do not regrow them from nothing.
    pub(crate) fn recycle(&mut self, terms: Terms) {
        if !self.is_empty() {
            return;
        }
        let Terms {
            mut bytes,
            mut ends,
        } = terms;
        bytes.clear();
        ends.clear();
        ends.push(0);
        self.bytes = bytes;
        self.ends = ends;
    }

    fn terms_out(&mut self) -> Terms {
        let mut ends = std::mem::take(&mut self.ends);
        if ends.is_empty() {
            ends.push(0);
        }
        Terms {
            bytes: std::mem::take(&mut self.bytes),
            ends,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{INLINE, Interner, inline_key};

    #[test]
    fn an_inline_key_is_the_zero_padded_first_bytes() {
        let text: Vec<u8> = (1..=40u8).map(|b| b.wrapping_mul(37) | 1).collect();
        for n in 0..=text.len() {
            let mut padded = [0u8; INLINE];
            padded[..n.min(INLINE)].copy_from_slice(&text[..n.min(INLINE)]);
            let want = [
                u64::from_le_bytes(padded[..8].try_into().unwrap()),
                u64::from_le_bytes(padded[8..].try_into().unwrap()),
            ];
            assert_eq!(inline_key(&text[..n]), want, "length {n}");
        }
    }

    #[test]
    fn interns_exactly() {
        let mut t = Interner::default();
        let words: Vec<String> = (0..5000)
            .map(|i| format!("w{i}_{}", "x".repeat(i % 40)))
            .collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(t.get_or_insert(w), (i as u32, true));
        }
        for (i, w) in words.iter().enumerate() {
            assert_eq!(t.get_or_insert(w), (i as u32, false));
            assert_eq!(t.term(i as u32), w);
        }
        assert_eq!(t.len(), 5000);
        // same first 16 bytes, different tails
        let a = format!("{}{}", "p".repeat(16), "alpha");
        let b = format!("{}{}", "p".repeat(16), "betaa");
        let (ia, _) = t.get_or_insert(&a);
        let (ib, _) = t.get_or_insert(&b);
        assert_ne!(ia, ib);
        // a fresh rebuild keeps every id and resets the extra words
        let (_, _, extra) = t.entry(&words[7], 0);
        *extra = 99;
        t.reserve_fresh(100_000, 5);
        for (i, w) in words.iter().enumerate() {
            let (id, new, extra) = t.entry(w, 0);
            assert_eq!((id, new, *extra), (i as u32, false, 5));
        }
        assert_eq!(t.get_or_insert(&b), (ib, false));
    }

    #[test]
    fn tables_grown_in_place_keep_ids_and_extra_words() {
        // past 65,536 slots the table is a mapping grown in place: doubled mid-document
        // (`grow`, extra words kept) and before a document (`reserve_fresh`, reset)
        let mut t = Interner::default();
        let words: Vec<String> = (0..200_000).map(|i| format!("t{i}")).collect();
        for (i, w) in words.iter().enumerate() {
            let (id, new, extra) = t.entry(w, 0);
            assert_eq!((id, new), (i as u32, true));
            *extra = i as u64 + 1;
        }
        assert!(t.slots.len() >= 400_000);
        for (i, w) in words.iter().enumerate() {
            assert_eq!(*t.entry(w, 0).2, i as u64 + 1, "extra of {w} after grows");
        }
        t.reserve_fresh(1_000_000, 3);
        assert!(t.slots.len() > 2_000_000);
        for (i, w) in words.iter().enumerate().rev() {
            let (id, new, extra) = t.entry(w, 0);
            assert_eq!((id, new, *extra), (i as u32, false, 3));
        }
        assert_eq!(t.get_or_insert("t200000"), (200_000, true));
    }

    #[test]
    fn recycled_buffers_start_a_fresh_dictionary() {
        let mut t = Interner::default();
        for w in ["alpha", "beta", "a-term-longer-than-sixteen-bytes"] {
            t.get_or_insert(w);
        }
        let terms = t.take_terms();
        assert_eq!(terms.len(), 3);
        assert_eq!(terms.get(2), b"a-term-longer-than-sixteen-bytes");
        let room = terms.bytes.capacity();
        t.recycle(terms);
        assert!(t.is_empty());
        assert_eq!(t.bytes.capacity(), room);
        // the old terms are gone; new ones are numbered from 0
        assert_eq!(t.get_or_insert("beta"), (0, true));
        assert_eq!(t.get_or_insert("gamma"), (1, true));
        assert_eq!(t.get_or_insert("beta"), (0, false));
        assert_eq!(t.term(1), "gamma");
        // a non-empty interner keeps its own buffers
        let other = Interner::default().take_terms();
        t.recycle(other);
        assert_eq!(t.len(), 2);
        assert_eq!(t.get_or_insert("gamma"), (1, false));
    }
}
