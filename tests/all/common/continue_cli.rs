//! Writer of Continue CLI session documents (`<root>/<sessionId>.json`), rewritten whole on
//! every change as Continue does.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::ids::new_uuid;

/// A tool call as Continue records it (arguments JSON in a string).
pub fn c_call(name: &str, args: Value) -> Value {
    json!({"id": format!("toolu_{}", new_uuid()), "type": "function",
        "function": {"name": name, "arguments": args.to_string()}})
}

/// One session.
pub struct ContinueSession {
    pub path: PathBuf,
    pub doc: Value,
}

impl ContinueSession {
    pub fn new(root: &Path, title: &str, workspace: &str) -> Self {
        let id = new_uuid();
        ContinueSession {
            path: root.join(format!("{id}.json")),
            doc: json!({"sessionId": id, "title": title, "workspaceDirectory": workspace,
                "history": [], "usage": {"totalCost": 0.001}}),
        }
    }

    pub fn id(&self) -> String {
        format!("continue:{}", self.doc["sessionId"].as_str().expect("id"))
    }

    fn push(&mut self, item: Value) -> &mut Self {
        self.doc["history"]
            .as_array_mut()
            .expect("history")
            .push(item);
        self
    }

    pub fn user(&mut self, text: &str) -> &mut Self {
        self.push(json!({"message": {"role": "user", "content": text},
            "contextItems": [{"name": "file", "content": "contextwordalpha"}], "editorState": text}))
    }

    /// A reply with tool calls, each with an output in `toolCallStates`.
    pub fn assistant(&mut self, text: &str, calls: Vec<Value>, output: &str) -> &mut Self {
        let states: Vec<Value> = calls
            .iter()
            .map(|c| {
                json!({"toolCallId": c["id"], "toolCall": c, "status": "done",
                "parsedArgs": {}, "output": [{"content": output, "name": "Tool output"}]})
            })
            .collect();
        let mut message = json!({"role": "assistant", "content": text});
        if !calls.is_empty() {
            message["toolCalls"] = json!(calls);
        }
        self.push(json!({"message": message, "contextItems": [], "toolCallStates": states}))
    }

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
