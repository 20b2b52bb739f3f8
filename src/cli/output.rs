//! The only code that writes to stdout outside the MCP transport: results of the one-shot
//! commands, as JSON (piped, or `--json`) or as readable text (a terminal, or `--color always`).
#![allow(clippy::print_stdout)]

use super::human::Paint;
use crate::server::ToolError;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// How a command prints its result.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mode {
    Json,
    Human(Paint),
}

/// Prints a tool result as pretty JSON (errors as `{"error": "..."}`, exit code 1).
pub(crate) fn print_result<T: Serialize>(result: Result<T, ToolError>) -> ExitCode {
    match result {
        Ok(value) => match serde_json::to_string_pretty(&value) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                println!("{}", serde_json::json!({ "error": e.to_string() }));
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            println!("{}", serde_json::json!({ "error": e.0 }));
            ExitCode::FAILURE
        }
    }
}

/// Prints a tool result in `mode`: JSON exactly as [`print_result`], or `render`'s text (an
/// error then goes to stderr as `error: ...`, exit code 1).
pub(crate) fn emit<T: Serialize>(
    result: Result<T, ToolError>,
    mode: Mode,
    render: impl FnOnce(&T, Paint) -> String,
) -> ExitCode {
    match (mode, result) {
        (Mode::Json, result) => print_result(result),
        (Mode::Human(paint), Ok(value)) => print_text(&render(&value, paint)),
        (Mode::Human(_), Err(e)) => {
            eprintln!("error: {}", e.0);
            ExitCode::FAILURE
        }
    }
}

/// Prints text as is (a closed pipe is not an error).
pub(crate) fn print_text(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// Writes bytes to stdout (completion scripts, the man page).
pub(crate) fn write_bytes(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// Stdout for a command whose output is data (`export`), buffered.
pub(crate) fn data_out() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}
