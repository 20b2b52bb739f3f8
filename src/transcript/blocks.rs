//! Anthropic-style message content that several agents write (Factory Droid, Amp): `text`,
//! `thinking`, `tool_use` and `tool_result` blocks, read leniently, and what a turn takes from
//! them. Thinking and tool results are never text.
use super::lenient::{Content, LStr};
use super::tools::{ToolCall, calls_of};
use serde::Deserialize;
use serde_json::value::RawValue;

/// One content block (fields of every kind; all optional).
#[derive(Deserialize, Default)]
pub(crate) struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: LStr<'a>,
    #[serde(borrow, default)]
    pub text: LStr<'a>,
    #[serde(borrow, default)]
    pub id: LStr<'a>,
    #[serde(borrow, default)]
    pub name: LStr<'a>,
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
}

/// Message content: a string or a list of blocks.
pub(crate) type Blocks<'a> = Content<'a, Block<'a>>;

impl Block<'_> {
    fn is(&self, kind: &str) -> bool {
        self.kind.as_deref() == Some(kind)
    }
}

/// The `text` blocks' texts (a string content is one text), blank ones left out.
pub(crate) fn texts<'b>(content: &'b Blocks) -> Vec<&'b str> {
    match content {
        Content::Text(t) => vec![t.as_ref()]
            .into_iter()
            .filter(|t| !t.trim().is_empty())
            .collect(),
        Content::Blocks(blocks) => blocks
            .iter()
            .filter(|b| b.is("text"))
            .filter_map(|b| b.text.non_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether the content carries tool results and no text: a user-role message that delivers
/// tool output, not a prompt.
pub(crate) fn is_tool_output(content: &Blocks) -> bool {
    match content {
        Content::Blocks(blocks) => {
            blocks.iter().any(|b| b.is("tool_result")) && texts(content).is_empty()
        }
        _ => false,
    }
}

/// The tool calls of `tool_use` blocks, normalised.
pub(crate) fn tool_calls(content: &Blocks) -> Vec<ToolCall> {
    let Content::Blocks(blocks) = content else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.is("tool_use"))
        .flat_map(|b| {
            let name = b.name.non_empty().unwrap_or("unknown");
            calls_of(b.id.non_empty().map(str::to_owned), name, b.input)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_calls_and_tool_output() {
        let c: Blocks = serde_json::from_str(
            r#"[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"hi"},
            {"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}},
            {"type":"tool_use","id":"t2","name":"ApplyPatch","input":{"input":"*** Begin Patch\n*** Update File: /b\n*** End Patch"}}]"#,
        )
        .unwrap();
        assert_eq!(texts(&c), ["hi"]);
        let calls = tool_calls(&c);
        assert_eq!(calls[0].file.as_deref(), Some("/a"));
        assert_eq!(calls[1].file.as_deref(), Some("/b"));
        let out: Blocks =
            serde_json::from_str(r#"[{"type":"tool_result","tool_use_id":"t1","content":"x"}]"#)
                .unwrap();
        assert!(is_tool_output(&out) && !is_tool_output(&c));
    }
}
