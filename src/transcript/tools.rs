//! Normalised tool calls: what every format adapter extracts from a call's arguments, the
//! compact rendering `read_turn` returns, and the facts (files touched, commands) a turn keeps.
use serde::Serialize;

/// What a tool does, independent of what a given agent calls it. Adapters map their tool
/// names here (`Read`, `read`, `read_file` are all [`ToolKind::Read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolKind {
    Read,
    Write,
    Edit,
    Shell,
    Search,
    Agent,
    Web,
    Browser,
    #[default]
    Other,
}

/// How a tool call touched a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileOp {
    Read,
    Edit,
    Write,
}

impl FileOp {
    pub fn as_str(self) -> &'static str {
        match self {
            FileOp::Read => "read",
            FileOp::Edit => "edit",
            FileOp::Write => "write",
        }
    }
}

/// One tool call with the arguments that matter for rendering and search. Tool outputs are
/// never part of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCall {
    /// The call id (`toolu_…`, `call_…`), used to drop streamed duplicates.
    pub id: Option<String>,
    /// The tool's name as the agent wrote it.
    pub name: String,
    pub kind: ToolKind,
    /// File the call reads, writes or edits.
    pub file: Option<String>,
    /// Number of characters written (`Write`).
    pub chars: Option<u64>,
    /// Shell command line.
    pub command: Option<String>,
    /// Search pattern (`Grep`, `Glob`).
    pub pattern: Option<String>,
    /// Sub-agent type (`Task`, `Agent`).
    pub agent_type: Option<String>,
    pub description: Option<String>,
    /// Web query or URL.
    pub query: Option<String>,
    pub url: Option<String>,
    /// Browser action.
    pub action: Option<String>,
}

impl ToolCall {
    /// The file operation this call performed, if it touched a file.
    pub fn file_op(&self) -> Option<(FileOp, &str)> {
        let file = self.file.as_deref()?;
        let op = match self.kind {
            ToolKind::Read => FileOp::Read,
            ToolKind::Write => FileOp::Write,
            ToolKind::Edit => FileOp::Edit,
            _ => return None,
        };
        Some((op, file))
    }
}

/// Longest command line `read_turn` shows, in characters.
pub const COMMAND_MAX_CHARS: usize = 200;

/// Cuts `s` to at most `max` characters, ending with `…` when something was cut.
pub fn cut_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
