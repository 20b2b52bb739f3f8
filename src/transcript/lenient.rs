//! Lenient wire types for transcript JSON: fields that accept any JSON type without failing the
//! record, borrowed strings that avoid allocation, and a cheap check for the shape of a value.
//!
//! Transcript formats are not stable contracts. A field that changes type must not make us
//! drop the whole line, so every field we read goes through these wrappers: a value of an
//! unexpected type reads as "absent" and is skipped without allocating.
use super::LineError;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A string field that is `None` unless the JSON value is a string. Borrows when the string
/// has no escapes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LStr<'a>(pub Option<Cow<'a, str>>);

impl<'a> LStr<'a> {
    pub(crate) fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }
    /// The string when present and not blank.
    pub(crate) fn non_empty(&self) -> Option<&str> {
        self.0.as_deref().filter(|s| !s.trim().is_empty())
    }
    pub(crate) fn into_owned(self) -> Option<String> {
        self.0.map(Cow::into_owned)
    }
}

struct LStrVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for LStrVisitor<'a> {
    type Value = LStr<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Borrowed(v))))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Owned(v.to_owned()))))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(LStr(Some(Cow::Owned(v))))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(LStr(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(LStr(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(LStr(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LStr(None))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(LStr(None))
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(LStr(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(LStr(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(LStr(None))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LStrVisitor(std::marker::PhantomData))
    }
}

/// A flag that is true only when the JSON value is `true`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LBool(pub bool);

struct LBoolVisitor;

impl<'de> Visitor<'de> for LBoolVisitor {
    type Value = LBool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<LBool, E> {
        Ok(LBool(v))
    }
    fn visit_str<E>(self, _: &str) -> Result<LBool, E> {
        Ok(LBool(false))
    }
    fn visit_i64<E>(self, _: i64) -> Result<LBool, E> {
        Ok(LBool(false))
    }
    fn visit_u64<E>(self, _: u64) -> Result<LBool, E> {
        Ok(LBool(false))
    }
    fn visit_f64<E>(self, _: f64) -> Result<LBool, E> {
        Ok(LBool(false))
    }
    fn visit_unit<E>(self) -> Result<LBool, E> {
        Ok(LBool(false))
    }
    fn visit_none<E>(self) -> Result<LBool, E> {
        Ok(LBool(false))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<LBool, D::Error> {
        d.deserialize_any(LBoolVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LBool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(LBool(false))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LBool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(LBool(false))
    }
}

impl<'de> Deserialize<'de> for LBool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LBoolVisitor)
    }
}

/// A number field (integer or float) read as `i64`; anything else is `None`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LNum(pub Option<i64>);

struct LNumVisitor;

impl<'de> Visitor<'de> for LNumVisitor {
    type Value = LNum;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_i64<E>(self, v: i64) -> Result<LNum, E> {
        Ok(LNum(Some(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<LNum, E> {
        Ok(LNum(i64::try_from(v).ok()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<LNum, E> {
        Ok(LNum(if v.is_finite() { Some(v as i64) } else { None }))
    }
    fn visit_bool<E>(self, _: bool) -> Result<LNum, E> {
        Ok(LNum(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<LNum, E> {
        Ok(LNum(None))
    }
    fn visit_unit<E>(self) -> Result<LNum, E> {
        Ok(LNum(None))
    }
    fn visit_none<E>(self) -> Result<LNum, E> {
        Ok(LNum(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<LNum, D::Error> {
        d.deserialize_any(LNumVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LNum, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(LNum(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LNum, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(LNum(None))
    }
}

impl<'de> Deserialize<'de> for LNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LNumVisitor)
    }
}

/// A timestamp as agents write it, read as epoch milliseconds: RFC 3339 text, or an epoch
/// number (or numeric string) in seconds, milliseconds or microseconds, told apart by magnitude.
/// Anything else is `None`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LTime(pub Option<i64>);

struct LTimeVisitor;

impl<'de> Visitor<'de> for LTimeVisitor {
    type Value = LTime;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E>(self, v: &str) -> Result<LTime, E> {
        Ok(LTime(crate::util::time::parse_any(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<LTime, E> {
        Ok(LTime(crate::util::time::from_epoch_number(v as f64)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<LTime, E> {
        Ok(LTime(crate::util::time::from_epoch_number(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<LTime, E> {
        Ok(LTime(crate::util::time::from_epoch_number(v)))
    }
    fn visit_bool<E>(self, _: bool) -> Result<LTime, E> {
        Ok(LTime(None))
    }
    fn visit_unit<E>(self) -> Result<LTime, E> {
        Ok(LTime(None))
    }
    fn visit_none<E>(self) -> Result<LTime, E> {
        Ok(LTime(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<LTime, D::Error> {
        d.deserialize_any(LTimeVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LTime, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(LTime(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LTime, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(LTime(None))
    }
}

impl<'de> Deserialize<'de> for LTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LTimeVisitor)
    }
}

/// A JSON value's text, unparsed (as a `&RawValue` borrows it), for values read later if at
/// all; unlike `&RawValue` it can also be made from text already known to be one JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Raw<'a>(pub &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d).map(|r| Raw(r.get()))
    }
}

impl<'a> Raw<'a> {
    /// Deserializes the value as `T`, or `None` when it does not fit.
    pub(crate) fn parse<T: Deserialize<'a>>(self) -> Option<T> {
        serde_json::from_str(self.0).ok()
    }
}

/// What kind of JSON value a raw value holds, judged by its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    String,
    Array,
    Object,
    Other,
}

pub(crate) fn shape(raw: &RawValue) -> Shape {
    match raw
        .get()
        .as_bytes()
        .iter()
        .find(|b| !b.is_ascii_whitespace())
    {
        Some(b'"') => Shape::String,
        Some(b'[') => Shape::Array,
        Some(b'{') => Shape::Object,
        _ => Shape::Other,
    }
}

/// Deserializes a raw value as `T`, or `None` when it does not fit.
pub(crate) fn parse<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Option<T> {
    serde_json::from_str(raw.get()).ok()
}

/// Reads a raw value as a string when it is one.
pub(crate) fn string<'a>(raw: &'a RawValue) -> Option<Cow<'a, str>> {
    if shape(raw) != Shape::String {
        return None;
    }
    parse::<LStr<'a>>(raw).and_then(|s| s.0)
}

/// Runs `parse` on `line`; when it fails for the line's JSON or UTF-8, runs it once more on
/// the line with its strings repaired (see [`repair`]). Only the error path pays for the scan.
pub(crate) fn retry_repaired<T>(
    line: &[u8],
    mut parse: impl FnMut(&[u8]) -> Result<T, LineError>,
) -> Result<T, LineError> {
    match parse(line) {
        Err(e @ (LineError::Json(_) | LineError::Utf8)) => match repair(line) {
            Some(fixed) => parse(&fixed),
            None => Err(e),
        },
        done => done,
    }
}

/// The line with invalid UTF-8 and unpaired surrogate escapes (`\ud83d` alone, as written when
/// an emoji is cut at a buffer edge) replaced by U+FFFD, as Node and Python read them; `None`
/// when there is nothing to repair.
pub(crate) fn repair(line: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(line);
    let mut changed = matches!(text, Cow::Owned(_));
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let Some(unit) = hex_escape(b, i) else {
            // any other escape: copy it whole so an escaped backslash is not read as a start
            out.extend_from_slice(&b[i..(i + 2).min(b.len())]);
            i += 2;
            continue;
        };
        let paired = (0xD800..0xDC00).contains(&unit)
            && hex_escape(b, i + 6).is_some_and(|low| (0xDC00..0xE000).contains(&low));
        if paired {
            out.extend_from_slice(&b[i..i + 12]);
            i += 12;
        } else if (0xD800..0xE000).contains(&unit) {
            out.extend_from_slice(b"\\uFFFD");
            changed = true;
            i += 6;
        } else {
            out.extend_from_slice(&b[i..i + 6]);
            i += 6;
        }
    }
    changed.then_some(out)
}

/// The code unit of a `\uXXXX` escape starting at `at`.
fn hex_escape(b: &[u8], at: usize) -> Option<u32> {
    let esc = b.get(at..at + 6)?;
    if esc[0] != b'\\' || esc[1] != b'u' {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(&esc[2..]).ok()?, 16).ok()
}

/// Message content that is either a string or a list of blocks (as in Anthropic- and
/// OpenAI-style messages), read in one pass.
#[derive(Debug, Default, PartialEq)]
pub(crate) enum Content<'a, B> {
    #[default]
    Missing,
    Text(Cow<'a, str>),
    Blocks(Vec<B>),
    Other,
}

struct ContentVisitor<'a, B>(std::marker::PhantomData<(&'a (), B)>);

impl<'de: 'a, 'a, B: Deserialize<'de>> Visitor<'de> for ContentVisitor<'a, B> {
    type Value = Content<'a, B>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or a list of content blocks")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
        while let Some(b) = seq.next_element::<B>()? {
            blocks.push(b);
        }
        Ok(Content::Blocks(blocks))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content::Other)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Content::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Content::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Content::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Content::Other)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Content::Missing)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Content::Missing)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de: 'a, 'a, B: Deserialize<'de>> Deserialize<'de> for Content<'a, B> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(line: &str) -> Option<String> {
        repair(line.as_bytes()).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn unpaired_surrogates_become_replacement_characters() {
        assert_eq!(fixed(r#"{"a":"x\ud83d"}"#).unwrap(), r#"{"a":"x\uFFFD"}"#);
        assert_eq!(
            fixed(r#"{"a":"\udc00\u0041"}"#).unwrap(),
            r#"{"a":"\uFFFD\u0041"}"#
        );
        assert_eq!(
            fixed(r#"{"a":"\ud83d\ud83d\ude00"}"#).unwrap(),
            r#"{"a":"\uFFFD\ud83d\ude00"}"#
        );
        assert_eq!(
            fixed(r#"{"a":"\ud83d\ude00 \\ud83d"}"#),
            None,
            "pair kept, escaped backslash"
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let v = repair(b"{\"a\":\"x\xff\"}").unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), "{\"a\":\"x\u{fffd}\"}");
    }

    proptest::proptest! {
        #[test]
        fn repaired_strings_always_parse(a in "\\PC{0,8}", b in "\\PC{0,8}", lead: bool) {
            let enc = |s: &str| {
                let j = serde_json::to_string(s).unwrap();
                j[1..j.len() - 1].to_owned()
            };
            let esc = if lead { "\\ud83d" } else { "\\ude00" };
            let line = format!("\"{}{esc}{}\"", enc(&a), enc(&b));
            let got = retry_repaired(line.as_bytes(), |l| {
                serde_json::from_slice::<String>(l).map_err(|e| LineError::Json(e.to_string()))
            });
            proptest::prop_assert_eq!(got, Ok(format!("{a}\u{fffd}{b}")));
        }
    }
}
