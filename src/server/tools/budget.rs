//! Output budgets: every tool takes `max_chars` and never returns more JSON than that, so no
//! call can flood the agent's context. Long texts are cut deterministically (head and tail kept,
//! the cut marked) with what is needed to read on.
use super::ToolError;

/// Hard cap on `max_chars` for every tool.
pub const HARD_CAP: usize = 60_000;
/// Smallest `max_chars` accepted.
pub const MIN_CHARS: usize = 500;
/// Default `max_chars` of search-like tools.
pub const SEARCH_DEFAULT: usize = 6_000;
/// Default `max_chars` of read-like tools.
pub const READ_DEFAULT: usize = 20_000;

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

/// Length of a value's JSON text.
pub fn json_len<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_string(value).map_or(usize::MAX, |s| s.len())
}

/// A window of a text made of consecutive fields (e.g. prompt then reply), in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windowed {
    pub fields: Vec<String>,
    /// Whether anything was left out.
    pub truncated: bool,
    /// Character offset (into the concatenated fields) to pass back to read on.
    pub next_offset: Option<usize>,
    pub total_chars: usize,
}

/// Cuts the concatenation of `fields` to about `budget` characters of JSON text.
/// At `offset` 0 a text that does not fit keeps its head (2/3) and tail (1/3) with a marker
/// where the middle was cut; at a later offset it returns the window starting there.
pub fn window(fields: &[&str], offset: usize, budget: usize) -> Windowed {
    let chars: Vec<Vec<char>> = fields.iter().map(|f| f.chars().collect()).collect();
    let total: usize = chars.iter().map(Vec::len).sum();
    // JSON escaping can grow text; keep a margin.
    let budget = budget.max(1);
    let slice = |from: usize, to: usize| -> Vec<String> {
        let mut pos = 0;
        chars
            .iter()
            .map(|c| {
                let (a, b) = (from.clamp(pos, pos + c.len()), to.clamp(pos, pos + c.len()));
                pos += c.len();
                c[a - (pos - c.len())..b - (pos - c.len())].iter().collect()
            })
            .collect()
    };
    if offset == 0 && total <= budget {
        return Windowed {
            fields: fields.iter().map(|f| (*f).to_owned()).collect(),
            truncated: false,
            next_offset: None,
            total_chars: total,
        };
    }
    if offset > 0 {
        let from = offset.min(total);
        let to = (from + budget).min(total);
        let truncated = to < total || from > 0;
        return Windowed {
            fields: slice(from, to),
            truncated,
            next_offset: (to < total).then_some(to),
            total_chars: total,
        };
    }
    let head = budget * 2 / 3;
    let tail = budget.saturating_sub(head);
    let cut_from = head;
    let cut_to = total - tail;
    let marker = format!(
        "\n[… {} characters omitted; call again with char_offset={} to read on …]\n",
        cut_to - cut_from,
        cut_from
    );
    let mut pos = 0;
    let out: Vec<String> = chars
        .iter()
        .map(|c| {
            let start = pos;
            let end = pos + c.len();
            pos = end;
            let mut s = String::new();
            let keep_head = cut_from.clamp(start, end) - start;
            s.extend(&c[..keep_head]);
            if (start..end).contains(&cut_from) || (cut_from < start && cut_to > start) {
                s.push_str(&marker);
            }
            let keep_tail_from = cut_to.clamp(start, end) - start;
            if keep_tail_from < c.len() && keep_tail_from >= keep_head {
                s.extend(&c[keep_tail_from..]);
            }
            s
        })
        .collect();
    Windowed {
        fields: out,
        truncated: true,
        next_offset: Some(cut_from),
        total_chars: total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_text_is_untouched() {
        let w = window(&["ab", "cd"], 0, 10);
        assert_eq!(w.fields, ["ab", "cd"]);
        assert!(!w.truncated);
    }

    #[test]
    fn keeps_head_and_tail_and_pages_on() {
        let user = "u".repeat(100);
        let asst = format!("{}{}", "a".repeat(850), "Z".repeat(50));
        let w = window(&[&user, &asst], 0, 300);
        assert!(w.truncated);
        assert_eq!(w.next_offset, Some(200));
        assert_eq!(w.fields[0], "u".repeat(100));
        assert!(w.fields[1].starts_with(&"a".repeat(100)));
        assert!(w.fields[1].contains("char_offset=200"));
        assert!(w.fields[1].ends_with(&"Z".repeat(50)));
        let next = window(&[&user, &asst], 200, 300);
        assert_eq!(next.fields[0], "");
        assert_eq!(next.fields[1], "a".repeat(300));
        assert_eq!(next.next_offset, Some(500));
        let last = window(&[&user, &asst], 900, 300);
        assert_eq!(
            last.fields[1],
            format!("{}{}", "a".repeat(50), "Z".repeat(50))
        );
        assert_eq!(last.next_offset, None);
    }
}
