//! Writer of Factory Droid session files (`<root>/<encoded-cwd>/<uuid>.jsonl` and the
//! `.settings.json` beside it) as the CLI writes them.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::formats::{Clock, append_line};
use super::ids::new_uuid;

pub fn d_text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

pub fn d_tool(name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": format!("call_{}", new_uuid()), "name": name, "input": input})
}

pub fn d_thinking(t: &str) -> Value {
    json!({"type": "thinking", "thinking": t, "signature": "sig"})
}

/// One session file.
pub struct DroidSession {
    pub path: PathBuf,
    pub session_id: String,
    clock: Clock,
}

impl DroidSession {
    /// Writes `session_start` into `<root>/<cwd with / as ->/<id>.jsonl` and the settings file.
    pub fn new(root: &Path, session_id: &str, cwd: &str, title: &str) -> Self {
        let dir = root.join(cwd.replace('/', "-"));
        let path = dir.join(format!("{session_id}.jsonl"));
        fs::create_dir_all(&dir).expect("session dir");
        fs::write(
            dir.join(format!("{session_id}.settings.json")),
            r#"{"model":"claude-sonnet-4-5","reasoningEffort":"off","autonomyMode":"auto-low"}"#,
        )
        .expect("settings");
        let mut s = DroidSession {
            path,
            session_id: session_id.to_string(),
            clock: Clock::default(),
        };
        s.raw(
            &json!({"type": "session_start", "id": session_id, "title": "first prompt",
            "sessionTitle": title, "owner": "tester", "version": 2, "cwd": cwd}),
        );
        s
    }

    pub fn id(&self) -> String {
        format!("droid:{}", self.session_id)
    }

    pub fn raw(&mut self, v: &Value) -> &mut Self {
        append_line(&self.path, &v.to_string());
        self
    }

    pub fn message(&mut self, role: &str, content: Vec<Value>) -> &mut Self {
        let v = json!({"type": "message", "id": new_uuid(), "timestamp": self.clock.tick(),
            "message": {"role": role, "content": content}});
        self.raw(&v)
    }

    pub fn user(&mut self, text: &str) -> &mut Self {
        self.message("user", vec![d_text(text)])
    }

    /// A prompt mentioning `@file`: the CLI appends the file's contents as a second block.
    pub fn user_with_file(&mut self, text: &str, file: &str, contents: &str) -> &mut Self {
        let injected = format!("Contents of {file} (lines 1-1 of 1):\n{contents}");
        self.message("user", vec![d_text(text), d_text(&injected)])
    }

    pub fn assistant(&mut self, blocks: Vec<Value>) -> &mut Self {
        self.message("assistant", blocks)
    }

    /// Tool output, delivered as a user message.
    pub fn tool_result(&mut self, output: &str) -> &mut Self {
        self.message(
            "user",
            vec![json!({"type": "tool_result", "tool_use_id": "call_x", "content": output})],
        )
    }

    pub fn todo_state(&mut self, todos: &str) -> &mut Self {
        let v = json!({"type": "todo_state", "id": new_uuid(), "timestamp": self.clock.tick(),
            "todos": {"todos": todos}, "messageIndex": 1});
        self.raw(&v)
    }
}
