//! Tests of the SQLite reader against databases written by the real SQLite
//! (`fixtures/opencode/sqlite`, made by `scripts/gen_opencode_db.py`), and against copies of
//! them that were truncated or corrupted on purpose.
use super::*;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/opencode/sqlite")
        .join(name)
}

/// Copies a fixture (and its `-wal` when `wal`) into a fresh temp dir.
fn copy(name: &str, wal: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let dst = dir.path().join(name);
    std::fs::copy(fixture(name), &dst).expect("copy db");
    if wal {
        std::fs::copy(side_path(&fixture(name), "-wal"), side_path(&dst, "-wal")).expect("wal");
    }
    (dir, dst)
}

fn rows(db: &Database, table: &str, cols: &[&str]) -> Vec<(i64, Vec<Value<'static>>)> {
    let t = db.table(table).expect("schema").expect("table exists");
    let idx: Vec<usize> = cols.iter().map(|c| t.column(c).expect("column")).collect();
    let mut out = Vec::new();
    db.scan(&t, |r| {
        let mut vals = Vec::new();
        for &i in &idx {
            vals.push(match r.value(i)? {
                Value::Text(s) => Value::Text(s.into_owned().into()),
                Value::Blob(b) => Value::Blob(Box::leak(b.to_vec().into_boxed_slice())),
                Value::Null => Value::Null,
                Value::Integer(n) => Value::Integer(n),
                Value::Real(f) => Value::Real(f),
            });
        }
        out.push((r.rowid, vals));
        Ok(())
    })
    .expect("scan");
    out
}

fn text(s: &str) -> Value<'static> {
    Value::Text(s.to_owned().into())
}

#[test]
fn decodes_every_serial_type_and_the_rowid_alias() {
    let db = Database::open(&fixture("types.db")).expect("open");
    let got = rows(&db, "types", &["id", "v", "note"]);
    let expect: Vec<Value> = vec![
        Value::Null,
        Value::Integer(0),
        Value::Integer(1),
        Value::Integer(127),
        Value::Integer(-128),
        Value::Integer(32767),
        Value::Integer(-32768),
        Value::Integer(8_388_607),
        Value::Integer(2_147_483_647),
        Value::Integer(-2_147_483_648),
        Value::Integer(140_737_488_355_327),
        Value::Integer(i64::MIN),
        Value::Integer(i64::MAX),
        Value::Real(1.5),
        Value::Real(-0.25),
        text("text ünïcødé ✓"),
        Value::Blob(&[0x00, 0xff, 0x10]),
        text(""),
        Value::Blob(&[]),
    ];
    assert_eq!(got.len(), expect.len());
    for (i, ((rowid, vals), want)) in got.iter().zip(&expect).enumerate() {
        let n = i as i64 + 1;
        assert_eq!(*rowid, n);
        assert_eq!(
            vals[0],
            Value::Integer(n),
            "INTEGER PRIMARY KEY reads as the rowid"
        );
        assert_eq!(&vals[1], want, "row {n}");
        assert_eq!(vals[2], text(&format!("n{n}")));
    }
}

#[test]
fn schema_details() {
    let db = Database::open(&fixture("types.db")).expect("open");
    let odd = rows(&db, "ODD TABLE", &["first col", "second", "third"]);
    assert_eq!(
        odd,
        vec![(1, vec![text("a"), Value::Integer(1), text("x")])]
    );
    // a record written before ALTER TABLE ADD COLUMN has fewer values
    let grown = rows(&db, "grown", &["a", "c"]);
    assert_eq!(
        grown,
        vec![
            (1, vec![text("old"), Value::Null]),
            (2, vec![text("new"), text("c3")])
        ]
    );
    // virtual generated columns are not stored; stored ones are
    let gen_rows = rows(&db, "gen", &["a", "b", "c", "d", "e"]);
    assert_eq!(
        gen_rows[0].1,
        vec![
            Value::Integer(2),
            Value::Integer(3),
            Value::Null,
            Value::Integer(6),
            text("five")
        ]
    );
    // PRIMARY KEY(x) as a table constraint on an INTEGER column aliases the rowid
    assert_eq!(
        rows(&db, "pk_table", &["x", "y"])[0].1,
        vec![Value::Integer(42), text("answer")]
    );
    let wr = db.table("wr").expect("schema").expect("table");
    assert!(wr.without_rowid);
    assert!(db.scan(&wr, |_| Ok(())).is_err());
    let names: Vec<String> = db
        .tables()
        .expect("tables")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        !names.iter().any(|n| n == "types_note"),
        "indexes are not tables"
    );
    assert!(db.table("missing").expect("schema").is_none());
}

fn blob(i: i64, n: usize) -> Vec<u8> {
    (0..n)
        .map(|j| ((i as usize * 31 + j) % 256) as u8)
        .collect()
}

#[test]
fn multi_level_tree_with_overflow_chains() {
    let db = Database::open(&fixture("big.db")).expect("open");
    assert_eq!(db.page_size(), 512);
    let t = db.table("big").expect("schema").expect("table");
    let (k, v) = (t.column("k").expect("k"), t.column("v").expect("v"));
    let mut seen = Vec::new();
    let stats = db
        .scan(&t, |r| {
            let id = r.rowid;
            let key = r.value(k)?.into_string().expect("text key");
            let Value::Blob(bytes) = r.value(v)? else {
                panic!("row {id}: blob expected");
            };
            let bytes = bytes.to_vec();
            if id < 5000 {
                assert_eq!(key, format!("key-{id:05}"));
                assert_eq!(bytes, blob(id, (id as usize * 7) % 40), "row {id}");
            } else {
                let n = bytes.len();
                assert_eq!(key, format!("long-{}", "k".repeat(n)));
                assert_eq!(bytes, blob(id, n), "overflowing row {id}");
            }
            seen.push((id, r.payload_len()));
            Ok(())
        })
        .expect("scan");
    assert!(
        stats.depth >= 3,
        "expected at least 3 levels, got {stats:?}"
    );
    let ids: Vec<i64> = seen.iter().map(|s| s.0).collect();
    let mut want: Vec<i64> = (1..=2000).filter(|i| i % 10 != 3).collect();
    want.extend([5000, 5001, 5002, 5004]);
    assert_eq!(ids, want, "every row once, in rowid order");
    assert!(
        seen.iter().any(|&(_, len)| len > 20_000),
        "a payload spans many overflow pages"
    );
}

#[test]
fn payload_length_needs_no_overflow_page() {
    let (_dir, path) = copy("big.db", false);
    let first_overflow = |p: &std::path::Path| {
        let db = Database::open(p).expect("open");
        let t = db.table("big").expect("schema").expect("table");
        let mut found = None;
        db.scan(&t, |r| {
            if r.rowid == 5001 {
                found = r.overflow_page();
            }
            Ok(())
        })
        .expect("scan");
        found.expect("row 5001 overflows")
    };
    let page = first_overflow(&path);
    let mut bytes = std::fs::read(&path).expect("read");
    let start = (page as usize - 1) * 512;
    bytes[start..start + 512].fill(0);
    std::fs::write(&path, &bytes).expect("zero the overflow page");
    let db = Database::open(&path).expect("open");
    let t = db.table("big").expect("schema").expect("table");
    let k = t.column("k").expect("k");
    let mut outcome = None;
    db.scan(&t, |r| {
        if r.rowid == 5001 {
            assert!(r.payload_len() > 20_000, "length known from the cell alone");
            outcome = Some(r.value(k).map(|_| ()));
        }
        Ok(())
    })
    .expect("scan");
    let err = outcome.expect("row seen").expect_err("broken chain");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
}

#[test]
fn utf16_databases() {
    let db = Database::open(&fixture("utf16.db")).expect("open");
    assert_eq!(
        rows(&db, "t", &["a", "b"]),
        vec![(1, vec![text("héllo wörld ✓"), Value::Integer(7)])]
    );
}

/// `w` rows as (id, v) after each state of the WAL fixture.
fn w_rows(path: &std::path::Path) -> Vec<(i64, String)> {
    let db = Database::open(path).expect("open");
    rows(&db, "w", &["v"])
        .into_iter()
        .map(|(id, v)| (id, v[0].as_str().unwrap_or_default().to_owned()))
        .collect()
}

fn state_base() -> Vec<(i64, String)> {
    (1..=40).map(|i| (i, format!("base-{i}"))).collect()
}

fn state_a() -> Vec<(i64, String)> {
    (1..=80)
        .map(|i| {
            let v = match i {
                3 => "a-3".to_owned(),
                i if i <= 40 => format!("base-{i}"),
                i => format!("a-{i}"),
            };
            (i, v)
        })
        .collect()
}

fn state_b() -> Vec<(i64, String)> {
    let mut v: Vec<(i64, String)> = state_a()
        .into_iter()
        .filter(|(i, _)| *i > 10)
        .map(|(i, v)| (i, if i == 20 { "b-20".to_owned() } else { v }))
        .collect();
    v.push((81, "b".repeat(3000)));
    v
}

#[test]
fn wal_overlay_takes_the_latest_committed_frames() {
    let (_dir, path) = copy("wal.db", true);
    assert_eq!(w_rows(&path), state_b());
    assert_eq!(Database::open(&path).expect("open").wal_commits(), 2);
    // without the WAL the file alone holds the base state
    std::fs::remove_file(side_path(&path, "-wal")).expect("rm wal");
    assert_eq!(w_rows(&path), state_base());
    assert!(!side_path(&path, "-shm").exists() && !side_path(&path, "-journal").exists());
}

/// Offsets of the frames that end each commit, and the first frame of the last commit.
fn commit_layout(wal: &std::path::Path) -> (Vec<FrameInfo>, u64) {
    let frames = wal_frames(wal).expect("frames");
    let commits: Vec<usize> = (0..frames.len())
        .filter(|&i| frames[i].commit != 0)
        .collect();
    assert_eq!(commits.len(), 2, "{frames:?}");
    let last_start = frames[commits[0] + 1].offset;
    (frames, last_start)
}

#[test]
fn torn_or_corrupt_wal_tails_fall_back_to_the_previous_commit() {
    let (_dir, path) = copy("wal.db", true);
    let wal = side_path(&path, "-wal");
    let original = std::fs::read(&wal).expect("read wal");
    let (frames, last_start) = commit_layout(&wal);
    let frame_len = frames[1].offset - frames[0].offset;
    let set = |bytes: &[u8]| std::fs::write(&wal, bytes).expect("write wal");

    // cut inside the last commit's first frame
    set(&original[..last_start as usize + 100]);
    assert_eq!(w_rows(&path), state_a(), "torn last transaction");
    // its commit frame cut in half
    set(&original[..original.len() - frame_len as usize / 2]);
    assert_eq!(w_rows(&path), state_a(), "torn commit frame");
    // one flipped byte in a page image of the last transaction: its checksum fails
    let mut flipped = original.clone();
    flipped[last_start as usize + 24 + 50] ^= 0x55;
    set(&flipped);
    assert_eq!(w_rows(&path), state_a(), "checksum failure");
    // a frame whose salt differs belongs to an older WAL generation
    let mut stale = original.clone();
    stale[last_start as usize + 8] ^= 1;
    set(&stale);
    assert_eq!(w_rows(&path), state_a(), "salt mismatch");
    // garbage appended after the last commit changes nothing
    let mut longer = original.clone();
    longer.extend(std::iter::repeat_n(0xa5u8, frame_len as usize + 7));
    set(&longer);
    assert_eq!(w_rows(&path), state_b(), "trailing garbage");
    // a WAL whose header checksum fails is ignored as a whole
    let mut bad_header = original.clone();
    bad_header[12] ^= 1;
    set(&bad_header);
    assert_eq!(w_rows(&path), state_base(), "invalid WAL header");
    set(&original[..20]);
    assert_eq!(w_rows(&path), state_base(), "WAL shorter than its header");
    set(&original);
    assert_eq!(w_rows(&path), state_b());
}

#[test]
fn snapshot_notices_writers() {
    let (_dir, path) = copy("wal.db", true);
    let wal = side_path(&path, "-wal");
    let db = Database::open(&path).expect("open");
    assert!(db.is_current().expect("check"));
    // frames appended after the snapshot do not invalidate it
    let mut bytes = std::fs::read(&wal).expect("read");
    bytes.extend([0u8; 100]);
    std::fs::write(&wal, &bytes).expect("append");
    assert!(db.is_current().expect("check"));
    // a restarted WAL (new salts) does
    bytes[16] ^= 1;
    std::fs::write(&wal, &bytes).expect("restart");
    assert!(!db.is_current().expect("check"));
    // so does a write to the main file (checkpoint)
    let db = Database::open(&path).expect("open");
    let mut main = std::fs::read(&path).expect("read");
    main.extend([0u8; 1024]);
    std::fs::write(&path, &main).expect("grow");
    assert!(!db.is_current().expect("check"));
}

#[test]
fn damaged_files_are_errors_not_panics() {
    let (_dir, path) = copy("big.db", false);
    let original = std::fs::read(&path).expect("read");
    let scan_all = |p: &std::path::Path| -> std::io::Result<u64> {
        let db = Database::open(p)?;
        let mut n = 0;
        for t in db.tables()? {
            db.scan(&t, |r| {
                for c in 0..t.columns.len() {
                    r.value(c)?;
                }
                n += 1;
                Ok(())
            })?;
        }
        Ok(n)
    };
    assert_eq!(scan_all(&path).expect("intact"), 1805);
    // truncated: pages the header promises are missing
    std::fs::write(&path, &original[..original.len() / 2]).expect("truncate");
    let err = scan_all(&path).expect_err("truncated file");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
    std::fs::write(&path, &original[..60]).expect("truncate");
    assert!(scan_all(&path).is_err(), "shorter than the header");
    std::fs::write(&path, b"definitely not a database, just some text!").expect("junk");
    assert!(scan_all(&path).is_err(), "bad magic");
    // an empty file is an empty database
    std::fs::write(&path, b"").expect("empty");
    assert_eq!(scan_all(&path).expect("empty database"), 0);
    // every single corrupted byte in every page: never a panic
    for at in (100..original.len()).step_by(151) {
        let mut bad = original.clone();
        bad[at] ^= 0xff;
        std::fs::write(&path, &bad).expect("corrupt");
        let _ = scan_all(&path);
    }
    assert!(!side_path(&path, "-journal").exists() && !side_path(&path, "-wal").exists());
}

#[test]
fn an_active_rollback_journal_means_busy() {
    let (_dir, path) = copy("types.db", false);
    let journal = side_path(&path, "-journal");
    let mut hot = vec![0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];
    hot.resize(512, 0);
    std::fs::write(&journal, &hot).expect("journal");
    let err = Database::open(&path).err().expect("busy");
    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
    // zeroed at commit (journal_mode=PERSIST) or truncated: not a transaction
    std::fs::write(&journal, vec![0u8; 512]).expect("zeroed");
    let db = Database::open(&path).expect("open");
    assert!(db.is_current().expect("check"));
    std::fs::write(&journal, &hot).expect("journal again");
    assert!(
        !db.is_current().expect("check"),
        "a write started after the snapshot"
    );
}
