//! Where conversations leave the transcript layer, secrets are redacted: [`open`] wraps every
//! format's reader so that the conversations it yields (metadata, prompts, replies, tool-call
//! inputs) hold `[REDACTED:<kind>]` instead of secrets. The index, the persistent cache, any
//! store and every tool output (`read_turn` re-parses through [`open`] too) see only that.
//! Redacting the finished pieces rather than each record keeps streamed-reply merging (which
//! compares raw text) exact, and covers every adapter, present and future, in one place.
use super::{
    ConvMeta, ConvState, LineError, LineParser, Reader, SourceFile, ToolCall, Turn, UnitRead,
    UnitReader, adapter,
};
use crate::redact::{redact_opt, redact_string};
use std::path::PathBuf;

/// A fresh reader for `file`, through which every conversation comes out redacted (unless
/// redaction is off). The only way code outside this layer should read transcripts.
pub(crate) fn open(file: &SourceFile) -> Option<Reader> {
    let reader = adapter(file.format)?.reader(file);
    if !crate::redact::enabled() {
        return Some(reader);
    }
    Some(match reader {
        Reader::Lines(p) => Reader::Lines(Box::new(Lines(p))),
        Reader::Unit(u) => Reader::Unit(Box::new(Unit(u))),
    })
}

/// Redacts every text of a conversation state: metadata, completed turns and the open one.
pub(crate) fn conversation(state: &mut ConvState) {
    meta(&mut state.meta);
    for t in &mut state.completed {
        turn(t);
    }
    if let Some(t) = state.open.as_mut() {
        turn(t);
    }
}

/// Titles, summaries, the first prompt and the sub-agent description.
pub(crate) fn meta(m: &mut ConvMeta) {
    redact_opt(&mut m.custom_title);
    redact_opt(&mut m.ai_title);
    redact_opt(&mut m.first_prompt);
    redact_opt(&mut m.agent_description);
    for s in &mut m.summaries {
        redact_string(&mut s.text);
    }
}

/// The prompt, the reply and every tool call's inputs.
pub(crate) fn turn(t: &mut Turn) {
    redact_string(&mut t.user_text);
    redact_string(&mut t.assistant_text);
    for c in &mut t.tools {
        tool_call(c);
    }
}

/// A tool call's inputs: command, pattern, description, file, query, URL and action.
pub(crate) fn tool_call(c: &mut ToolCall) {
    for field in [
        &mut c.command,
        &mut c.pattern,
        &mut c.description,
        &mut c.file,
        &mut c.query,
        &mut c.url,
        &mut c.action,
    ] {
        redact_opt(field);
    }
}

fn redacted(mut states: Vec<ConvState>) -> Vec<ConvState> {
    states.iter_mut().for_each(conversation);
    states
}

struct Lines(Box<dyn LineParser>);

impl LineParser for Lines {
    fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
        self.0.feed_line(offset, line)
    }

    fn drain(&mut self) -> Vec<ConvState> {
        redacted(self.0.drain())
    }

    fn end_of_history(&mut self) {
        self.0.end_of_history();
    }

    fn unknown_kinds(&self) -> Vec<(String, u64)> {
        self.0.unknown_kinds()
    }
}

struct Unit(Box<dyn UnitReader>);

impl UnitReader for Unit {
    fn read(&mut self, file: &SourceFile) -> std::io::Result<UnitRead> {
        let mut read = self.0.read(file)?;
        read.changed = redacted(read.changed);
        Ok(read)
    }

    fn stamp_paths(&self, file: &SourceFile) -> Vec<PathBuf> {
        self.0.stamp_paths(file)
    }

    fn read_conversation(
        &mut self,
        file: &SourceFile,
        id: &str,
    ) -> std::io::Result<Option<ConvState>> {
        let mut state = self.0.read_conversation(file, id)?;
        if let Some(s) = state.as_mut() {
            conversation(s);
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{At, TurnBuilder};

    #[test]
    fn every_text_of_a_conversation_is_redacted() {
        let key = format!("ghp_{}", "k9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5P");
        let mut b = TurnBuilder::default();
        b.prompt(At::default(), format!("use {key}"));
        b.assistant_text(At::default(), None, &format!("ok {key}"));
        b.tool_call(
            At::default(),
            ToolCall {
                command: Some(format!("gh auth login --with-token {key}")),
                url: Some(format!("https://x:{key}@github.com")),
                ..ToolCall::default()
            },
        );
        let mut state = ConvState {
            meta: ConvMeta {
                custom_title: Some(format!("title {key}")),
                first_prompt: Some(key.clone()),
                ..ConvMeta::default()
            },
            open: b.open_turn(),
            ..ConvState::default()
        };
        conversation(&mut state);
        let all = format!("{state:?}");
        assert!(!all.contains(&key), "{all}");
        assert_eq!(all.matches("[REDACTED:github_token]").count(), 6, "{all}");
    }

    /// Nothing outside this layer reads a transcript through `Adapter::reader` directly.
    #[test]
    fn readers_are_opened_only_through_open() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut wrong = Vec::new();
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).expect("src").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if !p.starts_with(src.join("transcript")) {
                    let text = std::fs::read_to_string(&p).unwrap_or_default();
                    if text.contains(".reader(&") {
                        wrong.push(p.display().to_string());
                    }
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "use transcript::redacted::open in {wrong:?}"
        );
    }
}
