//! Term interning while a segment is built: exact string → dense id. An open-addressing table
//! whose slots hold the key's hash and, for keys of up to 16 bytes (nearly all terms), the key
//! itself: a lookup touches one slot and compares in registers; longer keys are compared with
//! the stored string. Different words never share an id.

use rustc_hash::FxHasher;
use std::hash::Hasher;

/// Keys up to this many bytes live inside the slot.
const INLINE: usize = 16;

/// One table slot (40 bytes). `extra` is the caller's per-term word, kept beside the key so
/// that the per-token bookkeeping touches the same cache line as the lookup.
#[derive(Clone, Copy, Default)]
struct Slot {
    hash: u64,
    /// Id + 1; 0 marks an empty slot.
    id: u32,
    len: u32,
    key: [u8; INLINE],
    extra: u64,
}

/// Interned terms and their ids (ids are dense, in first-seen order).
#[derive(Default)]
pub struct Interner {
    slots: Vec<Slot>,
    terms: Vec<Box<str>>,
}

/// The slot hash of a key: rustc's Fx hash (its byte hash handles a 16-byte word per step).
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish()
}

/// The key padded into a slot's inline bytes.
#[inline]
fn inline_key(bytes: &[u8]) -> [u8; INLINE] {
    let mut k = [0u8; INLINE];
    let n = bytes.len().min(INLINE);
    k[..n].copy_from_slice(&bytes[..n]);
    k
}

impl Interner {
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The id of `term`, inserting it when new; the flag says whether it was new.
    #[inline]
    pub fn get_or_insert(&mut self, term: &str) -> (u32, bool) {
        let (id, new, _) = self.entry(term, 0);
        (id, new)
    }

    /// Like [`Self::get_or_insert`], with the term's `extra` word (set to `init` when new).
    #[inline]
    pub fn entry(&mut self, term: &str, init: u64) -> (u32, bool, &mut u64) {
        if self.terms.len() * 2 >= self.slots.len() {
            self.grow();
        }
        let bytes = term.as_bytes();
        let h = hash(bytes);
        let key = inline_key(bytes);
        let len = bytes.len() as u32;
        let mask = self.slots.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            let s = &self.slots[i];
            if s.id == 0 {
                let id = self.terms.len() as u32;
                self.slots[i] = Slot {
                    hash: h,
                    id: id + 1,
                    len,
                    key,
                    extra: init,
                };
                self.terms.push(term.into());
                return (id, true, &mut self.slots[i].extra);
            }
            if s.hash == h && s.len == len && s.key == key {
                let id = s.id - 1;
                if bytes.len() <= INLINE || *self.terms[id as usize].as_bytes() == *bytes {
                    return (id, false, &mut self.slots[i].extra);
                }
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        let mut slots = vec![Slot::default(); size];
        let mask = size - 1;
        for s in self.slots.iter().filter(|s| s.id != 0) {
            let mut i = (s.hash as usize) & mask;
            while slots[i].id != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = *s;
        }
        self.slots = slots;
    }

    pub fn term(&self, id: u32) -> &str {
        &self.terms[id as usize]
    }

    /// The terms, by id.
    pub fn into_terms(self) -> Vec<Box<str>> {
        self.terms
    }
}

#[cfg(test)]
mod tests {
    use super::Interner;

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
    }
}
