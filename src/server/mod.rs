//! The MCP server: one file per tool under [`tools`], each a thin shell over the corpus. Tool
//! work runs on the blocking pool, so a panic becomes an error result instead of a hung client.
pub mod tools;

use crate::corpus::{Shared, Snapshot};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::{ServerHandler, tool_handler};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::Duration;

/// A problem the caller can fix; becomes an `isError` result `{"error": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

/// How long a tool waits for the first full index build before answering from what is
/// indexed so far (and saying so).
pub const STARTUP_WAIT: Duration = Duration::from_secs(15);

/// The JSON schema of a tool's arguments.
pub fn input_schema<T: rmcp::schemars::JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_default()
}

/// The JSON schema of a tool's result.
pub fn output_schema<T: rmcp::schemars::JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_output::<T>()
}

/// An error result whose text is `{"error": "..."}`.
pub fn error_result(msg: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(
        serde_json::json!({ "error": msg }).to_string(),
    )])
}

/// Parses a tool's arguments; a type mismatch becomes a sentence naming the problem.
pub fn parse_args<P: DeserializeOwned>(args: JsonObject) -> Result<P, ToolError> {
    serde_json::from_value(serde_json::Value::Object(args)).map_err(|e| {
        ToolError::new(format!(
            "Invalid arguments: {e}. Check the tool's input schema."
        ))
    })
}

#[derive(Clone)]
pub struct ConversationServer {
    shared: Arc<Shared>,
    tool_router: ToolRouter<Self>,
}

impl ConversationServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        let tool_router = Self::search_router()
            + Self::list_router()
            + Self::read_turn_router()
            + Self::read_conversation_router()
            + Self::status_router()
            + Self::file_history_router();
        Self {
            shared,
            tool_router,
        }
    }

    /// Runs `f` on the blocking pool against the current snapshot (waiting a bounded time for
    /// the first full build) and converts the outcome into a tool result.
    async fn run<P, R>(
        &self,
        args: JsonObject,
        f: fn(&Snapshot, P) -> Result<R, ToolError>,
    ) -> CallToolResult
    where
        P: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
    {
        self.run_with(args, f, STARTUP_WAIT).await
    }

    /// Like [`Self::run`] but waiting at most `wait` for the first full build.
    async fn run_with<P, R>(
        &self,
        args: JsonObject,
        f: fn(&Snapshot, P) -> Result<R, ToolError>,
        wait: Duration,
    ) -> CallToolResult
    where
        P: DeserializeOwned + Send + 'static,
        R: Serialize + Send + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let job = tokio::task::spawn_blocking(move || -> Result<serde_json::Value, ToolError> {
            let params: P = parse_args(args)?;
            let snap = if wait.is_zero() {
                shared.snapshot()
            } else {
                shared.wait_complete(wait)
            };
            let out = f(&snap, params)?;
            serde_json::to_value(out).map_err(|e| ToolError::new(format!("internal error: {e}")))
        });
        match job.await {
            Ok(Ok(value)) => CallToolResult::structured(value),
            Ok(Err(e)) => error_result(&e.0),
            Err(join) => {
                tracing::error!(error = %join, "tool panicked");
                error_result(
                    "internal error while running the tool; the server is still running, please retry or report a bug",
                )
            }
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ConversationServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "conversation-search",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Search your own past coding-agent sessions. Start with search_conversations \
                 (stacked keywords, exact identifiers), then read_turn / read_conversation for \
                 the full text. list_conversations shows recent sessions; index_status tells an \
                 empty index from no match.",
            )
    }
}

/// Serves MCP over stdin/stdout until the client disconnects.
pub async fn serve_stdio(shared: Arc<Shared>) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let service = ConversationServer::new(shared)
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}
