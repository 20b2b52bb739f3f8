//! `index_status`: what the index holds, so an empty index can be told from "no match".
use super::budget::{self, json_len};
use super::iso;
use super::progress::{self, BuildOut};
use crate::cache::CacheReport;
use crate::corpus::Snapshot;
use crate::live::LiveStatus;
use crate::server::toolset::{Ctx, Lane, ToolDef};
use crate::server::{ToolError, input_schema, output_schema};
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

pub(crate) const DESCRIPTION: &str = "Report what the search index holds: projects, sessions, \
sub-agents, turns, files and bytes indexed, unreadable lines skipped, records of unknown types per \
source, the update generation and time, and where transcripts are read from. Use it when a search finds nothing.";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct StatusParams {
    /// Most characters of JSON to return (500-60000, default 20000).
    #[serde(default)]
    pub max_chars: Option<i64>,
}

/// The persistent index's state (see [`CacheReport`]).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct CacheOut {
    /// False with `--no-cache` (or without a home directory).
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// How the first build began: `disabled`, `absent`, `restored` or `rejected`.
    pub start: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected_because: Option<String>,
    pub files_reused: u64,
    pub files_changed: u64,
    pub writes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_error: Option<String>,
}

impl From<CacheReport> for CacheOut {
    fn from(r: CacheReport) -> Self {
        CacheOut {
            enabled: r.path.is_some(),
            path: r.path.map(|p| p.display().to_string()),
            start: r.start.as_str().to_owned(),
            rejected_because: r.rejected_because,
            files_reused: r.files_reused,
            files_changed: r.files_changed,
            writes: r.writes,
            write_error: r.write_error,
        }
    }
}

/// This server's part in sharing the index: `writer` (indexes transcripts, publishes
/// generations), `follower` (switches to the writer's generations, indexes nothing; takes over
/// when the writer exits) or `alone` (no shared cache).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "rmcp::schemars")]
pub(crate) enum SharingRole {
    Writer,
    Follower,
    Alone,
}

/// This server's part in sharing the index.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct SharingOut {
    pub role: SharingRole,
    /// The shared generation published (writer) or followed (follower) last.
    pub generation: u64,
}

/// A directory polled because it cannot be watched.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct PolledDir {
    pub path: String,
    /// Why it cannot be watched (permission denied, watch limit reached, ...).
    pub reason: String,
}

/// Health of one transcript source.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct SourceOut {
    pub source: String,
    pub path: String,
    /// False while the directory does not exist (it is watched for).
    pub exists: bool,
    pub files: u64,
    pub sessions: u64,
    pub subagents: u64,
    pub turns: u64,
    pub skipped_lines: u64,
    /// Records skipped because their type is unknown to this version, per type.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown_records: BTreeMap<String, u64>,
    /// Files read that yielded no turn.
    pub files_without_turns: u64,
    /// Set when the directory does not exist, or when this source's files parse but yield no
    /// turns at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct StatusOut {
    pub projects: usize,
    pub sessions: usize,
    pub subagents: usize,
    pub turns: u64,
    pub files: u64,
    pub bytes_indexed: u64,
    pub skipped_lines: u64,
    /// Incremented by every index update; 0 before the first build finished.
    pub generation: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_at: Option<String>,
    /// True once every file found at start-up has been indexed.
    pub complete: bool,
    /// `starting` (setting up the store, the shared index and watching; nothing read yet),
    /// `building` (the first build, or following another server's index, is under way) or
    /// `ready` (complete).
    pub state: String,
    /// Present while the first index build runs: files and bytes done of total.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projects_dir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// How this server shares the index with the other servers of its configuration (left
    /// out only when max_chars is too small).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<SharingOut>,
    /// True while file-system notifications are followed.
    pub watching: bool,
    /// `watch` (notifications), `poll` (periodic rescans) or empty (one-shot command, or a
    /// follower); before watching is set up, the mode that will be tried.
    pub watch_mode: String,
    /// Why watching is unavailable, if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch_error: Option<String>,
    /// Directories that cannot be watched and are polled instead (the rest is watched).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub polled_dirs: Vec<PolledDir>,
    /// Changed paths waiting for their debounce period.
    pub pending_changes: usize,
    /// Milliseconds the last update took.
    pub last_update_ms: f64,
    pub debounce_ms: u64,
    pub max_staleness_ms: u64,
    /// Updates applied after the first build.
    pub updates: u64,
    pub files_added: u64,
    pub files_appended: u64,
    pub files_reread: u64,
    pub files_removed: u64,
    /// Index segments currently searched.
    pub segments: usize,
    /// Per source directory (left out, from the last, when max_chars is too small for all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceOut>,
    /// What the persistent index did in this process.
    pub cache: CacheOut,
    /// The durable store of conversation history (left out only when max_chars is too small
    /// for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<super::store_out::StoreOut>,
    /// Warnings of sources that are missing or whose files yield no turns.
    pub warnings: Vec<String>,
    /// True when detail was left out to stay within max_chars.
    pub truncated: bool,
}

/// The index's state: `snap` as of now, `live` and `cache` from the indexer.
pub(crate) fn run(
    snap: &Snapshot,
    live: &LiveStatus,
    (cache, store): (CacheReport, crate::store::StoreReport),
    p: StatusParams,
) -> Result<StatusOut, ToolError> {
    let max_chars = budget::check_max_chars(p.max_chars, budget::READ_DEFAULT)?;
    let mut out = status(snap, live, cache);
    out.store = Some(store.into());
    // shed detail until it fits: per-source rows, warnings, then the descriptive strings
    while json_len(&out) > max_chars && !out.sources.is_empty() {
        out.sources.pop();
        out.truncated = true;
    }
    if json_len(&out) > max_chars {
        out.warnings.clear();
        out.watch_error = None;
        out.projects_dir = None;
        out.pattern = None;
        out.indexed_at = None;
        out.cache.path = None;
        out.cache.rejected_because = None;
        out.cache.write_error = None;
        if let Some(st) = out.store.as_mut() {
            st.path = None;
            st.moved_aside = None;
            st.error = None;
        }
        out.truncated = true;
    }
    if json_len(&out) > max_chars {
        out.store = None;
    }
    if json_len(&out) > max_chars {
        out.sharing = None;
    }
    if json_len(&out) > max_chars {
        // `complete: false` and `state` still say that the build runs
        out.build = None;
    }
    if out.warnings.is_empty() {
        // a missing or empty directory still said in short, room permitting
        if let Some(n) = super::roots::note(snap, true) {
            out.warnings.push(n);
            if json_len(&out) > max_chars {
                out.warnings.clear();
            }
        }
    }
    Ok(out)
}

fn status(snap: &Snapshot, live: &LiveStatus, cache: CacheReport) -> StatusOut {
    let tally = snap.tally();
    let default_root = snap
        .roots
        .iter()
        .find(|r| r.adapter.name() == crate::transcript::default_adapter().name());
    StatusOut {
        projects: tally.projects,
        sessions: tally.sessions,
        subagents: tally.subagents,
        turns: snap.index.live_docs,
        files: snap.stats.files,
        bytes_indexed: snap.stats.bytes_indexed,
        skipped_lines: snap.stats.skipped_lines,
        generation: snap.generation,
        indexed_at: iso(snap.indexed_at),
        complete: snap.complete,
        state: state(snap, live).to_owned(),
        build: progress::building(snap),
        projects_dir: default_root.map(|r| r.dir.display().to_string()),
        pattern: default_root.map(|r| r.pattern.as_str().to_owned()),
        sharing: Some(SharingOut {
            role: match live.role().0 {
                crate::live::Role::Writer => SharingRole::Writer,
                crate::live::Role::Follower => SharingRole::Follower,
                crate::live::Role::Alone => SharingRole::Alone,
            },
            generation: live.role().1.1,
        }),
        watching: live.watching(),
        watch_mode: live.shown_mode().as_str().to_owned(),
        watch_error: live.error(),
        polled_dirs: live
            .polled()
            .into_iter()
            .map(|(dir, reason)| PolledDir {
                path: dir.display().to_string(),
                reason,
            })
            .collect(),
        pending_changes: live.pending.load(Ordering::Relaxed),
        last_update_ms: (snap.stats.last_update_ms * 1000.0).round() / 1000.0,
        debounce_ms: live.debounce_ms.load(Ordering::Relaxed),
        max_staleness_ms: live.max_staleness_ms.load(Ordering::Relaxed),
        updates: snap.stats.updates,
        files_added: snap.stats.files_added,
        files_appended: snap.stats.files_appended,
        files_reread: snap.stats.files_reread,
        files_removed: snap.stats.files_removed,
        segments: snap.index.segs.len(),
        sources: snap
            .stats
            .sources
            .iter()
            .map(|h| SourceOut {
                source: h.format.to_owned(),
                path: h.path.display().to_string(),
                exists: h.exists,
                files: h.files,
                sessions: h.sessions,
                subagents: h.subagents,
                turns: h.turns,
                skipped_lines: h.skipped_lines,
                unknown_records: h.unknown_records.clone(),
                files_without_turns: h.files_without_turns,
                warning: warning(h, snap.complete),
            })
            .collect(),
        cache: cache.into(),
        store: None,
        truncated: false,
        warnings: snap
            .stats
            .sources
            .iter()
            .filter_map(|h| warning(h, snap.complete))
            .collect(),
    }
}

/// A source's warning: a directory that does not exist or holds no transcript named with what
/// to pass instead, else what the corpus found wrong with its files.
fn warning(h: &crate::corpus::SourceHealth, complete: bool) -> Option<String> {
    super::roots::sentence(h, complete, false).or_else(|| h.warning.clone())
}

/// See [`StatusOut::state`].
fn state(snap: &Snapshot, live: &LiveStatus) -> &'static str {
    if snap.complete {
        "ready"
    } else if live.begun() || snap.progress.get().files_total > 0 {
        "building"
    } else {
        "starting"
    }
}

pub(crate) const DEF: ToolDef = ToolDef {
    name: "index_status",
    title: "Index status",
    description: DESCRIPTION,
    lane: Lane::Light,
    input: input_schema::<StatusParams>,
    output: output_schema::<StatusOut>,
    call,
};

fn call(ctx: &Ctx<'_>, args: JsonObject) -> Result<serde_json::Value, ToolError> {
    super::invoke(DEF.name, args, |p| {
        run(
            ctx.snap,
            ctx.live,
            (ctx.shared.cache_report(), ctx.shared.store_report()),
            p,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::{LiveConfig, Role};

    #[test]
    fn before_the_indexer_starts_the_configured_values_show() {
        let cfg = LiveConfig {
            debounce: std::time::Duration::from_millis(2000),
            ..LiveConfig::default()
        };
        let live = LiveStatus::configured(&cfg);
        let out = status(&Snapshot::default(), &live, CacheReport::default());
        assert_eq!(out.state, "starting");
        assert_eq!(out.debounce_ms, 2000);
        assert_eq!(out.watch_mode, "watch");
        assert!(!out.watching);
        live.begin();
        assert_eq!(
            status(&Snapshot::default(), &live, CacheReport::default()).state,
            "building"
        );
        live.set_role(Role::Follower);
        let out = status(&Snapshot::default(), &live, CacheReport::default());
        assert_eq!(out.watch_mode, "");
    }
}
