//! Output budgets: every tool takes `max_chars` and never returns more characters of JSON
//! text than that, so no call can flood the agent's context. Long texts are cut
//! deterministically (head and tail kept, the cut marked) with what is needed to read on.
//! Lengths are counted as the JSON text counts them: escapes included.
use super::ToolError;

/// Hard cap on `max_chars` for every tool.
pub const HARD_CAP: usize = 60_000;
/// Smallest `max_chars` accepted.
pub const MIN_CHARS: usize = 500;
/// Default `max_chars` of search-like tools.
pub const SEARCH_DEFAULT: usize = 6_000;
/// Default `max_chars` of read-like tools.
pub const READ_DEFAULT: usize = 20_000;
/// Longest echo of an argument (a query, a path) in a result.
pub const ECHO_CHARS: usize = 200;

/// Validates `max_chars`: at least [`MIN_CHARS`], capped at [`HARD_CAP`].
pub fn check_max_chars(value: Option<i64>, default: usize) -> Result<usize, ToolError> {
    match value {
        None => Ok(default),
        Some(v) if v < MIN_CHARS as i64 => Err(ToolError::new(format!(
            "`max_chars` must be at least {MIN_CHARS} (got {v}); it is capped at {HARD_CAP}."
        ))),
        Some(v) => Ok((v as usize).min(HARD_CAP)),
    }
}

/// Characters of a value's JSON text.
pub fn json_len<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_string(value).map_or(usize::MAX, |s| s.chars().count())
}

/// Appends `rows` to `out` while the response stays within `max_chars`, `used` being the
/// characters already taken. Returns true when a row had to be left out.
pub fn fill<T: serde::Serialize>(
    rows: impl IntoIterator<Item = T>,
    out: &mut Vec<T>,
    used: &mut usize,
    max_chars: usize,
) -> bool {
    for row in rows {
        let len = json_len(&row) + 1;
        if *used + len > max_chars {
            return true;
        }
        *used += len;
        out.push(row);
    }
    false
}

/// Where the next page starts when `offset + shown` rows of `total` were seen.
pub fn next_offset(offset: usize, shown: usize, total: usize) -> Option<usize> {
    (offset + shown < total).then_some(offset + shown)
}

/// Characters `c` takes inside a JSON string.
fn json_cost(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        _ => 1,
    }
}

/// `s` cut to at most `max` characters, marked with `…` when cut (for echoed arguments).
pub fn clip(s: &str, max: usize) -> String {
    crate::transcript::tools::cut_chars(s, max)
}

/// A window of a text made of consecutive fields (e.g. prompt then reply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windowed {
    pub fields: Vec<String>,
    /// Whether anything was left out.
    pub truncated: bool,
    /// Character offset (into the concatenated fields) to pass back to read on.
    pub next_offset: Option<usize>,
    /// Characters of the concatenated fields.
    pub total_chars: usize,
}

/// Room the omission marker needs.
const MARKER_ROOM: usize = 120;

/// Cuts the concatenation of `fields` so that the fields' JSON text takes at most `budget`
/// characters. Without `offset`, a text that does not fit keeps its head (2/3) and tail (1/3)
/// with a marker where the middle was cut, and `next_offset` says where the head stopped; with
/// an offset it returns the window starting there. Positions count characters of the text.
pub fn window(fields: &[&str], offset: Option<usize>, budget: usize) -> Windowed {
    let chars: Vec<Vec<char>> = fields.iter().map(|f| f.chars().collect()).collect();
    let flat: Vec<char> = chars.iter().flatten().copied().collect();
    let total = flat.len();
    let bounds: Vec<usize> = chars
        .iter()
        .scan(0, |pos, c| {
            *pos += c.len();
            Some(*pos)
        })
        .collect();
    // JSON cost of flat[..i]
    let mut cost = Vec::with_capacity(total + 1);
    cost.push(0usize);
    for &c in &flat {
        cost.push(cost.last().copied().unwrap_or(0) + json_cost(c));
    }
    // the fields restricted to [from, to) of the flat text, plus an optional marker at `cut`
    let split = |ranges: &[(usize, usize)], marker: Option<(usize, &str)>| -> Vec<String> {
        let mut out = Vec::with_capacity(chars.len());
        let mut start = 0;
        for &end in &bounds {
            let mut s = String::new();
            for &(a, b) in ranges {
                let (a, b) = (a.clamp(start, end), b.clamp(start, end));
                s.extend(&flat[a..b]);
                if let Some((at, m)) = marker {
                    if b == at && at >= start && (at < end || end == total) && a <= at {
                        s.push_str(m);
                    }
                }
            }
            out.push(s);
            start = end;
        }
        out
    };
    let fits_from = |from: usize, room: usize| -> usize {
        // last index `to` with cost[to] - cost[from] <= room
        let limit = cost[from] + room;
        cost.partition_point(|&c| c <= limit)
            .saturating_sub(1)
            .max(from)
    };
    if offset.is_none() && cost[total] <= budget {
        let fields = fields.iter().map(|f| (*f).to_owned()).collect();
        return Windowed {
            fields,
            truncated: false,
            next_offset: None,
            total_chars: total,
        };
    }
    if let Some(offset) = offset {
        let from = offset.min(total);
        let to = fits_from(from, budget);
        let fields = split(&[(from, to)], None);
        let truncated = from > 0 || to < total;
        return Windowed {
            fields,
            truncated,
            next_offset: (to < total).then_some(to),
            total_chars: total,
        };
    }
    let room = budget.saturating_sub(MARKER_ROOM);
    let head_end = fits_from(0, room * 2 / 3);
    // tail: the longest suffix that fits in what is left
    let left = room.saturating_sub(cost[head_end]);
    let tail_start = cost
        .partition_point(|&c| c < cost[total].saturating_sub(left))
        .max(head_end);
    let marker = format!(
        "\n[… {} characters omitted; call again with char_offset={} to read on …]\n",
        tail_start - head_end,
        head_end
    );
    let fields = split(
        &[(0, head_end), (tail_start, total)],
        Some((head_end, &marker)),
    );
    Windowed {
        fields,
        truncated: true,
        next_offset: Some(head_end),
        total_chars: total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_chars(fields: &[String]) -> usize {
        fields.iter().map(|f| json_len(f) - 2).sum()
    }

    #[test]
    fn small_text_is_untouched() {
        let w = window(&["ab", "cd"], None, 10);
        assert_eq!(w.fields, ["ab", "cd"]);
        assert!(!w.truncated);
    }

    #[test]
    fn keeps_head_and_tail_and_pages_on() {
        let user = "u".repeat(100);
        let asst = format!("{}{}", "a".repeat(850), "Z".repeat(50));
        let w = window(&[&user, &asst], None, 420);
        assert!(w.truncated);
        assert_eq!(w.next_offset, Some(200));
        assert_eq!(w.fields[0], "u".repeat(100));
        assert!(w.fields[1].starts_with(&"a".repeat(100)));
        assert!(w.fields[1].contains("char_offset=200"));
        assert!(w.fields[1].ends_with(&"Z".repeat(50)));
        assert!(json_chars(&w.fields) <= 420);
        let next = window(&[&user, &asst], Some(200), 300);
        assert_eq!(next.fields[0], "");
        assert_eq!(next.fields[1], "a".repeat(300));
        assert_eq!(next.next_offset, Some(500));
        let last = window(&[&user, &asst], Some(900), 300);
        assert_eq!(
            last.fields[1],
            format!("{}{}", "a".repeat(50), "Z".repeat(50))
        );
        assert_eq!(last.next_offset, None);
    }

    #[test]
    fn escapes_and_multibyte_text_stay_within_budget_and_page_losslessly() {
        let text: String = (0..3000)
            .map(|i| ['"', 'é', '\n', '日', 'x', '\u{1}'][i % 6])
            .collect();
        let w = window(&[&text], None, 800);
        assert!(json_chars(&w.fields) <= 800, "{}", json_chars(&w.fields));
        let head: String = text.chars().take(w.next_offset.unwrap()).collect();
        assert!(w.fields[0].starts_with(&head));
        let mut seen = head;
        let mut at = w.next_offset.unwrap();
        loop {
            let w = window(&[&text], Some(at), 700);
            assert!(json_chars(&w.fields) <= 700);
            seen.push_str(&w.fields[0]);
            match w.next_offset {
                Some(n) => at = n,
                None => break,
            }
        }
        assert_eq!(seen, text);
    }
}
