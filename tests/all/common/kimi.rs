//! Typed writers for Kimi CLI (`~/.kimi/sessions/<md5(work dir)>/<session>/wire.jsonl`, with
//! `kimi.json`, `state.json` and `subagents/<agent>/`) and Kimi Code
//! (`~/.kimi-code/sessions/wd_<slug>_<hash>/<session>/agents/<agent>/wire.jsonl` with
//! `state.json`) trees in temp dirs. One JSON line per call, appended and flushed, with a
//! monotonic clock, so tests can also append while a server watches.

use std::fs;
use std::path::{Path, PathBuf};

use conversation_search::md5_hex;
use serde_json::{Value, json};

use super::formats::append_line;

/// Epoch seconds of the first record (2026-05-01T10:00:00Z).
const START_S: f64 = 1_777_629_600.0;

// ---------------------------------------------------------------- Kimi CLI

/// One Kimi CLI session directory and its `wire.jsonl`.
pub struct KimiSession {
    pub path: PathBuf,
    pub dir: PathBuf,
    pub session: String,
    clock: f64,
}

/// Records `work_dir` in the share directory's `kimi.json` (kept across calls).
fn register_work_dir(share: &Path, work_dir: &str) {
    let file = share.join("kimi.json");
    let mut meta: Value = fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| json!({"work_dirs": []}));
    let dirs = meta["work_dirs"].as_array_mut().expect("work_dirs");
    if !dirs.iter().any(|d| d["path"] == work_dir) {
        dirs.push(json!({"path": work_dir, "kaos": "local", "last_session_id": null}));
    }
    fs::create_dir_all(share).expect("share dir");
    fs::write(file, serde_json::to_vec_pretty(&meta).unwrap()).expect("kimi.json");
}

impl KimiSession {
    /// A session of `work_dir` under the share directory `share` (wire header written).
    pub fn new(share: &Path, work_dir: &str, session: &str) -> Self {
        register_work_dir(share, work_dir);
        let dir = share
            .join("sessions")
            .join(md5_hex(work_dir.as_bytes()))
            .join(session);
        Self::at(dir.join("wire.jsonl"), dir, session)
    }

    /// A sub-agent with its own directory `subagents/<agent>/` (wire log and `meta.json`).
    pub fn subagent(parent: &KimiSession, agent: &str, kind: &str, description: &str) -> Self {
        let dir = parent.dir.join("subagents").join(agent);
        fs::create_dir_all(&dir).expect("subagent dir");
        let meta = json!({"agent_id": agent, "subagent_type": kind, "status": "completed",
            "description": description, "created_at": START_S, "updated_at": START_S});
        fs::write(dir.join("meta.json"), meta.to_string()).expect("meta.json");
        let mut s = Self::at(dir.join("wire.jsonl"), dir, &parent.session);
        s.clock = parent.clock + 0.5;
        s
    }

    fn at(path: PathBuf, dir: PathBuf, session: &str) -> Self {
        append_line(
            &path,
            &json!({"type": "metadata", "protocol_version": "1.10"}).to_string(),
        );
        KimiSession {
            path,
            dir,
            session: session.to_string(),
            clock: START_S,
        }
    }

    pub fn id(&self) -> String {
        format!("kimi:{}", self.session)
    }

    /// A wire record `{timestamp, message: {type, payload}}`.
    pub fn record(&mut self, kind: &str, payload: Value) -> &mut Self {
        self.clock += 1.25;
        let line = json!({"timestamp": self.clock, "message": {"type": kind, "payload": payload}});
        append_line(&self.path, &line.to_string());
        self
    }

    /// `TurnBegin` with the input as a list of text parts.
    pub fn turn(&mut self, text: &str) -> &mut Self {
        self.record(
            "TurnBegin",
            json!({"user_input": [{"type": "text", "text": text}]}),
        )
        .record("StepBegin", json!({"n": 1}))
    }

    /// `SteerInput`: typed while Kimi works.
    pub fn steer(&mut self, text: &str) -> &mut Self {
        self.record("SteerInput", json!({"user_input": text}))
    }

    pub fn text(&mut self, text: &str) -> &mut Self {
        self.record("ContentPart", json!({"type": "text", "text": text}))
    }

    pub fn think(&mut self, text: &str) -> &mut Self {
        self.record(
            "ContentPart",
            json!({"type": "think", "think": text, "encrypted": null}),
        )
    }

    /// A whole `ToolCall` (arguments as JSON text).
    pub fn tool(&mut self, id: &str, name: &str, args: Value) -> &mut Self {
        self.tool_split(id, name, args, usize::MAX)
    }

    /// A `ToolCall` whose arguments stop after `at` characters, the rest in `ToolCallPart`s.
    pub fn tool_split(&mut self, id: &str, name: &str, args: Value, at: usize) -> &mut Self {
        let text = args.to_string();
        let cut = text.char_indices().nth(at).map_or(text.len(), |(i, _)| i);
        let (head, rest) = text.split_at(cut);
        self.record(
            "ToolCall",
            json!({"type": "function", "id": id,
                "function": {"name": name, "arguments": head}, "extras": null}),
        );
        for piece in rest.as_bytes().chunks(7) {
            let piece = String::from_utf8_lossy(piece).into_owned();
            self.record("ToolCallPart", json!({"arguments_part": piece}));
        }
        self
    }

    pub fn tool_result(&mut self, id: &str, output: &str) -> &mut Self {
        self.record(
            "ToolResult",
            json!({"tool_call_id": id, "return_value": {"is_error": false, "output": output,
                "message": "", "display": []}}),
        )
    }

    pub fn turn_end(&mut self) -> &mut Self {
        self.record(
            "StatusUpdate",
            json!({"context_tokens": 10, "token_usage": {"input_other": 1, "output": 2}}),
        )
        .record("TurnEnd", json!({}))
    }

    /// A sub-agent's own event, wrapped in the parent's log.
    pub fn inline(&mut self, call: &str, agent: &str, kind: &str, payload: Value) -> &mut Self {
        self.record(
            "SubagentEvent",
            json!({"parent_tool_call_id": call, "agent_id": agent, "subagent_type": "coder",
                "event": {"type": kind, "payload": payload}}),
        )
    }

    /// `state.json` with a title (`title_generated` as given).
    pub fn state(&self, title: &str, generated: bool) {
        let state = json!({"version": 1, "custom_title": title, "title_generated": generated,
            "archived": false, "wire_mtime": null});
        fs::write(self.dir.join("state.json"), state.to_string()).expect("state.json");
    }
}

// ---------------------------------------------------------------- Kimi Code

/// One agent journal of a Kimi Code session.
pub struct KimiCodeSession {
    pub path: PathBuf,
    pub session_dir: PathBuf,
    pub session: String,
    pub agent: String,
    clock: i64,
}

impl KimiCodeSession {
    /// The main journal of a session of `work_dir` under the Kimi Code home `home`.
    pub fn new(home: &Path, work_dir: &str, session: &str, title: &str) -> Self {
        let slug = work_dir.rsplit('/').next().unwrap_or("x").to_lowercase();
        let session_dir = home
            .join("sessions")
            .join(format!("wd_{slug}_{}", &md5_hex(work_dir.as_bytes())[..12]))
            .join(session);
        fs::create_dir_all(&session_dir).expect("session dir");
        let state = json!({"createdAt": "2026-05-01T10:00:00.000Z", "title": title,
            "isCustomTitle": false, "workDir": work_dir, "lastPrompt": "",
            "agents": {"main": {"homedir": "x", "type": "main", "parentAgentId": null}},
            "custom": {}});
        fs::write(session_dir.join("state.json"), state.to_string()).expect("state.json");
        Self::agent_at(session_dir, session, "main", 1_777_629_600_000)
    }

    /// A sub-agent journal `agents/<agent>/wire.jsonl`, recorded in `state.json`.
    pub fn subagent(&self, agent: &str, kind: &str) -> Self {
        let file = self.session_dir.join("state.json");
        let mut state: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
        state["agents"][agent] = json!({"homedir": "x", "type": kind, "parentAgentId": "main"});
        fs::write(&file, state.to_string()).expect("state.json");
        Self::agent_at(
            self.session_dir.clone(),
            &self.session,
            agent,
            self.clock + 500,
        )
    }

    fn agent_at(session_dir: PathBuf, session: &str, agent: &str, clock: i64) -> Self {
        let path = session_dir.join("agents").join(agent).join("wire.jsonl");
        append_line(
            &path,
            &json!({"type": "metadata", "protocol_version": "1.4", "created_at": clock})
                .to_string(),
        );
        KimiCodeSession {
            path,
            session_dir,
            session: session.to_string(),
            agent: agent.to_string(),
            clock,
        }
    }

    pub fn id(&self) -> String {
        match self.agent.as_str() {
            "main" => format!("kimi-code:{}", self.session),
            a => format!("kimi-code:{}/{a}", self.session),
        }
    }

    /// An op `{type, …fields, time}`.
    pub fn op(&mut self, kind: &str, fields: Value) -> &mut Self {
        self.clock += 1000;
        let mut v = json!({"type": kind});
        v.as_object_mut()
            .unwrap()
            .extend(fields.as_object().cloned().unwrap_or_default());
        v["time"] = json!(self.clock);
        append_line(&self.path, &v.to_string());
        self
    }

    fn message(&mut self, role: &str, text: &str, origin: Value) -> &mut Self {
        self.op(
            "context.append_message",
            json!({"message": {"role": role, "content": [{"type": "text", "text": text}],
                "toolCalls": [], "origin": origin}}),
        )
    }

    /// A prompt from the user: `turn.prompt` and its context echo.
    pub fn prompt(&mut self, text: &str) -> &mut Self {
        self.prompt_from(text, json!({"kind": "user"}))
    }

    pub fn prompt_from(&mut self, text: &str, origin: Value) -> &mut Self {
        self.op(
            "turn.prompt",
            json!({"input": [{"type": "text", "text": text}], "origin": origin}),
        )
        .message("user", text, origin)
    }

    /// `turn.steer` from the user and its echo.
    pub fn steer(&mut self, text: &str) -> &mut Self {
        self.op(
            "turn.steer",
            json!({"input": [{"type": "text", "text": text}], "origin": {"kind": "user"}}),
        )
        .message("user", text, json!({"kind": "user"}))
    }

    /// An injected reminder (not a prompt).
    pub fn injection(&mut self, text: &str) -> &mut Self {
        self.message(
            "user",
            text,
            json!({"kind": "injection", "variant": "plan_mode"}),
        )
    }

    fn loop_event(&mut self, event: Value) -> &mut Self {
        self.op("context.append_loop_event", json!({"event": event}))
    }

    pub fn text(&mut self, text: &str) -> &mut Self {
        self.loop_event(json!({"type": "content.part", "turnId": "0", "step": 1,
            "part": {"type": "text", "text": text}}))
    }

    pub fn think(&mut self, text: &str) -> &mut Self {
        self.loop_event(json!({"type": "content.part", "part": {"type": "think", "think": text}}))
    }

    pub fn tool(&mut self, id: &str, name: &str, args: Value) -> &mut Self {
        self.loop_event(
            json!({"type": "tool.call", "uuid": id, "toolCallId": id, "name": name,
            "args": args, "description": "running"}),
        )
    }

    pub fn tool_result(&mut self, id: &str, output: &str) -> &mut Self {
        self.loop_event(
            json!({"type": "tool.result", "parentUuid": id, "toolCallId": id,
            "result": {"output": output}}),
        )
    }
}
