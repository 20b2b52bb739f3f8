//! Publishing: the writer's parts frozen into an immutable [`Snapshot`] and swapped into
//! [`Shared`], with the generation number (incremented by every published update), whether the
//! first build is complete, and the update counters the snapshot's [`Stats`] show.
use super::catalog::Catalog;
use super::doc_index::DocIndex;
use super::files::Files;
use super::store_sync::StoreSync;
use super::{Shared, Snapshot, Stats};
use crate::util::time::now_ms;
use std::sync::Arc;
use std::time::Instant;

/// Publishes snapshots and keeps what they say of the writer's history.
pub(super) struct Publisher {
    shared: Arc<Shared>,
    /// Incremented by every published update; 0 until the first full build.
    generation: u64,
    /// Every file found at start-up has been indexed.
    pub(super) complete: bool,
    /// Updates applied (since the start, or as another server counted them).
    pub(super) updates: u64,
    /// How long the last published update took, in milliseconds.
    pub(super) last_update_ms: f64,
}

/// The parts a snapshot is made of.
pub(super) struct Parts<'a> {
    pub(super) files: &'a Files,
    pub(super) catalog: &'a Catalog,
    pub(super) docs: &'a mut DocIndex,
    pub(super) store: Option<&'a StoreSync>,
}

impl Publisher {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        Publisher {
            shared,
            generation: 0,
            complete: false,
            updates: 0,
            last_update_ms: 0.0,
        }
    }

    pub(super) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The start is not an update: the counters begin after it.
    pub(super) fn reset_counters(&mut self) {
        self.updates = 0;
        self.last_update_ms = 0.0;
    }

    /// Publishes an update begun at `started`: the next generation.
    pub(super) fn publish(&mut self, started: Instant, parts: Parts<'_>) {
        self.generation += 1;
        self.publish_as_is(started, parts);
    }

    /// Publishes the parts without counting an update (the first build's progress).
    pub(super) fn publish_as_is(&mut self, started: Instant, parts: Parts<'_>) {
        let Parts {
            files,
            catalog,
            docs,
            store,
        } = parts;
        self.last_update_ms = started.elapsed().as_secs_f64() * 1000.0;
        let counts = files.counts;
        let stats = Stats {
            files: files.len() as u64,
            bytes_indexed: files.bytes_read(),
            skipped_lines: files.skipped_lines(),
            last_update_ms: self.last_update_ms,
            updates: self.updates,
            files_reread: counts.reread,
            files_appended: counts.appended,
            files_removed: counts.removed,
            files_added: counts.added,
            sources: files.source_health(catalog),
        };
        self.shared.publish(Snapshot {
            generation: self.generation,
            complete: self.complete,
            indexed_at: Some(now_ms()),
            catalog: catalog.clone(),
            index: docs.view().clone(),
            stats,
            roots: Arc::clone(files.roots()),
            dup_multi: docs.dup_multi(),
            store: store.map(|s| Arc::clone(s.store())),
            // fixed at start: `Shared::publish` carries the current ones over
            project: Default::default(),
            progress: Default::default(),
            members: Default::default(),
            tally: Default::default(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_is_a_new_generation_and_progress_is_not() {
        let shared = Shared::new(Snapshot::default());
        let mut p = Publisher::new(Arc::clone(&shared));
        let files = Files::new(Vec::new());
        let catalog = Catalog::default();
        let mut docs = DocIndex::default();
        macro_rules! parts {
            () => {
                Parts {
                    files: &files,
                    catalog: &catalog,
                    docs: &mut docs,
                    store: None,
                }
            };
        }
        p.publish_as_is(Instant::now(), parts!());
        assert_eq!(shared.snapshot().generation, 0);
        assert!(!shared.snapshot().complete);
        p.complete = true;
        p.updates = 3;
        p.publish(Instant::now(), parts!());
        let snap = shared.snapshot();
        assert_eq!(
            (snap.generation, snap.complete, snap.stats.updates),
            (1, true, 3)
        );
        assert!(snap.indexed_at.is_some());
        p.reset_counters();
        p.publish(Instant::now(), parts!());
        assert_eq!(
            (
                shared.snapshot().generation,
                shared.snapshot().stats.updates
            ),
            (2, 0)
        );
    }
}
