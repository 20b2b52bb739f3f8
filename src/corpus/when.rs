//! Time in a query: the dates and relative times it names (`3 June 2023`, `on May 3, 2023`,
//! `8th December, 2023`, `2026-11-30`, `May 2023`, `in May`, `in 2023`, `yesterday`, `today`,
//! `last week`, `this month`, `last year`) read as a span of UTC days, and the query without
//! those words. The span raises the turns from that time (a soft prior, applied by `query`);
//! it filters nothing, and the words are not also matched as text. Relative times count from
//! now: `CONVERSATION_SEARCH_NOW` (an ISO 8601 date or time, read per search) sets it for tests.
use crate::util::time::{now_ms, parse_iso};
use chrono::{Datelike, Duration, NaiveDate};

/// What a query says about time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TimeInQuery {
    /// Epoch-ms span `[start, end)` the query names.
    pub start: i64,
    pub end: i64,
    /// The query without the words that named it.
    pub rest: String,
    /// The words as written (for the response's note).
    pub words: String,
}

/// Now, in epoch ms: `CONVERSATION_SEARCH_NOW` when set to an ISO 8601 date or time, else the
/// clock.
pub(crate) fn now() -> i64 {
    std::env::var("CONVERSATION_SEARCH_NOW")
        .ok()
        .and_then(|v| {
            let v = v.trim();
            parse_iso(v).or_else(|| day_start(NaiveDate::parse_from_str(v, "%Y-%m-%d").ok()?))
        })
        .unwrap_or_else(now_ms)
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words after which a lone month or year names a time (`in May`, `during 2023`).
const LEADS: [&str; 6] = ["in", "during", "of", "since", "last", "this"];

/// Words dropped with a time right after them (`on 3 June`, `in May`, `as of May 2023`,
/// `last May`).
const PREPOSITIONS: [&str; 7] = ["on", "in", "during", "of", "since", "last", "this"];

/// A word of the query: lowercased, with its byte span.
struct Word {
    text: String,
    start: usize,
    end: usize,
}

/// The query's words: runs of letters and digits, and ISO dates (`2026-11-30`) whole.
fn words(q: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let b = q.as_bytes();
    let mut i = 0;
    while i < q.len() {
        let c = q[i..].chars().next().unwrap_or(' ');
        if !c.is_alphanumeric() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        let iso = b.len() >= i + 10
            && b[i..i + 10].iter().enumerate().all(|(k, &x)| match k {
                4 | 7 => x == b'-',
                _ => x.is_ascii_digit(),
            });
        if iso {
            i += 10;
        } else {
            while let Some(c) = q[i..].chars().next().filter(|c| c.is_alphanumeric()) {
                i += c.len_utf8();
            }
        }
        out.push(Word {
            text: q[start..i].to_lowercase(),
            start,
            end: i,
        });
    }
    out
}

fn month(w: &str) -> Option<u32> {
    MONTHS
        .iter()
        .position(|m| *m == w || (w.len() == 3 && m.starts_with(w) && w != "may"))
        .map(|i| i as u32 + 1)
}

/// A day of the month: `3`, `03`, `3rd`, `8th`.
fn day(w: &str) -> Option<u32> {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") || digits.is_empty() || digits.len() > 2 {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn year(w: &str) -> Option<i32> {
    (w.len() == 4)
        .then(|| w.parse().ok())
        .flatten()
        .filter(|y| (1970..=2100).contains(y))
}

fn day_start(d: NaiveDate) -> Option<i64> {
    Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis())
}

/// The span of days `[from, to)`.
fn span(from: NaiveDate, to: NaiveDate) -> Option<(i64, i64)> {
    Some((day_start(from)?, day_start(to)?))
}

fn month_span(y: i32, m: u32) -> Option<(i64, i64)> {
    let from = NaiveDate::from_ymd_opt(y, m, 1)?;
    let to = if m == 12 {
        NaiveDate::from_ymd_opt(y + 1, 1, 1)?
    } else {
        NaiveDate::from_ymd_opt(y, m + 1, 1)?
    };
    span(from, to)
}

fn one_day(d: NaiveDate) -> Option<(i64, i64)> {
    span(d, d.succ_opt()?)
}

/// The latest year, up to `today`'s, in which month `m` (and day `d`) has begun.
fn latest_year(today: NaiveDate, m: u32, d: u32) -> i32 {
    let y = today.year();
    match NaiveDate::from_ymd_opt(y, m, d) {
        Some(date) if date > today => y - 1,
        _ => y,
    }
}

/// The time named by the words at `i..`, and how many words it takes.
fn time_at(w: &[Word], i: usize, today: NaiveDate) -> Option<((i64, i64), usize)> {
    let at = |k: usize| w.get(i + k).map(|x| x.text.as_str());
    let first = at(0)?;
    let before = i.checked_sub(1).map(|k| w[k].text.as_str());
    let led = before.is_some_and(|b| LEADS.contains(&b));
    // 2026-11-30
    if first.len() == 10 && first.as_bytes()[4] == b'-' {
        let date = NaiveDate::parse_from_str(first, "%Y-%m-%d").ok()?;
        return Some((one_day(date)?, 1));
    }
    match first {
        "yesterday" => return Some((one_day(today.pred_opt()?)?, 1)),
        "today" => return Some((one_day(today)?, 1)),
        "last" | "this" => return Some((relative(first == "last", at(1)?, today)?, 2)),
        _ => {}
    }
    // 3 June 2023, 3rd of June, 2023, 3 June
    if let Some(d) = day(first) {
        return day_first(d, &at, today);
    }
    // June 3, 2023; June 2023; June 3; (in) June
    if let Some(m) = month(first) {
        // "may" is a verb too, and a lone month a name: a lone month needs a lead word
        let named =
            first != "may" || led || at(1).is_some_and(|x| day(x).is_some() || year(x).is_some());
        if !named {
            return None;
        }
        return month_first(m, led, &at, today);
    }
    // in 2023
    if let Some(y) = year(first).filter(|_| led) {
        let from = NaiveDate::from_ymd_opt(y, 1, 1)?;
        return Some((span(from, NaiveDate::from_ymd_opt(y + 1, 1, 1)?)?, 1));
    }
    None
}

/// `last week`, `this month`, `last year`, …: the span of the `unit` (`week`, `month`,
/// `year`) `today` is in, or the one before it when `last`.
fn relative(last: bool, unit: &str, today: NaiveDate) -> Option<(i64, i64)> {
    let back = i32::from(last);
    match unit {
        "week" => {
            let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
            let from = monday - Duration::weeks(i64::from(back));
            span(from, from + Duration::weeks(1))
        }
        "month" => {
            let (y, m) = match (back, today.month()) {
                (0, m) => (today.year(), m),
                (_, 1) => (today.year() - 1, 12),
                (_, m) => (today.year(), m - 1),
            };
            month_span(y, m)
        }
        "year" => {
            let y = today.year() - back;
            span(
                NaiveDate::from_ymd_opt(y, 1, 1)?,
                NaiveDate::from_ymd_opt(y + 1, 1, 1)?,
            )
        }
        _ => None,
    }
}

/// A date that starts with its day `d` (`3 June 2023`, `3rd of June, 2023`, `3 June`), the
/// words read by `at`; without a year, the latest year up to `today`'s.
fn day_first<'w>(
    d: u32,
    at: &impl Fn(usize) -> Option<&'w str>,
    today: NaiveDate,
) -> Option<((i64, i64), usize)> {
    let of = usize::from(at(1) == Some("of"));
    let m = month(at(1 + of)?)?;
    if let Some(y) = at(2 + of).and_then(year) {
        return Some((one_day(NaiveDate::from_ymd_opt(y, m, d)?)?, 3 + of));
    }
    // `top 3 may be wrong`: a day and "may" need a year
    if m == 5 && of == 0 {
        return None;
    }
    let y = latest_year(today, m, d);
    Some((one_day(NaiveDate::from_ymd_opt(y, m, d)?)?, 2 + of))
}

/// A date or month that starts with its month `m` (`June 3, 2023`, `June 2023`, `June 3`,
/// `in June`), the words read by `at`; a lone month only after a lead word (`led`).
fn month_first<'w>(
    m: u32,
    led: bool,
    at: &impl Fn(usize) -> Option<&'w str>,
    today: NaiveDate,
) -> Option<((i64, i64), usize)> {
    if let Some(d) = at(1).and_then(day) {
        if let Some(y) = at(2).and_then(year) {
            return Some((one_day(NaiveDate::from_ymd_opt(y, m, d)?)?, 3));
        }
        let y = latest_year(today, m, d);
        return Some((one_day(NaiveDate::from_ymd_opt(y, m, d)?)?, 2));
    }
    if let Some(y) = at(1).and_then(year) {
        return Some((month_span(y, m)?, 2));
    }
    if !led {
        return None;
    }
    Some((month_span(latest_year(today, m, 1), m)?, 1))
}

/// The first time `query` names, relative times counting from `now` (epoch ms); `None` when
/// it names none, or nothing but the time (then its words are all there is to search for).
pub(crate) fn read(query: &str, now: i64) -> Option<TimeInQuery> {
    let today = chrono::DateTime::from_timestamp_millis(now)?.date_naive();
    let w = words(query);
    for i in 0..w.len() {
        let Some(((start, end), n)) = time_at(&w, i, today) else {
            continue;
        };
        // a preposition right before the time goes with it
        let from = match i.checked_sub(1) {
            Some(p) if PREPOSITIONS.contains(&w[p].text.as_str()) => p,
            _ => i,
        };
        let (a, b) = (w[from].start, w[i + n - 1].end);
        let rest = format!("{} {}", &query[..a], &query[b..]);
        if words(&rest).is_empty() {
            return None;
        }
        return Some(TimeInQuery {
            start,
            end,
            rest: rest.split_whitespace().collect::<Vec<_>>().join(" "),
            words: query[w[i].start..b].to_owned(),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wednesday 2 December 2026, noon UTC.
    const NOW: i64 = 1_796_212_800_000;

    fn day(y: i32, m: u32, d: u32) -> i64 {
        day_start(NaiveDate::from_ymd_opt(y, m, d).expect("date")).expect("ms")
    }

    fn read_at(q: &str) -> Option<(i64, i64, String)> {
        read(q, NOW).map(|t| (t.start, t.end, t.rest))
    }

    #[test]
    fn dates_as_people_write_them_name_their_day() {
        let june3 = (day(2023, 6, 3), day(2023, 6, 4));
        for q in [
            "pet name on 3 June 2023",
            "pet name on 3 June, 2023",
            "pet name on June 3, 2023",
            "pet name on 3rd of June, 2023",
            "pet name on 2023-06-03",
            "pet name on June 3,2023",
        ] {
            let (s, e, rest) = read_at(q).unwrap_or_else(|| panic!("{q}"));
            assert_eq!((s, e), june3, "{q}");
            assert_eq!(rest, "pet name", "{q}");
        }
    }

    #[test]
    fn months_years_and_relative_times_name_their_span() {
        assert_eq!(
            read_at("camping in July 2023"),
            Some((day(2023, 7, 1), day(2023, 8, 1), "camping".into()))
        );
        assert_eq!(
            read_at("camping in May"),
            Some((day(2026, 5, 1), day(2026, 6, 1), "camping".into()))
        );
        assert_eq!(
            read_at("the deal in December"),
            Some((day(2026, 12, 1), day(2027, 1, 1), "the deal".into()))
        );
        assert_eq!(
            read_at("the release on 30 December"),
            Some((day(2025, 12, 30), day(2025, 12, 31), "the release".into()))
        );
        assert_eq!(
            read_at("beach trips in 2023?"),
            Some((day(2023, 1, 1), day(2024, 1, 1), "beach trips ?".into()))
        );
        assert_eq!(
            read_at("what broke yesterday"),
            Some((day(2026, 12, 1), day(2026, 12, 2), "what broke".into()))
        );
        assert_eq!(
            read_at("the cache bug last week"),
            Some((day(2026, 11, 23), day(2026, 11, 30), "the cache bug".into()))
        );
        assert_eq!(
            read_at("road trip last year"),
            Some((day(2025, 1, 1), day(2026, 1, 1), "road trip".into()))
        );
        assert_eq!(
            read_at("flaky test last month"),
            Some((day(2026, 11, 1), day(2026, 12, 1), "flaky test".into()))
        );
    }

    #[test]
    fn words_that_only_look_like_times_are_left_alone() {
        for q in [
            "what may cause the panic",
            "port 2023 is taken",
            "march through the list",
            "last error",
            "2026-13-45 is no date",
            "yesterday",
            "the top 3 may be wrong",
            "what did Jan say",
        ] {
            assert_eq!(read_at(q), None, "{q}");
        }
    }
}
