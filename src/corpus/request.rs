//! A search request, validated, and its filters prepared once per search: a verdict per
//! conversation (session, project, source, branch, scope) and the checks each matching
//! document must pass (time, role, tool, file). `query` evaluates; this says what passes.
use super::Snapshot;
use super::project::Scope;
use crate::index::schema::{FIELD_ASSISTANT, FIELD_USER};
use crate::index::{self, DocMeta, facts};

/// Where the query must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MatchRole {
    User,
    Assistant,
}

/// Result order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum SortOrder {
    #[default]
    Relevance,
    Recent,
}

/// A search request, validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchRequest {
    pub query: String,
    pub limit: usize,
    pub offset: usize,
    pub session_id: Option<String>,
    pub project: Option<String>,
    /// Only conversations of this format.
    pub source: Option<String>,
    /// Epoch-ms bounds on the turn's timestamp (inclusive since, exclusive until).
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub git_branch: Option<String>,
    pub role: Option<MatchRole>,
    /// Only turns that used this tool (case-insensitive name).
    pub tool: Option<String>,
    /// Only turns whose tool calls touched a path containing this (case-insensitive).
    pub file: Option<String>,
    pub sort: SortOrder,
    /// Only this project's conversations, or all (where this project's turns get the prior).
    pub scope: Scope,
    /// Time budget and cancellation: a stopped search returns what it found so far.
    pub stop: index::Stop,
}

/// A request's per-document filters, prepared once.
#[derive(Clone)]
pub(super) struct Filters {
    /// Per conversation: whether it passes the conversation-level filters (`None`: no such
    /// filter).
    pub(super) conv_ok: Option<Vec<bool>>,
    pub(super) since: Option<i64>,
    pub(super) until: Option<i64>,
    /// The field bit the query must match in.
    pub(super) role_bit: Option<u8>,
    /// Lowercased.
    pub(super) tool: Option<String>,
    pub(super) file: Option<String>,
    /// The documents a time prior splits off: `(start, end, inside)` keeps the turns whose
    /// timestamp is in `[start, end)` when `inside`, the others when not.
    pub(super) window: Option<(i64, i64, bool)>,
}

impl Filters {
    pub(super) fn new(snap: &Snapshot, req: &SearchRequest) -> Self {
        Self {
            conv_ok: snap.conv_filter(req),
            since: req.since,
            until: req.until,
            role_bit: req.role.map(|r| match r {
                MatchRole::User => 1u8 << FIELD_USER,
                MatchRole::Assistant => 1u8 << FIELD_ASSISTANT,
            }),
            tool: req.tool.as_ref().map(|t| t.to_lowercase()),
            file: req.file.as_ref().map(|f| f.to_lowercase()),
            window: None,
        }
    }

    pub(super) fn conv_passes(&self, conv: u32) -> bool {
        self.conv_ok
            .as_ref()
            .is_none_or(|ok| ok.get(conv as usize).copied().unwrap_or(false))
    }

    /// True when no filter can reject a document.
    pub(super) fn none(&self) -> bool {
        self.conv_ok.is_none()
            && self.since.is_none()
            && self.until.is_none()
            && self.role_bit.is_none()
            && self.tool.is_none()
            && self.file.is_none()
            && self.window.is_none()
    }

    /// Whether document `d` of segment `si`, which matched in `fields`, passes (copies of a
    /// turn are collapsed by the caller).
    pub(super) fn passes(
        &self,
        snap: &Snapshot,
        si: usize,
        d: u32,
        meta: &DocMeta,
        fields: u8,
    ) -> bool {
        if !self.conv_passes(meta.conv) || snap.catalog.get(meta.conv).is_none() {
            return false;
        }
        if self.since.is_some_and(|s| meta.timestamp < s)
            || self.until.is_some_and(|u| meta.timestamp >= u)
        {
            return false;
        }
        if let Some((start, end, inside)) = self.window {
            if (start..end).contains(&meta.timestamp) != inside {
                return false;
            }
        }
        if self.role_bit.is_some_and(|bit| fields & bit == 0) {
            return false;
        }
        if self.tool.is_none() && self.file.is_none() {
            return true;
        }
        let tools = snap.index.segs[si].seg.text(d).tools;
        self.tool
            .as_ref()
            .is_none_or(|t| facts::tool_names(tools).any(|n| n.to_lowercase() == *t))
            && self.file.as_ref().is_none_or(|f| {
                facts::files(tools).any(|(_, p)| p.to_lowercase().contains(f.as_str()))
            })
    }
}

impl Snapshot {
    /// Per-conversation verdict of the conversation-level filters (None: no such filter).
    pub(super) fn conv_filter(&self, req: &SearchRequest) -> Option<Vec<bool>> {
        let only = req
            .session_id
            .as_deref()
            .map(|id| self.catalog.by_id(id).map(|c| c.conv));
        if req.project.is_none()
            && req.source.is_none()
            && req.git_branch.is_none()
            && req.scope == Scope::All
            && only.is_none()
        {
            return None;
        }
        let project = req.project.as_ref().map(|p| p.to_lowercase());
        let branch = req.git_branch.as_ref().map(|b| b.to_lowercase());
        let mut ok = vec![
            false;
            self.catalog
                .iter()
                .map(|c| c.conv as usize + 1)
                .max()
                .unwrap_or(0)
        ];
        for c in self.catalog.iter() {
            ok[c.conv as usize] = only.is_none_or(|o| o == Some(c.conv))
                && self.in_scope(req.scope, c)
                && project
                    .as_deref()
                    .is_none_or(|p| self.catalog.project_matches(c, p))
                && req.source.as_deref().is_none_or(|s| c.source() == s)
                && branch.as_deref().is_none_or(|b| {
                    c.meta
                        .git_branch
                        .as_deref()
                        .is_some_and(|g| g.to_lowercase() == b)
                });
        }
        Some(ok)
    }
}
