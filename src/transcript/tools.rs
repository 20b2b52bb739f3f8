//! Normalised tool calls: what every format adapter extracts from a call's arguments, the
//! compact rendering `read_turn` returns, and the facts (files touched, commands) a turn keeps.
//! Also the lenient argument reader ([`ToolArgs`]) and name-to-kind table ([`kind_of`]) the
//! non-Claude adapters share.
use super::lenient::{self, LStr, Shape};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// What a tool does, independent of what a given agent calls it. Adapters map their tool
/// names here (`Read`, `read`, `read_file` are all [`ToolKind::Read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ToolKind {
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
pub(crate) enum FileOp {
    Read,
    Edit,
    Write,
}

impl FileOp {
    /// Its word: `read`, `edit` or `write` (as it serializes).
    pub(crate) fn as_str(self) -> &'static str {
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
pub(crate) struct ToolCall {
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
    pub(crate) fn file_op(&self) -> Option<(FileOp, &str)> {
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
pub(crate) const COMMAND_MAX_CHARS: usize = 200;

/// Cuts `s` to at most `max` characters, ending with `…` when something was cut.
pub(crate) fn cut_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// What a tool does, judged by the names agents other than Claude Code give their tools
/// (OpenClaw/pi, Codex, Gemini CLI, …). Unknown names are [`ToolKind::Other`].
pub(crate) fn kind_of(name: &str) -> ToolKind {
    match name.to_ascii_lowercase().as_str() {
        "read" | "read_file" | "read_many_files" | "view" | "readfile" => ToolKind::Read,
        "write" | "write_file" | "create_file" | "writefile" | "create" | "write_to_file" => {
            ToolKind::Write
        }
        "edit" | "edit_file" | "replace" | "multi_edit" | "multiedit" | "str_replace"
        | "apply_patch" | "applypatch" | "replace_in_file" => ToolKind::Edit,
        "bash" | "exec" | "shell" | "shell_command" | "exec_command" | "local_shell"
        | "run_shell_command" | "run_terminal" | "run_terminal_cmd" | "terminal" | "execute"
        | "execute_command" => ToolKind::Shell,
        "grep"
        | "glob"
        | "search_file_content"
        | "find"
        | "rg"
        | "grep_search"
        | "search"
        | "search_files"
        | "finder"
        | "sourcegraph" => ToolKind::Search,
        "web_search" | "web_fetch" | "google_web_search" | "websearch" | "webfetch" | "fetch"
        | "fetchurl" | "read_web_page" => ToolKind::Web,
        "browser" => ToolKind::Browser,
        "task" | "agent" | "spawn_agent" | "subagent" => ToolKind::Agent,
        _ => ToolKind::Other,
    }
}

/// The normalised call(s) of a tool call whose arguments are a JSON object or JSON in a
/// string (absent or unreadable arguments read as none). `apply_patch`-style tools yield one
/// call per file their patch touches.
pub(crate) fn calls_of(id: Option<String>, name: &str, args: Option<&RawValue>) -> Vec<ToolCall> {
    let text = args.and_then(lenient::string);
    let parsed = match &text {
        Some(t) => ToolArgs::from_json(t),
        None => ToolArgs::from_raw(args),
    };
    if matches!(
        name.to_ascii_lowercase().as_str(),
        "apply_patch" | "applypatch"
    ) {
        let patch = parsed.patch.as_deref().or(parsed.input.as_deref());
        if let Some(p) = patch.or(text.as_deref().filter(|t| t.contains("*** Begin Patch"))) {
            return patch_calls(id, name, p);
        }
    }
    parsed.into_calls(id, name, kind_of(name))
}

/// Tool arguments as most agents name them, read leniently: every field is optional, a value of
/// an unexpected type reads as absent, and large values (`content`) are only measured. Several
/// spellings of one argument are tried in turn (`file_path`, `filePath`, `path`, `file`, …).
#[derive(Deserialize, Default)]
pub(crate) struct ToolArgs<'a> {
    #[serde(borrow, default)]
    file_path: LStr<'a>,
    #[serde(rename = "filePath", borrow, default)]
    file_path_camel: LStr<'a>,
    #[serde(borrow, default)]
    absolute_path: LStr<'a>,
    #[serde(borrow, default)]
    path: LStr<'a>,
    #[serde(borrow, default)]
    file: LStr<'a>,
    #[serde(borrow, default)]
    target_file: LStr<'a>,
    #[serde(borrow, default)]
    notebook_path: LStr<'a>,
    /// Continue's spelling.
    #[serde(borrow, default)]
    filepath: LStr<'a>,
    #[serde(borrow, default)]
    paths: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: LStr<'a>,
    #[serde(borrow, default)]
    file_text: LStr<'a>,
    #[serde(borrow, default)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cmd: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pattern: LStr<'a>,
    #[serde(borrow, default)]
    query: LStr<'a>,
    #[serde(borrow, default)]
    regex: LStr<'a>,
    /// Amp's glob pattern.
    #[serde(rename = "filePattern", borrow, default)]
    file_pattern: LStr<'a>,
    /// A patch given as an argument (`apply_patch {input}` / `{patch}`).
    #[serde(borrow, default)]
    input: LStr<'a>,
    #[serde(borrow, default)]
    patch: LStr<'a>,
    #[serde(borrow, default)]
    url: LStr<'a>,
    #[serde(rename = "targetUrl", borrow, default)]
    target_url: LStr<'a>,
    #[serde(borrow, default)]
    prompt: LStr<'a>,
    #[serde(borrow, default)]
    action: LStr<'a>,
    #[serde(borrow, default)]
    subagent_type: LStr<'a>,
    #[serde(borrow, default)]
    agent_type: LStr<'a>,
    #[serde(borrow, default)]
    description: LStr<'a>,
}

fn first(fields: &[&LStr]) -> Option<String> {
    fields.iter().find_map(|f| f.non_empty()).map(str::to_owned)
}

/// A command line from a string, or from an argument vector joined with spaces (a
/// `bash -lc <script>` wrapper yields just the script).
pub(crate) fn command_text(raw: &RawValue) -> Option<String> {
    match lenient::shape(raw) {
        Shape::String => lenient::string(raw).map(|c| c.into_owned()),
        Shape::Array => {
            let parts: Vec<LStr> = lenient::parse(raw)?;
            let words: Vec<&str> = parts.iter().filter_map(LStr::as_deref).collect();
            let shell = |w: &str| {
                matches!(
                    w.rsplit('/').next(),
                    Some("bash" | "sh" | "zsh" | "dash" | "fish")
                )
            };
            match words.as_slice() {
                [] => None,
                [sh, "-c" | "-lc" | "-ic", script] if shell(sh) => Some((*script).to_owned()),
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

impl<'a> ToolArgs<'a> {
    /// Arguments given as a JSON object (anything else reads as no arguments).
    pub(crate) fn from_raw(raw: Option<&'a RawValue>) -> Self {
        raw.filter(|r| lenient::shape(r) == Shape::Object)
            .and_then(lenient::parse)
            .unwrap_or_default()
    }

    /// Arguments given as a JSON-encoded string's contents.
    pub(crate) fn from_json(text: &'a str) -> Self {
        serde_json::from_str(text).unwrap_or_default()
    }

    /// The files the call names: a single path argument, else a `paths` list.
    fn files(&self) -> Vec<String> {
        let one = first(&[
            &self.file_path,
            &self.file_path_camel,
            &self.absolute_path,
            &self.target_file,
            &self.notebook_path,
            &self.filepath,
            &self.path,
            &self.file,
        ]);
        if let Some(f) = one {
            return vec![f];
        }
        let list: Vec<LStr> = self.paths.and_then(lenient::parse).unwrap_or_default();
        list.iter()
            .filter_map(LStr::non_empty)
            .map(str::to_owned)
            .collect()
    }

    /// The normalised call(s): one per file for a read of several `paths`, else one.
    pub(crate) fn into_calls(
        self,
        id: Option<String>,
        name: &str,
        kind: ToolKind,
    ) -> Vec<ToolCall> {
        let base = ToolCall {
            id: id.clone(),
            name: name.to_owned(),
            kind,
            ..ToolCall::default()
        };
        let mut call = base.clone();
        match kind {
            ToolKind::Read | ToolKind::Edit | ToolKind::Write => {
                let files = self.files();
                if kind == ToolKind::Read && files.len() > 1 {
                    return files
                        .into_iter()
                        .enumerate()
                        .map(|(i, f)| ToolCall {
                            id: id.as_ref().map(|id| format!("{id}#{i}")),
                            file: Some(f),
                            ..base.clone()
                        })
                        .collect();
                }
                call.file = files.into_iter().next();
                if kind == ToolKind::Write {
                    call.chars = self
                        .content
                        .as_deref()
                        .or(self.file_text.as_deref())
                        .map(|c| c.chars().count() as u64);
                }
            }
            ToolKind::Shell => {
                call.command = self.command.or(self.cmd).and_then(command_text);
            }
            ToolKind::Search => {
                call.pattern = first(&[&self.pattern, &self.query, &self.regex, &self.file_pattern])
            }
            ToolKind::Web => {
                call.url = first(&[&self.url, &self.target_url]);
                call.query = first(&[&self.query]);
                if call.url.is_none() && call.query.is_none() {
                    call.query = first(&[&self.prompt]);
                }
            }
            ToolKind::Browser => call.action = first(&[&self.action]),
            ToolKind::Agent => {
                call.agent_type = first(&[&self.subagent_type, &self.agent_type]);
                call.description = first(&[&self.description]);
            }
            ToolKind::Other => {}
        }
        vec![call]
    }
}

/// One call per file an `apply_patch` patch (`*** Begin Patch` envelope) touches: added files are writes (with the number
/// of characters added), updated and deleted files edits.
pub(crate) fn patch_calls(id: Option<String>, name: &str, patch: &str) -> Vec<ToolCall> {
    let mut calls: Vec<ToolCall> = Vec::new();
    for line in patch.lines() {
        let (kind, file) = if let Some(f) = line.strip_prefix("*** Add File: ") {
            (ToolKind::Write, f)
        } else if let Some(f) = line
            .strip_prefix("*** Update File: ")
            .or_else(|| line.strip_prefix("*** Delete File: "))
        {
            (ToolKind::Edit, f)
        } else {
            if let (Some(added), Some(last)) = (line.strip_prefix('+'), calls.last_mut()) {
                if last.kind == ToolKind::Write {
                    *last.chars.get_or_insert(0) += added.chars().count() as u64 + 1;
                }
            }
            continue;
        };
        calls.push(ToolCall {
            id: id.as_ref().map(|id| format!("{id}#{}", calls.len())),
            name: name.to_owned(),
            kind,
            file: Some(file.trim().to_owned()),
            chars: (kind == ToolKind::Write).then_some(0),
            ..ToolCall::default()
        });
    }
    if calls.is_empty() {
        calls.push(ToolCall {
            id,
            name: name.to_owned(),
            kind: ToolKind::Edit,
            ..ToolCall::default()
        });
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(name: &str, args: &str) -> Vec<ToolCall> {
        ToolArgs::from_json(args).into_calls(Some("c".into()), name, kind_of(name))
    }

    #[test]
    fn reads_argument_spellings() {
        assert_eq!(
            calls("edit", r#"{"path":"/a.rs","oldText":"x","newText":"y"}"#)[0]
                .file
                .as_deref(),
            Some("/a.rs")
        );
        assert_eq!(
            calls("read_file", r#"{"absolute_path":"/b"}"#)[0]
                .file
                .as_deref(),
            Some("/b")
        );
        let w = &calls("write_file", r#"{"file_path":"/c","content":"héllo"}"#)[0];
        assert_eq!((w.file.as_deref(), w.chars), (Some("/c"), Some(5)));
        let many = calls("read_many_files", r#"{"paths":["/x","/y"]}"#);
        assert_eq!(many.len(), 2);
        assert_eq!(many[1].id.as_deref(), Some("c#1"));
        assert_eq!(
            calls("exec", r#"{"command":"ls -la"}"#)[0]
                .command
                .as_deref(),
            Some("ls -la")
        );
        assert_eq!(
            calls("shell", r#"{"command":["bash","-lc","cargo test"]}"#)[0]
                .command
                .as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            calls("shell", r#"{"command":["git","status"]}"#)[0]
                .command
                .as_deref(),
            Some("git status")
        );
        assert_eq!(
            calls("exec_command", r#"{"cmd":"rg foo"}"#)[0]
                .command
                .as_deref(),
            Some("rg foo")
        );
        assert_eq!(
            calls("web_fetch", r#"{"prompt":"summarise https://x.test"}"#)[0]
                .query
                .as_deref(),
            Some("summarise https://x.test")
        );
        assert_eq!(
            calls(
                "browser",
                r#"{"action":"navigate","targetUrl":"https://x.test"}"#
            )[0]
            .action
            .as_deref(),
            Some("navigate")
        );
        assert_eq!(calls("exec", r#"not json"#)[0].command, None);
        assert_eq!(kind_of("mystery"), ToolKind::Other);
    }

    #[test]
    fn patch_files() {
        let patch = "*** Begin Patch\n*** Add File: src/new.rs\n+fn a() {}\n+\n*** Update File: src/lib.rs\n@@\n-x\n+y\n*** End Patch";
        let calls = patch_calls(Some("c".into()), "apply_patch", patch);
        let got: Vec<_> = calls
            .iter()
            .map(|c| (c.kind, c.file.as_deref(), c.chars))
            .collect();
        assert_eq!(
            got,
            [
                (ToolKind::Write, Some("src/new.rs"), Some(11)),
                (ToolKind::Edit, Some("src/lib.rs"), None)
            ]
        );
        assert_eq!(calls[1].id.as_deref(), Some("c#1"));
    }
}
