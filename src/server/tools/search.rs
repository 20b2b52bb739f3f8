//! `search_conversations`: BM25 search over every indexed turn, with query operators, filters,
//! paging, match-centred snippets and an output budget.
use super::budget::{self, json_len};
use super::progress::{self, BuildOut};
use super::{check_limit, check_offset, check_source, check_time, iso};
use crate::corpus::Snapshot;
use crate::corpus::project::Scope;
use crate::corpus::query::{MatchRole, SearchRequest, SortOrder};
use crate::index::Stop;
use crate::server::choice::{self, SourceName};
use crate::server::toolset::{Ctx, Lane, ToolDef};
use crate::server::{ToolError, input_schema, output_schema};
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) const DESCRIPTION: &str = "Search past coding-agent conversations (sessions and sub-agents) \
by keywords, ranked with BM25. Stack distinctive keywords and exact identifiers: \
`watchdog reindex debounce`, `notify_debouncer`, `E0502`, `src/index/mod.rs`. Syntax: keywords \
(any may match; more and rarer ones rank higher), \"exact phrase\" (turns holding it rank \
first, then turns with its words), -word or -\"phrase\" (excluded), prefix*. Identifiers match whole and by their parts; case-insensitive. The \
server's own project ranks slightly higher (this_project). Results carry a snippet around the \
matches; read a whole turn with read_turn. Page with offset.";

pub(crate) const DEF: ToolDef = ToolDef {
    name: "search_conversations",
    title: "Search past conversations",
    description: DESCRIPTION,
    lane: Lane::Heavy,
    input: input_schema::<SearchParams>,
    output: output_schema::<SearchResponse>,
    call,
};

fn call(ctx: &Ctx<'_>, args: JsonObject) -> Result<serde_json::Value, ToolError> {
    super::invoke(DEF.name, args, |p| run_with(ctx.snap, p, ctx.stop))
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct SearchParams {
    /// Keywords, "exact phrases", -excluded words, prefix*.
    pub query: String,
    /// Results per page (1-100, default 10).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Results to skip (paging).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Only this conversation (session or sub-agent id).
    #[serde(default)]
    pub session_id: Option<String>,
    /// Only projects whose name, directory or cwd contains this.
    #[serde(default)]
    pub project: Option<String>,
    /// Only transcripts of this agent.
    #[serde(default)]
    pub source: Option<SourceName>,
    /// Only turns at or after: ISO date/datetime or an age (7d, 12h, 30m).
    #[serde(default)]
    pub since: Option<String>,
    /// Only turns before: ISO date (whole day included)/datetime or an age.
    #[serde(default)]
    pub until: Option<String>,
    /// Only sessions on this git branch.
    #[serde(default)]
    pub git_branch: Option<String>,
    /// Where the match must be: the prompt (user) or the reply (assistant).
    #[serde(default, deserialize_with = "choice::optional")]
    pub role: Option<MatchRole>,
    /// Only turns that used this tool (e.g. Bash, Edit).
    #[serde(default)]
    pub tool: Option<String>,
    /// Only turns whose tool calls touched a path containing this.
    #[serde(default)]
    pub file: Option<String>,
    /// Order: relevance (default) or recent.
    #[serde(default, deserialize_with = "choice::optional")]
    pub sort: Option<SortOrder>,
    /// project: only the server's project (its folder, subfolders, git worktrees); all: every
    /// project (default).
    #[serde(default, deserialize_with = "choice::optional")]
    pub scope: Option<Scope>,
    /// Most characters of JSON to return (500-60000, default 6000).
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct SearchResult {
    /// For read_turn / read_conversation.
    pub session_id: String,
    /// The agent that wrote the transcript.
    pub source: String,
    pub project: String,
    /// True when the conversation belongs to the server's project.
    pub this_project: bool,
    pub turn_number: u32,
    pub score: f64,
    /// Text around the densest cluster of matches.
    pub snippet: String,
    /// The query's keywords, phrases and prefixes this turn matched.
    pub matched_terms: Vec<String>,
    /// When the turn started (ISO 8601, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Set when the terms occur only in tool names, paths or commands, or only in the
    /// previous turn's prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// For a sub-agent: the session that spawned it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_description: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct SearchResponse {
    pub results: Vec<SearchResult>,
    pub query: String,
    /// Matching turns before paging (with a quoted phrase: the turns holding its words, those
    /// holding the phrase first); a lower bound when total_exact is false.
    pub total: usize,
    pub total_exact: bool,
    pub offset: usize,
    /// Offset of the next page, when more results exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when results were left out or shortened to fit max_chars.
    pub truncated: bool,
    /// False while the first index build runs or when the time budget cut the search short.
    pub complete: bool,
    /// Present while the first index build runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Validates the arguments into a domain request.
pub(crate) fn request(snap: &Snapshot, p: &SearchParams) -> Result<SearchRequest, ToolError> {
    if p.query.trim().is_empty() {
        return Err(ToolError::new(
            "`query` must not be empty: give one or more keywords.",
        ));
    }
    if let Some(id) = &p.session_id {
        if snap.catalog.by_id(id).is_none() {
            return Err(ToolError::new(format!(
                "Unknown session_id: {id}. Use list_conversations or search without session_id to find ids.{}",
                progress::hint(snap)
            )));
        }
    }
    let nonempty = |v: &Option<String>| {
        v.as_ref()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    Ok(SearchRequest {
        query: p.query.clone(),
        limit: check_limit(p.limit, 10)?,
        offset: check_offset(p.offset)?,
        session_id: p.session_id.clone(),
        project: nonempty(&p.project),
        source: check_source(p.source.as_ref().map(|s| s.0.as_str()))?,
        since: check_time("since", p.since.as_deref(), false)?,
        until: check_time("until", p.until.as_deref(), true)?,
        git_branch: nonempty(&p.git_branch),
        role: p.role,
        tool: nonempty(&p.tool),
        file: nonempty(&p.file),
        sort: p.sort.unwrap_or_default(),
        scope: p.scope.unwrap_or_default(),
        stop: Stop::default(),
    })
}

/// Runs a search without a time budget (the CLI).
pub(crate) fn run(snap: &Snapshot, p: SearchParams) -> Result<SearchResponse, ToolError> {
    run_with(snap, p, &Stop::default())
}

/// Runs a search that stops when `stop` says so.
pub(crate) fn run_with(
    snap: &Snapshot,
    p: SearchParams,
    stop: &Stop,
) -> Result<SearchResponse, ToolError> {
    let max_chars = budget::check_max_chars(p.max_chars, budget::SEARCH_DEFAULT)?;
    let mut req = request(snap, &p)?;
    req.stop = stop.clone();
    let outcome = snap.search(&req);
    let build = progress::building(snap);
    let mut rows: Vec<SearchResult> = outcome
        .hits
        .into_iter()
        .map(|h| SearchResult {
            session_id: h.conv.id.clone(),
            source: h.conv.source().to_owned(),
            project: h.project,
            this_project: h.this_project,
            turn_number: h.turn,
            score: h.score,
            snippet: h.snippet,
            matched_terms: h.matched_terms,
            timestamp: iso(h.timestamp),
            note: if h.context_only {
                Some("matched only through the previous turn's prompt".to_owned())
            } else {
                h.tools_only
                    .then(|| "matched only in tool names, file paths or commands".to_owned())
            },
            slug: h.conv.meta.slug.clone(),
            parent_session_id: h.conv.parent.clone(),
            agent_type: h.conv.agent_type().map(str::to_owned),
            agent_description: h.conv.agent_description().map(str::to_owned),
        })
        .collect();
    let page = Page {
        query: budget::clip(&p.query, budget::echo_chars(max_chars)),
        total: outcome.total,
        exact: outcome.total_exact && build.is_none(),
        offset: req.offset,
        available: rows.len(),
        searchable: outcome.searchable,
        stopped: outcome.stopped && !stop.cancelled(),
        build,
        roots: super::roots::note(snap, max_chars < 1500),
        short: max_chars < 1500,
        max_chars,
        time: outcome.time.as_ref().map(time_note),
        quoted: outcome
            .quoted
            .as_ref()
            .and_then(|q| quoted_note(q, outcome.total, max_chars < 1500)),
    };
    let mut n = budget::fitting(&rows, max_chars, |n| json_len(&page.envelope(n, false)));
    let mut shrunk = false;
    if n == 0 && !rows.is_empty() {
        let room = budget::room_for_one(max_chars, json_len(&page.envelope(1, true)));
        shrink(&mut rows[0], room);
        shrunk = true;
        n = 1;
    }
    rows.truncate(n);
    let mut resp = page.envelope(n, shrunk);
    resp.results = rows;
    while json_len(&resp) > max_chars && resp.results.len() > 1 {
        resp.results.pop();
        let n = resp.results.len();
        let rows = std::mem::take(&mut resp.results);
        resp = page.envelope(n, shrunk);
        resp.results = rows;
    }
    Ok(resp)
}

/// What a response says besides its rows.
/// The note saying which time a query named: the days its turns were raised for, and that its
/// words were not searched as text.
fn time_note(t: &crate::corpus::when::TimeInQuery) -> String {
    let day = |ms: i64| {
        iso(Some(ms))
            .map(|s| s[..10].to_owned())
            .unwrap_or_default()
    };
    let last = day(t.end - 1);
    let first = day(t.start);
    let days = if first == last {
        first
    } else {
        format!("{first} to {last}")
    };
    format!(
        "\"{}\" read as a time: turns from {days} (UTC) rank higher; those words were not searched as text.",
        t.words
    )
}

/// The note on a query's quoted phrases: that no turn holds them and the results are word
/// matches, or how many hold them and rank first when others follow. None when every match
/// holds them (or nothing matched).
fn quoted_note(q: &crate::corpus::Quoted, total: usize, short: bool) -> Option<String> {
    let list = q.phrases.join(", ");
    let (what, words) = match q.phrases.len() {
        1 => (format!("the exact phrase {list}"), "its words"),
        _ => (format!("every quoted phrase ({list})"), "their words"),
    };
    if q.held == 0 {
        return (total > 0).then(|| {
            if short {
                format!("no exact {list}: word matches.")
            } else {
                format!("No turn holds {what}; these results match only {words}.")
            }
        });
    }
    if total <= q.held {
        return None;
    }
    let n = if q.held_exact {
        q.held.to_string()
    } else {
        format!("at least {}", q.held)
    };
    let (turns, hold, rank) = if q.held == 1 && q.held_exact {
        ("turn", "holds", "ranks")
    } else {
        ("turns", "hold", "rank")
    };
    Some(if short {
        format!("{n} exact {list} first.")
    } else {
        format!("{n} {turns} {hold} {what} and {rank} first; the other results match only {words}.")
    })
}

struct Page {
    query: String,
    total: usize,
    exact: bool,
    offset: usize,
    /// Rows found for this page.
    available: usize,
    searchable: bool,
    stopped: bool,
    build: Option<BuildOut>,
    /// The note on transcripts directories that yield nothing.
    roots: Option<String>,
    short: bool,
    max_chars: usize,
    /// What the query said about time, as a note.
    time: Option<String>,
    /// What was found of the query's quoted phrases, as a note.
    quoted: Option<String>,
}

impl Page {
    /// The response without rows when `n` rows are shown (`shrunk`: the one row was shortened).
    fn envelope(&self, n: usize, shrunk: bool) -> SearchResponse {
        let next_offset = budget::next_offset(self.offset, n, self.total);
        let left_out = self.available - n;
        let mut note = (!self.searchable).then(|| {
            "The query has nothing to search for (only exclusions or stopwords); add a keyword."
                .to_owned()
        });
        note = progress::join_opt(note, self.quoted.clone());
        if let Some(t) = &self.time {
            note = progress::join(note, t.clone());
        }
        if let Some(b) = &self.build {
            note = progress::join(note, progress::note(b, self.short));
        }
        note = progress::join_opt(note, self.roots.clone());
        if self.stopped {
            note = progress::join(
                note,
                if self.short {
                    "time budget hit: partial.".to_owned()
                } else {
                    "The search hit its time budget: results and total are partial; use rarer keywords or filters.".to_owned()
                },
            );
        }
        if left_out > 0 || shrunk {
            let next = self.offset + n;
            note = progress::join(
                note,
                match (self.short, shrunk) {
                    (true, _) => format!("more: offset={next}"),
                    (false, true) => format!(
                        "The result was shortened to fit max_chars={}; continue with offset={next} or raise max_chars.",
                        self.max_chars
                    ),
                    (false, false) => format!(
                        "{left_out} of {} results on this page did not fit in max_chars={}; continue with offset={next} or raise max_chars.",
                        self.available, self.max_chars
                    ),
                },
            );
        }
        SearchResponse {
            results: Vec::new(),
            query: self.query.clone(),
            total: self.total,
            total_exact: self.exact,
            offset: self.offset,
            next_offset,
            truncated: left_out > 0 || shrunk,
            complete: self.build.is_none() && !self.stopped,
            build: self.build.clone(),
            note,
        }
    }
}

/// Shortens a result to at most `room` characters of JSON: optional fields go, then the
/// snippet, matched terms and project are cut.
fn shrink(row: &mut SearchResult, room: usize) {
    row.slug = None;
    row.agent_type = None;
    row.agent_description = None;
    row.note = None;
    let steps: [fn(&mut SearchResult); 3] = [
        |r| r.project = budget::clip(&r.project, 40),
        |r| {
            r.matched_terms.truncate(3);
            r.timestamp = None;
        },
        |r| {
            r.matched_terms.clear();
            r.project = budget::clip(&r.project, 12);
            r.parent_session_id = None;
        },
    ];
    for step in steps {
        let snippet = std::mem::take(&mut row.snippet);
        let rest = json_len(row);
        if rest + 8 <= room {
            row.snippet = budget::clip_json(&snippet, room - rest);
            return;
        }
        row.snippet = snippet;
        step(row);
    }
    let rest = json_len(&SearchResult {
        snippet: String::new(),
        ..row.clone()
    });
    row.snippet = budget::clip_json(&row.snippet, room.saturating_sub(rest));
}
