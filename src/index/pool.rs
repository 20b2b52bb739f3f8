//! Posting lists under construction, all in one byte pool: each list is a chain of slices
//! that double in size (8 bytes, then 16, … up to 4 KiB), each ending in the offset of the
//! next. A segment builder used to keep one `Vec<u8>` per term: hundreds of thousands of small
//! vectors, each grown by reallocation, which cost a tenth of the first build in `malloc`,
//! `realloc` and `free` alone. Appending here never moves a byte; the lists are read back once,
//! in dictionary order, when the segment is laid out.

use crate::util::extend_short;
use crate::util::huge::{HugeVec, prefetch};

/// Bytes of the offset that ends each slice.
const LINK: usize = 8;
/// Payload of the first slice; each next slice holds twice as much, up to [`MAX_SLICE`].
const FIRST_SLICE: usize = 8;
const MAX_SLICE: usize = 4096;

/// One list's place in the pool. `Default` is the empty list.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct List {
    /// Start of the first slice (meaningless while `len` is 0).
    head: u64,
    /// Where the next byte goes.
    tail: u64,
    /// Payload bytes left in the current slice.
    left: u32,
    /// Payload size of the current slice.
    size: u32,
}

/// The pool the lists live in.
#[derive(Debug, Default)]
pub(super) struct Pool {
    /// In huge pages once large: the lists' tails are written at random.
    bytes: HugeVec<u8>,
    /// Payload bytes written, over all lists.
    written: usize,
}

impl Pool {
    /// Payload bytes written, over all lists.
    pub(super) fn written(&self) -> usize {
        self.written
    }

    /// Forgets every list, keeping the pool's memory for the next segment's lists.
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.written = 0;
    }

    /// Appends `b` to `list`.
    #[inline]
    pub(super) fn push(&mut self, list: &mut List, b: u8) {
        if list.left == 0 {
            self.next_slice(list);
        }
        self.bytes[list.tail as usize] = b;
        list.tail += 1;
        list.left -= 1;
        self.written += 1;
    }

    /// Starts bringing the place where `list`'s next byte goes into cache.
    #[inline]
    pub(super) fn prefetch(&self, list: &List) {
        if let Some(b) = self.bytes.get(list.tail as usize) {
            prefetch(b);
        }
    }

    /// Starts bringing the first bytes of `list` into cache (see [`Self::copy_out`]).
    #[inline]
    pub(super) fn prefetch_head(&self, list: &List) {
        if let Some(b) = self.bytes.get(list.head as usize) {
            prefetch(b);
        }
    }

    /// Starts the list's next slice (its first when the list is empty).
    #[cold]
    fn next_slice(&mut self, list: &mut List) {
        let start = self.bytes.len();
        let size = if list.size == 0 {
            FIRST_SLICE
        } else {
            (list.size as usize * 2).min(MAX_SLICE)
        };
        self.bytes.resize(start + size + LINK, 0);
        if list.size == 0 {
            list.head = start as u64;
        } else {
            // the current slice is full: its link is the next LINK bytes
            let at = list.tail as usize;
            self.bytes[at..at + LINK].copy_from_slice(&(start as u64).to_le_bytes());
        }
        list.tail = start as u64;
        list.size = size as u32;
        list.left = size as u32;
    }

    /// Appends the bytes of `list`, in order, to `out` (which needs [`crate::util::SHORT`] bytes
    /// of room beyond them not to grow: see [`extend_short`]).
    pub(super) fn copy_out(&self, list: &List, out: &mut Vec<u8>) {
        if list.size == 0 {
            return;
        }
        let tail = list.tail as usize;
        let mut start = list.head as usize;
        let mut size = FIRST_SLICE;
        loop {
            let end = start + size;
            // the slice holding the tail is the last (a later slice starts past this one's
            // link, so the tail of a longer list is never in `start..=end`)
            if (start..=end).contains(&tail) {
                extend_short(out, &self.bytes[start..tail]);
                return;
            }
            extend_short(out, &self.bytes[start..end]);
            let mut link = [0u8; LINK];
            link.copy_from_slice(&self.bytes[end..end + LINK]);
            start = u64::from_le_bytes(link) as usize;
            size = (size * 2).min(MAX_SLICE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_lists_read_back_in_order() {
        let mut pool = Pool::default();
        let mut lists = [List::default(); 5];
        let mut want: Vec<Vec<u8>> = vec![Vec::new(); 5];
        let mut n = 0u32;
        for round in 0..3000usize {
            for (i, (l, w)) in lists.iter_mut().zip(&mut want).enumerate() {
                // list i gets a byte every i+1 rounds: lengths from 0 up to 3000
                if round % (i + 1) == 0 && !(i == 4 && round > 0) {
                    let b = (n % 251) as u8;
                    n += 1;
                    pool.push(l, b);
                    w.push(b);
                }
            }
        }
        let empty = List::default();
        let mut out = Vec::new();
        pool.copy_out(&empty, &mut out);
        assert!(out.is_empty());
        for (l, w) in lists.iter().zip(&want) {
            out.clear();
            pool.copy_out(l, &mut out);
            assert_eq!(&out, w);
        }
        assert_eq!(pool.written(), want.iter().map(Vec::len).sum::<usize>());
    }

    #[test]
    fn lengths_at_every_slice_boundary_read_back() {
        for len in 0..200usize {
            let mut pool = Pool::default();
            let mut a = List::default();
            let mut b = List::default();
            for i in 0..len {
                pool.push(&mut a, i as u8);
                crate::util::varint::put_with(300, |x| pool.push(&mut b, x));
            }
            let mut out = Vec::new();
            pool.copy_out(&a, &mut out);
            assert_eq!(out, (0..len).map(|i| i as u8).collect::<Vec<_>>());
            out.clear();
            pool.copy_out(&b, &mut out);
            assert_eq!(out, [0xac, 0x02].repeat(len));
        }
    }
}
