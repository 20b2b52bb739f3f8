//! The transcript files followed: the roots they are found under, what was read of each file
//! (its [`FileState`]) and the conversations it holds, how changed paths become files to read
//! again or to add, which files changed since the last generation, the counters of what
//! happened to files, and each source directory's health.
use super::catalog::{Catalog, ConvId};
use super::ingest::FileState;
use super::{Root, SourceHealth};
use crate::transcript::SourceFile;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A followed file and the conversations it holds.
pub(super) struct FileEntry {
    pub(super) state: FileState,
    /// (conversation id as the parser reports it, internal id).
    pub(super) convs: Vec<(String, ConvId)>,
    pub(super) src: Arc<SourceFile>,
}

impl FileEntry {
    pub(super) fn new(src: SourceFile) -> Self {
        Self {
            src: Arc::new(src.clone()),
            state: FileState::new(src),
            convs: Vec::new(),
        }
    }

    /// The same file with nothing read of it yet.
    pub(super) fn reset(&self) -> Self {
        Self {
            state: FileState::new((*self.src).clone()),
            convs: Vec::new(),
            src: Arc::clone(&self.src),
        }
    }

    /// A file as the persistent index (or another server's generation) recorded it.
    pub(super) fn restored(state: FileState, convs: Vec<(String, ConvId)>) -> Self {
        let src = Arc::new(state.src.clone());
        Self { state, convs, src }
    }
}

/// What changed paths come to: known files to read again (or find gone) and files to add.
#[derive(Default)]
pub(super) struct Changes {
    pub(super) targets: BTreeSet<PathBuf>,
    pub(super) fresh: Vec<SourceFile>,
}

/// What happened to files since the counters were last reset (see [`super::Stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct FileCounts {
    pub(super) reread: u64,
    pub(super) appended: u64,
    pub(super) removed: u64,
    pub(super) added: u64,
    /// Distinct files an update found new, changed or gone.
    pub(super) touched: u64,
}

/// The followed files under the roots.
pub(super) struct Files {
    roots: Arc<Vec<Root>>,
    map: BTreeMap<PathBuf, FileEntry>,
    /// Files read, added or dropped since [`Files::clear_changed`].
    changed: BTreeSet<PathBuf>,
    pub(super) counts: FileCounts,
}

impl Files {
    pub(super) fn new(roots: Vec<Root>) -> Self {
        Files {
            roots: Arc::new(roots),
            map: BTreeMap::new(),
            changed: BTreeSet::new(),
            counts: FileCounts::default(),
        }
    }

    pub(super) fn roots(&self) -> &Arc<Vec<Root>> {
        &self.roots
    }

    pub(super) fn paths(&self) -> impl Iterator<Item = &Path> {
        self.map.keys().map(PathBuf::as_path)
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    pub(super) fn get(&self, path: &Path) -> Option<&FileEntry> {
        self.map.get(path)
    }

    pub(super) fn contains(&self, path: &Path) -> bool {
        self.map.contains_key(path)
    }

    pub(super) fn entries(&self) -> impl Iterator<Item = &FileEntry> {
        self.map.values()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&PathBuf, &FileEntry)> {
        self.map.iter()
    }

    /// Takes a file's entry out (to read it); [`Self::insert`] puts it back.
    pub(super) fn take(&mut self, path: &Path) -> Option<FileEntry> {
        self.map.remove(path)
    }

    pub(super) fn insert(&mut self, path: PathBuf, entry: FileEntry) {
        self.map.insert(path, entry);
    }

    /// Files read, added or dropped since [`Self::clear_changed`].
    pub(super) fn changed(&self) -> &BTreeSet<PathBuf> {
        &self.changed
    }

    pub(super) fn note_changed(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        self.changed.extend(paths);
    }

    pub(super) fn clear_changed(&mut self) {
        self.changed.clear();
    }

    /// Every transcript file currently under the roots.
    pub(super) fn discover(&self) -> Vec<SourceFile> {
        let mut files: Vec<SourceFile> = self
            .roots
            .iter()
            .flat_map(|root| root.adapter.discover(&root.dir, &root.pattern))
            .collect();
        files.sort();
        files.dedup_by(|a, b| a.path == b.path);
        files
    }

    /// What changes at `paths` (files or directories; created, modified or deleted) come to.
    pub(super) fn expand(&self, paths: &[PathBuf]) -> Changes {
        let mut changes = Changes::default();
        for p in paths {
            self.expand_one(p, &mut changes);
        }
        changes
    }

    /// Turns one changed path into files to re-read and new files to add.
    fn expand_one(&self, p: &Path, changes: &mut Changes) {
        let Changes { targets, fresh } = changes;
        for root in self.roots.iter() {
            // a root that did not exist may just have appeared (event on an ancestor)
            if root.dir.starts_with(p) && root.dir != p {
                if root.dir.is_dir() {
                    fresh.extend(root.adapter.discover(&root.dir, &root.pattern));
                }
                continue;
            }
            if !p.starts_with(&root.dir) {
                continue;
            }
            if let Some(transcript) = root.adapter.transcript_for(p) {
                // side file: refresh the transcript's description (e.g. sub-agent meta) and
                // re-read it (e.g. a database's `-wal`, a message file of a session unit)
                if let Some(src) = root.adapter.classify(&root.dir, &root.pattern, &transcript) {
                    match self.map.get(&transcript) {
                        Some(e) if *e.src == src => {
                            targets.insert(transcript);
                        }
                        _ => fresh.push(src),
                    }
                }
                continue;
            }
            if self.map.contains_key(p) {
                targets.insert(p.to_owned());
                continue;
            }
            // known files under a directory that changed or went away
            for (known, _) in self
                .map
                .range(p.to_owned()..)
                .take_while(|(k, _)| k.starts_with(p))
            {
                targets.insert(known.clone());
            }
            if p.is_dir() {
                fresh.extend(root.adapter.discover_under(&root.dir, &root.pattern, p));
            } else if p.is_file() {
                fresh.extend(root.adapter.classify(&root.dir, &root.pattern, p));
            }
        }
    }

    /// A full rescan by size and mtime (when file watching is unavailable).
    pub(super) fn scan(&self) -> Changes {
        let found = self.discover();
        let found_paths: BTreeSet<&Path> = found.iter().map(|f| f.path.as_path()).collect();
        let targets = self
            .map
            .iter()
            .filter(|(path, entry)| {
                !found_paths.contains(path.as_path()) || entry.state.looks_changed()
            })
            .map(|(path, _)| path.clone())
            .collect();
        let fresh = found
            .into_iter()
            .filter(|f| !self.map.contains_key(&f.path))
            .collect();
        Changes { targets, fresh }
    }

    /// A rescan by size and mtime of the directories `dirs` only (those that cannot be
    /// watched while the rest is).
    pub(super) fn scan_dirs(&self, dirs: &[PathBuf]) -> Changes {
        let mut found: BTreeMap<PathBuf, SourceFile> = BTreeMap::new();
        for root in self.roots.iter() {
            for dir in dirs
                .iter()
                .filter(|d| d.starts_with(&root.dir) && d.is_dir())
            {
                for f in root.adapter.discover_under(&root.dir, &root.pattern, dir) {
                    found.entry(f.path.clone()).or_insert(f);
                }
            }
        }
        let targets = self
            .map
            .iter()
            .filter(|(path, entry)| {
                let under = dirs.iter().any(|d| path.starts_with(d));
                under && (!found.contains_key(*path) || entry.state.looks_changed())
            })
            .map(|(path, _)| path.clone())
            .collect();
        let fresh = found
            .into_values()
            .filter(|f| !self.map.contains_key(&f.path))
            .collect();
        Changes { targets, fresh }
    }

    /// The group directories of every followed file.
    pub(super) fn groups(&self) -> Vec<String> {
        self.map
            .values()
            .filter_map(|f| f.src.group.clone())
            .collect()
    }

    /// Group directories that hold followed files of formats whose groups name projects.
    pub(super) fn project_groups(&self) -> Vec<String> {
        use crate::transcript::{ProjectNaming, adapter};
        self.map
            .values()
            .filter(|f| {
                adapter(f.src.format).is_some_and(|a| a.project_naming() == ProjectNaming::Group)
            })
            .filter_map(|f| f.src.group.clone())
            .collect()
    }

    /// Bytes read into the index, over every file.
    pub(super) fn bytes_read(&self) -> u64 {
        self.map.values().map(|f| f.state.offset).sum()
    }

    /// Lines that could not be read, over every file.
    pub(super) fn skipped_lines(&self) -> u64 {
        self.map.values().map(|f| f.state.skipped).sum()
    }

    /// Files, conversations and turns per source directory, with a warning where a directory
    /// is missing or its files yield no turns.
    pub(super) fn source_health(&self, catalog: &Catalog) -> Vec<SourceHealth> {
        let mut out: Vec<SourceHealth> = self
            .roots
            .iter()
            .map(|r| SourceHealth {
                format: r.adapter.name(),
                path: r.dir.clone(),
                exists: r.dir.is_dir(),
                ..SourceHealth::default()
            })
            .collect();
        let roots = RootIndex::new(&self.roots);
        let rows = self.count_conversations(catalog, &roots, &mut out);
        // the conversations no followed file holds (kept by the store)
        for conv in catalog.iter().filter(|c| !c.followed) {
            if let Some(i) = roots.of(&conv.file.path, conv.file.format) {
                if conv.is_subagent() {
                    out[i].subagents += 1;
                } else {
                    out[i].sessions += 1;
                }
            }
        }
        count_files(rows, &mut out);
        for h in &mut out {
            h.warn_when_empty();
        }
        out
    }

    /// Sessions and sub-agents of the followed files, per root; returns each file's row
    /// (root, turns, entry) for [`count_files`].
    fn count_conversations<'a>(
        &'a self,
        catalog: &Catalog,
        roots: &RootIndex,
        out: &mut [SourceHealth],
    ) -> Vec<(usize, u64, &'a FileEntry)> {
        let mut rows = Vec::new();
        for entry in self.map.values() {
            let Some(i) = roots.of(&entry.src.path, entry.src.format) else {
                continue;
            };
            let mut turns = 0;
            for c in entry.convs.iter().filter_map(|&(_, c)| catalog.get(c)) {
                turns += u64::from(c.turn_count);
                // a followed conversation's file is this one: counted here, not looked up
                if c.followed {
                    if c.is_subagent() {
                        out[i].subagents += 1;
                    } else {
                        out[i].sessions += 1;
                    }
                }
            }
            rows.push((i, turns, entry));
        }
        rows
    }
}

/// Which root a path lies under, by byte prefix: files are always joined onto their root,
/// and this runs per file and per conversation on every update (`Path::starts_with` walks
/// components: slow).
struct RootIndex<'a> {
    keys: Vec<(&'static str, &'a [u8])>,
}

impl<'a> RootIndex<'a> {
    fn new(roots: &'a [Root]) -> Self {
        RootIndex {
            keys: roots
                .iter()
                .map(|r| (r.adapter.name(), r.dir.as_os_str().as_encoded_bytes()))
                .collect(),
        }
    }

    fn of(&self, path: &Path, format: &str) -> Option<usize> {
        let b = path.as_os_str().as_encoded_bytes();
        self.keys.iter().position(|(f, root)| {
            *f == format
                && b.starts_with(root)
                && (b.len() == root.len() || b[root.len()] == b'/' || root.ends_with(b"/"))
        })
    }
}

/// Adds each file's row to its root: files, turns, skipped lines and unknown record types,
/// and a warning where files yield no turn although they hold record types this version does
/// not read (a format change upstream).
fn count_files(rows: Vec<(usize, u64, &FileEntry)>, out: &mut [SourceHealth]) {
    let mut drifted: Vec<(u64, BTreeSet<&str>)> = vec![(0, BTreeSet::new()); out.len()];
    // counted by borrowed name first: this runs on every update, over every file
    let mut unknown: Vec<BTreeMap<&str, u64>> = vec![BTreeMap::new(); out.len()];
    for (i, turns, entry) in rows {
        let h = &mut out[i];
        h.files += 1;
        h.turns += turns;
        h.skipped_lines += entry.state.skipped;
        for (kind, n) in &entry.state.unknown {
            *unknown[i].entry(kind.as_str()).or_default() += n;
        }
        if turns == 0 {
            h.files_without_turns += 1;
            if !entry.state.unknown.is_empty() {
                drifted[i].0 += 1;
                drifted[i]
                    .1
                    .extend(entry.state.unknown.iter().map(|(k, _)| k.as_str()));
            }
        }
    }
    for (h, counts) in out.iter_mut().zip(unknown) {
        h.unknown_records = counts.into_iter().map(|(k, n)| (k.to_owned(), n)).collect();
    }
    for (h, (files, kinds)) in out.iter_mut().zip(drifted) {
        if files > 0 {
            let kinds: Vec<&str> = kinds.into_iter().take(8).collect();
            h.warning = Some(format!(
                "{files} {} file(s) under `{}` yielded no turns and hold record types this version does not read ({}): the transcript format may have changed upstream; please report it",
                h.format,
                h.path.display(),
                kinds.join(", ")
            ));
        }
    }
}

impl SourceHealth {
    /// The warning of a missing directory, or of one whose files yield no turns at all.
    fn warn_when_empty(&mut self) {
        if !self.exists {
            self.warning = Some(format!(
                "{} transcripts directory `{}` does not exist (yet); it is watched for",
                self.format,
                self.path.display()
            ));
        } else if self.files > 0 && self.turns == 0 && self.warning.is_none() {
            self.warning = Some(format!(
                "{} {} file(s) under `{}` were read but yielded no turns: the transcript format may have changed upstream; please report it",
                self.files,
                self.format,
                self.path.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::glob::Glob;

    fn claude_root(dir: &Path) -> Root {
        Root {
            adapter: crate::transcript::adapter("claude").expect("claude"),
            dir: dir.to_owned(),
            pattern: Glob::new("*"),
        }
    }

    fn write_session(dir: &Path, project: &str, id: &str) -> PathBuf {
        let p = dir.join(project).join(format!("{id}.jsonl"));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        let line = format!(
            r#"{{"type":"user","sessionId":"{id}","uuid":"u1","timestamp":"2025-01-01T00:00:00Z","message":{{"role":"user","content":"hello there"}}}}"#
        );
        std::fs::write(&p, format!("{line}\n")).expect("write");
        p
    }

    #[test]
    fn changed_paths_become_files_to_read_again_or_to_add() {
        let tmp = tempfile::tempdir().expect("tmp");
        let a = write_session(tmp.path(), "-p", "a");
        let mut files = Files::new(vec![claude_root(tmp.path())]);
        let found = files.discover();
        assert_eq!(found.len(), 1);
        // unknown: a file to add
        let changes = files.expand(std::slice::from_ref(&a));
        assert!(changes.targets.is_empty());
        assert_eq!(changes.fresh.len(), 1);
        for src in found {
            files.insert(src.path.clone(), FileEntry::new(src));
        }
        // known: a file to read again; its directory stands for it too
        let b = write_session(tmp.path(), "-p", "b");
        let changes = files.expand(&[tmp.path().join("-p")]);
        assert_eq!(changes.targets.iter().collect::<Vec<_>>(), [&a]);
        // (what a directory holds is offered again; an update skips what it already follows)
        assert!(changes.fresh.iter().any(|f| f.path == b));
        // a rescan finds the new file, and the known one gone once deleted
        std::fs::remove_file(&a).expect("rm");
        let changes = files.scan();
        assert_eq!(changes.targets.iter().collect::<Vec<_>>(), [&a]);
        assert_eq!(changes.fresh.len(), 1);
        let changes = files.scan_dirs(&[tmp.path().join("-q")]);
        assert!(changes.targets.is_empty() && changes.fresh.is_empty());
        files.note_changed([a.clone()]);
        assert!(files.changed().contains(&a));
        files.clear_changed();
        assert!(files.changed().is_empty());
    }

    #[test]
    fn a_missing_directory_and_a_file_without_turns_are_named() {
        let tmp = tempfile::tempdir().expect("tmp");
        let gone = tmp.path().join("nowhere");
        let files = Files::new(vec![claude_root(&gone)]);
        let health = files.source_health(&Catalog::default());
        assert!(!health[0].exists);
        assert!(
            health[0]
                .warning
                .as_deref()
                .is_some_and(|w| w.contains("does not exist"))
        );
        let p = tmp.path().join("-p").join("empty.jsonl");
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, "{\"type\":\"mystery\"}\n").expect("write");
        let mut files = Files::new(vec![claude_root(tmp.path())]);
        for src in files.discover() {
            let mut entry = FileEntry::new(src);
            let _ = entry.state.read();
            files.insert(entry.src.path.clone(), entry);
        }
        let health = files.source_health(&Catalog::default());
        assert_eq!((health[0].files, health[0].files_without_turns), (1, 1));
        assert!(
            health[0]
                .warning
                .as_deref()
                .is_some_and(|w| w.contains("no turns"))
        );
    }
}
