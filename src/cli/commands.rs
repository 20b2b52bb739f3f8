//! The one-shot commands: each runs the same function as its MCP tool and prints the result
//! readably or as that tool's JSON (see [`super::output`]).
use super::human;
use super::output::{self, Mode};
use super::{Cli, ContextArgs, ContextFormat, ListArgs, SearchArgs, ShowArgs};
use crate::corpus::project::Scope;
use crate::corpus::{Shared, Snapshot};
use crate::server::choice::SourceName;
use crate::server::tools;
use clap::CommandFactory;
use std::process::ExitCode;
use std::sync::Arc;

pub(crate) fn search(mode: Mode, snap: &Snapshot, args: SearchArgs) -> anyhow::Result<ExitCode> {
    let params = tools::search::SearchParams {
        query: args.query,
        limit: Some(args.limit),
        session_id: args.session_id,
        project: args.project,
        source: args.source.map(SourceName),
        scope: Some(args.scope.into()),
        ..Default::default()
    };
    let result = tools::search::run(snap, params);
    Ok(output::emit(result, mode, human::search))
}

pub(crate) fn list(mode: Mode, snap: &Snapshot, args: ListArgs) -> anyhow::Result<ExitCode> {
    let params = tools::list::ListParams {
        project: args.project,
        source: args.source.map(SourceName),
        limit: Some(args.limit),
        scope: Some(args.scope.into()),
        ..Default::default()
    };
    let result = tools::list::run(snap, params);
    Ok(output::emit(result, mode, human::list))
}

/// `show SESSION [TURN]`: `read_turn` or `read_conversation`.
pub(crate) fn show(mode: Mode, snap: &Snapshot, args: ShowArgs) -> anyhow::Result<ExitCode> {
    Ok(match args.turn {
        Some(turn) => {
            let params = tools::read_turn::ReadTurnParams {
                session_id: args.session,
                turn_number: turn,
                max_chars: Some(args.max_chars),
                char_offset: None,
                tool_offset: None,
            };
            output::emit(tools::read_turn::run(snap, params), mode, human::turn)
        }
        None => {
            let params = tools::read_conversation::ReadConversationParams {
                session_id: args.session,
                offset: Some(args.offset),
                limit: Some(args.limit),
                max_chars: Some(args.max_chars),
            };
            output::emit(
                tools::read_conversation::run(snap, params),
                mode,
                human::conversation,
            )
        }
    })
}

/// `status`: what `index_status` says.
pub(crate) fn status(mode: Mode, shared: &Shared) -> anyhow::Result<ExitCode> {
    let live = crate::live::LiveStatus::default();
    let params = tools::index_status::StatusParams {
        max_chars: Some(tools::budget::HARD_CAP as i64),
    };
    let reports = (shared.cache_report(), shared.store_report());
    let result = tools::index_status::run(&shared.snapshot(), &live, reports, params);
    Ok(output::emit(result, mode, |out, paint| {
        human::fields(&serde_json::to_value(out).unwrap_or_default(), paint)
    }))
}

/// `context`: the `recent_context` digest as Markdown or as a SessionStart hook's JSON; the
/// budget applies to the digest's text. `load` gives the index the `n` sessions of a scope need
/// (called once the arguments are valid).
pub(super) fn context(
    args: ContextArgs,
    load: impl FnOnce(Scope, usize) -> anyhow::Result<Arc<Shared>>,
) -> anyhow::Result<ExitCode> {
    use tools::recent_context::{RecentContextParams, heading, render, validate};
    let params = RecentContextParams {
        scope: Some(args.scope.into()),
        sessions: Some(args.sessions),
        max_chars: Some(args.max_chars),
    };
    let (scope, n, max) = validate(&params).map_err(|e| super::UsageError(e.0))?;
    let snap = load(scope, n)?.snapshot();
    let digests = snap.recent_sessions(scope, n);
    let head = heading(&snap, scope == Scope::All);
    let (text, ..) = render(&head, &digests, max, |t| t.chars().count() <= max);
    let text = match args.format {
        ContextFormat::Markdown => text,
        ContextFormat::ClaudeHook => serde_json::json!({"hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": text,
        }})
        .to_string(),
    };
    Ok(output::print_text(&format!("{}\n", text.trim_end())))
}

/// `completions SHELL`.
pub(super) fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "conversation-search", &mut buf);
    match output::write_bytes(&buf) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// `man`: the man page, from the clap definitions.
pub(super) fn man() -> anyhow::Result<ExitCode> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    output::write_bytes(&buf)?;
    Ok(ExitCode::SUCCESS)
}
