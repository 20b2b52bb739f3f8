//! The persistent index: a disposable accelerator under `$XDG_CACHE_HOME/conversation-search/`
//! (or `--cache-dir`), so a restart re-reads only the transcript files that changed.
//!
//! One file per corpus configuration (formats, directories, pattern, tokenizer), named by a
//! hash of it. Writes go to a per-writer temporary file that is then renamed over the old one,
//! so readers and concurrent servers only ever see a complete file. A file is trusted only
//! when its header, length and checksum match; otherwise it is ignored and rebuilt. Deleting
//! the directory loses nothing.
use crate::corpus::Root;
use crate::index::tokenizer::TokenizerConfig;
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::Xxh3Default;

/// File magic and layout version; bump the version whenever the layout or anything that
/// changes indexed content (tokenizer, turn rules) changes.
pub const MAGIC: &[u8; 8] = b"CSINDEX\0";
pub const VERSION: u32 = 5;

/// Where the cache lives and which file belongs to this configuration.
#[derive(Debug, Clone)]
pub struct Cache {
    pub dir: PathBuf,
    pub key: u64,
}

/// The default cache directory: `$XDG_CACHE_HOME/conversation-search`, else
/// `~/.cache/conversation-search`.
pub fn default_dir() -> Option<PathBuf> {
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
    /// The cache of the corpus made of `roots`.
    pub fn new(dir: PathBuf, roots: &[Root]) -> Self {
        let mut h = Xxh3Default::new();
        h.update(&VERSION.to_le_bytes());
        h.update(format!("{:?}", TokenizerConfig::current()).as_bytes());
        for r in roots {
            let dir = fs::canonicalize(&r.dir).unwrap_or_else(|_| r.dir.clone());
            for part in [
                r.adapter.name().as_bytes(),
                dir.as_os_str().as_encoded_bytes(),
                r.pattern.as_str().as_bytes(),
            ] {
                h.update(&(part.len() as u64).to_le_bytes());
                h.update(part);
            }
        }
        Cache {
            dir,
            key: h.digest(),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("index-{:016x}.bin", self.key))
    }

    /// Opens the cache file for reading and checks its header. `Ok(None)` when there is none.
    pub fn open(&self) -> io::Result<Option<BufReader<File>>> {
        let file = match File::open(self.path()) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut r = BufReader::with_capacity(1 << 16, file);
        let mut header = [0u8; 20];
        r.read_exact(&mut header)
            .map_err(|_| crate::util::codec::corrupt("truncated header"))?;
        if &header[..8] != MAGIC {
            return Err(crate::util::codec::corrupt("not an index cache"));
        }
        if u32::from_le_bytes([header[8], header[9], header[10], header[11]]) != VERSION {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "index cache from another version",
            ));
        }
        let key = u64::from_le_bytes(header[12..20].try_into().unwrap_or_default());
        if key != self.key {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "index cache of another configuration",
            ));
        }
        Ok(Some(r))
    }

    /// Writes a new cache file atomically: `body` writes the payload into a temporary file
    /// (unique to this process and call) that replaces the cache file once complete.
    pub fn write(
        &self,
        body: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
    ) -> io::Result<u64> {
        fs::create_dir_all(&self.dir)?;
        let tmp = self.dir.join(format!(
            ".index-{:016x}.{}.{}.tmp",
            self.key,
            std::process::id(),
            crate::util::time::now_ms()
        ));
        let result = (|| {
            let mut w = BufWriter::with_capacity(1 << 16, File::create(&tmp)?);
            w.write_all(MAGIC)?;
            w.write_all(&VERSION.to_le_bytes())?;
            w.write_all(&self.key.to_le_bytes())?;
            body(&mut w)?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            let size = file.metadata()?.len();
            fs::rename(&tmp, self.path())?;
            Ok(size)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// Removes temporary files left by writers that died (older than an hour).
    pub fn sweep(&self) {
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

/// What the persistent index did in this process, for `index_status`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CacheReport {
    /// The cache file; `None` when the cache is disabled (`--no-cache`, no home directory).
    pub path: Option<PathBuf>,
    /// How the first build began: `disabled`, `absent` (no cache file yet), `restored`, or
    /// `rejected` (unreadable, corrupt or foreign: rebuilt from the transcripts).
    pub start: &'static str,
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

/// Size of the cache file on disk, if any.
pub fn file_size(path: &Path) -> Option<u64> {
    fs::metadata(path).ok().map(|m| m.len())
}
