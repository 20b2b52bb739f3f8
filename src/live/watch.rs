//! File-system watching with the `notify` watcher that `notify-debouncer-full` builds on: each
//! root is watched recursively; a root that does not exist yet is watched for from its nearest
//! existing ancestor (non-recursively) and picked up when it appears.
//!
//! Raw events go straight to our [`super::schedule::Schedule`], which debounces per path and
//! bounds staleness. The crate's own debouncer is not used for that: it replaces a pending
//! event by every newer event of the same kind, so a file written continuously through one open
//! handle would never be reported, defeating `--max-staleness-ms`; it also added its own
//! window to every change.
use notify_debouncer_full::notify::{
    self, Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher,
};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;

/// What the watcher sends: one file-system event, or an error.
pub type WatchEvent = notify::Result<Event>;

/// What wakes the indexer thread: a file-system event, or the server shutting down (answered
/// on the enclosed sender once pending work is saved).
pub enum Wake {
    Fs(WatchEvent),
    Stop(Sender<()>),
}

type Inner = RecommendedWatcher;

/// What is being watched for one root.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Plan {
    /// The root exists and is watched recursively.
    Root,
    /// The root is missing; this existing ancestor is watched non-recursively.
    Ancestor(PathBuf),
    Nothing,
}

/// The watcher of all roots.
pub struct Watch {
    inner: Inner,
    roots: Vec<(PathBuf, Plan)>,
    /// Directories that could not be watched (to be polled), with the reason.
    polled: Vec<(PathBuf, String)>,
    /// Symlinked transcript files whose target lies outside every root: target → link.
    links: std::collections::HashMap<PathBuf, PathBuf>,
    /// Files already checked for being such a link.
    checked: std::collections::HashSet<PathBuf>,
}

/// Why a watch failed, naming the real cause; the limit hint only for the limit.
pub fn why(e: &notify::Error) -> String {
    match e.kind {
        notify::ErrorKind::MaxFilesWatch => {
            format!("{e} (on Linux, raise fs.inotify.max_user_watches)")
        }
        _ => e.to_string(),
    }
}

fn nearest_existing_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.is_dir())
        .map(Path::to_owned)
}

impl Watch {
    /// Starts watching `roots`; events (batches of changed paths) go to `tx`.
    pub fn start(roots: &[PathBuf], tx: Sender<Wake>) -> Result<Self, String> {
        let inner = notify::recommended_watcher(move |event: WatchEvent| {
            let _ = tx.send(Wake::Fs(event));
        })
        .map_err(|e| e.to_string())?;
        let mut w = Watch {
            inner,
            roots: roots.iter().map(|r| (r.clone(), Plan::Nothing)).collect(),
            polled: Vec::new(),
            links: Default::default(),
            checked: Default::default(),
        };
        for i in 0..w.roots.len() {
            w.plan(i)?;
        }
        Ok(w)
    }

    /// Watches what root `i` needs now. Repeats until stable: a directory created between the
    /// check and the new watch would otherwise go unnoticed (`mkdir -p` creates a chain of
    /// them faster than events arrive).
    fn plan(&mut self, i: usize) -> Result<(), String> {
        for _ in 0..64 {
            if !self.plan_once(i)? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One planning step; returns whether the plan changed.
    fn plan_once(&mut self, i: usize) -> Result<bool, String> {
        let (root, old) = self.roots[i].clone();
        let new = if root.is_dir() {
            Plan::Root
        } else {
            nearest_existing_ancestor(&root).map_or(Plan::Nothing, Plan::Ancestor)
        };
        if new == old {
            return Ok(false);
        }
        match &old {
            Plan::Root => {
                let _ = self.inner.unwatch(&root);
            }
            Plan::Ancestor(a) => {
                let _ = self.inner.unwatch(a);
            }
            Plan::Nothing => {}
        }
        match &new {
            Plan::Root => {
                if let Err(e) = self.inner.watch(&root, RecursiveMode::Recursive) {
                    tracing::warn!(
                        "cannot watch `{}` as a whole ({}); watching its directories one by one",
                        root.display(),
                        why(&e)
                    );
                    let _ = self.inner.unwatch(&root);
                    self.watch_each(&root);
                }
            }
            Plan::Ancestor(a) => {
                tracing::info!(
                    "`{}` does not exist yet; watching `{}` for it",
                    root.display(),
                    a.display()
                );
                self.inner
                    .watch(a, RecursiveMode::NonRecursive)
                    .map_err(|e| format!("cannot watch `{}`: {e}", a.display()))?
            }
            Plan::Nothing => {}
        }
        self.roots[i].1 = new;
        Ok(true)
    }

    /// Watches `root` and every directory under it one by one (symlinks not followed); a
    /// directory that cannot be watched or read is noted to be polled and the rest stays
    /// watched. Directories created later under such a root are found by polling.
    fn watch_each(&mut self, root: &Path) {
        let mut stack = vec![root.to_owned()];
        while let Some(dir) = stack.pop() {
            if let Err(e) = self.inner.watch(&dir, RecursiveMode::NonRecursive) {
                self.poll_instead(dir, why(&e));
                continue;
            }
            match std::fs::read_dir(&dir) {
                Ok(entries) => stack.extend(
                    entries
                        .flatten()
                        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                        .map(|e| e.path()),
                ),
                Err(e) => self.poll_instead(dir, e.to_string()),
            }
        }
    }

    fn poll_instead(&mut self, dir: PathBuf, reason: String) {
        tracing::warn!(
            "cannot watch `{}` ({reason}); polling it instead",
            dir.display()
        );
        self.polled.push((dir, reason));
    }

    /// Directories that cannot be watched, with the reason (drained: each is reported once).
    pub fn take_polled(&mut self) -> Vec<(PathBuf, String)> {
        std::mem::take(&mut self.polled)
    }

    /// Watches the directory of the target of every symlinked file among `files` (checked
    /// once each) whose target lies outside the roots, so appends to the target are seen.
    pub fn follow_links<'a>(&mut self, files: impl Iterator<Item = &'a Path>) {
        for file in files {
            if self.checked.contains(file) {
                continue;
            }
            self.checked.insert(file.to_owned());
            let is_link = std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink());
            let Some(target) = is_link.then(|| std::fs::canonicalize(file).ok()).flatten() else {
                continue;
            };
            if self.roots.iter().any(|(r, _)| target.starts_with(r)) {
                continue;
            }
            let Some(dir) = target.parent() else { continue };
            let watched = self.links.keys().any(|t| t.parent() == Some(dir));
            if !watched {
                if let Err(e) = self.inner.watch(dir, RecursiveMode::NonRecursive) {
                    self.poll_instead(dir.to_owned(), why(&e));
                }
            }
            self.links.insert(target, file.to_owned());
        }
    }

    /// The transcript path a changed path stands for: the link for a followed target.
    pub fn translate(&self, path: PathBuf) -> PathBuf {
        self.links.get(&path).cloned().unwrap_or(path)
    }

    /// Re-plans roots affected by a change at `path` (a missing root appearing or a watched
    /// root disappearing). Returns roots that just became watchable, to be scanned whole.
    pub fn replan(&mut self, path: &Path) -> Result<Vec<PathBuf>, String> {
        let mut appeared = Vec::new();
        for i in 0..self.roots.len() {
            let (root, plan) = self.roots[i].clone();
            let relevant = match &plan {
                Plan::Root => path == root && !root.is_dir(),
                Plan::Ancestor(_) | Plan::Nothing => {
                    root.starts_with(path) || path.starts_with(&root)
                }
            };
            if relevant {
                self.plan(i)?;
                if self.roots[i].1 == Plan::Root && plan != Plan::Root {
                    appeared.push(root);
                }
            }
        }
        Ok(appeared)
    }
}

/// Paths an event is about (none for pure accesses, such as our own reads), and whether the
/// watcher lost events and everything must be rescanned.
pub fn changed_paths(event: Event) -> (Vec<PathBuf>, bool) {
    let rescan = event.need_rescan();
    if matches!(event.kind, EventKind::Access(_)) {
        return (Vec::new(), rescan);
    }
    (event.paths, rescan)
}
