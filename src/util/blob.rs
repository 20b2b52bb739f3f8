//! Immutable byte buffers that are either owned or a range of a read-only file mapping, so that
//! a restored index uses the cache file's pages where they are (shared by every process that
//! maps the same file, and left to the page cache) instead of copying them onto the heap.
//!
//! Unsafe code is allowed here, for these things only:
//! - mapping a file (`memmap2::Mmap::map`): the mapping is sound while nobody changes the file
//!   in place. Only the index cache is mapped, and its files are only ever written whole under
//!   another name and renamed over the old one (`cache::Cache::write`), so a mapped file's bytes
//!   never change (a renamed-over or deleted file stays mapped until its last segment goes);
//! - handing out a [`Text`] as `&str` without re-validating it: its bytes were checked to be
//!   UTF-8 when it was made (or were appended as whole `&str`s, by a [`TextBuf`]) and never
//!   change after;
//! - handing out a [`Column`] of a mapped range as `&[u32]` / `&[u64]`: only on a little-endian
//!   host (elsewhere the numbers are copied), and only once the range was checked to be aligned
//!   for the type and a whole number of items long; every bit pattern is a valid integer, and
//!   the bytes never change (see above).
#![allow(unsafe_code)]

use super::huge::{Frozen, HugeVec};
use memmap2::{Mmap, MmapMut, MmapOptions};
use std::fs::File;
use std::io::{self, Read};
use std::ops::{Deref, Range};
use std::sync::Arc;

/// Bytes that never change: owned (on the heap or in an anonymous mapping), or a range of a
/// mapped file.
#[derive(Clone)]
pub(crate) struct Blob(Repr);

#[derive(Clone)]
enum Repr {
    Owned(Vec<u8>),
    Mapped(Arc<Mmap>, Range<usize>),
    /// Private memory that was written in place (see [`TextBuf`]) and is no longer written.
    Anon(Arc<MmapMut>, Range<usize>),
}

impl Blob {
    /// Heap bytes held (a mapped range holds none: its pages belong to the page cache).
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Owned(v) => v.capacity(),
            Repr::Mapped(..) => 0,
            Repr::Anon(_, r) => r.len(),
        }
    }

    /// Whether the bytes are a range of a mapped file.
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.0, Repr::Mapped(..))
    }

    /// Bytes `r` of this blob: the same mapping when mapped, else a copy. `None` out of range.
    pub(crate) fn slice(&self, r: Range<usize>) -> Option<Blob> {
        if r.start > r.end || r.end > self.len() {
            return None;
        }
        Some(match &self.0 {
            Repr::Owned(v) => Blob::from(v[r].to_vec()),
            Repr::Mapped(map, whole) => Blob(Repr::Mapped(
                Arc::clone(map),
                whole.start + r.start..whole.start + r.end,
            )),
            Repr::Anon(map, whole) => Blob(Repr::Anon(
                Arc::clone(map),
                whole.start + r.start..whole.start + r.end,
            )),
        })
    }
}

impl Default for Blob {
    fn default() -> Self {
        Blob(Repr::Owned(Vec::new()))
    }
}

impl From<Vec<u8>> for Blob {
    fn from(v: Vec<u8>) -> Self {
        Blob(Repr::Owned(v))
    }
}

impl Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Owned(v) => v,
            Repr::Mapped(map, r) => &map[r.clone()],
            Repr::Anon(map, r) => &map[r.clone()],
        }
    }
}

impl std::fmt::Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Blob({} bytes, mapped: {})",
            self.len(),
            self.is_mapped()
        )
    }
}

/// UTF-8 text that never changes (a [`Blob`] checked once).
#[derive(Default, Debug)]
pub(crate) struct Text(Blob);

impl Text {
    /// The blob as text, if it is UTF-8.
    pub(crate) fn new(blob: Blob) -> Option<Text> {
        std::str::from_utf8(&blob).ok()?;
        Some(Text(blob))
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    /// Whether the text is kept in the mapping it was written in (see [`TextBuf`]).
    #[cfg(test)]
    pub(crate) fn in_place(&self) -> bool {
        matches!(self.0.0, Repr::Anon(..))
    }
}

/// Text being written, in huge pages once large (only `&str`s are appended), that becomes a
/// [`Text`] where it is: a segment's text is neither copied when it is finished nor faulted
/// in 4 KiB at a time while it is written.
#[derive(Default)]
pub(crate) struct TextBuf(HugeVec<u8>);

impl TextBuf {
    #[inline]
    pub(crate) fn push_str(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn freeze(self) -> Text {
        Text(match self.0.freeze() {
            Frozen::Heap(v) => Blob::from(v),
            Frozen::Map(map, len) => Blob(Repr::Anon(Arc::new(map), 0..len)),
        })
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Blob::from(s.into_bytes()))
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        // SAFETY: the bytes were validated as UTF-8 by `Text::new` (or came from a `String`, or
        // from a `TextBuf`, which only ever appends whole `&str`s) and a `Blob`'s bytes never
        // change (see the module comment on mapped files).
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }
}

/// An integer type a [`Column`] can hold: stored little-endian, any bit pattern valid.
pub(crate) trait Word:
    Copy + Default + std::fmt::Debug + Send + Sync + 'static + private::Sealed
{
    const SIZE: usize;
    fn from_le(b: &[u8]) -> Self;
    fn put_le(self, out: &mut Vec<u8>);
}

mod private {
    pub(crate) trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

impl Word for u32 {
    const SIZE: usize = 4;
    #[inline]
    fn from_le(b: &[u8]) -> Self {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Word for u64 {
    const SIZE: usize = 8;
    #[inline]
    fn from_le(b: &[u8]) -> Self {
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// Why a mapped range cannot be viewed as a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ColumnError {
    #[error("column of {0} bytes is not a whole number of items")]
    Ragged(usize),
    #[error("column is not aligned for its items")]
    Misaligned,
}

/// An immutable array of integers: owned, or a view of an aligned little-endian range of a
/// mapped file (shared with every process that maps it). Reading it costs what reading a
/// slice costs: the pointer and length are resolved once, when it is made.
pub(crate) struct Column<T: Word> {
    ptr: *const T,
    len: usize,
    /// What keeps `ptr` valid (a `Vec`'s buffer does not move when the `Vec` does).
    owner: Owner<T>,
}

enum Owner<T> {
    Owned(Vec<T>),
    Mapped(#[allow(dead_code)] Blob),
}

// SAFETY: a column is an immutable slice; the raw pointer points into memory owned by `owner`
// (a `Vec<T>` or a mapping held by an `Arc`), which is itself `Send + Sync`.
unsafe impl<T: Word> Send for Column<T> {}
unsafe impl<T: Word> Sync for Column<T> {}

impl<T: Word> Column<T> {
    /// A column of the integers `blob` holds (little-endian). A mapped blob is viewed in place
    /// (little-endian hosts; refused when misaligned or ragged); anything else is copied.
    pub(crate) fn new(blob: Blob) -> Result<Column<T>, ColumnError> {
        if blob.len() % T::SIZE != 0 {
            return Err(ColumnError::Ragged(blob.len()));
        }
        if !blob.is_mapped() || cfg!(target_endian = "big") {
            return Ok(Column::from(
                blob.chunks_exact(T::SIZE)
                    .map(T::from_le)
                    .collect::<Vec<T>>(),
            ));
        }
        let ptr = blob.as_ptr();
        if ptr.align_offset(std::mem::align_of::<T>()) != 0 {
            return Err(ColumnError::Misaligned);
        }
        Ok(Column {
            ptr: ptr.cast::<T>(),
            len: blob.len() / T::SIZE,
            owner: Owner::Mapped(blob),
        })
    }

    /// Heap bytes held (a mapped column holds none).
    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.owner {
            Owner::Owned(v) => v.capacity() * T::SIZE,
            Owner::Mapped(_) => 0,
        }
    }

    /// Whether the column is a view of a mapped file.
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self.owner, Owner::Mapped(_))
    }

    /// The integers as an owned vector, for changing them (copied when mapped).
    pub(crate) fn into_vec(self) -> Vec<T> {
        match self.owner {
            Owner::Owned(v) => v,
            Owner::Mapped(_) => self.to_vec(),
        }
    }
}

impl<T: Word> From<Vec<T>> for Column<T> {
    fn from(v: Vec<T>) -> Self {
        Column {
            ptr: v.as_ptr(),
            len: v.len(),
            owner: Owner::Owned(v),
        }
    }
}

impl<T: Word> Default for Column<T> {
    fn default() -> Self {
        Column::from(Vec::new())
    }
}

impl<T: Word> Clone for Column<T> {
    fn clone(&self) -> Self {
        match &self.owner {
            Owner::Owned(v) => Column::from(v.clone()),
            Owner::Mapped(b) => Column {
                ptr: self.ptr,
                len: self.len,
                owner: Owner::Mapped(b.clone()),
            },
        }
    }
}

impl<T: Word> Deref for Column<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` and `len` describe a `Vec<T>`'s contents or an aligned range of whole
        // items in a mapping (checked by `Column::new`), both kept alive and unchanged by
        // `owner` for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Word> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Column({} items, mapped: {})",
            self.len,
            self.is_mapped()
        )
    }
}

impl<T: Word + PartialEq> PartialEq for Column<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

/// A blob read front to back like a reader: a whole mapped file ([`Cursor::map`]) or any blob
/// ([`Cursor::new`]); [`Cursor::slice`] returns ranges of it, without copying when it is mapped.
pub(crate) struct Cursor {
    blob: Blob,
    pos: usize,
}

impl Cursor {
    /// Maps `file` (which must only ever be replaced by rename, never changed in place) and
    /// starts reading at `pos`.
    pub(crate) fn map(file: &File, pos: usize) -> io::Result<Cursor> {
        // SAFETY: see the module comment: only index cache files are mapped, and those are
        // never written in place once they carry their final name.
        // (populated at once: every byte is read for the checksum anyway, and one call that
        // maps all pages is cheaper than a fault per few pages)
        let map = unsafe { MmapOptions::new().populate().map(file)? };
        let len = map.len();
        Ok(Cursor {
            blob: Blob(Repr::Mapped(Arc::new(map), 0..len)),
            pos,
        })
    }

    /// Reads `blob` from its start.
    pub(crate) fn new(blob: Blob) -> Self {
        Cursor { blob, pos: 0 }
    }

    pub(crate) fn len(&self) -> usize {
        self.blob.len()
    }

    /// The next `n` bytes: a range of the same mapping when mapped, else a copy.
    pub(crate) fn slice(&mut self, n: usize) -> io::Result<Blob> {
        let b = self
            .pos
            .checked_add(n)
            .and_then(|e| self.blob.slice(self.pos..e))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        self.pos += n;
        Ok(b)
    }
}

impl Read for Cursor {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = &self.blob[self.pos.min(self.blob.len())..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_mapped_cursor_reads_and_takes_ranges_in_order() {
        let mut f = tempfile::tempfile().expect("temp file");
        f.write_all(b"headPAYLOADrest").expect("write");
        let mut c = Cursor::map(&f, 4).expect("map");
        let b = c.slice(7).expect("take");
        assert_eq!(&*b, b"PAYLOAD");
        assert!(b.is_mapped());
        assert_eq!(b.heap_bytes(), 0);
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).expect("read");
        assert_eq!(rest, b"rest");
        assert!(c.slice(1).is_err(), "past the end");
    }

    fn mapped(bytes: &[u8]) -> Cursor {
        let mut f = tempfile::tempfile().expect("temp file");
        f.write_all(bytes).expect("write");
        Cursor::map(&f, 0).expect("map")
    }

    #[test]
    fn a_column_views_an_aligned_mapped_range_in_place() {
        let mut bytes = Vec::new();
        for x in [1u64, 2, u64::MAX] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        let mut c = mapped(&bytes);
        let col = Column::<u64>::new(c.slice(24).expect("take")).expect("column");
        assert_eq!(&*col, &[1, 2, u64::MAX]);
        assert_eq!(col.is_mapped(), cfg!(target_endian = "little"));
        let copy = col.clone();
        drop(col);
        assert_eq!(&*copy, &[1, 2, u64::MAX]);
        assert_eq!(copy.into_vec(), vec![1, 2, u64::MAX]);
    }

    #[test]
    fn a_column_refuses_misaligned_or_ragged_ranges() {
        let mut c = mapped(&[0u8; 64]);
        c.slice(4).expect("skip");
        let four = c.slice(16).expect("take");
        // 4-aligned: fine for u32, not for u64
        assert_eq!(Column::<u32>::new(four.clone()).map(|c| c.len()), Ok(4));
        if cfg!(target_endian = "little") {
            assert_eq!(
                Column::<u64>::new(four).map(|c| c.len()),
                Err(ColumnError::Misaligned)
            );
        }
        c.slice(1).expect("skip");
        let odd = c.slice(8).expect("take");
        assert!(Column::<u32>::new(odd).is_err(), "misaligned");
        let short = c.slice(6).expect("take");
        assert_eq!(
            Column::<u32>::new(short).map(|c| c.len()),
            Err(ColumnError::Ragged(6))
        );
        assert!(
            Column::<u64>::new(Blob::from(vec![0u8; 12])).is_err(),
            "ragged"
        );
        // owned bytes are copied, whatever their alignment
        let owned = Column::<u32>::new(Blob::from(vec![1, 0, 0, 0, 2, 0, 0, 0])).expect("copy");
        assert_eq!((&*owned, owned.is_mapped()), (&[1u32, 2][..], false));
        assert!(Column::<u64>::default().is_empty());
    }

    #[test]
    fn a_cursor_over_a_slice_takes_ranges_of_the_same_mapping() {
        let mut c = mapped(b"0123456789");
        let mut r = Cursor::new(c.slice(8).expect("take"));
        let mut two = [0u8; 2];
        r.read_exact(&mut two).expect("read");
        let b = r.slice(3).expect("take");
        assert_eq!((&*b, b.is_mapped()), (&b"234"[..], true));
        assert!(r.slice(4).is_err(), "past the end");
        assert_eq!(&*r.slice(3).expect("rest"), b"567");
        let owned = Blob::from(b"abc".to_vec());
        assert_eq!(owned.slice(1..3).as_deref(), Some(&b"bc"[..]));
        assert!(owned.slice(2..4).is_none());
    }

    #[test]
    fn text_is_only_made_of_utf8() {
        assert!(Text::new(Blob::from(vec![0xff, 0xfe])).is_none());
        let t = Text::new(Blob::from("héllo".as_bytes().to_vec())).expect("utf-8");
        assert_eq!(&*t, "héllo");
        assert_eq!(&*Text::from(String::from("x")), "x");
    }
}
