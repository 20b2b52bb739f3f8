//! Writer of aider chat histories (`<repo>/.aider.chat.history.md`) as aider appends to them.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One history file.
pub struct AiderHistory {
    pub path: PathBuf,
}

impl AiderHistory {
    pub fn new(repo: &Path) -> Self {
        fs::create_dir_all(repo).expect("repo dir");
        AiderHistory {
            path: repo.join(".aider.chat.history.md"),
        }
    }

    pub fn append(&mut self, text: &str) -> &mut Self {
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .expect("open history");
        f.write_all(text.as_bytes()).expect("append");
        f.flush().expect("flush");
        self
    }

    /// `# aider chat started at <stamp>` (`YYYY-MM-DD HH:MM:SS`).
    pub fn session(&mut self, stamp: &str) -> &mut Self {
        self.append(&format!("\n# aider chat started at {stamp}\n\n"))
    }

    /// What the human typed: every line prefixed `#### `.
    pub fn prompt(&mut self, text: &str) -> &mut Self {
        let lines: String = text.lines().map(|l| format!("#### {l}\n")).collect();
        self.append(&format!("{lines}\n"))
    }

    pub fn reply(&mut self, text: &str) -> &mut Self {
        self.append(&format!("{text}\n\n"))
    }

    /// One of aider's own output lines (`> …`).
    pub fn output(&mut self, line: &str) -> &mut Self {
        self.append(&format!("> {line}\n"))
    }

    /// The session id the server gives a session started at `stamp` in this file.
    pub fn session_id(&self, stamp: &str) -> String {
        let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
        format!("aider:{}-{}-{}", self.key(), &digits[..8], &digits[8..14])
    }

    /// The file key in session ids: xxh3-64 of the path, low 32 bits in hex.
    pub fn key(&self) -> String {
        let h = xxhash_rust::xxh3::xxh3_64(self.path.as_os_str().as_encoded_bytes());
        format!("{:08x}", h as u32)
    }
}
