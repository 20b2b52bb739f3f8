//! GitHub Copilot CLI sessions (`~/.copilot/session-state/<id>/events.jsonl`, older
//! `<id>.jsonl`; the VS Code agent writes the same events): discovery and a resumable parser.
//!
//! Lines are events `{type, data, id, timestamp, parentId}`. `user.message` is a prompt unless a
//! skill, another agent or autopilot sent it (`source`, `isAutopilotContinuation`);
//! `assistant.message` carries the reply and `toolRequests` (arguments as an object or as JSON in
//! a string), `tool.execution_start` repeats a call (read once). Sub-agents run inline: their
//! events carry `parentToolCallId`, the call that spawned them, and become sub-agent
//! conversations whose first prompt is that call's task. Reasoning, tool results, hooks, usage
//! and notices are never indexed. cwd and branch come from `session.start`/`session.resume`, the
//! title from `session.title_changed` or the session's `workspace.yaml`.
use super::convs::{Conv, ConvSet};
use super::dir::sorted_entries;
use super::lenient::{self, LBool, LStr, LTime};
use super::tools::{ToolArgs, kind_of, patch_calls};
use super::{
    Adapter, At, Attachment, ConvMeta, ConvState, LineError, LineParser, Reader, Role, SourceFile,
    ToolCall, ToolKind,
};
use crate::util::glob::Glob;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};

pub(crate) const FORMAT: &str = "copilot";

/// The Copilot CLI adapter.
pub(crate) struct Copilot;

impl Adapter for Copilot {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        home.join(".copilot").join("session-state")
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let mut out = Vec::new();
        for e in sorted_entries(root) {
            let path = match e.is_dir {
                true => e.path.join("events.jsonl"),
                false => e.path,
            };
            out.extend(source(root, &path));
        }
        out.sort();
        out
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        source(root, path)
    }

    fn reader(&self, file: &SourceFile) -> Reader {
        Reader::Lines(Box::new(CopilotParser::new(file)))
    }
}

/// `<root>/<id>/events.jsonl` or `<root>/<id>.jsonl`.
fn source(root: &Path, path: &Path) -> Option<SourceFile> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
    let id = match parts.as_slice() {
        [dir, "events.jsonl"] => *dir,
        [file] => file.strip_suffix(".jsonl")?,
        _ => return None,
    };
    (!id.is_empty() && path.is_file()).then(|| SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: None,
        role: Role::Session {
            id: format!("{FORMAT}:{id}"),
        },
    })
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(default)]
    timestamp: LTime,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    /// Newer builds: the sub-agent instance an event belongs to.
    #[serde(rename = "agentId", borrow, default)]
    agent_id: LStr<'a>,
}

/// The `data` fields of every event read (all optional).
#[derive(Deserialize, Default)]
struct Data<'a> {
    #[serde(borrow, default)]
    content: LStr<'a>,
    #[serde(rename = "messageId", borrow, default)]
    message_id: LStr<'a>,
    #[serde(borrow, default)]
    source: LStr<'a>,
    #[serde(rename = "isAutopilotContinuation", default)]
    autopilot: LBool,
    #[serde(borrow, default)]
    attachments: Option<&'a RawValue>,
    #[serde(rename = "toolRequests", borrow, default)]
    tool_requests: Option<&'a RawValue>,
    #[serde(rename = "parentToolCallId", borrow, default)]
    parent_tool_call_id: LStr<'a>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: LStr<'a>,
    #[serde(rename = "toolName", borrow, default)]
    tool_name: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LStr<'a>,
    #[serde(borrow, default)]
    context: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: LStr<'a>,
    #[serde(borrow, default)]
    branch: LStr<'a>,
    #[serde(rename = "agentName", borrow, default)]
    agent_name: LStr<'a>,
    #[serde(rename = "agentDescription", borrow, default)]
    agent_description: LStr<'a>,
    #[serde(borrow, default)]
    title: LStr<'a>,
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(rename = "mimeType", borrow, default)]
    mime_type: LStr<'a>,
}

/// Arguments of a sub-agent call read here (the shared reader does not keep the prompt).
#[derive(Deserialize, Default)]
struct TaskArgs<'a> {
    #[serde(borrow, default)]
    prompt: LStr<'a>,
    #[serde(borrow, default)]
    input: LStr<'a>,
}

/// What a Copilot tool does, by its name (CLI and VS Code agent names).
fn tool_kind(name: &str) -> ToolKind {
    match name {
        "view" | "read_file" => ToolKind::Read,
        "create" | "create_file" => ToolKind::Write,
        "edit"
        | "str_replace"
        | "str_replace_editor"
        | "replace_string_in_file"
        | "multi_replace_string_in_file"
        | "insert_edit_into_file" => ToolKind::Edit,
        "bash" | "shell" | "powershell" | "run_in_terminal" => ToolKind::Shell,
        "grep" | "glob" | "file_search" | "grep_search" | "semantic_search" => ToolKind::Search,
        "web_fetch" | "fetch_webpage" | "web_search" => ToolKind::Web,
        "task" | "runSubagent" => ToolKind::Agent,
        _ => kind_of(name),
    }
}

/// The calls of one tool request, and the task prompt when it spawns a sub-agent.
fn tool_calls(id: Option<String>, name: &str, args: Option<&RawValue>) -> (Vec<ToolCall>, String) {
    let text = args.and_then(lenient::string);
    let task: TaskArgs = match &text {
        Some(t) => serde_json::from_str(t).unwrap_or_default(),
        None => args.and_then(lenient::parse).unwrap_or_default(),
    };
    if name == "apply_patch" {
        let patch = task.input.as_deref().or(text.as_deref()).unwrap_or("");
        return (patch_calls(id, name, patch), String::new());
    }
    let parsed = match &text {
        Some(t) => ToolArgs::from_json(t),
        None => ToolArgs::from_raw(args),
    };
    let calls = parsed.into_calls(id, name, tool_kind(name));
    let prompt = match tool_kind(name) {
        ToolKind::Agent => task.prompt.non_empty().unwrap_or("").trim().to_owned(),
        _ => String::new(),
    };
    (calls, prompt)
}

/// A sub-agent call seen in a reply: where it was made and the task it gives.
struct Spawn {
    at: At,
    parent: String,
    prompt: String,
    agent_type: Option<String>,
    description: Option<String>,
}

/// Resumable parser for one Copilot session log.
pub(crate) struct CopilotParser {
    convs: ConvSet,
    path: PathBuf,
    /// Sub-agent calls by call id.
    spawns: FxHashMap<String, Spawn>,
    /// Sub-agent instance ids (`agentId`) by the call that spawned them.
    aliases: FxHashMap<String, String>,
}

impl CopilotParser {
    pub(crate) fn new(file: &SourceFile) -> Self {
        let id = match &file.role {
            Role::Session { id } => id.clone(),
            Role::Subagent { agent_id, .. } => format!("{FORMAT}:{agent_id}"),
        };
        Self {
            convs: ConvSet::new(Conv::new(id, ConvMeta::default())),
            path: file.path.clone(),
            spawns: FxHashMap::default(),
            aliases: FxHashMap::default(),
        }
    }

    /// The conversation key of an event: "" for the session, else the spawning call's id.
    fn key_of(&self, e: &Event, d: &Data) -> String {
        if let Some(k) = d.parent_tool_call_id.non_empty() {
            return k.to_owned();
        }
        match e.agent_id.non_empty() {
            Some(a) => self.aliases.get(a).cloned().unwrap_or_else(|| a.to_owned()),
            None => String::new(),
        }
    }

    /// The conversation under `key`, a sub-agent opened on first sight (its first turn is the
    /// task of the call that spawned it, starting where that call was made).
    fn conv(&mut self, key: &str, at: At) -> &mut Conv {
        if key.is_empty() {
            return self.convs.main();
        }
        if !self.convs.contains(key) {
            let main = self.convs.main_ref();
            let spawn = self.spawns.get(key);
            let meta = ConvMeta {
                parent_id: Some(spawn.map_or(main.id.clone(), |s| s.parent.clone())),
                cwd: main.meta.cwd.clone(),
                git_branch: main.meta.git_branch.clone(),
                agent_type: spawn.and_then(|s| s.agent_type.clone()),
                agent_description: spawn.and_then(|s| s.description.clone()),
                ..ConvMeta::default()
            };
            let mut conv = Conv::new(format!("{}/{key}", main.id), meta);
            let (start, prompt) = spawn.map_or((at, String::new()), |s| (s.at, s.prompt.clone()));
            if !prompt.is_empty() {
                conv.meta.first_prompt = Some(prompt.clone());
            }
            conv.turns.prompt(start, prompt);
            self.convs.get_or_insert_with(key, || conv);
        }
        self.convs.get(key).expect("just opened")
    }

    fn session(&mut self, d: &Data) {
        #[derive(Deserialize, Default)]
        struct Context<'a> {
            #[serde(borrow, default)]
            cwd: LStr<'a>,
            #[serde(borrow, default)]
            branch: LStr<'a>,
        }
        let c: Context = d.context.and_then(lenient::parse).unwrap_or_default();
        let meta = &mut self.convs.main().meta;
        let fill = |slot: &mut Option<String>, v: Option<&str>| {
            if slot.is_none() {
                *slot = v.map(str::to_owned);
            }
        };
        fill(&mut meta.recorded_session_id, d.session_id.non_empty());
        fill(&mut meta.cwd, c.cwd.non_empty().or(d.cwd.non_empty()));
        fill(
            &mut meta.git_branch,
            c.branch.non_empty().or(d.branch.non_empty()),
        );
    }

    fn user(&mut self, key: &str, d: &Data, at: At) {
        let text = d.content.as_deref().unwrap_or("").trim().to_owned();
        let injected =
            d.source.non_empty().is_some() || d.autopilot.0 || text.starts_with("<skill-context");
        let attachments: Vec<&RawValue> =
            d.attachments.and_then(lenient::parse).unwrap_or_default();
        let conv = self.conv(key, at);
        if injected || (text.is_empty() && attachments.is_empty()) {
            return conv.turns.touch(at.timestamp);
        }
        if conv.meta.first_prompt.is_none() && !text.is_empty() {
            conv.meta.first_prompt = Some(text.clone());
        }
        conv.turns.prompt(at, text);
        for raw in attachments {
            let a: Data = lenient::parse(raw).unwrap_or_default();
            conv.turns.attachment(
                at,
                Attachment {
                    kind: a.kind.non_empty().unwrap_or("file").to_owned(),
                    media_type: a.mime_type.non_empty().map(str::to_owned),
                },
            );
        }
    }

    /// One tool call (from a reply's `toolRequests` or a `tool.execution_start`).
    fn tool(
        &mut self,
        key: &str,
        id: Option<&str>,
        name: Option<&str>,
        args: Option<&RawValue>,
        at: At,
    ) {
        let name = name.unwrap_or("unknown");
        let (calls, prompt) = tool_calls(id.map(str::to_owned), name, args);
        if let (Some(id), Some(call)) = (id, calls.first()) {
            if call.kind == ToolKind::Agent && !self.spawns.contains_key(id) {
                let parent = self.conv(key, at).id.clone();
                let spawn = Spawn {
                    at,
                    parent,
                    prompt,
                    agent_type: call.agent_type.clone(),
                    description: call.description.clone(),
                };
                self.spawns.insert(id.to_owned(), spawn);
            }
        }
        let conv = self.conv(key, at);
        for call in calls {
            conv.turns.tool_call(at, call);
        }
    }

    fn assistant(&mut self, key: &str, d: &Data, at: At) {
        // a message repeated (or extended) under its id counts once
        let text = d.content.as_deref().unwrap_or("");
        let id = d.message_id.non_empty();
        self.conv(key, at).turns.assistant_text(at, id, text);
        let requests: Vec<&RawValue> = d.tool_requests.and_then(lenient::parse).unwrap_or_default();
        for raw in requests {
            let r: Data = lenient::parse(raw).unwrap_or_default();
            let name = r.name.non_empty().or(r.tool_name.non_empty());
            self.tool(key, r.tool_call_id.non_empty(), name, r.arguments, at);
        }
    }

    fn subagent_started(&mut self, e: &Event, d: &Data, at: At) {
        let Some(call) = d.tool_call_id.non_empty() else {
            return;
        };
        if let Some(agent) = e.agent_id.non_empty() {
            self.aliases.insert(agent.to_owned(), call.to_owned());
        }
        let conv = self.conv(call, at);
        let meta = &mut conv.meta;
        if meta.agent_type.is_none() {
            meta.agent_type = d.agent_name.non_empty().map(str::to_owned);
        }
        if meta.agent_description.is_none() {
            meta.agent_description = d.agent_description.non_empty().map(str::to_owned);
        }
    }
}

/// The session name in a `workspace.yaml` beside `events.jsonl` (`name:` or `summary:`).
fn workspace_title(events: &Path) -> Option<String> {
    if events.file_name()? != "events.jsonl" {
        return None;
    }
    let yaml = std::fs::read_to_string(events.with_file_name("workspace.yaml")).ok()?;
    ["name:", "summary:"].iter().find_map(|key| {
        let line = yaml.lines().find_map(|l| l.strip_prefix(key))?;
        let v = line.trim().trim_matches(['"', '\'']).trim();
        (!v.is_empty() && v != "|" && v != ">").then(|| v.to_owned())
    })
}

impl LineParser for CopilotParser {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let e: Event = serde_json::from_slice(line).map_err(|e| LineError::Json(e.to_string()))?;
        let kind = e.kind.as_deref().ok_or(LineError::NoType)?;
        let d: Data = e.data.and_then(lenient::parse).unwrap_or_default();
        let at = At {
            offset,
            timestamp: e.timestamp.0,
            dup_key: None,
        };
        let key = self.key_of(&e, &d);
        self.conv(&key, at).meta.note_timestamp(at.timestamp);
        match kind {
            "session.start" | "session.resume" | "session.context_changed" => self.session(&d),
            "session.title_changed" => {
                if let Some(t) = d.title.non_empty() {
                    self.convs.main().meta.ai_title = Some(t.to_owned());
                }
            }
            "user.message" => self.user(&key, &d, at),
            "assistant.message" => self.assistant(&key, &d, at),
            "tool.execution_start" => {
                let name = d.tool_name.non_empty().or(d.name.non_empty());
                self.tool(&key, d.tool_call_id.non_empty(), name, d.arguments, at);
            }
            "subagent.started" => self.subagent_started(&e, &d, at),
            _ => self.conv(&key, at).turns.touch(at.timestamp),
        }
        Ok(())
    }

    fn drain(&mut self) -> Vec<ConvState> {
        if let Some(title) = workspace_title(&self.path) {
            let meta = &mut self.convs.main().meta;
            if meta.ai_title.is_none() {
                meta.custom_title = Some(title);
            }
        }
        self.convs.drain()
    }
}
