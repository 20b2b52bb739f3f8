//! Entry point: parse the command line, set up logging on stderr, run.
#![deny(clippy::print_stdout)]
use clap::Parser;
use conversation_search::{Cli, UsageError};
use std::process::ExitCode;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// mimalloc instead of the platform's allocator: the shipped binary is static musl, whose
/// allocator made the first build of a large history take twice as long as with glibc's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    // freed memory goes back to the system at once, except while a first build runs
    conversation_search::hold_freed_memory(false);
    match conversation_search::run(cli) {
        Ok(code) => code,
        Err(e) if e.is::<UsageError>() => {
            eprintln!("error: {e}\n\nFor more information, try '--help'.");
            ExitCode::from(2)
        }
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("conversation-search: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr, without colours; stdout carries the protocol. Level from
/// `CONVERSATION_SEARCH_LOG` (error, warn, info, debug, trace; default info).
fn init_logging() {
    let level = std::env::var("CONVERSATION_SEARCH_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
    let filter = Targets::new()
        .with_default(level)
        .with_target("rmcp", tracing::Level::WARN.min(level));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(level)
        .finish()
        .with(filter)
        .init();
}
