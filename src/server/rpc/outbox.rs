//! Replies waiting to be written, with the bounds that keep memory flat whatever the client
//! does: the unsent bytes and the requests in flight are counted, and the input is not read
//! while either is over its bound. Replies to one batch are gathered and written as one array.
use super::gate::Phase;
use rmcp::model::{JsonRpcMessage, RequestId, ServerJsonRpcMessage, ServerResult};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

/// Unsent reply bytes above which the input is no longer read.
pub(super) const MAX_UNSENT: usize = 16 << 20;
/// Requests passed on and not answered yet above which the input is no longer read.
pub(super) const MAX_IN_FLIGHT: usize = 64;

/// A batch whose replies are being gathered.
struct Batch {
    waiting: usize,
    replies: Vec<Value>,
}

#[derive(Default)]
struct State {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    /// Requests passed on, by id (a count: a client may reuse an id).
    in_flight: HashMap<RequestId, u32>,
    in_flight_total: usize,
    batch_of: HashMap<RequestId, usize>,
    batches: HashMap<usize, Batch>,
    next_batch: usize,
    /// No more replies will come; the writer stops once the queue is empty.
    closed: bool,
    /// The output is gone: replies are discarded.
    broken: bool,
    writer_done: bool,
}

/// The queue between the server and its output, plus the session's lifecycle phase (read by
/// the input side, moved on by replies to `initialize`).
#[derive(Default)]
pub(super) struct Outbox {
    state: Mutex<State>,
    pub phase: Mutex<Phase>,
    wake_writer: Notify,
    wake_reader: Notify,
    writer_done: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Outbox {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(super) fn phase(&self) -> MutexGuard<'_, Phase> {
        lock(&self.phase)
    }

    /// Waits until the unsent replies and the requests in flight are within their bounds.
    pub(super) async fn room(&self) {
        loop {
            {
                let st = lock(&self.state);
                if (st.bytes <= MAX_UNSENT && st.in_flight_total < MAX_IN_FLIGHT) || st.broken {
                    return;
                }
            }
            self.wake_reader.notified().await;
        }
    }

    /// Notes a request passed on to the server.
    pub(super) fn track(&self, id: &RequestId) {
        let mut st = lock(&self.state);
        *st.in_flight.entry(id.clone()).or_default() += 1;
        st.in_flight_total += 1;
    }

    /// Forgets a cancelled request: no reply comes for it.
    pub(super) fn cancelled(&self, id: &RequestId) {
        let mut st = lock(&self.state);
        untrack(&mut st, id);
        if let Some(n) = st.batch_of.remove(id) {
            let done = st.batches.get_mut(&n).is_some_and(|b| {
                b.waiting -= 1;
                b.waiting == 0
            });
            if let Some(b) = done.then(|| st.batches.remove(&n)).flatten() {
                if !b.replies.is_empty() {
                    push(&mut st, Value::Array(b.replies));
                }
            }
        }
        drop(st);
        self.wake_writer.notify_one();
        self.wake_reader.notify_one();
    }

    /// Opens a batch: the replies to `ids` and the `replies` already made go out together.
    pub(super) fn open_batch(&self, ids: &[RequestId], replies: Vec<Value>) {
        let mut st = lock(&self.state);
        if ids.is_empty() {
            if !replies.is_empty() {
                push(&mut st, Value::Array(replies));
                drop(st);
                self.wake_writer.notify_one();
            }
            return;
        }
        let n = st.next_batch;
        st.next_batch += 1;
        for id in ids {
            st.batch_of.insert(id.clone(), n);
        }
        st.batches.insert(
            n,
            Batch {
                waiting: ids.len(),
                replies,
            },
        );
    }

    /// Queues an error reply made by the transport itself.
    pub(super) fn reply(&self, v: Value) {
        let mut st = lock(&self.state);
        push(&mut st, v);
        drop(st);
        self.wake_writer.notify_one();
    }

    /// Queues a message from the server.
    pub(super) fn deliver(&self, item: ServerJsonRpcMessage) {
        let id = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        self.lifecycle(&item, id.as_ref());
        let null_id = matches!(item, JsonRpcMessage::Error(_))
            && id.is_none()
            && !self.phase().omits_null_id();
        let mut st = lock(&self.state);
        let batch = id.as_ref().and_then(|id| {
            untrack(&mut st, id);
            st.batch_of.remove(id)
        });
        if batch.is_none() && !null_id {
            if let Ok(line) = serde_json::to_vec(&item) {
                push_line(&mut st, line);
            }
        } else {
            let mut value = match serde_json::to_value(&item) {
                Ok(v) => v,
                Err(e) => {
                    tracing::error!("cannot serialize a reply: {e}");
                    return;
                }
            };
            if null_id {
                value["id"] = Value::Null;
            }
            match batch {
                Some(n) => {
                    let done = st.batches.get_mut(&n).is_some_and(|b| {
                        b.replies.push(value);
                        b.waiting -= 1;
                        b.waiting == 0
                    });
                    if let Some(b) = done.then(|| st.batches.remove(&n)).flatten() {
                        push(&mut st, Value::Array(b.replies));
                    }
                }
                None => push(&mut st, value),
            }
        }
        drop(st);
        self.wake_writer.notify_one();
        self.wake_reader.notify_one();
    }

    /// Moves the lifecycle on when `initialize` is answered.
    fn lifecycle(&self, item: &ServerJsonRpcMessage, id: Option<&RequestId>) {
        let mut phase = self.phase();
        let Phase::Initializing(init) = &*phase else {
            return;
        };
        if id != Some(init) {
            return;
        }
        *phase = match item {
            JsonRpcMessage::Response(r) => match &r.result {
                ServerResult::InitializeResult(i) => Phase::Ready(i.protocol_version.to_string()),
                _ => Phase::New,
            },
            _ => Phase::New,
        };
    }

    /// Writes queued lines to `out` until closed and drained.
    pub(super) async fn write_to<W: AsyncWrite + Unpin>(self: Arc<Self>, mut out: W) {
        loop {
            let (line, closed) = {
                let mut st = lock(&self.state);
                let line = st.lines.pop_front();
                if line.is_none() && st.lines.capacity() > 1024 {
                    st.lines.shrink_to_fit();
                }
                (line, st.closed)
            };
            let Some(line) = line else {
                if out.flush().await.is_err() {
                    self.break_output();
                }
                if closed {
                    break;
                }
                self.wake_writer.notified().await;
                continue;
            };
            let len = line.len();
            let failed = out.write_all(&line).await.is_err();
            drop(line);
            {
                let mut st = lock(&self.state);
                st.bytes -= len.min(st.bytes);
            }
            if failed {
                self.break_output();
            }
            self.wake_reader.notify_one();
        }
        lock(&self.state).writer_done = true;
        self.writer_done.notify_waiters();
    }

    /// The output is gone: drop what waits and what comes.
    fn break_output(&self) {
        let mut st = lock(&self.state);
        if !st.broken {
            tracing::info!("the output is closed; replies are dropped");
        }
        st.broken = true;
        st.lines.clear();
        st.bytes = 0;
        drop(st);
        self.wake_reader.notify_one();
    }

    /// No more replies: waits (at most `timeout`) until everything queued is written.
    pub(super) async fn close(&self, timeout: std::time::Duration) {
        {
            let mut st = lock(&self.state);
            st.closed = true;
            if st.writer_done {
                return;
            }
        }
        let done = self.writer_done.notified();
        self.wake_writer.notify_one();
        if lock(&self.state).writer_done {
            return;
        }
        if tokio::time::timeout(timeout, done).await.is_err() {
            tracing::warn!("replies still unsent at exit");
        }
    }
}

fn untrack(st: &mut State, id: &RequestId) {
    if let Some(n) = st.in_flight.get_mut(id) {
        *n -= 1;
        if *n == 0 {
            st.in_flight.remove(id);
        }
        st.in_flight_total -= 1;
    }
}

fn push(st: &mut State, v: Value) {
    if let Ok(line) = serde_json::to_vec(&v) {
        push_line(st, line);
    }
}

fn push_line(st: &mut State, mut line: Vec<u8>) {
    if st.broken {
        return;
    }
    line.push(b'\n');
    st.bytes += line.len();
    st.lines.push_back(line);
}
