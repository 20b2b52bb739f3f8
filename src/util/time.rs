//! ISO-8601 timestamps: parsing transcript timestamps to epoch milliseconds and formatting back.
//!
//! Transcripts write UTC timestamps like `2026-04-18T13:19:12.767Z`; some formats use epoch
//! milliseconds. We keep one representation (`i64` milliseconds since the Unix epoch) and format
//! it back as `YYYY-MM-DDTHH:MM:SS.mmmZ`, which sorts lexicographically like it sorts in time.

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian), after Howard Hinnant.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, c| acc * 10 + u32::from(c - b'0')))
}

/// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff]]` with an optional `Z` or `±HH:MM` offset
/// (a missing offset means UTC). Returns epoch milliseconds.
pub fn parse_iso(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = i64::from(digits(&b[0..4])?);
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut ms = days_from_civil(year, month, day) * 86_400_000;
    let mut rest = &b[10..];
    if rest.is_empty() {
        return Some(ms);
    }
    if rest[0] != b'T' && rest[0] != b't' && rest[0] != b' ' {
        return None;
    }
    rest = &rest[1..];
    if rest.len() < 5 || rest[2] != b':' {
        return None;
    }
    let hour = digits(&rest[0..2])?;
    let minute = digits(&rest[3..5])?;
    if hour > 23 || minute > 59 {
        return None;
    }
    ms += i64::from(hour * 3_600_000 + minute * 60_000);
    rest = &rest[5..];
    if rest.len() >= 3 && rest[0] == b':' {
        let sec = digits(&rest[1..3])?;
        if sec > 60 {
            return None;
        }
        ms += i64::from(sec * 1000);
        rest = &rest[3..];
        if !rest.is_empty() && (rest[0] == b'.' || rest[0] == b',') {
            let frac_len = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if frac_len == 0 {
                return None;
            }
            let frac = &rest[1..1 + frac_len];
            let mut millis = 0u32;
            for i in 0..3 {
                millis = millis * 10 + frac.get(i).map_or(0, |c| u32::from(c - b'0'));
            }
            ms += i64::from(millis);
            rest = &rest[1 + frac_len..];
        }
    }
    match rest {
        [] | [b'Z'] | [b'z'] => Some(ms),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] | [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
            let off = i64::from(digits(&[*h1, *h2])? * 60 + digits(&[*m1, *m2])?) * 60_000;
            Some(if *sign == b'+' { ms - off } else { ms + off })
        }
        _ => None,
    }
}

/// Epoch milliseconds from an epoch number in whatever unit an agent wrote it, told apart by
/// magnitude: seconds (possibly fractional), milliseconds, microseconds or nanoseconds.
pub fn from_epoch_number(v: f64) -> Option<i64> {
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
pub fn parse_any(s: &str) -> Option<i64> {
    parse_iso(s).or_else(|| s.trim().parse::<f64>().ok().and_then(from_epoch_number))
}

/// Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, rem) = (rem / 3_600_000, rem % 3_600_000);
    let (min, rem) = (rem / 60_000, rem % 60_000);
    let (s, millis) = (rem / 1000, rem % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{millis:03}Z")
}

/// An epoch timestamp in seconds, milliseconds, microseconds or nanoseconds (told apart by
/// magnitude: any of them for a date between 1973 and 5138) as epoch milliseconds.
pub fn epoch_ms(v: i64) -> Option<i64> {
    match v {
        ..=0 => None,
        1..100_000_000_000 => v.checked_mul(1000),
        100_000_000_000..100_000_000_000_000 => Some(v),
        100_000_000_000_000..100_000_000_000_000_000 => Some(v / 1000),
        _ => Some(v / 1_000_000),
    }
}

/// A timestamp as a number in any epoch unit or as an ISO-8601 string, in epoch milliseconds.
pub fn any_ms(number: Option<i64>, text: Option<&str>) -> Option<i64> {
    number
        .and_then(epoch_ms)
        .or_else(|| text.and_then(parse_iso))
}

/// Current wall-clock time in epoch milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Parses a relative age like `7d`, `12h`, `30m`, `45s`, `2w` into milliseconds.
pub fn parse_relative(s: &str) -> Option<i64> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn parses_relative_ages() {
        assert_eq!(parse_relative("7d"), Some(7 * 86_400_000));
        assert_eq!(parse_relative("12h"), Some(12 * 3_600_000));
        assert_eq!(parse_relative("d"), None);
        assert_eq!(parse_relative("5y"), None);
    }
}
