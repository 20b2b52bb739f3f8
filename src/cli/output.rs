//! The only code that writes to stdout outside the MCP transport: JSON results of the one-shot
//! commands.
#![allow(clippy::print_stdout)]

use crate::server::ToolError;
use serde::Serialize;
use std::process::ExitCode;

/// Prints a tool result as pretty JSON (errors as `{"error": "..."}`, exit code 1).
pub fn print_result<T: Serialize>(result: Result<T, ToolError>) -> ExitCode {
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
