//! Typed writers for Cursor agent transcripts (`<projects>/<workspace>/agent-transcripts/`),
//! GitHub Copilot CLI session logs (`session-state/<id>/events.jsonl`) and Antigravity CLI
//! transcripts (`brain/<id>/.system_generated/logs/transcript.jsonl`) in temp dirs. One JSON
//! line per call, appended and flushed, so tests can also append while a server watches.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::formats::{Clock, append_line};

// ---------------------------------------------------------------- Cursor

/// One Cursor transcript file.
pub struct CursorTranscript {
    pub path: PathBuf,
    pub id: String,
}

/// How Cursor names a workspace directory: the path with `/` and `.` as `-`.
pub fn cursor_workspace(path: &str) -> String {
    path.trim_start_matches('/').replace(['/', '.'], "-")
}

impl CursorTranscript {
    /// `<root>/<workspace>/agent-transcripts/<id>/<id>.jsonl`, or `…/<id>.jsonl` when `flat`.
    pub fn new(root: &Path, work_dir: &str, id: &str, flat: bool) -> Self {
        let dir = root
            .join(cursor_workspace(work_dir))
            .join("agent-transcripts");
        let path = match flat {
            true => dir.join(format!("{id}.jsonl")),
            false => dir.join(id).join(format!("{id}.jsonl")),
        };
        fs::create_dir_all(path.parent().unwrap()).expect("transcript dir");
        CursorTranscript {
            path,
            id: format!("cursor:{id}"),
        }
    }

    /// A sub-agent transcript `<parent id>/subagents/<child>.jsonl`.
    pub fn subagent(parent: &CursorTranscript, child: &str) -> Self {
        let name = parent.id.trim_start_matches("cursor:");
        let dir = parent.path.parent().unwrap();
        let dir = match dir.file_name().and_then(|n| n.to_str()) == Some(name) {
            true => dir.join("subagents"),
            false => dir.join(name).join("subagents"),
        };
        fs::create_dir_all(&dir).expect("subagents dir");
        CursorTranscript {
            path: dir.join(format!("{child}.jsonl")),
            id: format!("{}/{child}", parent.id),
        }
    }

    pub fn raw(&mut self, v: &Value) -> &mut Self {
        append_line(&self.path, &v.to_string());
        self
    }

    /// A prompt in Cursor's `<user_query>` wrapper.
    pub fn user(&mut self, text: &str) -> &mut Self {
        let wrapped = format!("<user_query>\n{text}\n</user_query>");
        self.raw(
            &json!({"role": "user", "message": {"content": [{"type": "text", "text": wrapped}]}}),
        )
    }

    pub fn assistant(&mut self, blocks: Vec<Value>) -> &mut Self {
        self.raw(&json!({"role": "assistant", "message": {"content": blocks}}))
    }

    pub fn tool_result(&mut self, text: &str) -> &mut Self {
        self.raw(&json!({"role": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t", "content": text}]}}))
    }

    pub fn turn_ended(&mut self) -> &mut Self {
        self.raw(&json!({"type": "turn_ended", "status": "success"}))
    }
}

pub fn cu_text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

pub fn cu_tool(name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": name, "input": input})
}

// ---------------------------------------------------------------- Copilot CLI

/// One Copilot CLI session log.
pub struct CopilotSession {
    pub path: PathBuf,
    pub id: String,
    clock: Clock,
    n: u64,
}

impl CopilotSession {
    /// `<root>/<id>/events.jsonl`, or the older flat `<root>/<id>.jsonl`; starts with
    /// `session.start` (cwd and branch in its context).
    pub fn new(root: &Path, id: &str, flat: bool, cwd: &str, branch: &str) -> Self {
        let path = match flat {
            true => root.join(format!("{id}.jsonl")),
            false => root.join(id).join("events.jsonl"),
        };
        let mut s = CopilotSession {
            path,
            id: format!("copilot:{id}"),
            clock: Clock::default(),
            n: 0,
        };
        s.event(
            "session.start",
            json!({"sessionId": id, "version": 1, "producer": "copilot-agent",
                "copilotVersion": "1.0.77", "startTime": "2026-05-01T10:00:00.000Z",
                "context": {"cwd": cwd, "gitRoot": cwd, "branch": branch}}),
        );
        s
    }

    /// An event `{type, data, id, timestamp, parentId}`.
    pub fn event(&mut self, kind: &str, data: Value) -> &mut Self {
        self.n += 1;
        let parent = (self.n > 1).then(|| format!("e{}", self.n - 1));
        let line = json!({"type": kind, "data": data, "id": format!("e{}", self.n),
            "timestamp": self.clock.tick(), "parentId": parent});
        append_line(&self.path, &line.to_string());
        self
    }

    pub fn user(&mut self, text: &str) -> &mut Self {
        self.event(
            "user.message",
            json!({"content": text, "transformedContent": format!("<ts/>{text}"), "attachments": []}),
        )
    }

    /// A reply with tool requests `(call id, name, arguments)`; arguments given as a string are
    /// written as JSON text (as some versions do).
    pub fn assistant(&mut self, text: &str, tools: &[(&str, &str, Value)]) -> &mut Self {
        self.reply(None, text, tools)
    }

    /// A reply of the sub-agent spawned by `call`.
    pub fn reply(
        &mut self,
        call: Option<&str>,
        text: &str,
        tools: &[(&str, &str, Value)],
    ) -> &mut Self {
        let requests: Vec<Value> = tools
            .iter()
            .map(|(id, name, args)| {
                json!({"toolCallId": id, "name": name, "arguments": args,
                "type": "function", "intentionSummary": "doing"})
            })
            .collect();
        let mut data = json!({"messageId": format!("m{}", self.n), "content": text,
            "toolRequests": requests, "reasoningText": "reasoningwordcopilot", "outputTokens": 3});
        if let Some(call) = call {
            data["parentToolCallId"] = json!(call);
        }
        self.event("assistant.message", data)
    }

    pub fn tool_run(&mut self, call: &str, name: &str, args: Value, output: &str) -> &mut Self {
        self.event(
            "tool.execution_start",
            json!({"toolCallId": call, "toolName": name, "arguments": args}),
        )
        .event(
            "tool.execution_complete",
            json!({"toolCallId": call, "success": true, "result": {"content": output}}),
        )
    }

    /// The session name in `workspace.yaml` beside `events.jsonl`.
    pub fn workspace_name(&self, name: &str) {
        let yaml = format!("id: {}\nname: {name}\n", self.id);
        fs::write(self.path.with_file_name("workspace.yaml"), yaml).expect("workspace.yaml");
    }
}

// ---------------------------------------------------------------- Antigravity CLI

/// One Antigravity conversation's `transcript.jsonl`.
pub struct AntigravityTranscript {
    pub path: PathBuf,
    pub id: String,
    clock: Clock,
    step: u64,
}

impl AntigravityTranscript {
    /// `<root>/brain/<id>/.system_generated/logs/transcript.jsonl`; the workspace is recorded
    /// in `<root>/history.jsonl`.
    pub fn new(root: &Path, id: &str, workspace: &str) -> Self {
        let path = root
            .join("brain")
            .join(id)
            .join(".system_generated/logs/transcript.jsonl");
        fs::create_dir_all(path.parent().unwrap()).expect("logs dir");
        let row = json!({"display": "x", "workspace": workspace, "timestamp": 1,
            "conversationId": id});
        append_line(&root.join("history.jsonl"), &row.to_string());
        AntigravityTranscript {
            path,
            id: format!("antigravity:{id}"),
            clock: Clock::default(),
            step: 0,
        }
    }

    pub fn step(&mut self, source: &str, kind: &str, fields: Value) -> &mut Self {
        let mut v = json!({"step_index": self.step, "source": source, "type": kind,
            "status": "DONE", "created_at": self.clock.tick()});
        v.as_object_mut()
            .unwrap()
            .extend(fields.as_object().cloned().unwrap_or_default());
        self.step += 1;
        append_line(&self.path, &v.to_string());
        self
    }

    /// A prompt as the CLI writes it, with metadata and settings blocks around the request.
    pub fn user(&mut self, text: &str) -> &mut Self {
        let content = format!(
            "<USER_REQUEST>\n{text}\n</USER_REQUEST>\n<ADDITIONAL_METADATA>\nThe current local time is: metadatawordag.\n</ADDITIONAL_METADATA>\n<USER_SETTINGS_CHANGE>\nThe user changed setting `Model Selection` from None to settingswordag.\n</USER_SETTINGS_CHANGE>"
        );
        self.step("USER_EXPLICIT", "USER_INPUT", json!({"content": content}))
            .step("SYSTEM", "CONVERSATION_HISTORY", json!({}))
    }

    /// A planner reply with tool calls `(name, args)`; every argument value is JSON-encoded.
    pub fn planner(&mut self, content: Option<&str>, tools: &[(&str, Value)]) -> &mut Self {
        let calls: Vec<Value> = tools
            .iter()
            .map(|(name, args)| {
                let encoded: serde_json::Map<String, Value> = args
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v.to_string())))
                    .collect();
                json!({"name": name, "args": encoded})
            })
            .collect();
        let mut fields = json!({"thinking": "thinkingwordag"});
        if let Some(c) = content {
            fields["content"] = json!(c);
        }
        if !calls.is_empty() {
            fields["tool_calls"] = json!(calls);
        }
        self.step("MODEL", "PLANNER_RESPONSE", fields)
    }

    pub fn result(&mut self, kind: &str, content: &str) -> &mut Self {
        self.step("MODEL", kind, json!({"content": content}))
    }
}
