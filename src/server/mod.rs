//! The MCP server: one file per tool under [`tools`], each a thin shell over the corpus. Tool
//! work runs on the blocking pool, so a panic becomes an error result instead of a hung client.
pub mod http;
mod stdio;
pub mod tools;

use crate::corpus::{Shared, Snapshot};
use crate::live::LiveStatus;
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
pub fn parse_args<P: DeserializeOwned + rmcp::schemars::JsonSchema + 'static>(
    args: JsonObject,
) -> Result<P, ToolError> {
    check_arg_types(&args, &input_schema::<P>())?;
    serde_json::from_value(serde_json::Value::Object(args)).map_err(|e| {
        ToolError::new(format!(
            "Invalid arguments: {e}. Check the tool's input schema."
        ))
    })
}

/// JSON type names a value satisfies.
fn json_types(v: &serde_json::Value) -> &'static [&'static str] {
    use serde_json::Value;
    match v {
        Value::Null => &["null"],
        Value::Bool(_) => &["boolean"],
        Value::Number(n) if n.is_i64() || n.is_u64() => &["integer", "number"],
        Value::Number(_) => &["number"],
        Value::String(_) => &["string"],
        Value::Array(_) => &["array"],
        Value::Object(_) => &["object"],
    }
}

/// Checks each argument against the type its schema property declares, so that a mistake names
/// the parameter ("`limit` must be an integer (got "ten")") and required ones are present.
fn check_arg_types(args: &JsonObject, schema: &JsonObject) -> Result<(), ToolError> {
    let props = schema.get("properties").and_then(|p| p.as_object());
    for name in schema
        .get("required")
        .and_then(|r| r.as_array())
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str())
    {
        if !args.contains_key(name) {
            return Err(ToolError::new(format!("`{name}` is required.")));
        }
    }
    for (name, value) in args {
        let Some(prop) = props.and_then(|p| p.get(name)) else {
            continue;
        };
        let allowed: Vec<&str> = match prop.get("type") {
            Some(serde_json::Value::String(t)) => vec![t.as_str()],
            Some(serde_json::Value::Array(ts)) => ts.iter().filter_map(|t| t.as_str()).collect(),
            _ => continue,
        };
        if !json_types(value).iter().any(|t| allowed.contains(t)) {
            let expected: Vec<&str> = allowed.iter().copied().filter(|t| *t != "null").collect();
            let shown = crate::transcript::tools::cut_chars(&value.to_string(), 60);
            return Err(ToolError::new(format!(
                "`{name}` must be {} (got {shown}).",
                match expected.as_slice() {
                    ["integer"] => "an integer".to_owned(),
                    ["string"] => "a string".to_owned(),
                    ["boolean"] => "true or false".to_owned(),
                    other => format!("of type {}", other.join(" or ")),
                }
            )));
        }
    }
    Ok(())
}

#[derive(Clone)]
pub struct ConversationServer {
    shared: Arc<Shared>,
    live: Arc<LiveStatus>,
    tool_router: ToolRouter<Self>,
}

impl ConversationServer {
    pub fn new(shared: Arc<Shared>, live: Arc<LiveStatus>) -> Self {
        let tool_router = Self::search_router()
            + Self::list_router()
            + Self::read_turn_router()
            + Self::read_conversation_router()
            + Self::status_router()
            + Self::file_history_router()
            + Self::recent_context_router();
        Self {
            shared,
            live,
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
        P: DeserializeOwned + rmcp::schemars::JsonSchema + Send + 'static,
        R: Serialize + Send + 'static,
    {
        self.run_with(args, f, STARTUP_WAIT, false).await
    }

    /// Like [`Self::run`], always on the blocking pool (tools that read transcript files).
    async fn run_blocking<P, R>(
        &self,
        args: JsonObject,
        f: fn(&Snapshot, P) -> Result<R, ToolError>,
    ) -> CallToolResult
    where
        P: DeserializeOwned + rmcp::schemars::JsonSchema + Send + 'static,
        R: Serialize + Send + 'static,
    {
        self.run_with(args, f, STARTUP_WAIT, true).await
    }

    /// Like [`Self::run`] but waiting at most `wait` for the first full build; `blocking` runs
    /// the work on the blocking pool even when the index is complete.
    async fn run_with<P, R, F>(
        &self,
        args: JsonObject,
        f: F,
        wait: Duration,
        blocking: bool,
    ) -> CallToolResult
    where
        P: DeserializeOwned + rmcp::schemars::JsonSchema + Send + 'static,
        R: Serialize + Send + 'static,
        F: FnOnce(&Snapshot, P) -> Result<R, ToolError> + Send + 'static,
    {
        let work =
            move |snap: &Snapshot, args: JsonObject| -> Result<serde_json::Value, ToolError> {
                let started = std::time::Instant::now();
                let params: P = parse_args(args)?;
                let out = f(snap, params)?;
                let value = serde_json::to_value(out)
                    .map_err(|e| ToolError::new(format!("internal error: {e}")));
                tracing::debug!(us = started.elapsed().as_micros() as u64, "tool answered");
                value
            };
        let current = self.shared.snapshot();
        let outcome = if (current.complete || wait.is_zero()) && !blocking {
            // the common case: answer on this task (queries take well under a millisecond);
            // a panic is caught here and becomes an error result
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&current, args)))
                .map_err(|_| ())
        } else {
            // the first build is still running: wait for it (bounded) off the async threads
            let shared = Arc::clone(&self.shared);
            tokio::task::spawn_blocking(move || work(&shared.wait_complete(wait), args))
                .await
                .map_err(|_| ())
        };
        match outcome {
            Ok(Ok(value)) => CallToolResult::structured(value),
            Ok(Err(e)) => error_result(&e.0),
            Err(()) => {
                tracing::error!("a tool panicked; answering with an error");
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

    // Neither prompts nor resources are declared, so their lists are unknown methods (rmcp's
    // defaults would answer empty lists, which reads as support without the capability).
    async fn list_prompts(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, rmcp::ErrorData> {
        Err(rmcp::ErrorData::method_not_found::<
            rmcp::model::ListPromptsRequestMethod,
        >())
    }

    async fn list_resources(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, rmcp::ErrorData> {
        Err(rmcp::ErrorData::method_not_found::<
            rmcp::model::ListResourcesRequestMethod,
        >())
    }

    async fn list_resource_templates(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, rmcp::ErrorData> {
        Err(rmcp::ErrorData::method_not_found::<
            rmcp::model::ListResourceTemplatesRequestMethod,
        >())
    }
}

/// Serves MCP over stdin/stdout until the client disconnects.
pub async fn serve_stdio(shared: Arc<Shared>, live: Arc<LiveStatus>) -> anyhow::Result<()> {
    match stdio::pipes() {
        Some(io) => serve_on(shared, live, io).await,
        None => serve_on(shared, live, rmcp::transport::stdio()).await,
    }
}

async fn serve_on<R, W>(
    shared: Arc<Shared>,
    live: Arc<LiveStatus>,
    io: (R, W),
) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    use rmcp::ServiceExt;
    let service = ConversationServer::new(shared, live).serve(io).await?;
    service.waiting().await?;
    Ok(())
}
