//! Faults, point 6: every spelling of one projects directory (relative, absolute, through a
//! symlink) is one root, so one cache used with each in turn never duplicates a session.

use std::process::Stdio;

use crate::common::IsolatedEnv;
use crate::common::fixture::ProjectsDir;

const IDS: [&str; 3] = [
    "a0070000-0000-4000-8000-000000000001",
    "a0070000-0000-4000-8000-000000000002",
    "a0070000-0000-4000-8000-000000000003",
];

#[test]
fn fault_spellings_of_one_projects_dir_are_one_root() {
    let dir = ProjectsDir::new();
    for (i, id) in IDS.iter().enumerate() {
        let p = dir.project(&format!("-home-u-work-spell{i}"));
        p.session(id)
            .exchange(&format!("spellword prompt {i}"), "ok");
    }
    let root = dir.path().to_owned();
    let parent = root.parent().expect("parent").to_owned();
    let name = root
        .file_name()
        .expect("name")
        .to_str()
        .expect("utf-8")
        .to_owned();
    let links = tempfile::tempdir().expect("link dir");
    let link = links.path().join("projects-link");
    std::os::unix::fs::symlink(&root, &link).expect("symlink");
    let cache = tempfile::tempdir().expect("cache dir");
    let cache_dir = cache.path().to_str().expect("utf-8").to_owned();
    let iso = IsolatedEnv::new();
    let list = |spelling: &str| {
        let args = [
            "list",
            "--limit",
            "100",
            "--projects-dir",
            spelling,
            "--cache-dir",
            &cache_dir,
        ];
        let out = iso
            .command(&args, &[])
            .current_dir(&parent)
            .stdin(Stdio::null())
            .output()
            .expect("run list");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    };
    let first = list(root.to_str().expect("utf-8"));
    for id in IDS {
        assert_eq!(first.matches(id).count(), 1, "{id} once:\n{first}");
    }
    for spelling in [
        name.as_str(),
        link.to_str().expect("utf-8"),
        &format!("./{name}/"),
    ] {
        let again = list(spelling);
        assert_eq!(again, first, "spelling {spelling:?}");
    }
}
