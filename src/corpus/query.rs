//! Search over a snapshot: BM25 over the live segments (in two threads when the postings are
//! long), copies of a turn collapsed to their earliest, and snippets. The domain behind
//! `search_conversations` and the CLI's `search`; the request and its filters live in
//! `request`, browsing in `browse`.
use super::Snapshot;
use super::catalog::Conversation;
use super::project::{PROJECT_PRIOR, Scope};
use super::request::Filters;
pub(crate) use super::request::{MatchRole, SearchRequest, SortOrder};
use crate::index::scoring::QueryWeights;
use crate::index::{
    self, Bm25, DocMeta, EvalRequest, Evaluation, Hit, Lead, Plan, Pruning, Segment, Tokenizer,
    snippet,
};
use rustc_hash::FxHashSet;
use std::cmp::Ordering;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

/// Postings (summed document frequency of the query terms) above which a search runs on two
/// threads.
const PARALLEL_POSTINGS: u64 = 200_000;

/// Characters of turn text shown in a search result.
pub(crate) const SNIPPET_CHARS: usize = 300;

/// One search hit.
#[derive(Debug, Clone)]
pub(crate) struct SearchHit {
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
    /// True when the turn matched only through its context (the previous turn's prompt).
    pub context_only: bool,
    /// The conversation belongs to the server's project.
    pub this_project: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct SearchOutcome {
    /// Matching turns; a lower bound when `total_exact` is false (large indexes stop counting
    /// matches that cannot rank).
    pub total: usize,
    pub total_exact: bool,
    pub hits: Vec<SearchHit>,
    /// False when the plan had nothing to search for (e.g. only exclusions).
    pub searchable: bool,
    /// True when the time budget or a cancellation ended the search early.
    pub stopped: bool,
    /// The time the query named, which raised the turns from it (see [`super::when`]).
    pub time: Option<super::when::TimeInQuery>,
    /// For a query with quoted phrases: how many turns hold them (they rank first).
    pub quoted: Option<Quoted>,
}

/// What a search found of its quoted phrases.
#[derive(Debug, Clone)]
pub(crate) struct Quoted {
    /// The phrases as written, in their quotes.
    pub phrases: Vec<String>,
    /// Turns holding every phrase (and passing the filters); a lower bound when `held_exact`
    /// is false.
    pub held: usize,
    pub held_exact: bool,
}

/// One search: the request, its plan and filters, over a snapshot. Its methods are the
/// steps of [`Snapshot::search`].
pub(super) struct Search<'s> {
    pub(super) snap: &'s Snapshot,
    pub(super) req: &'s SearchRequest,
    pub(super) plan: &'s Plan,
    pub(super) filters: Filters,
    /// The span of time the query named: its turns get [`QueryWeights::time`] as a prior.
    pub(super) time: Option<(i64, i64)>,
    /// How many of the best matches to find (`offset + limit`, or more).
    pub(super) k: usize,
}

impl Search<'_> {
    /// The best `k` matches and their count: with the project prior in effect, this project's
    /// conversations and the others' apart, then merged under the prior.
    pub(super) fn run(&self) -> Evaluation {
        match self
            .snap
            .prior_split(self.req, self.filters.conv_ok.as_deref())
        {
            Some((inside, outside)) => {
                let part = |ok: Vec<bool>| {
                    let filters = Filters {
                        conv_ok: Some(ok),
                        ..self.filters.clone()
                    };
                    Search { filters, ..*self }.evaluate_timed()
                };
                self.snap
                    .merge_prior(part(inside), part(outside), PROJECT_PRIOR, self.k)
            }
            None => self.evaluate_timed(),
        }
    }

    /// [`Self::evaluate`] under the time prior, when the query named a time: the turns from
    /// it and the others apart, then merged with the first's scores multiplied by the prior.
    fn evaluate_timed(&self) -> Evaluation {
        let Some((start, end)) = self.time else {
            return self.evaluate();
        };
        let part = |inside: bool| {
            let filters = Filters {
                window: Some((start, end, inside)),
                ..self.filters.clone()
            };
            Search { filters, ..*self }.evaluate()
        };
        let prior = QueryWeights::get().time;
        self.snap
            .merge_prior(part(true), part(false), prior, self.k)
    }

    /// The result order: relevance (rounded score, then conversation id and turn) or recency.
    fn rank(&self, a: &Hit, b: &Hit) -> Ordering {
        let meta = |h: &Hit| self.snap.index.segs[h.seg].seg.doc(h.doc);
        let key = |h: &Hit| {
            let m = meta(h);
            let id = self.snap.catalog.get(m.conv).map_or("", |c| c.id.as_str());
            (id, m.turn)
        };
        match self.req.sort {
            SortOrder::Relevance => index::scoring::by_score(a, b, |a, b| key(a).cmp(&key(b))),
            SortOrder::Recent => meta(b)
                .timestamp
                .cmp(&meta(a).timestamp)
                .then_with(|| key(a).cmp(&key(b))),
        }
    }

    /// The best `offset + limit` matches and their count. A broad query on a large index
    /// runs on two threads, each over half the segments (a single term is pruned well
    /// enough on one thread).
    fn evaluate(&self) -> Evaluation {
        let index = &self.snap.index;
        let work: u64 = self.plan.terms.iter().map(|t| index.df(&t.text)).sum();
        if work < PARALLEL_POSTINGS || self.plan.labels.len() < 2 || index.segs.len() < 2 {
            let all: Vec<usize> = (0..index.segs.len()).collect();
            return self.evaluate_part(&all, None);
        }
        let shared = AtomicU32::new(0);
        let [a, b] = index::topk::halves(index);
        let (ea, eb) = std::thread::scope(|s| {
            let other = s.spawn(|| self.evaluate_part(&b, Some(&shared)));
            let mine = self.evaluate_part(&a, Some(&shared));
            (mine, other.join())
        });
        match eb {
            Ok(eb) => self.merge(ea, eb),
            Err(_) => ea,
        }
    }

    /// Evaluates the segments `scan`, sharing the k-th best score with the other half.
    fn evaluate_part(&self, scan: &[usize], shared: Option<&AtomicU32>) -> Evaluation {
        let snap = self.snap;
        let (pruning, surely_on, lead) = match self.req.sort {
            SortOrder::Relevance => (Pruning::ByScore, true, Lead::Score),
            // the cheap count assumes relevance order
            SortOrder::Recent => (Pruning::Off, false, Lead::Newest),
        };
        let no_filters = self.filters.none();
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        let accept = |si: usize, d: u32, meta: &DocMeta, fields: u8| {
            self.filters.passes(snap, si, d, meta, fields)
                && (!snap.collapsible(meta.dup_key) || seen.insert(meta.dup_key))
        };
        // a document no filter can reject and that is no collapsible copy is counted as is
        let surely =
            |seg: &Segment, d: u32| surely_on && no_filters && !snap.collapsible(seg.key_of(d));
        // copies are collapsed to the first accepted: they must be offered in rank order
        let ordered = |seg: &Segment, d: u32| snap.collapsible(seg.key_of(d));
        let request = EvalRequest {
            view: &snap.index,
            scan,
            plan: self.plan,
            params: &Bm25::default(),
            k: self.want(),
            rank: |a: &Hit, b: &Hit| self.rank(a, b),
            lead,
            pruning,
            shared,
            ordered: &ordered,
        };
        index::evaluate(&request, accept, surely)
    }

    fn want(&self) -> usize {
        self.k
    }

    /// The two halves' results as one: ranked, copies collapsed, cut to what is wanted.
    fn merge(&self, a: Evaluation, b: Evaluation) -> Evaluation {
        let snap = self.snap;
        let mut hits: Vec<Hit> = a.hits.into_iter().chain(b.hits).collect();
        hits.sort_by(|x, y| self.rank(x, y));
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        hits.retain(|h| {
            let k = snap.index.segs[h.seg].seg.key_of(h.doc);
            !snap.collapsible(k) || seen.insert(k)
        });
        hits.truncate(self.want());
        Evaluation {
            total: a.total + b.total,
            // copies split across the halves may be counted twice
            exact: a.exact && b.exact && snap.dup_multi.is_empty(),
            hits,
            stopped: a.stopped || b.stopped,
        }
    }

    /// The match count and whether it is exact. A single plain keyword without filters
    /// matches exactly its live documents, however much pruning skipped.
    pub(super) fn count(&self, eval: &Evaluation) -> (usize, bool) {
        let plan = self.plan;
        if !eval.exact
            && !eval.stopped
            && self.filters.none()
            && self.snap.dup_multi.is_empty()
            && plan.terms.len() == 1
            && plan.prefixes.is_empty()
            && plan.excluded.is_empty()
            && plan.phrases.is_empty()
            && plan.excluded_phrases.is_empty()
        {
            return (self.snap.index.df(&plan.terms[0].text) as usize, true);
        }
        (eval.total, eval.exact)
    }

    /// A hit as the caller sees it: the earliest copy of the turn, with its snippet.
    pub(super) fn hit(&self, h: &Hit) -> Option<SearchHit> {
        let snap = self.snap;
        let conv_passes = |c: u32| self.filters.conv_passes(c);
        let (seg, doc) = snap.earliest_copy(h.seg, h.doc, &conv_passes);
        let segment = &snap.index.segs[seg].seg;
        let meta = segment.doc(doc);
        let conv = Arc::clone(snap.catalog.get(meta.conv)?);
        let text = segment.text(doc);
        let snippet = snippet::centred(
            &prose(text.user, text.assistant),
            text.tools,
            self.plan,
            SNIPPET_CHARS,
        );
        Some(SearchHit {
            project: snap.project_of(&conv),
            this_project: snap.in_project(&conv),
            conv,
            turn: meta.turn,
            score: index::scoring::quantize(h.score) as f64 / 10_000.0,
            timestamp: (meta.timestamp != i64::MIN).then_some(meta.timestamp),
            snippet: snippet.text,
            matched_terms: self.plan.matched_labels(h.groups),
            tools_only: snippet.tools_only,
            context_only: h.fields == 1 << index::schema::FIELD_CONTEXT,
        })
    }
}

/// The prose of a turn a snippet is cut from: prompt and reply.
pub(crate) fn prose(user: &str, assistant: &str) -> String {
    match (user.is_empty(), assistant.is_empty()) {
        (false, false) => format!("{user}\n{assistant}"),
        (false, true) => user.to_owned(),
        _ => assistant.to_owned(),
    }
}

impl Snapshot {
    /// Project name of a conversation.
    pub(crate) fn project_of(&self, conv: &Conversation) -> String {
        self.catalog.project_name(conv)
    }

    pub(crate) fn search(&self, req: &SearchRequest) -> SearchOutcome {
        // a time ranks in relevance order only; in recency order its words stay text
        let time = (req.sort == SortOrder::Relevance)
            .then(|| super::when::read(&req.query, super::when::now()))
            .flatten();
        let text = time
            .as_ref()
            .map_or(req.query.as_str(), |t| t.rest.as_str());
        let plan = self.plan(index::query::parse(text, &mut Tokenizer::new()), req);
        if plan.is_empty() {
            return SearchOutcome {
                total: 0,
                total_exact: true,
                hits: Vec::new(),
                searchable: false,
                stopped: false,
                time: None,
                quoted: None,
            };
        }
        let search = Search {
            snap: self,
            req,
            filters: Filters::new(self, req),
            plan: &plan,
            time: time.as_ref().map(|t| (t.start, t.end)),
            k: req.offset + req.limit,
        };
        if !plan.phrases.is_empty() {
            let words = self.plan(index::query::parse_words(text, &mut Tokenizer::new()), req);
            let mut outcome = self.phrase_first(&search, &words);
            outcome.time = time;
            return outcome;
        }
        let eval = search.run();
        let (total, total_exact) = search.count(&eval);
        let hits = eval
            .hits
            .iter()
            .skip(req.offset)
            .filter_map(|h| search.hit(h))
            .collect();
        SearchOutcome {
            total,
            total_exact,
            hits,
            searchable: true,
            stopped: eval.stopped,
            time,
            quoted: None,
        }
    }

    /// A parsed query made ready for `req`: its words' other forms added, its stop set.
    fn plan(&self, mut plan: Plan, req: &SearchRequest) -> Plan {
        let forms = index::scoring::QueryWeights::get().word_form;
        index::forms::add_forms(&mut plan, &self.index, forms);
        plan.stop = req.stop.clone();
        plan
    }

    /// With the prior in effect (relevance order over every project, a known project holding
    /// some but not all of the conversations that pass the filters): the filter split into this
    /// project's conversations and the others'.
    pub(super) fn prior_split(
        &self,
        req: &SearchRequest,
        conv_ok: Option<&[bool]>,
    ) -> Option<(Vec<bool>, Vec<bool>)> {
        if !self.project.prior || req.scope != Scope::All || req.sort != SortOrder::Relevance {
            return None;
        }
        let len = self.catalog.iter().map(|c| c.conv as usize + 1).max()?;
        let (mut inside, mut outside) = (vec![false; len], vec![false; len]);
        for c in self.catalog.iter() {
            let i = c.conv as usize;
            if conv_ok.is_some_and(|ok| !ok.get(i).copied().unwrap_or(false)) {
                continue;
            }
            if self.in_project(c) {
                inside[i] = true;
            } else {
                outside[i] = true;
            }
        }
        (inside.contains(&true) && outside.contains(&true)).then_some((inside, outside))
    }

    /// The best hits of both sides of a split (this project's and the others', a time's and
    /// the others'), the inside's scores multiplied by `prior`: exactly the best of all
    /// documents under the prior.
    fn merge_prior(
        &self,
        inside: Evaluation,
        outside: Evaluation,
        prior: f32,
        k: usize,
    ) -> Evaluation {
        let boosted = inside.hits.into_iter().map(|mut h| {
            h.score *= prior;
            h.rounded = index::scoring::quantize(h.score);
            h
        });
        let mut hits: Vec<Hit> = boosted.chain(outside.hits).collect();
        let key = |h: &Hit| {
            let meta = self.index.segs[h.seg].seg.doc(h.doc);
            let id = self.catalog.get(meta.conv).map_or("", |c| c.id.as_str());
            (id, meta.turn)
        };
        hits.sort_by(|a, b| index::scoring::by_score(a, b, |a, b| key(a).cmp(&key(b))));
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        hits.retain(|h| {
            let k = self.index.segs[h.seg].seg.key_of(h.doc);
            k == 0 || !self.dup_multi.contains(&k) || seen.insert(k)
        });
        hits.truncate(k);
        Evaluation {
            total: inside.total + outside.total,
            exact: inside.exact && outside.exact && self.dup_multi.is_empty(),
            hits,
            stopped: inside.stopped || outside.stopped,
        }
    }

    /// Whether copies of documents with this duplicate key are collapsed to one.
    pub(super) fn collapsible(&self, key: u64) -> bool {
        key != 0 && !self.dup_multi.is_empty() && self.dup_multi.contains(&key)
    }

    /// Among live copies of a document (same duplicate key) in conversations that pass the
    /// filter, the one in the earliest conversation (first timestamp, then id).
    pub(super) fn earliest_copy(
        &self,
        seg: usize,
        doc: u32,
        passes: &dyn Fn(u32) -> bool,
    ) -> (usize, u32) {
        let key = self.index.segs[seg].seg.key_of(doc);
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
                    || !passes(sv.seg.convs()[d as usize])
                    || self.catalog.get(sv.seg.convs()[d as usize]).is_none()
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
