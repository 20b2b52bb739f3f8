//! When to apply a change: once a path has been quiet for the debounce period, but never later
//! than the staleness bound after its first unapplied change (so a file appended to every
//! second is still re-ingested regularly).
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
struct Pending {
    first: Instant,
    last: Instant,
}

/// Pending changed paths and their deadlines.
#[derive(Debug)]
pub(crate) struct Schedule {
    debounce: Duration,
    max_staleness: Duration,
    pending: BTreeMap<PathBuf, Pending>,
}

impl Schedule {
    pub(crate) fn new(debounce: Duration, max_staleness: Duration) -> Self {
        Self {
            debounce,
            max_staleness: max_staleness.max(debounce),
            pending: BTreeMap::new(),
        }
    }

    /// Records a change at `path` seen at `now` (changes may be noted out of order: the
    /// latest counts).
    pub(crate) fn note(&mut self, path: PathBuf, now: Instant) {
        self.pending
            .entry(path)
            .and_modify(|p| p.last = p.last.max(now))
            .or_insert(Pending {
                first: now,
                last: now,
            });
    }

    fn deadline(&self, p: &Pending) -> Instant {
        (p.last + self.debounce).min(p.first + self.max_staleness)
    }

    /// The earliest deadline of any pending path.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.pending.values().map(|p| self.deadline(p)).min()
    }

    /// Removes and returns the paths whose deadline has passed.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<PathBuf> {
        let due: Vec<PathBuf> = self
            .pending
            .iter()
            .filter(|(_, p)| self.deadline(p) <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in &due {
            self.pending.remove(k);
        }
        due
    }

    pub(crate) fn len(&self) -> usize {
        self.pending.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_quiet_but_bounds_staleness() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut s = Schedule::new(ms(300), ms(1000));
        let p = PathBuf::from("/x");
        for i in 0..10 {
            s.note(p.clone(), t0 + ms(i * 100));
            assert!(s.take_due(t0 + ms(i * 100)).is_empty() || i * 100 >= 1000);
        }
        // quiet since t0+900: due at t0+1000 (staleness) which is before t0+1200 (quiet)
        assert_eq!(s.next_deadline(), Some(t0 + ms(1000)));
        assert!(s.take_due(t0 + ms(999)).is_empty());
        assert_eq!(s.take_due(t0 + ms(1000)), vec![p.clone()]);
        assert!(s.is_empty());
        s.note(p.clone(), t0 + ms(2000));
        assert_eq!(s.next_deadline(), Some(t0 + ms(2300)));
    }

    #[test]
    fn the_debounce_counts_from_when_a_change_was_seen() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut s = Schedule::new(ms(200), ms(1000));
        let p = PathBuf::from("/x");
        // seen while the writer was busy, noted later: due 200 ms after it was seen
        s.note(p.clone(), t0 + ms(500));
        s.note(p.clone(), t0 + ms(100));
        assert_eq!(s.next_deadline(), Some(t0 + ms(700)));
        assert_eq!(s.take_due(t0 + ms(700)), vec![p]);
    }
}
