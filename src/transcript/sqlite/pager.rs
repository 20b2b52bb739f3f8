//! Page access for one read-only snapshot of a database: the 100-byte file header, pages from
//! the main file overlaid by their latest committed WAL frames, overflow chains, and the check
//! that nothing the snapshot relies on changed while it was being read.
use super::corrupt;
use super::wal::Wal;
use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Text encoding of the database (header offset 56).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Encoding {
    Utf8,
    Utf16Le,
    Utf16Be,
}

impl Encoding {
    /// Decodes stored text; invalid sequences become U+FFFD.
    pub(super) fn decode(self, bytes: &[u8]) -> Cow<'_, str> {
        let units = |f: fn([u8; 2]) -> u16| -> Cow<'_, str> {
            let v: Vec<u16> = bytes.chunks_exact(2).map(|c| f([c[0], c[1]])).collect();
            Cow::Owned(String::from_utf16_lossy(&v))
        };
        match self {
            Encoding::Utf8 => String::from_utf8_lossy(bytes),
            Encoding::Utf16Le => units(u16::from_le_bytes),
            Encoding::Utf16Be => units(u16::from_be_bytes),
        }
    }
}

/// What the database file header says.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    pub page_size: u32,
    pub reserved: u8,
    /// In-header database size, when valid (non-zero and current per the change counter).
    pub pages: Option<u32>,
    pub encoding: Encoding,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Parses the first 100 bytes of a database.
pub(super) fn parse_header(h: &[u8]) -> io::Result<Header> {
    if h.len() < 100 || &h[..16] != MAGIC {
        return Err(corrupt("not a SQLite 3 database (bad magic)"));
    }
    let page_size = match u16::from_be_bytes([h[16], h[17]]) {
        1 => 65536,
        n => u32::from(n),
    };
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(corrupt(format!("invalid page size {page_size}")));
    }
    if h[19] > 2 {
        return Err(corrupt(format!(
            "unsupported file format version {}",
            h[19]
        )));
    }
    let reserved = h[20];
    if page_size - u32::from(reserved) < 480 {
        return Err(corrupt("usable page size below 480 bytes"));
    }
    let in_header = be32(h, 28);
    let pages = (in_header != 0 && be32(h, 24) == be32(h, 92)).then_some(in_header);
    let encoding = match be32(h, 56) {
        0 | 1 => Encoding::Utf8,
        2 => Encoding::Utf16Le,
        3 => Encoding::Utf16Be,
        n => return Err(corrupt(format!("unknown text encoding {n}"))),
    };
    Ok(Header {
        page_size,
        reserved,
        pages,
        encoding,
    })
}

/// `<db><suffix>`, e.g. `sessions.db-wal`.
pub(crate) fn side_path(db: &Path, suffix: &str) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Whether a rollback journal next to the database holds a transaction in progress (or a hot
/// journal left by a crash): it exists and starts with the journal magic. A journal truncated
/// or zeroed at commit (`journal_mode` TRUNCATE or PERSIST) does not count.
fn journal_active(db: &Path) -> bool {
    const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];
    let mut magic = [0u8; 8];
    File::open(side_path(db, "-journal"))
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == JOURNAL_MAGIC)
}

fn stat(path: &Path) -> Option<(u64, Option<SystemTime>)> {
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.len(), m.modified().ok()))
}

/// A consistent view of the database's pages.
pub(super) struct Pager {
    path: PathBuf,
    file: RefCell<File>,
    /// Size and mtime of the main file when the snapshot was taken.
    db_stat: (u64, Option<SystemTime>),
    wal: Option<Wal>,
    pub page_size: u32,
    /// Page size minus the reserved bytes at the end of each page.
    pub usable: u32,
    pub page_count: u32,
    pub encoding: Encoding,
}

impl Pager {
    /// Opens a snapshot of the database at `path` (read-only: no lock, journal or WAL index is
    /// created). An active rollback journal means a write is in progress: `WouldBlock`.
    pub(super) fn open(path: &Path) -> io::Result<Pager> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file"));
        }
        let db_stat = (meta.len(), meta.modified().ok());
        if journal_active(path) {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "a write transaction is in progress (rollback journal present)",
            ));
        }
        let mut head = Vec::with_capacity(100);
        (&mut file).take(100).read_to_end(&mut head)?;
        let file_header = match head.len() {
            0 => None,
            100 => Some(parse_header(&head)?),
            _ => return Err(corrupt("file shorter than the database header")),
        };
        let wal = Wal::open(&side_path(path, "-wal"), file_header.map(|h| h.page_size))?;
        let mut pager = Pager {
            path: path.to_owned(),
            file: RefCell::new(file),
            db_stat,
            page_size: 0,
            usable: 0,
            page_count: 0,
            encoding: Encoding::Utf8,
            wal,
        };
        let page_size = match (&file_header, &pager.wal) {
            (Some(h), _) => h.page_size,
            (None, Some(w)) => w.page_size,
            (None, None) => return Ok(pager), // an empty database
        };
        pager.page_size = page_size;
        pager.usable = page_size;
        pager.page_count = match (&pager.wal, &file_header) {
            (Some(w), _) => w.db_pages,
            (None, Some(Header { pages: Some(n), .. })) => *n,
            (None, _) => (db_stat.0 / u64::from(page_size)).min(u64::from(u32::MAX)) as u32,
        };
        if pager.page_count == 0 {
            return Ok(pager);
        }
        // page 1's header is authoritative (it may come from the WAL)
        let page1 = pager.page(1)?;
        let header = parse_header(&page1[..100])?;
        if header.page_size != page_size {
            return Err(corrupt("page size changed between the file and the WAL"));
        }
        pager.usable = page_size - u32::from(header.reserved);
        pager.encoding = header.encoding;
        Ok(pager)
    }

    /// Reads page `pgno` (1-based) as the snapshot sees it.
    pub(super) fn page(&self, pgno: u32) -> io::Result<Vec<u8>> {
        if pgno == 0 || pgno > self.page_count {
            return Err(corrupt(format!(
                "page {pgno} out of range (database has {} pages)",
                self.page_count
            )));
        }
        let mut buf = vec![0u8; self.page_size as usize];
        if let Some(offset) = self.wal.as_ref().and_then(|w| w.frame_of(pgno)) {
            self.wal
                .as_ref()
                .map_or(Ok(()), |w| w.read_at(offset, &mut buf))?;
            return Ok(buf);
        }
        let offset = u64::from(pgno - 1) * u64::from(self.page_size);
        if offset + u64::from(self.page_size) > self.db_stat.0 {
            return Err(corrupt(format!(
                "page {pgno} lies beyond the end of the file (truncated database?)"
            )));
        }
        let mut f = self.file.borrow_mut();
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(&mut buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                corrupt("the database shrank while it was being read")
            } else {
                e
            }
        })?;
        Ok(buf)
    }

    /// Appends `len` bytes of an overflow chain starting at page `first` to `out`.
    pub(super) fn read_overflow(&self, first: u32, len: u64, out: &mut Vec<u8>) -> io::Result<()> {
        let per_page = u64::from(self.usable - 4);
        let mut left = len;
        let mut next = first;
        let mut hops = 0u32;
        while left > 0 {
            if next == 0 {
                return Err(corrupt("overflow chain ends early"));
            }
            hops += 1;
            if hops > self.page_count {
                return Err(corrupt("overflow chain loops"));
            }
            let page = self.page(next)?;
            next = be32(&page, 0);
            let take = left.min(per_page) as usize;
            out.extend_from_slice(&page[4..4 + take]);
            left -= take as u64;
        }
        Ok(())
    }

    /// Whether the snapshot is still what the files hold: the main file was not written
    /// (a checkpoint or a rollback-mode commit) and the WAL was not restarted or truncated.
    /// Frames appended to the WAL after the snapshot do not matter.
    pub(super) fn is_current(&self) -> io::Result<bool> {
        if stat(&self.path) != Some(self.db_stat) {
            return Ok(false);
        }
        if journal_active(&self.path) {
            return Ok(false);
        }
        let Some(wal) = &self.wal else {
            return Ok(true);
        };
        let wal_path = side_path(&self.path, "-wal");
        let mut f = match File::open(&wal_path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        let mut header = [0u8; 32];
        if f.read_exact(&mut header).is_err() || header != wal.header {
            return Ok(false);
        }
        Ok(f.metadata()?.len() >= wal.end)
    }

    /// Number of commits read from the WAL (0 without one).
    #[cfg(test)]
    pub(super) fn wal_commits(&self) -> u32 {
        self.wal.as_ref().map_or(0, |w| w.commits)
    }
}
