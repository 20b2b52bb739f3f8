//! A small binary codec for the persistent index: little-endian integers, LEB128 varints
//! ([`super::varint`]),
//! length-prefixed bytes and strings, bulk integer arrays (aligned ones, [`Encoder::column`],
//! can be read back as views of a mapped file), and a running checksum (xxh3, 64 bit) over
//! every byte so a truncated or corrupted file is detected before anything read from it is
//! trusted.
use super::blob::{Blob, Column, Cursor, Text, Word};
use super::varint;
use std::io::{self, Read, Write};
use xxhash_rust::xxh3::Xxh3Default;

/// Writes values and checksums them.
pub(crate) struct Encoder<W: Write> {
    out: W,
    sum: Xxh3Default,
    written: u64,
}

/// Bytes of integers converted at a time when an array is written.
const WORDS_CHUNK: usize = 64 << 10;

impl<W: Write> Encoder<W> {
    pub(crate) fn new(out: W) -> Self {
        Self {
            out,
            sum: Xxh3Default::new(),
            written: 0,
        }
    }

    pub(crate) fn bytes_raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.sum.update(b);
        self.written += b.len() as u64;
        self.out.write_all(b)
    }

    pub(crate) fn u8(&mut self, v: u8) -> io::Result<()> {
        self.bytes_raw(&[v])
    }

    pub(crate) fn u32(&mut self, v: u32) -> io::Result<()> {
        self.bytes_raw(&v.to_le_bytes())
    }

    pub(crate) fn u64(&mut self, v: u64) -> io::Result<()> {
        self.bytes_raw(&v.to_le_bytes())
    }

    pub(crate) fn i64(&mut self, v: i64) -> io::Result<()> {
        self.bytes_raw(&v.to_le_bytes())
    }

    pub(crate) fn varint(&mut self, v: u64) -> io::Result<()> {
        let mut buf = [0u8; varint::MAX_LEN];
        let n = varint::encode(v, &mut buf);
        self.bytes_raw(&buf[..n])
    }

    pub(crate) fn bool(&mut self, v: bool) -> io::Result<()> {
        self.u8(u8::from(v))
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.varint(b.len() as u64)?;
        self.bytes_raw(b)
    }

    pub(crate) fn str(&mut self, s: &str) -> io::Result<()> {
        self.bytes(s.as_bytes())
    }

    pub(crate) fn opt_str(&mut self, s: Option<&str>) -> io::Result<()> {
        match s {
            Some(s) => {
                self.u8(1)?;
                self.str(s)
            }
            None => self.u8(0),
        }
    }

    pub(crate) fn opt_i64(&mut self, v: Option<i64>) -> io::Result<()> {
        match v {
            Some(v) => {
                self.u8(1)?;
                self.i64(v)
            }
            None => self.u8(0),
        }
    }

    /// A `u32` array in bulk.
    pub(crate) fn u32s(&mut self, v: &[u32]) -> io::Result<()> {
        self.varint(v.len() as u64)?;
        self.words(v)
    }

    /// A `u64` array in bulk.
    pub(crate) fn u64s(&mut self, v: &[u64]) -> io::Result<()> {
        self.varint(v.len() as u64)?;
        self.words(v)
    }

    /// An integer array whose items start at a multiple of [`ALIGN`] bytes from where the
    /// encoder started (zero padding after the length), so that a decoder of a mapped file
    /// that starts equally aligned can view it in place ([`Decoder::column`]).
    pub(crate) fn column<T: Word>(&mut self, v: &[T]) -> io::Result<()> {
        self.varint(v.len() as u64)?;
        let pad = padding(self.written);
        self.bytes_raw(&[0u8; ALIGN as usize][..pad])?;
        self.words(v)
    }

    /// The items of `v`, little-endian, converted [`WORDS_CHUNK`] bytes at a time: writing a
    /// large column (a segment's postings offsets) costs no copy of it.
    fn words<T: Word>(&mut self, v: &[T]) -> io::Result<()> {
        let per = WORDS_CHUNK / T::SIZE;
        let mut buf = Vec::with_capacity(v.len().min(per) * T::SIZE);
        for chunk in v.chunks(per) {
            buf.clear();
            for &x in chunk {
                x.put_le(&mut buf);
            }
            self.bytes_raw(&buf)?;
        }
        Ok(())
    }

    pub(crate) fn checksum(&self) -> u64 {
        self.sum.digest()
    }

    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    pub(crate) fn into_inner(self) -> W {
        self.out
    }
}

/// The error for anything malformed: the cache is then rebuilt, never trusted.
pub(crate) fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt index cache: {what}"),
    )
}

/// Alignment of the items of a [`Encoder::column`], relative to where the encoder started.
pub(crate) const ALIGN: u64 = 8;

/// Zero bytes that bring `at` to a multiple of [`ALIGN`].
fn padding(at: u64) -> usize {
    ((ALIGN - at % ALIGN) % ALIGN) as usize
}

/// Largest length accepted for one array or string (guards allocations against corruption).
const MAX_LEN: u64 = 1 << 34;

/// Where a decoder's bytes come from: a reader, or a mapped file ([`Cursor`]) whose ranges
/// are kept without copying.
pub(crate) trait Source: Read {
    /// The next `n` bytes, shared with the source when it can, else copied.
    fn take_blob(&mut self, n: usize) -> io::Result<Blob> {
        let mut v = vec![0u8; n];
        self.read_exact(&mut v)?;
        Ok(Blob::from(v))
    }
}

impl Source for &[u8] {}

impl<R: Read> Source for io::BufReader<R> {}

impl Source for Cursor {
    fn take_blob(&mut self, n: usize) -> io::Result<Blob> {
        self.slice(n)
    }
}

impl<S: Source> Source for &mut S {
    fn take_blob(&mut self, n: usize) -> io::Result<Blob> {
        (**self).take_blob(n)
    }
}

/// Reads values and checksums them.
pub(crate) struct Decoder<R: Read> {
    inp: R,
    sum: Xxh3Default,
    /// Bytes left to read, when known: no array longer than what is left is allocated, so a
    /// damaged length fails at once instead of asking for gigabytes.
    left: u64,
    /// Bytes read so far (where the next one is, relative to where the decoder started).
    read: u64,
}

impl<R: Read> Decoder<R> {
    pub(crate) fn new(inp: R) -> Self {
        Self::bounded(inp, u64::MAX)
    }

    /// A decoder of an input known to hold at most `left` more bytes.
    pub(crate) fn bounded(inp: R, left: u64) -> Self {
        Self {
            inp,
            sum: Xxh3Default::new(),
            left,
            read: 0,
        }
    }

    pub(crate) fn fill(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inp.read_exact(buf)?;
        self.sum.update(buf);
        self.left = self.left.saturating_sub(buf.len() as u64);
        self.read += buf.len() as u64;
        Ok(())
    }

    /// A length of an array of `width`-byte items, checked against what is left to read.
    fn items(&mut self, width: u64) -> io::Result<usize> {
        let n = self.length()?;
        if (n as u64).saturating_mul(width) > self.left {
            return Err(corrupt("length past the end"));
        }
        Ok(n)
    }

    pub(crate) fn u8(&mut self) -> io::Result<u8> {
        let mut b = [0u8; 1];
        self.fill(&mut b)?;
        Ok(b[0])
    }

    pub(crate) fn u32(&mut self) -> io::Result<u32> {
        let mut b = [0u8; 4];
        self.fill(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub(crate) fn u64(&mut self) -> io::Result<u64> {
        let mut b = [0u8; 8];
        self.fill(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    pub(crate) fn i64(&mut self) -> io::Result<i64> {
        let mut b = [0u8; 8];
        self.fill(&mut b)?;
        Ok(i64::from_le_bytes(b))
    }

    pub(crate) fn varint(&mut self) -> io::Result<u64> {
        let mut buf = [0u8; varint::MAX_LEN];
        for n in 0..varint::MAX_LEN {
            buf[n] = self.u8()?;
            if buf[n] < 0x80 {
                return Ok(varint::get(&buf[..=n], &mut 0));
            }
        }
        Err(corrupt("varint too long"))
    }

    pub(crate) fn length(&mut self) -> io::Result<usize> {
        let n = self.varint()?;
        if n > MAX_LEN {
            return Err(corrupt("length out of range"));
        }
        Ok(n as usize)
    }

    pub(crate) fn bool(&mut self) -> io::Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(corrupt("bad flag")),
        }
    }

    pub(crate) fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let n = self.items(1)?;
        let mut v = vec![0u8; n];
        self.fill(&mut v)?;
        Ok(v)
    }

    pub(crate) fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?).map_err(|_| corrupt("string is not UTF-8"))
    }

    pub(crate) fn opt_string(&mut self) -> io::Result<Option<String>> {
        if self.bool()? {
            self.string().map(Some)
        } else {
            Ok(None)
        }
    }

    pub(crate) fn opt_i64(&mut self) -> io::Result<Option<i64>> {
        if self.bool()? {
            self.i64().map(Some)
        } else {
            Ok(None)
        }
    }

    pub(crate) fn u32s(&mut self) -> io::Result<Vec<u32>> {
        let n = self.items(4)?;
        let mut raw = vec![0u8; n * 4];
        self.fill(&mut raw)?;
        Ok(raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    pub(crate) fn u64s(&mut self) -> io::Result<Vec<u64>> {
        let n = self.items(8)?;
        let mut raw = vec![0u8; n * 8];
        self.fill(&mut raw)?;
        Ok(raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect())
    }

    pub(crate) fn checksum(&self) -> u64 {
        self.sum.digest()
    }
}

impl<R: Source> Decoder<R> {
    /// A byte string written by [`Encoder::bytes`], shared with a mapped source.
    pub(crate) fn blob(&mut self) -> io::Result<Blob> {
        let n = self.items(1)?;
        self.raw_blob(n)
    }

    /// The next `n` bytes (no length before them), shared with a mapped source.
    pub(crate) fn raw_blob(&mut self, n: usize) -> io::Result<Blob> {
        if n as u64 > self.left {
            return Err(corrupt("length past the end"));
        }
        let b = self.inp.take_blob(n)?;
        self.sum.update(&b);
        self.left = self.left.saturating_sub(n as u64);
        self.read += n as u64;
        Ok(b)
    }

    /// An integer array written by [`Encoder::column`]: a view of a mapped source when this
    /// decoder started at an [`ALIGN`]-aligned place of the mapping, else a copy.
    pub(crate) fn column<T: Word>(&mut self) -> io::Result<Column<T>> {
        let n = self.items(T::SIZE as u64)?;
        let mut pad = [0u8; ALIGN as usize];
        let pad = &mut pad[..padding(self.read)];
        self.fill(pad)?;
        if pad.iter().any(|&b| b != 0) {
            return Err(corrupt("column padding"));
        }
        let blob = self.raw_blob(n * T::SIZE)?;
        Column::new(blob).map_err(|e| corrupt(&e.to_string()))
    }

    /// A string written by [`Encoder::str`], shared with a mapped source.
    pub(crate) fn text(&mut self) -> io::Result<Text> {
        Text::new(self.blob()?).ok_or_else(|| corrupt("string is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ingester hashes a file's prefix as it streams by and compares it with a one-shot
    /// hash of the same bytes read back: the split points must not matter.
    #[test]
    fn stream_checksum_ignores_split_points() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let one = xxhash_rust::xxh3::xxh3_64(&data);
        for split in [1, 3, 7, 8, 9, 64, 500] {
            let mut s = Xxh3Default::new();
            for piece in data.chunks(split) {
                s.update(piece);
            }
            assert_eq!(s.digest(), one, "split {split}");
        }
    }

    #[test]
    fn columns_are_aligned_and_read_back_mapped_or_copied() {
        let mut e = Encoder::new(Vec::new());
        e.u8(7).unwrap();
        e.column(&[1u32, 2, 3]).unwrap();
        e.u8(9).unwrap();
        e.column(&[u64::MAX, 5]).unwrap();
        e.column::<u32>(&[]).unwrap();
        let bytes = e.into_inner();
        let read = |d: &mut Decoder<&mut Cursor>| {
            assert_eq!(d.u8().unwrap(), 7);
            let a = d.column::<u32>().unwrap();
            assert_eq!(d.u8().unwrap(), 9);
            let b = d.column::<u64>().unwrap();
            let c = d.column::<u32>().unwrap();
            (a, b, c)
        };
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, &bytes).unwrap();
        let mut cursor = Cursor::map(&f, 0).unwrap();
        let (a, b, c) = read(&mut Decoder::new(&mut cursor));
        assert_eq!(
            (&*a, &*b, c.len()),
            (&[1u32, 2, 3][..], &[u64::MAX, 5][..], 0)
        );
        assert_eq!(b.is_mapped(), cfg!(target_endian = "little"));
        let mut d = Decoder::new(&bytes[..]);
        d.u8().unwrap();
        assert_eq!(&*d.column::<u32>().unwrap(), &[1, 2, 3]);
        // a byte of padding that is not zero
        let mut bad = bytes.clone();
        bad[2] = 1;
        let mut d = Decoder::new(&bad[..]);
        d.u8().unwrap();
        assert!(d.column::<u32>().is_err());
        // a decoder that does not start aligned with the mapping cannot view it
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(&bytes);
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, &shifted).unwrap();
        let mut cursor = Cursor::map(&f, 1).unwrap();
        let mut d = Decoder::new(&mut cursor);
        d.u8().unwrap();
        let a = d.column::<u32>();
        if cfg!(target_endian = "little") {
            assert!(a.is_err(), "misaligned");
        }
    }

    #[test]
    fn round_trips_and_detects_corruption() {
        let mut e = Encoder::new(Vec::new());
        e.varint(300).unwrap();
        e.str("héllo").unwrap();
        e.opt_str(None).unwrap();
        e.u32s(&[1, 2, u32::MAX]).unwrap();
        e.u64s(&[7, u64::MAX]).unwrap();
        e.opt_i64(Some(-5)).unwrap();
        let sum = e.checksum();
        let bytes = e.into_inner();
        let mut d = Decoder::new(&bytes[..]);
        assert_eq!(d.varint().unwrap(), 300);
        assert_eq!(d.string().unwrap(), "héllo");
        assert_eq!(d.opt_string().unwrap(), None);
        assert_eq!(d.u32s().unwrap(), [1, 2, u32::MAX]);
        assert_eq!(d.u64s().unwrap(), [7, u64::MAX]);
        assert_eq!(d.opt_i64().unwrap(), Some(-5));
        assert_eq!(d.checksum(), sum);
        let mut bad = bytes.clone();
        bad[3] ^= 1;
        let mut d = Decoder::new(&bad[..]);
        let _ = (
            d.varint(),
            d.string(),
            d.opt_string(),
            d.u32s(),
            d.u64s(),
            d.opt_i64(),
        );
        assert_ne!(d.checksum(), sum);
        let mut d = Decoder::new(&bytes[..5]);
        assert!(
            d.varint()
                .and_then(|_| d.string())
                .and_then(|_| d.u32s())
                .is_err()
        );
    }
}
