//! What waits to be written to the durable store: the turns read since the last commit (per
//! conversation, in the order read) and the conversations whose transcript went, taken off the
//! front a commit's worth at a time so that a first build's backlog drains between live
//! changes.
use super::catalog::ConvId;
use crate::store::TurnRecord;
use rustc_hash::FxHashMap;

/// Turns and vanished transcripts waiting for the next commit.
#[derive(Default)]
pub(super) struct Backlog {
    /// Turns read since the last commit, per conversation (a conversation may appear twice).
    pending: Vec<(ConvId, Vec<TurnRecord>)>,
    /// Conversations whose transcript went since the last commit, with when (epoch ms).
    gone: Vec<(String, i64)>,
}

impl Backlog {
    /// Queues turns of `conv` read now.
    pub(super) fn push(&mut self, conv: ConvId, records: Vec<TurnRecord>) {
        self.pending.push((conv, records));
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
        self.pending.iter().map(|(_, r)| r.len() as u64).sum()
    }

    /// Conversations whose every turn waits (queued from turn 0), with how many turns.
    pub(super) fn whole(&self) -> FxHashMap<ConvId, usize> {
        self.pending
            .iter()
            .filter(|(_, r)| r.first().is_some_and(|t| t.number == 0))
            .map(|(c, r)| (*c, r.len()))
            .collect()
    }

    /// Conversations from the front of the queue until `max_turns` turns are taken (at least
    /// one conversation, whatever its size).
    pub(super) fn take(&mut self, max_turns: usize) -> Vec<(ConvId, Vec<TurnRecord>)> {
        let mut take = 0;
        let mut turns = 0;
        while take < self.pending.len() && (take == 0 || turns < max_turns) {
            turns += self.pending[take].1.len();
            take += 1;
        }
        self.pending.drain(..take).collect()
    }

    /// Takes the vanished transcripts noted.
    pub(super) fn take_gone(&mut self) -> Vec<(String, i64)> {
        std::mem::take(&mut self.gone)
    }

    /// Drops everything (a server that is not the store's writer keeps nothing for it).
    pub(super) fn clear(&mut self) {
        self.pending.clear();
        self.gone.clear();
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
                    ..Turn::default()
                })
            })
            .collect()
    }

    #[test]
    fn commits_take_conversations_off_the_front_a_slice_at_a_time() {
        let mut b = Backlog::default();
        b.push(1, records(0, 3));
        b.push(2, records(0, 5));
        b.push(3, records(4, 1));
        assert_eq!(b.turns(), 9);
        assert!(b.holds(2) && !b.holds(4));
        let whole = b.whole();
        assert_eq!((whole.get(&1), whole.get(&3)), (Some(&3), None));
        // at least one conversation, even past the bound
        assert_eq!(b.take(1).iter().map(|(c, _)| *c).collect::<Vec<_>>(), [1]);
        // then until the bound is reached
        assert_eq!(b.take(5).iter().map(|(c, _)| *c).collect::<Vec<_>>(), [2]);
        assert_eq!(b.take(usize::MAX).len(), 1);
        assert!(!b.has_turns());
        assert!(b.take(10).is_empty());
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
