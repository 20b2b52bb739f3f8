//! Tool calls run off the runtime thread on a bounded pool, so that the transport, `ping` and
//! cheap calls are answered at once while heavy queries run, and replies go out as each
//! finishes. Every call gets a time budget and stops early when the client cancels it; a panic
//! becomes an error result.
use super::error_result;
use super::toolset::Ctx;
use super::toolset::{Lane, ToolDef};
use crate::corpus::Shared;
use crate::index::Stop;
use crate::live::LiveStatus;
use rmcp::model::{CallToolResult, JsonObject};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Heavy calls running at once: one per core, at least 2, at most 8.
fn heavy_slots() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8))
}

/// Light calls running at once.
const LIGHT_SLOTS: usize = 4;

/// Test hook: `CONVERSATION_SEARCH_TEST_HOLD_MS` holds every heavy call that long before it
/// runs (still ending early at its time budget or when cancelled), so that black-box tests can
/// have a slow call in flight. Read once.
fn hold() -> Option<Duration> {
    static HOLD: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    *HOLD.get_or_init(|| crate::util::time::millis_from_env("CONVERSATION_SEARCH_TEST_HOLD_MS"))
}

/// Waits out the test hold of a heavy call, or until `stop` says to stop.
fn wait_hold(lane: Lane, stop: &Stop) {
    let Some(hold) = hold().filter(|_| lane == Lane::Heavy) else {
        return;
    };
    let until = Instant::now() + hold;
    while Instant::now() < until && !stop.check() {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The bounded pool.
pub(super) struct Pool {
    heavy: Arc<Semaphore>,
    light: Arc<Semaphore>,
    timeout: Duration,
}

impl Pool {
    /// A pool whose queries stop after `timeout`.
    pub(super) fn new(timeout: Duration) -> Self {
        Pool {
            heavy: Arc::new(Semaphore::new(heavy_slots())),
            light: Arc::new(Semaphore::new(LIGHT_SLOTS)),
            timeout,
        }
    }

    /// Runs `def` with `args` against the current snapshot once a slot is free. `cancelled`
    /// resolves when the client cancels the request: the query is told to stop and the
    /// (unsent) result says so.
    pub(super) async fn run(
        &self,
        shared: &Arc<Shared>,
        live: &Arc<LiveStatus>,
        def: &'static ToolDef,
        args: JsonObject,
        cancelled: impl Future<Output = ()>,
    ) -> CallToolResult {
        tokio::pin!(cancelled);
        let slots = match def.lane {
            Lane::Heavy => &self.heavy,
            Lane::Light => &self.light,
        };
        let permit = tokio::select! {
            p = Arc::clone(slots).acquire_owned() => p.ok(),
            () = &mut cancelled => {
                tracing::info!(tool = def.name, "tool call cancelled by the client before it started");
                return error_result("cancelled by the client");
            }
        };
        let stop = Stop::new(Some(Instant::now() + self.timeout));
        let task = {
            let stop = stop.clone();
            let shared = Arc::clone(shared);
            let live = Arc::clone(live);
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                let started = Instant::now();
                wait_hold(def.lane, &stop);
                let snap = shared.snapshot();
                let ctx = Ctx {
                    snap: &snap,
                    shared: &shared,
                    live: &live,
                    stop: &stop,
                };
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    (def.call)(&ctx, args)
                }));
                let us = started.elapsed().as_micros() as u64;
                if stop.cancelled() {
                    tracing::info!(
                        tool = def.name,
                        us,
                        "tool call cancelled by the client; its work stopped"
                    );
                } else {
                    tracing::debug!(tool = def.name, us, "tool answered");
                }
                out
            })
        };
        let outcome = tokio::select! {
            r = task => r,
            () = &mut cancelled => {
                stop.cancel();
                return error_result("cancelled by the client");
            }
        };
        match outcome {
            Ok(Ok(Ok(value))) => CallToolResult::structured(value),
            Ok(Ok(Err(e))) => error_result(&e.0),
            Ok(Err(_)) | Err(_) => {
                tracing::error!(tool = def.name, "a tool panicked; answering with an error");
                error_result(
                    "internal error while running the tool; the server is still running, please retry or report a bug",
                )
            }
        }
    }
}
