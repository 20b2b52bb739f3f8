//! The checks every HTTP request passes before rmcp sees it: its `Origin` (DNS-rebinding
//! protection), its bearer token when one is configured, and its body (size and time limits);
//! plus the in-flight count the graceful shutdown waits on.
use super::HttpError;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use subtle::ConstantTimeEq;

type BoxedBody = BoxBody<Bytes, Infallible>;
/// An error response, boxed (it is large and only on the refusing path).
pub(super) type Refusal = Box<http::Response<BoxedBody>>;

/// The secret clients send as `Authorization: Bearer <token>`.
pub(crate) struct Token(Box<[u8]>);

impl Token {
    /// Reads the token from `path`: its content without surrounding whitespace, at least 16
    /// visible ASCII characters (what an HTTP header can carry unchanged).
    pub(crate) fn read(path: &Path) -> Result<Self, HttpError> {
        let text = std::fs::read_to_string(path).map_err(|source| HttpError::TokenUnreadable {
            path: path.to_owned(),
            source,
        })?;
        let token = text.trim();
        if token.len() < 16 || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(HttpError::TokenInvalid(path.to_owned()));
        }
        warn_if_readable_by_others(path);
        Ok(Self(token.as_bytes().into()))
    }

    /// Whether `Authorization` carries this token. The comparison takes the same time wherever
    /// the first difference is (`subtle`), so timing does not reveal a prefix; only the length
    /// can show, which a long random token makes worthless to know.
    fn accepts(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some(value) = authorization.map(HeaderValue::as_bytes) else {
            return false;
        };
        let Some((scheme, presented)) = value.split_first_chunk::<7>() else {
            return false;
        };
        scheme.eq_ignore_ascii_case(b"Bearer ") && bool::from(presented.ct_eq(&self.0))
    }
}

fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "the token file `{}` can be read by other users; `chmod 600` it",
                path.display()
            );
        }
    }
}

/// Origin and token checks for one listener.
pub(super) struct Guard {
    token: Option<Token>,
    /// The non-loopback address bound with `--allow-remote`, whose own origin is accepted too.
    remote: Option<SocketAddr>,
}

impl Guard {
    pub(super) fn new(token: Option<Token>, remote: Option<SocketAddr>) -> Self {
        Self { token, remote }
    }

    pub(super) fn remote(&self) -> bool {
        self.remote.is_some()
    }

    /// 403 for a foreign `Origin`, 401 for a missing or wrong token.
    pub(super) fn check(&self, parts: &http::request::Parts) -> Result<(), Refusal> {
        if let Some(origin) = parts.headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !origin_allowed(origin, self.remote) {
                tracing::warn!(
                    "refused a request from origin `{origin}` (only loopback origins may call)"
                );
                return Err(refusal(
                    StatusCode::FORBIDDEN,
                    &format!(
                        "Forbidden: origin `{origin}` is not allowed; only pages served from \
                         localhost may call this server"
                    ),
                ));
            }
        }
        if let Some(token) = &self.token {
            if !token.accepts(parts.headers.get(header::AUTHORIZATION)) {
                let mut r = refusal(
                    StatusCode::UNAUTHORIZED,
                    "Unauthorized: send `Authorization: Bearer <token>` with the token from the \
                     server's --token-file",
                );
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"conversation-search\""),
                );
                return Err(r);
            }
        }
        Ok(())
    }
}

/// Whether a browser `Origin` may call: `http(s)://` with a loopback host (`localhost`,
/// `127.0.0.0/8`, `[::1]`) and any port, or the remote address the server listens on. A
/// DNS-rebinding page has its attacker's host name as origin, so it never matches; a page
/// served from loopback is local software already. `null` (sandboxed or file pages) is refused.
pub(super) fn origin_allowed(origin: &str, remote: Option<SocketAddr>) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    if authority.contains(['/', '@', '?', '#']) {
        return false;
    }
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            if port.parse::<u16>().is_err() {
                return false;
            }
            host
        }
        _ => authority,
    };
    let loopback = host == "localhost"
        || host == "[::1]"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    loopback || remote.is_some_and(|addr| authority == addr.to_string())
}

/// An error response whose body is a JSON-RPC error without an id (as the transport suggests)
/// whose message says what was wrong.
pub(super) fn refusal(status: StatusCode, message: &str) -> Refusal {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32600, "message": message },
    });
    let mut r = http::Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Box::new(r)
}

/// Reads a request body of at most `limit` bytes within `timeout`: 413 beyond the limit
/// (at once when `Content-Length` says so), 408 when the client is too slow.
pub(super) async fn read_body(
    parts: &http::request::Parts,
    body: Incoming,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, Refusal> {
    let too_large = || {
        let mut r = refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("Payload too large: request bodies are limited to {limit} bytes"),
        );
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        r
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(timeout, Limited::new(body, limit).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err(refusal(
            StatusCode::BAD_REQUEST,
            &format!("Bad request: cannot read the request body: {e}"),
        )),
        Err(_) => {
            let mut r = refusal(
                StatusCode::REQUEST_TIMEOUT,
                &format!("Request timeout: the body did not arrive within {timeout:?}"),
            );
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(r)
        }
    }
}

/// Requests that expect an answer and have not had it in full yet.
#[derive(Default, Clone)]
pub(super) struct InFlight(Arc<(AtomicUsize, tokio::sync::Notify)>);

impl InFlight {
    /// Counts a request until the returned ticket is dropped.
    pub(super) fn enter(&self) -> Ticket {
        self.0.0.fetch_add(1, Ordering::SeqCst);
        Ticket(self.clone())
    }

    pub(super) fn count(&self) -> usize {
        self.0.0.load(Ordering::SeqCst)
    }

    /// Returns once no request is in flight.
    pub(super) async fn idle(&self) {
        loop {
            let notified = self.0.1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.count() == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// One request in flight (see [`InFlight::enter`]).
pub(super) struct Ticket(InFlight);

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.0.0.0.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.0.1.notify_waiters();
        }
    }
}

/// A response body that holds its request's [`Ticket`] until it has been sent in full (or
/// dropped with its connection).
pub(super) struct Tracked {
    inner: BoxedBody,
    _ticket: Option<Ticket>,
}

impl Tracked {
    pub(super) fn response(
        r: http::Response<BoxedBody>,
        ticket: Option<Ticket>,
    ) -> http::Response<Self> {
        r.map(|inner| Self {
            inner,
            _ticket: ticket,
        })
    }
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_and_foreign_ones_do_not() {
        for ok in [
            "http://localhost:7102",
            "http://127.0.0.1:3000",
            "https://LOCALHOST",
            "http://[::1]:8080",
            "http://127.1.2.3",
        ] {
            assert!(origin_allowed(ok, None), "{ok}");
        }
        for bad in [
            "null",
            "http://evil.example",
            "http://localhost.evil.example:7102",
            "http://127.0.0.1.evil.example",
            "http://evil.example/127.0.0.1",
            "http://user@localhost",
            "file://",
            "ws://localhost:7102",
            "http://localhost:notaport",
            "",
        ] {
            assert!(!origin_allowed(bad, None), "{bad}");
        }
    }

    #[test]
    fn the_remote_address_is_an_allowed_origin_only_when_bound() {
        let addr: SocketAddr = "192.168.1.5:7102".parse().unwrap();
        assert!(origin_allowed("http://192.168.1.5:7102", Some(addr)));
        assert!(!origin_allowed("http://192.168.1.5:7102", None));
        assert!(!origin_allowed("http://192.168.1.6:7102", Some(addr)));
    }

    #[test]
    fn the_token_must_match_exactly_after_bearer() {
        let token = Token(b"0123456789abcdef".as_slice().into());
        let h = |s: &'static str| HeaderValue::from_static(s);
        assert!(token.accepts(Some(&h("Bearer 0123456789abcdef"))));
        assert!(token.accepts(Some(&h("bearer 0123456789abcdef"))));
        assert!(!token.accepts(Some(&h("Bearer 0123456789abcdeX"))));
        assert!(!token.accepts(Some(&h("Bearer 0123456789abcde"))));
        assert!(!token.accepts(Some(&h("Basic 0123456789abcdef"))));
        assert!(!token.accepts(Some(&h("Bearer"))));
        assert!(!token.accepts(None));
    }
}
