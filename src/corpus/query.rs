//! Search over a snapshot: filters, BM25 over the live segments (in two threads when the
//! postings are long), copies of a turn collapsed to their earliest, and snippets. The domain
//! behind `search_conversations` and the CLI's `search`; browsing lives in `browse`.
use super::Snapshot;
use super::catalog::Conversation;
use crate::index::segment::{FIELD_ASSISTANT, FIELD_USER};
use crate::index::{self, Bm25, Hit, Tokenizer, facts, snippet};
use crate::util::hash::FxHashSet;
use std::sync::Arc;

/// Postings (summed document frequency of the query terms) above which a search runs on two
/// threads.
const PARALLEL_POSTINGS: u64 = 200_000;

/// Characters of turn text shown in a search result.
pub const SNIPPET_CHARS: usize = 300;

/// Where the query must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchRole {
    User,
    Assistant,
}

/// Result order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    #[default]
    Relevance,
    Recent,
}

/// A search request, validated.
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
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
    /// Time budget and cancellation: a stopped search returns what it found so far.
    pub stop: index::Stop,
}

/// One search hit.
#[derive(Debug, Clone)]
pub struct SearchHit {
    pub conv: Arc<Conversation>,
    pub project: String,
    pub turn: u32,
    pub score: f64,
    pub timestamp: Option<i64>,
    pub snippet: String,
    /// The query's keywords, phrases and prefixes this turn matched.
    pub matched_terms: Vec<String>,
    /// True when the terms occur only in tool names, file paths or commands.
    pub tools_only: bool,
}

#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// Matching turns; a lower bound when `total_exact` is false (large indexes stop counting
    /// matches that cannot rank).
    pub total: usize,
    pub total_exact: bool,
    pub hits: Vec<SearchHit>,
    /// False when the plan had nothing to search for (e.g. only exclusions).
    pub searchable: bool,
    /// True when the time budget or a cancellation ended the search early.
    pub stopped: bool,
}

/// The prose of a turn a snippet is cut from: prompt and reply.
pub fn prose(user: &str, assistant: &str) -> String {
    match (user.is_empty(), assistant.is_empty()) {
        (false, false) => format!("{user}\n{assistant}"),
        (false, true) => user.to_owned(),
        _ => assistant.to_owned(),
    }
}

impl Snapshot {
    /// Project name of a conversation.
    pub fn project_of(&self, conv: &Conversation) -> String {
        self.catalog.project_name(conv)
    }

    /// Per-conversation verdict of the conversation-level filters (None: no such filter).
    fn conv_filter(&self, req: &SearchRequest) -> Option<Vec<bool>> {
        let only = req
            .session_id
            .as_deref()
            .map(|id| self.catalog.by_id(id).map(|c| c.conv));
        if req.project.is_none()
            && req.source.is_none()
            && req.git_branch.is_none()
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

    pub fn search(&self, req: &SearchRequest) -> SearchOutcome {
        let mut tok = Tokenizer::new();
        let mut plan = index::query::parse(&req.query, &mut tok);
        if plan.is_empty() {
            return SearchOutcome {
                total: 0,
                total_exact: true,
                hits: Vec::new(),
                searchable: false,
                stopped: false,
            };
        }
        plan.stop = req.stop.clone();
        let conv_ok = self.conv_filter(req);
        let conv_passes = |c: u32| {
            conv_ok
                .as_ref()
                .is_none_or(|ok| ok.get(c as usize).copied().unwrap_or(false))
        };
        let tool = req.tool.as_ref().map(|t| t.to_lowercase());
        let file = req.file.as_ref().map(|f| f.to_lowercase());
        let role_bit = req.role.map(|r| match r {
            MatchRole::User => 1u8 << FIELD_USER,
            MatchRole::Assistant => 1u8 << FIELD_ASSISTANT,
        });
        // whether a document passes the filters (duplicates are collapsed by the caller's set)
        let passes = |si: usize, d: u32, meta: &index::DocMeta, fields: u8| {
            if !conv_passes(meta.conv) || self.catalog.get(meta.conv).is_none() {
                return false;
            }
            if req.since.is_some_and(|s| meta.timestamp < s)
                || req.until.is_some_and(|u| meta.timestamp >= u)
            {
                return false;
            }
            if role_bit.is_some_and(|bit| fields & bit == 0) {
                return false;
            }
            if tool.is_some() || file.is_some() {
                let tools = self.index.segs[si].seg.text(d).tools;
                if let Some(t) = &tool {
                    if !facts::tool_names(tools).any(|n| n.to_lowercase() == *t) {
                        return false;
                    }
                }
                if let Some(f) = &file {
                    if !facts::files(tools).any(|(_, p)| p.to_lowercase().contains(f.as_str())) {
                        return false;
                    }
                }
            }
            true
        };
        let collapsible =
            |key: u64| key != 0 && !self.dup_multi.is_empty() && self.dup_multi.contains(&key);
        let key = |h: &Hit| {
            let meta = self.index.segs[h.seg].seg.doc(h.doc);
            let id = self.catalog.get(meta.conv).map_or("", |c| c.id.as_str());
            (id, meta.turn)
        };
        let ts = |h: &Hit| self.index.segs[h.seg].seg.doc(h.doc).timestamp;
        let rank = |a: &Hit, b: &Hit| match req.sort {
            SortOrder::Relevance => index::scoring::by_score(a, b, |a, b| key(a).cmp(&key(b))),
            SortOrder::Recent => ts(b).cmp(&ts(a)).then_with(|| key(a).cmp(&key(b))),
        };
        let want = req.offset + req.limit;
        let params = Bm25::default();
        // a document no filter can reject and that is no collapsible copy is counted as is
        let no_filters = conv_ok.is_none()
            && req.since.is_none()
            && req.until.is_none()
            && role_bit.is_none()
            && tool.is_none()
            && file.is_none();
        let surely = |seg: &index::Segment, d: u32| no_filters && !collapsible(seg.key_of(d));
        let (pruning, surely_on) = match req.sort {
            SortOrder::Relevance => (index::Pruning::ByScore, true),
            // the cheap count assumes relevance order
            SortOrder::Recent => (index::Pruning::Off, false),
        };
        let shared = std::sync::atomic::AtomicU32::new(0);
        let run = |scan: &[usize], shared: Option<&std::sync::atomic::AtomicU32>| {
            let mut seen: FxHashSet<u64> = FxHashSet::default();
            let accept = |si: usize, d: u32, meta: &index::DocMeta, fields: u8| {
                passes(si, d, meta, fields)
                    && (!collapsible(meta.dup_key) || seen.insert(meta.dup_key))
            };
            let surely = |seg: &index::Segment, d: u32| surely_on && surely(seg, d);
            index::evaluate(
                &self.index,
                scan,
                &plan,
                &params,
                accept,
                surely,
                want,
                rank,
                pruning,
                shared,
            )
        };
        // a broad query on a large index runs on two threads, each over half the segments
        // (a single term is pruned well enough on one thread)
        let work: u64 = plan.terms.iter().map(|t| self.index.df(&t.text)).sum();
        let eval =
            if work >= PARALLEL_POSTINGS && plan.labels.len() >= 2 && self.index.segs.len() >= 2 {
                let [a, b] = index::topk::halves(&self.index);
                let (ea, eb) = std::thread::scope(|s| {
                    let other = s.spawn(|| run(&b, Some(&shared)));
                    let mine = run(&a, Some(&shared));
                    (mine, other.join())
                });
                match eb {
                    Ok(eb) => {
                        let mut hits: Vec<Hit> = ea.hits.into_iter().chain(eb.hits).collect();
                        hits.sort_by(rank);
                        let mut seen: FxHashSet<u64> = FxHashSet::default();
                        hits.retain(|h| {
                            let k = self.index.segs[h.seg].seg.key_of(h.doc);
                            !collapsible(k) || seen.insert(k)
                        });
                        hits.truncate(want);
                        // copies split across the halves may be counted twice
                        let exact = ea.exact && eb.exact && self.dup_multi.is_empty();
                        index::Evaluation {
                            total: ea.total + eb.total,
                            exact,
                            hits,
                            stopped: ea.stopped || eb.stopped,
                        }
                    }
                    Err(_) => ea,
                }
            } else {
                let all: Vec<usize> = (0..self.index.segs.len()).collect();
                run(&all, None)
            };
        let (mut total, mut total_exact, stopped, top) =
            (eval.total, eval.exact, eval.stopped, eval.hits);
        // a single plain keyword without filters matches exactly its live documents
        if !total_exact
            && !stopped
            && no_filters
            && self.dup_multi.is_empty()
            && plan.terms.len() == 1
            && plan.prefixes.is_empty()
            && plan.excluded.is_empty()
            && plan.phrases.is_empty()
            && plan.excluded_phrases.is_empty()
        {
            total = self.index.df(&plan.terms[0].text) as usize;
            total_exact = true;
        }
        let hits = top
            .into_iter()
            .skip(req.offset)
            .filter_map(|h| {
                let (seg, doc) = self.earliest_copy(h.seg, h.doc, &conv_passes);
                let segment = &self.index.segs[seg].seg;
                let meta = segment.doc(doc);
                let conv = Arc::clone(self.catalog.get(meta.conv)?);
                let text = segment.text(doc);
                let snippet = snippet::centred(
                    &prose(text.user, text.assistant),
                    text.tools,
                    &plan,
                    SNIPPET_CHARS,
                );
                Some(SearchHit {
                    project: self.project_of(&conv),
                    conv,
                    turn: meta.turn,
                    score: index::scoring::quantize(h.score) as f64 / 10_000.0,
                    timestamp: (meta.timestamp != i64::MIN).then_some(meta.timestamp),
                    snippet: snippet.text,
                    matched_terms: plan.matched_labels(h.groups),
                    tools_only: snippet.tools_only,
                })
            })
            .collect();
        SearchOutcome {
            total,
            total_exact,
            hits,
            searchable: true,
            stopped,
        }
    }

    /// Among live copies of a document (same duplicate key) in conversations that pass the
    /// filter, the one in the earliest conversation (first timestamp, then id).
    pub(super) fn earliest_copy(
        &self,
        seg: usize,
        doc: u32,
        passes: &dyn Fn(u32) -> bool,
    ) -> (usize, u32) {
        let key = self.index.segs[seg].seg.doc(doc).dup_key;
        if key == 0 || !self.dup_multi.contains(&key) {
            return (seg, doc);
        }
        let rank = |s: usize, d: u32| {
            let c = self.catalog.get(self.index.segs[s].seg.doc(d).conv);
            (
                c.and_then(|c| c.meta.created()).unwrap_or(i64::MAX),
                c.map(|c| c.id.clone()).unwrap_or_default(),
            )
        };
        let mut best = (seg, doc);
        let mut best_rank = rank(seg, doc);
        for (si, sv) in self.index.segs.iter().enumerate() {
            for d in sv.seg.docs_with_dup(key) {
                if sv.dead.contains(d)
                    || !passes(sv.seg.doc(d).conv)
                    || self.catalog.get(sv.seg.doc(d).conv).is_none()
                {
                    continue;
                }
                let r = rank(si, d);
                if r < best_rank {
                    best_rank = r;
                    best = (si, d);
                }
            }
        }
        best
    }
}
