//! The OpenCode database (`opencode.db`, tables `session`, `message`, `part`) as one unit: each
//! read takes a snapshot with the pure-Rust SQLite reader, fingerprints every session from its
//! rows' keys and sizes (no overflow page is touched), and decodes the JSON of changed sessions
//! only.
//!
//! Consistency: a read whose snapshot was invalidated by a writer (checkpoint, WAL restart) is
//! repeated a few times; if it never settles, or the file is damaged after having been read
//! before, the read fails and the caller keeps the previous state (the unit is read again on
//! its next change). A file that was never readable yields an empty unit with one skipped
//! record, so `index_status` shows it.
use super::convert::{self, Message, SessionInfo};
use crate::transcript::sqlite::{Database, Row, Table, side_path};
use crate::transcript::{ConvState, SourceFile, UnitRead, UnitReader};
use rustc_hash::{FxHashMap, FxHashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64_with_seed};

/// Attempts per read when writers keep invalidating the snapshot.
const ATTEMPTS: u32 = 4;

/// Incremental reader of one database.
#[derive(Default)]
pub(crate) struct DbReader {
    /// Per session id: fingerprint of its rows at the last read.
    fingerprints: FxHashMap<String, u64>,
    /// Per session id: content hash of the conversation last reported.
    reported: FxHashMap<String, u64>,
    /// Per session id: rows that could not be decoded.
    skipped: FxHashMap<String, u64>,
    /// Whether a read ever succeeded.
    read_once: bool,
}

/// The three tables a conversation is made of.
struct Cols {
    session: Table,
    message: Table,
    part: Table,
}

/// Combines a fingerprint with one more word.
fn mix(h: u64, v: u64) -> u64 {
    xxh3_64_with_seed(&v.to_le_bytes(), h)
}

fn key_hash(parts: &[&[u8]], n: u64) -> u64 {
    let mut h = Xxh3Default::new();
    for p in parts {
        h.update(p);
        h.update(&[0xff]);
    }
    h.update(&n.to_le_bytes());
    h.digest()
}

/// What one pass over the message and part tables gathers.
#[derive(Default)]
struct Gathered {
    /// Order-independent sum of row fingerprints per session.
    sums: FxHashMap<String, u64>,
    /// Decoded messages of the wanted sessions, by message id.
    messages: FxHashMap<String, (String, Message)>,
    /// Decoded parts of the wanted sessions: (message id, part id, part).
    parts: Vec<(String, String, convert::Part)>,
    skipped: FxHashMap<String, u64>,
}

impl DbReader {
    fn read_sessions(db: &Database, t: &Table) -> io::Result<Vec<(SessionInfo, u64)>> {
        let c = |n: &str| t.column(n);
        let (id, parent, title, dir) = (c("id"), c("parent_id"), c("title"), c("directory"));
        let (agent, created, updated) = (c("agent"), c("time_created"), c("time_updated"));
        let mut out = Vec::new();
        db.scan(t, |r| {
            let Some(sid) = r.text(id)? else {
                return Ok(());
            };
            let info = SessionInfo {
                id: sid,
                parent_id: r.text(parent)?.filter(|p| !p.is_empty()),
                title: r.text(title)?,
                directory: r.text(dir)?,
                agent: r.text(agent)?.filter(|a| !a.is_empty()),
                time_created: r.int(created)?,
                time_updated: r.int(updated)?,
            };
            // what we read, plus size and update time for the rest (no overflow page read)
            let fp = key_hash(
                &[
                    info.id.as_bytes(),
                    info.parent_id.as_deref().unwrap_or_default().as_bytes(),
                    info.title.as_deref().unwrap_or_default().as_bytes(),
                    info.directory.as_deref().unwrap_or_default().as_bytes(),
                    info.agent.as_deref().unwrap_or_default().as_bytes(),
                ],
                r.payload_len() ^ info.time_updated.unwrap_or(0) as u64,
            );
            out.push((info, fp));
            Ok(())
        })?;
        Ok(out)
    }

    /// One pass over `message` and `part`: fingerprints of every session, and the decoded
    /// rows of the sessions in `want` (all when `None`).
    fn gather(db: &Database, t: &Cols, want: Option<&FxHashSet<String>>) -> io::Result<Gathered> {
        let mut g = Gathered::default();
        let wanted = |s: &str| want.is_none_or(|w| w.contains(s));
        let m = &t.message;
        let (mid, msid, mcreated, mupdated, mdata) = (
            m.column("id"),
            m.column("session_id"),
            m.column("time_created"),
            m.column("time_updated"),
            m.column("data"),
        );
        let mut session_of: FxHashMap<String, String> = FxHashMap::default();
        db.scan(m, |r: &mut Row| {
            let (Some(id), Some(sid)) = (r.text(mid)?, r.text(msid)?) else {
                return Ok(());
            };
            let created = r.int(mcreated)?;
            let fp = key_hash(
                &[id.as_bytes()],
                r.payload_len() ^ r.int(mupdated)?.unwrap_or(0) as u64,
            );
            let sum = g.sums.entry(sid.clone()).or_default();
            *sum = sum.wrapping_add(fp);
            if t.part.column("session_id").is_none() {
                session_of.insert(id.clone(), sid.clone());
            }
            if !wanted(&sid) {
                return Ok(());
            }
            match r.text(mdata)?.map(|d| convert::parse_message(&d)) {
                Some(Ok(info)) => {
                    let msg = Message {
                        id: id.clone(),
                        created: created.or(info.created).unwrap_or(0),
                        info,
                        parts: Vec::new(),
                    };
                    g.messages.insert(id, (sid, msg));
                }
                _ => *g.skipped.entry(sid).or_default() += 1,
            }
            Ok(())
        })?;
        let p = &t.part;
        let (pid, pmid, psid, pupdated, pdata) = (
            p.column("id"),
            p.column("message_id"),
            p.column("session_id"),
            p.column("time_updated"),
            p.column("data"),
        );
        db.scan(p, |r: &mut Row| {
            let (Some(id), Some(msg)) = (r.text(pid)?, r.text(pmid)?) else {
                return Ok(());
            };
            let sid = match r.text(psid)? {
                Some(s) => s,
                None => match session_of.get(&msg) {
                    Some(s) => s.clone(),
                    None => return Ok(()),
                },
            };
            let fp = key_hash(
                &[id.as_bytes(), msg.as_bytes()],
                r.payload_len() ^ r.int(pupdated)?.unwrap_or(0) as u64,
            );
            let sum = g.sums.entry(sid.clone()).or_default();
            *sum = sum.wrapping_add(fp);
            if !wanted(&sid) {
                return Ok(());
            }
            match r.text(pdata)?.map(|d| convert::parse_part(&d)) {
                Some(Ok(part)) => g.parts.push((msg, id, part)),
                _ => *g.skipped.entry(sid).or_default() += 1,
            }
            Ok(())
        })?;
        Ok(g)
    }

    /// The three tables, or `None` when the database has no OpenCode schema (yet).
    fn tables(db: &Database) -> io::Result<Option<Cols>> {
        let (session, message, part) = (
            db.table("session")?,
            db.table("message")?,
            db.table("part")?,
        );
        Ok(match (session, message, part) {
            (Some(session), Some(message), Some(part)) => Some(Cols {
                session,
                message,
                part,
            }),
            _ => None,
        })
    }

    /// One attempt on one snapshot. `Ok(None)`: the snapshot went stale, try again.
    fn attempt(&mut self, path: &Path) -> io::Result<Option<UnitRead>> {
        let db = Database::open(path)?;
        let Some(cols) = Self::tables(&db)? else {
            if !db.is_current()? {
                return Ok(None);
            }
            self.fingerprints.clear();
            self.reported.clear();
            self.skipped.clear();
            return Ok(Some(UnitRead::default()));
        };
        let sessions = Self::read_sessions(&db, &cols.session)?;
        // the first read decodes everything at once; later ones fingerprint first
        let first = self.fingerprints.is_empty();
        let nothing = FxHashSet::default();
        let mut g = Self::gather(&db, &cols, (!first).then_some(&nothing))?;
        let changed: FxHashSet<String> = sessions
            .iter()
            .filter(|(info, row)| {
                self.fingerprints.get(&info.id) != Some(&g.fingerprint(info, *row))
            })
            .map(|(info, _)| info.id.clone())
            .collect();
        if !first && !changed.is_empty() {
            let sums = std::mem::take(&mut g.sums);
            g = Self::gather(&db, &cols, Some(&changed))?;
            g.sums = sums;
        }
        if !db.is_current()? {
            return Ok(None);
        }
        let mut read = UnitRead::default();
        let mut fingerprints = FxHashMap::default();
        for (info, row) in &sessions {
            fingerprints.insert(info.id.clone(), g.fingerprint(info, *row));
            read.present.push(convert::conversation_id(&info.id));
        }
        let skipped = std::mem::take(&mut g.skipped);
        let mut by_session = g.into_sessions();
        for (info, _) in sessions.iter().filter(|(i, _)| changed.contains(&i.id)) {
            self.skipped
                .insert(info.id.clone(), skipped.get(&info.id).copied().unwrap_or(0));
            let state = convert::build(info, by_session.remove(&info.id).unwrap_or_default());
            let hash = convert::content_hash(&state);
            if self.reported.insert(info.id.clone(), hash) != Some(hash) {
                read.changed.push(state);
            }
        }
        self.reported.retain(|id, _| fingerprints.contains_key(id));
        self.skipped.retain(|id, _| fingerprints.contains_key(id));
        self.fingerprints = fingerprints;
        read.skipped = self.skipped.values().sum();
        Ok(Some(read))
    }

    /// One session only, on one snapshot: rows of other sessions are not decoded.
    fn attempt_one(path: &Path, sid: &str) -> io::Result<Option<Option<ConvState>>> {
        let db = Database::open(path)?;
        let Some(cols) = Self::tables(&db)? else {
            return Ok(db.is_current()?.then_some(None));
        };
        let info = Self::read_sessions(&db, &cols.session)?
            .into_iter()
            .find(|(i, _)| i.id == sid);
        let want: FxHashSet<String> = std::iter::once(sid.to_owned()).collect();
        let g = Self::gather(&db, &cols, Some(&want))?;
        if !db.is_current()? {
            return Ok(None);
        }
        let Some((info, _)) = info else {
            return Ok(Some(None));
        };
        let messages = g.into_sessions().remove(sid).unwrap_or_default();
        Ok(Some(Some(convert::build(&info, messages))))
    }
}

impl Gathered {
    fn fingerprint(&self, info: &SessionInfo, row: u64) -> u64 {
        mix(row, self.sums.get(&info.id).copied().unwrap_or(0))
    }

    /// The decoded messages, parts attached, grouped by session.
    fn into_sessions(self) -> FxHashMap<String, Vec<Message>> {
        let mut messages = self.messages;
        for (msg, id, part) in self.parts {
            if let Some((_, m)) = messages.get_mut(&msg) {
                m.parts.push((id, part));
            }
        }
        let mut by_session: FxHashMap<String, Vec<Message>> = FxHashMap::default();
        for (_, (sid, m)) in messages {
            by_session.entry(sid).or_default().push(m);
        }
        by_session
    }
}

/// Runs `attempt` until it yields a result from a snapshot that stayed current, a few times.
fn retrying<T>(mut attempt: impl FnMut() -> io::Result<Option<T>>) -> io::Result<T> {
    let mut last: Option<io::Error> = None;
    for n in 0..ATTEMPTS {
        if n > 0 {
            std::thread::sleep(Duration::from_millis(25 << n));
        }
        match attempt() {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) if is_stale(&e) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::WouldBlock,
            "the database kept changing while being read",
        )
    }))
}

fn is_stale(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
    )
}

impl UnitReader for DbReader {
    fn read(&mut self, file: &SourceFile) -> io::Result<UnitRead> {
        match retrying(|| self.attempt(&file.path)) {
            Ok(read) => {
                self.read_once = true;
                Ok(read)
            }
            Err(e) if self.read_once || !is_stale(&e) || e.kind() == io::ErrorKind::WouldBlock => {
                Err(e)
            }
            Err(e) => {
                // never readable: an empty unit with one unreadable record, until it changes
                tracing::warn!(path = %file.path.display(), error = %e, "cannot read the OpenCode database; will retry when it changes");
                Ok(UnitRead {
                    skipped: 1,
                    ..UnitRead::default()
                })
            }
        }
    }

    fn stamp_paths(&self, file: &SourceFile) -> Vec<PathBuf> {
        vec![file.path.clone(), side_path(&file.path, "-wal")]
    }

    fn read_conversation(&mut self, file: &SourceFile, id: &str) -> io::Result<Option<ConvState>> {
        let Some(sid) = id
            .strip_prefix(convert::FORMAT)
            .and_then(|r| r.strip_prefix(':'))
        else {
            return Ok(None);
        };
        retrying(|| Self::attempt_one(&file.path, sid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Role;

    fn fixture_copy() -> (tempfile::TempDir, SourceFile) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("opencode.db");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencode/data/opencode.db");
        std::fs::copy(src, &path).expect("copy fixture");
        let file = SourceFile {
            path,
            format: convert::FORMAT,
            group: None,
            role: Role::Session {
                id: "opencode.db".into(),
            },
        };
        (dir, file)
    }

    fn ids(states: &[ConvState]) -> Vec<&str> {
        let mut v: Vec<&str> = states.iter().map(|s| s.id.as_str()).collect();
        v.sort_unstable();
        v
    }

    /// Runs SQL on the database with python3's sqlite3; false when python3 is unavailable.
    fn sql(db: &Path, statements: &str) -> bool {
        let script = "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.commit()";
        std::process::Command::new("python3")
            .args(["-c", script])
            .arg(db)
            .arg(statements)
            .status()
            .is_ok_and(|s| s.success())
    }

    #[test]
    fn rereads_report_only_sessions_whose_indexed_content_changed() {
        let (_dir, file) = fixture_copy();
        let mut r = DbReader::default();
        let first = r.read(&file).expect("read");
        let all = [
            "opencode:ses_alpha",
            "opencode:ses_alpha_child",
            "opencode:ses_beta",
            "opencode:ses_empty",
            "opencode:ses_nodir",
        ];
        assert_eq!(ids(&first.changed), all);
        assert_eq!(first.present.len(), 5);
        assert_eq!(first.skipped, 2);
        let again = r.read(&file).expect("read");
        assert!(again.changed.is_empty());
        assert_eq!(again.present.len(), 5);
        assert_eq!(
            again.skipped, 2,
            "skips of unchanged sessions are still reported"
        );

        let alpha = r
            .read_conversation(&file, "opencode:ses_alpha")
            .expect("read one");
        assert_eq!(alpha.map(|c| c.turn_count), Some(2));
        assert!(
            r.read_conversation(&file, "opencode:nope")
                .expect("read one")
                .is_none()
        );

        let changes = "INSERT INTO part VALUES ('prt_b04_9','msg_b04','ses_beta',1,1,'{\"type\":\"text\",\"text\":\"more\"}');
            UPDATE part SET time_updated = 9, data = replace(data, 'bashoutputwombatword', 'other output') WHERE id = 'prt_a02_5';";
        if !sql(&file.path, changes) {
            eprintln!("skipping the update half: python3 unavailable");
            return;
        }
        let after = r.read(&file).expect("read");
        assert_eq!(
            ids(&after.changed),
            ["opencode:ses_beta"],
            "a tool output change is not news"
        );
        assert!(sql(
            &file.path,
            "DELETE FROM session WHERE id = 'ses_nodir';"
        ));
        let after = r.read(&file).expect("read");
        assert!(after.changed.is_empty());
        assert_eq!(after.present.len(), 4);
        assert!(!after.present.contains(&"opencode:ses_nodir".to_owned()));
    }

    #[test]
    fn unreadable_files_are_reported_once_then_kept() {
        let (_dir, file) = fixture_copy();
        let good = std::fs::read(&file.path).expect("read");
        std::fs::write(&file.path, b"garbage garbage garbage").expect("write");
        let mut r = DbReader::default();
        let read = r.read(&file).expect("an empty unit");
        assert_eq!(
            (read.changed.len(), read.present.len(), read.skipped),
            (0, 0, 1)
        );
        std::fs::write(&file.path, &good).expect("restore");
        assert_eq!(r.read(&file).expect("read").present.len(), 5);
        // damaged after a good read: an error, so the caller keeps what it has
        std::fs::write(&file.path, &good[..good.len() / 2]).expect("truncate");
        assert!(r.read(&file).is_err());
    }
}
