//! File-system watching with the `notify` watcher that `notify-debouncer-full` builds on: each
//! directory of a root is watched on its own (new ones as they appear), so that one that cannot
//! be watched (the inotify watch limit reached, permission denied) — at start or later — is
//! polled instead while the rest stays watched; a root that does not exist yet is watched for
//! from its nearest existing ancestor (non-recursively) and picked up when it appears.
//!
//! Raw events go straight to our [`super::schedule::Schedule`], which debounces per path and
//! bounds staleness. The crate's own debouncer is not used for that: it replaces a pending
//! event by every newer event of the same kind, so a file written continuously through one open
//! handle would never be reported, defeating `--max-staleness-ms`; it also added its own
//! window to every change.
use notify_debouncer_full::notify::{
    self, Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;

/// What the watcher sends: one file-system event, or an error.
pub(crate) type WatchEvent = notify::Result<Event>;

/// What wakes the indexer thread: a file-system event with when the watcher saw it (a change's
/// debounce counts from then, not from when the indexer got to it), or the server shutting
/// down (answered on the enclosed sender once pending work is saved).
pub(crate) enum Wake {
    Fs(WatchEvent, std::time::Instant),
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

/// Test hook: `CONVERSATION_SEARCH_TEST_MAX_WATCHES` caps the directories watched, as a low
/// inotify limit would, so that black-box tests can reach the limit anywhere. Read once.
pub(crate) const MAX_WATCHES_ENV: &str = "CONVERSATION_SEARCH_TEST_MAX_WATCHES";

fn max_watches() -> Option<usize> {
    static CAP: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| std::env::var(MAX_WATCHES_ENV).ok()?.parse().ok())
}

/// The watcher of all roots.
pub(crate) struct Watch {
    inner: Inner,
    roots: Vec<(PathBuf, Plan)>,
    /// Directories under roots that are watched (each on its own).
    watched: BTreeSet<PathBuf>,
    /// Directories that could not be watched and are polled (their subtrees with them).
    polled_dirs: BTreeSet<PathBuf>,
    /// Newly polled directories with the reason, not yet reported.
    polled: Vec<(PathBuf, String)>,
    /// Polled directories that went away, not yet reported.
    gone: Vec<PathBuf>,
    /// Symlinked transcript files whose target lies outside every root: target → link.
    links: std::collections::HashMap<PathBuf, PathBuf>,
    /// Files already checked for being such a link.
    checked: std::collections::HashSet<PathBuf>,
}

/// Why a watch failed, naming the real cause; the limit hint only for the limit.
pub(crate) fn why(e: &notify::Error) -> String {
    match &e.kind {
        notify::ErrorKind::MaxFilesWatch => "the inotify watch limit is reached (ENOSPC from \
             inotify_add_watch; on Linux, raise fs.inotify.max_user_watches)"
            .into(),
        notify::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
            "permission denied (EACCES from inotify_add_watch)".into()
        }
        notify::ErrorKind::Io(io) => io.to_string(),
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
    pub(crate) fn start(roots: &[PathBuf], tx: Sender<Wake>) -> Result<Self, String> {
        let inner = notify::recommended_watcher(move |event: WatchEvent| {
            let _ = tx.send(Wake::Fs(event, std::time::Instant::now()));
        })
        .map_err(|e| e.to_string())?;
        let mut w = Watch {
            inner,
            roots: roots.iter().map(|r| (r.clone(), Plan::Nothing)).collect(),
            watched: BTreeSet::new(),
            polled_dirs: BTreeSet::new(),
            polled: Vec::new(),
            gone: Vec::new(),
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
            // the root went away: its watches went with it
            Plan::Root => {
                let _ = self.inner.unwatch(&root);
                self.forget(&root);
            }
            Plan::Ancestor(a) => {
                let _ = self.inner.unwatch(a);
            }
            Plan::Nothing => {}
        }
        // set first: watching the tree looks the root up by its plan
        self.roots[i].1 = new.clone();
        match &new {
            Plan::Root => self.watch_tree(&root),
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
        Ok(true)
    }

    /// Watches `top` and every directory under it one by one (a symlinked directory only when
    /// it leads out of the root, as discovery follows those); a directory that cannot be
    /// watched or read is polled with its subtree, and the rest stays watched. Directories
    /// already watched are watched again (a directory removed and created anew under the same
    /// name needs a new watch), without counting twice.
    fn watch_tree(&mut self, top: &Path) {
        let Some(root) = self.root_of(top) else {
            return;
        };
        let real_root = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
        let mut stack = vec![top.to_owned()];
        while let Some(dir) = stack.pop() {
            if self.polled_dirs.iter().any(|p| dir.starts_with(p)) {
                continue;
            }
            let real = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
            let is_link = dir != root
                && std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink());
            if !seen.insert(real.clone()) || (is_link && real.starts_with(&real_root)) {
                continue;
            }
            if !self.watched.contains(&dir)
                && max_watches().is_some_and(|cap| self.watched.len() >= cap)
            {
                let cap = max_watches().unwrap_or_default();
                self.poll_instead(
                    dir,
                    format!(
                        "the inotify watch limit is reached ({MAX_WATCHES_ENV}={cap}, a test hook)"
                    ),
                );
                continue;
            }
            if let Err(e) = self.inner.watch(&dir, RecursiveMode::NonRecursive) {
                self.watched.remove(&dir);
                self.poll_instead(dir, why(&e));
                continue;
            }
            self.watched.insert(dir.clone());
            match std::fs::read_dir(&dir) {
                Ok(entries) => stack.extend(
                    entries
                        .flatten()
                        .filter(|e| {
                            e.file_type()
                                .is_ok_and(|t| t.is_dir() || (t.is_symlink() && e.path().is_dir()))
                        })
                        .map(|e| e.path()),
                ),
                Err(e) => self.poll_instead(dir, e.to_string()),
            }
        }
    }

    /// The watched root `path` lies in.
    fn root_of(&self, path: &Path) -> Option<PathBuf> {
        self.roots
            .iter()
            .find(|(r, plan)| *plan == Plan::Root && path.starts_with(r))
            .map(|(r, _)| r.clone())
    }

    /// Forgets the watches of `dir` and below (gone: the kernel dropped them, and notify its
    /// own records); polled directories there are no longer polled.
    fn forget(&mut self, dir: &Path) {
        let under = |set: &BTreeSet<PathBuf>| -> Vec<PathBuf> {
            set.range(dir.to_owned()..)
                .take_while(|p| p.starts_with(dir))
                .cloned()
                .collect()
        };
        for p in under(&self.watched) {
            self.watched.remove(&p);
        }
        for p in under(&self.polled_dirs) {
            self.polled_dirs.remove(&p);
            self.polled.retain(|(d, _)| *d != p);
            self.gone.push(p);
        }
    }

    /// Follows a changed path inside a watched root: a directory that appeared (created, moved
    /// in, or replaced) is watched with everything under it; a watched one that is gone is
    /// forgotten. The caller rescans the path, which finds what was created in a new directory
    /// before its watch was added.
    pub(crate) fn saw(&mut self, path: &Path) {
        if self.root_of(path).is_none() {
            return;
        }
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => self.watch_tree(path),
            Ok(_) => {}
            Err(_) => self.forget(path),
        }
    }

    fn poll_instead(&mut self, dir: PathBuf, reason: String) {
        tracing::warn!(
            "cannot watch `{}` ({reason}); polling it instead",
            dir.display()
        );
        if self.polled_dirs.insert(dir.clone()) {
            self.polled.push((dir, reason));
        }
    }

    /// Polled directories that went away since the last call (drained).
    pub(crate) fn take_gone(&mut self) -> Vec<PathBuf> {
        std::mem::take(&mut self.gone)
    }

    /// Directories that cannot be watched, with the reason (drained: each is reported once).
    pub(crate) fn take_polled(&mut self) -> Vec<(PathBuf, String)> {
        std::mem::take(&mut self.polled)
    }

    /// Watches the directory of the target of every symlinked file among `files` (checked
    /// once each) whose target lies outside the roots, so appends to the target are seen.
    /// Returns the links newly followed: what was written to their targets before the watch
    /// began is not reported by it, so the caller reads them again.
    pub(crate) fn follow_links<'a>(
        &mut self,
        files: impl Iterator<Item = &'a Path>,
    ) -> Vec<PathBuf> {
        let mut followed = Vec::new();
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
            followed.push(file.to_owned());
        }
        followed
    }

    /// The transcript path a changed path stands for: the link for a followed target.
    pub(crate) fn translate(&self, path: PathBuf) -> PathBuf {
        self.links.get(&path).cloned().unwrap_or(path)
    }

    /// Re-plans roots affected by a change at `path` (a missing root appearing or a watched
    /// root disappearing). Returns roots that just became watchable, to be scanned whole.
    pub(crate) fn replan(&mut self, path: &Path) -> Result<Vec<PathBuf>, String> {
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
pub(crate) fn changed_paths(event: Event) -> (Vec<PathBuf>, bool) {
    let rescan = event.need_rescan();
    if matches!(event.kind, EventKind::Access(_)) {
        return (Vec::new(), rescan);
    }
    (event.paths, rescan)
}
