//! The tools field's line format, part of the index's own schema. The corpus writes a turn's
//! tool facts as these lines ([`tools_field`]); they are indexed and searchable like any text,
//! and the segment builder reads the file lines back into the per-segment file table
//! (`find_file_history`, the `file` filter). No transcript format is known here:
//!
//! ```text
//! tools: Bash Edit Read
//! read: src/index/mod.rs
//! edit: src/index/query.rs
//! $ cargo test --lib
//! ```

use crate::transcript::FileOp;

/// How a file was touched ([`FileOp`]), as stored in segments.
pub(crate) const OP_READ: u8 = 0;
pub(crate) const OP_EDIT: u8 = 1;
pub(crate) const OP_WRITE: u8 = 2;

const PREFIXES: [(&str, u8); 3] = [
    ("read: ", OP_READ),
    ("edit: ", OP_EDIT),
    ("write: ", OP_WRITE),
];
const TOOLS_PREFIX: &str = "tools: ";
const COMMAND_PREFIX: &str = "$ ";

/// Most file lines and command lines kept per turn.
pub(crate) const MAX_FILES: usize = 64;
pub(crate) const MAX_COMMANDS: usize = 32;
/// Longest command kept, in characters.
pub(crate) const MAX_COMMAND_CHARS: usize = 500;

/// The operation a stored code stands for.
pub(crate) fn op(code: u8) -> FileOp {
    match code {
        OP_READ => FileOp::Read,
        OP_EDIT => FileOp::Edit,
        _ => FileOp::Write,
    }
}

/// The stored code of an operation.
pub(crate) fn code(op: FileOp) -> u8 {
    match op {
        FileOp::Read => OP_READ,
        FileOp::Edit => OP_EDIT,
        FileOp::Write => OP_WRITE,
    }
}

/// The word of a stored code (`read`, `edit`, `write`).
pub(crate) fn op_name(code: u8) -> &'static str {
    op(code).as_str()
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// Builds the tools field from sorted unique tool names, files touched (op, path; repeated ones
/// once) and commands run.
pub(crate) fn tools_field<'a>(
    names: &[&str],
    files: impl IntoIterator<Item = (u8, &'a str)>,
    commands: impl IntoIterator<Item = &'a str>,
) -> String {
    let mut out = String::new();
    if !names.is_empty() {
        out.push_str(TOOLS_PREFIX);
        out.push_str(&names.join(" "));
    }
    let mut seen: Vec<(u8, &str)> = Vec::new();
    for (op, path) in files {
        if path.trim().is_empty() || seen.contains(&(op, path)) || seen.len() >= MAX_FILES {
            continue;
        }
        seen.push((op, path));
        let prefix = PREFIXES
            .iter()
            .find(|(_, o)| *o == op)
            .map_or("read: ", |(p, _)| p);
        out.push('\n');
        out.push_str(prefix);
        out.push_str(&one_line(path));
    }
    for cmd in commands
        .into_iter()
        .filter(|c| !c.trim().is_empty())
        .take(MAX_COMMANDS)
    {
        out.push('\n');
        out.push_str(COMMAND_PREFIX);
        let cmd: String = one_line(cmd.trim())
            .chars()
            .take(MAX_COMMAND_CHARS)
            .collect();
        out.push_str(&cmd);
    }
    out
}

/// The files a tools field records: (op, path).
pub(crate) fn files(tools: &str) -> impl Iterator<Item = (u8, &str)> {
    tools.lines().filter_map(|line| {
        PREFIXES
            .iter()
            .find_map(|(p, op)| line.strip_prefix(p).map(|path| (*op, path)))
    })
}

/// The tool names a tools field records.
pub(crate) fn tool_names(tools: &str) -> impl Iterator<Item = &str> {
    tools
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(TOOLS_PREFIX))
        .into_iter()
        .flat_map(str::split_whitespace)
}

/// The commands a tools field records.
#[cfg(test)]
pub(crate) fn commands(tools: &str) -> impl Iterator<Item = &str> {
    tools.lines().filter_map(|l| l.strip_prefix(COMMAND_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_facts() {
        let f = tools_field(
            &["Bash", "Edit", "Read"],
            [
                (OP_READ, "src/a.rs"),
                (OP_EDIT, "src/b.rs"),
                (OP_READ, "src/a.rs"),
            ],
            ["cargo test\n--lib"],
        );
        assert_eq!(
            f,
            "tools: Bash Edit Read\nread: src/a.rs\nedit: src/b.rs\n$ cargo test --lib"
        );
        assert_eq!(
            files(&f).collect::<Vec<_>>(),
            [(OP_READ, "src/a.rs"), (OP_EDIT, "src/b.rs")]
        );
        assert_eq!(tool_names(&f).collect::<Vec<_>>(), ["Bash", "Edit", "Read"]);
        assert_eq!(commands(&f).collect::<Vec<_>>(), ["cargo test --lib"]);
        assert_eq!(tools_field(&[], [], []), "");
    }

    #[test]
    fn every_operation_has_its_own_code() {
        for op in [FileOp::Read, FileOp::Edit, FileOp::Write] {
            assert_eq!(super::op(code(op)), op);
            assert_eq!(op_name(code(op)), op.as_str());
        }
    }
}
