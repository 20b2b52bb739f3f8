//! When a query must stop early: a time budget and a cancellation flag, checked by the
//! evaluation every few hundred candidates. A stopped evaluation returns what it found.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Candidates evaluated between two looks at the clock.
pub(crate) const CHECK_EVERY: u64 = 256;

#[derive(Debug, Default)]
struct Inner {
    deadline: Option<Instant>,
    cancelled: AtomicBool,
    /// Set once a check found the budget spent or the query cancelled.
    fired: AtomicBool,
}

/// A shared stop condition; the default never stops. Clones share the condition.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stop(Option<Arc<Inner>>);

impl PartialEq for Stop {
    /// Stop conditions are not part of what a plan means.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Stop {
    /// Stops at `deadline` (if any) or when [`Stop::cancel`] is called.
    pub(crate) fn new(deadline: Option<Instant>) -> Self {
        Stop(Some(Arc::new(Inner {
            deadline,
            ..Inner::default()
        })))
    }

    /// Asks the query to stop at its next check.
    pub(crate) fn cancel(&self) {
        if let Some(i) = &self.0 {
            i.cancelled.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the query should stop now (and remember that it did).
    pub(crate) fn check(&self) -> bool {
        let Some(i) = &self.0 else { return false };
        if i.fired.load(Ordering::Relaxed) {
            return true;
        }
        let stop =
            i.cancelled.load(Ordering::Relaxed) || i.deadline.is_some_and(|d| Instant::now() >= d);
        if stop {
            i.fired.store(true, Ordering::Relaxed);
        }
        stop
    }

    /// Whether a check stopped the query.
    #[cfg(test)]
    pub(crate) fn fired(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|i| i.fired.load(Ordering::Relaxed))
    }

    /// Whether the query was cancelled (rather than out of time).
    pub(crate) fn cancelled(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|i| i.cancelled.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_deadline_or_when_cancelled() {
        assert!(!Stop::default().check());
        let past = Stop::new(Some(Instant::now()));
        assert!(past.check() && past.fired());
        let s = Stop::new(None);
        let other = s.clone();
        assert!(!s.check());
        other.cancel();
        assert!(s.check() && s.cancelled());
    }
}
