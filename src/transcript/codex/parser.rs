//! The resumable line parser of Codex rollouts.
//!
//! Lines are `{timestamp, type, payload}` envelopes. The same user prompt and assistant reply
//! arrive on up to three channels (`response_item` messages, `event_msg` user/agent messages and,
//! from 0.148, `item_completed` items); each is indexed once. Injected context (environment,
//! AGENTS.md, permissions, …), developer/system messages, reasoning (summaries and
//! `encrypted_content`) and every tool output are never indexed. A history replayed from an
//! origin thread (forks, sub-agents spawned with context) is not the rollout's own: see
//! [`super::Origin`].
use super::FORMAT;
use super::Origin;
use crate::transcript::lenient::{self, Content, LStr};
use crate::transcript::tools::{ToolArgs, kind_of, patch_calls};
use crate::transcript::{
    At, ConvMeta, ConvState, LineError, LineParser, Role, SourceFile, SummaryRecord, ToolCall,
    ToolKind, TurnBuilder,
};
use crate::util::time::parse_iso;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::PathBuf;
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    /// ≤0.2x rollouts: a bare `SessionMeta` first line (`id`) and `record_type` state lines.
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    record_type: LStr<'a>,
}

/// The payload fields of every record type we read (all optional).
#[derive(Deserialize, Default)]
struct Payload<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    role: LStr<'a>,
    /// A string or a list of blocks; read on demand so odd shapes never fail the line.
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: LStr<'a>,
    #[serde(borrow, default)]
    call_id: LStr<'a>,
    #[serde(borrow, default)]
    action: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: LStr<'a>,
    #[serde(borrow, default)]
    git: Option<&'a RawValue>,
    #[serde(borrow, default)]
    forked_from_id: LStr<'a>,
    #[serde(borrow, default)]
    parent_thread_id: LStr<'a>,
    #[serde(borrow, default)]
    source: Option<&'a RawValue>,
    #[serde(borrow, default)]
    agent_role: LStr<'a>,
    #[serde(borrow, default)]
    agent_nickname: LStr<'a>,
    #[serde(borrow, default)]
    thread_name: LStr<'a>,
    #[serde(borrow, default)]
    item: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
}

/// Channels the same prompt or reply can arrive on.
const RESPONSE: u8 = 1;
const EVENT: u8 = 2;
const ITEM: u8 = 4;

/// Text that Codex injects as a user message: context, instructions, notifications.
const INJECTED: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<skill>",
    "<subagent_notification>",
    "<subagents>",
    "<plugins>",
];

fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    INJECTED.iter().any(|p| t.starts_with(p))
}

/// Text of `input_text` / `output_text` / `text` blocks, injected ones left out.
fn block_text(content: Option<&RawValue>) -> String {
    let content: Content<Block> = content.and_then(lenient::parse).unwrap_or_default();
    match &content {
        Content::Text(t) if !is_injected(t) => t.trim().to_owned(),
        Content::Blocks(blocks) => blocks
            .iter()
            .filter(|b| {
                matches!(
                    b.kind.as_deref(),
                    Some("input_text" | "output_text" | "text" | "Text")
                )
            })
            .filter_map(|b| b.text.non_empty())
            .filter(|t| !is_injected(t))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Resumable parser for one rollout file.
#[derive(Default)]
pub(crate) struct CodexParser {
    fallback_id: String,
    /// The rollout file (to find the origin of a replayed history).
    path: PathBuf,
    id: Option<String>,
    meta: ConvMeta,
    turns: TurnBuilder,
    /// Id of the `session_meta` in effect and the running hash of its prompts: a replayed
    /// history (which starts with the origin's `session_meta`) yields the origin's keys.
    chain_session: Option<String>,
    chain: u64,
    /// The open turn: its prompt text, the channels that reported it, whether it has replies.
    prompt: Option<(String, u8)>,
    replied: bool,
    /// Replies of the open turn: (channel, text hash, channels that repeated it).
    replies: Vec<(u8, u64, u8)>,
    /// Inside a replayed history whose origin was found (until the first own prompt).
    replay: Option<Box<Origin>>,
    /// The open turn (or what precedes the first prompt) is replayed: nothing is indexed.
    skipping: bool,
    /// Only prompt keys are wanted (reading an origin): no turns, no origin lookups.
    keys_only: bool,
    keys: Vec<u64>,
}

impl CodexParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        let fallback_id = match &file.role {
            Role::Session { id } => id.clone(),
            Role::Subagent { agent_id, .. } => format!("{FORMAT}:{agent_id}"),
        };
        Self {
            fallback_id,
            path: file.path.clone(),
            ..Self::default()
        }
    }

    /// A parser that only computes prompt keys (see [`Self::take_keys`]).
    pub(super) fn keys_only() -> Self {
        Self {
            keys_only: true,
            ..Self::default()
        }
    }

    /// Chained keys of the prompts read since the last call.
    pub(super) fn take_keys(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.keys)
    }

    /// Whether what is read now belongs to this rollout's own turns.
    fn live(&self) -> bool {
        !self.keys_only && !self.skipping
    }

    fn session_meta(&mut self, p: &Payload) {
        let id = p.id.non_empty().map(str::to_owned);
        if id.is_some() && id != self.chain_session {
            self.chain_session = id.clone();
            self.chain = 0;
        }
        // a new session segment: the next prompt is never a repeat of the open one
        self.prompt = None;
        if self.id.is_some() {
            self.later_session_meta(id.as_deref());
            return;
        }
        self.id = id.map(|i| format!("{FORMAT}:{i}"));
        self.meta.recorded_session_id = p.id.non_empty().map(str::to_owned);
        if let Some(cwd) = p.cwd.non_empty() {
            self.meta.note_cwd(cwd);
        }
        let str_at = |raw: Option<&RawValue>, ptr: &str| {
            let v: serde_json::Value = raw.and_then(lenient::parse)?;
            v.pointer(ptr)?
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        self.meta.git_branch = str_at(p.git, "/branch");
        let spawn = |field: &str| str_at(p.source, &format!("/subagent/thread_spawn/{field}"));
        let own = |f: &LStr| f.non_empty().map(str::to_owned);
        let parent = own(&p.parent_thread_id).or(spawn("parent_thread_id"));
        self.meta.parent_id = parent.map(|p| format!("{FORMAT}:{p}"));
        self.meta.forked_from = own(&p.forked_from_id).map(|p| format!("{FORMAT}:{p}"));
        if let Some(origin) = p.forked_from_id.non_empty() {
            // a fork goes on from its origin's prompt history (whether or not the copy it
            // starts with repeats the origin's `session_meta`)
            self.chain_session = Some(origin.to_owned());
            self.chain = 0;
            if !self.keys_only {
                self.replay = Origin::open(&self.path, origin);
                self.skipping = self.replay.is_some();
            }
        }
        self.meta.agent_type = own(&p.agent_role).or(spawn("agent_role"));
        self.meta.agent_description = own(&p.agent_nickname).or(spawn("agent_nickname"));
    }

    /// A `session_meta` after the first: this rollout's own id again (a resume) ends any
    /// replayed history; another thread's id opens one (see [`super::Origin`]).
    fn later_session_meta(&mut self, id: Option<&str>) {
        let Some(id) = id else { return };
        if self.meta.recorded_session_id.as_deref() == Some(id) {
            self.replay = None;
            self.skipping = false;
        } else if self.replay.is_none() && !self.keys_only {
            self.replay = Origin::open(&self.path, id);
            self.skipping = self.replay.is_some();
        }
    }

    /// A user prompt from `channel`; a repeat of the open turn's prompt from another channel
    /// before any reply is the same prompt.
    fn prompt(&mut self, channel: u8, text: String, at: At) {
        if text.is_empty() {
            self.touch(at.timestamp);
            return;
        }
        if let Some((open, seen)) = &mut self.prompt {
            if !self.replied && *seen & channel == 0 && *open == text {
                *seen |= channel;
                self.touch(at.timestamp);
                return;
            }
        }
        let mut h = Xxh3Default::new();
        h.update(self.chain_session.as_deref().unwrap_or("").as_bytes());
        h.update(&self.chain.to_le_bytes());
        h.update(text.as_bytes());
        self.chain = h.digest();
        if self.keys_only {
            self.keys.push(self.chain);
        }
        // inside a replayed history, a prompt the origin has is replayed; the first one it
        // does not have is this rollout's first own turn
        let key = self.chain;
        self.skipping = self.replay.as_mut().is_some_and(|o| o.has(key));
        if !self.skipping {
            self.replay = None;
        }
        if self.live() {
            if self.meta.first_prompt.is_none() {
                self.meta.first_prompt = Some(text.clone());
            }
            let at = At {
                dup_key: Some(self.chain),
                ..at
            };
            self.turns.prompt(at, text.clone());
        }
        self.prompt = Some((text, channel));
        self.replied = false;
        self.replies.clear();
    }

    fn touch(&mut self, timestamp: Option<i64>) {
        if self.live() {
            self.turns.touch(timestamp);
        }
    }

    /// Assistant text from `channel`, dropped when another channel already gave the same text.
    fn reply(&mut self, channel: u8, text: &str, at: At) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let h = xxh3_64(text.as_bytes());
        if let Some(r) = self
            .replies
            .iter_mut()
            .find(|(c, rh, seen)| *rh == h && *c != channel && *seen & channel == 0)
        {
            r.2 |= channel;
            return;
        }
        self.replies.push((channel, h, 0));
        self.replied = true;
        if self.live() {
            self.turns.assistant_text(at, None, text);
        }
    }

    fn tool(&mut self, calls: Vec<ToolCall>, at: At) {
        for call in calls {
            self.replied = true;
            if self.live() {
                self.turns.tool_call(at, call);
            }
        }
    }

    fn response_item(&mut self, p: &Payload, at: At) {
        let id = p.call_id.non_empty().map(str::to_owned);
        match p.kind.as_deref() {
            Some("message") => match p.role.as_deref() {
                Some("user") => self.prompt(RESPONSE, block_text(p.content), at),
                Some("assistant") => self.reply(RESPONSE, &block_text(p.content), at),
                _ => {}
            },
            Some(kind @ ("function_call" | "custom_tool_call")) => {
                let name = p.name.non_empty().unwrap_or("unknown");
                // `arguments` is JSON in a string; a custom tool's `input` is raw text
                let text = match kind {
                    "function_call" => p.arguments.and_then(lenient::string),
                    _ => p.input.0.clone(),
                };
                let calls = match text.as_deref() {
                    Some(t) if name == "apply_patch" => patch_calls(id, name, &patch_text(t)),
                    Some(t) => ToolArgs::from_json(t).into_calls(id, name, kind_of(name)),
                    None => ToolArgs::from_raw(p.arguments).into_calls(id, name, kind_of(name)),
                };
                self.tool(calls, at);
            }
            Some("local_shell_call") => {
                let args = ToolArgs::from_raw(p.action);
                self.tool(args.into_calls(id, "local_shell", ToolKind::Shell), at);
            }
            Some("web_search_call") => {
                let id = p.id.non_empty().map(str::to_owned);
                let args = ToolArgs::from_raw(p.action);
                self.tool(args.into_calls(id, "web_search", ToolKind::Web), at);
            }
            _ => {}
        }
    }

    fn event(&mut self, p: &Payload, at: At) {
        match p.kind.as_deref() {
            Some("user_message") => {
                let text = p.message.as_deref().filter(|t| !is_injected(t));
                self.prompt(EVENT, text.unwrap_or("").trim().to_owned(), at);
            }
            Some("agent_message") => self.reply(EVENT, p.message.as_deref().unwrap_or(""), at),
            // a replayed history's title is the origin's
            Some("thread_name_updated") if self.live() => {
                if let Some(n) = p.thread_name.non_empty() {
                    self.meta.ai_title = Some(n.to_owned());
                }
            }
            // 0.148+: items mirror the messages above (tool items mirror `response_item` calls)
            Some("item_completed") => {
                let item: Payload = p.item.and_then(lenient::parse).unwrap_or_default();
                match item.kind.as_deref() {
                    Some("UserMessage") => self.prompt(ITEM, block_text(item.content), at),
                    Some("AgentMessage") => self.reply(ITEM, &block_text(item.content), at),
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// The patch of an `apply_patch` call: raw text, or the `input` of JSON arguments.
fn patch_text(text: &str) -> String {
    #[derive(Deserialize)]
    struct Input<'a> {
        #[serde(borrow, default)]
        input: LStr<'a>,
    }
    match serde_json::from_str::<Input>(text) {
        Ok(args) => args.input.into_owned().unwrap_or_default(),
        Err(_) => text.to_owned(),
    }
}

impl CodexParser {
    /// One non-blank line; `line` may be the repaired copy of the line read.
    fn record(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        let text = std::str::from_utf8(line).map_err(|_| LineError::Utf8)?;
        let env: Envelope =
            serde_json::from_str(text).map_err(|e| LineError::Json(e.to_string()))?;
        let timestamp = env.timestamp.as_deref().and_then(parse_iso);
        self.meta.note_timestamp(timestamp);
        let at = At {
            offset,
            timestamp,
            dup_key: None,
        };
        // ≤0.2x rollouts wrote bare records: session meta, response items, state lines
        let (kind, payload) = match (env.kind.as_deref(), env.payload) {
            (Some(k), Some(p)) => (k, p.get()),
            (Some("message" | "function_call" | "custom_tool_call" | "local_shell_call"), None) => {
                ("response_item", text)
            }
            (Some(_), None) => return Ok(()),
            (None, _) if env.record_type.as_deref().is_some() => return Ok(()),
            (None, _) if env.id.as_deref().is_some() => ("session_meta", text),
            (None, _) => return Err(LineError::NoType),
        };
        if !matches!(
            kind,
            "session_meta" | "turn_context" | "response_item" | "event_msg" | "compacted"
        ) {
            return Ok(());
        }
        let p: Payload = serde_json::from_str(payload)
            .map_err(|e| LineError::Json(format!("`{kind}` payload: {e}")))?;
        match kind {
            "session_meta" => self.session_meta(&p),
            "turn_context" => {
                if let Some(cwd) = p.cwd.non_empty() {
                    self.meta.note_cwd(cwd);
                }
            }
            "response_item" => self.response_item(&p, at),
            "event_msg" => self.event(&p, at),
            "compacted" if self.live() => {
                if let Some(m) = p.message.non_empty() {
                    self.meta.summaries.push(SummaryRecord {
                        text: m.to_owned(),
                        leaf: None,
                        leaf_in_file: false,
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl LineParser for CodexParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        lenient::retry_repaired(line, |l| self.record(offset, l))
    }

    fn drain(&mut self) -> Vec<ConvState> {
        vec![ConvState {
            id: self.id.clone().unwrap_or_else(|| self.fallback_id.clone()),
            meta: self.meta.clone(),
            completed: self.turns.take_completed(),
            open: self.turns.open_turn(),
            turn_count: self.turns.turn_count(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injections() {
        assert!(is_injected("  <environment_context>\n<cwd>/x</cwd>"));
        assert!(!is_injected("fix the <environment_context> parser"));
    }
}
