//! Every input line is judged here before rmcp sees it, so that nothing that reaches the server
//! goes unanswered: unparsable text, invalid messages, bad parameters, requests outside the
//! session's lifecycle and batches the protocol version does not allow are answered with a
//! JSON-RPC error right away; well-formed messages are passed on.
use super::scan::{self, Step};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId};
use serde_json::{Map, Value, json};

/// Deepest nesting of arrays and objects accepted in a message.
pub(crate) const MAX_DEPTH: usize = 64;

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// The protocol version that still had JSON-RPC batches.
const BATCH_VERSION: &str = "2025-03-26";
/// Request `_meta` keys of the initialize-less lifecycle (protocol 2026-07-28).
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// Requests rmcp parses into a typed variant; one that only parses as a custom request has
/// invalid parameters.
const TYPED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
];

/// Where the session is in its lifecycle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Nothing but `ping`, `server/discover`, `initialize` or a request carrying the
    /// initialize-less metadata is accepted.
    #[default]
    New,
    /// `initialize` was passed on and is not answered yet.
    Initializing(RequestId),
    /// Initialized with this negotiated protocol version.
    Ready(String),
    /// Initialize-less (2026-07-28 and later): every request carries its version.
    Inline(String),
}

impl Phase {
    /// Whether error replies without a readable id omit `id` (2026-07-28) rather than send null.
    pub(crate) fn omits_null_id(&self) -> bool {
        matches!(self, Phase::Inline(v) if v.as_str() >= "2026-07-28")
    }
}

/// What to do with one input message.
#[derive(Debug)]
pub(crate) enum Action {
    Forward(Box<ClientJsonRpcMessage>),
    /// An error reply (a whole JSON-RPC message).
    Reply(Value),
}

/// What to do with one input line.
#[derive(Debug)]
pub(crate) enum Verdict {
    Nothing,
    One(Action),
    /// A JSON-RPC batch (protocol 2025-03-26): the replies go out together as one array.
    Batch(Vec<Action>),
}

/// A JSON-RPC error reply. Without an id the reply says `"id": null`, or leaves `id` out
/// where the session's protocol version says so.
pub(crate) fn error_reply(phase: &Phase, id: Option<Value>, code: i64, message: &str) -> Value {
    let mut v = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    match id {
        Some(id) => v["id"] = id,
        None if phase.omits_null_id() => {}
        None => v["id"] = Value::Null,
    }
    v
}

/// The judge of one line; `phase` is updated as lifecycle messages pass.
pub(crate) fn judge(line: &[u8], phase: &mut Phase) -> Verdict {
    let line = line
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Nothing;
    }
    let reply = |phase: &Phase, id, code, msg: &str| {
        Verdict::One(Action::Reply(error_reply(phase, id, code, msg)))
    };
    if scan::nests_deeper_than(line, MAX_DEPTH) {
        return reply(
            phase,
            scan::sniff_id(line),
            INVALID_REQUEST,
            &format!("Invalid request: JSON nested deeper than {MAX_DEPTH} levels"),
        );
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            if let Some(&at) = scan::lone_surrogates(line).first() {
                let what = scan::path_at(line, at).map_or("a string".to_owned(), |p| name(&p));
                return reply(
                    phase,
                    scan::sniff_id(line),
                    INVALID_PARAMS,
                    &format!(
                        "Invalid params: {what} holds a lone UTF-16 surrogate escape (such as \\ud800), which is not Unicode text; send valid text"
                    ),
                );
            }
            return reply(phase, None, PARSE_ERROR, &format!("Parse error: {e}"));
        }
    };
    match value {
        Value::Array(items) => batch(items, phase),
        Value::Object(obj) => match message(obj, phase, false) {
            Some(a) => Verdict::One(a),
            None => Verdict::Nothing,
        },
        _ => reply(
            phase,
            None,
            INVALID_REQUEST,
            "Invalid request: a JSON-RPC message is a JSON object",
        ),
    }
}

/// How a path into a message is named in an error: the tool argument, or the JSON path.
fn name(path: &[Step]) -> String {
    let keys: Vec<String> = path
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.clone(),
            Step::Index(i) => i.to_string(),
        })
        .collect();
    match keys.as_slice() {
        [p, a, rest @ ..] if p == "params" && a == "arguments" && !rest.is_empty() => {
            format!("argument `{}`", rest.join("."))
        }
        _ => format!("`{}`", keys.join(".")),
    }
}

fn batch(items: Vec<Value>, phase: &mut Phase) -> Verdict {
    let refuse = |phase: &Phase, msg: &str| {
        Verdict::One(Action::Reply(error_reply(
            phase,
            None,
            INVALID_REQUEST,
            msg,
        )))
    };
    match phase.clone() {
        Phase::Ready(v) if v == BATCH_VERSION => {}
        Phase::Ready(v) | Phase::Inline(v) => {
            return refuse(
                phase,
                &format!(
                    "Invalid request: JSON-RPC batches are not part of protocol version {v} (only of {BATCH_VERSION}); send one message per line"
                ),
            );
        }
        Phase::New | Phase::Initializing(_) => {
            return refuse(
                phase,
                "Invalid request: batches are accepted only after initialization (protocol 2025-03-26); `initialize` must be sent alone",
            );
        }
    }
    if items.is_empty() {
        return refuse(phase, "Invalid request: empty batch");
    }
    let actions = items
        .into_iter()
        .filter_map(|item| match item {
            Value::Object(obj) => message(obj, phase, true),
            _ => Some(Action::Reply(error_reply(
                phase,
                None,
                INVALID_REQUEST,
                "Invalid request: a JSON-RPC message is a JSON object",
            ))),
        })
        .collect();
    Verdict::Batch(actions)
}

/// A valid request id: a string or an integer.
fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// Judges one message object. None: dropped without a reply (a notification or a response
/// that cannot be used).
fn message(obj: Map<String, Value>, phase: &mut Phase, in_batch: bool) -> Option<Action> {
    let id = obj.get("id").filter(|id| valid_id(id)).cloned();
    let err = |phase: &Phase, id: Option<Value>, code, msg: String| {
        Some(Action::Reply(error_reply(phase, id, code, &msg)))
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return err(
            phase,
            id,
            INVALID_REQUEST,
            "Invalid request: `jsonrpc` must be \"2.0\"".into(),
        );
    }
    let Some(method) = obj.get("method") else {
        return response(obj);
    };
    let Some(method) = method.as_str().map(str::to_owned) else {
        return err(
            phase,
            id,
            INVALID_REQUEST,
            "Invalid request: `method` must be a string".into(),
        );
    };
    let is_request = obj.contains_key("id");
    if is_request && id.is_none() {
        return err(
            phase,
            None,
            INVALID_REQUEST,
            "Invalid request: `id` must be a string or an integer".into(),
        );
    }
    if let Some(problem) = params_problem(&method, obj.get("params")) {
        return match is_request {
            true => err(phase, id, INVALID_PARAMS, problem),
            false => None,
        };
    }
    if !is_request {
        // notifications before initialization are dropped: rmcp would end the session
        return (*phase != Phase::New).then(|| parse(obj)).flatten();
    }
    if let Some(refusal) = lifecycle(&method, &obj, phase, in_batch) {
        return err(phase, id, INVALID_REQUEST, refusal);
    }
    let msg: ClientJsonRpcMessage = match serde_json::from_value(Value::Object(obj)) {
        Ok(m) => m,
        Err(e) => {
            return err(
                phase,
                id,
                INVALID_PARAMS,
                format!("Invalid params for `{method}`: {e}"),
            );
        }
    };
    if let JsonRpcMessage::Request(r) = &msg {
        if matches!(r.request, ClientRequest::CustomRequest(_)) {
            if TYPED_METHODS.contains(&method.as_str()) {
                return err(
                    phase,
                    id,
                    INVALID_PARAMS,
                    format!("Invalid params for `{method}`; check the method's parameters"),
                );
            }
            return err(
                phase,
                id,
                METHOD_NOT_FOUND,
                format!("Method not found: `{method}`"),
            );
        }
        if method == "initialize" {
            *phase = Phase::Initializing(r.id.clone());
        }
    }
    Some(Action::Forward(Box::new(msg)))
}

/// A response to a request of ours: passed on when well-formed, else dropped (responses are
/// never answered).
fn response(obj: Map<String, Value>) -> Option<Action> {
    let ok = obj.get("id").is_some_and(valid_id)
        && (obj.contains_key("result") != obj.contains_key("error"));
    if !ok {
        tracing::debug!("dropping a malformed response from the client");
        return None;
    }
    parse(obj)
}

fn parse(obj: Map<String, Value>) -> Option<Action> {
    match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(obj)) {
        Ok(m) => Some(Action::Forward(Box::new(m))),
        Err(e) => {
            tracing::debug!("dropping a message rmcp cannot read: {e}");
            None
        }
    }
}

/// What is wrong with a request's `params`, naming the parameter.
fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    let params = match params {
        None | Some(Value::Null) => return None,
        Some(Value::Object(p)) => p,
        Some(other) => {
            return Some(format!(
                "Invalid params: `params` must be an object (got {})",
                kind(other)
            ));
        }
    };
    if method != "tools/call" {
        return None;
    }
    match params.get("name") {
        Some(Value::String(_)) => {}
        None => return Some("Invalid params: `name` (the tool to call) is required".into()),
        Some(other) => {
            return Some(format!(
                "Invalid params: `name` must be a string naming the tool (got {})",
                kind(other)
            ));
        }
    }
    match params.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(other) => Some(format!(
            "Invalid params: `arguments` must be an object of named arguments (got {})",
            kind(other)
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Why a request does not fit the session's lifecycle, if it does not; moves the phase on
/// when the request opens an initialize-less session.
fn lifecycle(
    method: &str,
    obj: &Map<String, Value>,
    phase: &mut Phase,
    in_batch: bool,
) -> Option<String> {
    if method == "initialize" {
        return match phase {
            Phase::New if in_batch => Some("Invalid request: `initialize` must not be part of a batch".into()),
            Phase::New => None,
            Phase::Initializing(_) | Phase::Ready(_) => Some("Invalid request: the session is already initialized; `initialize` is accepted once".into()),
            Phase::Inline(v) => Some(format!("Invalid request: this session runs protocol {v} without `initialize`")),
        };
    }
    if *phase != Phase::New || matches!(method, "ping" | "server/discover") {
        return None;
    }
    let meta = obj
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let version = meta
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str);
    match version {
        // rmcp checks the rest of the metadata and answers a missing part itself
        Some(v) => {
            let known = rmcp::model::ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|k| k.as_str() == v);
            if known && meta.is_some_and(|m| m.contains_key(META_CAPABILITIES)) {
                *phase = Phase::Inline(v.to_owned());
            }
            None
        }
        None => Some(format!(
            "Invalid request: `{method}` before initialization. Send `initialize` first (protocol 2024-11-05 to 2025-11-25), or use protocol 2026-07-28 by putting `{META_VERSION}` and `{META_CAPABILITIES}` in every request's `_meta`"
        )),
    }
}

#[cfg(test)]
mod tests;
