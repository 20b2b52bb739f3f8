//! Claude Code prompts: a `user` record's human text and its image and document blocks, and
//! prompts typed while Claude was working, delivered as `queued_command` attachments (joined to
//! the running turn as later prompts; their `queue-operation` records carry no content).
use super::prompt::prompt_text;
use super::{Block, ClaudeParser, Message, Record};
use crate::transcript::lenient::{self, Content, LStr};
use crate::transcript::{At, Attachment, LineError};
use serde::Deserialize;

/// The human part of a prompt's content: its text (harness noise left out) and the non-text
/// blocks sent with it.
#[derive(Default)]
struct PromptParts {
    text: Option<String>,
    attachments: Vec<Attachment>,
}

/// A string, or blocks without a tool result: their text blocks and image/document blocks.
fn prompt_parts(content: &Content<Block>) -> PromptParts {
    match content {
        Content::Text(t) => PromptParts {
            text: prompt_text(t),
            attachments: Vec::new(),
        },
        Content::Blocks(blocks)
            if !blocks
                .iter()
                .any(|b| b.kind.as_deref() == Some("tool_result")) =>
        {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.kind.as_deref() == Some("text"))
                .filter_map(|b| b.text.as_deref())
                .filter(|t| prompt_text(t).is_some())
                .collect();
            PromptParts {
                text: (!texts.is_empty())
                    .then(|| texts.join("\n"))
                    .and_then(|t| prompt_text(&t)),
                attachments: blocks.iter().filter_map(attachment).collect(),
            }
        }
        _ => PromptParts::default(),
    }
}

/// An `image` or `document` block: its kind and the media type of its source (the data itself
/// is never read).
fn attachment(b: &Block) -> Option<Attachment> {
    #[derive(Deserialize)]
    struct Source<'a> {
        #[serde(borrow, default)]
        media_type: LStr<'a>,
    }
    let kind = b
        .kind
        .as_deref()
        .filter(|k| matches!(*k, "image" | "document"))?;
    let source: Option<Source> = b.source.and_then(lenient::Raw::parse);
    Some(Attachment {
        kind: kind.to_owned(),
        media_type: source.and_then(|s| s.media_type.non_empty().map(str::to_owned)),
    })
}

/// The `attachment` of an `attachment` record (`queued_command` is the one read).
#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct AttachmentRecord<'a> {
    #[serde(rename = "type", borrow, default)]
    pub(super) kind: LStr<'a>,
    /// A string or a block list, like a message's content.
    #[serde(borrow, default)]
    pub(super) prompt: Option<lenient::Raw<'a>>,
    #[serde(rename = "isMeta", default)]
    pub(super) is_meta: lenient::LBool,
}

impl ClaudeParser {
    /// A `user` record's message; `meta`: the record is marked meta or a compact summary.
    pub(super) fn user(
        &mut self,
        message: Option<Message>,
        meta: bool,
        at: At,
    ) -> Result<(), LineError> {
        let message = message.ok_or(LineError::NoMessage("user"))?;
        if meta {
            self.turns.touch(at.timestamp);
            return Ok(());
        }
        if matches!(message.content, Content::Missing) {
            return Err(LineError::NoMessage("user"));
        }
        let parts = prompt_parts(&message.content);
        match parts.text {
            Some(text) => {
                self.note_first_prompt(&text);
                self.turns.prompt(at, text);
            }
            // images alone do not make a prompt: they join the turn they were sent in
            None => self.turns.touch(at.timestamp),
        }
        for a in parts.attachments {
            self.turns.attachment(at, a);
        }
        Ok(())
    }

    /// An `attachment` record: a `queued_command` is a prompt the user sent mid-turn.
    pub(super) fn attachment(&mut self, rec: &Record, at: At) {
        let queued = rec
            .attachment
            .as_ref()
            .filter(|a| a.kind.as_deref() == Some("queued_command") && !a.is_meta.0);
        let Some(queued) = queued else {
            self.turns.touch(at.timestamp);
            return;
        };
        let content: Content<Block> = queued
            .prompt
            .and_then(lenient::Raw::parse)
            .unwrap_or_default();
        let parts = prompt_parts(&content);
        if let Some(text) = &parts.text {
            self.note_first_prompt(text);
            self.turns.later_prompt(at, text);
        }
        for a in parts.attachments {
            self.turns.attachment(at, a);
        }
        self.turns.touch(at.timestamp);
    }

    fn note_first_prompt(&mut self, text: &str) {
        if self.meta.first_prompt.is_none() && !text.is_empty() {
            self.meta.first_prompt = Some(text.to_owned());
        }
    }
}
