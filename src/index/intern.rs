//! Term interning while a segment is built: exact string → dense id. An open-addressing table
//! keyed by a 64-bit hash with the string compared on every hash match, so different words
//! never share an id; short keys are compared inline without a library call.

/// Interned terms and their ids (ids are dense, in first-seen order).
#[derive(Default)]
pub struct Interner {
    /// Slot → id + 1 (0 = empty).
    slots: Vec<u32>,
    hashes: Vec<u64>,
    terms: Vec<Box<str>>,
}

#[inline]
fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let n = a.len();
    // fixed-size (overlapping) loads compile to plain moves, no library call
    let w8 = |s: &[u8], i: usize| {
        u64::from_le_bytes([
            s[i],
            s[i + 1],
            s[i + 2],
            s[i + 3],
            s[i + 4],
            s[i + 5],
            s[i + 6],
            s[i + 7],
        ])
    };
    let w4 = |s: &[u8], i: usize| u32::from_le_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]]);
    match n {
        0 => true,
        1..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=8 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        9..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        _ => a == b,
    }
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
        if self.terms.len() * 2 >= self.slots.len() {
            self.grow();
        }
        let h = hash(term.as_bytes());
        let mask = self.slots.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            let e = self.slots[i];
            if e == 0 {
                let id = self.terms.len() as u32;
                self.slots[i] = id + 1;
                self.hashes.push(h);
                self.terms.push(term.into());
                return (id, true);
            }
            let id = (e - 1) as usize;
            if self.hashes[id] == h && same(self.terms[id].as_bytes(), term.as_bytes()) {
                return (id as u32, false);
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        let mut slots = vec![0u32; size];
        let mask = size - 1;
        for (id, &h) in self.hashes.iter().enumerate() {
            let mut i = (h as usize) & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = id as u32 + 1;
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
    }
}
