//! `serve --http`: MCP over Streamable HTTP at `/mcp`, many clients at once sharing one index.
//! Owns the listener, the accept loop, rmcp's session service, limits on slow and idle clients,
//! and graceful shutdown on SIGTERM/SIGINT. The per-request checks (Origin, bearer token, body
//! size and time) are in [`guard`]; which clients get SSE priming events is in [`priming`].
mod guard;
mod priming;

pub(crate) use guard::Token;

use super::ConversationServer;
use crate::corpus::Shared;
use crate::live::LiveStatus;
use guard::{Guard, InFlight};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The address `--http` listens on when given none.
pub(crate) const DEFAULT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 7102);
/// The one path MCP is served at.
pub(crate) const MCP_PATH: &str = "/mcp";
/// Largest request body accepted (413 beyond).
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How long a client may take to send a request's headers; also how long an idle keep-alive
/// connection stays open (hyper starts this timer whenever it waits for the next request).
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a client may take to send a request body (408 beyond).
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// A session without any request for this long is closed; the client then gets 404 and
/// initializes a new one, as the transport specifies.
const SESSION_IDLE: Duration = Duration::from_secs(60 * 60);
/// Connections served at once; further clients wait in the listen backlog.
const MAX_CONNECTIONS: usize = 256;
/// From SIGTERM to the process exiting, at most.
pub(crate) const SHUTDOWN_BUDGET: Duration = Duration::from_millis(1900);
/// Of which in-flight POSTs get this long to finish before sessions and streams are cancelled,
const DRAIN_POSTS: Duration = Duration::from_millis(1200);
/// and every connection this long to close.
const CLOSE_CONNECTIONS: Duration = Duration::from_millis(1500);

/// Why the HTTP server cannot start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    #[error(
        "refusing to listen on `{0}`: it is not a loopback address, so other machines could read \
         your transcripts; listen on 127.0.0.1 (the default), or pass both --allow-remote and \
         --token-file FILE (a secret every client must send as `Authorization: Bearer ...`)"
    )]
    RemoteNotAllowed(SocketAddr),
    #[error(
        "cannot read the token file `{path}`: {source}; create it with a long random secret, e.g. \
         `openssl rand -hex 32 > {path}`"
    )]
    TokenUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the token file `{0}` holds no usable token (it must be one line of at least 16 visible \
         ASCII characters); write one, e.g. `openssl rand -hex 32 > {0}`"
    )]
    TokenInvalid(PathBuf),
    #[error(
        "cannot listen on `{addr}`: {source}; is another server already running there? Pick \
         another address with --http ADDR"
    )]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot set up signal handling: {0}")]
    Signals(std::io::Error),
}

/// What `serve --http` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct HttpOptions {
    pub addr: SocketAddr,
    pub allow_remote: bool,
    pub token_file: Option<PathBuf>,
}

/// Parses `--http`'s ADDR: `IP:PORT`, `[IPv6]:PORT`, `localhost:PORT`, or a bare `PORT`
/// (on 127.0.0.1). Host names other than `localhost` are refused: binding follows DNS otherwise.
pub(crate) fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    if let Ok(port) = s.trim_start_matches(':').parse::<u16>() {
        return Ok(SocketAddr::new(DEFAULT_ADDR.ip(), port));
    }
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some(port) = s
        .strip_prefix("localhost:")
        .and_then(|p| p.parse::<u16>().ok())
    {
        return Ok(SocketAddr::new(DEFAULT_ADDR.ip(), port));
    }
    Err(format!(
        "`{s}` is not an address to listen on; use IP:PORT (e.g. 127.0.0.1:7102), [::1]:PORT, \
         localhost:PORT or PORT"
    ))
}

/// A bound listener and the checks its requests will pass, made before anything is indexed
/// so that a refused configuration exits at once.
pub(crate) struct Listener {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    guard: Guard,
}

impl Listener {
    /// Checks the options (a non-loopback address needs `--allow-remote` and a token) and binds.
    pub(crate) fn bind(opts: &HttpOptions) -> Result<Self, HttpError> {
        let token = opts.token_file.as_deref().map(Token::read).transpose()?;
        let remote = !opts.addr.ip().is_loopback();
        if remote && !(opts.allow_remote && token.is_some()) {
            return Err(HttpError::RemoteNotAllowed(opts.addr));
        }
        let bind_err = |source| HttpError::Bind {
            addr: opts.addr,
            source,
        };
        let listener = std::net::TcpListener::bind(opts.addr).map_err(bind_err)?;
        listener.set_nonblocking(true).map_err(bind_err)?;
        let addr = listener.local_addr().map_err(bind_err)?;
        Ok(Self {
            listener,
            addr,
            guard: Guard::new(token, remote.then_some(addr)),
        })
    }
}

/// What every connection's requests are served with.
struct Ctx {
    guard: Guard,
    service: StreamableHttpService<ConversationServer, LocalSessionManager>,
    in_flight: InFlight,
}

/// Serves MCP over HTTP on `listener` until SIGTERM or SIGINT, then lets in-flight requests
/// finish and closes every connection; queries stop after `query_timeout`. Returns the instant
/// by which the process should have exited ([`SHUTDOWN_BUDGET`] after the signal), for the
/// caller's own clean-up.
pub(crate) async fn serve_http(
    shared: Arc<Shared>,
    live: Arc<LiveStatus>,
    query_timeout: Duration,
    listener: Listener,
) -> Result<Instant, HttpError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(HttpError::Signals)?;
    let mut int = signal(SignalKind::interrupt()).map_err(HttpError::Signals)?;
    let Listener {
        listener,
        addr,
        guard,
    } = listener;
    let listener =
        TcpListener::from_std(listener).map_err(|source| HttpError::Bind { addr, source })?;

    let cancel = CancellationToken::new();
    let ctx = Arc::new(Ctx {
        service: mcp_service(
            ConversationServer::new(shared, live, query_timeout),
            &guard,
            cancel.clone(),
        ),
        guard,
        in_flight: InFlight::default(),
    });
    let graceful = GracefulShutdown::new();
    let permits = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    tracing::info!("listening on http://{addr}{MCP_PATH}");

    let signal_name = loop {
        let permit = tokio::select! {
            p = Arc::clone(&permits).acquire_owned() => p.expect("the semaphore is never closed"),
            _ = term.recv() => break "SIGTERM",
            _ = int.recv() => break "SIGINT",
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // out of descriptors or similar: back off instead of spinning
                    tracing::warn!("cannot accept a connection on `{addr}`: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = term.recv() => break "SIGTERM",
            _ = int.recv() => break "SIGINT",
        };
        let ctx = Arc::clone(&ctx);
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let ctx = Arc::clone(&ctx);
            async move { Ok::<_, std::convert::Infallible>(handle(&ctx, req, peer).await) }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, "connection ended: {e}");
            }
            drop(permit);
        });
    };

    let deadline = Instant::now() + SHUTDOWN_BUDGET;
    drop(listener);
    tracing::info!(
        "{signal_name}: no new connections; finishing {} request(s) in flight",
        ctx.in_flight.count()
    );
    shut_down(graceful, &ctx.in_flight, &cancel).await;
    Ok(deadline)
}

/// Finishes in-flight POSTs (bounded), then cancels sessions and their event streams (which
/// never end by themselves) and waits, bounded, for every connection to close.
async fn shut_down(graceful: GracefulShutdown, in_flight: &InFlight, cancel: &CancellationToken) {
    let start = tokio::time::Instant::now();
    // polled first in the select below: tells every connection to finish its current request
    // and close, closing idle ones at once
    let closed = graceful.shutdown();
    tokio::pin!(closed);
    let drained = tokio::time::timeout_at(start + DRAIN_POSTS, in_flight.idle());
    tokio::select! {
        biased;
        () = &mut closed => return,
        outcome = drained => if outcome.is_err() {
            tracing::warn!(
                "{} request(s) still running after {DRAIN_POSTS:?}; cancelling them",
                in_flight.count()
            );
        },
    }
    cancel.cancel();
    if tokio::time::timeout_at(start + CLOSE_CONNECTIONS, closed)
        .await
        .is_err()
    {
        tracing::warn!("some connections did not close in time; exiting anyway");
    }
}

/// rmcp's Streamable HTTP service over clones of one [`ConversationServer`]: every session
/// reads the same index and shares its bounded tool pool.
fn mcp_service(
    server: ConversationServer,
    guard: &Guard,
    cancel: CancellationToken,
) -> StreamableHttpService<ConversationServer, LocalSessionManager> {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE);
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel)
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        // Origin is checked by `guard` (403 with a reason), before any of rmcp's work
        .disable_allowed_origins();
    if guard.remote() {
        // clients name this host however they reach it; the bearer token is what protects it
        config = config.disable_allowed_hosts();
    }
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(sessions), config)
}

/// One request: the guard's checks, then rmcp.
async fn handle(
    ctx: &Ctx,
    req: hyper::Request<Incoming>,
    peer: SocketAddr,
) -> hyper::Response<guard::Tracked> {
    let (parts, body) = req.into_parts();
    // event streams (GET) live as long as the session; only requests that expect an answer
    // count as in flight for the shutdown
    let ticket = (parts.method != http::Method::GET).then(|| ctx.in_flight.enter());
    tracing::debug!(%peer, method = %parts.method, path = %parts.uri.path(), "request");
    if let Err(refused) = ctx.guard.check(&parts) {
        return guard::Tracked::response(*refused, ticket);
    }
    if parts.uri.path() != MCP_PATH {
        let refused = guard::refusal(
            http::StatusCode::NOT_FOUND,
            &format!("Not found: MCP is served at `{MCP_PATH}`"),
        );
        return guard::Tracked::response(*refused, ticket);
    }
    let body = if parts.method == http::Method::POST {
        match guard::read_body(&parts, body, MAX_BODY_BYTES, BODY_TIMEOUT).await {
            Ok(b) => b,
            Err(refused) => return guard::Tracked::response(*refused, ticket),
        }
    } else {
        bytes::Bytes::new()
    };
    let primed = priming::client_accepts(&parts, &body);
    let req = hyper::Request::from_parts(parts, http_body_util::Full::new(body));
    let mut response = ctx.service.handle(req).await;
    if !primed {
        response = priming::without_priming(response);
    }
    guard::Tracked::response(response, ticket)
}
