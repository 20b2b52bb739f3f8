//! The write-ahead log (`<db>-wal`): header and frame validation (magic, version, page size,
//! salts, cumulative checksums) and the map from page number to its latest committed frame,
//! as a SQLite reader recovering the WAL would see it. Nothing is ever written.
use super::corrupt;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

pub(super) const HEADER_LEN: u64 = 32;
pub(super) const FRAME_HEADER_LEN: u64 = 24;
const MAGIC_LE: u32 = 0x377f_0682;
const MAGIC_BE: u32 = 0x377f_0683;
const VERSION: u32 = 3_007_000;

/// The committed content of a WAL file.
pub(super) struct Wal {
    file: RefCell<File>,
    pub page_size: u32,
    /// The 32 header bytes (salts included): a different header means the WAL was restarted.
    pub header: [u8; 32],
    /// Page number → offset of its latest committed page image.
    frames: HashMap<u32, u64>,
    /// Database size in pages after the last valid commit.
    pub db_pages: u32,
    /// End of the last committed frame: frames after it are ignored.
    pub end: u64,
    /// Number of valid commit frames (read by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    pub commits: u32,
}

/// One frame header as found in the file (for tests and diagnostics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameInfo {
    pub offset: u64,
    pub page: u32,
    /// Database size after this frame when it ends a transaction, else 0.
    pub commit: u32,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// SQLite's WAL checksum: two running 32-bit sums over pairs of 32-bit words, in the byte order
/// the header's magic number selects.
pub(super) fn checksum(data: &[u8], big_endian: bool, mut s: (u32, u32)) -> (u32, u32) {
    for c in data.chunks_exact(8) {
        let (a, b) = if big_endian {
            (be32(c, 0), be32(c, 4))
        } else {
            (
                u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            )
        };
        s.0 = s.0.wrapping_add(a).wrapping_add(s.1);
        s.1 = s.1.wrapping_add(b).wrapping_add(s.0);
    }
    s
}

/// A valid WAL header: (page size, big-endian checksums, header checksum).
fn parse_header(h: &[u8; 32]) -> Option<(u32, bool, (u32, u32))> {
    let big_endian = match be32(h, 0) {
        MAGIC_LE => false,
        MAGIC_BE => true,
        _ => return None,
    };
    if be32(h, 4) != VERSION {
        return None;
    }
    let page_size = be32(h, 8);
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return None;
    }
    let sum = checksum(&h[..24], big_endian, (0, 0));
    (sum == (be32(h, 24), be32(h, 28))).then_some((page_size, big_endian, sum))
}

/// Walks the valid frames of a WAL: those whose salts match the header and whose cumulative
/// checksum verifies, stopping at the first that does not (a torn or stale tail).
fn walk(
    file: &mut File,
    header: &[u8; 32],
    page_size: u32,
    big_endian: bool,
    mut sum: (u32, u32),
    mut each: impl FnMut(FrameInfo),
) -> io::Result<()> {
    file.seek(SeekFrom::Start(HEADER_LEN))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut frame = vec![0u8; FRAME_HEADER_LEN as usize + page_size as usize];
    let mut offset = HEADER_LEN;
    loop {
        match reader.read_exact(&mut frame) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        if frame[8..16] != header[16..24] {
            return Ok(());
        }
        sum = checksum(&frame[..8], big_endian, sum);
        sum = checksum(&frame[24..], big_endian, sum);
        if sum != (be32(&frame, 16), be32(&frame, 20)) {
            return Ok(());
        }
        let page = be32(&frame, 0);
        if page == 0 {
            return Ok(());
        }
        each(FrameInfo {
            offset,
            page,
            commit: be32(&frame, 4),
        });
        offset += frame.len() as u64;
    }
}

impl Wal {
    /// Reads the WAL next to a database. `None` when there is none, or when its header is not
    /// valid (SQLite then ignores its content too). `db_page_size` is the database's page size
    /// when its file has a header.
    pub(super) fn open(path: &Path, db_page_size: Option<u32>) -> io::Result<Option<Wal>> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut header = [0u8; 32];
        match file.read_exact(&mut header) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let Some((page_size, big_endian, sum)) = parse_header(&header) else {
            return Ok(None);
        };
        if db_page_size.is_some_and(|p| p != page_size) {
            return Err(corrupt(format!(
                "WAL page size {page_size} differs from the database's"
            )));
        }
        let mut frames: Vec<FrameInfo> = Vec::new();
        let mut last_commit: Option<usize> = None;
        walk(&mut file, &header, page_size, big_endian, sum, |f| {
            if f.commit != 0 {
                last_commit = Some(frames.len());
            }
            frames.push(f);
        })?;
        let Some(last) = last_commit else {
            return Ok(None);
        };
        let committed = &frames[..=last];
        let mut map = HashMap::with_capacity(committed.len());
        for f in committed {
            map.insert(f.page, f.offset + FRAME_HEADER_LEN);
        }
        let frame_len = FRAME_HEADER_LEN + u64::from(page_size);
        Ok(Some(Wal {
            file: RefCell::new(file),
            page_size,
            header,
            frames: map,
            db_pages: committed[last].commit,
            end: committed[last].offset + frame_len,
            commits: committed.iter().filter(|f| f.commit != 0).count() as u32,
        }))
    }

    /// Offset of the latest committed image of `page`, if the WAL holds one.
    pub(super) fn frame_of(&self, page: u32) -> Option<u64> {
        self.frames.get(&page).copied()
    }

    /// Reads a page image at `offset` into `buf` (one page long).
    pub(super) fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut f = self.file.borrow_mut();
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                corrupt("the WAL shrank while it was being read")
            } else {
                e
            }
        })
    }
}

/// Every valid frame of the WAL at `path`, committed or not (diagnostics and tests).
#[cfg(test)]
pub(crate) fn frames(path: &Path) -> io::Result<Vec<FrameInfo>> {
    let mut file = File::open(path)?;
    let mut header = [0u8; 32];
    file.read_exact(&mut header)?;
    let (page_size, big_endian, sum) =
        parse_header(&header).ok_or_else(|| corrupt("not a valid WAL header"))?;
    let mut out = Vec::new();
    walk(&mut file, &header, page_size, big_endian, sum, |f| {
        out.push(f)
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_sums_word_pairs() {
        let data: Vec<u8> = (1u32..=4).flat_map(|w| w.to_le_bytes()).collect();
        // s0 = 0+1+0 = 1, s1 = 0+2+1 = 3; s0 = 1+3+3 = 7, s1 = 3+4+7 = 14
        assert_eq!(checksum(&data, false, (0, 0)), (7, 14));
        let be: Vec<u8> = (1u32..=4).flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(checksum(&be, true, (0, 0)), (7, 14));
    }

    #[test]
    fn header_validation() {
        let mut h = [0u8; 32];
        h[..4].copy_from_slice(&MAGIC_LE.to_be_bytes());
        h[4..8].copy_from_slice(&VERSION.to_be_bytes());
        h[8..12].copy_from_slice(&4096u32.to_be_bytes());
        let (a, b) = checksum(&h[..24], false, (0, 0));
        h[24..28].copy_from_slice(&a.to_be_bytes());
        h[28..32].copy_from_slice(&b.to_be_bytes());
        assert_eq!(parse_header(&h).map(|p| p.0), Some(4096));
        let mut bad = h;
        bad[12] ^= 1; // checkpoint sequence changed, checksum no longer matches
        assert!(parse_header(&bad).is_none());
        let mut odd = h;
        odd[8..12].copy_from_slice(&1000u32.to_be_bytes());
        assert!(parse_header(&odd).is_none());
    }
}
