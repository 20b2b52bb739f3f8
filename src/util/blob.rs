//! Immutable byte buffers that are either owned or a range of a read-only file mapping, so that
//! a restored index uses the cache file's pages where they are (shared by every process that
//! maps the same file, and left to the page cache) instead of copying them onto the heap.
//!
//! Unsafe code is allowed here, for two things only:
//! - mapping a file (`memmap2::Mmap::map`): the mapping is sound while nobody changes the file
//!   in place. Only the index cache is mapped, and its files are only ever written whole under
//!   another name and renamed over the old one (`cache::Cache::write`), so a mapped file's bytes
//!   never change (a renamed-over or deleted file stays mapped until its last segment goes);
//! - handing out a [`Text`] as `&str` without re-validating it: its bytes were checked to be
//!   UTF-8 when it was made and never change after.
#![allow(unsafe_code)]

use memmap2::{Mmap, MmapOptions};
use std::fs::File;
use std::io::{self, Read};
use std::ops::{Deref, Range};
use std::sync::Arc;

/// Bytes that never change: owned, or a range of a mapped file.
pub struct Blob(Repr);

enum Repr {
    Owned(Vec<u8>),
    Mapped(Arc<Mmap>, Range<usize>),
}

impl Blob {
    /// Heap bytes held (a mapped range holds none: its pages belong to the page cache).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Owned(v) => v.capacity(),
            Repr::Mapped(..) => 0,
        }
    }

    /// Whether the bytes are a range of a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.0, Repr::Mapped(..))
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
pub struct Text(Blob);

impl Text {
    /// The blob as text, if it is UTF-8.
    pub fn new(blob: Blob) -> Option<Text> {
        std::str::from_utf8(&blob).ok()?;
        Some(Text(blob))
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
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
        // SAFETY: the bytes were validated as UTF-8 by `Text::new` (or came from a `String`)
        // and a `Blob`'s bytes never change (see the module comment on mapped files).
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }
}

/// A read-only mapping of a whole file, read front to back like a reader; [`Cursor::slice`]
/// returns ranges of it without copying.
pub struct Cursor {
    map: Arc<Mmap>,
    pos: usize,
}

impl Cursor {
    /// Maps `file` (which must only ever be replaced by rename, never changed in place) and
    /// starts reading at `pos`.
    pub fn map(file: &File, pos: usize) -> io::Result<Cursor> {
        // SAFETY: see the module comment: only index cache files are mapped, and those are
        // never written in place once they carry their final name.
        // (populated at once: every byte is read for the checksum anyway, and one call that
        // maps all pages is cheaper than a fault per few pages)
        let map = unsafe { MmapOptions::new().populate().map(file)? };
        Ok(Cursor {
            map: Arc::new(map),
            pos,
        })
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The next `n` bytes, as a range of the mapping.
    pub fn slice(&mut self, n: usize) -> io::Result<Blob> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.map.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let blob = Blob(Repr::Mapped(Arc::clone(&self.map), self.pos..end));
        self.pos = end;
        Ok(blob)
    }
}

impl Read for Cursor {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = &self.map[self.pos.min(self.map.len())..];
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

    #[test]
    fn text_is_only_made_of_utf8() {
        assert!(Text::new(Blob::from(vec![0xff, 0xfe])).is_none());
        let t = Text::new(Blob::from("héllo".as_bytes().to_vec())).expect("utf-8");
        assert_eq!(&*t, "héllo");
        assert_eq!(&*Text::from(String::from("x")), "x");
    }
}
