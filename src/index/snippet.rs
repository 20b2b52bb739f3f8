//! Snippets: about 300 characters of a turn around the densest cluster of query-term matches,
//! cut at word boundaries, with `…` where text was cut.
use super::scoring::Plan;
use super::tokenizer::Tokenizer;

/// A snippet and whether it came from the turn's prose or only from its tools field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    pub text: String,
    /// True when no query term occurs in the prompt or reply, only in tool names, file paths
    /// or commands.
    pub tools_only: bool,
}

/// Byte position of a query-term occurrence and its group.
#[derive(Debug, Clone, Copy)]
struct Match {
    start: usize,
    end: usize,
    group: u16,
}

fn matches(text: &str, plan: &Plan, tok: &mut Tokenizer) -> Vec<Match> {
    let mut out = Vec::new();
    tok.for_each_term_at(text, |term, start, end| {
        if let Some(t) = plan.terms.iter().find(|t| t.text == term) {
            out.push(Match {
                start,
                end,
                group: t.group,
            });
        } else if let Some((_, g)) = plan
            .prefixes
            .iter()
            .find(|(p, _)| term.starts_with(p.as_str()))
        {
            out.push(Match {
                start,
                end,
                group: *g,
            });
        }
    });
    out
}

/// Moves `i` back to a char boundary.
fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The window of `text` of about `max` characters that holds the most distinct query terms.
fn window(text: &str, found: &[Match], max: usize) -> (usize, usize) {
    if found.is_empty() {
        return (0, floor_char(text, max * 4).min(text.len()));
    }
    // byte budget: approximate characters by bytes, refined when cutting
    let budget = max;
    let (mut best, mut best_score) = ((found[0].start, found[0].end), (0usize, 0usize));
    let mut j = 0;
    for i in 0..found.len() {
        j = j.max(i);
        while j + 1 < found.len() && found[j + 1].end - found[i].start <= budget {
            j += 1;
        }
        let mut groups: Vec<u16> = found[i..=j].iter().map(|m| m.group).collect();
        groups.sort_unstable();
        groups.dedup();
        let score = (groups.len(), j + 1 - i);
        if score > best_score {
            best_score = score;
            best = (found[i].start, found[j].end);
        }
    }
    // centre the cluster in the budget
    let span = best.1 - best.0;
    let pad = budget.saturating_sub(span) / 2;
    let start = floor_char(text, best.0.saturating_sub(pad));
    let end = floor_char(text, (best.1 + pad).max(start + budget).min(text.len()));
    (start, end)
}

/// Cuts `text[start..end]` to at most `max` characters at word boundaries, marking cuts.
fn cut(text: &str, mut start: usize, mut end: usize, max: usize) -> String {
    // snap to word boundaries (whitespace), not moving more than 20 bytes
    if start > 0 {
        if let Some(ws) = text[start..end.min(start + 20)].find(char::is_whitespace) {
            start += ws + 1;
        }
    }
    if end < text.len() {
        let from = floor_char(text, end.saturating_sub(20).max(start));
        if let Some(ws) = text[from..end].rfind(char::is_whitespace) {
            end = from + ws;
        }
    }
    let body = text[start..end].trim();
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let chars: Vec<char> = body.chars().collect();
    if chars.len() > max {
        out.extend(&chars[..max.saturating_sub(1)]);
        out.push('…');
    } else {
        out.push_str(body);
        if end < text.len() {
            out.push('…');
        }
    }
    out
}

/// A snippet of at most about `max` characters of `prose` (prompt and reply) centred on the
/// densest cluster of the plan's terms; falls back to the `tools` field when the terms only
/// occur there.
pub fn centred(prose: &str, tools: &str, plan: &Plan, max: usize, tok: &mut Tokenizer) -> Snippet {
    let found = matches(prose, plan, tok);
    if found.is_empty() && !matches(tools, plan, tok).is_empty() {
        let (s, e) = window(tools, &matches(tools, plan, tok), max);
        return Snippet {
            text: cut(tools, s, e, max),
            tools_only: true,
        };
    }
    let (s, e) = window(prose, &found, max);
    Snippet {
        text: cut(prose, s, e, max),
        tools_only: false,
    }
}

/// The first `max` characters of `text`, cut at a word boundary when one is near, with `…`
/// when text was cut.
pub fn head(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(i) if i > cut.len() * 3 / 4 => cut[..i].trim_end().to_owned(),
        _ => cut,
    };
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::query::parse;
    use crate::index::tokenizer::TokenizerConfig;

    #[test]
    fn centres_on_a_distant_match() {
        let mut tok = Tokenizer::with_config(TokenizerConfig::default());
        let text = format!(
            "{} the zebracorn appears here {}",
            "filler words ".repeat(500),
            "more text ".repeat(50)
        );
        let plan = parse("zebracorn", &mut tok);
        let s = centred(&text, "", &plan, 300, &mut tok);
        assert!(s.text.contains("zebracorn"), "{}", s.text);
        assert!(s.text.starts_with('…') && s.text.ends_with('…'));
        assert!(s.text.chars().count() <= 302);
        assert!(!s.tools_only);
    }

    #[test]
    fn prefers_the_densest_cluster() {
        let mut tok = Tokenizer::with_config(TokenizerConfig::default());
        let text = format!(
            "alpha {} alpha beta gamma {}",
            "x ".repeat(400),
            "y ".repeat(400)
        );
        let plan = parse("alpha beta gamma", &mut tok);
        let s = centred(&text, "", &plan, 100, &mut tok);
        assert!(s.text.contains("alpha beta gamma"), "{}", s.text);
    }

    #[test]
    fn says_when_only_tools_matched() {
        let mut tok = Tokenizer::with_config(TokenizerConfig::default());
        let plan = parse("query.rs", &mut tok);
        let s = centred(
            "nothing here",
            "tools: Edit\nedit: src/index/query.rs",
            &plan,
            300,
            &mut tok,
        );
        assert!(s.tools_only);
        assert!(s.text.contains("query.rs"));
    }
}
