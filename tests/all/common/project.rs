//! A project on disk for scope tests: a git repository's main worktree `repo/` and a linked
//! worktree `repo-wt/` (written as git writes them: `.git/worktrees/<name>/gitdir` and a
//! `gitdir:` file; git itself is never run), a sibling `repo-other/` and a parent `ws/`, with
//! one session per relation to the project, each mentioning `zebracorn`.
use super::fixture::ProjectsDir;
use super::search::{edit, tool_turn};
use std::fs;
use std::path::{Path, PathBuf};

/// Session ids by relation to the project.
pub const IN_ROOT: &str = "11111111-0000-4000-8000-000000000001";
pub const NESTED: &str = "22222222-0000-4000-8000-000000000002";
pub const WORKTREE: &str = "33333333-0000-4000-8000-000000000003";
pub const MOVED_IN: &str = "44444444-0000-4000-8000-000000000004";
pub const ELSEWHERE: &str = "55555555-0000-4000-8000-000000000005";
pub const SIBLING: &str = "66666666-0000-4000-8000-000000000006";

/// The sessions that belong to the project.
pub const MINE: [&str; 4] = [IN_ROOT, NESTED, WORKTREE, MOVED_IN];
/// The sessions that do not.
pub const OTHERS: [&str; 2] = [ELSEWHERE, SIBLING];

pub struct ProjectTree {
    pub ws: tempfile::TempDir,
    pub projects: ProjectsDir,
}

impl ProjectTree {
    /// The main worktree (the project root).
    pub fn root(&self) -> PathBuf {
        self.dir("repo")
    }

    pub fn dir(&self, rel: &str) -> PathBuf {
        fs::canonicalize(self.ws.path())
            .expect("canonical workspace")
            .join(rel)
    }

    pub fn root_str(&self) -> String {
        self.root().display().to_string()
    }

    pub fn projects_str(&self) -> &str {
        self.projects.path_str()
    }
}

fn git_worktrees(ws: &Path) {
    let admin = ws.join("repo/.git/worktrees/repo-wt");
    fs::create_dir_all(&admin).unwrap();
    fs::create_dir_all(ws.join("repo/src/deep")).unwrap();
    fs::create_dir_all(ws.join("repo-wt")).unwrap();
    fs::create_dir_all(ws.join("repo-other")).unwrap();
    fs::write(
        admin.join("gitdir"),
        format!("{}\n", ws.join("repo-wt/.git").display()),
    )
    .unwrap();
    fs::write(admin.join("commondir"), "../..\n").unwrap();
    fs::write(
        ws.join("repo-wt/.git"),
        format!("gitdir: {}\n", admin.display()),
    )
    .unwrap();
}

/// Builds the tree: one session per relation, all mentioning `zebracorn`; the project's
/// sessions touch `src/lib.rs`. Times are one hour apart, IN_ROOT the newest.
pub fn project_tree() -> ProjectTree {
    let ws = tempfile::Builder::new().prefix("cs-ws-").tempdir().unwrap();
    let base = fs::canonicalize(ws.path()).unwrap();
    git_worktrees(&base);
    let projects = ProjectsDir::new();
    let p = |d: &str| base.join(d).display().to_string();
    let sessions: [(&str, &str, Option<&str>, &str); 6] = [
        (ELSEWHERE, "elsewhere", None, "2026-05-01T08:00:00.000Z"),
        (SIBLING, "repo-other", None, "2026-05-01T09:00:00.000Z"),
        (MOVED_IN, "", Some("repo"), "2026-05-01T10:00:00.000Z"),
        (WORKTREE, "repo-wt", None, "2026-05-01T11:00:00.000Z"),
        (NESTED, "repo/src/deep", None, "2026-05-01T12:00:00.000Z"),
        (IN_ROOT, "repo", None, "2026-05-01T13:00:00.000Z"),
    ];
    for (id, cwd, then, time) in sessions {
        let mut w = projects.project(&format!("-p-{}", &id[..8])).session(id);
        w.set_time(time);
        w.set_cwd(Some(&p(cwd)));
        w.exchange(
            &format!("zebracorn question from {cwd}"),
            "an answer about zebracorn",
        );
        if let Some(then) = then {
            w.set_cwd(Some(&p(then)));
        }
        if MINE.contains(&id) {
            let file = format!("{}/src/lib.rs", p("repo"));
            tool_turn(
                &mut w,
                "edit the library",
                "Editing it now.",
                &[edit(&file)],
            );
            w.exchange(
                &format!("last prompt of {}", &id[..8]),
                "The last reply starts here and goes on.",
            );
        }
    }
    ProjectTree { ws, projects }
}
