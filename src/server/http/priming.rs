//! SSE priming events (an event with an empty `data:` field, an id and a `retry:` hint, which
//! lets a client resume a broken stream) only for clients whose protocol knows them: 2025-11-25
//! or later. Older clients (MCP SDKs of 2025-06-18 and before, e.g. Gemini CLI's) parse every
//! `data:` field as JSON and fail on the empty one, so rmcp's priming events are dropped from
//! their streams, as the Python SDK does; every `data:` they get is a JSON-RPC message.
use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

type BoxedBody = BoxBody<Bytes, Infallible>;

/// The first protocol version whose clients expect priming events (SEP-1699).
const FIRST_PRIMED: &str = "2025-11-25";

/// Whether the client sending this request negotiated a protocol that knows priming events:
/// the version its `initialize` asks for (the server answers with it, or with a newer one when
/// it does not know it), else its `MCP-Protocol-Version` header. A client that says neither
/// (protocol 2025-03-26 and before) gets none.
pub(super) fn client_accepts(parts: &http::request::Parts, body: &[u8]) -> bool {
    let version = initialize_version(body).or_else(|| {
        parts
            .headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    version.is_some_and(|v| knows_priming(v.trim()))
}

/// Versions are dates (`YYYY-MM-DD`), so they compare as strings once their shape is checked.
fn knows_priming(version: &str) -> bool {
    let shaped = version.len() == FIRST_PRIMED.len()
        && version.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    shaped && version >= FIRST_PRIMED
}

/// `params.protocolVersion` of an `initialize` request (alone or in a batch).
fn initialize_version(body: &[u8]) -> Option<String> {
    // cheap test first: most requests are not an initialize
    if !body.windows(10).any(|w| w == b"initialize") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let messages = match value {
        serde_json::Value::Array(items) => items,
        single => vec![single],
    };
    messages.into_iter().find_map(|m| {
        (m["method"] == "initialize")
            .then(|| m["params"]["protocolVersion"].as_str().map(str::to_owned))
            .flatten()
    })
}

/// `response` as it may go to a client that does not know priming events: an event stream
/// without them; anything else unchanged.
pub(super) fn without_priming(response: http::Response<BoxedBody>) -> http::Response<BoxedBody> {
    let is_stream = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_stream {
        return response;
    }
    response.map(|inner| WithoutPriming { inner }.boxed())
}

/// An event stream body that skips priming events. rmcp writes each event as one frame.
struct WithoutPriming {
    inner: BoxedBody,
}

impl Body for WithoutPriming {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        loop {
            match Pin::new(&mut self.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) if frame.data_ref().is_some_and(|d| is_priming(d)) => {
                }
                other => return other,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // skipping events makes any exact size wrong
        SizeHint::new()
    }
}

/// An SSE event that has `data:` lines and all of them empty: no message, only an id and a
/// retry hint. Comments (keep-alives, `:`) and events with a message are not.
fn is_priming(event: &[u8]) -> bool {
    let mut data_lines = 0;
    for line in event.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(value) = line.strip_prefix(b"data:") {
            if !value.iter().all(u8::is_ascii_whitespace) {
                return false;
            }
            data_lines += 1;
        }
    }
    data_lines > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priming_events_are_told_from_messages_and_comments() {
        assert!(is_priming(b"data: \nid: 0\nretry: 3000\n\n"));
        assert!(is_priming(b"data:\r\nid: 0/1\r\n\r\n"));
        assert!(!is_priming(b"data: {\"jsonrpc\":\"2.0\"}\nid: 1\n\n"));
        assert!(!is_priming(b":\n\n"));
        assert!(!is_priming(b"retry: 3000\n\n"));
    }

    #[test]
    fn only_dated_versions_from_2025_11_25_know_priming() {
        assert!(knows_priming("2025-11-25"));
        assert!(knows_priming("2026-07-28"));
        assert!(!knows_priming("2025-06-18"));
        assert!(!knows_priming("2025-03-26"));
        assert!(!knows_priming("latest"));
        assert!(!knows_priming("9999"));
    }

    #[test]
    fn the_initialize_version_is_read_from_single_and_batched_requests() {
        let one = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
        assert_eq!(initialize_version(one).as_deref(), Some("2025-06-18"));
        let batch = br#"[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}]"#;
        assert_eq!(initialize_version(batch).as_deref(), Some("2025-11-25"));
        let call =
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"initialize"}}"#;
        assert_eq!(initialize_version(call), None);
    }
}
