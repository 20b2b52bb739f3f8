//! Writer of Amp thread documents (`<root>/T-<uuid>.json`), rewritten whole on every change as
//! Amp does.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::ids::{DEFAULT_START, new_uuid, parse_iso_ms};

pub fn a_text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

pub fn a_tool(name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "complete": true, "id": format!("toolu_{}", new_uuid()), "name": name, "input": input})
}

pub fn a_thinking(t: &str) -> Value {
    json!({"type": "thinking", "thinking": t, "signature": "sig", "provider": "anthropic"})
}

/// One thread.
pub struct AmpThread {
    pub path: PathBuf,
    pub doc: Value,
    clock: i64,
}

impl AmpThread {
    pub fn new(root: &Path, title: &str, cwd: &str, branch: &str) -> Self {
        let id = format!("T-{}", new_uuid());
        let clock = parse_iso_ms(DEFAULT_START);
        let doc = json!({
            "v": 1, "id": id, "created": clock, "title": title, "agentMode": "smart",
            "messages": [], "nextMessageId": 0,
            "env": {"initial": {"trees": [{"displayName": "repo", "uri": format!("file://{cwd}"),
                "repository": {"type": "git", "url": "https://example.invalid/r.git",
                "ref": format!("refs/heads/{branch}"), "sha": "0123"}}], "platform": {"os": "linux"}}}
        });
        AmpThread {
            path: root.join(format!("{id}.json")),
            doc,
            clock,
        }
    }

    pub fn id(&self) -> String {
        format!("amp:{}", self.doc["id"].as_str().expect("id"))
    }

    fn push(&mut self, mut m: Value) -> &mut Self {
        let n = self.doc["messages"].as_array().map_or(0, Vec::len);
        m["messageId"] = json!(n);
        self.doc["messages"]
            .as_array_mut()
            .expect("messages")
            .push(m);
        self.doc["nextMessageId"] = json!(n + 1);
        self
    }

    pub fn user(&mut self, text: &str) -> &mut Self {
        self.clock += 1000;
        let m = json!({"role": "user", "content": [a_text(text)], "meta": {"sentAt": self.clock}});
        self.push(m)
    }

    pub fn assistant(&mut self, blocks: Vec<Value>) -> &mut Self {
        self.clock += 1000;
        let ts = super::ids::format_iso_ms(self.clock);
        let m = json!({"role": "assistant", "content": blocks, "state": {"type": "complete"},
            "usage": {"model": "claude-sonnet-4-5", "timestamp": ts}});
        self.push(m)
    }

    pub fn tool_result(&mut self, output: &str) -> &mut Self {
        let m = json!({"role": "user", "content": [{"type": "tool_result", "toolUseID": "toolu_x",
            "run": {"status": "done", "result": {"output": output}}}]});
        self.push(m)
    }

    /// Writes the document (whole, in place).
    pub fn save(&self) -> &Self {
        fs::create_dir_all(self.path.parent().expect("parent")).expect("dir");
        fs::write(
            &self.path,
            serde_json::to_vec_pretty(&self.doc).expect("json"),
        )
        .expect("write");
        self
    }
}
