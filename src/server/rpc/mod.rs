//! The JSON-RPC transport over stdin/stdout, in front of rmcp: input is framed with a size
//! limit and judged line by line ([`gate`]) so that every request that reaches the server is
//! answered, replies are queued ([`outbox`]) and written as each is ready, and the input is not
//! read while unsent replies or unanswered requests pile up.
mod frame;
pub(crate) mod gate;
mod outbox;
mod scan;

use gate::{Action, Verdict};
use outbox::Outbox;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

/// Largest request accepted, in bytes.
pub(crate) const MAX_REQUEST_BYTES: usize = 4 << 20;
/// How long an exiting server keeps writing replies the client does not read.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// The transport handed to rmcp.
pub(crate) struct Wire {
    rx: mpsc::Receiver<ClientJsonRpcMessage>,
    out: Arc<Outbox>,
}

/// Starts reading `input` and writing `output` on the runtime; returns the transport and a
/// handle to flush the output at exit (see [`Flush::done`]).
pub(crate) fn wire<R, W>(input: R, output: W) -> (Wire, Flush)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let out = Outbox::new();
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(Arc::clone(&out).write_to(output));
    tokio::spawn(read_loop(input, Arc::clone(&out), tx));
    let flush = Flush(Arc::clone(&out));
    (Wire { rx, out }, flush)
}

/// Flushes the output when the server is done.
pub(crate) struct Flush(Arc<Outbox>);

impl Flush {
    pub(crate) async fn done(self) {
        self.0.close(FLUSH_TIMEOUT).await;
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    input: R,
    out: Arc<Outbox>,
    tx: mpsc::Sender<ClientJsonRpcMessage>,
) {
    let mut lines = frame::LineReader::new(input, MAX_REQUEST_BYTES);
    loop {
        out.room().await;
        let line = match lines.next().await {
            frame::Frame::Eof => return,
            frame::Frame::TooLarge { id } => {
                let phase = out.phase().clone();
                out.reply(gate::error_reply(
                    &phase,
                    id,
                    gate::INVALID_REQUEST,
                    &format!(
                        "Invalid request: larger than {MAX_REQUEST_BYTES} bytes; the rest of it is skipped"
                    ),
                ));
                continue;
            }
            frame::Frame::Line(l) => l,
        };
        let verdict = gate::judge(&line, &mut out.phase());
        drop(line);
        let actions = match verdict {
            Verdict::Nothing => continue,
            Verdict::One(a) => vec![a],
            Verdict::Batch(actions) => {
                let (mut ids, mut replies) = (Vec::new(), Vec::new());
                for a in &actions {
                    match a {
                        Action::Forward(m) => {
                            if let JsonRpcMessage::Request(r) = m.as_ref() {
                                ids.push(r.id.clone());
                            }
                        }
                        Action::Reply(v) => replies.push(v.clone()),
                    }
                }
                out.open_batch(&ids, replies);
                actions
                    .into_iter()
                    .filter(|a| matches!(a, Action::Forward(_)))
                    .collect()
            }
        };
        for action in actions {
            match action {
                Action::Reply(v) => out.reply(v),
                Action::Forward(m) => {
                    match m.as_ref() {
                        JsonRpcMessage::Request(r) => out.track(&r.id),
                        JsonRpcMessage::Notification(n) => {
                            if let ClientNotification::CancelledNotification(c) = &n.notification {
                                if let Some(id) = &c.params.request_id {
                                    out.cancelled(id);
                                }
                            }
                        }
                        _ => {}
                    }
                    if tx.send(*m).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

impl Transport<RoleServer> for Wire {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.out.deliver(item);
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.rx.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.rx.close();
        Ok(())
    }
}
