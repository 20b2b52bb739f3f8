//! OpenCode data directories for black-box tests: copies of the committed database fixtures
//! (`fixtures/opencode`, made by `scripts/gen_opencode_db.py`), legacy `storage/` trees written
//! file by file, and a live database writer (the same script's `live` mode, on python3's
//! real SQLite) for update scenarios. A server over such a directory is started with
//! `--source opencode:DIR`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::mcp::{McpClient, hit_sessions};
use super::poll_until_desc;

/// `fixtures/opencode` of this checkout.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencode")
}

/// `../shared/samples/opencode/storage` when present; otherwise `None`, and the running test
/// is reported skipped.
pub fn sample_storage_or_skip() -> Option<PathBuf> {
    let p = super::samples_or_skip()?.join("opencode/storage");
    if p.is_dir() {
        Some(p)
    } else {
        super::skip("../shared/samples/opencode/storage not found");
        None
    }
}

/// Copies a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let dst = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).expect("copy file");
        }
    }
}

/// A temporary OpenCode data directory (what `~/.local/share/opencode` holds).
pub struct DataDir {
    dir: tempfile::TempDir,
}

impl DataDir {
    pub fn new() -> Self {
        DataDir {
            dir: tempfile::Builder::new()
                .prefix("cs-opencode-")
                .tempdir()
                .expect("temp data dir"),
        }
    }

    /// A data dir holding a copy of `fixtures/opencode/<name>` (`data`, `wal`).
    pub fn with_fixture(name: &str) -> Self {
        let d = DataDir::new();
        copy_tree(&fixtures_dir().join(name), d.path());
        d
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> PathBuf {
        self.path().join("opencode.db")
    }

    /// The `--source` argument for this directory.
    pub fn source_arg(&self) -> String {
        format!("opencode:{}", self.path().display())
    }

    /// Names of the files directly in the directory, sorted.
    pub fn file_names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path())
            .expect("read dir")
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// The legacy storage tree under this directory.
    pub fn storage(&self) -> Storage {
        Storage {
            root: self.path().join("storage"),
        }
    }

    /// Starts a server over this directory (`--debounce-ms 200`) and waits for the index.
    pub fn serve(&self, extra: &[&str]) -> McpClient {
        let source = self.source_arg();
        let mut args = vec!["--source", source.as_str(), "--debounce-ms", "200"];
        args.extend_from_slice(extra);
        let c = McpClient::start(&args);
        c.wait_ready();
        c
    }
}

impl Default for DataDir {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes legacy storage files (`session/<project>/<id>.json`, `message/<session>/<id>.json`,
/// `part/<message>/<id>.json`), each written whole in one call.
pub struct Storage {
    pub root: PathBuf,
}

fn write_json(path: &Path, v: &Value) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("create dirs");
    std::fs::write(path, v.to_string()).expect("write json");
    path.to_owned()
}

pub const T0: i64 = 1_767_225_600_000;

impl Storage {
    /// A session file; `parent` makes it a child session.
    pub fn session(
        &self,
        project: &str,
        id: &str,
        title: &str,
        dir: &str,
        parent: Option<&str>,
    ) -> PathBuf {
        let v = json!({"id": id, "version": "0.15.0", "projectID": project, "directory": dir,
                       "parentID": parent, "title": title,
                       "time": {"created": T0, "updated": T0 + 1000}});
        write_json(&self.root.join(format!("session/{project}/{id}.json")), &v)
    }

    /// A message file (`role` user or assistant) created at `T0 + at`.
    pub fn message(&self, session: &str, id: &str, role: &str, at: i64) -> PathBuf {
        let mut v = json!({"id": id, "sessionID": session, "role": role,
                           "time": {"created": T0 + at}, "agent": "build",
                           "model": {"providerID": "openai", "modelID": "gpt-5"}});
        if role == "assistant" {
            v["path"] = json!({"cwd": "/w/legacy", "root": "/w/legacy"});
        }
        write_json(&self.root.join(format!("message/{session}/{id}.json")), &v)
    }

    /// A part file; `data` is the part minus its ids.
    pub fn part(&self, session: &str, message: &str, id: &str, data: Value) -> PathBuf {
        let mut v = data;
        v["id"] = json!(id);
        v["sessionID"] = json!(session);
        v["messageID"] = json!(message);
        write_json(&self.root.join(format!("part/{message}/{id}.json")), &v)
    }
}

/// A text part.
pub fn text(s: &str) -> Value {
    json!({"type": "text", "text": s})
}

/// A completed tool part.
pub fn tool(name: &str, input: Value, output: &str) -> Value {
    json!({"type": "tool", "callID": format!("call_{name}"), "tool": name,
           "state": {"status": "completed", "input": input, "output": output,
                     "title": name, "metadata": {}, "time": {"start": T0, "end": T0}}})
}

/// A message's info JSON as stored in the database's `data` column.
pub fn message_data(role: &str, at: i64) -> Value {
    json!({"role": role, "time": {"created": T0 + at}, "agent": "build",
           "model": {"providerID": "openai", "modelID": "gpt-5"},
           "path": {"cwd": "/w/live", "root": "/w/live"}})
}

/// A database being written by a live SQLite connection (python3 running
/// `scripts/gen_opencode_db.py live`). The connection stays open until the value is dropped
/// or [`LiveDb::close`] is called; in WAL mode nothing is checkpointed before that.
pub struct LiveDb {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl LiveDb {
    /// `None` (test skipped) when python3 with sqlite3 or the script is unavailable.
    pub fn start(db: &Path, wal: bool) -> Option<LiveDb> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen_opencode_db.py");
        let ok = script.is_file()
            && Command::new("python3")
                .args(["-c", "import sqlite3"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if !ok {
            super::skip(&format!(
                "python3 with sqlite3 (or {}) unavailable",
                script.display()
            ));
            return None;
        }
        let mut cmd = Command::new("python3");
        cmd.arg(&script).arg("live").arg(db);
        if wal {
            cmd.arg("--wal");
        }
        let mut child = cmd
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn python3");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Some(LiveDb {
            child,
            stdin,
            stdout,
        })
    }

    /// Sends one command (`{"op": …}`) and waits until it is committed.
    pub fn send(&mut self, cmd: Value) {
        let stdin = self.stdin.as_mut().expect("live db open");
        writeln!(stdin, "{cmd}").expect("write command");
        stdin.flush().expect("flush");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read reply");
        assert_eq!(line.trim(), "ok", "live db command {cmd} failed");
    }

    pub fn session(&mut self, id: &str, title: &str, dir: &str, parent: Option<&str>) {
        self.send(
            json!({"op": "session", "id": id, "directory": dir, "title": title,
                         "created": T0, "parent": parent}),
        );
    }

    pub fn message(&mut self, session: &str, id: &str, role: &str, at: i64) {
        self.send(json!({"op": "message", "id": id, "session": session,
                         "data": message_data(role, at), "created": T0 + at}));
    }

    pub fn part(&mut self, session: &str, message: &str, id: &str, data: Value) {
        self.send(
            json!({"op": "part", "id": id, "message": message, "session": session,
                         "data": data}),
        );
    }

    /// Closes the connection (SQLite checkpoints and removes the WAL) and waits for exit.
    pub fn close(mut self) {
        self.stdin.take();
        let status = self.child.wait().expect("wait python3");
        assert!(status.success(), "live db writer failed: {status}");
    }
}

impl Drop for LiveDb {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------ queries and trees

pub const DEADLINE: Duration = Duration::from_secs(20);

pub fn results(c: &McpClient, query: &str) -> Vec<Value> {
    c.search_with(json!({"query": query, "limit": 50}))["results"]
        .as_array()
        .expect("results")
        .clone()
}

/// Waits until a search for `query` finds `session`.
pub fn wait_hit(c: &McpClient, query: &str, session: &str) {
    poll_until_desc(&format!("`{query}` to find {session}"), DEADLINE, || {
        hit_sessions(&c.search(query))
            .contains(&session.to_owned())
            .then_some(())
    });
}

pub fn source_status(c: &McpClient) -> Value {
    let st = c.index_status();
    st["sources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["source"] == "opencode").cloned())
        .unwrap_or_else(|| panic!("no opencode source in {st}"))
}

/// A two-session legacy tree: a main session and a child.
pub fn legacy_tree() -> DataDir {
    let data = DataDir::new();
    let st = data.storage();
    st.session(
        "proj1",
        "ses_main",
        "Legacy main session",
        "/w/legacy",
        None,
    );
    st.message("ses_main", "msg_1", "user", 1000);
    st.part(
        "ses_main",
        "msg_1",
        "prt_1",
        text("How do I configure the flamingo exporter?"),
    );
    st.part(
        "ses_main",
        "msg_1",
        "prt_2",
        json!({"type": "text", "text": "synthlegacyword", "synthetic": true}),
    );
    st.message("ses_main", "msg_2", "assistant", 2000);
    st.part(
        "ses_main",
        "msg_2",
        "prt_3",
        json!({"type": "reasoning", "text": "legacyreasonword"}),
    );
    st.part(
        "ses_main",
        "msg_2",
        "prt_4",
        tool(
            "read",
            json!({"filePath": "/w/legacy/flamingo.toml"}),
            "legacyoutputword",
        ),
    );
    st.part(
        "ses_main",
        "msg_2",
        "prt_5",
        text("Set the flamingo endpoint in flamingo.toml"),
    );
    st.session(
        "proj1",
        "ses_kid",
        "Check exporter (@explore subagent)",
        "/w/legacy",
        Some("ses_main"),
    );
    st.message("ses_kid", "msg_k1", "user", 1500);
    st.part(
        "ses_kid",
        "msg_k1",
        "prt_k1",
        text("Find the heronkid config loader"),
    );
    data
}
