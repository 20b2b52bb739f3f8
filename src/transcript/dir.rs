//! Reading transcript directories, for every format: a directory's entries sorted by name
//! (regular files and directories only), session files named by their id, and depth-aware walks.
use super::{Role, SourceFile};
use std::path::Path;

/// A directory entry: name, path and whether it is a directory (symlinks followed).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Entry {
    pub name: String,
    pub path: std::path::PathBuf,
    pub is_dir: bool,
}

/// The display name of a non-UTF-8 file or directory name (invalid bytes as U+FFFD), with a
/// warning the first time each path is seen.
fn lossy_name(path: &Path, raw: &std::ffi::OsStr) -> String {
    static WARNED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let name = raw.to_string_lossy().into_owned();
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    if !warned.iter().any(|p| p == path) {
        tracing::warn!(
            "`{}` is not a UTF-8 name; indexed as `{name}`",
            path.display()
        );
        warned.push(path.to_owned());
    }
    name
}

/// Directories and regular files of a directory, sorted by name (unreadable directories yield
/// nothing). FIFOs, sockets and devices are left out: opening one could block the indexer.
/// Uses the directory entry's type, so no extra `stat` per file except for symlinks.
pub(crate) fn sorted_entries(dir: &Path) -> Vec<Entry> {
    let mut v: Vec<Entry> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            let name = e
                .file_name()
                .into_string()
                .unwrap_or_else(|raw| lossy_name(&path, &raw));
            let ft = e.file_type().ok()?;
            let (is_dir, is_file) = if ft.is_symlink() {
                let m = std::fs::metadata(&path).ok()?;
                (m.is_dir(), m.is_file())
            } else {
                (ft.is_dir(), ft.is_file())
            };
            (is_dir || is_file).then_some(Entry { name, path, is_dir })
        })
        .collect();
    v.sort();
    v
}

/// The files directly in `dir`, sorted by name, that `accept` makes sources of.
pub(crate) fn files_in(
    dir: &Path,
    accept: impl FnMut(&Path) -> Option<SourceFile>,
) -> impl Iterator<Item = SourceFile> {
    let mut accept = accept;
    sorted_entries(dir)
        .into_iter()
        .filter(|e| !e.is_dir)
        .filter_map(move |e| accept(&e.path))
}

/// A session file `<id><suffix>` directly in a format's directory, whose conversation id is
/// `<format>:<id>` (`None` for other names and an empty id).
pub(crate) fn session_file(path: &Path, format: &'static str, suffix: &str) -> Option<SourceFile> {
    let stem = path.file_name()?.to_str()?.strip_suffix(suffix)?;
    (!stem.is_empty()).then(|| SourceFile {
        path: path.to_owned(),
        format,
        group: None,
        role: Role::Session {
            id: format!("{format}:{stem}"),
        },
    })
}

/// What `walk` finds from `dir`, started at its depth below `root`, sorted (nothing when `dir`
/// is not under `root`): the `discover` and `discover_under` of formats that walk a tree.
pub(crate) fn walk_sorted(
    root: &Path,
    dir: &Path,
    walk: impl FnOnce(&Path, usize, &mut Vec<SourceFile>),
) -> Vec<SourceFile> {
    let Ok(rel) = dir.strip_prefix(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(dir, rel.iter().count(), &mut out);
    out.sort();
    out
}
