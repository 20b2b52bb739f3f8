//! Writer of Qwen Code chat files (`<root>/projects/<project>/chats/<session>.jsonl`) as the CLI
//! writes them: one `ChatRecord` per line, chained by `uuid`/`parentUuid`, Gemini `Content`
//! messages, system records for titles, rewinds and telemetry.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::formats::{Clock, append_line};
use super::ids::new_uuid;

/// A `functionCall` part.
pub fn q_call(name: &str, args: Value) -> Value {
    json!({"functionCall": {"id": format!("call_{}", new_uuid()), "name": name, "args": args}})
}

/// One chat file.
pub struct QwenChat {
    pub path: PathBuf,
    pub session_id: String,
    clock: Clock,
    last: Option<String>,
    cwd: String,
    branch: Option<String>,
}

impl QwenChat {
    /// A chat of `project` (the sanitized cwd directory) under `root` (`~/.qwen`).
    pub fn new(root: &Path, project: &str, session_id: &str, cwd: &str) -> Self {
        let path = root
            .join("projects")
            .join(project)
            .join("chats")
            .join(format!("{session_id}.jsonl"));
        Self::at(path, session_id, cwd)
    }

    pub fn at(path: PathBuf, session_id: &str, cwd: &str) -> Self {
        QwenChat {
            path,
            session_id: session_id.to_string(),
            clock: Clock::default(),
            last: None,
            cwd: cwd.to_string(),
            branch: Some("main".into()),
        }
    }

    pub fn id(&self) -> String {
        format!("qwen:{}", self.session_id)
    }

    /// Uuid of the last record written.
    pub fn last_uuid(&self) -> String {
        self.last.clone().expect("a record was written")
    }

    pub fn set_branch(&mut self, branch: Option<&str>) -> &mut Self {
        self.branch = branch.map(String::from);
        self
    }

    pub fn set_cwd(&mut self, cwd: &str) -> &mut Self {
        self.cwd = cwd.to_string();
        self
    }

    /// A record of `kind` chained to the previous one, plus `fields`.
    pub fn record(&mut self, kind: &str, fields: Value) -> &mut Self {
        let uuid = new_uuid();
        let mut v = json!({
            "uuid": uuid, "parentUuid": self.last, "sessionId": self.session_id,
            "timestamp": self.clock.tick(), "type": kind, "cwd": self.cwd, "version": "0.24.4"
        });
        if let Some(b) = &self.branch {
            v["gitBranch"] = json!(b);
        }
        if let (Some(o), Some(f)) = (v.as_object_mut(), fields.as_object()) {
            o.extend(f.clone());
        }
        append_line(&self.path, &v.to_string());
        self.last = Some(uuid);
        self
    }

    /// A typed prompt (`provenance: real_user`).
    pub fn user(&mut self, text: &str) -> &mut Self {
        self.record(
            "user",
            json!({"provenance": "real_user",
            "message": {"role": "user", "parts": [{"text": text}]}}),
        )
    }

    /// A prompt whose model text differs from what the human typed (`displayText`).
    pub fn user_shown(&mut self, model_text: &str, shown: &str) -> &mut Self {
        self.record(
            "user",
            json!({"provenance": "real_user", "systemPayload": {"displayText": shown},
            "message": {"role": "user", "parts": [{"text": model_text}]}}),
        )
    }

    /// A user record with a `subtype` (notification, slash_command, …).
    pub fn user_subtype(&mut self, subtype: &str, text: &str) -> &mut Self {
        self.record(
            "user",
            json!({"subtype": subtype,
            "message": {"role": "user", "parts": [{"text": text}]}}),
        )
    }

    /// A user record the harness wrote (`provenance`).
    pub fn user_provenance(&mut self, provenance: &str, text: &str) -> &mut Self {
        self.record(
            "user",
            json!({"provenance": provenance,
            "message": {"role": "user", "parts": [{"text": text}]}}),
        )
    }

    /// A model reply: text then the given parts (function calls).
    pub fn assistant(&mut self, text: &str, parts: Vec<Value>) -> &mut Self {
        let mut all = vec![json!({"text": text})];
        all.extend(parts);
        self.record(
            "assistant",
            json!({"provenance": "assistant_output", "model": "qwen3-coder",
            "message": {"role": "model", "parts": all},
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}}),
        )
    }

    pub fn thought(&mut self, text: &str) -> &mut Self {
        self.record(
            "assistant",
            json!({"message": {"role": "model", "parts": [{"text": text, "thought": true}]}}),
        )
    }

    pub fn tool_result(&mut self, name: &str, output: &str) -> &mut Self {
        self.record("tool_result", json!({"provenance": "tool_result",
            "message": {"role": "user", "parts": [{"functionResponse": {"id": "c", "name": name, "response": {"output": output}}}]},
            "toolCallResult": {"callId": "c", "status": "success", "resultDisplay": output}}))
    }

    pub fn system(&mut self, subtype: &str, payload: Value) -> &mut Self {
        self.record(
            "system",
            json!({"subtype": subtype, "provenance": "system", "systemPayload": payload}),
        )
    }

    pub fn title(&mut self, title: &str, manual: bool) -> &mut Self {
        let source = if manual { "manual" } else { "auto" };
        self.system(
            "custom_title",
            json!({"customTitle": title, "titleSource": source}),
        )
    }

    pub fn telemetry(&mut self, text: &str) -> &mut Self {
        self.system(
            "ui_telemetry",
            json!({"uiEvent": {"event.name": "qwen-code.api_response", "response_text": text}}),
        )
    }

    /// `/rewind` to `target`: the chat continues from it.
    pub fn rewind_to(&mut self, target: &str) -> &mut Self {
        self.last = Some(target.to_string());
        self.system("rewind", json!({"targetUuid": target, "truncatedCount": 2}))
    }

    /// A sidechain record of a background agent.
    pub fn sidechain(&mut self, agent: &str, kind: &str, text: &str) -> &mut Self {
        let role = if kind == "user" { "user" } else { "model" };
        let main = self.last.clone();
        self.record(
            kind,
            json!({"isSidechain": true, "agentId": agent, "agentName": "explorer",
            "message": {"role": role, "parts": [{"text": text}]}}),
        );
        // the main chain goes on from its own last record
        self.last = main;
        self
    }
}
