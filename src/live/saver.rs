//! Writing the persistent index: after the first build, then at most every [`SAVE_INTERVAL`]
//! while changes keep coming (less often when a write takes long), and on shutdown; and
//! publishing each generation's delta for the servers that follow this one.
use super::status::LiveStatus;
use crate::cache::Cache;
use crate::corpus::writer::Writer;
use std::time::{Duration, Instant};

/// Most frequent cache write while transcripts keep changing.
const SAVE_INTERVAL: Duration = Duration::from_secs(30);

/// Writes the persistent index after the first build and then at most every
/// [`SAVE_INTERVAL`] while changes keep coming (less often when a write takes long: the writer
/// thread spends at most 1/[`SAVE_BUSY_RATIO`] of its time saving), and on shutdown.
pub(super) struct Saver {
    cache: Option<Cache>,
    /// Something changed since the last write.
    pub(super) dirty: bool,
    /// When the last write ended (or the start, when the cache was restored unchanged).
    last: Option<Instant>,
    /// How long the last write took.
    took: Duration,
}

/// A save may come again only after `SAVE_BUSY_RATIO` times its own duration.
const SAVE_BUSY_RATIO: u32 = 20;

impl Saver {
    /// A saver of `cache`; `dirty` when the start changed what the cache holds (a cache
    /// restored unchanged waits for the interval like any other change).
    pub(super) fn new(cache: Option<Cache>, dirty: bool) -> Self {
        Saver {
            cache,
            dirty,
            last: (!dirty).then(Instant::now),
            took: Duration::ZERO,
        }
    }

    /// When the next write is due (None: nothing to write).
    pub(super) fn due(&self) -> Option<Instant> {
        match (self.dirty, self.cache.is_some(), self.last) {
            (true, true, Some(last)) => Some(last + SAVE_INTERVAL.max(self.took * SAVE_BUSY_RATIO)),
            (true, true, None) => Some(Instant::now()),
            _ => None,
        }
    }

    /// Publishes the changes since the last generation for the servers following this one.
    pub(super) fn publish(&self, writer: &mut Writer, publishing: bool, status: &LiveStatus) {
        let Some(cache) = self.cache.as_ref().filter(|_| publishing) else {
            return;
        };
        if let Err(e) = writer.publish_delta(cache) {
            tracing::warn!(
                "cannot publish a generation under `{}`: {e}",
                cache.gens_dir().display()
            );
        }
        status.set_followed(writer.generation_on_disk());
    }

    /// Writes the cache file if a write is due.
    pub(super) fn maybe_save(&mut self, writer: &mut Writer) {
        if self.due().is_some_and(|d| d <= Instant::now()) {
            self.save_now(writer);
        }
    }

    /// Saves now if anything changed since the last save.
    pub(super) fn save_now(&mut self, writer: &mut Writer) {
        let Some(cache) = &self.cache else { return };
        if !self.dirty {
            return;
        }
        let started = Instant::now();
        match writer.save_cache(cache) {
            Ok(bytes) => {
                tracing::debug!(
                    bytes,
                    ms = started.elapsed().as_millis() as u64,
                    "index cache written"
                );
                let (chain, seq) = writer.generation_on_disk();
                cache.prune_deltas(chain, seq);
                if writer.built_here() {
                    match writer.adopt_base(cache) {
                        Ok(true) => tracing::debug!("the index built here is now mapped"),
                        Ok(false) => {}
                        Err(e) => tracing::warn!(
                            "cannot map the index just written to `{}`: {e}",
                            cache.path().display()
                        ),
                    }
                }
            }
            Err(e) => tracing::warn!(
                "cannot write the index cache `{}`: {e}",
                cache.path().display()
            ),
        }
        self.dirty = false;
        self.took = started.elapsed();
        self.last = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_due_only_when_something_changed_and_there_is_a_cache() {
        let tmp = tempfile::tempdir().expect("tmp");
        let cache = || Some(Cache::new(tmp.path().to_owned(), b"k"));
        assert!(Saver::new(None, true).due().is_none(), "no cache");
        // changed by the start: due at once
        let changed = Saver::new(cache(), true);
        assert!(changed.due().is_some_and(|d| d <= Instant::now()));
        // restored unchanged: nothing due; a change waits for the interval
        let mut unchanged = Saver::new(cache(), false);
        assert!(unchanged.due().is_none());
        unchanged.dirty = true;
        assert!(
            unchanged
                .due()
                .is_some_and(|d| d >= Instant::now() + SAVE_INTERVAL - Duration::from_secs(1))
        );
    }
}
