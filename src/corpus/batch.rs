//! A segment under construction: turns made into index documents (the user's words, the
//! assistant's, the tools field and the context: the prompt of the turn before), with the
//! (conversation, turn) each document stands for,
//! so that the document index can record where every turn went once the segment is finished.
use super::catalog::ConvId;
use crate::index::schema::context_of;
use crate::index::{NewDoc, Segment, SegmentBuilder, facts};
use crate::transcript::{ToolKind, Turn};

/// The text of a turn's tools field: tool names (sorted, unique), files touched and commands
/// run (see [`crate::index::facts`]).
pub(crate) fn tools_field(turn: &Turn) -> String {
    let names = turn.tool_names();
    let files = turn
        .tools
        .iter()
        .filter_map(|t| t.file_op())
        .map(|(op, f)| (facts::code(op), f));
    let commands = turn
        .tools
        .iter()
        .filter(|t| t.kind == ToolKind::Shell)
        .filter_map(|t| t.command.as_deref());
    facts::tools_field(&names, files, commands)
}

/// Documents added to a segment under construction, to be located once it is finished.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) builder: SegmentBuilder,
    /// Per added document: (conversation, turn number).
    pub(super) docs: Vec<(ConvId, u32)>,
    /// The last turn added and its prompt as a context ([`context_of`]): the next turn's
    /// context when it follows it.
    last: Option<(ConvId, u32)>,
    last_prompt: String,
}

impl Batch {
    /// Adds a turn whose previous turn, if any, was the last one added.
    pub(super) fn add(&mut self, conv: ConvId, turn: &Turn) {
        self.add_after(conv, turn, None);
    }

    /// Whether turn `n` of `conv` would follow the last turn added (its context is known).
    pub(super) fn follows_last(&self, conv: ConvId, n: u32) -> bool {
        n > 0 && self.last == Some((conv, n - 1))
    }

    /// Adds a turn; `earlier` is the previous turn's prompt when that turn was not the last
    /// one added (it is in the index already).
    pub(super) fn add_after(&mut self, conv: ConvId, turn: &Turn, earlier: Option<&str>) {
        let tools = tools_field(turn);
        let context = if self.follows_last(conv, turn.number) {
            context_of(&self.last_prompt)
        } else {
            earlier.map_or("", context_of)
        };
        self.builder.add(&NewDoc {
            conv,
            turn: turn.number,
            timestamp: turn.timestamp,
            dup_key: turn.dup_key,
            fields: [&turn.user_text, &turn.assistant_text, &tools, context],
        });
        self.docs.push((conv, turn.number));
        self.last = Some((conv, turn.number));
        self.last_prompt.clear();
        self.last_prompt.push_str(context_of(&turn.user_text));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Finishes the segment as `id`, keeping the builder's tables for the next one; returns it
    /// with its documents' (conversation, turn), in document order.
    pub(super) fn finish_reuse(&mut self, id: u64) -> (Segment, Vec<(ConvId, u32)>) {
        (
            self.builder.finish_reuse(id),
            std::mem::take(&mut self.docs),
        )
    }

    /// Finishes the segment as `id`.
    pub(super) fn finish(self, id: u64) -> (Segment, Vec<(ConvId, u32)>) {
        (self.builder.finish(id), self.docs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_batch_says_which_turn_each_document_is() {
        let mut batch = Batch::default();
        assert!(batch.is_empty());
        for (conv, n) in [(3, 0), (3, 1), (5, 0)] {
            let turn = Turn {
                number: n,
                user_text: format!("question {conv} {n}"),
                assistant_text: "answer".into(),
                ..Turn::default()
            };
            batch.add(conv, &turn);
        }
        let (seg, docs) = batch.finish(9);
        assert_eq!(seg.id, 9);
        assert_eq!(docs, [(3, 0), (3, 1), (5, 0)]);
        assert_eq!(seg.doc(2).conv, 5);
        assert_eq!(seg.text(1).user, "question 3 1");
        // a turn's context is the prompt before it in its conversation
        assert_eq!(seg.text(0).context, "");
        assert_eq!(seg.text(1).context, "question 3 0");
        assert_eq!(seg.text(2).context, "");
    }
}
