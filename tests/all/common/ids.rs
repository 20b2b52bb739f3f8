//! Unique ids (uuid, message, tool-use) and the ISO-8601 clock used by the fixture writers.

use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(1);

pub(super) fn next_n() -> u64 {
    COUNTER.fetch_add(1, Ordering::SeqCst)
}

/// A fresh UUID-shaped id, unique within the test process (and across processes via the pid).
pub fn new_uuid() -> String {
    let n = next_n();
    format!(
        "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
        std::process::id(),
        (n >> 24) & 0xffff,
        (n >> 12) & 0xfff,
        n & 0xfff,
        n
    )
}

/// A fresh `msg_…` API message id.
pub fn new_msg_id() -> String {
    format!(
        "msg_01T{:06}{:010}",
        std::process::id() % 1_000_000,
        next_n()
    )
}

/// A fresh `toolu_…` tool-use id.
pub fn new_tool_id() -> String {
    format!(
        "toolu_01X{:06}{:010}",
        std::process::id() % 1_000_000,
        next_n()
    )
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.mmm]Z` into milliseconds since the epoch.
pub fn parse_iso_ms(s: &str) -> i64 {
    fn bad<T>(s: &str) -> T {
        panic!("bad timestamp {s:?} (want YYYY-MM-DDTHH:MM:SS[.mmm]Z)")
    }
    let num = |x: &str| -> i64 { x.parse().unwrap_or_else(|_| bad(s)) };
    let body = s.strip_suffix('Z').unwrap_or_else(|| bad(s));
    let (date, time) = body.split_once('T').unwrap_or_else(|| bad(s));
    let d: Vec<i64> = date.split('-').map(num).collect();
    let (hms, ms) = time.split_once('.').unwrap_or((time, "0"));
    let t: Vec<i64> = hms.split(':').map(num).collect();
    if d.len() != 3 || t.len() != 3 {
        bad::<()>(s);
    }
    let ms = num(&format!("{ms:0<3}")[..3]);
    let days = days_from_civil(d[0], d[1], d[2]);
    ((days * 24 + t[0]) * 60 + t[1]) * 60_000 + t[2] * 1000 + ms
}

/// Formats milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_iso_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

/// Default start of every writer's clock.
pub const DEFAULT_START: &str = "2026-05-01T10:00:00.000Z";
