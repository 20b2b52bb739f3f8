//! Claude Code's tool calls: its tool names mapped onto the shared [`ToolKind`]s and the
//! arguments `read_turn` renders and the index keeps (files, commands, patterns, sub-agents).
use crate::transcript::lenient::{self, LStr};
use crate::transcript::{ToolCall, ToolKind};
use serde::Deserialize;

/// Tool arguments we render or index; large ones (`content`, `old_string`) are only measured.
#[derive(Deserialize, Default)]
struct ToolInput<'a> {
    #[serde(borrow, default)]
    file_path: LStr<'a>,
    #[serde(borrow, default)]
    notebook_path: LStr<'a>,
    #[serde(borrow, default)]
    content: LStr<'a>,
    #[serde(borrow, default)]
    command: LStr<'a>,
    #[serde(borrow, default)]
    pattern: LStr<'a>,
    #[serde(borrow, default)]
    subagent_type: LStr<'a>,
    #[serde(borrow, default)]
    description: LStr<'a>,
    #[serde(borrow, default)]
    url: LStr<'a>,
    #[serde(borrow, default)]
    query: LStr<'a>,
}

/// What a Claude Code tool does, by its name.
fn kind(name: &str) -> ToolKind {
    match name {
        "Read" | "NotebookRead" => ToolKind::Read,
        "Write" => ToolKind::Write,
        "Edit" | "MultiEdit" | "NotebookEdit" => ToolKind::Edit,
        "Bash" | "BashOutput" => ToolKind::Shell,
        "Grep" | "Glob" => ToolKind::Search,
        "Task" | "Agent" => ToolKind::Agent,
        "WebFetch" | "WebSearch" => ToolKind::Web,
        _ => ToolKind::Other,
    }
}

/// Builds the normalised call for a Claude Code `tool_use` block.
pub(super) fn tool_call(id: Option<String>, name: &str, input: Option<lenient::Raw>) -> ToolCall {
    let args: ToolInput = input.and_then(lenient::Raw::parse).unwrap_or_default();
    let kind = kind(name);
    let mut call = ToolCall {
        id,
        name: name.to_owned(),
        kind,
        ..ToolCall::default()
    };
    call.file = args
        .file_path
        .into_owned()
        .or(args.notebook_path.into_owned());
    match kind {
        ToolKind::Write => call.chars = args.content.as_deref().map(|c| c.chars().count() as u64),
        ToolKind::Shell => call.command = args.command.into_owned(),
        ToolKind::Search => call.pattern = args.pattern.into_owned(),
        ToolKind::Agent => {
            call.agent_type = args.subagent_type.into_owned();
            call.description = args.description.into_owned();
        }
        ToolKind::Web => {
            call.url = args.url.into_owned();
            call.query = args.query.into_owned();
        }
        _ => {}
    }
    call
}
