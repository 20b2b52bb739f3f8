//! "This project": the directory the server was started for, the other worktrees of its git
//! repository (found by reading `.git` files and directories, never by running git), which
//! conversations belong to it, and the ranking prior its turns get in searches of everything.
use super::catalog::Catalog;
use rustc_hash::FxHashMap;
use std::path::{Component, Path, PathBuf};

/// Multiplier of a this-project turn's BM25 score when searching every project (the prior);
/// measured with `scripts/bench-retrieval --project-prior`.
pub(crate) const PROJECT_PRIOR: f32 = 1.25;

/// Which conversations a query covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Scope {
    /// Only conversations of this project.
    Project,
    /// Every conversation.
    #[default]
    All,
}

/// The project the server works for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Project {
    /// The project directory as given (absolute), or None when unknown.
    pub root: Option<PathBuf>,
    /// Directories whose conversations belong to the project: the root and, when it is inside
    /// a git worktree, the same place in every other worktree of the repository (each as given
    /// and canonical, deduplicated, sorted).
    pub dirs: Vec<PathBuf>,
    /// Whether searches of every project rank this project's turns higher.
    pub prior: bool,
}

impl Project {
    /// The project rooted at `root` (made absolute against the current directory).
    pub(crate) fn discover(root: &Path, prior: bool) -> Self {
        let root = absolute(root);
        let canonical = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        let mut dirs = vec![root.clone(), canonical.clone()];
        if let Some((top, rel)) = enclosing_worktree(&canonical) {
            for wt in worktrees(&top) {
                let place = wt.join(&rel);
                if let Ok(c) = std::fs::canonicalize(&place) {
                    dirs.push(c);
                }
                dirs.push(place);
            }
        }
        dirs.sort();
        dirs.dedup();
        Self {
            root: Some(root),
            dirs,
            prior,
        }
    }

    /// Whether a working directory is a project directory or inside one.
    pub(crate) fn holds(&self, cwd: &str) -> bool {
        if cwd.is_empty() {
            return false;
        }
        let cwd = lexical(Path::new(cwd));
        self.dirs.iter().any(|d| cwd.starts_with(d))
    }

    /// Per internal conversation id of `catalog`, whether it belongs to the project (each
    /// distinct working directory is normalised once).
    pub(crate) fn members(&self, catalog: &Catalog) -> Vec<bool> {
        let len = catalog
            .iter()
            .map(|c| c.conv as usize + 1)
            .max()
            .unwrap_or(0);
        let mut out = vec![false; len];
        if self.dirs.is_empty() {
            return out;
        }
        let mut held: FxHashMap<&str, bool> = FxHashMap::default();
        for c in catalog.iter() {
            out[c.conv as usize] = c
                .meta
                .all_cwds()
                .any(|cwd| *held.entry(cwd).or_insert_with(|| self.holds(cwd)));
        }
        out
    }
}

fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    lexical(&joined)
}

/// `.` and `..` resolved without touching the file system.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The top of the git worktree holding `dir` and `dir`'s path below it.
fn enclosing_worktree(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut at = dir;
    loop {
        if at.join(".git").exists() {
            let rel = dir.strip_prefix(at).ok()?.to_path_buf();
            return Some((at.to_path_buf(), rel));
        }
        at = at.parent()?;
    }
}

/// The repository's common git directory, from a worktree's `.git` (a directory in the main
/// worktree, a `gitdir: ...` file in a linked one whose `commondir` leads back).
fn common_dir(top: &Path) -> Option<PathBuf> {
    let dot = top.join(".git");
    if dot.is_dir() {
        return Some(dot);
    }
    let gitdir = read_pointer(&std::fs::read_to_string(&dot).ok()?, "gitdir:", top)?;
    match std::fs::read_to_string(gitdir.join("commondir")) {
        Ok(text) => Some(lexical(&gitdir.join(text.trim()))),
        // `<common>/worktrees/<name>`
        Err(_) => gitdir.parent()?.parent().map(Path::to_path_buf),
    }
}

/// The path after `key` on the first line of a pointer file, resolved against `base`.
fn read_pointer(text: &str, key: &str, base: &Path) -> Option<PathBuf> {
    let value = text.lines().next()?.strip_prefix(key)?.trim();
    (!value.is_empty()).then(|| lexical(&base.join(value)))
}

/// Every worktree of the repository whose worktree `top` is (itself included).
fn worktrees(top: &Path) -> Vec<PathBuf> {
    let mut out = vec![top.to_path_buf()];
    let Some(common) = common_dir(top) else {
        return out;
    };
    // a non-bare repository's main worktree holds its common directory as `.git`
    if common.file_name().is_some_and(|n| n == ".git") {
        if let Some(main) = common.parent() {
            out.push(main.to_path_buf());
        }
    }
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        for e in entries.flatten() {
            let admin = e.path();
            let Ok(text) = std::fs::read_to_string(admin.join("gitdir")) else {
                continue;
            };
            // names the linked worktree's `.git` file
            if let Some(dot_git) = read_pointer(&format!("x:{}", text.trim()), "x:", &admin) {
                if let Some(wt) = dot_git.parent() {
                    out.push(wt.to_path_buf());
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_root_and_below_only() {
        let p = Project {
            root: Some(PathBuf::from("/w/app")),
            dirs: vec![PathBuf::from("/w/app"), PathBuf::from("/w/app-wt")],
            prior: true,
        };
        assert!(p.holds("/w/app"));
        assert!(p.holds("/w/app/src/"));
        assert!(p.holds("/w/app-wt/x"));
        assert!(!p.holds("/w/apple"));
        assert!(!p.holds("/w"));
        assert!(!p.holds(""));
        assert!(p.holds("/w/other/../app/src"));
    }

    #[test]
    fn finds_linked_worktrees_from_either_side() {
        let tmp = std::env::temp_dir().join(format!("cs-project-{}", std::process::id()));
        let main = tmp.join("main");
        let linked = tmp.join("linked");
        std::fs::create_dir_all(main.join(".git/worktrees/linked")).unwrap();
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::write(
            main.join(".git/worktrees/linked/gitdir"),
            format!("{}\n", linked.join(".git").display()),
        )
        .unwrap();
        std::fs::write(main.join(".git/worktrees/linked/commondir"), "../..\n").unwrap();
        std::fs::write(
            linked.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/linked").display()),
        )
        .unwrap();
        let main_c = std::fs::canonicalize(&main).unwrap();
        let linked_c = std::fs::canonicalize(&linked).unwrap();
        for start in [&main, &linked] {
            let p = Project::discover(start, true);
            assert!(p.dirs.contains(&main_c), "{:?}", p.dirs);
            assert!(p.dirs.contains(&linked_c), "{:?}", p.dirs);
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
