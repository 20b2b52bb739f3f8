//! `read_conversation`: a page of consecutive turns of one conversation.
use super::budget::{self, json_len};
use super::progress::{self, BuildOut};
use super::read_turn::{TurnOut, find_conversation};
use super::{check_limit, check_offset};
use crate::corpus::Snapshot;
use crate::corpus::catalog::Conversation;
use crate::server::toolset::{Ctx, Lane, ToolDef};
use crate::server::{ToolError, input_schema, output_schema};
use crate::transcript::Turn;
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) const DESCRIPTION: &str = "Read consecutive turns of a past conversation (prompts, replies, \
tools used), starting at `offset` (default 0), `limit` turns at a time (default 10). \
total_turns tells how far to page.";

/// Smallest share of the budget worth giving a turn.
const MIN_TURN_CHARS: usize = 250;
/// Share the first turn may take even when many turns were asked for.
const FIRST_TURN_CHARS: usize = 1500;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ReadConversationParams {
    /// Conversation id (from search_conversations or list_conversations).
    pub session_id: String,
    /// First turn to return (0-based).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Turns per page (1-100, default 10).
    #[serde(default)]
    pub limit: Option<i64>,
    /// Most characters of JSON to return (500-60000, default 20000).
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ConversationOut {
    pub session_id: String,
    pub project: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// False when the transcript is gone and the turns come from the durable store.
    pub source_present: bool,
    /// Since when the transcript is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_missing_since: Option<String>,
    pub total_turns: u32,
    pub offset: usize,
    pub limit: usize,
    pub turns: Vec<TurnOut>,
    /// Pass as offset to read the next turns, when more exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// True when turns were shortened or left out to fit max_chars.
    pub truncated: bool,
    /// False while the first index build runs (the conversation may not be indexed whole).
    pub complete: bool,
    /// Present while the first index build runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub(crate) fn run(
    snap: &Snapshot,
    p: ReadConversationParams,
) -> Result<ConversationOut, ToolError> {
    let conv = find_conversation(snap, &p.session_id)?;
    let offset = check_offset(p.offset)?;
    let limit = check_limit(p.limit, 10)?;
    let max_chars = budget::check_max_chars(p.max_chars, budget::READ_DEFAULT)?;
    let from = offset.min(conv.turn_count as usize) as u32;
    let to = (offset + limit).min(conv.turn_count as usize) as u32;
    let turns = snap
        .read_turns(conv, from, to)
        .map_err(|e| ToolError::new(e.to_string()))?;
    let (source_present, source_missing_since) = super::source_presence(conv);
    let mut out = ConversationOut {
        session_id: conv.id.clone(),
        project: snap.project_of(conv),
        cwd: conv.meta.cwd.clone(),
        git_branch: conv.meta.git_branch.clone(),
        source_present,
        source_missing_since,
        total_turns: conv.turn_count,
        offset,
        limit,
        turns: Vec::new(),
        next_offset: None,
        truncated: false,
        complete: snap.complete,
        build: progress::building(snap),
        note: None,
    };
    let page = Page {
        conv,
        max_chars,
        short: max_chars < 1500,
        wanted: (to - from) as usize,
        // not in the tightest budgets, where the turns need the room
        roots: super::roots::note(snap, max_chars < 1500)
            .filter(|n| max_chars >= json_len(n) + super::read_turn::ROOTS_MIN_TURN),
    };
    if max_chars.saturating_sub(page.envelope(&out)) < MIN_TURN_CHARS {
        // a tight budget: turns come before the working directory and branch
        out.cwd = None;
        out.git_branch = None;
        out.project = budget::clip(&out.project, 40);
    }
    page.fill(&mut out, &turns);
    page.fit(&mut out, &turns);
    Ok(out)
}

/// How one page of turns is laid out.
struct Page<'a> {
    conv: &'a Conversation,
    max_chars: usize,
    short: bool,
    /// Turns asked for (within the conversation).
    wanted: usize,
    /// The sentence naming transcripts directories that yield nothing ([`super::roots`]).
    roots: Option<String>,
}

impl Page<'_> {
    /// JSON length of `out` without turns, with its longest note and offsets.
    fn envelope(&self, out: &ConversationOut) -> usize {
        let n = self.conv.turn_count as usize;
        let mut probe = out.clone();
        probe.turns.clear();
        probe.next_offset = Some(n);
        probe.truncated = true;
        probe.note = self.note(out, n, true);
        json_len(&probe)
    }

    /// Adds turns while they fit: each gets an equal share of what is left, the first enough to
    /// say something; the first is always shown so that paging moves on.
    fn fill(&self, out: &mut ConversationOut, turns: &[Turn]) {
        let mut used = self.envelope(out);
        for (i, t) in turns.iter().enumerate() {
            let left = self.max_chars.saturating_sub(used + usize::from(i > 0));
            let share = (left / (turns.len() - i).max(1)).max(left.min(FIRST_TURN_CHARS));
            if i > 0 && share < MIN_TURN_CHARS {
                out.truncated = true;
                break;
            }
            let turn = TurnOut::new(self.conv, t, share, None);
            let len = json_len(&turn) + usize::from(i > 0);
            if i > 0 && used + len > self.max_chars {
                out.truncated = true;
                break;
            }
            used += len;
            out.truncated |= turn.truncated;
            out.turns.push(turn);
        }
    }

    /// Sets the offsets and note, then keeps the page exactly within the budget: drops turns,
    /// or gives the one turn less room, or drops the envelope's optional parts.
    fn fit(&self, out: &mut ConversationOut, turns: &[Turn]) {
        loop {
            let next = out.offset + out.turns.len();
            out.next_offset = (next < self.conv.turn_count as usize).then_some(next);
            let left_out = out.turns.len() < self.wanted;
            out.note = self.note(out, next, left_out);
            let len = json_len(&out);
            if len <= self.max_chars {
                return;
            }
            out.truncated = true;
            if out.turns.len() > 1 {
                out.turns.pop();
                continue;
            }
            let (Some(first), Some(t)) = (out.turns.first(), turns.first()) else {
                return;
            };
            let before = json_len(first);
            let room = before.saturating_sub(len - self.max_chars);
            let smaller = TurnOut::new(self.conv, t, room, None);
            if json_len(&smaller) < before {
                out.turns[0] = smaller;
                continue;
            }
            // the turn cannot get smaller: the envelope gives up what it can
            if out.cwd.is_none() && out.git_branch.is_none() && out.project.is_empty() {
                tracing::warn!(self.max_chars, "read_conversation cannot fit its budget");
                return;
            }
            out.cwd = None;
            out.git_branch = None;
            out.project.clear();
        }
    }

    /// The note: the build's progress, shortened turns, where to continue, and directories
    /// that yield nothing.
    fn note(&self, out: &ConversationOut, next: usize, left_out: bool) -> Option<String> {
        let (short, max_chars) = (self.short, self.max_chars);
        let mut note = out.build.as_ref().map(|b| progress::note(b, short));
        if out.truncated || left_out {
            let more = match (left_out, short) {
                (true, true) => format!("shortened; continue with offset={next}"),
                (false, true) => {
                    "shortened; read_turn with char_offset reads a turn whole".to_owned()
                }
                (_, false) => format!(
                    "shortened to fit max_chars={max_chars}: long turns keep the head and tail of prompt and reply (read_turn with char_offset reads one whole){}",
                    if left_out {
                        format!("; continue with offset={next}")
                    } else {
                        String::new()
                    }
                ),
            };
            note = progress::join(note, more);
        }
        progress::join_opt(note, self.roots.clone())
    }
}

pub(crate) const DEF: ToolDef = ToolDef {
    name: "read_conversation",
    title: "Read a conversation",
    description: DESCRIPTION,
    lane: Lane::Heavy,
    input: input_schema::<ReadConversationParams>,
    output: output_schema::<ConversationOut>,
    call,
};

fn call(ctx: &Ctx<'_>, args: JsonObject) -> Result<serde_json::Value, ToolError> {
    super::invoke(DEF.name, args, |p| run(ctx.snap, p))
}
