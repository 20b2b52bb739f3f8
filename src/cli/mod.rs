//! The command line: `serve` (default), `search` and `list`, and how their options resolve
//! into index roots.
pub mod output;
pub mod sources;

use crate::cache::Cache;
use crate::corpus::writer::Writer;
use crate::corpus::{Root, Shared, Snapshot};
use crate::live::{self, LiveConfig};
use crate::server::tools;
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Search your coding agents' past sessions: an MCP server over stdio (default) or one-shot
/// `search` / `list` commands that print JSON.
#[derive(Debug, Parser)]
#[command(
    name = "conversation-search",
    version,
    about,
    subcommand_precedence_over_arg = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
    #[command(flatten)]
    pub global: GlobalArgs,
}

/// Options every command takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Where Claude Code keeps projects [default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects]
    #[arg(long, global = true, value_name = "DIR")]
    pub projects_dir: Option<PathBuf>,
    /// Apply a change once its file has been quiet this long (milliseconds)
    #[arg(
        long,
        global = true,
        value_name = "MS",
        env = "CONVERSATION_SEARCH_DEBOUNCE_MS",
        default_value_t = 2000
    )]
    pub debounce_ms: u64,
    /// Re-read a file that keeps changing at least this often (milliseconds)
    #[arg(long, global = true, value_name = "MS", default_value_t = 10_000)]
    pub max_staleness_ms: u64,
    /// Rescan for changes periodically instead of using file-system notifications (for network
    /// file systems; also the automatic fallback when watching fails)
    #[arg(long, global = true)]
    pub poll: bool,
    /// Index another agent's transcripts too: FORMAT (default location) or FORMAT:PATH;
    /// repeatable. Formats: claude, openclaw, codex, gemini, opencode. Without it, Claude Code
    /// under the projects directory only.
    #[arg(long, global = true, value_name = "FORMAT[:PATH]", value_parser = sources::parse_source)]
    pub source: Vec<sources::SourceArg>,
    /// Where the persistent index lives [default: $XDG_CACHE_HOME/conversation-search, else
    /// ~/.cache/conversation-search]
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the persistent index (always index from scratch)
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// Rescan interval when polling (milliseconds)
    #[arg(long, global = true, value_name = "MS", default_value_t = 5000)]
    pub poll_interval_ms: u64,
}

impl GlobalArgs {
    fn live_config(&self) -> LiveConfig {
        LiveConfig {
            debounce: Duration::from_millis(self.debounce_ms),
            max_staleness: Duration::from_millis(self.max_staleness_ms),
            poll_interval: Duration::from_millis(self.poll_interval_ms.max(10)),
            force_poll: self.poll,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdin/stdout (the default when no command is given).
    Serve(ServeArgs),
    /// Search once and print the result as JSON.
    Search(SearchArgs),
    /// List sessions once and print them as JSON.
    List(ListArgs),
}

#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// Glob matched against project directory names [default: *]
    #[arg(value_name = "PATTERN")]
    pub pattern: Option<String>,
    /// Time budget of one query: a search still running then returns what it found, marked
    /// partial (milliseconds; 0 stops every search at its first check)
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub query_timeout_ms: u64,
}

#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    /// Keywords to search for.
    pub query: String,
    /// Glob matched against project directory names [default: *]
    #[arg(value_name = "PATTERN")]
    pub pattern: Option<String>,
    /// Maximum number of results (1-100).
    #[arg(long, default_value_t = 10, allow_negative_numbers = true)]
    pub limit: i64,
    /// Only projects whose name, directory or cwd contains this.
    #[arg(long)]
    pub project: Option<String>,
    /// Only this conversation.
    #[arg(long)]
    pub session_id: Option<String>,
    /// Only transcripts of this agent (claude, openclaw, codex, gemini, opencode).
    #[arg(id = "only_source", long = "only-source", value_name = "FORMAT")]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Glob matched against project directory names [default: *]
    #[arg(value_name = "PATTERN")]
    pub pattern: Option<String>,
    /// Only projects whose name, directory or cwd contains this.
    #[arg(long)]
    pub project: Option<String>,
    /// Maximum number of sessions (1-100).
    #[arg(long, default_value_t = 50, allow_negative_numbers = true)]
    pub limit: i64,
    /// Only sessions of this agent (claude, openclaw, codex, gemini, opencode).
    #[arg(id = "only_source", long = "only-source", value_name = "FORMAT")]
    pub source: Option<String>,
}

/// A command line that names something unusable: reported like clap's errors (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn roots(global: &GlobalArgs, pattern: Option<&str>) -> anyhow::Result<Vec<Root>> {
    let roots = sources::roots(
        &global.source,
        global.projects_dir.as_deref(),
        pattern.unwrap_or("*"),
    )
    .map_err(UsageError)?;
    for r in &roots {
        if r.adapter.name() == crate::transcript::claude::FORMAT && !r.dir.exists() {
            tracing::info!(
                "projects directory `{}` does not exist yet; starting with an empty index",
                r.dir.display()
            );
        }
    }
    Ok(roots)
}

/// The persistent index for these roots, unless disabled.
fn cache_for(global: &GlobalArgs, roots: &[Root]) -> Option<Cache> {
    if global.no_cache {
        return None;
    }
    let dir = global
        .cache_dir
        .clone()
        .or_else(crate::cache::default_dir)?;
    Some(Cache::new(dir, roots))
}

/// Builds the whole index synchronously (for one-shot commands).
fn build_once(global: &GlobalArgs, roots: Vec<Root>) -> Arc<Snapshot> {
    let cache = cache_for(global, &roots);
    let shared = Shared::new(Snapshot::default());
    let mut writer = Writer::new(roots, Arc::clone(&shared));
    if writer.start(cache.as_ref()) {
        if let Some(c) = &cache {
            if let Err(e) = writer.save_cache(c) {
                tracing::warn!("cannot write the index cache `{}`: {e}", c.path().display());
            }
        }
    }
    shared.snapshot()
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => serve(&cli.global, &cli.serve),
        Some(Command::Serve(args)) => serve(&cli.global, &args),
        Some(Command::Search(args)) => {
            let snap = build_once(&cli.global, roots(&cli.global, args.pattern.as_deref())?);
            let params = tools::search::SearchParams {
                query: args.query,
                limit: Some(args.limit),
                session_id: args.session_id,
                project: args.project,
                source: args.source,
                ..Default::default()
            };
            Ok(output::print_result(tools::search::run(&snap, params)))
        }
        Some(Command::List(args)) => {
            let snap = build_once(&cli.global, roots(&cli.global, args.pattern.as_deref())?);
            let params = tools::list::ListParams {
                project: args.project,
                source: args.source,
                limit: Some(args.limit),
                ..Default::default()
            };
            Ok(output::print_result(tools::list::run(&snap, params)))
        }
    }
}

/// How long an exiting server waits for the indexer to save its pending cache update.
const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn serve(global: &GlobalArgs, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let roots = roots(global, args.pattern.as_deref())?;
    let shared = Shared::new(Snapshot {
        roots: Arc::new(roots.clone()),
        ..Snapshot::default()
    });
    let writer_shared = Arc::clone(&shared);
    let cfg = global.live_config();
    let cache = cache_for(global, &roots);
    let (stopper, tx, rx) = live::channel_pair();
    std::thread::Builder::new()
        .name("indexer".into())
        .spawn(move || {
            let writer = Writer::new(roots, Arc::clone(&writer_shared));
            live::run(writer, writer_shared, cfg, cache, (tx, rx));
        })
        .context("cannot start the indexer thread")?;
    // One runtime thread for the transport and the protocol; tool calls run on the blocking
    // pool (bounded by the server), so nothing waits behind a heavy query.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let timeout = Duration::from_millis(args.query_timeout_ms);
    let served = runtime.block_on(crate::server::serve_stdio(shared, timeout));
    // the client is gone: let the indexer save what changed since its last cache write
    stopper.stop(STOP_TIMEOUT);
    served?;
    Ok(ExitCode::SUCCESS)
}
