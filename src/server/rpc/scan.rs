//! A forgiving lexer over raw JSON bytes, for what must be known about a line that is too
//! long, too deep or not valid JSON: how deep it nests, its request id, and where in it a bad
//! string sits. It never allocates per token and stops at the end of incomplete input.

/// One token of JSON text; strings and scalars are byte ranges of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Open(u8),
    Close,
    Colon,
    Comma,
    /// A string, quotes included.
    Str(usize, usize),
    /// A number, `true`, `false` or `null` (or garbage).
    Scalar(usize, usize),
}

struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Lexer<'a> {
    fn new(b: &'a [u8]) -> Self {
        Lexer { b, i: 0 }
    }

    /// The next token, or None at the end of the input (or inside an unterminated string).
    fn next(&mut self) -> Option<Tok> {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
        let start = self.i;
        let c = *self.b.get(start)?;
        self.i += 1;
        Some(match c {
            b'{' | b'[' => Tok::Open(c),
            b'}' | b']' => Tok::Close,
            b':' => Tok::Colon,
            b',' => Tok::Comma,
            b'"' => {
                let end = string_end(self.b, self.i)?;
                self.i = end;
                Tok::Str(start, end)
            }
            _ => {
                while self.i < self.b.len()
                    && !matches!(
                        self.b[self.i],
                        b',' | b':'
                            | b'['
                            | b']'
                            | b'{'
                            | b'}'
                            | b'"'
                            | b' '
                            | b'\t'
                            | b'\r'
                            | b'\n'
                    )
                {
                    self.i += 1;
                }
                Tok::Scalar(start, self.i)
            }
        })
    }
}

/// Index just past the closing quote of a string whose content starts at `i`.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Whether arrays and objects in `b` nest deeper than `limit` (strings are skipped).
pub(super) fn nests_deeper_than(b: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => match string_end(b, i + 1) {
                Some(end) => {
                    i = end;
                    continue;
                }
                None => return false,
            },
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// Nesting followed by [`walk`]; deeper text is not looked into.
const MAX_WALK_DEPTH: usize = 256;

/// One step of the path to a value: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// Where the lexer is inside one container.
struct Frame {
    object: bool,
    /// The key whose value comes next (objects), or the element index (arrays).
    key: Option<String>,
    index: usize,
    /// In an object: the next string is a key.
    expect_key: bool,
}

/// Walks the structure, calling `visit(stack, token, is_key)` for every key and for the first
/// token of every value (a string, a scalar or an opening bracket). Stops when `visit` returns
/// true.
fn walk(b: &[u8], mut visit: impl FnMut(&[Frame], Tok, bool) -> bool) {
    let mut lex = Lexer::new(b);
    let mut stack: Vec<Frame> = Vec::new();
    while let Some(tok) = lex.next() {
        match tok {
            Tok::Colon => continue,
            Tok::Comma => {
                if let Some(f) = stack.last_mut() {
                    f.index += 1;
                    f.expect_key = f.object;
                    f.key = None;
                }
                continue;
            }
            Tok::Close => {
                stack.pop();
                continue;
            }
            Tok::Str(s, e) if stack.last().is_some_and(|f| f.object && f.expect_key) => {
                if visit(&stack, tok, true) {
                    return;
                }
                if let Some(f) = stack.last_mut() {
                    f.key = Some(decode_str(&b[s..e]));
                    f.expect_key = false;
                }
                continue;
            }
            _ => {}
        }
        if visit(&stack, tok, false) {
            return;
        }
        if let Tok::Open(c) = tok {
            if stack.len() >= MAX_WALK_DEPTH {
                // deeper than any message accepted: nothing more to learn (and no memory spent)
                return;
            }
            stack.push(Frame {
                object: c == b'{',
                key: None,
                index: 0,
                expect_key: c == b'{',
            });
        }
    }
}

/// The text of a JSON string token (quotes included); undecodable escapes are kept raw.
fn decode_str(raw: &[u8]) -> String {
    serde_json::from_slice::<String>(raw)
        .unwrap_or_else(|_| String::from_utf8_lossy(&raw[1..raw.len().saturating_sub(1)]).into())
}

/// The path to the current position: per container, its current key or element index.
fn path_of(stack: &[Frame]) -> Vec<Step> {
    stack
        .iter()
        .map(|f| match (&f.key, f.object) {
            (Some(k), true) => Step::Key(k.clone()),
            _ => Step::Index(f.index),
        })
        .collect()
}

/// The top-level `"id"` of a JSON-RPC message, read from text that may be cut short or
/// invalid further on: an integer or a string, as a JSON value.
pub(super) fn sniff_id(b: &[u8]) -> Option<serde_json::Value> {
    let mut found = None;
    walk(b, |stack, tok, is_key| {
        let [top] = stack else {
            return false;
        };
        if is_key || !top.object || top.key.as_deref() != Some("id") {
            return false;
        }
        found = match tok {
            Tok::Str(s, e) => serde_json::from_slice::<String>(&b[s..e])
                .ok()
                .map(serde_json::Value::String),
            Tok::Scalar(s, e) => serde_json::from_slice::<serde_json::Value>(&b[s..e])
                .ok()
                .filter(|v| v.is_i64() || v.is_u64()),
            _ => None,
        };
        true
    });
    found
}

/// The path to the string (a value, or a key: then the path ends with that key) that contains
/// byte `at`.
pub(super) fn path_at(b: &[u8], at: usize) -> Option<Vec<Step>> {
    let mut path = None;
    walk(b, |stack, tok, is_key| {
        let Tok::Str(s, e) = tok else { return false };
        if !(s..e).contains(&at) {
            return false;
        }
        let mut p = path_of(stack);
        if is_key {
            p.pop();
            p.push(Step::Key(decode_str(&b[s..e])));
        }
        path = Some(p);
        true
    });
    path
}

/// Byte offsets of `\u` escapes that encode a lone UTF-16 surrogate (a high one not followed
/// by a low one, or a low one on its own): JSON text that names no Unicode character.
pub(super) fn lone_surrogates(b: &[u8]) -> Vec<usize> {
    let hex = |at: usize| -> Option<u16> {
        let s = std::str::from_utf8(b.get(at + 2..at + 6)?).ok()?;
        if b.get(at..at + 2)? != b"\\u" {
            return None;
        }
        u16::from_str_radix(s, 16).ok()
    };
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        match b[i] {
            b'"' => in_str = !in_str,
            b'\\' if in_str => {
                if let Some(u) = hex(i) {
                    if (0xD800..0xDC00).contains(&u) {
                        if hex(i + 6).is_some_and(|l| (0xDC00..0xE000).contains(&l)) {
                            i += 12;
                            continue;
                        }
                        out.push(i);
                    } else if (0xDC00..0xE000).contains(&u) {
                        out.push(i);
                    }
                    i += 6;
                    continue;
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_read_from_cut_or_broken_text() {
        assert_eq!(
            sniff_id(br#"{"jsonrpc":"2.0","id":7,"method":"x"#),
            Some(json!(7))
        );
        assert_eq!(
            sniff_id(br#"{"method":"x","params":{"id":1},"id":"a"}"#),
            Some(json!("a"))
        );
        assert_eq!(sniff_id(br#"{"method":"x","params":{"q":"#), None);
        assert_eq!(sniff_id(br#"{"id":null}"#), None);
        assert_eq!(sniff_id(br#"{"id":1.5}"#), None);
        assert_eq!(sniff_id(br#"[{"id":1}]"#), None);
    }

    #[test]
    fn depth_ignores_brackets_in_strings() {
        assert!(!nests_deeper_than(br#"{"a":"[[[[[[[["}"#, 2));
        assert!(nests_deeper_than(b"[[[1]]]", 2));
        assert!(!nests_deeper_than(b"[[[1]]]", 3));
    }

    #[test]
    fn lone_surrogates_are_found_and_located() {
        let text = br#"{"params":{"arguments":{"query":"a\ud800b","ok":"\ud83d\ude00"}}}"#;
        let bad = lone_surrogates(text);
        assert_eq!(bad.len(), 1);
        assert_eq!(
            path_at(text, bad[0]),
            Some(vec![
                Step::Key("params".into()),
                Step::Key("arguments".into()),
                Step::Key("query".into())
            ])
        );
        assert_eq!(lone_surrogates(br#"{"a":"\udc00"}"#).len(), 1);
        assert!(lone_surrogates(br#"{"a":"\\ud800"}"#).is_empty());
        let key = br#"{"params":{"\ud800":1}}"#;
        let at = lone_surrogates(key)[0];
        assert_eq!(
            path_at(key, at),
            Some(vec![
                Step::Key("params".into()),
                Step::Key("\\ud800".into())
            ])
        );
    }

    #[test]
    fn deep_text_is_not_walked_into() {
        let deep = format!(r#"{{"id":3,"a":{}"#, "[".repeat(1 << 20));
        assert_eq!(sniff_id(deep.as_bytes()), Some(json!(3)));
        let late = format!(r#"{{"a":{}1{},"id":4}}"#, "[".repeat(300), "]".repeat(300));
        assert_eq!(sniff_id(late.as_bytes()), None);
    }

    #[test]
    fn array_elements_are_indexed() {
        let text = br#"{"a":[1,"x","\udfff"]}"#;
        let at = lone_surrogates(text)[0];
        assert_eq!(
            path_at(text, at),
            Some(vec![Step::Key("a".into()), Step::Index(2)])
        );
    }
}
