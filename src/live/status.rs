//! What the live index is doing (watching, polling, pending changes), for `index_status`.
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// How changes to the transcript directories are noticed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum WatchMode {
    /// The index is not live (one-shot commands), or the watcher has not started yet.
    #[default]
    Off,
    /// File-system notifications.
    Watch,
    /// Periodic rescans.
    Poll,
}

impl WatchMode {
    /// The name `index_status` reports (empty when not live).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WatchMode::Off => "",
            WatchMode::Watch => "watch",
            WatchMode::Poll => "poll",
        }
    }
}

/// This server's part in sharing the index with the other servers of its configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Role {
    /// Reads transcripts itself without sharing (no cache, one-shot commands, or the writer
    /// lock could not be used).
    #[default]
    Alone,
    /// Holds the writer lock: reads transcripts and publishes generations.
    Writer,
    /// Follows the writer's generations; reads no transcript.
    Follower,
}

/// Live-index state shared between the indexer thread and the tools.
#[derive(Debug, Default)]
pub(crate) struct LiveStatus {
    mode: Mutex<(WatchMode, Option<String>)>,
    /// Role, and the generation (chain, sequence) last published or followed.
    role: Mutex<(Role, (u64, u64))>,
    /// Changes seen but not yet applied.
    pub pending: AtomicUsize,
    /// File-system events received.
    pub events: AtomicU64,
    pub debounce_ms: AtomicU64,
    pub max_staleness_ms: AtomicU64,
    /// Directories that cannot be watched and are polled instead, each with the reason.
    polled: Mutex<Vec<(std::path::PathBuf, String)>>,
    /// The mode the indexer will set up (reported until it has: `poll` when forced).
    planned: Mutex<WatchMode>,
    /// Set when the first build (or the following of another server) begins.
    begun: AtomicBool,
}

impl LiveStatus {
    /// The status of a live index configured with `cfg`, before its indexer has started:
    /// the configured periods and the watch mode it will try are known from the first moment.
    pub(crate) fn configured(cfg: &super::LiveConfig) -> Self {
        let s = Self::default();
        s.debounce_ms
            .store(cfg.debounce.as_millis() as u64, Ordering::Relaxed);
        s.max_staleness_ms
            .store(cfg.max_staleness.as_millis() as u64, Ordering::Relaxed);
        *s.planned.lock().unwrap_or_else(|p| p.into_inner()) = if cfg.force_poll {
            WatchMode::Poll
        } else {
            WatchMode::Watch
        };
        s
    }

    /// The mode in use, or the one planned while the indexer has set up none (a follower
    /// plans none: it reads no transcript).
    pub(crate) fn shown_mode(&self) -> WatchMode {
        match self.mode() {
            WatchMode::Off if self.role().0 != Role::Follower => {
                *self.planned.lock().unwrap_or_else(|p| p.into_inner())
            }
            mode => mode,
        }
    }

    /// Notes that the first build (or following) has begun.
    pub(crate) fn begin(&self) {
        self.begun.store(true, Ordering::Relaxed);
    }

    pub(crate) fn begun(&self) -> bool {
        self.begun.load(Ordering::Relaxed)
    }

    /// Sets the mode; `error` (why watching is unavailable) is kept until replaced.
    pub(crate) fn set_mode(&self, mode: WatchMode, error: Option<String>) {
        let mut g = self.mode.lock().unwrap_or_else(|p| p.into_inner());
        g.0 = mode;
        if error.is_some() {
            g.1 = error;
        }
    }

    pub(crate) fn set_error(&self, error: String) {
        self.mode.lock().unwrap_or_else(|p| p.into_inner()).1 = Some(error);
    }

    pub(crate) fn mode(&self) -> WatchMode {
        self.mode.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    pub(crate) fn watching(&self) -> bool {
        self.mode() == WatchMode::Watch
    }

    pub(crate) fn error(&self) -> Option<String> {
        self.mode
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .clone()
    }

    /// Notes a directory polled instead of watched (once per path; the latest reason kept).
    pub(crate) fn add_polled(&self, dir: std::path::PathBuf, reason: String) {
        let mut g = self.polled.lock().unwrap_or_else(|p| p.into_inner());
        match g.iter_mut().find(|(d, _)| *d == dir) {
            Some(entry) => entry.1 = reason,
            None => g.push((dir, reason)),
        }
    }

    /// Forgets a polled directory that went away.
    pub(crate) fn remove_polled(&self, dir: &std::path::Path) {
        let mut g = self.polled.lock().unwrap_or_else(|p| p.into_inner());
        g.retain(|(d, _)| d != dir);
    }

    /// Directories polled instead of watched, with the reason.
    pub(crate) fn polled(&self) -> Vec<(std::path::PathBuf, String)> {
        self.polled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn set_role(&self, role: Role) {
        self.role.lock().unwrap_or_else(|p| p.into_inner()).0 = role;
    }

    /// The generation (chain, sequence) published or followed last.
    pub(crate) fn set_followed(&self, generation: (u64, u64)) {
        self.role.lock().unwrap_or_else(|p| p.into_inner()).1 = generation;
    }

    pub(crate) fn role(&self) -> (Role, (u64, u64)) {
        *self.role.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_and_error_are_kept_apart() {
        let s = LiveStatus::default();
        assert_eq!(s.mode(), WatchMode::Off);
        assert_eq!(s.mode().as_str(), "");
        s.set_mode(WatchMode::Poll, Some("no inotify".into()));
        s.set_mode(WatchMode::Watch, None);
        assert!(s.watching());
        assert_eq!(s.error().as_deref(), Some("no inotify"));
    }

    #[test]
    fn the_planned_mode_shows_until_one_is_set_up() {
        let cfg = crate::live::LiveConfig {
            force_poll: true,
            ..Default::default()
        };
        let s = LiveStatus::configured(&cfg);
        assert_eq!(s.shown_mode(), WatchMode::Poll);
        assert_eq!(s.debounce_ms.load(Ordering::Relaxed), 2000);
        let s = LiveStatus::configured(&crate::live::LiveConfig::default());
        assert_eq!(s.shown_mode(), WatchMode::Watch);
        assert!(!s.watching());
        s.set_mode(WatchMode::Poll, Some("no inotify".into()));
        assert_eq!(s.shown_mode(), WatchMode::Poll);
        assert_eq!(LiveStatus::default().shown_mode(), WatchMode::Off);
    }
}
