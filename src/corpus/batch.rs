//! A segment under construction: turns made into index documents (the user's words, the
//! assistant's, and the tools field), with the (conversation, turn) each document stands for,
//! so that the document index can record where every turn went once the segment is finished.
use super::catalog::ConvId;
use crate::index::{NewDoc, Segment, SegmentBuilder, facts};
use crate::transcript::{FileOp, ToolKind, Turn};

/// The text of a turn's tools field: tool names (sorted, unique), files touched and commands
/// run (see [`crate::index::facts`]).
pub fn tools_field(turn: &Turn) -> String {
    let names = turn.tool_names();
    let files = turn
        .tools
        .iter()
        .filter_map(|t| t.file_op())
        .map(|(op, f)| {
            let code = match op {
                FileOp::Read => facts::OP_READ,
                FileOp::Edit => facts::OP_EDIT,
                FileOp::Write => facts::OP_WRITE,
            };
            (code, f)
        });
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
}

impl Batch {
    pub(super) fn add(&mut self, conv: ConvId, turn: &Turn) {
        let tools = tools_field(turn);
        self.builder.add(&NewDoc {
            conv,
            turn: turn.number,
            timestamp: turn.timestamp,
            dup_key: turn.dup_key,
            fields: [&turn.user_text, &turn.assistant_text, &tools],
        });
        self.docs.push((conv, turn.number));
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
    }
}
