//! Kimi CLI's line parser: `wire.jsonl` (`{timestamp, message: {type, payload}}`, timestamps in
//! epoch seconds) and, for sessions without one, `context.jsonl` (`{role, content, tool_calls}`).
//!
//! `TurnBegin` starts a turn with the human's input; `SteerInput` (typed while Kimi works) joins
//! the running turn as a later prompt. `ContentPart` text is the reply (`think` parts are never
//! indexed); a `ToolCall` may arrive with partial arguments that `ToolCallPart` fragments
//! complete. Tool results, approvals, status and hook events are not indexed. Sub-agent events
//! wrapped in `SubagentEvent` become sub-agent conversations of their own, unless the sub-agent
//! has its own `subagents/<agent>/wire.jsonl` (read as a file of its own).
use super::{FORMAT, state_title, subagent_name, tool_calls, work_dir};
use crate::transcript::convs::{Conv, ConvSet};
use crate::transcript::lenient::{self, Content, LStr, LTime};
use crate::transcript::tools::ToolArgs;
use crate::transcript::{
    At, Attachment, ConvMeta, ConvState, LineError, LineParser, Role, SourceFile, ToolCall,
    ToolKind,
};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::PathBuf;

/// One line: a wire record (`message`), the wire header (`type: metadata`), or a context message.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default)]
    timestamp: LTime,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    role: LStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_calls: Option<&'a RawValue>,
}

/// `{type, payload}` of a wire message (also the `event` a `SubagentEvent` wraps).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
}

/// The payload fields of every wire message read (all optional).
#[derive(Deserialize, Default)]
struct Payload<'a> {
    #[serde(borrow, default)]
    user_input: Option<&'a RawValue>,
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    function: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments_part: LStr<'a>,
    #[serde(borrow, default)]
    agent_id: LStr<'a>,
    #[serde(borrow, default)]
    parent_tool_call_id: LStr<'a>,
    #[serde(borrow, default)]
    task_tool_call_id: LStr<'a>,
    #[serde(borrow, default)]
    subagent_type: LStr<'a>,
    #[serde(borrow, default)]
    event: Option<&'a RawValue>,
}

/// A content part: `text`, `think` (never indexed), `image_url`/`audio_url`/`video_url`.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(borrow, default)]
    image_url: Option<&'a RawValue>,
}

/// `{id, function: {name, arguments}}` of a tool call (`arguments` is JSON in a string).
#[derive(Deserialize, Default)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    arguments: LStr<'a>,
}

/// A tool call whose arguments may still be streaming in.
struct Streaming {
    id: Option<String>,
    name: String,
    args: String,
}

/// Text and non-text parts of a user input or message content (a string or a part list).
fn input_parts(raw: Option<&RawValue>) -> (String, Vec<Attachment>) {
    match raw.and_then(lenient::parse::<Content<Part>>) {
        Some(Content::Text(t)) => (t.trim().to_owned(), Vec::new()),
        Some(Content::Blocks(parts)) => {
            let text = (parts.iter())
                .filter(|p| p.kind.as_deref() == Some("text"))
                .filter_map(|p| p.text.non_empty())
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("\n");
            let attachments = parts.iter().filter_map(attachment).collect();
            (text, attachments)
        }
        _ => (String::new(), Vec::new()),
    }
}

/// An `image_url` (or audio/video) part: its kind and, for a `data:` URL, its media type.
fn attachment(p: &Part) -> Option<Attachment> {
    let kind = p.kind.as_deref()?.strip_suffix("_url")?;
    #[derive(Deserialize)]
    struct Url<'a> {
        #[serde(borrow, default)]
        url: LStr<'a>,
    }
    let url: Option<Url> = p.image_url.and_then(lenient::parse);
    let media_type = url.as_ref().and_then(|u| {
        let rest = u.url.as_deref()?.strip_prefix("data:")?;
        rest.split([';', ',']).next().map(str::to_owned)
    });
    Some(Attachment {
        kind: kind.to_owned(),
        media_type,
    })
}

/// Injected into `context.jsonl` as user messages: checkpoints, reminders, notices.
fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<system>")
        || t.starts_with("<system-reminder>")
        || t.starts_with("The following background tasks are still active after compaction")
}

/// The calls a streaming tool call stands for, given the arguments received so far.
fn calls_of(s: &Streaming) -> Vec<ToolCall> {
    let mut calls = tool_calls(s.id.clone(), &s.name, ToolArgs::from_json(&s.args));
    for call in &mut calls {
        if call.kind == ToolKind::Agent && call.agent_type.is_none() {
            call.agent_type = subagent_name(&s.args);
        }
    }
    calls
}

/// Resumable parser for one Kimi CLI wire log (or context file).
pub(crate) struct KimiParser {
    convs: ConvSet,
    /// `<session>` for a session's own file: where `state.json` holds its title.
    session_dir: Option<PathBuf>,
    /// `<session>/subagents`: sub-agents with a directory there are read from their own file.
    subagents_dir: Option<PathBuf>,
    /// Id of the session, prefix of its sub-agents' ids.
    session_id: String,
    /// Tool calls still streaming, per conversation key ("" for this file's own conversation).
    streams: FxHashMap<String, (At, Streaming)>,
    /// Descriptions of committed `Agent` calls, by call id (for the sub-agents they spawn).
    spawned: FxHashMap<String, String>,
    /// Whether a sub-agent key has a directory of its own (checked once per key).
    own_file: FxHashMap<String, bool>,
}

impl KimiParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        let name = file.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let parent = file.path.parent().map(PathBuf::from);
        let (id, session_id, session_dir, mut meta) = match &file.role {
            Role::Session { id } => {
                let dir = match name {
                    "wire.jsonl" | "context.jsonl" => parent,
                    _ => Some(file.path.with_extension("")),
                };
                (id.clone(), id.clone(), dir, ConvMeta::default())
            }
            Role::Subagent {
                agent_id,
                parent: p,
                agent_type,
                description,
            } => {
                let session = p.clone().unwrap_or_else(|| format!("{FORMAT}:{agent_id}"));
                let meta = ConvMeta {
                    agent_type: agent_type.clone(),
                    agent_description: description.clone(),
                    ..ConvMeta::default()
                };
                let dir = parent.and_then(|a| Some(a.parent()?.parent()?.to_owned()));
                (format!("{session}/{agent_id}"), session, dir, meta)
            }
        };
        meta.cwd = (session_dir.as_deref())
            .and_then(|s| s.parent())
            .and_then(work_dir);
        Self {
            convs: ConvSet::new(Conv::new(id, meta)),
            subagents_dir: session_dir.as_ref().map(|s| s.join("subagents")),
            session_dir: session_dir.filter(|_| matches!(file.role, Role::Session { .. })),
            session_id,
            streams: FxHashMap::default(),
            spawned: FxHashMap::default(),
            own_file: FxHashMap::default(),
        }
    }

    /// The conversation records at `key` belong to ("" is this file's own).
    fn conv(&mut self, key: &str) -> &mut Conv {
        if !key.is_empty() && self.convs.contains(key) {
            return self.convs.get(key).expect("checked");
        }
        self.convs.main()
    }

    /// Adds the call still streaming at `key` to its turn for good.
    fn commit(&mut self, key: &str) {
        let Some((at, s)) = self.streams.remove(key) else {
            return;
        };
        let calls = calls_of(&s);
        for call in &calls {
            if let (Some(id), Some(d)) = (&call.id, &call.description) {
                self.spawned.insert(id.clone(), d.clone());
            }
        }
        let conv = self.conv(key);
        conv.streaming.clear();
        for call in calls {
            conv.turns.tool_call(at, call);
        }
    }

    /// One wire message at nesting `key`.
    fn record(&mut self, key: &str, kind: &str, payload: Option<&RawValue>, at: At) {
        if !matches!(kind, "ToolCallPart" | "SubagentEvent") {
            self.commit(key);
        }
        let p: Payload = payload.and_then(lenient::parse).unwrap_or_default();
        let conv = self.conv(key);
        conv.meta.note_timestamp(at.timestamp);
        match kind {
            "TurnBegin" | "SteerInput" => {
                let (text, attachments) = input_parts(p.user_input);
                if conv.meta.first_prompt.is_none() && !text.is_empty() {
                    conv.meta.first_prompt = Some(text.clone());
                }
                match kind {
                    "TurnBegin" => conv.turns.prompt(at, text),
                    _ => conv.turns.later_prompt(at, &text),
                }
                for a in attachments {
                    conv.turns.attachment(at, a);
                }
            }
            "ContentPart" if p.kind.as_deref() == Some("text") => {
                conv.turns
                    .assistant_text(at, None, p.text.as_deref().unwrap_or(""));
            }
            "ToolCall" => {
                let f: Function = p.function.and_then(lenient::parse).unwrap_or_default();
                let s = Streaming {
                    id: p.id.non_empty().map(str::to_owned),
                    name: f.name.non_empty().unwrap_or("unknown").to_owned(),
                    args: f.arguments.into_owned().unwrap_or_default(),
                };
                conv.streaming = calls_of(&s);
                self.streams.insert(key.to_owned(), (at, s));
            }
            "ToolCallPart" => {
                let Some((_, s)) = self.streams.get_mut(key) else {
                    return;
                };
                s.args.push_str(p.arguments_part.as_deref().unwrap_or(""));
                let calls = calls_of(s);
                self.conv(key).streaming = calls;
            }
            "SubagentEvent" => self.subagent(key, &p, at),
            _ => conv.turns.touch(at.timestamp),
        }
    }

    /// A sub-agent's event, wrapped by the conversation at `parent_key`.
    fn subagent(&mut self, parent_key: &str, p: &Payload, at: At) {
        let key = [&p.agent_id, &p.parent_tool_call_id, &p.task_tool_call_id]
            .into_iter()
            .find_map(LStr::non_empty);
        let env: Option<Envelope> = p.event.and_then(lenient::parse);
        let (Some(key), Some(env)) = (key, env) else {
            return;
        };
        let Some(kind) = env.kind.as_deref() else {
            return;
        };
        if self.has_own_file(key) {
            return;
        }
        if !self.convs.contains(key) {
            let parent = self.conv(parent_key);
            let meta = ConvMeta {
                parent_id: Some(parent.id.clone()),
                cwd: parent.meta.cwd.clone(),
                agent_type: p.subagent_type.non_empty().map(str::to_owned),
                agent_description: self.description_of(p.parent_tool_call_id.non_empty()),
                ..ConvMeta::default()
            };
            let id = format!("{}/{key}", self.session_id);
            self.convs.get_or_insert_with(key, || Conv::new(id, meta));
        }
        self.record(key, kind, env.payload, at);
    }

    /// The description of the `Agent` call `call_id` (committed or still streaming).
    fn description_of(&self, call_id: Option<&str>) -> Option<String> {
        let id = call_id?;
        if let Some(d) = self.spawned.get(id) {
            return Some(d.clone());
        }
        let (_, s) = self
            .streams
            .values()
            .find(|(_, s)| s.id.as_deref() == Some(id))?;
        calls_of(s).into_iter().find_map(|c| c.description)
    }

    fn has_own_file(&mut self, key: &str) -> bool {
        let dir = self.subagents_dir.as_ref();
        *(self.own_file.entry(key.to_owned()))
            .or_insert_with(|| dir.is_some_and(|d| d.join(key).is_dir()))
    }

    /// A `context.jsonl` message.
    fn context(&mut self, line: &Line, at: At) {
        let conv = self.convs.main();
        match line.role.as_deref() {
            Some("user") => {
                let (text, attachments) = input_parts(line.content);
                if is_injected(&text) || (text.is_empty() && attachments.is_empty()) {
                    return conv.turns.touch(at.timestamp);
                }
                if conv.meta.first_prompt.is_none() {
                    conv.meta.first_prompt = Some(text.clone());
                }
                conv.turns.prompt(at, text);
                for a in attachments {
                    conv.turns.attachment(at, a);
                }
            }
            Some("assistant") => {
                let (text, _) = input_parts(line.content);
                conv.turns.assistant_text(at, None, &text);
                let calls: Vec<&RawValue> =
                    line.tool_calls.and_then(lenient::parse).unwrap_or_default();
                for raw in calls {
                    let p: Payload = lenient::parse(raw).unwrap_or_default();
                    let f: Function = p.function.and_then(lenient::parse).unwrap_or_default();
                    let s = Streaming {
                        id: p.id.non_empty().map(str::to_owned),
                        name: f.name.non_empty().unwrap_or("unknown").to_owned(),
                        args: f.arguments.into_owned().unwrap_or_default(),
                    };
                    for call in calls_of(&s) {
                        conv.turns.tool_call(at, call);
                    }
                }
            }
            _ => {}
        }
    }
}

impl LineParser for KimiParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let rec: Line = serde_json::from_slice(line).map_err(|e| LineError::Json(e.to_string()))?;
        let at = At {
            offset,
            timestamp: rec.timestamp.0,
            dup_key: None,
        };
        if let Some(message) = rec.message {
            let env: Envelope =
                lenient::parse(message).ok_or(LineError::NoMessage("wire record"))?;
            let kind = env.kind.as_deref().ok_or(LineError::NoType)?;
            self.record("", kind, env.payload, at);
        } else if rec.role.as_deref().is_some() {
            self.context(&rec, at);
        }
        Ok(())
    }

    fn drain(&mut self) -> Vec<ConvState> {
        // `kimi.json` may learn the work directory after the session began
        if self.convs.main_ref().meta.cwd.is_none() {
            let wd = self
                .subagents_dir
                .as_deref()
                .and_then(|s| s.parent()?.parent());
            if let Some(cwd) = wd.and_then(work_dir) {
                for conv in self.convs.iter_mut() {
                    conv.meta.cwd.get_or_insert_with(|| cwd.clone());
                }
            }
        }
        if let Some((title, generated)) = self.session_dir.as_deref().and_then(state_title) {
            let meta = &mut self.convs.main().meta;
            match generated {
                true => meta.ai_title = Some(title),
                false => meta.custom_title = Some(title),
            }
        }
        self.convs.drain()
    }
}
