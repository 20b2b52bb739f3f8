//! Telling whether a transcript's already-read part is still what was read, without reading
//! it all: hashes of its first and last 4 KiB, of the whole read prefix (up to 4 MiB, sampled
//! beyond) for live updates, and a cheaper whole-or-sampled hash for restarts. Also the one
//! way transcripts are opened (regular files only).
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

/// Bytes fingerprinted at the start of a file and just before the read offset.
pub(super) const FINGERPRINT_BYTES: u64 = 4096;
/// A read prefix up to this size is hashed whole to notice any change in it; a longer one is
/// sampled (its first and last 4 KiB and 16 spread windows), keeping updates cheap.
pub(super) const FULL_HASH_MAX: u64 = 4 << 20;
/// Windows sampled across a long prefix, and their size.
pub(super) const SAMPLES: u64 = 16;
pub(super) const SAMPLE_BYTES: u64 = 1024;
/// A read prefix up to this size is verified whole when a restart restores the file.
pub(super) const RESTORE_FULL_MAX: u64 = 64 << 10;

/// Identity of what has been read, to notice a rewrite without re-parsing (xxh3 hashes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    /// Hash of the first `min(offset, 4096)` bytes.
    pub head: u64,
    /// Hash of the 4096 bytes (or fewer) that end at the offset.
    pub tail: u64,
    /// Hash of the whole read prefix when it is at most 4 MiB, else of 16 windows spread over
    /// it. Checked before each incremental read.
    pub prefix: u64,
    /// What a restart checks besides head and tail, cheaply: the whole prefix when it is at
    /// most 64 KiB, else 16 windows spread over it.
    pub sampled: u64,
}

pub(super) fn hash_range(file: &mut File, start: u64, len: u64) -> io::Result<u64> {
    let mut buf = vec![0u8; len as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut buf)?;
    Ok(xxh3_64(&buf))
}

/// Opens a transcript for reading, refusing anything but a regular file (a FIFO or device
/// would block the indexer in `open` or `read`): those count as gone.
pub(super) fn open_regular(path: &Path) -> io::Result<File> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "not a regular file",
        ));
    }
    File::open(path)
}

/// Hashes of the first and last 4 KiB of the prefix `[0, offset)`.
pub(super) fn head_tail(file: &mut File, offset: u64) -> io::Result<(u64, u64)> {
    let n = offset.min(FINGERPRINT_BYTES);
    Ok((hash_range(file, 0, n)?, hash_range(file, offset - n, n)?))
}

/// The prefix hash read back from the file (whole prefix, or sampled windows when long).
pub(super) fn prefix_hash(file: &mut File, offset: u64) -> io::Result<u64> {
    if offset <= FULL_HASH_MAX {
        return hash_range(file, 0, offset);
    }
    windows_hash(file, offset)
}

/// The restart check of the prefix: whole up to 64 KiB, else sampled windows.
pub(super) fn sampled_hash(file: &mut File, offset: u64) -> io::Result<u64> {
    if offset <= RESTORE_FULL_MAX {
        return hash_range(file, 0, offset);
    }
    windows_hash(file, offset)
}

/// Hash of 16 windows of 1 KiB spread evenly over `[0, offset)`.
pub(super) fn windows_hash(file: &mut File, offset: u64) -> io::Result<u64> {
    let mut sum = Xxh3Default::new();
    let stride = offset / (SAMPLES + 1);
    for i in 1..=SAMPLES {
        sum.update(&hash_range(file, i * stride, SAMPLE_BYTES)?.to_le_bytes());
    }
    Ok(sum.digest())
}
