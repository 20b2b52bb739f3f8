//! Newline-delimited framing of the input with a hard limit per message: a line longer than
//! the limit is reported as soon as the limit is passed (with its id when the part read shows
//! one) and the rest of it is skipped as it arrives, never buffered.
use super::scan;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes read from the input at a time.
const CHUNK: usize = 64 * 1024;
/// Line buffer capacity kept between messages; a larger one (after a big message) is freed.
const KEEP_CAPACITY: usize = 256 * 1024;

/// One unit of input.
#[derive(Debug, PartialEq)]
pub(super) enum Frame {
    /// A whole line, without its newline (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line passed `limit` bytes: it is being skipped. `id` is the request id when the part
    /// read before the limit showed it.
    TooLarge { id: Option<serde_json::Value> },
    /// End of input.
    Eof,
}

/// Reads frames from `R`.
pub(super) struct LineReader<R> {
    inner: R,
    chunk: Box<[u8]>,
    start: usize,
    end: usize,
    line: Vec<u8>,
    limit: usize,
    /// Inside a line already reported as too large.
    skipping: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(super) fn new(inner: R, limit: usize) -> Self {
        LineReader {
            inner,
            chunk: vec![0; CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
            line: Vec::new(),
            limit,
            skipping: false,
            eof: false,
        }
    }

    /// The next frame; I/O errors end the input.
    pub(super) async fn next(&mut self) -> Frame {
        if self.line.capacity() > KEEP_CAPACITY {
            self.line = Vec::new();
        }
        loop {
            if self.start == self.end {
                if self.eof {
                    return self.finish();
                }
                match self.inner.read(&mut self.chunk).await {
                    Ok(0) => {
                        self.eof = true;
                        continue;
                    }
                    Ok(n) => {
                        self.start = 0;
                        self.end = n;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        tracing::warn!("cannot read the input: {e}");
                        self.eof = true;
                        continue;
                    }
                }
            }
            let avail = &self.chunk[self.start..self.end];
            let newline = memchr::memchr(b'\n', avail);
            let take = newline.map_or(avail.len(), |i| i);
            let consumed = newline.map_or(avail.len(), |i| i + 1);
            if self.skipping {
                self.start += consumed;
                if newline.is_some() {
                    self.skipping = false;
                }
                continue;
            }
            if self.line.len() + take > self.limit {
                // report now; what is left of the line is skipped as it comes
                let room = self.limit - self.line.len();
                self.line.extend_from_slice(&avail[..room.min(take)]);
                let id = scan::sniff_id(&self.line);
                self.line = Vec::new();
                self.start += consumed;
                self.skipping = newline.is_none();
                return Frame::TooLarge { id };
            }
            self.line.extend_from_slice(&avail[..take]);
            self.start += consumed;
            if newline.is_some() {
                return Frame::Line(self.take_line());
            }
        }
    }

    /// At end of input: a last line without a newline, then `Eof`.
    fn finish(&mut self) -> Frame {
        if self.skipping || self.line.is_empty() {
            self.skipping = false;
            self.line.clear();
            return Frame::Eof;
        }
        Frame::Line(self.take_line())
    }

    fn take_line(&mut self) -> Vec<u8> {
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        let cap = self.line.capacity().min(KEEP_CAPACITY);
        std::mem::replace(&mut self.line, Vec::with_capacity(cap.min(4096)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], limit: usize) -> Vec<Frame> {
        let mut r = LineReader::new(input, limit);
        let mut out = Vec::new();
        loop {
            let f = r.next().await;
            let end = f == Frame::Eof;
            out.push(f);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_and_a_last_line_without_newline() {
        let f = frames(b"a\r\nbc\n\nlast", 100).await;
        assert_eq!(
            f,
            [
                Frame::Line(b"a".to_vec()),
                Frame::Line(b"bc".to_vec()),
                Frame::Line(Vec::new()),
                Frame::Line(b"last".to_vec()),
                Frame::Eof
            ]
        );
    }

    #[tokio::test]
    async fn an_oversized_line_is_reported_once_and_skipped() {
        let mut input = br#"{"id":5,"params":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 300_000));
        input.extend_from_slice(b"\"}\nnext\n");
        let f = frames(&input, 1000).await;
        assert_eq!(
            f,
            [
                Frame::TooLarge {
                    id: Some(serde_json::json!(5))
                },
                Frame::Line(b"next".to_vec()),
                Frame::Eof
            ]
        );
    }
}
