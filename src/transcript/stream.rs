//! Reading back a byte range of a line-oriented transcript in bounded memory: lines are read
//! through a small buffer, and a line longer than [`LONG_LINE`] (a record holding a huge tool
//! result) is streamed through a JSON scanner that keeps the record's structure and every short
//! value but cuts each long string to its head, so the bytes of a 200 MB tool output are
//! skipped without ever being held. Parsers never look past the head of such a string (tool
//! output is not read at all); a prompt or reply cut this way ends with a marked note.
use super::LineParser;
use memchr::{memchr, memchr2};
use std::io::{BufRead, BufReader, Read};

/// Lines up to this long are fed as written.
pub(crate) const LONG_LINE: usize = 2 << 20;
/// In a longer line, the bytes kept of each string (its head).
pub(crate) const STRING_KEEP: usize = 1 << 20;
/// Once this much of a long line is kept, later strings keep only [`SMALL_KEEP`] bytes.
pub(crate) const LINE_KEEP: usize = 4 << 20;
/// The bytes kept of a string once [`LINE_KEEP`] is reached.
pub(crate) const SMALL_KEEP: usize = 1 << 10;
/// A line whose kept form still exceeds this (millions of small values) is not read.
pub(crate) const LINE_MAX: usize = 8 << 20;

const READ_BUFFER: usize = 64 << 10;

/// Why a range could not be fed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StreamError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(
        "the record at byte {offset} holds more than {} MiB besides its long strings",
        LINE_MAX >> 20
    )]
    TooLarge { offset: u64 },
}

/// Feeds every line of `reader`, whose first byte is byte `start` of the file, to `parser`
/// (each without its `\n` and `\r`; a last line without a newline too). Memory stays bounded
/// by [`LONG_LINE`] plus [`LINE_MAX`], whatever the lines hold.
pub(crate) fn feed_lines(
    parser: &mut dyn LineParser,
    reader: impl Read,
    start: u64,
) -> Result<(), StreamError> {
    let mut r = BufReader::with_capacity(READ_BUFFER, reader);
    let mut line: Vec<u8> = Vec::new();
    let mut shrink: Option<Shrinker> = None;
    let mut offset = start;
    let mut raw_len = 0u64;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let (chunk, done) = match memchr(b'\n', buf) {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        match shrink.as_mut() {
            Some(s) => s.push(chunk, &mut line),
            None => {
                line.extend_from_slice(chunk);
                if line.len() > LONG_LINE {
                    let raw = std::mem::take(&mut line);
                    let mut s = Shrinker::default();
                    s.push(&raw, &mut line);
                    shrink = Some(s);
                }
            }
        }
        if line.len() > LINE_MAX {
            return Err(StreamError::TooLarge { offset });
        }
        let n = chunk.len() + usize::from(done);
        r.consume(n);
        raw_len += n as u64;
        if done {
            feed(parser, offset, &line);
            offset += raw_len;
            raw_len = 0;
            shrink = None;
            line.clear();
            if line.capacity() > LONG_LINE {
                line = Vec::new();
            }
        }
    }
    if !line.is_empty() {
        feed(parser, offset, &line);
    }
    Ok(())
}

fn feed(parser: &mut dyn LineParser, offset: u64, line: &[u8]) {
    // an unreadable line is skipped here as it was when the file was indexed
    let _ = parser.feed_line(offset, line.strip_suffix(b"\r").unwrap_or(line));
}

/// Copies a JSON text, cutting long strings to their head (see the module documentation). Fed
/// in pieces split anywhere; never splits a character or an escape.
#[derive(Debug, Default)]
struct Shrinker {
    in_str: bool,
    /// The last byte was a backslash inside a string.
    escape: bool,
    /// Hex digits of a `\u` escape still to come.
    hex: u8,
    /// Bytes of the current string kept, and allowed.
    kept: usize,
    cap: usize,
    /// The rest of the current string is being skipped; bytes skipped so far.
    dropping: bool,
    dropped: u64,
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

impl Shrinker {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        let mut i = 0;
        while i < bytes.len() {
            if !self.in_str {
                let Some(k) = memchr(b'"', &bytes[i..]) else {
                    out.extend_from_slice(&bytes[i..]);
                    return;
                };
                out.extend_from_slice(&bytes[i..=i + k]);
                i += k + 1;
                self.open(out.len());
            } else if self.escape || self.hex > 0 {
                // inside an escape: taken or skipped whole
                let b = bytes[i];
                if self.dropping {
                    self.dropped += 1;
                } else {
                    out.push(b);
                    self.kept += 1;
                }
                if self.escape {
                    self.escape = false;
                    self.hex = if b == b'u' { 4 } else { 0 };
                } else {
                    self.hex -= 1;
                }
                i += 1;
            } else if self.dropping {
                let Some(k) = memchr2(b'"', b'\\', &bytes[i..]) else {
                    self.dropped += (bytes.len() - i) as u64;
                    return;
                };
                self.dropped += k as u64;
                i += k;
                if bytes[i] == b'\\' {
                    self.dropped += 1;
                    self.escape = true;
                } else {
                    self.close(out);
                }
                i += 1;
            } else if self.kept >= self.cap && bytes[i] != b'"' && !is_continuation(bytes[i]) {
                // the head is full, at a character boundary outside any escape
                self.dropping = true;
            } else {
                let end = memchr2(b'"', b'\\', &bytes[i..]).map_or(bytes.len(), |k| i + k);
                let mut stop = end.min(i + self.cap.saturating_sub(self.kept));
                while stop < end && is_continuation(bytes[stop]) {
                    stop += 1;
                }
                out.extend_from_slice(&bytes[i..stop]);
                self.kept += stop - i;
                i = stop;
                if i == end && i < bytes.len() {
                    if bytes[i] == b'"' {
                        out.push(b'"');
                        self.in_str = false;
                        i += 1;
                    } else if self.kept < self.cap {
                        out.push(b'\\');
                        self.kept += 1;
                        self.escape = true;
                        i += 1;
                    } else {
                        self.dropping = true;
                    }
                }
            }
        }
    }

    /// A string starts; `len` is what the line holds so far.
    fn open(&mut self, len: usize) {
        *self = Shrinker {
            in_str: true,
            cap: if len > LINE_KEEP {
                SMALL_KEEP
            } else {
                STRING_KEEP
            },
            ..Shrinker::default()
        };
    }

    /// The closing quote of a string whose tail was skipped: a note says how much.
    fn close(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(format!(" [... {} bytes not read]\"", self.dropped).as_bytes());
        self.in_str = false;
        self.dropping = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{ConvState, LineError};
    use serde_json::{Value, json};

    #[derive(Default)]
    struct Seen(Vec<(u64, Vec<u8>)>);

    impl LineParser for Seen {
        fn feed_line(&mut self, offset: u64, line: &[u8]) -> Result<(), LineError> {
            self.0.push((offset, line.to_vec()));
            Ok(())
        }
        fn drain(&mut self) -> Vec<ConvState> {
            Vec::new()
        }
    }

    fn fed(bytes: &[u8]) -> Vec<(u64, Vec<u8>)> {
        let mut p = Seen::default();
        feed_lines(&mut p, bytes, 100).expect("feed");
        p.0
    }

    fn shrunk_in_pieces(line: &[u8], piece: usize) -> Vec<u8> {
        let mut s = Shrinker::default();
        let mut out = Vec::new();
        for c in line.chunks(piece) {
            s.push(c, &mut out);
        }
        out
    }

    #[test]
    fn short_lines_are_fed_as_written_with_their_offsets() {
        let got = fed(b"{\"a\":1}\r\n\n{\"b\":\"x\"}\nlast");
        let want: Vec<(u64, Vec<u8>)> = vec![
            (100, b"{\"a\":1}".to_vec()),
            (109, b"".to_vec()),
            (110, b"{\"b\":\"x\"}".to_vec()),
            (120, b"last".to_vec()),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_long_line_keeps_its_structure_and_the_head_of_each_long_string() {
        let big = "x".repeat(3 * STRING_KEEP);
        let rec = json!({"type": "user", "content": [{"type": "tool_result", "content": big}],
            "short": "kept \u{e9} \"q\"", "n": [1, 2.5, null, true]});
        let line = serde_json::to_vec(&rec).unwrap();
        let mut bytes = b"{}\n".to_vec();
        bytes.extend_from_slice(&line);
        bytes.extend_from_slice(b"\n{\"after\":1}\n");
        let got = fed(&bytes);
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].0, 103);
        assert_eq!(
            got[2],
            (103 + line.len() as u64 + 1, b"{\"after\":1}".to_vec())
        );
        let v: Value = serde_json::from_slice(&got[1].1).expect("still JSON");
        let cut = v["content"][0]["content"].as_str().unwrap();
        assert!(cut.starts_with(&"x".repeat(STRING_KEEP)), "{}", cut.len());
        assert!(cut.ends_with(&format!(" [... {} bytes not read]", 2 * STRING_KEEP)));
        assert_eq!(v["short"], rec["short"]);
        assert_eq!(v["n"], rec["n"]);
        assert_eq!(v["type"], "user");
    }

    #[test]
    fn cuts_never_split_a_character_or_an_escape_wherever_the_pieces_end() {
        for unit in ["\u{e9}", "\u{1f600}", "\\u00e9", "\\\"", "\\\\", "ab\\n"] {
            let body = unit.repeat(STRING_KEEP / unit.len() + 7);
            let line = format!("{{\"k\":\"{body}\",\"z\":\"{body}\"}}");
            let whole = shrunk_in_pieces(line.as_bytes(), usize::MAX);
            let v: Value =
                serde_json::from_slice(&whole).unwrap_or_else(|e| panic!("{unit:?}: {e}"));
            assert!(
                v["k"].as_str().unwrap().contains("bytes not read"),
                "{unit:?}"
            );
            for piece in [1, 3, 4096] {
                assert!(
                    shrunk_in_pieces(line.as_bytes(), piece) == whole,
                    "{unit:?} in pieces of {piece}"
                );
            }
        }
    }

    #[test]
    fn later_strings_keep_less_and_a_line_of_countless_values_is_refused() {
        let big = "y".repeat(2 * STRING_KEEP);
        let many: Vec<String> = (0..8).map(|_| big.clone()).collect();
        let line = serde_json::to_vec(&json!({ "many": many })).unwrap();
        let got = fed(&line);
        assert!(
            got[0].1.len() < LINE_KEEP + 2 * STRING_KEEP,
            "{}",
            got[0].1.len()
        );
        serde_json::from_slice::<Value>(&got[0].1).expect("still JSON");
        let numbers = format!("[{}1]", "1,".repeat(LINE_MAX / 2 + 1));
        let mut p = Seen::default();
        let err = feed_lines(&mut p, numbers.as_bytes(), 7).unwrap_err();
        assert!(matches!(err, StreamError::TooLarge { offset: 7 }), "{err}");
    }
}
