//! How far the first index build is: files and bytes found at start-up and done so far,
//! updated by the build's workers as each file finishes and read by `index_status` and every
//! answer given before the build completes.
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct BuildProgress {
    files_total: AtomicU64,
    files_done: AtomicU64,
    bytes_total: AtomicU64,
    bytes_done: AtomicU64,
}

/// A reading of [`BuildProgress`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
}

impl BuildProgress {
    /// The build found `files` files holding `bytes` bytes.
    pub fn start(&self, files: u64, bytes: u64) {
        self.files_total.store(files, Ordering::Relaxed);
        self.bytes_total.store(bytes, Ordering::Relaxed);
    }

    /// One more file was read (`bytes` of it).
    pub fn file_done(&self, bytes: u64) {
        self.files_done.fetch_add(1, Ordering::Relaxed);
        self.bytes_done.fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn get(&self) -> Progress {
        let files_total = self.files_total.load(Ordering::Relaxed);
        let bytes_total = self.bytes_total.load(Ordering::Relaxed);
        Progress {
            files_done: self.files_done.load(Ordering::Relaxed).min(files_total),
            files_total,
            // a file may have grown since it was measured
            bytes_done: self.bytes_done.load(Ordering::Relaxed).min(bytes_total),
            bytes_total,
        }
    }
}
