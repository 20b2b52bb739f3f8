//! Faults, points 2 and 3: a persisted cache file is verified before any byte of it is
//! trusted. Random bit flips, truncations and byte swaps at any offset never panic the
//! decoder and always end with answers identical to a clean build; the bad file is moved
//! aside and rebuilt. A FIFO at the cache path is refused without being opened.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::cache::{Corpus, cache, cache_args, serve};
use crate::common::run_cli;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// `list` through the binary with `--cache-dir`: exit code and stdout.
fn list(corpus: &Corpus, cache_dir: &Path) -> (Option<i32>, String) {
    let dir = cache_dir.to_str().expect("utf-8 path");
    let out = run_cli(
        &[
            "list",
            "--limit",
            "1000",
            "--projects-dir",
            corpus.path(),
            "--cache-dir",
            dir,
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "panic:\n{stderr}");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The one cache file in `dir` (moved-aside copies excluded).
fn cache_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = fs::read_dir(dir)
        .expect("read cache dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    assert_eq!(files.len(), 1, "one cache file: {files:?}");
    files[0].clone()
}

fn moved_aside(dir: &Path) -> usize {
    fs::read_dir(dir)
        .expect("read cache dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .count()
}

#[derive(Debug, Clone)]
pub(crate) enum Damage {
    Flip(usize, u8),
    Truncate(usize),
    Swap(usize, usize),
}

pub(crate) fn damage(good: &[u8], d: &Damage) -> Vec<u8> {
    let mut v = good.to_vec();
    let n = v.len();
    match *d {
        Damage::Flip(at, bit) => v[at % n] ^= 1 << (bit % 8),
        Damage::Truncate(at) => v.truncate(at % n),
        Damage::Swap(a, b) => v.swap(a % n, b % n),
    }
    v
}

pub(crate) fn any_damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Damage::Flip(a, b)),
        1 => any::<usize>().prop_map(Damage::Truncate),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::Swap(a, b)),
    ]
}

#[test]
fn fault_damaged_cache_never_panics_and_answers_like_a_clean_build() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let (code, clean) = list(&corpus, cache_dir.path());
    assert_eq!(code, Some(0));
    let path = cache_file(cache_dir.path());
    let good = fs::read(&path).expect("read cache");
    let config = Config {
        cases: 30,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&any_damage(), |d| {
            let bad = damage(&good, &d);
            fs::write(&path, &bad).expect("write damaged cache");
            let (code, out) = list(&corpus, cache_dir.path());
            prop_assert_eq!(code, Some(0), "{:?}", d);
            prop_assert_eq!(&out, &clean, "{:?}", d);
            if bad != good {
                prop_assert!(
                    moved_aside(cache_dir.path()) >= 1,
                    "{:?}: not moved aside",
                    d
                );
            }
            prop_assert!(moved_aside(cache_dir.path()) <= 3, "too many kept");
            prop_assert_eq!(list(&corpus, cache_dir.path()), (Some(0), clean.clone()));
            Ok(())
        })
        .unwrap();
}

#[test]
fn fault_fifo_at_the_cache_path_is_refused_not_opened() {
    let corpus = Corpus::new();
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let (code, clean) = list(&corpus, cache_dir.path());
    assert_eq!(code, Some(0));
    let path = cache_file(cache_dir.path());
    fs::remove_file(&path).expect("remove cache");
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        crate::common::skip("mkfifo unavailable");
        return;
    }
    let c = serve(&corpus, &cache_args(cache_dir.path()));
    let report = cache(&c);
    assert_eq!(report["start"], "rejected", "{report}");
    let because = report["rejected_because"].as_str().unwrap_or_default();
    assert!(because.contains("not a regular file"), "{report}");
    drop(c);
    assert_eq!(list(&corpus, cache_dir.path()), (Some(0), clean));
    assert!(fs::metadata(&path).expect("cache").is_file());
}
