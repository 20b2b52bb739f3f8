//! `forget` and `store status`: the durable store's controls (the MCP tools never write). How
//! `--data-dir`, `--no-store` (and the older `--archive`, `--no-archive`) and `--retain-days`
//! resolve is [`super::settings`].
use super::settings::store_dir;
use super::{GlobalArgs, UsageError, output};
use crate::server::ToolError;
use crate::store::admin::{self, Selector};
use clap::{Args, Subcommand};
use std::process::ExitCode;

/// The conversations `forget` and `export` pick (with the global `--source F`: those of
/// format F).
#[derive(Debug, Clone, Args)]
pub struct SelectorArgs {
    /// This conversation (and its sub-agents).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Conversations whose project directory or cwd contains P (case-insensitive).
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// Conversations whose last turn is before DATE (ISO date or datetime, or an age like 90d).
    #[arg(long, value_name = "DATE")]
    pub before: Option<String>,
}

impl SelectorArgs {
    /// The selectors `--session`, `--project`, `--before` and `--source` name, in that order
    /// (forget takes exactly one; export all that are given).
    pub(super) fn selectors(&self, global: &GlobalArgs) -> anyhow::Result<Vec<Selector>> {
        let mut chosen = Vec::new();
        if let Some(s) = &self.session {
            chosen.push(Selector::Session(s.clone()));
        }
        if let Some(p) = &self.project {
            chosen.push(Selector::Project(p.clone()));
        }
        if let Some(d) = &self.before {
            let t = crate::server::tools::check_time("--before", Some(d), false)
                .map_err(|e| UsageError(e.0))?
                .ok_or_else(|| UsageError("`--before` needs a date".into()))?;
            chosen.push(Selector::Before(t));
        }
        for s in &global.source {
            chosen.push(Selector::Source(s.format.to_owned()));
        }
        Ok(chosen)
    }
}

#[derive(Debug, Clone, Args)]
pub struct ForgetArgs {
    #[command(flatten)]
    pub select: SelectorArgs,
    /// Remove them (otherwise only print what would be removed).
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum StoreCommand {
    /// Conversations and turns stored, bytes on disk, oldest and newest turn, and how many
    /// exist only in the store.
    Status,
}

fn selector(global: &GlobalArgs, args: &ForgetArgs) -> anyhow::Result<Selector> {
    let mut chosen = args.select.selectors(global)?;
    if chosen.len() != 1 {
        return Err(UsageError(
            "forget needs exactly one of --session ID, --project P, --before DATE, --source F"
                .into(),
        )
        .into());
    }
    Ok(chosen.remove(0))
}

/// `forget`.
pub(crate) fn forget(global: &GlobalArgs, args: &ForgetArgs) -> anyhow::Result<ExitCode> {
    let sel = selector(global, args)?;
    let result = store_dir(global).and_then(|dir| {
        admin::forget(&dir, &sel, args.yes).map_err(|e| ToolError::new(e.to_string()))
    });
    if let Ok(f) = &result {
        if !f.removed && f.conversations > 0 {
            eprintln!("nothing removed yet: run again with --yes to remove these");
        }
    }
    Ok(output::print_result(result))
}

/// `store status`.
pub(crate) fn run(global: &GlobalArgs, args: &StoreArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        StoreCommand::Status => {
            Ok(output::print_result(store_dir(global).and_then(|dir| {
                admin::status(&dir).map_err(|e| ToolError::new(e.to_string()))
            })))
        }
    }
}
