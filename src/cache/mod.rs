//! The persistent index: a disposable accelerator under `$XDG_CACHE_HOME/conversation-search/`
//! (or `--cache-dir`), so a restart re-reads only the transcript files that changed.
//!
//! One file per corpus configuration, named by a hash of an opaque key the caller derives from
//! it (formats, directories, pattern), this layout's version and the tokenizer. Writes go to a
//! per-writer temporary file that is then renamed over the old one, so readers and concurrent
//! servers only ever see a complete file. A file is trusted only when its header, length and
//! checksum match; otherwise it is ignored and rebuilt. Deleting the directory loses nothing.
//!
//! Layout: header (magic, version, key, four zero bytes), payload, trailer (checksum and length
//! of the payload). The header's length is a multiple of 8, so the payload starts 8-aligned in
//! the (page-aligned) mapping and its aligned columns ([`crate::util::codec::Encoder::column`])
//! are read in place. The payload begins with a head section framed by its own length and checksum
//! ([`head_frame`]), so a reader that needs only the head ([`Cache::open_head`]) verifies and
//! reads just those bytes.
use crate::index::tokenizer::TokenizerConfig;
use crate::util::blob::Cursor;
use crate::util::codec::corrupt;
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use xxhash_rust::xxh3::Xxh3Default;

pub(crate) mod sharing;

/// File magic and layout version; bump the version whenever the layout or anything that
/// changes indexed content (tokenizer, turn rules) changes.
pub(crate) const MAGIC: &[u8; 8] = b"CSINDEX\0";
pub(crate) const VERSION: u32 = 14;
/// Header bytes (magic, version, key, padding) and trailer bytes (payload checksum, payload
/// length).
const HEADER: u64 = 24;
const TRAILER: u64 = 16;
/// Bytes of the head section's frame (length, checksum) at the start of the payload.
pub(crate) const HEAD_FRAME: usize = 16;
/// Rejected cache files kept aside for a bug report.
pub(crate) const KEEP_REJECTED: usize = 3;

/// Where the cache lives and which file belongs to this configuration.
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    pub dir: PathBuf,
    /// Checked against the file's header: the configuration and how its content was made.
    pub key: u64,
    /// Names the file: the configuration only, so a file whose content was made otherwise
    /// (other redaction rules) has this name but another key, and is replaced, not kept.
    name: u64,
    /// A generation's delta file instead of the base file (see [`sharing`]).
    delta: Option<(u64, u64)>,
    /// Names the writer lock and the generations: the key and the durable store the index
    /// goes with (servers with other stores each write their own lineage).
    pub sharing: u64,
}

/// The default cache directory: `$XDG_CACHE_HOME/conversation-search`, else
/// `~/.cache/conversation-search`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("conversation-search"))
}

impl Cache {
    /// The cache of the corpus configuration described by `config` (opaque bytes; two
    /// configurations must give different bytes).
    pub(crate) fn new(dir: PathBuf, config: &[u8]) -> Self {
        let mut h = Xxh3Default::new();
        h.update(&VERSION.to_le_bytes());
        h.update(format!("{:?}", TokenizerConfig::current()).as_bytes());
        h.update(config);
        let name = h.digest();
        Cache {
            dir,
            key: name,
            name,
            delta: None,
            sharing: name,
        }
    }

    /// The same cache file, trusted only when its content was made by `content` (opaque bytes,
    /// e.g. the redaction rules in force). A file made otherwise is rejected on open and
    /// overwritten by the next write, so nothing it held outlives the change.
    pub(crate) fn with_content(mut self, content: &[u8]) -> Self {
        let mut h = Xxh3Default::new();
        h.update(&self.name.to_le_bytes());
        h.update(content);
        self.key = h.digest();
        self.sharing = self.key;
        self
    }

    /// The same cache, shared only with servers that give the same `store` bytes.
    pub(crate) fn with_sharing(mut self, store: &[u8]) -> Self {
        let mut h = Xxh3Default::new();
        h.update(&self.key.to_le_bytes());
        h.update(store);
        self.sharing = h.digest();
        self
    }

    pub(crate) fn path(&self) -> PathBuf {
        match self.delta {
            Some((chain, seq)) => self.gens_dir().join(sharing::delta_name(chain, seq)),
            None => self.dir.join(format!("index-{:016x}.bin", self.name)),
        }
    }

    /// Maps the cache file read-only and checks its header; the cursor is left at the
    /// payload, returned with the payload's length (the file's size less header and trailer).
    /// Restored segments keep ranges of the mapping instead of copies (cache files are only
    /// ever replaced by rename, never changed in place). The caller verifies the checksum in
    /// the same pass as it decodes (and installs nothing before it matched), with every length
    /// bounded by what is left of the payload. `Ok(None)` when there is none. Anything but a
    /// regular file is refused without being opened (opening a FIFO for reading would block).
    pub(crate) fn open(&self) -> io::Result<Option<(Cursor, u64)>> {
        let Some((r, _)) = self.open_checked_header()? else {
            return Ok(None);
        };
        let cursor = Cursor::map(r.get_ref(), HEADER as usize)?;
        let payload = (cursor.len() as u64)
            .checked_sub(HEADER + TRAILER)
            .ok_or_else(|| corrupt("truncated file"))?;
        Ok(Some((cursor, payload)))
    }

    /// Reads the head section alone, verified against its own checksum (and the file's length
    /// against its trailer) before it is returned; the rest of the payload is not read.
    /// `Ok(None)` when there is no cache file.
    pub(crate) fn open_head(&self) -> io::Result<Option<Vec<u8>>> {
        let Some((mut r, len)) = self.open_checked_header()? else {
            return Ok(None);
        };
        let payload = len
            .checked_sub(HEADER + TRAILER)
            .ok_or_else(|| corrupt("truncated file"))?;
        r.seek(SeekFrom::Start(len - 8))?;
        let mut word = [0u8; 8];
        r.read_exact(&mut word)
            .map_err(|_| corrupt("truncated file"))?;
        if u64::from_le_bytes(word) != payload {
            return Err(corrupt("payload length mismatch"));
        }
        r.seek(SeekFrom::Start(HEADER))?;
        let mut frame = [0u8; HEAD_FRAME];
        r.read_exact(&mut frame)
            .map_err(|_| corrupt("truncated head"))?;
        let (head_len, sum) = split_frame(&frame);
        if payload < HEAD_FRAME as u64 || head_len > payload - HEAD_FRAME as u64 {
            return Err(corrupt("head length out of range"));
        }
        let mut head = vec![0u8; head_len as usize];
        r.read_exact(&mut head)
            .map_err(|_| corrupt("truncated head"))?;
        if xxhash_rust::xxh3::xxh3_64(&head) != sum {
            return Err(corrupt("head checksum mismatch"));
        }
        Ok(Some(head))
    }

    /// Opens the file and checks its header (magic, version, key); returns the reader just
    /// after the header and the file's length.
    fn open_checked_header(&self) -> io::Result<Option<(BufReader<File>, u64)>> {
        let path = self.path();
        match fs::metadata(&path) {
            Ok(m) if !m.is_file() => return Err(corrupt("not a regular file")),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(corrupt("not a regular file"));
        }
        let mut r = BufReader::with_capacity(1 << 16, file);
        let mut header = [0u8; HEADER as usize];
        r.read_exact(&mut header)
            .map_err(|_| corrupt("truncated header"))?;
        if &header[..8] != MAGIC {
            return Err(corrupt("not an index cache"));
        }
        // a file of another version or configuration is not damaged: it is overwritten by the
        // next write (not kept aside, so text redacted under other rules does not linger)
        if u32::from_le_bytes([header[8], header[9], header[10], header[11]]) != VERSION {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "index cache from another version",
            ));
        }
        let key = u64::from_le_bytes(header[12..20].try_into().unwrap_or_default());
        if key != self.key {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "index cache of another configuration",
            ));
        }
        if header[20..] != [0u8; 4] {
            return Err(corrupt("header padding"));
        }
        Ok(Some((r, meta.len())))
    }

    /// Moves a rejected cache file aside as `<name>.corrupt-<epoch ms>` (kept for a bug
    /// report; only the newest [`KEEP_REJECTED`] are kept) so the next start does not trip on
    /// it again. Returns where it went.
    pub(crate) fn move_aside(&self) -> io::Result<PathBuf> {
        let path = self.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let prefix = format!("{name}.corrupt-");
        let to = self
            .dir
            .join(format!("{prefix}{}", crate::util::time::now_ms()));
        fs::rename(&path, &to)?;
        let mut kept: Vec<PathBuf> = fs::read_dir(&self.dir)?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .collect();
        kept.sort();
        let excess = kept.len().saturating_sub(KEEP_REJECTED);
        for old in &kept[..excess] {
            let _ = fs::remove_file(old);
        }
        Ok(to)
    }

    /// Writes a new cache file atomically: `body` writes the payload into a temporary file
    /// (unique to this process and call) that replaces the cache file once complete.
    pub(crate) fn write(
        &self,
        body: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
    ) -> io::Result<u64> {
        let path = self.path();
        fs::create_dir_all(path.parent().unwrap_or(&self.dir))?;
        let tmp = self.dir.join(format!(
            ".index-{:016x}.{}.{}.tmp",
            self.name,
            std::process::id(),
            crate::util::time::now_ms()
        ));
        let result = (|| {
            let mut w = BufWriter::with_capacity(1 << 16, File::create(&tmp)?);
            w.write_all(MAGIC)?;
            w.write_all(&VERSION.to_le_bytes())?;
            w.write_all(&self.key.to_le_bytes())?;
            w.write_all(&[0u8; 4])?;
            body(&mut w)?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            let size = file.metadata()?.len();
            fs::rename(&tmp, &path)?;
            Ok(size)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// Removes temporary files left by writers that died (older than an hour).
    pub(crate) fn sweep(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let stale = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() > 3600));
            if name.to_string_lossy().ends_with(".tmp") && stale {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// Checks the trailer that follows a payload read with checksum `sum` and length `payload`,
/// and that nothing follows it.
pub(crate) fn check_trailer(r: &mut impl Read, sum: u64, payload: u64) -> io::Result<()> {
    let mut trailer = [0u8; TRAILER as usize];
    r.read_exact(&mut trailer)
        .map_err(|_| corrupt("truncated file"))?;
    let word = |i: usize| u64::from_le_bytes(trailer[i..i + 8].try_into().unwrap_or_default());
    if word(8) != payload {
        return Err(corrupt("payload length mismatch"));
    }
    if word(0) != sum {
        return Err(corrupt("checksum mismatch"));
    }
    let mut extra = [0u8; 1];
    if r.read(&mut extra)? != 0 {
        return Err(corrupt("trailing bytes"));
    }
    Ok(())
}

/// The frame written before a head section of `head`'s bytes: its length and checksum.
pub(crate) fn head_frame(head: &[u8]) -> [u8; HEAD_FRAME] {
    let mut out = [0u8; HEAD_FRAME];
    out[..8].copy_from_slice(&(head.len() as u64).to_le_bytes());
    out[8..].copy_from_slice(&xxhash_rust::xxh3::xxh3_64(head).to_le_bytes());
    out
}

/// A head frame's (length, checksum).
pub(crate) fn split_frame(frame: &[u8; HEAD_FRAME]) -> (u64, u64) {
    let word = |i: usize| u64::from_le_bytes(frame[i..i + 8].try_into().unwrap_or_default());
    (word(0), word(8))
}

/// Checks a head section read back (after a whole-file [`Cache::open`]) against its frame.
pub(crate) fn check_head(frame: &[u8; HEAD_FRAME], head: &[u8]) -> io::Result<()> {
    if split_frame(frame) != split_frame(&head_frame(head)) {
        return Err(corrupt("head checksum mismatch"));
    }
    Ok(())
}

/// How the first build began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum CacheStart {
    /// The first build has not got that far yet.
    #[default]
    Pending,
    /// `--no-cache`, or no cache directory.
    Disabled,
    /// No cache file yet.
    Absent,
    /// Restored from the cache file.
    Restored,
    /// Unreadable, corrupt or foreign: rebuilt from the transcripts.
    Rejected,
}

impl CacheStart {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CacheStart::Pending => "pending",
            CacheStart::Disabled => "disabled",
            CacheStart::Absent => "absent",
            CacheStart::Restored => "restored",
            CacheStart::Rejected => "rejected",
        }
    }
}

/// What the persistent index did in this process, for `index_status`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CacheReport {
    /// The cache file; `None` when the cache is disabled (`--no-cache`, no home directory).
    pub path: Option<PathBuf>,
    /// How the first build began.
    pub start: CacheStart,
    /// Why the cache file was rejected.
    pub rejected_because: Option<String>,
    /// Transcript files taken from the cache unchanged at start.
    pub files_reused: u64,
    /// Transcript files that had changed, appeared or vanished since the cache was written and
    /// were read again at start.
    pub files_changed: u64,
    /// Successful cache writes so far.
    pub writes: u64,
    /// The last write's error, cleared by the next successful write.
    pub write_error: Option<String>,
}
