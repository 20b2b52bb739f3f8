//! The command line: `serve` (default), the one-shot commands (`search`, `list`, `show`,
//! `status`, `context`), the durable store's (`forget`, `store status`, `export`, `import`),
//! shell completions and the man page. How the options resolve (index roots, the project, the
//! cache, the store) is [`settings`], done once per command.
mod commands;
pub(crate) mod export;
pub(crate) mod human;
pub(crate) mod output;
mod progress;
pub(crate) mod settings;
pub(crate) mod sources;
pub(crate) mod store;

use crate::corpus::Shared;
use crate::corpus::project::Scope;
use crate::corpus::writer::Writer;
use crate::live;
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use settings::Settings;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Search your coding agents' past sessions: an MCP server over stdio (default) or one-shot
/// commands that print readable text on a terminal and JSON when piped.
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
    /// Index another agent's transcripts too: FORMAT (its default location), FORMAT:PATH, or
    /// `auto` (every agent whose default location exists); repeatable. An unknown FORMAT lists
    /// the supported ones (the README describes them). Without it, Claude Code under the
    /// projects directory only.
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
    /// Where the durable store of every indexed conversation lives [default:
    /// $XDG_DATA_HOME/conversation-search, else ~/.local/share/conversation-search]
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Keep the durable store (the default; accepted for older configurations): a vanished
    /// transcript's turns stay searchable and readable
    #[arg(long, global = true, hide = true)]
    pub archive: bool,
    /// Keep no store: none is opened, and a transcript's turns leave every tool when the file
    /// goes (mirror only). `--no-archive` is the older spelling
    #[arg(long, global = true, alias = "no-archive")]
    pub no_store: bool,
    /// Drop stored turns older than N days once their transcript is gone [default: keep forever]
    #[arg(long, global = true, value_name = "N")]
    pub retain_days: Option<u32>,
    /// UNSAFE: do not redact secrets (keys, tokens, passwords) from transcripts; they are then
    /// indexed, written to the persistent index and returned by every tool as written
    #[arg(long, global = true)]
    pub no_redact: bool,
    /// This project's directory: its sessions (there, below it, or in another worktree of its
    /// git repository) are `this_project` [default: the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub project_root: Option<PathBuf>,
    /// Do not rank this project's turns higher when searching every project
    #[arg(long, global = true)]
    pub no_project_prior: bool,
    /// Print the JSON result even on a terminal
    #[arg(long, global = true)]
    pub json: bool,
    /// Colours in readable output (`auto`: on a terminal, unless NO_COLOR is set)
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: human::ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdin/stdout (the default when no command is given), or over HTTP with
    /// --http.
    Serve(ServeArgs),
    /// Search once: one block per hit on a terminal, the MCP JSON when piped or with --json.
    Search(SearchArgs),
    /// List sessions once (readable on a terminal, JSON when piped or with --json).
    List(ListArgs),
    /// Remove conversations from the durable store and every server's index (prints what it
    /// removed; without --yes only what it would remove). Exactly one selector; `--source F`
    /// selects the conversations of format F.
    Forget(store::ForgetArgs),
    /// The durable store: `store status` (`archive status` is the older spelling).
    #[command(alias = "archive")]
    Store(store::StoreArgs),
    /// Write the durable store's history (redacted, as the tools return it) as NDJSON: one
    /// record per conversation and per turn, read at one commit while servers run. Selectors
    /// as for forget (any number, all must match; none: everything).
    Export(export::ExportArgs),
    /// Merge an `export` file into the durable store (each turn once; conversations forgotten
    /// here stay forgotten); a bad line imports nothing.
    Import(export::ImportArgs),
    /// Print a conversation, or one turn of it.
    Show(ShowArgs),
    /// Print what the index holds (the `index_status` tool's answer).
    Status,
    /// Print a digest of this project's last sessions (for a SessionStart hook).
    Context(ContextArgs),
    /// Print a shell completion script.
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    #[command(hide = true)]
    Man,
}

/// Which conversations a command covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ScopeArg {
    /// This project's conversations only.
    Project,
    /// Every project's.
    #[default]
    All,
}

impl From<ScopeArg> for Scope {
    fn from(s: ScopeArg) -> Scope {
        match s {
            ScopeArg::Project => Scope::Project,
            ScopeArg::All => Scope::All,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// Session id (from search or list).
    pub session: String,
    /// Only this turn (0-based).
    pub turn: Option<i64>,
    /// First turn shown of a conversation.
    #[arg(long, default_value_t = 0)]
    pub offset: i64,
    /// Most turns shown of a conversation (1-100).
    #[arg(long, default_value_t = 20)]
    pub limit: i64,
    /// Most characters of JSON read (500-60000).
    #[arg(long, default_value_t = 60_000)]
    pub max_chars: i64,
}

/// How `context` prints its digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ContextFormat {
    /// Markdown.
    #[default]
    Markdown,
    /// The JSON a Claude Code SessionStart hook prints (hookSpecificOutput.additionalContext).
    ClaudeHook,
}

#[derive(Debug, Clone, Args)]
pub struct ContextArgs {
    /// How many sessions, newest first (1-20).
    #[arg(long, default_value_t = 3)]
    pub sessions: i64,
    /// Most characters printed (500-60000).
    #[arg(long, default_value_t = 2000)]
    pub max_chars: i64,
    /// Output format.
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: ContextFormat,
    /// Sessions of this project (default) or of every project.
    #[arg(long, value_enum, default_value = "project")]
    pub scope: ScopeArg,
}

#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// Glob matched against project directory names [default: *]
    #[arg(value_name = "PATTERN")]
    pub pattern: Option<String>,
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio, for many clients at
    /// once [ADDR: 127.0.0.1:7102]; ADDR is IP:PORT, [IPv6]:PORT, localhost:PORT or PORT
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        require_equals = false,
        default_missing_value = "127.0.0.1:7102",
        value_parser = crate::server::http::parse_addr
    )]
    pub http: Option<std::net::SocketAddr>,
    /// With --http: allow a non-loopback ADDR (needs --token-file too)
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// With --http: every request must send `Authorization: Bearer <the token in FILE>`
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
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
    /// Only transcripts of this agent (a `--source` format name).
    #[arg(id = "only_source", long = "only-source", value_name = "FORMAT")]
    pub source: Option<String>,
    /// This project only, or every project (this project's turns ranked slightly higher).
    #[arg(long, value_enum, default_value = "all")]
    pub scope: ScopeArg,
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
    /// Only sessions of this agent (a `--source` format name).
    #[arg(id = "only_source", long = "only-source", value_name = "FORMAT")]
    pub source: Option<String>,
    /// This project's sessions only, or every project's.
    #[arg(long, value_enum, default_value = "all")]
    pub scope: ScopeArg,
}

/// A command line that names something unusable: reported like clap's errors (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Builds the whole index synchronously (for one-shot commands), with a progress bar on a
/// terminal when the build takes a while.
fn build_once(settings: &Settings) -> Arc<Shared> {
    let shared = settings.shared();
    let mut writer = settings.writer(&shared);
    let bar = progress::Bar::start(Arc::clone(&shared));
    let cache = settings.cache.as_ref();
    let changed = writer.start(cache);
    bar.finish();
    // a one-shot command stores what it read before it exits
    writer.store_flush();
    if changed {
        // a running server holding the writer lock keeps the cache itself: a base written
        // here would start a lineage its followers cannot follow
        let lock = cache.and_then(|c| c.try_lock_writer().ok().flatten());
        if let (Some(c), Some(_lock)) = (cache, lock) {
            if let Err(e) = writer.save_cache(c) {
                tracing::warn!("cannot write the index cache `{}`: {e}", c.path().display());
            }
        }
    }
    shared
}

/// What `context` needs: with a usable cache, its catalog and the transcripts of the `n`
/// sessions of `scope` the digest shows (no segment decoded, nothing written; sessions whose
/// transcript is gone are read from the store); else a full build, which writes the cache for
/// the next time.
fn glance_once(settings: &Settings, scope: Scope, n: usize) -> Arc<Shared> {
    if let Some(cache) = &settings.cache {
        let shared = settings.shared();
        let mut writer = settings.writer(&shared);
        if writer.start_from_catalog(cache) {
            writer.read_recent(scope, n);
            return shared;
        }
    }
    build_once(settings)
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    crate::redact::set_enabled(!cli.global.no_redact);
    if cli.global.no_redact {
        tracing::warn!(
            "--no-redact: secrets in transcripts are indexed, cached and returned as written"
        );
    }
    let global = &cli.global;
    // the settings of an indexing command, and its index built
    let indexed = |pattern: Option<&str>| -> anyhow::Result<(Settings, Arc<Shared>)> {
        let settings = Settings::resolve(global, pattern)?;
        let shared = build_once(&settings);
        Ok((settings, shared))
    };
    match cli.command {
        None => serve(global, &cli.serve),
        Some(Command::Serve(args)) => serve(global, &args),
        Some(Command::Search(args)) => {
            let (settings, shared) = indexed(args.pattern.as_deref())?;
            commands::search(settings.mode, &shared.snapshot(), args)
        }
        Some(Command::List(args)) => {
            let (settings, shared) = indexed(args.pattern.as_deref())?;
            commands::list(settings.mode, &shared.snapshot(), args)
        }
        Some(Command::Forget(args)) => store::forget(&cli.global, &args),
        Some(Command::Store(args)) => store::run(&cli.global, &args),
        Some(Command::Export(args)) => export::export(&cli.global, &args),
        Some(Command::Import(args)) => export::import(&cli.global, &args),
        Some(Command::Show(args)) => {
            let (settings, shared) = indexed(None)?;
            commands::show(settings.mode, &shared.snapshot(), args)
        }
        Some(Command::Status) => {
            let (settings, shared) = indexed(None)?;
            commands::status(settings.mode, &shared)
        }
        Some(Command::Context(args)) => commands::context(args, |scope, n| {
            Ok(glance_once(&Settings::resolve(global, None)?, scope, n))
        }),
        Some(Command::Completions { shell }) => Ok(commands::completions(shell)),
        Some(Command::Man) => commands::man(),
    }
}

/// How long an exiting server waits for the indexer to save its pending cache update.
const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn serve(global: &GlobalArgs, args: &ServeArgs) -> anyhow::Result<ExitCode> {
    // a refused HTTP configuration exits before anything is indexed
    let listener = args
        .http
        .map(|addr| {
            crate::server::http::Listener::bind(&crate::server::http::HttpOptions {
                addr,
                allow_remote: args.allow_remote,
                token_file: args.token_file.clone(),
            })
        })
        .transpose()?;
    let settings = Settings::resolve(global, args.pattern.as_deref())?;
    let shared = settings.shared();
    let writer_shared = Arc::clone(&shared);
    let (stopper, tx, rx) = live::channel_pair();
    let status = Arc::new(live::LiveStatus::configured(&settings.live));
    let writer_status = Arc::clone(&status);
    let Settings {
        roots,
        cache,
        store,
        live: cfg,
        ..
    } = settings;
    std::thread::Builder::new()
        .name("indexer".into())
        .spawn(move || {
            let writer = Writer::new(roots, writer_shared);
            live::run(writer, writer_status, cfg, (cache, store), (tx, rx));
        })
        .context("cannot start the indexer thread")?;
    let timeout = Duration::from_millis(args.query_timeout_ms);
    if let Some(listener) = listener {
        return serve_http(shared, status, timeout, listener, &stopper);
    }
    // One runtime thread for the transport and the protocol; tool calls run on the blocking
    // pool (bounded by the server), so nothing waits behind a heavy query.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(crate::server::serve_stdio(shared, status, timeout));
    // the client is gone: let the indexer save what changed since its last cache write
    stopper.stop(STOP_TIMEOUT);
    served?;
    Ok(ExitCode::SUCCESS)
}

/// `serve --http`: many clients, so a runtime thread per core; on SIGTERM the indexer gets what
/// is left of the shutdown budget to save its pending cache update.
fn serve_http(
    shared: Arc<Shared>,
    status: Arc<live::LiveStatus>,
    query_timeout: Duration,
    listener: crate::server::http::Listener,
    stopper: &live::Stopper,
) -> anyhow::Result<ExitCode> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let exit_by = runtime.block_on(crate::server::http::serve_http(
        shared,
        status,
        query_timeout,
        listener,
    ))?;
    // tools still running on the blocking pool are not waited for
    runtime.shutdown_timeout(Duration::from_millis(50));
    stopper.stop(exit_by.saturating_duration_since(std::time::Instant::now()));
    Ok(ExitCode::SUCCESS)
}
