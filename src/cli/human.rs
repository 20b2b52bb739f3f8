//! Readable renderings of tool results for people at a terminal: one block per search hit or
//! session, conversations turn by turn, the index status as aligned lines. Colours are ANSI
//! escapes, only when asked for; the text is otherwise the same.
use crate::server::tools::list::ListResponse;
use crate::server::tools::read_conversation::ConversationOut;
use crate::server::tools::read_turn::TurnOut;
use crate::server::tools::search::SearchResponse;
use std::fmt::Write as _;

/// `--color`: when readable output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always (also prints readable text when stdout is not a terminal).
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether to colour, given whether stdout is a terminal and the value of NO_COLOR.
    pub fn enabled(self, terminal: bool, no_color: Option<&str>) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => terminal && no_color.is_none_or(str::is_empty),
        }
    }
}

/// ANSI styling, or none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paint {
    pub on: bool,
}

impl Paint {
    fn wrap(self, code: &str, s: &str) -> String {
        if self.on && !s.is_empty() {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }
    pub(crate) fn bold(self, s: &str) -> String {
        self.wrap("1", s)
    }
    pub(crate) fn dim(self, s: &str) -> String {
        self.wrap("2", s)
    }
    pub(crate) fn cyan(self, s: &str) -> String {
        self.wrap("36", s)
    }
    pub(crate) fn green(self, s: &str) -> String {
        self.wrap("32", s)
    }
    /// A match: bold yellow.
    pub(crate) fn hit(self, s: &str) -> String {
        self.wrap("1;33", s)
    }
}

/// The words to highlight from a result's matched terms (`"a phrase"`, `prefix*`, `word`).
pub(crate) fn highlight_words(terms: &[String]) -> Vec<String> {
    let mut words: Vec<String> = terms
        .iter()
        .flat_map(|t| {
            t.trim_matches('"')
                .trim_end_matches('*')
                .split_whitespace()
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        })
        .filter(|w| !w.is_empty())
        .collect();
    // longest first, so that a longer word wins where two start at the same place
    words.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    words.dedup();
    words
}

/// `text` with every case-insensitive occurrence of `words` highlighted.
pub(crate) fn highlight(text: &str, words: &[String], paint: Paint) -> String {
    if !paint.on || words.is_empty() {
        return text.to_owned();
    }
    let lower: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < lower.len() {
        let (at, _) = lower[i];
        let rest = &text[at..];
        let found = words.iter().find_map(|w| {
            let n = w.chars().count();
            let end = lower.get(i + n).map_or(text.len(), |&(b, _)| b);
            (i + n <= lower.len() && text[at..end].to_lowercase() == *w).then_some((n, end))
        });
        match found {
            Some((n, end)) => {
                out.push_str(&paint.hit(&text[at..end]));
                i += n;
            }
            None => {
                out.push(rest.chars().next().unwrap_or(' '));
                i += 1;
            }
        }
    }
    out
}

/// `2026-05-01T10:00:00.000Z` as `2026-05-01 10:00`.
fn short_time(ts: Option<&str>) -> String {
    ts.map_or_else(
        || "-".to_owned(),
        |s| s.get(..16).unwrap_or(s).replacen('T', " ", 1),
    )
}

fn mark(this_project: bool, paint: Paint) -> String {
    if this_project {
        paint.green(" (this project)")
    } else {
        String::new()
    }
}

/// One block per hit: `project · session · turn · date`, then the snippet.
pub(crate) fn search(r: &SearchResponse, paint: Paint) -> String {
    let mut out = String::new();
    if r.results.is_empty() {
        let _ = writeln!(out, "No match for {}.", paint.bold(&r.query));
    }
    for h in &r.results {
        let words = highlight_words(&h.matched_terms);
        let _ = writeln!(
            out,
            "{}{} · {} · turn {} · {}",
            paint.cyan(&h.project),
            mark(h.this_project, paint),
            paint.bold(&h.session_id),
            h.turn_number,
            paint.dim(&short_time(h.timestamp.as_deref()))
        );
        let snippet = h.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(out, "  {}", highlight(&snippet, &words, paint));
        if let Some(note) = &h.note {
            let _ = writeln!(out, "  {}", paint.dim(&format!("({note})")));
        }
        out.push('\n');
    }
    let shown = r.offset + r.results.len();
    let more = if r.total_exact { "" } else { "+" };
    let _ = write!(
        out,
        "{}",
        paint.dim(&format!(
            "{} of {}{more} matching turns",
            r.results.len(),
            r.total
        ))
    );
    if let Some(next) = r.next_offset {
        let _ = write!(out, "{}", paint.dim(&format!("; more from offset {next}")));
    } else if shown < r.total {
        let _ = write!(out, "{}", paint.dim("; more exist"));
    }
    if let Some(note) = &r.note {
        let _ = write!(out, "\n{}", paint.dim(note));
    }
    out.push('\n');
    out
}

/// One block per session: `project · session · dates · turns`, then its summary.
pub(crate) fn list(r: &ListResponse, paint: Paint) -> String {
    let mut out = String::new();
    for c in &r.conversations {
        let _ = writeln!(
            out,
            "{}{} · {} · {} → {} · {} turns",
            paint.cyan(&c.project),
            mark(c.this_project, paint),
            paint.bold(&c.session_id),
            paint.dim(&short_time(c.first_timestamp.as_deref())),
            paint.dim(&short_time(c.last_timestamp.as_deref())),
            c.turn_count
        );
        let summary = c.summary.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(
            out,
            "  {}\n",
            crate::transcript::tools::cut_chars(&summary, 200)
        );
    }
    let _ = writeln!(
        out,
        "{}",
        paint.dim(&format!(
            "{} of {} sessions",
            r.conversations.len(),
            r.total
        ))
    );
    out
}

/// A turn: header, prompt, reply and the tools it used.
pub(crate) fn turn(t: &TurnOut, paint: Paint) -> String {
    let mut out = format!(
        "{} · turn {} · {}\n",
        paint.bold(&t.session_id),
        t.turn_number,
        paint.dim(&short_time(t.timestamp.as_deref()))
    );
    if !t.user_text.is_empty() {
        let _ = writeln!(
            out,
            "{}\n{}\n",
            paint.cyan("> user"),
            t.user_text.trim_end()
        );
    }
    if !t.assistant_text.is_empty() {
        let _ = writeln!(
            out,
            "{}\n{}\n",
            paint.cyan("> assistant"),
            t.assistant_text.trim_end()
        );
    }
    for u in &t.tools_used {
        let what = u
            .file
            .as_deref()
            .or(u.command.as_deref())
            .or(u.pattern.as_deref())
            .or(u.query.as_deref())
            .or(u.url.as_deref())
            .unwrap_or("");
        let _ = writeln!(out, "  {} {what}", paint.dim(&format!("[{}]", u.tool)));
    }
    if t.truncated {
        let _ = writeln!(
            out,
            "{}",
            paint.dim("(shortened; use --json and read_turn's char_offset to read on)")
        );
    }
    out
}

/// A conversation: a header, then its turns.
pub(crate) fn conversation(c: &ConversationOut, paint: Paint) -> String {
    let mut out = format!(
        "{} · {} · {} turns{}\n\n",
        paint.cyan(&c.project),
        paint.bold(&c.session_id),
        c.total_turns,
        c.cwd
            .as_deref()
            .map(|d| format!(" · {}", paint.dim(d)))
            .unwrap_or_default()
    );
    for t in &c.turns {
        out.push_str(&turn(t, paint));
        out.push('\n');
    }
    if let Some(next) = c.next_offset {
        let _ = writeln!(
            out,
            "{}",
            paint.dim(&format!("more turns from --offset {next}"))
        );
    }
    out
}

/// A JSON object as `key: value` lines, nested objects indented, lists of objects as blocks.
pub(crate) fn fields(v: &serde_json::Value, paint: Paint) -> String {
    let mut out = String::new();
    write_fields(&mut out, v, 0, paint);
    out
}

fn write_fields(out: &mut String, v: &serde_json::Value, depth: usize, paint: Paint) {
    use serde_json::Value;
    let pad = "  ".repeat(depth);
    let Value::Object(map) = v else {
        let _ = writeln!(out, "{pad}{}", scalar(v));
        return;
    };
    for (k, v) in map {
        match v {
            Value::Object(_) => {
                let _ = writeln!(out, "{pad}{}", paint.bold(k));
                write_fields(out, v, depth + 1, paint);
            }
            Value::Array(items) if items.iter().any(Value::is_object) => {
                let _ = writeln!(out, "{pad}{}", paint.bold(k));
                for item in items {
                    write_fields(out, item, depth + 1, paint);
                    out.push('\n');
                }
            }
            _ => {
                let _ = writeln!(out, "{pad}{}: {}", paint.bold(k), scalar(v));
            }
        }
    }
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".to_owned(),
        serde_json::Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_case_insensitively_and_only_with_colour() {
        let words = highlight_words(&["debounce".into(), "\"Watch mode\"".into()]);
        let on = Paint { on: true };
        let out = highlight("The Debounce and watch MODE", &words, on);
        assert_eq!(
            out,
            "The \x1b[1;33mDebounce\x1b[0m and \x1b[1;33mwatch\x1b[0m \x1b[1;33mMODE\x1b[0m"
        );
        assert_eq!(
            highlight("Debounce", &words, Paint { on: false }),
            "Debounce"
        );
    }

    #[test]
    fn no_color_turns_auto_off() {
        assert!(ColorChoice::Auto.enabled(true, None));
        assert!(ColorChoice::Auto.enabled(true, Some("")));
        assert!(!ColorChoice::Auto.enabled(true, Some("1")));
        assert!(!ColorChoice::Auto.enabled(false, None));
        assert!(ColorChoice::Always.enabled(false, Some("1")));
    }
}
