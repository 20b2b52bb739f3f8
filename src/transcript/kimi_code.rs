//! Kimi Code (the TypeScript successor of Kimi CLI): journals under `$KIMI_CODE_HOME` or
//! `~/.kimi-code` as `sessions/wd_<slug>_<hash>/<session>/agents/<agent>/wire.jsonl` (`main` is
//! the session, every other agent a sub-agent) beside the session's `state.json` (title, work
//! directory, which agent spawned which); discovery and a resumable line parser.
//!
//! Lines are flattened ops `{type, …payload, time}` (epoch ms). Prompts are `turn.prompt` /
//! `turn.steer` ops whose origin is the user (a sub-agent's task arrives as `system_trigger`);
//! each is echoed by a `context.append_message`, read once. Reminders, plan-mode and other
//! injected messages (other origins) are not prompts. Replies and tool calls are
//! `context.append_loop_event`s (`content.part` text, `tool.call`); thinking, tool results, usage
//! and the other ~50 op types are never indexed.
use super::dir::sorted_entries;
use super::kimi::tool_calls;
use super::lenient::{self, Content, LStr, LTime, Shape};
use super::tools::ToolArgs;
use super::{
    Adapter, At, Attachment, ConvMeta, ConvState, LineError, LineParser, Reader, Role, SourceFile,
    SummaryRecord, TurnBuilder,
};
use crate::util::glob::Glob;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

pub(crate) const FORMAT: &str = "kimi-code";

/// The Kimi Code adapter.
pub(crate) struct KimiCode;

impl Adapter for KimiCode {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        match std::env::var_os("KIMI_CODE_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => home.join(".kimi-code"),
        }
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let mut out = Vec::new();
        for wd in sorted_entries(&sessions_dir(root)).into_iter() {
            for session in sorted_entries(&wd.path).into_iter().filter(|e| e.is_dir) {
                discover_session(&session.path, &mut out);
            }
        }
        out.sort();
        out
    }

    fn discover_under(&self, root: &Path, pattern: &Glob, dir: &Path) -> Vec<SourceFile> {
        let sessions = sessions_dir(root);
        let parts: Vec<&str> = match dir.strip_prefix(&sessions) {
            Ok(rel) => rel.iter().filter_map(|c| c.to_str()).collect(),
            // outside `sessions`: nothing, unless `sessions` is inside
            Err(_) if !sessions.starts_with(dir) => return Vec::new(),
            Err(_) => Vec::new(),
        };
        let mut out = match parts.as_slice() {
            [wd, session, ..] => {
                let mut out = Vec::new();
                discover_session(&sessions.join(wd).join(session), &mut out);
                out
            }
            _ => self.discover(root, pattern),
        };
        out.retain(|f| f.path.starts_with(dir));
        out
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let rel = path.strip_prefix(sessions_dir(root)).ok()?;
        let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
        match parts.as_slice() {
            [_, _, "agents", _, "wire.jsonl"] => source(path),
            _ => None,
        }
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(KimiCodeParser::new(file)))
    }
}

/// `<root>/sessions`, or the root itself when it is the `sessions` directory.
fn sessions_dir(root: &Path) -> PathBuf {
    match root.file_name().is_some_and(|n| n == "sessions") {
        true => root.to_owned(),
        false => root.join("sessions"),
    }
}

/// The agents' journals of one session directory.
fn discover_session(dir: &Path, out: &mut Vec<SourceFile>) {
    for agent in sorted_entries(&dir.join("agents")).into_iter() {
        let wire = agent.path.join("wire.jsonl");
        if agent.is_dir && wire.is_file() {
            out.extend(source(&wire));
        }
    }
}

/// What a session's `state.json` says.
#[derive(Deserialize, Default)]
struct State {
    #[serde(default)]
    title: Option<String>,
    #[serde(rename = "isCustomTitle", default)]
    is_custom_title: Option<bool>,
    #[serde(rename = "workDir", default)]
    work_dir: Option<String>,
    #[serde(default)]
    agents: FxHashMap<String, serde_json::Value>,
}

fn read_state(session_dir: &Path) -> State {
    let bytes = std::fs::read(session_dir.join("state.json")).unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or_default()
}

impl State {
    /// An agent's `type` and the agent that spawned it (`parentAgentId`).
    fn agent(&self, id: &str) -> (Option<String>, Option<String>) {
        let field = |k: &str| {
            let v = self.agents.get(id)?.get(k)?.as_str()?;
            (!v.is_empty()).then(|| v.to_owned())
        };
        (field("type"), field("parentAgentId"))
    }
}

/// `<session>/agents/<agent>/wire.jsonl`: the session (`main`) or a sub-agent.
fn source(path: &Path) -> Option<SourceFile> {
    let agent_dir = path.parent()?;
    let agent = agent_dir.file_name()?.to_str()?;
    let session_dir = agent_dir.parent()?.parent()?;
    let session = format!("{FORMAT}:{}", session_dir.file_name()?.to_str()?);
    let group = session_dir
        .parent()?
        .file_name()?
        .to_str()
        .map(str::to_owned);
    let role = match agent {
        "main" => Role::Session { id: session },
        _ => {
            let (agent_type, parent) = read_state(session_dir).agent(agent);
            let parent = match parent.as_deref() {
                None | Some("main") => session,
                Some(p) => format!("{session}/{p}"),
            };
            Role::Subagent {
                agent_id: agent.to_owned(),
                parent: Some(parent),
                agent_type,
                description: None,
            }
        }
    };
    Some(SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group,
        role,
    })
}

/// One op, with the fields of every op type read (all optional).
#[derive(Deserialize)]
struct Op<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(default)]
    time: LTime,
    #[serde(default)]
    created_at: LTime,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    origin: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    event: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: LStr<'a>,
    #[serde(rename = "environmentDisclosure", borrow, default)]
    environment: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary: Option<&'a RawValue>,
    #[serde(rename = "contextSummary", borrow, default)]
    context_summary: LStr<'a>,
}

/// A context message, a loop event, a content part or a tool call: the fields read of each.
#[derive(Deserialize, Default)]
struct Item<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    role: LStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(rename = "toolCalls", borrow, default)]
    tool_calls: Option<&'a RawValue>,
    #[serde(borrow, default)]
    origin: Option<&'a RawValue>,
    #[serde(borrow, default)]
    part: Option<&'a RawValue>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: LStr<'a>,
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(rename = "toolName", borrow, default)]
    tool_name: LStr<'a>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "mimeType", borrow, default)]
    mime_type: LStr<'a>,
}

/// The kind of a prompt origin, written as `{kind, …}` or as a bare string.
fn origin_kind(raw: Option<&RawValue>) -> Option<String> {
    let raw = raw?;
    if lenient::shape(raw) == Shape::String {
        return lenient::string(raw).map(|s| s.into_owned());
    }
    #[derive(Deserialize)]
    struct Origin<'a> {
        #[serde(borrow, default)]
        kind: LStr<'a>,
    }
    let origin: Origin = lenient::parse(raw)?;
    origin.kind.into_owned()
}

/// Text and non-text parts of a content list (or string); `think` parts are left out.
fn parts(raw: Option<&RawValue>) -> (String, Vec<Attachment>) {
    match raw.and_then(lenient::parse::<Content<Item>>) {
        Some(Content::Text(t)) => (t.trim().to_owned(), Vec::new()),
        Some(Content::Blocks(items)) => {
            let mut texts = Vec::new();
            let mut attachments = Vec::new();
            for p in &items {
                match p.kind.as_deref() {
                    Some("text") => texts.extend(p.text.non_empty().map(str::trim)),
                    Some("think") | None => {}
                    Some(kind) => attachments.push(Attachment {
                        kind: kind.to_owned(),
                        media_type: p.mime_type.non_empty().map(str::to_owned),
                    }),
                }
            }
            (texts.join("\n"), attachments)
        }
        _ => (String::new(), Vec::new()),
    }
}

/// Resumable parser for one agent's journal.
pub(crate) struct KimiCodeParser {
    id: String,
    session_dir: Option<PathBuf>,
    subagent: bool,
    meta: ConvMeta,
    turns: TurnBuilder,
    /// Origin of the last `turn.prompt`/`turn.steer`, whose `context.append_message` echo is
    /// still to come (and is not read again).
    echo: Option<String>,
}

impl KimiCodeParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        let session_dir = file
            .path
            .parent()
            .and_then(|a| Some(a.parent()?.parent()?.to_owned()));
        let (id, subagent) = match &file.role {
            Role::Session { id } => (id.clone(), false),
            Role::Subagent { agent_id, .. } => {
                let session = session_dir.as_deref().and_then(|s| s.file_name()?.to_str());
                let session = format!("{FORMAT}:{}", session.unwrap_or("?"));
                (format!("{session}/{agent_id}"), true)
            }
        };
        let mut meta = ConvMeta::default();
        if let Role::Subagent { agent_type, .. } = &file.role {
            meta.agent_type = agent_type.clone();
        }
        let mut parser = Self {
            id,
            session_dir,
            subagent,
            meta,
            turns: TurnBuilder::default(),
            echo: None,
        };
        parser.refresh_state();
        parser
    }

    /// Title and work directory from `state.json` (the title is the session's only).
    fn refresh_state(&mut self) {
        let Some(dir) = &self.session_dir else {
            return;
        };
        let state = read_state(dir);
        if let Some(wd) = state.work_dir.filter(|w| !w.is_empty()) {
            self.meta.cwd = Some(wd);
        }
        match (self.subagent, state.title.filter(|t| !t.trim().is_empty())) {
            (false, Some(t)) if state.is_custom_title == Some(true) => {
                self.meta.custom_title = Some(t)
            }
            (false, Some(t)) => self.meta.ai_title = Some(t),
            _ => {}
        }
    }

    /// Whether a prompt of this origin was typed by the human (for a sub-agent: its task).
    fn is_human(&self, origin: Option<&str>) -> bool {
        match origin {
            None | Some("user") => true,
            Some("system_trigger") => self.subagent,
            _ => false,
        }
    }

    fn prompt(&mut self, at: At, raw: Option<&RawValue>, later: bool) {
        let (text, attachments) = parts(raw);
        if self.meta.first_prompt.is_none() && !text.is_empty() {
            self.meta.first_prompt = Some(text.clone());
        }
        match later {
            false => self.turns.prompt(at, text),
            true => self.turns.later_prompt(at, &text),
        }
        for a in attachments {
            self.turns.attachment(at, a);
        }
    }

    fn message(&mut self, at: At, raw: &RawValue) {
        let m: Item = lenient::parse(raw).unwrap_or_default();
        match m.role.as_deref() {
            Some("user") => {
                let origin = origin_kind(m.origin);
                let echoed = self
                    .echo
                    .as_deref()
                    .is_some_and(|e| origin.is_none() || origin.as_deref() == Some(e));
                if echoed {
                    self.echo = None;
                } else if self.is_human(origin.as_deref()) {
                    self.prompt(at, m.content, false);
                    return;
                }
                self.turns.touch(at.timestamp);
            }
            Some("assistant") => {
                let (text, _) = parts(m.content);
                self.turns.assistant_text(at, None, &text);
                let calls: Vec<&RawValue> =
                    m.tool_calls.and_then(lenient::parse).unwrap_or_default();
                for c in calls {
                    self.tool_call(at, &lenient::parse(c).unwrap_or_default());
                }
            }
            _ => self.turns.touch(at.timestamp),
        }
    }

    fn loop_event(&mut self, at: At, raw: &RawValue) {
        let e: Item = lenient::parse(raw).unwrap_or_default();
        match e.kind.as_deref() {
            Some("content.part") => {
                let part: Item = e.part.and_then(lenient::parse).unwrap_or_default();
                if part.kind.as_deref() == Some("text") {
                    let text = part.text.as_deref().unwrap_or("");
                    self.turns.assistant_text(at, None, text);
                }
            }
            Some("tool.call") => self.tool_call(at, &e),
            _ => self.turns.touch(at.timestamp),
        }
    }

    /// A tool call: `{toolCallId, name, args}` (also `toolName`/`input`, or OpenAI-style
    /// `{id, function: {name, arguments}}` in context messages).
    fn tool_call(&mut self, at: At, c: &Item) {
        let id = [&c.tool_call_id, &c.id]
            .into_iter()
            .find_map(LStr::non_empty);
        let name = [&c.name, &c.tool_name]
            .into_iter()
            .find_map(LStr::non_empty);
        let args = c.args.or(c.input).or(c.arguments);
        let text = args.and_then(lenient::string);
        let args = match &text {
            Some(t) => ToolArgs::from_json(t),
            None => ToolArgs::from_raw(args),
        };
        let name = name.unwrap_or("unknown");
        for call in tool_calls(id.map(str::to_owned), name, args) {
            self.turns.tool_call(at, call);
        }
    }

    fn cwd(&mut self, op: &Op) {
        #[derive(Deserialize)]
        struct Env<'a> {
            #[serde(borrow, default)]
            cwd: LStr<'a>,
        }
        let disclosed: Option<Env> = op.environment.and_then(lenient::parse);
        let cwd = op
            .cwd
            .non_empty()
            .or(disclosed.as_ref().and_then(|d| d.cwd.non_empty()));
        if let (None, Some(cwd)) = (&self.meta.cwd, cwd) {
            self.meta.cwd = Some(cwd.to_owned());
        }
    }
}

impl LineParser for KimiCodeParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let op: Op = serde_json::from_slice(line).map_err(|e| LineError::Json(e.to_string()))?;
        let kind = op.kind.as_deref().ok_or(LineError::NoType)?;
        let timestamp = op.time.0.or(op.created_at.0);
        self.meta.note_timestamp(timestamp);
        let at = At {
            offset,
            timestamp,
            dup_key: None,
        };
        match kind {
            "turn.prompt" | "turn.steer" => {
                let origin = origin_kind(op.origin);
                if self.is_human(origin.as_deref()) {
                    self.prompt(at, op.input, kind == "turn.steer");
                }
                self.echo = Some(origin.unwrap_or_else(|| "user".to_owned()));
            }
            "context.append_message" => {
                if let Some(m) = op.message {
                    self.message(at, m);
                }
            }
            "context.append_loop_event" => {
                if let Some(e) = op.event {
                    self.loop_event(at, e);
                }
            }
            "context.apply_compaction" => {
                let summary = op.summary.and_then(lenient::string).map(|s| s.into_owned());
                let text = summary.or(op.context_summary.into_owned());
                if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
                    self.meta.summaries.push(SummaryRecord {
                        text,
                        ..SummaryRecord::default()
                    });
                }
            }
            "config.update" | "profile.bind" | "environment.set_binding" => self.cwd(&op),
            _ => self.turns.touch(timestamp),
        }
        Ok(())
    }

    fn drain(&mut self) -> Vec<ConvState> {
        self.refresh_state();
        vec![ConvState {
            id: self.id.clone(),
            meta: self.meta.clone(),
            completed: self.turns.take_completed(),
            open: self.turns.open_turn(),
            turn_count: self.turns.turn_count(),
        }]
    }
}
