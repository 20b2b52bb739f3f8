//! The MCP server: one file per tool under [`tools`], each a thin shell over the corpus. The
//! transport ([`rpc`]) answers every request that reaches it; tool calls run on a bounded pool
//! ([`pool`]) so that nothing waits behind a heavy query.
pub(crate) mod choice;
pub(crate) mod http;
mod pool;
pub(crate) mod rpc;
pub(crate) mod schema;
mod stdio;
pub(crate) mod tools;
pub(crate) mod toolset;

use crate::corpus::Shared;
use crate::live::LiveStatus;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, ErrorData, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use std::sync::Arc;
use std::time::Duration;

/// A problem the caller can fix; becomes an `isError` result `{"error": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ToolError(pub String);

impl ToolError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

/// The JSON schema of a tool's arguments, as schemars makes it (see [`schema`]).
pub(crate) fn input_schema<T: rmcp::schemars::JsonSchema + 'static>() -> Arc<rmcp::model::JsonObject>
{
    rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_default()
}

/// The JSON schema of a tool's result, as schemars makes it (see [`schema`]).
pub(crate) fn output_schema<T: rmcp::schemars::JsonSchema + 'static>()
-> Arc<rmcp::model::JsonObject> {
    rmcp::handler::server::common::schema_for_output::<T>()
}

/// An error result whose text is `{"error": "..."}`.
pub(crate) fn error_result(msg: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(
        serde_json::json!({ "error": msg }).to_string(),
    )])
}

/// The server instructions: short, and written for hosts that hide MCP tools until a tool
/// search matches them (Claude Code), so they name what the tools are for.
const INSTRUCTIONS: &str = "conversation-search: full-text search (BM25) over your past \
coding-agent sessions and their transcripts (Claude Code, Codex, Gemini CLI, Cursor, OpenCode \
and more): earlier conversations, previous sessions, chat history, what was discussed, decided, \
tried, fixed or run before, and which turns read or edited a file. At the start of a session, \
recent_context says where the last sessions of this project left off. Search with \
search_conversations (stack distinctive keywords and exact identifiers: error codes, function \
names, paths, flags; scope=project keeps this project only); read a hit in full with read_turn, \
or the turns around it with read_conversation. list_conversations lists recent sessions; \
find_file_history lists the turns that touched a file; index_status tells an empty or \
still-building index from no match. Every result is bounded by max_chars and says how to page \
on (next_offset, char_offset). While the first index build runs, answers are partial and say \
complete: false.";

#[derive(Clone)]
pub(crate) struct ConversationServer {
    shared: Arc<Shared>,
    live: Arc<LiveStatus>,
    pool: Arc<pool::Pool>,
}

impl ConversationServer {
    /// A server over `shared` (what is indexed) and `live` (what the indexer is doing) whose
    /// queries stop after `query_timeout`.
    pub(crate) fn new(shared: Arc<Shared>, live: Arc<LiveStatus>, query_timeout: Duration) -> Self {
        Self {
            shared,
            live,
            pool: Arc::new(pool::Pool::new(query_timeout)),
        }
    }
}

impl ServerHandler for ConversationServer {
    fn get_info(&self) -> ServerConfig {
        // Prompts and resources are declared because their lists are answered (empty): the
        // capabilities say what is served, and hosts that probe them get a plain answer.
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_resources()
                .enable_tools()
                .build(),
        )
        .with_server_info(Implementation::new(
            "conversation-search",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<rmcp::RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::listed().to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::listed().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<rmcp::RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(def) = tools::find(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "Unknown tool `{}`; the tools are {}",
                    tools::budget::clip(&request.name, tools::budget::ECHO_CHARS),
                    tools::names()
                ),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        let result = self
            .pool
            .run(&self.shared, &self.live, def, args, context.ct.cancelled())
            .await;
        Ok(result.into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<rmcp::RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: `{}`", request.method),
            None,
        ))
    }

    // Prompts and resources: none are served. Hosts probe the lists (Qwen Code on every
    // connect): they get empty lists, logged at debug level, not a method-not-found error that
    // rmcp would log as a warning on every connect; asking for one by name is an invalid
    // parameter that names it (SEP-2164: `data.uri` for a resource).
    async fn list_prompts(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, rmcp::ErrorData> {
        tracing::debug!("prompts/list: no prompts are served");
        Ok(rmcp::model::ListPromptsResult::default())
    }

    async fn list_resources(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, rmcp::ErrorData> {
        tracing::debug!("resources/list: no resources are served");
        Ok(rmcp::model::ListResourcesResult::default())
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, rmcp::ErrorData> {
        Err(ErrorData::invalid_params(
            format!(
                "Unknown prompt `{}`: this server serves no prompts, only tools ({})",
                tools::budget::clip(&request.name, tools::budget::ECHO_CHARS),
                tools::names()
            ),
            None,
        ))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, rmcp::ErrorData> {
        Err(ErrorData::invalid_params(
            format!(
                "Resource not found: `{}`; this server serves no resources, only tools ({})",
                tools::budget::clip(&request.uri, tools::budget::ECHO_CHARS),
                tools::names()
            ),
            Some(serde_json::json!({ "uri": request.uri })),
        ))
    }

    async fn list_resource_templates(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, rmcp::ErrorData> {
        tracing::debug!("resources/templates/list: no resources are served");
        Ok(rmcp::model::ListResourceTemplatesResult::default())
    }
}

/// Serves MCP over stdin/stdout until the client disconnects; queries stop after
/// `query_timeout`.
pub(crate) async fn serve_stdio(
    shared: Arc<Shared>,
    live: Arc<LiveStatus>,
    query_timeout: Duration,
) -> anyhow::Result<()> {
    let server = ConversationServer::new(shared, live, query_timeout);
    let (wire, flush) = match stdio::pipes() {
        Some((r, w)) => rpc::wire(r, w),
        None => rpc::wire(tokio::io::stdin(), tokio::io::stdout()),
    };
    let served = serve_on(server, wire).await;
    flush.done().await;
    served
}

async fn serve_on(server: ConversationServer, wire: rpc::Wire) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    use rmcp::service::ServerInitializeError;
    let service = match server.serve(wire).await {
        Ok(s) => s,
        // the client left before a session began: nothing went wrong here
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    service.waiting().await?;
    Ok(())
}
