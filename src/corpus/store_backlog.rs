//! What waits to be written to the durable store: the turns read since the last commit (per
//! conversation, in the order read) and the conversations whose transcript went, taken off the
//! front a commit's worth at a time so that a first build's backlog drains between live
//! changes. The turns' records wait in a [`Spill`] file (unlinked, each batch checksummed), not
//! in memory: only where each batch lies is kept.
use super::catalog::ConvId;
use crate::store::TurnRecord;
use crate::util::codec::{Decoder, Encoder, corrupt};
use rustc_hash::FxHashMap;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The turns of one conversation read at once, waiting: in memory, or where they lie in the
/// spill file.
#[derive(Debug)]
pub(super) enum Queued {
    Memory(Vec<TurnRecord>),
    Spilled {
        at: u64,
        len: u64,
        /// Checksum of the bytes written.
        sum: u64,
        /// The first turn's number, and how many.
        first: u32,
        turns: u32,
    },
}

impl Queued {
    fn turns(&self) -> usize {
        match self {
            Queued::Memory(r) => r.len(),
            Queued::Spilled { turns, .. } => *turns as usize,
        }
    }

    fn first(&self) -> Option<u32> {
        match self {
            Queued::Memory(r) => r.first().map(|t| t.number),
            Queued::Spilled { first, turns, .. } => (*turns > 0).then_some(*first),
        }
    }
}

/// An unlinked file in the store's directory where records wait for their commit. Batches are
/// appended at an offset handed out atomically, so the first build's workers write to it side
/// by side; nothing in it outlives the process (a crash leaves no file: the transcripts are
/// read again).
#[derive(Debug)]
pub(super) struct Spill {
    file: File,
    end: AtomicU64,
}

impl Spill {
    /// A new spill file in `dir`, unlinked at once.
    pub(super) fn create(dir: &Path) -> io::Result<Spill> {
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = dir.join(format!(".backlog-{}-{nonce}.spill", std::process::id()));
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        std::fs::remove_file(&path)?;
        Ok(Spill {
            file,
            end: AtomicU64::new(0),
        })
    }

    /// Writes `records` to the file; kept in memory instead when that fails.
    pub(super) fn put(&self, records: Vec<TurnRecord>) -> Queued {
        if records.is_empty() {
            return Queued::Memory(records);
        }
        let mut e = Encoder::new(Vec::new());
        let encoded = records.iter().try_for_each(|r| {
            e.u32(r.number)?;
            e.u64(r.hash)?;
            e.opt_i64(r.timestamp)?;
            e.opt_i64(r.dup_key.map(|k| k as i64))?;
            e.bytes(&r.body)
        });
        let sum = e.checksum();
        let bytes = e.into_inner();
        let len = bytes.len() as u64;
        let at = self.end.fetch_add(len, Ordering::Relaxed);
        match encoded.and_then(|()| write_at(&self.file, &bytes, at)) {
            Ok(()) => Queued::Spilled {
                at,
                len,
                sum,
                first: records[0].number,
                turns: records.len() as u32,
            },
            Err(e) => {
                tracing::debug!("store backlog kept in memory: {e}");
                Queued::Memory(records)
            }
        }
    }

    /// The records of a batch back, checked against its checksum.
    fn get(&self, q: Queued) -> io::Result<Vec<TurnRecord>> {
        let (at, len, sum, turns) = match q {
            Queued::Memory(r) => return Ok(r),
            Queued::Spilled {
                at,
                len,
                sum,
                turns,
                ..
            } => (at, len, sum, turns),
        };
        let mut bytes = vec![0u8; len as usize];
        read_at(&self.file, &mut bytes, at)?;
        let mut d = Decoder::bounded(bytes.as_slice(), len);
        let mut out = Vec::with_capacity(turns as usize);
        for _ in 0..turns {
            out.push(TurnRecord {
                number: d.u32()?,
                hash: d.u64()?,
                timestamp: d.opt_i64()?,
                dup_key: d.opt_i64()?.map(|k| k as u64),
                body: d.bytes()?,
            });
        }
        if d.checksum() != sum {
            return Err(corrupt("store backlog fails its checksum"));
        }
        Ok(out)
    }

    /// Starts the file over (nothing in it waits any more).
    fn reset(&mut self) {
        if self.file.set_len(0).is_ok() {
            *self.end.get_mut() = 0;
        }
    }
}

fn write_at(file: &File, bytes: &[u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, at)
}

fn read_at(file: &File, bytes: &mut [u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, at)
}

/// What one commit takes off the backlog.
pub(super) struct Taken {
    pub(super) turns: Vec<(ConvId, Vec<TurnRecord>)>,
    /// Batches that could not be read back from the spill file (the caller compares the
    /// index with the store again, which re-reads their transcripts).
    pub(super) lost: usize,
}

/// Turns and vanished transcripts waiting for the next commit.
#[derive(Default)]
pub(super) struct Backlog {
    /// Turns read since the last commit, per conversation (a conversation may appear twice).
    pending: Vec<(ConvId, Queued)>,
    /// Conversations whose transcript went since the last commit, with when (epoch ms).
    gone: Vec<(String, i64)>,
    /// Where records wait (none: in memory).
    spill: Option<Arc<Spill>>,
}

impl Backlog {
    /// Records will wait in `spill` from now on.
    pub(super) fn set_spill(&mut self, spill: Arc<Spill>) {
        self.spill = Some(spill);
    }

    /// The spill file records are written to, if any (shared with the first build's workers).
    pub(super) fn spill(&self) -> Option<&Arc<Spill>> {
        self.spill.as_ref()
    }

    /// Queues turns of `conv` read now.
    pub(super) fn push(&mut self, conv: ConvId, records: Vec<TurnRecord>) {
        let queued = match &self.spill {
            Some(s) => s.put(records),
            None => Queued::Memory(records),
        };
        self.push_queued(conv, queued);
    }

    /// Queues turns of `conv` already written to the spill file (or kept in memory).
    pub(super) fn push_queued(&mut self, conv: ConvId, queued: Queued) {
        self.pending.push((conv, queued));
    }

    /// Queues the news that the transcript of `id` went at `since`.
    pub(super) fn note_gone(&mut self, id: String, since: i64) {
        self.gone.push((id, since));
    }

    /// Queues these vanished transcripts.
    pub(super) fn extend_gone(&mut self, gone: impl IntoIterator<Item = (String, i64)>) {
        self.gone.extend(gone);
    }

    /// The transcript of `id` is back: the news of it going is dropped.
    pub(super) fn unnote_gone(&mut self, id: &str) {
        self.gone.retain(|(g, _)| g != id);
    }

    /// Whether turns of `conv` wait.
    pub(super) fn holds(&self, conv: ConvId) -> bool {
        self.pending.iter().any(|(c, _)| *c == conv)
    }

    /// Whether any turn waits.
    pub(super) fn has_turns(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Turns waiting, over every conversation.
    pub(super) fn turns(&self) -> u64 {
        self.pending.iter().map(|(_, q)| q.turns() as u64).sum()
    }

    /// Conversations whose every turn waits (queued from turn 0), with how many turns.
    pub(super) fn whole(&self) -> FxHashMap<ConvId, usize> {
        self.pending
            .iter()
            .filter(|(_, q)| q.first() == Some(0))
            .map(|(c, q)| (*c, q.turns()))
            .collect()
    }

    /// Conversations from the front of the queue until `max_turns` turns are taken (at least
    /// one conversation, whatever its size).
    pub(super) fn take(&mut self, max_turns: usize) -> Taken {
        let mut take = 0;
        let mut turns = 0;
        while take < self.pending.len() && (take == 0 || turns < max_turns) {
            turns += self.pending[take].1.turns();
            take += 1;
        }
        let mut out = Taken {
            turns: Vec::with_capacity(take),
            lost: 0,
        };
        for (conv, queued) in self.pending.drain(..take) {
            let records = match &self.spill {
                Some(s) => s.get(queued),
                None => match queued {
                    Queued::Memory(r) => Ok(r),
                    Queued::Spilled { .. } => Err(corrupt("no spill file")),
                },
            };
            match records {
                Ok(r) => out.turns.push((conv, r)),
                Err(e) => {
                    tracing::warn!(
                        "a batch of the store's backlog is unreadable ({e}); its transcript is read again"
                    );
                    out.lost += 1;
                }
            }
        }
        if self.pending.is_empty() {
            self.reset_spill();
        }
        out
    }

    /// Starts the spill file over when no one else writes to it.
    fn reset_spill(&mut self) {
        if let Some(s) = self.spill.as_mut().and_then(Arc::get_mut) {
            s.reset();
        }
    }

    /// Takes the vanished transcripts noted.
    pub(super) fn take_gone(&mut self) -> Vec<(String, i64)> {
        std::mem::take(&mut self.gone)
    }

    /// Drops everything (a server that is not the store's writer keeps nothing for it).
    pub(super) fn clear(&mut self) {
        self.pending.clear();
        self.gone.clear();
        self.reset_spill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Turn;

    fn records(from: u32, n: u32) -> Vec<TurnRecord> {
        (from..from + n)
            .map(|number| {
                TurnRecord::of(&Turn {
                    number,
                    user_text: format!("turn {number}"),
                    dup_key: (number % 2 == 0).then_some(u64::MAX - u64::from(number)),
                    timestamp: (number % 3 == 0).then_some(-5),
                    ..Turn::default()
                })
            })
            .collect()
    }

    fn convs(t: &Taken) -> Vec<ConvId> {
        t.turns.iter().map(|(c, _)| *c).collect()
    }

    fn backlogs() -> (tempfile::TempDir, [Backlog; 2]) {
        let dir = tempfile::tempdir().expect("tmp");
        let mut spilled = Backlog::default();
        spilled.set_spill(Arc::new(Spill::create(dir.path()).expect("spill")));
        (dir, [Backlog::default(), spilled])
    }

    #[test]
    fn commits_take_conversations_off_the_front_a_slice_at_a_time() {
        let (_dir, backlogs) = backlogs();
        for mut b in backlogs {
            b.push(1, records(0, 3));
            b.push(2, records(0, 5));
            b.push(3, records(4, 1));
            assert_eq!(b.turns(), 9);
            assert!(b.holds(2) && !b.holds(4));
            let whole = b.whole();
            assert_eq!((whole.get(&1), whole.get(&3)), (Some(&3), None));
            // at least one conversation, even past the bound
            let first = b.take(1);
            assert_eq!(convs(&first), [1]);
            assert_eq!(first.turns[0].1, records(0, 3), "read back as written");
            // then until the bound is reached
            assert_eq!(convs(&b.take(5)), [2]);
            let last = b.take(usize::MAX);
            assert_eq!((last.turns[0].1.clone(), last.lost), (records(4, 1), 0));
            assert!(!b.has_turns());
            assert!(b.take(10).turns.is_empty());
        }
    }

    #[test]
    fn the_spill_file_is_unlinked_and_starts_over_once_drained() {
        let (dir, [_, mut b]) = backlogs();
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
        b.push(1, records(0, 2));
        let spill = Arc::clone(b.spill().expect("spill"));
        // a worker writes beside the backlog while it holds the file
        b.push_queued(2, spill.put(records(0, 1)));
        assert!(spill.end.load(Ordering::Relaxed) > 0);
        assert_eq!(b.take(usize::MAX).turns.len(), 2);
        assert!(
            spill.end.load(Ordering::Relaxed) > 0,
            "not reset while shared"
        );
        drop(spill);
        b.push(3, records(0, 1));
        assert_eq!(b.take(usize::MAX).turns[0].1, records(0, 1));
        assert_eq!(b.spill().unwrap().end.load(Ordering::Relaxed), 0);
        assert_eq!(b.spill().unwrap().file.metadata().unwrap().len(), 0);
    }

    #[test]
    fn a_damaged_batch_is_reported_lost_not_returned() {
        let (_dir, [_, mut b]) = backlogs();
        b.push(1, records(0, 2));
        b.push(2, records(0, 2));
        let spill = b.spill().unwrap();
        let mut byte = [0u8];
        read_at(&spill.file, &mut byte, 9).expect("read");
        write_at(&spill.file, &[!byte[0]], 9).expect("damage");
        let taken = b.take(usize::MAX);
        assert_eq!((convs(&taken), taken.lost), (vec![2], 1));
    }

    #[test]
    fn a_transcript_back_is_no_longer_reported_gone() {
        let mut b = Backlog::default();
        b.note_gone("a".into(), 1);
        b.extend_gone([("b".into(), 2), ("a".into(), 3)]);
        b.unnote_gone("a");
        assert_eq!(b.take_gone(), [("b".to_string(), 2)]);
        assert!(b.take_gone().is_empty());
        b.push(1, records(0, 1));
        b.note_gone("c".into(), 4);
        b.clear();
        assert!(!b.has_turns() && b.take_gone().is_empty());
    }
}
