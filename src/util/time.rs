//! ISO-8601 timestamps: parsing transcript timestamps to epoch milliseconds and formatting back.
//!
//! Transcripts write UTC timestamps like `2026-04-18T13:19:12.767Z`; some formats use epoch
//! milliseconds. We keep one representation (`i64` milliseconds since the Unix epoch) and format
//! it back as `YYYY-MM-DDTHH:MM:SS.mmmZ`, which sorts lexicographically like it sorts in time.
//! The calendar (parsing, validation, formatting) is chrono's, but for a fast path that reads
//! the transcripts' own form (checked against chrono).

use chrono::{DateTime, Utc};
use std::borrow::Cow;

/// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff]]` with an optional `Z` or `±HH:MM` offset
/// (a missing offset means UTC; `t` or a space may stand for `T`, `,` for `.`, `±HHMM` for
/// `±HH:MM`). Fractions below the millisecond are dropped. Returns epoch milliseconds.
pub(crate) fn parse_iso(s: &str) -> Option<i64> {
    if let Some(ms) = utc_millis(s.as_bytes()) {
        return Some(ms);
    }
    let s = s.trim();
    // the transcripts' own form is RFC 3339 already: parsed without a copy
    let t = DateTime::parse_from_rfc3339(s)
        .or_else(|_| DateTime::parse_from_rfc3339(&as_rfc3339(s)))
        .ok()?;
    Some(t.timestamp_millis())
}

/// The transcripts' usual form, `YYYY-MM-DDTHH:MM:SS.mmmZ` (or without `.mmm`), read without
/// chrono (which took a sixtieth of a first build); `None` for anything else, or anything this
/// is not sure of (a leap second), which chrono then reads.
fn utc_millis(b: &[u8]) -> Option<i64> {
    let millis = match b.len() {
        24 if b[19] == b'.' => digits(&b[20..23])?,
        20 => 0,
        _ => return None,
    };
    let sep = |i: usize, c: u8| b[i] == c;
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':'))
        || b[b.len() - 1] != b'Z'
    {
        return None;
    }
    let (year, month, day) = (digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let (hour, minute, second) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month)
        || day < 1
        || day > month_days[month as usize - 1]
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis)
}

/// The decimal number written by `b`, all ASCII digits.
fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0i64, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
    })
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Epoch milliseconds from an epoch number in whatever unit an agent wrote it, told apart by
/// magnitude: seconds (possibly fractional), milliseconds, microseconds or nanoseconds.
pub(crate) fn from_epoch_number(v: f64) -> Option<i64> {
    if !v.is_finite() || v <= 0.0 {
        return None;
    }
    let ms = match v {
        v if v < 1e11 => v * 1e3,
        v if v < 1e14 => v,
        v if v < 1e17 => v / 1e3,
        v => v / 1e6,
    };
    Some(ms.round() as i64)
}

/// Epoch milliseconds from text: ISO-8601 / RFC 3339, or a decimal epoch number.
pub(crate) fn parse_any(s: &str) -> Option<i64> {
    parse_iso(s).or_else(|| s.trim().parse::<f64>().ok().and_then(from_epoch_number))
}

/// An epoch timestamp in seconds, milliseconds, microseconds or nanoseconds (told apart by
/// magnitude: any of them for a date between 1973 and 5138) as epoch milliseconds.
pub(crate) fn epoch_ms(v: i64) -> Option<i64> {
    match v {
        ..=0 => None,
        1..100_000_000_000 => v.checked_mul(1000),
        100_000_000_000..100_000_000_000_000 => Some(v),
        100_000_000_000_000..100_000_000_000_000_000 => Some(v / 1000),
        _ => Some(v / 1_000_000),
    }
}

/// A timestamp as a number in any epoch unit or as an ISO-8601 string, in epoch milliseconds.
pub(crate) fn any_ms(number: Option<i64>, text: Option<&str>) -> Option<i64> {
    number
        .and_then(epoch_ms)
        .or_else(|| text.and_then(parse_iso))
}

/// Completes the shorter forms [`parse_iso`] accepts into RFC 3339, which chrono parses with
/// fixed widths and checks (calendar dates, ranges): a date alone is its midnight, missing
/// seconds are `:00`, `,` is `.`, a missing offset is `Z`, `±HHMM` is `±HH:MM`. Anything else
/// is returned as it is (and then rejected).
fn as_rfc3339(s: &str) -> Cow<'_, str> {
    if s.len() == 10 {
        return format!("{s}T00:00:00Z").into();
    }
    // date, separator, HH:MM
    let (Some(head), Some(rest)) = (s.get(..16), s.get(16..)) else {
        return s.into();
    };
    let (secs, frac, offset) = match rest.strip_prefix(':') {
        Some(r) if r.is_char_boundary(2.min(r.len())) => {
            let (secs, r) = r.split_at(2.min(r.len()));
            match r.strip_prefix(['.', ',']) {
                Some(f) => {
                    let n = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
                    (secs, Some(&f[..n]), &f[n..])
                }
                None => (secs, None, r),
            }
        }
        Some(_) => return s.into(),
        // a fraction needs seconds
        None if rest.starts_with(['.', ',']) => return s.into(),
        None => ("00", None, rest),
    };
    // an empty fraction stays (chrono rejects it)
    let frac = frac.map_or(String::new(), |f| format!(".{f}"));
    let offset: Cow<str> = match offset.as_bytes() {
        [] => "Z".into(),
        [b'+' | b'-', _, _, _, _] if offset.is_ascii() => {
            format!("{}:{}", &offset[..3], &offset[3..]).into()
        }
        _ => offset.into(),
    };
    format!("{head}:{secs}{frac}{offset}").into()
}

/// Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ` (clamped to chrono's range, about
/// ±262,000 years).
pub(crate) fn format_iso(ms: i64) -> String {
    let t = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or(if ms < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    });
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Current wall-clock time in epoch milliseconds.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Parses a relative age like `7d`, `12h`, `30m`, `45s`, `2w` into milliseconds.
pub(crate) fn parse_relative(s: &str) -> Option<i64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
    let n: i64 = num.parse().ok()?;
    let unit_ms = match unit {
        "s" => 1000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return None,
    };
    n.checked_mul(unit_ms)
}

/// The milliseconds an environment variable holds, as a duration (`None` when unset or not
/// a number): the black-box tests' hooks.
pub(crate) fn millis_from_env(var: &str) -> Option<std::time::Duration> {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .map(std::time::Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn by_chrono(s: &str) -> Option<i64> {
        DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.timestamp_millis())
    }

    proptest! {
        /// The fast path reads the usual form exactly as chrono does, and leaves everything
        /// else (impossible dates, other shapes) to chrono.
        #[test]
        fn the_fast_path_agrees_with_chrono(
            y in 0u32..10_000, mo in 0u32..14, d in 0u32..33, h in 0u32..26, mi in 0u32..62,
            sec in 0u32..62, ms in 0u32..1000, frac in any::<bool>(), flip in 0usize..30,
        ) {
            let mut s = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{sec:02}");
            if frac {
                s.push_str(&format!(".{ms:03}"));
            }
            s.push('Z');
            let mut bytes = s.into_bytes();
            // now and then one byte is off
            if flip < bytes.len() && flip % 3 == 0 {
                bytes[flip] = b"x9:-.TZ "[flip % 8];
            }
            let s = String::from_utf8(bytes).unwrap();
            let fast = utc_millis(s.as_bytes());
            prop_assert!(fast.is_none() || fast == by_chrono(&s), "{s}: {fast:?}");
            if by_chrono(&s).is_some() && sec < 60 {
                prop_assert_eq!(fast, by_chrono(&s), "{}", s);
            }
            prop_assert_eq!(parse_iso(&s), by_chrono(&s).or_else(|| parse_iso(&format!(" {s}"))));
        }
    }

    #[test]
    fn the_fast_path_reads_known_instants() {
        assert_eq!(utc_millis(b"1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            utc_millis(b"2026-04-18T13:19:12.767Z"),
            by_chrono("2026-04-18T13:19:12.767Z")
        );
        assert_eq!(
            utc_millis(b"2024-02-29T23:59:59Z"),
            by_chrono("2024-02-29T23:59:59Z")
        );
        assert_eq!(utc_millis(b"1969-12-31T23:59:59.999Z"), Some(-1));
        assert_eq!(utc_millis(b"2023-02-29T00:00:00Z"), None);
        assert_eq!(utc_millis(b"2026-04-18T13:19:60.000Z"), None);
    }

    #[test]
    fn epoch_units() {
        let ms = 1_782_259_200_000;
        assert_eq!(epoch_ms(1_782_259_200), Some(ms));
        assert_eq!(epoch_ms(ms), Some(ms));
        assert_eq!(epoch_ms(ms * 1000), Some(ms));
        assert_eq!(epoch_ms(ms * 1_000_000), Some(ms));
        assert_eq!(epoch_ms(0), None);
        assert_eq!(any_ms(None, Some("2026-06-24 00:00:00")), Some(ms));
    }

    #[test]
    fn epoch_numbers_in_any_unit() {
        let ms = 1_773_128_640_587;
        assert_eq!(from_epoch_number(1_773_128_640.587_468_1), Some(ms));
        assert_eq!(from_epoch_number(ms as f64), Some(ms));
        assert_eq!(from_epoch_number(ms as f64 * 1e3), Some(ms));
        assert_eq!(from_epoch_number(-1.0), None);
        assert_eq!(parse_any("1773128640.5874681"), Some(ms));
        assert_eq!(parse_any("2026-03-10T07:44:00.587Z"), Some(ms));
    }

    #[test]
    fn round_trips_claude_timestamps() {
        let ms = parse_iso("2026-04-18T13:19:12.767Z").unwrap();
        assert_eq!(format_iso(ms), "2026-04-18T13:19:12.767Z");
        assert_eq!(parse_iso("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_iso("2026-04-18"),
            parse_iso("2026-04-18T00:00:00.000Z")
        );
        assert_eq!(
            parse_iso("2026-04-18T15:19:12.767+02:00"),
            parse_iso("2026-04-18T13:19:12.767Z")
        );
        assert_eq!(parse_iso("2026-04-18T13:19:12.767123Z"), Some(ms));
        assert_eq!(parse_iso("not a date"), None);
        assert_eq!(parse_iso("2026-13-01"), None);
    }

    #[test]
    fn completes_short_forms_and_checks_the_calendar() {
        let at = |s| parse_iso(s).unwrap();
        assert_eq!(at("2026-04-18T13:19"), at("2026-04-18T13:19:00Z"));
        assert_eq!(
            at("2026-04-18 13:19:12,5+0200"),
            at("2026-04-18T11:19:12.500Z")
        );
        assert_eq!(at("2026-04-18t13:19:60z"), at("2026-04-18T13:20:00Z"));
        assert_eq!(at("2024-02-29"), at("2024-03-01") - 86_400_000);
        assert_eq!(parse_iso("2026-02-31"), None);
        assert_eq!(parse_iso("2026-04-18T13:19.5Z"), None);
        assert_eq!(parse_iso("2026-04-18T13:19:12.Z"), None);
        assert_eq!(parse_iso("2026-04-18T13:19:12+02:60"), None);
        assert_eq!(format_iso(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn parses_relative_ages() {
        assert_eq!(parse_relative("7d"), Some(7 * 86_400_000));
        assert_eq!(parse_relative("12h"), Some(12 * 3_600_000));
        assert_eq!(parse_relative("d"), None);
        assert_eq!(parse_relative("5y"), None);
    }
}
