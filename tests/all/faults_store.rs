//! Faults, for the durable store: damage to the store's database file (bit flips,
//! truncations, byte swaps at any offset, after a clean close, so no integrity check is due)
//! never panics and always ends with answers identical to a clean build's, while the
//! transcripts exist.

use std::fs;
use std::path::Path;

use crate::common::cache::Corpus;
use crate::common::run_cli;
use crate::faults_cache::{any_damage, damage};
use proptest::prop_assert_eq;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// `list` through the binary with `--data-dir` (no cache, so the store is read every time):
/// exit code and stdout.
fn list(corpus: &Corpus, data_dir: &Path) -> (Option<i32>, String) {
    let out = run_cli(
        &[
            "list",
            "--limit",
            "1000",
            "--json",
            "--projects-dir",
            corpus.path(),
            "--no-cache",
            "--data-dir",
            data_dir.to_str().expect("utf-8 path"),
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

/// Every file of the data directory with its bytes.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .expect("data dir")
        .flatten()
        .map(|e| (e.path(), fs::read(e.path()).expect("read")))
        .collect();
    v.sort();
    v
}

#[test]
fn fault_damaged_store_never_panics_and_answers_like_a_clean_build() {
    let corpus = Corpus::new();
    let data = tempfile::tempdir().expect("data dir");
    let (code, clean) = list(&corpus, data.path());
    assert_eq!(code, Some(0));
    let db = data.path().join("store.sqlite3");
    assert!(db.exists(), "the store was written");
    let good = snapshot(data.path());
    let db_bytes = fs::read(&db).expect("store bytes");
    let config = Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&any_damage(), |d| {
            // the clean store back, then one damage to its database file
            for e in fs::read_dir(data.path()).expect("data dir").flatten() {
                if e.path().is_file() {
                    let _ = fs::remove_file(e.path());
                } else {
                    let _ = fs::remove_dir_all(e.path());
                }
            }
            for (p, b) in &good {
                fs::write(p, b).expect("restore");
            }
            fs::write(&db, damage(&db_bytes, &d)).expect("write damaged store");
            let (code, out) = list(&corpus, data.path());
            prop_assert_eq!(code, Some(0), "{:?}", d);
            prop_assert_eq!(&out, &clean, "{:?}", d);
            // and again, from whatever the first run left
            prop_assert_eq!(
                list(&corpus, data.path()),
                (Some(0), clean.clone()),
                "{:?}",
                d
            );
            Ok(())
        })
        .unwrap();
}
