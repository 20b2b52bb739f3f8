//! Shared black-box test harness: the binary in an isolated environment, polling, skipped tests
//! and sample data, the CLI runner, servers over small fixtures, assertion helpers.
//!
//! `tests/all/main.rs` declares it once (`mod common;`) for every test module.

pub mod agents;
pub mod aider;
pub mod amp;
pub mod cache;
pub mod chunks;
pub mod chunks_tree;
pub mod continue_cli;
pub mod droid;
pub mod fixture;
pub mod formats;
pub mod http_client;
pub mod ids;
pub mod jsonrpc;
pub mod kimi;
pub mod live;
pub mod mcp;
pub mod opencode;
pub mod project;
pub mod qwen;
pub mod raw;
pub mod schema_check;
pub mod search;
pub mod session;
pub mod sqlitedb;
pub mod store;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binary under test: `$CONVERSATION_SEARCH_BIN` if set, else the one cargo built.
pub fn bin_path() -> PathBuf {
    match std::env::var_os("CONVERSATION_SEARCH_BIN") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_conversation-search")),
    }
}

/// Calls `f` every ~20 ms until it returns `Some`, panicking once `deadline` has elapsed.
/// Tests never assert after a fixed sleep: they poll for the expected state instead.
pub fn poll_until<T>(deadline: Duration, f: impl FnMut() -> Option<T>) -> T {
    poll_until_desc("condition", deadline, f)
}

/// Like [`poll_until`], naming what is awaited in the panic message.
pub fn poll_until_desc<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if start.elapsed() >= deadline {
            panic!("poll_until: timed out after {deadline:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Environment variable naming a file that [`skip`] appends its line to (`scripts/test` sets it,
/// then counts and lists the skipped tests at the end).
const SKIP_LOG_ENV: &str = "CONVERSATION_SEARCH_SKIP_LOG";

/// Reports the running test as skipped (the caller returns right after): writes
/// `SKIPPED <test>: <reason>` to stderr past the test harness's capture, so `cargo test` shows
/// it, and appends it to `$CONVERSATION_SEARCH_SKIP_LOG` when set, so the run can count it
/// (nextest shows no output of passing tests).
pub fn skip(reason: &str) {
    let thread = std::thread::current();
    let line = format!(
        "SKIPPED {}: {reason}\n",
        thread.name().unwrap_or("<unnamed test>")
    );
    // Not eprint!: libtest captures that and shows it only when the test fails.
    let _ = std::io::stderr().write_all(line.as_bytes());
    if let Some(log) = std::env::var_os(SKIP_LOG_ENV).filter(|p| !p.is_empty()) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = appended {
            panic!(
                "cannot append to ${SKIP_LOG_ENV} ({}): {e}",
                Path::new(&log).display()
            );
        }
    }
}

/// `<CARGO_MANIFEST_DIR>/../shared/samples` when it exists (real transcripts, read-only);
/// otherwise `None`, and the running test is reported skipped ([`skip`]).
pub fn samples_or_skip() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples");
    if p.is_dir() {
        // roots are canonical, and so are ids derived from paths
        Some(p.canonicalize().unwrap_or(p))
    } else {
        skip("../shared/samples not found");
        None
    }
}

/// The committed synthetic corpus (`fixtures/claude/projects`) when it exists.
pub fn fixtures_projects_dir() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude/projects");
    p.is_dir().then_some(p)
}

/// Temporary HOME and XDG dirs so the binary never touches the real home.
pub struct IsolatedEnv {
    pub home: tempfile::TempDir,
    pub cache: tempfile::TempDir,
}

impl IsolatedEnv {
    pub fn new() -> Self {
        IsolatedEnv {
            home: tempfile::tempdir().expect("temp HOME"),
            cache: tempfile::tempdir().expect("temp XDG_CACHE_HOME"),
        }
    }

    /// Applies the isolation to a command: HOME, XDG_*, no inherited CLAUDE_CONFIG_DIR.
    fn apply(&self, cmd: &mut Command) {
        cmd.env("HOME", self.home.path())
            .env("XDG_CACHE_HOME", self.cache.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("XDG_DATA_HOME", self.home.path().join(".local/share"))
            .env("XDG_STATE_HOME", self.home.path().join(".local/state"))
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CONVERSATION_SEARCH_LOG")
            .env_remove("RUST_LOG");
    }

    /// A command running the binary under test with `args` in this isolation, then `envs`
    /// (set last, so they can override HOME etc.); stdio is left to the caller.
    pub fn command(&self, args: &[&str], envs: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(bin_path());
        cmd.args(args);
        self.apply(&mut cmd);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd
    }
}

impl Default for IsolatedEnv {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs the binary as a one-shot CLI (stdin closed) in an isolated environment, with a
/// 60 s timeout. `envs` are applied after the isolation (so they can override HOME etc.).
pub fn run_cli(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let iso = IsolatedEnv::new();
    let mut child = iso
        .command(args, envs)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", bin_path()));
    // Drain both pipes in threads so a chatty child never blocks.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).ok();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).ok();
        v
    });
    let deadline = Duration::from_secs(60);
    let status = poll_until_desc(&format!("CLI {args:?} to exit"), deadline, || {
        child.try_wait().expect("try_wait")
    });
    Output {
        status,
        stdout: t_out.join().expect("stdout thread"),
        stderr: t_err.join().expect("stderr thread"),
    }
}

/// Runs a CLI command expected to succeed and print one JSON object on stdout.
pub fn run_cli_json(args: &[&str]) -> Value {
    let out = run_cli(args, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{args:?} exited with {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status.code()
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON value ({e}):\n{stdout}"))
}

/// Last `n` characters of a string (for panic messages).
pub fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        s.to_string()
    } else {
        s.chars().skip(count - n).collect()
    }
}

/// Collapses all whitespace runs to one space and trims (for tolerant text comparisons).
pub fn squash_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A running server plus the projects tree it indexes (the server is dropped first).
pub struct Served {
    pub client: mcp::McpClient,
    pub dir: fixture::ProjectsDir,
}

impl std::ops::Deref for Served {
    type Target = mcp::McpClient;
    fn deref(&self) -> &mcp::McpClient {
        &self.client
    }
}

/// Starts a server over `dir` (default pattern) and waits for the first index build.
pub fn serve(dir: fixture::ProjectsDir) -> Served {
    serve_with(dir, &[])
}

/// Starts a server over `dir` with extra args (e.g. a PATTERN) and waits for the index.
pub fn serve_with(dir: fixture::ProjectsDir, extra: &[&str]) -> Served {
    let client = mcp::McpClient::indexed(dir.path(), extra);
    Served { client, dir }
}

/// Starts a server over one session `session_id` in the project directory `project`, written
/// by `f`, and waits for the index.
pub fn serve_session(
    project: &str,
    session_id: &str,
    f: impl FnOnce(&mut fixture::SessionWriter),
) -> Served {
    let dir = fixture::ProjectsDir::new();
    let mut w = dir.project(project).session(session_id);
    f(&mut w);
    serve(dir)
}

/// Starts a server over one session `s1` in `project`: one turn per prompt (each answered with
/// "ok"), turn numbers from 0.
pub fn serve_prompts(project: &str, prompts: &[&str]) -> Served {
    serve_session(project, "s1", |w| {
        for p in prompts {
            w.exchange(p, "ok");
        }
    })
}

/// A proptest strategy: 1 to `max` words of `vocab`, joined by spaces.
pub fn words(
    vocab: &'static [&'static str],
    max: usize,
) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop::collection::vec(prop::sample::select(vocab), 1..=max).prop_map(|w| w.join(" "))
}

/// Asserts that every key of the object `expected` is present in `actual` with an equal value
/// (extra keys in `actual` are allowed: the spec names required fields, not a closed set).
#[track_caller]
pub fn assert_fields(actual: &Value, expected: &Value) {
    let exp = expected
        .as_object()
        .expect("expected must be a JSON object");
    let act = actual
        .as_object()
        .unwrap_or_else(|| panic!("not a JSON object: {actual}"));
    let problems: Vec<String> = exp
        .iter()
        .filter_map(|(k, v)| match act.get(k) {
            None => Some(format!("missing `{k}` (want {v})")),
            Some(a) if a != v => Some(format!("`{k}`: got {a}, want {v}")),
            _ => None,
        })
        .collect();
    assert!(problems.is_empty(), "{}\nin: {actual}", problems.join("\n"));
}
