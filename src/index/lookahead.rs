//! Terms held back for a moment between the tokenizer and the interner: each term's hash is
//! computed, and its table slot prefetched, when it is queued; it is looked up [`DEPTH`] terms
//! later, when the slot has (usually) arrived in cache. Looked up at once, nearly every new
//! term stalled on a cache miss (a fifth of the first build). Terms come out in the order they
//! went in, so ids and postings are the same as without the queue.

/// How many terms are queued before the oldest is looked up.
pub(super) const DEPTH: usize = 16;
/// Longest term that can be queued (a compound's whole form, the longest term the tokenizer
/// emits); a longer one is looked up at once.
pub(super) const MAX: usize = super::tokenizer::MAX_COMPOUND_BYTES;
const _: () = assert!(MAX <= u8::MAX as usize);

/// A queued term: its hash, length and field.
#[derive(Clone, Copy, Default)]
struct Meta {
    hash: u64,
    len: u8,
    field: u8,
}

/// Slots in the ring: more than it queues, so that the term last taken out keeps its slot (and
/// is handed out from there, uncopied) until the next one is taken; a power of two, so that a
/// place in the ring is a mask, not a division.
const SLOTS: usize = (DEPTH + 1).next_power_of_two();

/// A first-in first-out queue of at most [`DEPTH`] terms, copied into fixed slots.
pub(super) struct Lookahead {
    bytes: Box<[[u8; MAX]; SLOTS]>,
    meta: [Meta; SLOTS],
    /// Slot of the oldest term.
    head: usize,
    count: usize,
    /// Slot of the term last taken out.
    out: usize,
}

impl Default for Lookahead {
    fn default() -> Self {
        Self {
            bytes: Box::new([[0; MAX]; SLOTS]),
            meta: [Meta::default(); SLOTS],
            head: 0,
            count: 0,
            out: 0,
        }
    }
}

impl Lookahead {
    /// Whether `term` can be queued (see [`MAX`]).
    #[inline]
    pub(super) fn fits(term: &[u8]) -> bool {
        term.len() <= MAX
    }

    /// Queues `term` (of at most [`MAX`] bytes) of field `field` with its hash; when the queue
    /// was full, returns the oldest term (bytes, hash, field), which leaves it.
    #[inline]
    pub(super) fn push(&mut self, term: &[u8], hash: u64, field: u8) -> Option<(&[u8], u64, u8)> {
        let full = self.count == DEPTH;
        if full {
            self.take_head();
        }
        let slot = (self.head + self.count) & (SLOTS - 1);
        let n = term.len().min(MAX);
        crate::util::copy_short(&mut self.bytes[slot], &term[..n]);
        self.meta[slot] = Meta {
            hash,
            len: n as u8,
            field,
        };
        self.count += 1;
        full.then(|| self.taken())
    }

    /// Takes the oldest queued term out, if any.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(&[u8], u64, u8)> {
        if self.count == 0 {
            return None;
        }
        self.take_head();
        Some(self.taken())
    }

    /// Takes the oldest term out of the queue (its slot is left as it is until the next push
    /// after the next take).
    #[inline]
    fn take_head(&mut self) {
        self.out = self.head;
        self.head = (self.head + 1) & (SLOTS - 1);
        self.count -= 1;
    }

    /// The term last taken out: bytes, hash, field.
    #[inline]
    fn taken(&self) -> (&[u8], u64, u8) {
        let m = self.meta[self.out];
        (&self.bytes[self.out][..usize::from(m.len)], m.hash, m.field)
    }
}

#[cfg(test)]
mod tests {
    use super::{DEPTH, Lookahead};

    #[test]
    fn terms_come_out_in_order() {
        let mut q = Lookahead::default();
        let words: Vec<String> = (0..100)
            .map(|i| "w".repeat(i % 40 + 1) + &i.to_string())
            .collect();
        let mut out = Vec::new();
        for (i, w) in words.iter().enumerate() {
            assert!(Lookahead::fits(w.as_bytes()));
            if let Some((t, h, f)) = q.push(w.as_bytes(), i as u64, (i % 3) as u8) {
                out.push((t.to_vec(), h, f));
            }
            assert_eq!(out.len(), (i + 1).saturating_sub(DEPTH));
        }
        while let Some((t, h, f)) = q.pop() {
            out.push((t.to_vec(), h, f));
        }
        assert!(q.pop().is_none());
        let want: Vec<_> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.as_bytes().to_vec(), i as u64, (i % 3) as u8))
            .collect();
        assert_eq!(out, want);
        assert!(!Lookahead::fits(&[b'x'; 129]));
    }
}
