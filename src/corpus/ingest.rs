//! Reading one transcript file incrementally: complete lines only (a half-written last line
//! waits for its newline), resuming at the byte offset of the last complete line, and
//! detecting files that shrank or whose already-read prefix changed.
pub(crate) use super::fingerprint::Fingerprint;
use super::fingerprint::{
    FULL_HASH_MAX, RESTORE_FULL_MAX, head_tail, open_regular, prefix_hash, sampled_hash,
    windows_hash,
};
use crate::transcript::{ConvState, LineParser, Reader, SourceFile, UnitReader, redacted};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::SystemTime;
use xxhash_rust::xxh3::Xxh3Default;

/// Most bytes one `read` brings in; lines longer than this grow the buffer (reads stay this
/// size). Small enough that the bytes the kernel copies in are still in the core's L2 cache
/// when the lines are parsed and hashed; a 1 MiB chunk is not. Reading 1 GB of transcripts
/// and passing over it twice took 0.64-0.89 s with 1 MiB reads, 0.27-0.38 s with 128 KiB and
/// 0.36-0.37 s with 64 KiB on a 2-core VM with 512 KiB of L2 per core; in a whole first build,
/// where parsing is slower than memory, the gain was within that VM's noise.
const CHUNK: usize = 64 << 10;
/// Largest read buffer a thread keeps for its next file.
const KEEP_BUF: usize = 8 << 20;

/// What happened to a file since it was last read.
#[derive(Debug)]
pub(crate) enum ReadOutcome {
    /// Nothing new (or only a partial line was added).
    Unchanged,
    /// New complete lines were read; the conversation(s) as they now stand.
    Appended(Vec<ConvState>),
    /// A whole-unit file was re-read: conversations that changed (replaced whole) and the ids
    /// of all conversations it now holds.
    Replaced {
        changed: Vec<ConvState>,
        present: Vec<String>,
    },
    /// The file shrank or its already-read bytes changed: it must be read again from scratch.
    Rewritten,
    /// The file no longer exists (or cannot be opened).
    Gone,
}

/// Size and mtime of the files that tell whether a whole unit changed.
type Stamp = Vec<Option<(u64, Option<SystemTime>)>>;

/// A file being followed.
pub(crate) struct FileState {
    pub src: SourceFile,
    parser: Option<Box<dyn LineParser>>,
    unit: Option<(Box<dyn UnitReader>, Stamp)>,
    /// End of the last complete line read.
    pub offset: u64,
    /// Size and modification time at the last read.
    pub size: u64,
    pub mtime: Option<SystemTime>,
    pub fingerprint: Fingerprint,
    /// Running hash of `[0, offset)` while the offset is at most [`FULL_HASH_MAX`], so the
    /// fingerprint after a read needs no second pass over the file.
    stream: Xxh3Default,
    /// Lines that could not be read.
    pub skipped: u64,
    /// Records of types the reader does not know, per type (sorted by type).
    pub unknown: Vec<(String, u64)>,
    /// First skipped line's description, for the per-file warning.
    warned: bool,
    history_done: bool,
    /// Restored from the persistent index without parser state: an unchanged file stays as
    /// it is; any change makes the file be read again from the start.
    restored: bool,
}

/// What the persistent index keeps of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CachedState {
    pub offset: u64,
    pub size: u64,
    pub mtime: Option<SystemTime>,
    pub fingerprint: Fingerprint,
    pub skipped: u64,
    /// Records of unknown types, per type.
    pub unknown: Vec<(String, u64)>,
    /// Size and mtime of a whole unit's stamp files (empty for line files).
    pub stamp: Vec<Option<(u64, Option<SystemTime>)>>,
}

impl FileState {
    pub(crate) fn new(src: SourceFile) -> Self {
        let (parser, unit) = match redacted::open(&src) {
            Some(Reader::Lines(p)) => (Some(p), None),
            Some(Reader::Unit(u)) => (None, Some((u, Stamp::new()))),
            None => (None, None),
        };
        Self {
            src,
            parser,
            unit,
            offset: 0,
            size: 0,
            mtime: None,
            fingerprint: Fingerprint::default(),
            stream: Xxh3Default::new(),
            skipped: 0,
            unknown: Vec::new(),
            warned: false,
            history_done: false,
            restored: false,
        }
    }

    /// A file as the persistent index recorded it, without parser state.
    pub(crate) fn restored(src: SourceFile, cached: CachedState) -> Self {
        let mut state = Self::new(src);
        state.parser = None;
        if let Some((_, stamp)) = state.unit.as_mut() {
            *stamp = cached.stamp;
        }
        state.offset = cached.offset;
        state.size = cached.size;
        state.mtime = cached.mtime;
        state.fingerprint = cached.fingerprint;
        state.skipped = cached.skipped;
        state.unknown = cached.unknown;
        state.history_done = true;
        state.restored = true;
        state
    }

    /// What the persistent index keeps of this file.
    pub(crate) fn cached(&self) -> CachedState {
        CachedState {
            offset: self.offset,
            size: self.size,
            mtime: self.mtime,
            fingerprint: self.fingerprint,
            skipped: self.skipped,
            unknown: self.unknown.clone(),
            stamp: self
                .unit
                .as_ref()
                .map(|(_, s)| s.clone())
                .unwrap_or_default(),
        }
    }

    /// A restored line file that grew while its read prefix stayed the same: rebuilds the
    /// parser's state by parsing the prefix again, without returning its turns (the index
    /// already holds them), so that only the appended lines are indexed. Returns false when the
    /// prefix changed (or the format is not line-based): the file must be read from scratch.
    fn resume_restored(&mut self) -> io::Result<bool> {
        if self.unit.is_some() || self.offset == 0 {
            return Ok(false);
        }
        let mut file = open_regular(&self.src.path)?;
        let meta = file.metadata()?;
        let end = self.offset;
        if !meta.is_file()
            || meta.len() < end
            || head_tail(&mut file, end)? != (self.fingerprint.head, self.fingerprint.tail)
            || prefix_hash(&mut file, end)? != self.fingerprint.prefix
        {
            return Ok(false);
        }
        let Some(Reader::Lines(parser)) = redacted::open(&self.src) else {
            return Ok(false);
        };
        let (skipped, warned) = (self.skipped, self.warned);
        self.parser = Some(parser);
        self.offset = 0;
        self.stream = Xxh3Default::new();
        self.history_done = false;
        self.warned = true; // its skipped lines were reported when it was first read
        self.read_lines_until(&mut file, end)?;
        self.finish_history();
        if let Some(p) = self.parser.as_mut() {
            drop(p.drain());
        }
        (self.skipped, self.warned) = (skipped, warned);
        self.restored = false;
        Ok(self.offset == end)
    }

    /// Whether a restored file is still exactly as recorded (an unreadable file is not).
    pub(crate) fn still_as_restored(&mut self) -> bool {
        self.restored && self.restored_unchanged().unwrap_or(false)
    }

    /// Whether the file is still exactly as recorded (size, mtime and the fingerprint of what
    /// was read), for a restored file.
    fn restored_unchanged(&mut self) -> io::Result<bool> {
        if let Some((reader, stamp)) = &self.unit {
            return Ok(stamp_of(&reader.stamp_paths(&self.src)) == *stamp);
        }
        let mut file = open_regular(&self.src.path)?;
        let meta = file.metadata()?;
        Ok(meta.is_file()
            && meta.len() == self.size
            && meta.modified().ok() == self.mtime
            && self.offset <= meta.len()
            && head_tail(&mut file, self.offset)? == (self.fingerprint.head, self.fingerprint.tail)
            && sampled_hash(&mut file, self.offset)? == self.fingerprint.sampled)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.src.path
    }

    /// Cheap check: has the file's size or mtime moved since the last read?
    pub(crate) fn looks_changed(&self) -> bool {
        if let Some((reader, stamp)) = &self.unit {
            return stamp_of(&reader.stamp_paths(&self.src)) != *stamp;
        }
        match std::fs::metadata(&self.src.path) {
            Ok(m) => m.len() != self.size || m.modified().ok() != self.mtime,
            Err(_) => true,
        }
    }

    /// Reads whatever complete lines were added since the last call. A parser that panics on
    /// this file is contained: the file is reported gone (its documents leave the index) and
    /// the rest of the corpus is unaffected.
    pub(crate) fn read(&mut self) -> ReadOutcome {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.try_read()));
        let result = match caught {
            Ok(r) => r,
            Err(_) => {
                tracing::error!(
                    path = %self.src.path.display(),
                    "internal error while reading `{}`; leaving it out of the index until it changes (please report this file)",
                    self.src.path.display()
                );
                return ReadOutcome::Gone;
            }
        };
        match result {
            Ok(outcome) => outcome,
            Err(e) if e.kind() == io::ErrorKind::NotFound => ReadOutcome::Gone,
            Err(e) => {
                if !self.warned {
                    tracing::warn!(path = %self.src.path.display(), error = %e, "cannot read transcript file; skipping it");
                    self.warned = true;
                }
                if self.offset == 0 {
                    ReadOutcome::Gone
                } else {
                    ReadOutcome::Unchanged
                }
            }
        }
    }

    fn try_read(&mut self) -> io::Result<ReadOutcome> {
        if self.restored {
            if self.restored_unchanged()? {
                return Ok(ReadOutcome::Unchanged);
            }
            if !self.resume_restored()? {
                return Ok(ReadOutcome::Rewritten);
            }
            // the parser now stands where the cache left the file: read what was appended
        }
        if self.unit.is_some() {
            return self.read_unit();
        }
        let mut file = open_regular(&self.src.path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Ok(ReadOutcome::Gone);
        }
        let size = meta.len();
        let mtime = meta.modified().ok();
        if size < self.offset {
            return Ok(ReadOutcome::Rewritten);
        }
        // written to without growing: an in-place edit somewhere in what was read
        if self.offset > 0 && size == self.size && mtime.is_some() && mtime != self.mtime {
            return Ok(ReadOutcome::Rewritten);
        }
        if self.offset > 0 {
            let (head, tail) = head_tail(&mut file, self.offset)?;
            if (head, tail) != (self.fingerprint.head, self.fingerprint.tail)
                || prefix_hash(&mut file, self.offset)? != self.fingerprint.prefix
            {
                return Ok(ReadOutcome::Rewritten);
            }
        }
        self.size = size;
        self.mtime = mtime;
        if size == self.offset {
            self.finish_history();
            return Ok(ReadOutcome::Unchanged);
        }
        let before = self.offset;
        self.read_lines(&mut file)?;
        self.finish_history();
        if let Some(p) = &self.parser {
            self.unknown = p.unknown_kinds();
        }
        if self.offset == before {
            return Ok(ReadOutcome::Unchanged);
        }
        let (head, tail) = head_tail(&mut file, self.offset)?;
        let prefix = if self.offset <= FULL_HASH_MAX {
            self.stream.digest()
        } else {
            prefix_hash(&mut file, self.offset)?
        };
        // up to 64 KiB and beyond 4 MiB the restart check is the prefix hash itself
        let sampled = if self.offset <= RESTORE_FULL_MAX || self.offset > FULL_HASH_MAX {
            prefix
        } else {
            windows_hash(&mut file, self.offset)?
        };
        self.fingerprint = Fingerprint {
            head,
            tail,
            prefix,
            sampled,
        };
        Ok(ReadOutcome::Appended(
            self.parser.as_mut().map(|p| p.drain()).unwrap_or_default(),
        ))
    }

    /// Re-reads a whole unit when its stamp moved.
    fn read_unit(&mut self) -> io::Result<ReadOutcome> {
        let Some((reader, stamp)) = self.unit.as_mut() else {
            return Ok(ReadOutcome::Unchanged);
        };
        let meta = std::fs::metadata(&self.src.path)?;
        let now = stamp_of(&reader.stamp_paths(&self.src));
        if now == *stamp {
            return Ok(ReadOutcome::Unchanged);
        }
        let read = reader.read(&self.src)?;
        *stamp = now;
        self.size = meta.len();
        self.mtime = meta.modified().ok();
        self.offset = meta.len();
        self.skipped = read.skipped;
        self.unknown = read.unknown;
        if read.skipped > 0 && !self.warned {
            self.warned = true;
            tracing::warn!(path = %self.src.path.display(), skipped = read.skipped, "skipped unreadable records in `{}`", self.src.path.display());
        }
        Ok(ReadOutcome::Replaced {
            changed: read.changed,
            present: read.present,
        })
    }

    fn finish_history(&mut self) {
        if !self.history_done {
            self.history_done = true;
            if let Some(p) = self.parser.as_mut() {
                p.end_of_history();
            }
        }
    }

    /// Feeds complete lines from `self.offset` to the end of the file.
    fn read_lines(&mut self, file: &mut File) -> io::Result<()> {
        self.read_lines_until(file, u64::MAX)
    }

    /// Feeds complete lines from `self.offset`, reading no further than byte `limit`.
    fn read_lines_until(&mut self, file: &mut File, limit: u64) -> io::Result<()> {
        file.seek(SeekFrom::Start(self.offset))?;
        // One buffer per thread, reused across files.
        thread_local! {
            static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut buf = BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
        if buf.len() < CHUNK {
            buf.resize(CHUNK, 0);
        }
        let result = self.read_lines_into(file, &mut buf, limit);
        // a buffer grown for long lines is kept for the next file (reads stay CHUNK-sized)
        if buf.len() <= KEEP_BUF {
            BUF.with(|b| *b.borrow_mut() = buf);
        }
        result
    }

    fn read_lines_into(
        &mut self,
        file: &mut File,
        buf: &mut Vec<u8>,
        limit: u64,
    ) -> io::Result<()> {
        let mut filled = 0usize;
        // bytes of `buf` already searched for a newline (the start of a line still being read)
        let mut searched = 0usize;
        let mut first_error: Option<(u64, String)> = None;
        let mut new_skips = 0u64;
        loop {
            if filled == buf.len() {
                // a line longer than the buffer: grow it
                buf.resize(buf.len() * 2, 0);
            }
            let room = limit.saturating_sub(self.offset + filled as u64);
            let want = (buf.len() - filled)
                .min(CHUNK)
                .min(usize::try_from(room).unwrap_or(usize::MAX));
            let n = file.read(&mut buf[filled..filled + want])?;
            if n == 0 {
                break;
            }
            filled += n;
            let mut start = 0usize;
            // the complete lines of this chunk that the running hash takes (they are one run:
            // every line from the first past FULL_HASH_MAX on is left out), hashed at once
            let mut hashed_end = 0usize;
            while let Some(nl) = memchr::memchr(b'\n', &buf[searched..filled]) {
                let nl = searched + nl - start;
                searched = start + nl + 1;
                let line = &buf[start..start + nl];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let at = self.offset;
                if let Some(parser) = self.parser.as_mut() {
                    if let Err(e) = parser.feed_line(at, line) {
                        new_skips += 1;
                        if first_error.is_none() {
                            first_error = Some((at, e.to_string()));
                        }
                    }
                }
                if self.offset + (nl as u64) < FULL_HASH_MAX {
                    hashed_end = start + nl + 1;
                }
                self.offset += (nl + 1) as u64;
                start += nl + 1;
            }
            self.stream.update(&buf[..hashed_end]);
            // only when a line ended: moving a long line's bytes onto themselves at every chunk
            // is quadratic (a 98 MB line took 33 s to read with musl's memmove)
            if start > 0 {
                buf.copy_within(start..filled, 0);
                filled -= start;
            }
            searched = filled;
        }
        if new_skips > 0 {
            self.skipped += new_skips;
            if let Some((at, why)) = first_error {
                if !self.warned {
                    self.warned = true;
                    tracing::warn!(
                        path = %self.src.path.display(),
                        skipped = new_skips,
                        first_at_byte = at,
                        "skipped unreadable lines in `{}` (first: {why}); the rest of the file is indexed",
                        self.src.path.display()
                    );
                } else {
                    tracing::debug!(path = %self.src.path.display(), skipped = new_skips, "skipped unreadable lines");
                }
            }
        }
        Ok(())
    }
}

fn stamp_of(paths: &[std::path::PathBuf]) -> Stamp {
    paths
        .iter()
        .map(|p| {
            std::fs::metadata(p)
                .ok()
                .map(|m| (m.len(), m.modified().ok()))
        })
        .collect()
}
