//! File-system watching with `notify-debouncer-full`: each root is watched recursively; a root
//! that does not exist yet is watched for from its nearest existing ancestor (non-recursively)
//! and picked up when it appears.
use notify_debouncer_full::notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

type Inner = Debouncer<notify_debouncer_full::notify::RecommendedWatcher, RecommendedCache>;

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
}

/// Coalescing window of the underlying debouncer; our own schedule does the real debounce.
pub fn coalesce_window(debounce: Duration) -> Duration {
    (debounce / 2).clamp(Duration::from_millis(5), Duration::from_millis(50))
}

fn nearest_existing_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|a| a.is_dir())
        .map(Path::to_owned)
}

impl Watch {
    /// Starts watching `roots`; events (batches of changed paths) go to `tx`.
    pub fn start(
        roots: &[PathBuf],
        window: Duration,
        tx: Sender<DebounceEventResult>,
    ) -> Result<Self, String> {
        let inner = new_debouncer(window, None, tx).map_err(|e| e.to_string())?;
        let mut w = Watch {
            inner,
            roots: roots.iter().map(|r| (r.clone(), Plan::Nothing)).collect(),
        };
        for i in 0..w.roots.len() {
            w.plan(i)?;
        }
        Ok(w)
    }

    fn plan(&mut self, i: usize) -> Result<(), String> {
        let (root, old) = self.roots[i].clone();
        let new = if root.is_dir() {
            Plan::Root
        } else {
            nearest_existing_ancestor(&root).map_or(Plan::Nothing, Plan::Ancestor)
        };
        if new == old {
            return Ok(());
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
            Plan::Root => self
                .inner
                .watch(&root, RecursiveMode::Recursive)
                .map_err(|e| {
                    format!(
                        "cannot watch `{}`: {e} (on Linux, raise fs.inotify.max_user_watches)",
                        root.display()
                    )
                })?,
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
        Ok(())
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

/// Paths an event batch is about (ignoring pure accesses, such as our own reads), and whether
/// the watcher lost events and everything must be rescanned.
pub fn changed_paths(events: Vec<notify_debouncer_full::DebouncedEvent>) -> (Vec<PathBuf>, bool) {
    let mut out = Vec::new();
    let mut rescan = false;
    for e in events {
        if e.event.need_rescan() {
            rescan = true;
        }
        if matches!(e.event.kind, EventKind::Access(_)) {
            continue;
        }
        out.extend(e.event.paths.iter().cloned());
    }
    out.sort();
    out.dedup();
    (out, rescan)
}
