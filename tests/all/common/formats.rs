//! Typed builders for OpenClaw, Codex CLI and Gemini CLI transcript trees in temp dirs (what
//! `fixture.rs` is for Claude Code), and a server started over `--source FORMAT:PATH` roots.
//!
//! Every builder appends one JSON line per call (append mode, flushed), with a monotonic clock,
//! so tests can also append while a server watches.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::ids::{DEFAULT_START, format_iso_ms, new_uuid, next_n, parse_iso_ms};
use super::mcp::McpClient;

/// A temp directory used as one source root (`~/.openclaw/agents`, `~/.codex/sessions`, …).
pub struct SourceRoot {
    dir: tempfile::TempDir,
}

impl SourceRoot {
    pub fn new(prefix: &str) -> Self {
        SourceRoot {
            dir: tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .expect("temp source root"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `FORMAT:PATH` for `--source`.
    pub fn arg(&self, format: &str) -> String {
        format!("{format}:{}", self.dir.path().display())
    }
}

/// Starts a server over `--source` arguments (plus `extra`) and waits for the first index.
pub fn serve_sources(sources: &[String], extra: &[&str]) -> McpClient {
    let mut args: Vec<&str> = Vec::new();
    for s in sources {
        args.push("--source");
        args.push(s);
    }
    args.extend_from_slice(extra);
    let c = McpClient::start(&args);
    c.wait_ready();
    c
}

/// Appends one line to `path` (parents created).
pub fn append_line(path: &Path, line: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create parent dirs");
    }
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open transcript for append");
    writeln!(f, "{line}").expect("append line");
    f.flush().expect("flush");
}

/// A monotonic clock (one second per tick) starting at [`DEFAULT_START`].
#[derive(Debug, Clone)]
pub struct Clock(i64);

impl Default for Clock {
    fn default() -> Self {
        Clock(parse_iso_ms(DEFAULT_START))
    }
}

impl Clock {
    pub fn tick(&mut self) -> String {
        self.0 += 1000;
        format_iso_ms(self.0)
    }
}

// ---------------------------------------------------------------- OpenClaw (pi v3)

/// One OpenClaw session file `<root>/<agent>/sessions/<id>.jsonl`.
pub struct OpenClawSession {
    pub path: PathBuf,
    pub session_id: String,
    clock: Clock,
    last: Option<String>,
}

/// A `text` content block.
pub fn oc_text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// A `thinking` content block.
pub fn oc_thinking(t: &str) -> Value {
    json!({"type": "thinking", "thinking": t, "thinkingSignature": "sig"})
}

/// A `toolCall` content block.
pub fn oc_tool(id: &str, name: &str, arguments: Value) -> Value {
    json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments})
}

impl OpenClawSession {
    /// Writes the `session` header into `<root>/<agent>/sessions/<id>.jsonl`.
    pub fn new(root: &Path, agent: &str, session_id: &str, cwd: &str) -> Self {
        let path = root
            .join(agent)
            .join("sessions")
            .join(format!("{session_id}.jsonl"));
        Self::at(path, session_id, cwd)
    }

    /// Writes the header into an explicit file.
    pub fn at(path: PathBuf, session_id: &str, cwd: &str) -> Self {
        let mut s = OpenClawSession {
            path,
            session_id: session_id.to_string(),
            clock: Clock::default(),
            last: None,
        };
        let ts = s.clock.tick();
        s.raw(&json!({"type": "session", "version": 3, "id": session_id, "timestamp": ts, "cwd": cwd}));
        s
    }

    /// The conversation id the server reports.
    pub fn id(&self) -> String {
        format!("openclaw:{}", self.session_id)
    }

    pub fn raw(&mut self, v: &Value) -> &mut Self {
        append_line(&self.path, &v.to_string());
        self
    }

    /// An entry of `kind` with tree fields and a timestamp, plus `fields`.
    pub fn entry(&mut self, kind: &str, fields: Value) -> &mut Self {
        let id = format!("{:08x}", next_n() as u32 ^ 0x5eed_0000);
        let mut v =
            json!({"type": kind, "id": id, "parentId": self.last, "timestamp": self.clock.tick()});
        if let (Some(o), Some(f)) = (v.as_object_mut(), fields.as_object()) {
            o.extend(f.clone());
        }
        self.last = Some(id);
        self.raw(&v)
    }

    pub fn message(&mut self, message: Value) -> &mut Self {
        self.entry("message", json!({"message": message}))
    }

    /// A user prompt as a list of text blocks.
    pub fn user(&mut self, text: &str) -> &mut Self {
        self.message(json!({"role": "user", "content": [oc_text(text)], "timestamp": 1}))
    }

    /// A user prompt whose content is a plain string.
    pub fn user_string(&mut self, text: &str) -> &mut Self {
        self.message(json!({"role": "user", "content": text}))
    }

    /// An assistant message with the given blocks.
    pub fn assistant(&mut self, blocks: Vec<Value>) -> &mut Self {
        self.assistant_model(blocks, "claude-sonnet-4-5")
    }

    pub fn assistant_model(&mut self, blocks: Vec<Value>, model: &str) -> &mut Self {
        self.message(json!({
            "role": "assistant", "content": blocks, "api": "anthropic-messages",
            "provider": "anthropic", "model": model, "stopReason": "stop",
            "usage": {"input": 10, "output": 5, "totalTokens": 15}
        }))
    }

    /// An error-only assistant message (`content: []` plus `errorMessage`).
    pub fn assistant_error(&mut self, error: &str) -> &mut Self {
        self.message(json!({"role": "assistant", "content": [], "stopReason": "error", "errorMessage": error}))
    }

    pub fn tool_result(&mut self, call_id: &str, name: &str, text: &str) -> &mut Self {
        self.message(json!({
            "role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [oc_text(text)], "isError": false
        }))
    }
}

// ---------------------------------------------------------------- Codex CLI

/// One Codex rollout `<root>/2026/05/01/rollout-2026-05-01T10-00-00-<id>.jsonl`.
pub struct CodexRollout {
    pub path: PathBuf,
    pub session_id: String,
    clock: Clock,
    /// Every line written, in order (for replaying into a fork).
    pub lines: Vec<String>,
}

/// A fresh Codex thread id: a UUIDv7 whose time is the writers' default start, as Codex
/// names threads (the reader finds a fork's origin by the date in its id).
pub fn codex_id() -> String {
    let ms = parse_iso_ms(DEFAULT_START) as u64;
    let n = next_n();
    format!(
        "{:08x}-{:04x}-7{:03x}-8{:03x}-{:04x}{:08x}",
        ms >> 16,
        ms & 0xffff,
        n & 0xfff,
        (n >> 12) & 0xfff,
        std::process::id() & 0xffff,
        n
    )
}

impl CodexRollout {
    /// Writes `session_meta` (with `git.branch` when given) into the dated layout.
    pub fn new(root: &Path, session_id: &str, cwd: &str, branch: Option<&str>) -> Self {
        let path = root
            .join("2026/05/01")
            .join(format!("rollout-2026-05-01T10-00-00-{session_id}.jsonl"));
        let mut r = Self::empty(path, session_id);
        r.session_meta(session_id, cwd, branch, None);
        r
    }

    /// A rollout file without any line yet.
    pub fn empty(path: PathBuf, session_id: &str) -> Self {
        CodexRollout {
            path,
            session_id: session_id.to_string(),
            clock: Clock::default(),
            lines: Vec::new(),
        }
    }

    /// A forked rollout: its own `session_meta` (with `forked_from_id`), then the parent's
    /// lines replayed with new envelope timestamps, as Codex writes them.
    pub fn fork(root: &Path, session_id: &str, parent: &CodexRollout, cwd: &str) -> Self {
        let path = root
            .join("2026/05/02")
            .join(format!("rollout-2026-05-02T10-00-00-{session_id}.jsonl"));
        let mut r = Self::empty(path, session_id);
        r.clock.0 += 86_400_000;
        r.session_meta(session_id, cwd, None, Some(&parent.session_id));
        r.replay(parent);
        r
    }

    /// A sub-agent thread spawned with its parent's context: `session_meta` naming the parent
    /// (`parent_thread_id`, `forked_from_id`, `source.subagent.thread_spawn`), then the
    /// parent's lines replayed.
    pub fn spawned(root: &Path, session_id: &str, parent: &CodexRollout, role: &str) -> Self {
        let path = root
            .join("2026/05/01")
            .join(format!("rollout-2026-05-01T11-00-00-{session_id}.jsonl"));
        let mut r = Self::empty(path, session_id);
        r.clock.0 += 3_600_000;
        let spawn = json!({"parent_thread_id": parent.session_id, "depth": 1, "agent_role": role, "agent_nickname": "Ada"});
        r.line(
            "session_meta",
            json!({
                "id": session_id, "timestamp": format_iso_ms(r.clock.0), "cwd": "/w/forks",
                "originator": "codex_cli_rs", "cli_version": "0.146.0",
                "forked_from_id": parent.session_id, "parent_thread_id": parent.session_id,
                "source": {"subagent": {"thread_spawn": spawn}}, "model_provider": "openai"
            }),
        );
        r.replay(parent);
        r
    }

    /// Appends `origin`'s lines as a fork persists them: same payloads, new timestamps.
    pub fn replay(&mut self, origin: &CodexRollout) -> &mut Self {
        for line in &origin.lines {
            let mut v: Value = serde_json::from_str(line).expect("origin line");
            v["timestamp"] = json!(self.clock.tick());
            self.raw(&v);
        }
        self
    }

    pub fn id(&self) -> String {
        format!("codex:{}", self.session_id)
    }

    pub fn raw(&mut self, v: &Value) -> &mut Self {
        let line = v.to_string();
        append_line(&self.path, &line);
        self.lines.push(line);
        self
    }

    /// An envelope line `{timestamp, type, payload}`.
    pub fn line(&mut self, kind: &str, payload: Value) -> &mut Self {
        let ts = self.clock.tick();
        self.raw(&json!({"timestamp": ts, "type": kind, "payload": payload}))
    }

    pub fn session_meta(
        &mut self,
        id: &str,
        cwd: &str,
        branch: Option<&str>,
        forked_from: Option<&str>,
    ) -> &mut Self {
        let ts = format_iso_ms(self.clock.0);
        let mut p = json!({
            "id": id, "timestamp": ts, "cwd": cwd, "originator": "codex_cli_rs",
            "cli_version": "0.128.0", "source": "cli", "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent."}
        });
        if let Some(b) = branch {
            p["git"] = json!({"commit_hash": "0123abc", "branch": b, "repository_url": "https://example.invalid/r.git"});
        }
        if let Some(f) = forked_from {
            p["forked_from_id"] = json!(f);
        }
        self.line("session_meta", p)
    }

    pub fn turn_context(&mut self, cwd: &str) -> &mut Self {
        self.line("turn_context", json!({"turn_id": new_uuid(), "cwd": cwd, "model": "gpt-5-codex", "approval_policy": "on-request"}))
    }

    /// A `response_item` message of `role` with one content item of `item_type`.
    pub fn message(&mut self, role: &str, item_type: &str, text: &str) -> &mut Self {
        self.line("response_item", json!({"type": "message", "role": role, "content": [{"type": item_type, "text": text}]}))
    }

    /// A typed prompt as Codex writes it: `event_msg/user_message` then the `response_item`.
    pub fn user_turn(&mut self, text: &str) -> &mut Self {
        self.user_event(text).message("user", "input_text", text)
    }

    pub fn user_event(&mut self, text: &str) -> &mut Self {
        self.line(
            "event_msg",
            json!({"type": "user_message", "message": text, "images": [], "kind": "plain"}),
        )
    }

    /// A reply on both channels: `response_item` message then `event_msg/agent_message`.
    pub fn assistant(&mut self, text: &str) -> &mut Self {
        self.message("assistant", "output_text", text);
        self.line(
            "event_msg",
            json!({"type": "agent_message", "message": text}),
        )
    }

    /// 0.148+ `item_completed` user and agent messages.
    pub fn item_user(&mut self, text: &str) -> &mut Self {
        self.line("event_msg", json!({"type": "item_completed", "thread_id": self.session_id, "turn_id": "t",
            "item": {"type": "UserMessage", "id": new_uuid(), "content": [{"type": "text", "text": text, "text_elements": []}]}}))
    }

    pub fn item_agent(&mut self, text: &str) -> &mut Self {
        self.line("event_msg", json!({"type": "item_completed", "thread_id": self.session_id, "turn_id": "t",
            "item": {"type": "AgentMessage", "id": new_uuid(), "content": [{"type": "Text", "text": text}]}}))
    }

    /// Reasoning on both channels (`response_item/reasoning`, `event_msg/agent_reasoning`).
    pub fn reasoning(&mut self, text: &str) -> &mut Self {
        self.line("response_item", json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": text}], "content": null, "encrypted_content": "gAAAA"}));
        self.line(
            "event_msg",
            json!({"type": "agent_reasoning", "text": text}),
        )
    }

    /// Reasoning as newer Codex writes it: raw `content`, an empty summary and the opaque
    /// `encrypted_content`, plus a `compaction` item that is encrypted too.
    pub fn encrypted_reasoning(&mut self, raw: &str, encrypted: &str) -> &mut Self {
        self.line(
            "response_item",
            json!({"type": "reasoning", "summary": [],
            "content": [{"type": "reasoning_text", "text": raw}], "encrypted_content": encrypted}),
        );
        self.line(
            "response_item",
            json!({"type": "compaction", "encrypted_content": encrypted}),
        )
    }

    /// `function_call` (arguments JSON-encoded) and its `function_call_output`.
    pub fn function_call(&mut self, name: &str, args: Value, output: &str) -> &mut Self {
        let call_id = format!("call_{}", next_n());
        self.line("response_item", json!({"type": "function_call", "name": name, "arguments": args.to_string(), "call_id": call_id}));
        self.line(
            "response_item",
            json!({"type": "function_call_output", "call_id": call_id, "output": output}),
        )
    }

    /// `custom_tool_call` (raw `input`) and its output.
    pub fn custom_tool_call(&mut self, name: &str, input: &str, output: &str) -> &mut Self {
        let call_id = format!("call_{}", next_n());
        self.line("response_item", json!({"type": "custom_tool_call", "status": "completed", "call_id": call_id, "name": name, "input": input}));
        self.line(
            "response_item",
            json!({"type": "custom_tool_call_output", "call_id": call_id, "output": output}),
        )
    }

    pub fn local_shell(&mut self, command: &[&str]) -> &mut Self {
        let call_id = format!("call_{}", next_n());
        self.line(
            "response_item",
            json!({"type": "local_shell_call", "call_id": call_id, "status": "completed",
            "action": {"type": "exec", "command": command, "timeout_ms": 10000}}),
        )
    }

    pub fn web_search(&mut self, query: &str) -> &mut Self {
        self.line("response_item", json!({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": query}}))
    }

    /// `exec_command_end` event carrying command output.
    pub fn exec_end(&mut self, output: &str) -> &mut Self {
        self.line("event_msg", json!({"type": "exec_command_end", "call_id": "x", "command": ["ls"], "aggregated_output": output, "exit_code": 0}))
    }

    pub fn thread_name(&mut self, name: &str) -> &mut Self {
        self.line("event_msg", json!({"type": "thread_name_updated", "thread_id": self.session_id, "thread_name": name}))
    }
}

// ---------------------------------------------------------------- Gemini CLI

/// One Gemini CLI chat `<root>/<project>/chats/session-…-<id8>.jsonl` (or a sub-agent chat).
pub struct GeminiChat {
    pub path: PathBuf,
    pub session_id: String,
    clock: Clock,
}

/// A tool call record (`args`, and a `result` holding `output`).
pub fn gm_tool(name: &str, args: Value, output: &str) -> Value {
    let id = format!("{name}-{}", next_n());
    json!({
        "id": id, "name": name, "args": args, "status": "success", "timestamp": DEFAULT_START,
        "result": [{"functionResponse": {"id": id, "name": name, "response": {"output": output}}}],
        "resultDisplay": output, "displayName": name, "description": "", "renderOutputAsMarkdown": false
    })
}

impl GeminiChat {
    /// Writes the metadata header of a main chat of `project`.
    pub fn new(root: &Path, project: &str, session_id: &str) -> Self {
        let short: String = session_id.chars().take(8).collect();
        let path = root
            .join(project)
            .join("chats")
            .join(format!("session-2026-05-01T10-00-{short}.jsonl"));
        Self::at(path, session_id, "main")
    }

    /// A sub-agent chat `chats/<parent>/<id>.jsonl`.
    pub fn subagent(root: &Path, project: &str, parent: &str, session_id: &str) -> Self {
        let path = root
            .join(project)
            .join("chats")
            .join(parent)
            .join(format!("{session_id}.jsonl"));
        Self::at(path, session_id, "subagent")
    }

    fn at(path: PathBuf, session_id: &str, kind: &str) -> Self {
        let mut c = GeminiChat {
            path,
            session_id: session_id.to_string(),
            clock: Clock::default(),
        };
        let ts = c.clock.tick();
        c.record(&json!({"sessionId": session_id, "projectHash": "0b7dfb12", "startTime": ts, "lastUpdated": ts, "kind": kind}));
        c
    }

    /// Writes `<root>/<project>/.project_root`.
    pub fn project_root(root: &Path, project: &str, project_root: &str) {
        let dir = root.join(project);
        fs::create_dir_all(&dir).expect("project dir");
        fs::write(dir.join(".project_root"), project_root).expect("write .project_root");
    }

    pub fn id(&self) -> String {
        format!("gemini:{}", self.session_id)
    }

    pub fn record(&mut self, v: &Value) -> &mut Self {
        append_line(&self.path, &v.to_string());
        self
    }

    /// A message record (re-appending an existing `id` replaces that message).
    pub fn message(&mut self, id: &str, kind: &str, extra: Value) -> &mut Self {
        let mut v = json!({"id": id, "timestamp": self.clock.tick(), "type": kind});
        if let (Some(o), Some(f)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(f.clone());
        }
        self.record(&v)
    }

    pub fn user(&mut self, id: &str, text: &str) -> &mut Self {
        self.message(id, "user", json!({"content": [{"text": text}]}))
    }

    /// A model message with text, tool calls and thoughts.
    pub fn gemini(
        &mut self,
        id: &str,
        text: &str,
        tools: Vec<Value>,
        thoughts: &[&str],
    ) -> &mut Self {
        let thoughts: Vec<Value> = thoughts
            .iter()
            .map(|t| json!({"subject": "Thinking", "description": t, "timestamp": DEFAULT_START}))
            .collect();
        self.message(id, "gemini", json!({
            "content": text, "thoughts": thoughts, "toolCalls": tools, "model": "gemini-2.5-pro",
            "tokens": {"input": 10, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 15}
        }))
    }

    pub fn set(&mut self, fields: Value) -> &mut Self {
        self.record(&json!({"$set": fields}))
    }

    pub fn rewind(&mut self, id: &str) -> &mut Self {
        self.record(&json!({"$rewindTo": id}))
    }
}
