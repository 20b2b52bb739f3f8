//! Format-agnostic turn construction: adapters report prompts, assistant text and tool calls in
//! file order; the builder groups them into numbered turns and drops streamed duplicates.
use super::tools::ToolCall;
use rustc_hash::{FxHashMap, FxHashSet};

/// One turn: a human prompt and everything the assistant said and called until the next one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Turn {
    pub number: u32,
    /// Byte offset of the record that started the turn (where a re-read starts).
    pub start_offset: u64,
    /// Epoch milliseconds of the turn's first timestamped record.
    pub timestamp: Option<i64>,
    pub user_text: String,
    pub assistant_text: String,
    pub tools: Vec<ToolCall>,
    /// Fingerprint of the record that started the turn (its uuid when the format has one):
    /// equal keys in two conversations mean the same turn copied by a resume or fork.
    pub dup_key: Option<u64>,
    /// Images, documents and other non-text parts of the prompt(s): counted, never indexed.
    pub attachments: Vec<Attachment>,
}

/// A non-text part of a prompt (a pasted image, an attached document or file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attachment {
    /// What it is (`image`, `document`, `file`, …), as the agent names it.
    pub kind: String,
    pub media_type: Option<String>,
}

/// Put between a turn's prompt and a prompt the user sent while the assistant was still
/// working on it (delivered into the running turn), so both read as separate prompts.
pub(crate) const LATER_PROMPT: &str = "\n\n[later prompt]\n";

impl Turn {
    /// Sorted, de-duplicated tool names.
    pub(crate) fn tool_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// The turn being assembled, with what it needs to recognise duplicates.
#[derive(Debug, Clone, Default)]
struct Draft {
    turn: Turn,
    blocks: Vec<String>,
    /// Indexes into `blocks` per API message id.
    by_message: FxHashMap<String, Vec<usize>>,
    tool_ids: FxHashSet<String>,
}

/// Where a record came from: its byte offset, timestamp and identity.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct At {
    pub offset: u64,
    pub timestamp: Option<i64>,
    pub dup_key: Option<u64>,
}

/// Groups events into turns. Feed events in file order; completed turns accumulate until
/// [`TurnBuilder::take_completed`]; the last turn stays open because appended records may
/// still join it.
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnBuilder {
    open: Option<Draft>,
    completed: Vec<Turn>,
    next_number: u32,
}

impl TurnBuilder {
    /// A prompt that starts a new turn.
    pub(crate) fn prompt(&mut self, at: At, text: String) {
        self.close();
        let mut draft = Draft::default();
        draft.turn.number = self.next_number;
        draft.turn.start_offset = at.offset;
        draft.turn.timestamp = at.timestamp;
        draft.turn.dup_key = at.dup_key;
        draft.turn.user_text = text;
        self.next_number += 1;
        self.open = Some(draft);
    }

    /// The open turn, starting an implicit one (empty prompt) for assistant records that
    /// come before any prompt.
    fn draft(&mut self, at: At) -> &mut Draft {
        if self.open.is_none() {
            self.prompt(at, String::new());
        }
        let draft = self.open.as_mut().expect("a turn was just opened");
        if draft.turn.timestamp.is_none() {
            draft.turn.timestamp = at.timestamp;
        }
        draft
    }

    /// A prompt sent while the assistant was working: delivered into the running turn, so it
    /// joins the open turn's user text after [`LATER_PROMPT`] (or starts a turn when none is
    /// open).
    pub(crate) fn later_prompt(&mut self, at: At, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return self.touch(at.timestamp);
        }
        match self.open.as_mut() {
            Some(d) if !d.turn.user_text.is_empty() => {
                d.turn.user_text.push_str(LATER_PROMPT);
                d.turn.user_text.push_str(text);
            }
            Some(d) => d.turn.user_text = text.to_owned(),
            None => self.prompt(at, text.to_owned()),
        }
        self.touch(at.timestamp);
    }

    /// A non-text part of the open turn's prompt (a turn is opened when none is).
    pub(crate) fn attachment(&mut self, at: At, attachment: Attachment) {
        self.draft(at).turn.attachments.push(attachment);
    }

    /// An assistant text block. Blocks of one API message (`message_id`) that repeat an
    /// earlier block, or extend an earlier partial one, are merged instead of added.
    pub(crate) fn assistant_text(&mut self, at: At, message_id: Option<&str>, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let draft = self.draft(at);
        if let Some(id) = message_id {
            if let Some(indexes) = draft.by_message.get(id) {
                for &i in indexes {
                    let existing = &draft.blocks[i];
                    if existing.as_str() == text || existing.starts_with(text) {
                        return;
                    }
                    if text.starts_with(existing.as_str()) {
                        draft.blocks[i] = text.to_owned();
                        return;
                    }
                }
            }
            let index = draft.blocks.len();
            // the id is copied only when first seen (most blocks follow one of their message)
            match draft.by_message.get_mut(id) {
                Some(indexes) => indexes.push(index),
                None => {
                    draft.by_message.insert(id.to_owned(), vec![index]);
                }
            }
        }
        draft.blocks.push(text.to_owned());
    }

    /// A tool call; a call whose id was already seen in this turn is a streamed duplicate.
    pub(crate) fn tool_call(&mut self, at: At, call: ToolCall) {
        let draft = self.draft(at);
        if let Some(id) = &call.id {
            if !draft.tool_ids.insert(id.clone()) {
                return;
            }
        }
        draft.turn.tools.push(call);
    }

    /// Notes a timestamped record inside the current turn (fills a missing turn timestamp).
    pub(crate) fn touch(&mut self, timestamp: Option<i64>) {
        if let (Some(d), Some(ts)) = (self.open.as_mut(), timestamp) {
            d.turn.timestamp.get_or_insert(ts);
        }
    }

    fn close(&mut self) {
        if let Some(draft) = self.open.take() {
            self.completed.push(finish(draft));
        }
    }

    /// Turns completed since the last call.
    pub(crate) fn take_completed(&mut self) -> Vec<Turn> {
        std::mem::take(&mut self.completed)
    }

    /// The still-open last turn, as it stands.
    pub(crate) fn open_turn(&self) -> Option<Turn> {
        self.open.clone().map(finish)
    }

    /// Number of turns started so far (completed and open).
    pub(crate) fn turn_count(&self) -> u32 {
        self.next_number
    }

    /// Closes the open turn and returns everything not yet taken.
    pub(crate) fn finish_all(&mut self) -> Vec<Turn> {
        self.close();
        self.take_completed()
    }
}

fn finish(mut draft: Draft) -> Turn {
    draft.turn.assistant_text = draft.blocks.join("\n\n");
    draft.turn
}
