//! A hand-written reader for Claude Code records of the usual shape, faster than serde's derive
//! (most of a record is skipped: tool results, `toolUseResult`, usage counters, thinking).
//!
//! It only ever says "this is the record" or "ask serde": it accepts a strict subset of what
//! serde accepts and then builds exactly the [`Record`] serde would. Whatever is unusual (an
//! escaped or non-ASCII key, a field read as text holding a number, a duplicate field, invalid
//! UTF-8 in a string that is read, a syntax error anywhere) returns `None`, and serde reads the
//! line as before, with its own error when the line is bad. The property tests below check the
//! subset on generated and mutated lines.
use super::user::AttachmentRecord;
use super::{Block, Message, Record};
use crate::transcript::lenient::{Content, LBool, LStr, Raw};
use crate::util::json_bitmap::{mark_specials, next_special};
use std::borrow::Cow;

/// Reads `line` into `rec` (a default record), when the line has a shape this reader knows;
/// `None`: ask serde (`rec` then holds part of the line). `bits` is scratch space (kept by the
/// caller so that lines reuse it). The record is the caller's: returned, its ~400 bytes were
/// copied once more per line (a `memcpy` call, slow on musl).
pub(super) fn record<'a>(line: &'a [u8], bits: &mut Vec<u64>, rec: &mut Record<'a>) -> Option<()> {
    // one pass over the line marks every quote, backslash and control byte, and finds whether
    // it is all ASCII; else one UTF-8 check of the whole line (nearly always valid) instead of
    // one per string read
    let ascii = mark_specials(line, bits);
    let mut c = Cur {
        b: line,
        ascii: ascii.is_some(),
        s: ascii.or_else(|| std::str::from_utf8(line).ok()),
        special: bits,
        i: 0,
    };
    c.ws();
    c.open(b'{')?;
    let mut seen = Seen(0);
    c.object(|c, key| {
        match key {
            b"type" => rec.kind = seen.once(0, c.lstr())?,
            b"uuid" => rec.uuid = seen.once(1, c.lstr())?,
            b"timestamp" => rec.timestamp = seen.once(2, c.lstr())?,
            b"sessionId" => rec.session_id = seen.once(3, c.lstr())?,
            b"cwd" => rec.cwd = seen.once(4, c.lstr())?,
            b"gitBranch" => rec.git_branch = seen.once(5, c.lstr())?,
            b"slug" => rec.slug = seen.once(6, c.lstr())?,
            b"isMeta" => rec.is_meta = seen.once(7, c.lbool())?,
            b"isCompactSummary" => rec.is_compact_summary = seen.once(8, c.lbool())?,
            b"message" => rec.message = seen.once(9, c.nullable(Cur::message))?,
            b"summary" => rec.summary = seen.once(10, c.lstr())?,
            b"leafUuid" => rec.leaf_uuid = seen.once(11, c.lstr())?,
            b"customTitle" => rec.custom_title = seen.once(12, c.lstr())?,
            b"aiTitle" => rec.ai_title = seen.once(13, c.lstr())?,
            b"attachment" => rec.attachment = seen.once(14, c.nullable(Cur::attachment))?,
            _ => c.skip_value()?,
        }
        Some(())
    })?;
    c.ws();
    (c.i == line.len()).then_some(())
}

/// The fields already read (serde's derive rejects a field given twice).
struct Seen(u32);

impl Seen {
    fn once<T>(&mut self, bit: u32, value: Option<T>) -> Option<T> {
        if self.0 & (1 << bit) != 0 {
            return None;
        }
        self.0 |= 1 << bit;
        value
    }
}

/// A position in the line.
struct Cur<'a, 'b> {
    b: &'a [u8],
    /// The line's special bytes (see [`mark_specials`]).
    special: &'b [u64],
    /// The line as text, when all of it is valid UTF-8: then every string's body is a slice of
    /// it (bounded by quotes, so on character boundaries) and needs no check of its own.
    s: Option<&'a str>,
    /// Whether every byte of the line is ASCII (then no key needs its own check).
    ascii: bool,
    i: usize,
}

impl<'a> Cur<'a, '_> {
    /// Skips JSON whitespace (serde's set: space, tab, newline, carriage return).
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Consumes `c` (after whitespace).
    #[inline]
    fn open(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// Consumes the literal `lit` at the cursor.
    fn lit(&mut self, lit: &[u8]) -> Option<()> {
        (self.b.get(self.i..self.i + lit.len())? == lit).then(|| self.i += lit.len())
    }

    /// From just after an opening quote to just after the closing one, checked as serde checks
    /// every string (no control characters, valid escapes); whether it held an escape. Inlined
    /// everywhere: called for every string of a line, its call cost was a third of its cost.
    #[inline(always)]
    fn string_end(&mut self) -> Option<bool> {
        let mut escaped = false;
        loop {
            // straight to the next quote, backslash or control character (none: unterminated)
            self.i = next_special(self.special, self.i)?;
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(escaped);
                }
                b'\\' => {}
                _ => return None,
            }
            escaped = true;
            match *self.b.get(self.i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                b'u' => {
                    let hex = self.b.get(self.i + 2..self.i + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.i += 6;
                }
                _ => return None,
            }
        }
    }

    /// The bytes `from..to` of the line as text, if they are valid UTF-8 (a string read must
    /// be; a skipped one need not).
    #[inline]
    fn text(&self, from: usize, to: usize) -> Option<&'a str> {
        match self.s {
            Some(s) => s.get(from..to),
            None => std::str::from_utf8(self.b.get(from..to)?).ok(),
        }
    }

    /// A string value (cursor on its quote) as serde reads a `&str`: borrowed when it has no
    /// escape (and is valid UTF-8), else unescaped by serde itself.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.i;
        self.i += 1;
        let b = self.b;
        if self.string_end()? {
            serde_json::from_slice::<String>(&b[start..self.i])
                .ok()
                .map(Cow::Owned)
        } else {
            self.text(start + 1, self.i - 1).map(Cow::Borrowed)
        }
    }

    /// A number, by serde's grammar (which it checks even for values it ignores).
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => {
                self.i += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return None;
                }
            }
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return None;
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return None;
            }
            self.digits();
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    /// Skips one value of any kind, checked as serde checks an ignored value (nesting is not
    /// limited there; here beyond 127 levels serde is asked).
    fn skip_value(&mut self) -> Option<()> {
        // one bit per open container: 1 = object
        let (mut stack, mut depth) = (0u128, 0u32);
        loop {
            self.ws();
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    self.string_end()?;
                }
                open @ (b'{' | b'[') => {
                    self.i += 1;
                    if depth == 127 {
                        return None;
                    }
                    let obj = open == b'{';
                    stack = stack << 1 | u128::from(obj);
                    depth += 1;
                    self.ws();
                    if self.peek()? == if obj { b'}' } else { b']' } {
                        self.i += 1;
                        stack >>= 1;
                        depth -= 1;
                    } else {
                        if obj {
                            self.key()?;
                        }
                        continue;
                    }
                }
                b't' => self.lit(b"true")?,
                b'f' => self.lit(b"false")?,
                b'n' => self.lit(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // after a value: close containers until one goes on
            loop {
                if depth == 0 {
                    return Some(());
                }
                self.ws();
                let obj = stack & 1 == 1;
                match self.peek()? {
                    b',' => {
                        self.i += 1;
                        if obj {
                            self.key()?;
                        }
                        break;
                    }
                    b'}' if obj => {}
                    b']' if !obj => {}
                    _ => return None,
                }
                self.i += 1;
                stack >>= 1;
                depth -= 1;
            }
        }
    }

    /// An ignored object's key and its colon.
    fn key(&mut self) -> Option<()> {
        self.open(b'"')?;
        self.string_end()?;
        self.open(b':')
    }

    /// The members of an object whose `{` was consumed: `f` reads each value. Keys are plain
    /// ASCII without escapes (others are left to serde, which unescapes and validates them).
    fn object(&mut self, mut f: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.open(b'"')?;
            let start = self.i;
            if self.string_end()? {
                return None;
            }
            let b = self.b;
            let key = &b[start..self.i - 1];
            if !self.ascii && !key.is_ascii() {
                return None;
            }
            self.open(b':')?;
            self.ws();
            f(self, key)?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A lenient string field: a string, or `null` (absent); other kinds are left to serde.
    fn lstr(&mut self) -> Option<LStr<'a>> {
        match self.peek()? {
            b'"' => self.string().map(|s| LStr(Some(s))),
            b'n' => self.lit(b"null").map(|_| LStr(None)),
            _ => None,
        }
    }

    /// A lenient flag: `true`, `false` or `null`; other kinds are left to serde.
    fn lbool(&mut self) -> Option<LBool> {
        match self.peek()? {
            b't' => self.lit(b"true").map(|_| LBool(true)),
            b'f' => self.lit(b"false").map(|_| LBool(false)),
            b'n' => self.lit(b"null").map(|_| LBool(false)),
            _ => None,
        }
    }

    /// An optional object field: `null` is `None`, an object is read by `read` (cursor after
    /// its `{`); other kinds are left to serde (a struct may also be read from an array).
    fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.peek()? {
            b'n' => self.lit(b"null").map(|_| None),
            b'{' => {
                self.i += 1;
                read(self).map(Some)
            }
            _ => None,
        }
    }

    /// A value kept as its text (`Option<&RawValue>`: `null` is `None`).
    fn raw(&mut self) -> Option<Option<Raw<'a>>> {
        if self.peek()? == b'n' {
            return self.lit(b"null").map(|_| None);
        }
        let start = self.i;
        self.skip_value()?;
        self.text(start, self.i).map(|s| Some(Raw(s)))
    }

    fn message(&mut self) -> Option<Message<'a>> {
        let mut m = Message::default();
        let mut seen = Seen(0);
        self.object(|c, key| {
            match key {
                b"id" => m.id = seen.once(0, c.lstr())?,
                b"content" => m.content = seen.once(1, c.content())?,
                _ => c.skip_value()?,
            }
            Some(())
        })?;
        Some(m)
    }

    /// Message content: a string, a list of block objects, or `null`.
    fn content(&mut self) -> Option<Content<'a, Block<'a>>> {
        match self.peek()? {
            b'"' => self.string().map(Content::Text),
            b'n' => self.lit(b"null").map(|_| Content::Missing),
            b'[' => {
                self.i += 1;
                let mut blocks = Vec::new();
                self.ws();
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(Content::Blocks(blocks));
                }
                loop {
                    self.open(b'{')?;
                    blocks.push(self.block()?);
                    self.ws();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(Content::Blocks(blocks));
                        }
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    fn block(&mut self) -> Option<Block<'a>> {
        let mut b = Block::default();
        let mut seen = Seen(0);
        self.object(|c, key| {
            match key {
                b"type" => b.kind = seen.once(0, c.lstr())?,
                b"text" => b.text = seen.once(1, c.lstr())?,
                b"id" => b.id = seen.once(2, c.lstr())?,
                b"name" => b.name = seen.once(3, c.lstr())?,
                b"input" => b.input = seen.once(4, c.raw())?,
                b"source" => b.source = seen.once(5, c.raw())?,
                _ => c.skip_value()?,
            }
            Some(())
        })?;
        Some(b)
    }

    fn attachment(&mut self) -> Option<AttachmentRecord<'a>> {
        let mut a = AttachmentRecord::default();
        let mut seen = Seen(0);
        self.object(|c, key| {
            match key {
                b"type" => a.kind = seen.once(0, c.lstr())?,
                b"prompt" => a.prompt = seen.once(1, c.raw())?,
                b"isMeta" => a.is_meta = seen.once(2, c.lbool())?,
                _ => c.skip_value()?,
            }
            Some(())
        })?;
        Some(a)
    }
}

#[cfg(test)]
mod tests;
