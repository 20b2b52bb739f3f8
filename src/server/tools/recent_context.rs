//! `recent_context`: a compact Markdown digest of the last sessions (of this project by
//! default) to pick up where they left off; also what `conversation-search context` prints.
use super::budget::{self, json_len};
use super::iso;
use super::progress::{self, BuildOut};
use crate::corpus::Snapshot;
use crate::corpus::digest::SessionDigest;
use crate::corpus::project::Scope;
use crate::index::facts;
use crate::server::choice;
use crate::server::toolset::{Ctx, Lane, ToolDef};
use crate::server::{ToolError, input_schema, output_schema};
use crate::transcript::tools::cut_chars;
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) const DESCRIPTION: &str = "Where we left off: a short Markdown digest of the last sessions \
of this project (or of all with scope=all): title, when, turns, files most touched, the last \
prompt and how the last reply began. Use it at the start of a session, then \
search_conversations / read_turn for details.";

/// Default number of sessions.
pub(crate) const DEFAULT_SESSIONS: i64 = 3;
/// Most sessions a digest covers.
pub(crate) const MAX_SESSIONS: i64 = 20;
/// Default `max_chars`.
pub(crate) const DEFAULT_CHARS: usize = 2_000;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct RecentContextParams {
    /// `project` (default): this project's sessions only; `all`: every project's.
    #[serde(default, deserialize_with = "choice::optional")]
    pub scope: Option<Scope>,
    /// How many sessions, newest first (1-20, default 3).
    #[serde(default)]
    pub sessions: Option<i64>,
    /// Most characters of JSON to return (500-60000, default 2000).
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct RecentContextResponse {
    /// The digest: one `##` section per session, newest first.
    pub context: String,
    /// The sessions the digest covers, newest first (pass to read_conversation).
    pub session_ids: Vec<String>,
    /// True when texts were shortened or sessions left out to stay within max_chars.
    pub truncated: bool,
    /// False while the first index build is still running.
    pub complete: bool,
    /// Present while the first index build runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Prompt and reply lengths tried, longest first, until the digest fits.
const TEXT_STEPS: [usize; 7] = [400, 280, 200, 140, 90, 50, 0];

/// Renders the digest so that `fits` accepts it: texts shortened first, then sessions dropped
/// from the oldest, then cut. Returns the text, whether anything was left out and how many
/// sessions it shows.
pub(crate) fn render(
    heading: &str,
    digests: &[SessionDigest],
    limit: usize,
    fits: impl Fn(&str) -> bool,
) -> (String, bool, usize) {
    if digests.is_empty() {
        // nothing to leave out: the whole answer is that there is nothing
        let out = markdown(heading, digests, 0);
        let cut = !fits(&out);
        return (if cut { cut_chars(&out, limit) } else { out }, cut, 0);
    }
    for shown in (1..=digests.len()).rev() {
        for (i, &text) in TEXT_STEPS.iter().enumerate() {
            let out = markdown(heading, &digests[..shown], text);
            if fits(&out) {
                return (out, i > 0 || shown < digests.len(), shown);
            }
        }
    }
    let mut out = markdown(heading, &digests[..digests.len().min(1)], 0);
    let mut max = limit;
    while !fits(&out) && max > 0 {
        out = cut_chars(&out, max);
        max = max.saturating_sub(max / 8 + 1);
    }
    (out, true, digests.len().min(1))
}

/// `2026-05-01T10:00:00.000Z` as `2026-05-01 10:00 UTC`.
fn when(ts: Option<i64>) -> String {
    iso(ts).map_or_else(
        || "unknown time".to_owned(),
        |s| format!("{} UTC", s.get(..16).unwrap_or(&s).replacen('T', " ", 1)),
    )
}

/// A duration in minutes, hours and days, e.g. `1h 05m`.
pub(crate) fn span(ms: i64) -> String {
    let mins = (ms.max(0) + 30_000) / 60_000;
    match mins {
        0 => "under a minute".to_owned(),
        m if m < 60 => format!("{m} min"),
        m if m < 24 * 60 => format!("{}h {:02}m", m / 60, m % 60),
        m => format!("{}d {}h", m / (24 * 60), (m / 60) % 24),
    }
}

/// One line of text: whitespace runs collapsed, at most `max` characters.
fn line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    cut_chars(&flat, max)
}

fn markdown(heading: &str, digests: &[SessionDigest], text: usize) -> String {
    let mut out = format!("# {heading}\n");
    if digests.is_empty() {
        out.push_str("\nNo earlier session found.\n");
    }
    for d in digests {
        let m = &d.conv.meta;
        let title = line(&m.summary(), 100);
        let title = if title.is_empty() {
            "(untitled)"
        } else {
            &title
        };
        out.push_str(&format!("\n## {title}\n"));
        let lasted = match (m.first_ts, m.last_ts) {
            (Some(a), Some(b)) => format!(", {}", span(b - a)),
            _ => String::new(),
        };
        out.push_str(&format!(
            "- {} · `{}` · {}{lasted} · {} turns\n",
            d.project,
            d.conv.id,
            when(m.first_ts),
            d.conv.turn_count
        ));
        if !d.files.is_empty() {
            let files: Vec<String> = d
                .files
                .iter()
                .map(|(p, n, op)| {
                    let turns = if *n == 1 { "turn" } else { "turns" };
                    format!("`{}` ({}, {n} {turns})", line(p, 80), facts::op_name(*op))
                })
                .collect();
            out.push_str(&format!("- files: {}\n", files.join(", ")));
        }
        if text > 0 {
            if let Some(t) = d.last_turn {
                out.push_str(&format!(
                    "- last prompt (turn {t}): {}\n",
                    line(&d.last_prompt, text)
                ));
            }
            if !d.last_reply.trim().is_empty() {
                out.push_str(&format!(
                    "- last reply began: {}\n",
                    line(&d.last_reply, text)
                ));
            }
        }
    }
    out
}

/// The heading of a digest of `scope`.
pub(crate) fn heading(snap: &Snapshot, all: bool) -> String {
    match (&snap.project.root, all) {
        (Some(root), false) => format!("Recent sessions in `{}`", root.display()),
        _ => "Recent sessions".to_owned(),
    }
}

/// Validates the arguments: scope (default `project`), number of sessions and `max_chars`.
pub(crate) fn validate(p: &RecentContextParams) -> Result<(Scope, usize, usize), ToolError> {
    let max_chars = budget::check_max_chars(p.max_chars, DEFAULT_CHARS)?;
    let scope = p.scope.unwrap_or(Scope::Project);
    let n = p.sessions.unwrap_or(DEFAULT_SESSIONS);
    if !(1..=MAX_SESSIONS).contains(&n) {
        return Err(ToolError::new(format!(
            "`sessions` must be between 1 and {MAX_SESSIONS} (got {n})."
        )));
    }
    Ok((scope, n as usize, max_chars))
}

pub(crate) fn run(
    snap: &Snapshot,
    p: RecentContextParams,
) -> Result<RecentContextResponse, ToolError> {
    let (scope, n, max_chars) = validate(&p)?;
    let digests = snap.recent_sessions(scope, n);
    let build = progress::building(snap);
    let short = max_chars < 1500;
    let note = build
        .as_ref()
        .map(|b| progress::note(b, short))
        .or_else(|| {
            (digests.is_empty() && scope == Scope::Project).then(|| {
                "No session of this project is indexed; scope=\"all\" covers every project's."
                    .to_owned()
            })
        });
    let note = progress::join_opt(note, super::roots::note(snap, short));
    let mut resp = RecentContextResponse {
        context: String::new(),
        session_ids: digests.iter().map(|d| d.conv.id.clone()).collect(),
        truncated: false,
        complete: snap.complete,
        build,
        note,
    };
    let envelope = json_len(&resp);
    let head = heading(snap, scope == Scope::All);
    let (text, cut, shown) = render(&head, &digests, max_chars, |t| {
        envelope + json_len(&t) <= max_chars
    });
    resp.session_ids.truncate(shown);
    resp.context = text;
    resp.truncated = cut;
    Ok(resp)
}

pub(crate) const DEF: ToolDef = ToolDef {
    name: "recent_context",
    title: "Where we left off",
    description: DESCRIPTION,
    lane: Lane::Heavy,
    input: input_schema::<RecentContextParams>,
    output: output_schema::<RecentContextResponse>,
    call,
};

fn call(ctx: &Ctx<'_>, args: JsonObject) -> Result<serde_json::Value, ToolError> {
    super::invoke(DEF.name, args, |p| run(ctx.snap, p))
}
