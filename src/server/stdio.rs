//! Stdin and stdout for the MCP transport, read and written on the runtime thread itself.
//!
//! `tokio::io::stdin()`/`stdout()` hand every read and write to a blocking-pool thread and
//! back, which costs tens of microseconds per message: more than a search. When both ends are
//! pipes or sockets (how MCP clients start servers), they are switched to non-blocking mode and
//! driven by epoll through [`AsyncFd`] instead; the original mode is restored on drop. Anything
//! else (a terminal, a file) falls back to tokio's handles.
//!
//! Unsafe code here (one of the five modules that allow it; `Cargo.toml` lists them): borrowing
//! the process's standard descriptors as `File` / `UnixStream` without taking ownership, and
//! registering them with epoll. Each block says why it is sound.
#![allow(unsafe_code)]
use std::fs::File;
use std::io::{self, Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A borrowed standard descriptor (never closed by us).
struct Fd(RawFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

impl Fd {
    /// The descriptor as a `File` that is not closed when dropped.
    fn file(&self) -> ManuallyDrop<File> {
        // SAFETY: fds 0 and 1 stay open for the life of the process; ManuallyDrop keeps the
        // File from closing them.
        ManuallyDrop::new(unsafe { File::from_raw_fd(self.0) })
    }

    fn is_pipe_or_socket(&self) -> bool {
        self.file()
            .metadata()
            .map(|m| m.file_type().is_fifo() || m.file_type().is_socket())
            .unwrap_or(false)
    }

    /// `ioctl(FIONBIO)`, which std exposes on sockets but which works on any descriptor.
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        // SAFETY: as in `file`; the UnixStream is only used for the ioctl and never closed.
        let s = ManuallyDrop::new(unsafe { UnixStream::from_raw_fd(self.0) });
        s.set_nonblocking(on)
    }
}

/// Registers `fd` with the runtime's reactor in non-blocking mode.
fn register(fd: RawFd) -> io::Result<AsyncFd<Fd>> {
    let fd = Fd(fd);
    fd.set_nonblocking(true)?;
    // SAFETY: fds 0 and 1 are open for the life of the process and `Fd` always returns the
    // same descriptor.
    unsafe { AsyncFd::register(fd) }.map_err(|e| e.into_parts().1)
}

/// Non-blocking stdin.
pub(super) struct PipeIn(AsyncFd<Fd>);
/// Non-blocking stdout.
pub(super) struct PipeOut(AsyncFd<Fd>);

impl Drop for PipeIn {
    fn drop(&mut self) {
        let _ = self.0.get_ref().set_nonblocking(false);
    }
}

impl Drop for PipeOut {
    fn drop(&mut self) {
        let _ = self.0.get_ref().set_nonblocking(false);
    }
}

/// Stdin and stdout driven by the reactor, when both are pipes or sockets. Must be called
/// inside the runtime.
pub(super) fn pipes() -> Option<(PipeIn, PipeOut)> {
    if !(Fd(0).is_pipe_or_socket() && Fd(1).is_pipe_or_socket()) {
        return None;
    }
    let input = match register(0) {
        Ok(fd) => PipeIn(fd),
        Err(e) => {
            let _ = Fd(0).set_nonblocking(false);
            tracing::debug!("stdin stays blocking ({e})");
            return None;
        }
    };
    match register(1) {
        Ok(fd) => Some((input, PipeOut(fd))),
        Err(e) => {
            // dropping `input` restores stdin
            let _ = Fd(1).set_nonblocking(false);
            tracing::debug!("stdout stays blocking ({e})");
            None
        }
    }
}

impl AsyncRead for PipeIn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match guard.try_io(|fd| (&*fd.get_ref().file()).read(unfilled)) {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for PipeOut {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.0.poll_write_ready(cx))?;
            match guard.try_io(|fd| (&*fd.get_ref().file()).write(data)) {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
