//! What every answer given during the first index build says about it: `complete: false`, a
//! `build` object (files and bytes done of total) and a note.
use crate::corpus::Snapshot;
use rmcp::schemars::JsonSchema;
use serde::Serialize;

/// How far the first index build is.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct BuildOut {
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
}

/// The build's progress while it runs (None once the index is complete).
pub(crate) fn building(snap: &Snapshot) -> Option<BuildOut> {
    if snap.complete {
        return None;
    }
    let p = snap.progress.get();
    Some(BuildOut {
        files_done: p.files_done,
        files_total: p.files_total,
        bytes_done: p.bytes_done,
        bytes_total: p.bytes_total,
    })
}

/// The note for an answer given during the build (`short`: for small budgets).
pub(crate) fn note(b: &BuildOut, short: bool) -> String {
    if b.files_total == 0 {
        // files not found yet, or the persistent index being loaded
        return if short {
            "index loading: partial".to_owned()
        } else {
            "The index is being loaded: results are partial; ask again in a moment.".to_owned()
        };
    }
    if short {
        return format!(
            "index build running ({}/{} files): partial",
            b.files_done, b.files_total
        );
    }
    format!(
        "The first index build is running ({} of {} files, {} of {} MB): results are partial; ask again later for complete ones.",
        b.files_done,
        b.files_total,
        b.bytes_done >> 20,
        b.bytes_total >> 20
    )
}

/// Appends `more` to an optional note.
pub(crate) fn join(note: Option<String>, more: String) -> Option<String> {
    Some(match note {
        Some(n) => format!("{n} {more}"),
        None => more,
    })
}

/// Sentences to add to "not found" errors: the first build still running, and transcripts
/// directories that yield nothing (see [`super::roots`]); "" when neither.
pub(crate) fn hint(snap: &Snapshot) -> String {
    let mut out = match building(snap) {
        Some(b) => format!(
            " The first index build is still running ({} of {} files indexed); it may not be indexed yet: try again shortly.",
            b.files_done, b.files_total
        ),
        None => String::new(),
    };
    if let Some(n) = super::roots::note(snap, false) {
        out.push(' ');
        out.push_str(&n);
    }
    out
}

/// Appends an optional `more` to an optional note.
pub(crate) fn join_opt(note: Option<String>, more: Option<String>) -> Option<String> {
    match more {
        Some(m) => join(note, m),
        None => note,
    }
}
