//! `SessionWriter`: appends Claude Code records (one JSONL line per call, append mode, flushed
//! at once) with uuid chaining, a monotonic clock and the real files' envelope fields.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::ids::{DEFAULT_START, format_iso_ms, new_msg_id, new_uuid, next_n, parse_iso_ms};

/// Appends Claude Code records to one JSONL file.
pub struct SessionWriter {
    path: PathBuf,
    session_id: String,
    cwd: Option<String>,
    git_branch: Option<String>,
    slug: Option<String>,
    version: String,
    model: String,
    clock_ms: i64,
    step_ms: i64,
    last_uuid: Option<String>,
    sidechain: bool,
    agent_id: Option<String>,
    request_ids: HashMap<String, String>,
}

impl SessionWriter {
    pub(super) fn new(path: PathBuf, session_id: &str, cwd: String) -> Self {
        SessionWriter {
            path,
            session_id: session_id.to_string(),
            cwd: Some(cwd),
            git_branch: Some("main".to_string()),
            slug: None,
            version: "2.0.55".to_string(),
            model: "claude-sonnet-4-5-20250929".to_string(),
            clock_ms: parse_iso_ms(DEFAULT_START),
            step_ms: 1000,
            last_uuid: None,
            sidechain: false,
            agent_id: None,
            request_ids: HashMap::new(),
        }
    }

    /// Marks the writer as a subagent transcript (`isSidechain: true`, `agentId`).
    pub(super) fn into_subagent(mut self, agent_id: &str) -> Self {
        self.sidechain = true;
        self.agent_id = Some(agent_id.to_string());
        self
    }

    // -- settings --

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `sessionId` written into records (the parent's id for subagents).
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The conversation id the server should report: the file stem for sessions,
    /// `<parent>/agent-<id>` for subagents.
    pub fn conversation_id(&self) -> String {
        match &self.agent_id {
            Some(a) => format!("{}/agent-{a}", self.session_id),
            None => self
                .path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("file stem")
                .to_string(),
        }
    }

    pub fn set_cwd(&mut self, cwd: Option<&str>) -> &mut Self {
        self.cwd = cwd.map(str::to_string);
        self
    }

    pub fn set_git_branch(&mut self, branch: Option<&str>) -> &mut Self {
        self.git_branch = branch.map(str::to_string);
        self
    }

    pub fn set_slug(&mut self, slug: Option<&str>) -> &mut Self {
        self.slug = slug.map(str::to_string);
        self
    }

    /// Overrides the `sessionId` written into later records (the file name is unchanged).
    pub fn set_record_session_id(&mut self, id: &str) -> &mut Self {
        self.session_id = id.to_string();
        self
    }

    /// The timestamp the next record gets.
    pub fn set_time(&mut self, iso: &str) -> &mut Self {
        self.clock_ms = parse_iso_ms(iso);
        self
    }

    /// Clock increment per record (default 1 s).
    pub fn set_step_ms(&mut self, ms: i64) -> &mut Self {
        self.step_ms = ms;
        self
    }

    /// The timestamp the next record will get.
    pub fn next_timestamp(&self) -> String {
        format_iso_ms(self.clock_ms)
    }

    pub fn last_uuid(&self) -> Option<String> {
        self.last_uuid.clone()
    }

    // -- raw writing --

    /// Appends raw bytes (no newline added).
    pub fn raw_bytes(&mut self, bytes: &[u8]) {
        if let Some(parent) = self.path.parent() {
            fs::create_dir_all(parent).expect("create parent dirs");
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .expect("open session file for append");
        f.write_all(bytes).expect("append");
        f.flush().expect("flush");
    }

    /// Appends one line (anything, including malformed JSON) plus a newline.
    pub fn raw_line(&mut self, line: &str) {
        self.raw_bytes(format!("{line}\n").as_bytes());
    }

    /// Appends a JSON value as one line, exactly as given.
    pub fn record(&mut self, v: Value) {
        self.raw_line(&v.to_string());
    }

    fn tick(&mut self) -> String {
        let ts = format_iso_ms(self.clock_ms);
        self.clock_ms += self.step_ms;
        ts
    }

    /// Writes a conversation record (`user`, `assistant`, `system`, …) with the full envelope
    /// (uuid chain, timestamp, cwd, gitBranch, slug, version, sessionId, sidechain fields);
    /// `fields` (an object) is merged on top. Returns the record's uuid.
    pub fn conv_record(&mut self, kind: &str, fields: Value) -> String {
        let uuid = new_uuid();
        let mut m = Map::new();
        m.insert("parentUuid".into(), json!(self.last_uuid));
        m.insert("isSidechain".into(), json!(self.sidechain));
        m.insert("userType".into(), json!("external"));
        if let Some(c) = &self.cwd {
            m.insert("cwd".into(), json!(c));
        }
        m.insert("sessionId".into(), json!(self.session_id));
        m.insert("version".into(), json!(self.version));
        if let Some(b) = &self.git_branch {
            m.insert("gitBranch".into(), json!(b));
        }
        if let Some(s) = &self.slug {
            m.insert("slug".into(), json!(s));
        }
        if let Some(a) = &self.agent_id {
            m.insert("agentId".into(), json!(a));
        }
        m.insert("type".into(), json!(kind));
        m.insert("uuid".into(), json!(uuid));
        let ts = self.tick();
        m.insert("timestamp".into(), json!(ts));
        if let Value::Object(extra) = fields {
            for (k, v) in extra {
                m.insert(k, v);
            }
        } else {
            panic!("conv_record fields must be an object");
        }
        self.record(Value::Object(m));
        self.last_uuid = Some(uuid.clone());
        uuid
    }

    // -- user records --

    /// A human prompt with string content.
    pub fn user(&mut self, text: &str) -> String {
        self.conv_record(
            "user",
            json!({"message": {"role": "user", "content": text}}),
        )
    }

    /// A user record with a list of content blocks.
    pub fn user_blocks(&mut self, blocks: Vec<Value>) -> String {
        self.conv_record(
            "user",
            json!({"message": {"role": "user", "content": blocks}}),
        )
    }

    /// A harness-generated user message (`isMeta: true`).
    pub fn user_meta(&mut self, text: &str) -> String {
        self.conv_record(
            "user",
            json!({"isMeta": true, "message": {"role": "user", "content": text}}),
        )
    }

    /// The summary written after `/compact` (`isCompactSummary: true`).
    pub fn compact_summary(&mut self, text: &str) -> String {
        self.conv_record(
            "user",
            json!({"isCompactSummary": true, "isVisibleInTranscriptOnly": true,
                   "message": {"role": "user", "content": text}}),
        )
    }

    /// A `system/compact_boundary` record.
    pub fn compact_boundary(&mut self) -> String {
        let logical = self.last_uuid.take();
        self.conv_record(
            "system",
            json!({"subtype": "compact_boundary", "content": "Conversation compacted",
                   "logicalParentUuid": logical, "level": "info",
                   "compactMetadata": {"trigger": "manual", "preTokens": 12345}}),
        )
    }

    /// A `system` record with a subtype and content.
    pub fn system(&mut self, subtype: &str, content: &str) -> String {
        self.conv_record(
            "system",
            json!({"subtype": subtype, "content": content, "level": "info"}),
        )
    }

    /// A slash-command invocation (`<command-name>/name</command-name>…`).
    pub fn command(&mut self, name: &str, args: &str) -> String {
        self.user(&format!(
            "<command-name>/{name}</command-name>\n<command-message>{name}</command-message>\n<command-args>{args}</command-args>"
        ))
    }

    /// Output of a local command (`<local-command-stdout>…`).
    pub fn local_stdout(&mut self, text: &str) -> String {
        self.user(&format!(
            "<local-command-stdout>{text}</local-command-stdout>"
        ))
    }

    /// `[Request interrupted by user]` (block form, as real files write it).
    pub fn interrupt(&mut self) -> String {
        self.user_blocks(vec![
            json!({"type": "text", "text": "[Request interrupted by user]"}),
        ])
    }

    /// `[Request interrupted by user for tool use]` (block form).
    pub fn interrupt_tool_use(&mut self) -> String {
        self.user_blocks(vec![json!({"type": "text",
            "text": "[Request interrupted by user for tool use]"})])
    }

    /// A tool result (user record with a `tool_result` block) plus `toolUseResult`
    /// (omitted when `Value::Null`).
    pub fn tool_result(
        &mut self,
        tool_use_id: &str,
        content: &str,
        tool_use_result: Value,
    ) -> String {
        let mut fields = json!({"message": {"role": "user", "content": [
            {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
        ]}});
        if !tool_use_result.is_null() {
            fields["toolUseResult"] = tool_use_result;
        }
        self.conv_record("user", fields)
    }

    // -- assistant records (one content block per line, like the real files) --

    /// An assistant line carrying one content block of API message `msg_id`.
    pub fn assistant_block(&mut self, msg_id: &str, block: Value) -> String {
        let n = self.request_ids.len();
        let req = self
            .request_ids
            .entry(msg_id.to_string())
            .or_insert_with(|| format!("req_011CT{:08}{:06}", n, next_n()))
            .clone();
        let model = self.model.clone();
        self.conv_record(
            "assistant",
            json!({
                "requestId": req,
                "message": {
                    "id": msg_id, "type": "message", "role": "assistant", "model": model,
                    "content": [block], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                              "cache_read_input_tokens": 100, "output_tokens": 25,
                              "service_tier": "standard"}
                }
            }),
        )
    }

    pub fn assistant_text(&mut self, msg_id: &str, text: &str) -> String {
        self.assistant_block(msg_id, json!({"type": "text", "text": text}))
    }

    pub fn assistant_thinking(&mut self, msg_id: &str, text: &str) -> String {
        self.assistant_block(
            msg_id,
            json!({"type": "thinking", "thinking": text, "signature": "EqQBCkYIBxgCKkBsig"}),
        )
    }

    pub fn assistant_redacted_thinking(&mut self, msg_id: &str, data: &str) -> String {
        self.assistant_block(msg_id, json!({"type": "redacted_thinking", "data": data}))
    }

    pub fn assistant_tool_use(
        &mut self,
        msg_id: &str,
        tool_use_id: &str,
        name: &str,
        input: Value,
    ) -> String {
        self.assistant_block(
            msg_id,
            json!({"type": "tool_use", "id": tool_use_id, "name": name, "input": input}),
        )
    }

    /// A prompt followed by one assistant text reply (fresh message id).
    pub fn exchange(&mut self, prompt: &str, reply: &str) -> String {
        let uuid = self.user(prompt);
        let msg = new_msg_id();
        self.assistant_text(&msg, reply);
        uuid
    }

    // -- metadata records (no envelope) --

    pub fn summary(&mut self, text: &str, leaf_uuid: &str) {
        self.record(json!({"type": "summary", "summary": text, "leafUuid": leaf_uuid}));
    }

    pub fn custom_title(&mut self, title: &str) {
        let sid = self.session_id.clone();
        self.record(json!({"type": "custom-title", "customTitle": title, "sessionId": sid}));
    }

    pub fn ai_title(&mut self, title: &str) {
        let sid = self.session_id.clone();
        self.record(json!({"type": "ai-title", "aiTitle": title, "sessionId": sid}));
    }

    pub fn last_prompt(&mut self, text: &str) {
        let sid = self.session_id.clone();
        self.record(json!({"type": "last-prompt", "lastPrompt": text, "sessionId": sid}));
    }

    pub fn queue_operation(&mut self, operation: &str, content: &str) {
        let sid = self.session_id.clone();
        let ts = self.next_timestamp();
        self.record(json!({"type": "queue-operation", "operation": operation,
            "timestamp": ts, "content": content, "sessionId": sid}));
    }

    pub fn file_history_snapshot(&mut self) {
        let mid = new_uuid();
        let ts = self.next_timestamp();
        self.record(json!({"type": "file-history-snapshot", "messageId": mid,
            "snapshot": {"messageId": mid, "trackedFileBackups": {}, "timestamp": ts},
            "isSnapshotUpdate": false}));
    }
}

/// A `text` content block.
pub fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// An `image` content block (tiny base64 payload).
pub fn image_block() -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png",
        "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}})
}
