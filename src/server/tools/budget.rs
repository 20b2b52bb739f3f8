//! Output budgets: every tool takes `max_chars` and never returns more characters of JSON
//! text than that, so no call can flood the agent's context. Pages always show at least one row
//! (shortened if it must be) so that paging advances; long texts keep the head and the tail of
//! each field around a marked cut that says where to read on. Lengths are counted as the JSON
//! text counts them: escapes included.
use super::ToolError;
use serde::Serialize;

/// Hard cap on `max_chars` for every tool.
pub(crate) const HARD_CAP: usize = 60_000;
/// Smallest `max_chars` accepted.
pub(crate) const MIN_CHARS: usize = 500;
/// Default `max_chars` of search-like tools.
pub(crate) const SEARCH_DEFAULT: usize = 6_000;
/// Default `max_chars` of read-like tools.
pub(crate) const READ_DEFAULT: usize = 20_000;
/// Longest echo of an argument (a query, a path) in a result.
pub(crate) const ECHO_CHARS: usize = 200;

/// Validates `max_chars`: at least [`MIN_CHARS`], capped at [`HARD_CAP`].
pub(crate) fn check_max_chars(value: Option<i64>, default: usize) -> Result<usize, ToolError> {
    match value {
        None => Ok(default),
        Some(v) if v < MIN_CHARS as i64 => Err(ToolError::new(format!(
            "`max_chars` must be at least {MIN_CHARS} (got {v}); it is capped at {HARD_CAP}."
        ))),
        Some(v) => Ok((v as usize).min(HARD_CAP)),
    }
}

/// Characters of a value's JSON text.
pub(crate) fn json_len<T: Serialize>(value: &T) -> usize {
    serde_json::to_string(value).map_or(usize::MAX, |s| s.chars().count())
}

/// How long an echoed argument may be under `max_chars`: short budgets echo less.
pub(crate) fn echo_chars(max_chars: usize) -> usize {
    (max_chars / 10).clamp(24, ECHO_CHARS)
}

/// How many of `rows` fit in a page of at most `max_chars`, where `envelope(n)` is the JSON
/// length of the response without its rows when `n` rows are shown (its notes and offsets
/// depend on `n`). Rows sit in one array: each adds its length plus a comma.
pub(crate) fn fitting<T: Serialize>(
    rows: &[T],
    max_chars: usize,
    envelope: impl Fn(usize) -> usize,
) -> usize {
    let mut rows_len = 0usize;
    let mut n = 0;
    for row in rows {
        let add = json_len(row) + usize::from(n > 0);
        if envelope(n + 1) + rows_len + add > max_chars {
            break;
        }
        rows_len += add;
        n += 1;
    }
    n
}

/// Room (JSON characters) left for a single row when `envelope` characters are taken.
pub(crate) fn room_for_one(max_chars: usize, envelope: usize) -> usize {
    max_chars.saturating_sub(envelope)
}

/// Where the next page starts when `offset + shown` rows of `total` were seen.
pub(crate) fn next_offset(offset: usize, shown: usize, total: usize) -> Option<usize> {
    (offset + shown < total).then_some(offset + shown)
}

/// Characters `c` takes inside a JSON string.
pub(crate) fn json_cost(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        _ => 1,
    }
}

/// `s` cut to at most `max` characters, marked with `…` when cut (for echoed arguments).
pub(crate) fn clip(s: &str, max: usize) -> String {
    crate::transcript::tools::cut_chars(s, max)
}

/// `s` cut so that its JSON string content takes at most `room` characters (`…` marks a cut).
pub(crate) fn clip_json(s: &str, room: usize) -> String {
    let total: usize = s.chars().map(json_cost).sum();
    if total <= room {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut used = 1; // the ellipsis
    for c in s.chars() {
        used += json_cost(c);
        if used > room {
            break;
        }
        out.push(c);
    }
    if room > 0 {
        out.push('…');
    }
    out
}

/// `n` with thousands separators (`12,345`).
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A window of a text made of consecutive fields (e.g. prompt then reply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Windowed {
    pub fields: Vec<String>,
    /// Whether anything was left out.
    pub truncated: bool,
    /// Character offset (into the concatenated fields) to pass back to read on.
    pub next_offset: Option<usize>,
    /// Characters of the concatenated fields.
    pub total_chars: usize,
}

/// One field's characters and the JSON cost of each prefix.
struct Field {
    chars: Vec<char>,
    /// cost[i]: JSON characters of chars[..i].
    cost: Vec<usize>,
    /// Position of the field's first character in the concatenation.
    start: usize,
}

impl Field {
    fn new(text: &str, start: usize) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let mut cost = Vec::with_capacity(chars.len() + 1);
        cost.push(0);
        for &c in &chars {
            cost.push(cost.last().copied().unwrap_or(0) + json_cost(c));
        }
        Field { chars, cost, start }
    }

    fn total(&self) -> usize {
        self.cost[self.chars.len()]
    }

    /// The last index `to >= from` with `cost(from..to) <= room`.
    fn fits_from(&self, from: usize, room: usize) -> usize {
        let limit = self.cost[from] + room;
        self.cost
            .partition_point(|&c| c <= limit)
            .saturating_sub(1)
            .max(from)
    }

    fn text(&self, a: usize, b: usize) -> String {
        self.chars[a..b].iter().collect()
    }
}

/// Which marker a cut field gets.
enum Marker {
    Full,
    Short,
    Bare,
}

/// The marker of a cut in a small budget (the answer's `next_offset` says where to read on).
fn short_marker(cut: usize) -> String {
    format!("[… {} cut …]", thousands(cut))
}

/// The marker put where a field was cut.
fn marker(cut: usize, read_on: usize) -> String {
    format!(
        "\n[… {} chars cut; read on with char_offset={read_on} …]\n",
        thousands(cut)
    )
}

/// Cuts the concatenation of `fields` so that the fields' JSON text takes at most `budget`
/// characters (the caller keeps `budget` at 6 or more, so a window always advances). Without
/// `offset`, a text that does not fit gives each field a share of the budget; a field longer
/// than its share keeps its head (2/3) and tail (1/3) around a marker saying how much was cut
/// and where to read on, and `next_offset` is where the first cut begins. With an offset it
/// returns the window starting there. Positions count characters of the text.
pub(crate) fn window(fields: &[&str], offset: Option<usize>, budget: usize) -> Windowed {
    let mut start = 0;
    let parts: Vec<Field> = fields
        .iter()
        .map(|f| {
            let field = Field::new(f, start);
            start += field.chars.len();
            field
        })
        .collect();
    let total = start;
    let whole: usize = parts.iter().map(Field::total).sum();
    match offset {
        Some(offset) => from_offset(&parts, offset.min(total), budget, total),
        None if whole <= budget => Windowed {
            fields: fields.iter().map(|f| (*f).to_owned()).collect(),
            truncated: false,
            next_offset: None,
            total_chars: total,
        },
        None => head_and_tail(&parts, budget, total),
    }
}

/// The window of the concatenation that starts at `from`.
fn from_offset(parts: &[Field], from: usize, budget: usize, total: usize) -> Windowed {
    let mut left = budget;
    let mut to = from;
    let mut full = false;
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        let end = p.start + p.chars.len();
        if full || to < p.start || to >= end {
            out.push(String::new());
            continue;
        }
        let a = to - p.start;
        let b = p.fits_from(a, left);
        left -= p.cost[b] - p.cost[a];
        out.push(p.text(a, b));
        to = p.start + b;
        // the rest of the text is for the next window
        full = b < p.chars.len();
    }
    if to == from && from < total {
        // nothing fitted (a budget below one character's cost): show one character anyway
        if let Some((i, p)) = parts
            .iter()
            .enumerate()
            .find(|(_, p)| (p.start..p.start + p.chars.len()).contains(&from))
        {
            out[i] = p.text(from - p.start, from - p.start + 1);
            to = from + 1;
        }
    }
    Windowed {
        fields: out,
        truncated: from > 0 || to < total,
        next_offset: (to < total).then_some(to),
        total_chars: total,
    }
}

/// Each field within its share: whole, or head and tail around a marker.
fn head_and_tail(parts: &[Field], budget: usize, total: usize) -> Windowed {
    // shares: fields that fit an equal share keep it all; the rest split what is left
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| parts[i].total());
    let mut share = vec![0usize; parts.len()];
    let mut left = budget;
    for (k, &i) in order.iter().enumerate() {
        let equal = left / (parts.len() - k);
        share[i] = parts[i].total().min(equal);
        left -= share[i];
    }
    let mut fields = Vec::with_capacity(parts.len());
    let mut next = None;
    for (p, &room) in parts.iter().zip(&share) {
        if p.total() <= room {
            fields.push(p.text(0, p.chars.len()));
            continue;
        }
        // the full marker where there is room for text beside it, a short one otherwise
        let full = marker(p.chars.len(), total).chars().count() + 2;
        let short = short_marker(p.chars.len()).chars().count();
        let style = if room >= 3 * full {
            Marker::Full
        } else if room >= 3 * short {
            Marker::Short
        } else {
            Marker::Bare
        };
        let text_room = room.saturating_sub(match style {
            Marker::Full => full,
            Marker::Short => short,
            Marker::Bare => 3,
        });
        let head_end = p.fits_from(0, text_room * 2 / 3);
        let tail_room = text_room - p.cost[head_end];
        let end = p.chars.len();
        let tail_start = p
            .cost
            .partition_point(|&c| c < p.total().saturating_sub(tail_room))
            .clamp(head_end, end);
        let read_on = p.start + head_end;
        next.get_or_insert(read_on);
        let mark = match style {
            Marker::Full => marker(tail_start - head_end, read_on),
            Marker::Short => short_marker(tail_start - head_end),
            Marker::Bare if room >= 3 => "[…]".to_owned(),
            Marker::Bare => String::new(),
        };
        fields.push(format!(
            "{}{mark}{}",
            p.text(0, head_end),
            p.text(tail_start, end)
        ));
    }
    Windowed {
        fields,
        truncated: true,
        next_offset: next,
        total_chars: total,
    }
}

#[cfg(test)]
mod tests;
