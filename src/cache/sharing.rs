//! Sharing one persistent index among the servers of one configuration: the generations on
//! disk, the writer lock (the one server that reads transcripts), and the delta files it
//! publishes after each change so that the other servers (followers) switch to the new
//! generation without reading a transcript.
//!
//! A lineage of states is a *chain* (random id); the base file records the chain and sequence
//! number it holds, and `index-<key>.gen/<chain>-<seq>.bin` holds the change from `seq - 1` to
//! `seq`. Delta files are written like the base (temporary file, then rename; checked header,
//! checksum), never changed, and removed by the writer once a newer base covers them and no
//! follower can still be on their way to them ([`KEEP_COVERED`]).
use super::{Cache, HEAD_FRAME, HEADER};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::time::Duration;

/// A delta covered by the base stays this long for followers still reading older ones.
pub(crate) const KEEP_COVERED: Duration = Duration::from_secs(120);

/// File name of the delta that makes generation `seq` of `chain`.
pub(crate) fn delta_name(chain: u64, seq: u64) -> String {
    format!("{chain:016x}-{seq:016x}.bin")
}

fn parse_name(name: &str) -> Option<(u64, u64)> {
    let stem = name.strip_suffix(".bin")?;
    let (chain, seq) = stem.split_once('-')?;
    Some((
        u64::from_str_radix(chain, 16).ok()?,
        u64::from_str_radix(seq, 16).ok()?,
    ))
}

/// Where the base file is now, to notice when it is replaced (device, inode, size, mtime).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BaseStamp(u64, u64, u64, i128);

impl Cache {
    /// The directory of this configuration's generations (named by the key and store:
    /// servers whose content differs, e.g. another version, never follow each other).
    pub(crate) fn gens_dir(&self) -> PathBuf {
        self.dir.join(format!(
            "index-{:016x}-{:016x}.gen",
            self.name, self.sharing
        ))
    }

    /// The delta file of generation `seq` of `chain`.
    pub(crate) fn delta(&self, chain: u64, seq: u64) -> Cache {
        Cache {
            delta: Some((chain, seq)),
            ..self.clone()
        }
    }

    /// Takes this configuration's writer lock if no other server holds it (`Ok(None)` then).
    /// Held for as long as the returned file is open; released by the kernel when the process
    /// dies however it dies.
    pub(crate) fn try_lock_writer(&self) -> io::Result<Option<File>> {
        let dir = self.gens_dir();
        fs::create_dir_all(&dir)?;
        try_lock(&dir)
    }

    /// Removes the generations of this cache file's other configurations (other redaction
    /// rules, another store, an older version) that no server uses now: their text must not
    /// outlive the configuration that wrote it. Only a writer calls this.
    pub(crate) fn sweep_other_gens(&self) {
        let prefix = format!("index-{:016x}-", self.name);
        let mine = self.gens_dir();
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path == mine || !name.starts_with(&prefix) || !name.ends_with(".gen") {
                continue;
            }
            // held while it is removed: a server of that configuration starting now waits
            // for nothing and simply starts a new lineage
            if let Ok(Some(_lock)) = try_lock(&path) {
                let _ = fs::remove_dir_all(&path);
            }
        }
    }

    /// The base file's identity now (`None` when there is none).
    pub(crate) fn base_stamp(&self) -> Option<BaseStamp> {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(self.path()).ok()?;
        let mtime = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
        Some(BaseStamp(m.dev(), m.ino(), m.len(), mtime))
    }

    /// The (sharing, chain, sequence) the base file says it holds, read without verifying
    /// the file (a hint: whoever acts on it loads and verifies the whole file). They are the
    /// head's first three words.
    pub(crate) fn peek_base_generation(&self) -> Option<(u64, u64, u64)> {
        let mut f = File::open(self.path()).ok()?;
        f.seek(SeekFrom::Start(HEADER + HEAD_FRAME as u64)).ok()?;
        let mut words = [0u8; 24];
        f.read_exact(&mut words).ok()?;
        let word = |i: usize| u64::from_le_bytes(words[i..i + 8].try_into().unwrap_or_default());
        Some((word(0), word(8), word(16)))
    }

    /// Whether the delta of generation `seq` of `chain` exists.
    pub(crate) fn has_delta(&self, chain: u64, seq: u64) -> bool {
        self.delta(chain, seq).path().is_file()
    }

    /// Removes deltas no follower needs: those of other chains and those the base covers
    /// (`seq <= covered`), once older than [`KEEP_COVERED`]. Only the writer calls this.
    pub(crate) fn prune_deltas(&self, chain: u64, covered: u64) {
        let Ok(entries) = fs::read_dir(self.gens_dir()) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some((c, s)) = parse_name(&name.to_string_lossy()) else {
                continue;
            };
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > KEEP_COVERED));
            if old && (c != chain || s <= covered) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// Takes the writer lock of generations directory `dir` if it is free (`Ok(None)` when held).
fn try_lock(dir: &std::path::Path) -> io::Result<Option<File>> {
    use rustix::fs::{FlockOperation, flock};
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("writer.lock"))?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_names_round_trip_and_sort_by_sequence() {
        let a = delta_name(0xabc, 9);
        let b = delta_name(0xabc, 10);
        assert_eq!(parse_name(&a), Some((0xabc, 9)));
        assert!(a < b);
        assert_eq!(parse_name("0000-zz.bin"), None);
        assert_eq!(parse_name("x.tmp"), None);
    }

    #[test]
    fn one_writer_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().to_owned(), b"k");
        let first = cache.try_lock_writer().unwrap();
        assert!(first.is_some());
        assert!(cache.try_lock_writer().unwrap().is_none());
        drop(first);
        assert!(cache.try_lock_writer().unwrap().is_some());
    }

    #[test]
    fn other_configurations_generations_go_unless_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let base = Cache::new(dir.path().to_owned(), b"k");
        let ours = base.clone().with_sharing(b"a");
        let idle = base.clone().with_sharing(b"b");
        let busy = base.clone().with_sharing(b"c");
        let other_file = Cache::new(dir.path().to_owned(), b"other").with_sharing(b"b");
        for c in [&ours, &idle, &busy, &other_file] {
            drop(c.try_lock_writer().unwrap());
            fs::write(c.gens_dir().join(delta_name(1, 1)), b"text").unwrap();
        }
        let _held = busy.try_lock_writer().unwrap();
        ours.sweep_other_gens();
        assert!(ours.gens_dir().is_dir());
        assert!(!idle.gens_dir().exists(), "unused: removed");
        assert!(busy.gens_dir().is_dir(), "in use: kept");
        assert!(other_file.gens_dir().is_dir(), "another cache file's: kept");
    }
}
