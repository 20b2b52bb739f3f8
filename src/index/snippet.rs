//! Snippets: about 300 characters of a turn around the densest cluster of query-term matches,
//! cut at word boundaries, with `…` where text was cut.
//!
//! Occurrences are found with a SIMD substring search over an ASCII-lowercased copy of the
//! text (byte offsets stay aligned with the original), checked for word or identifier-part
//! boundaries, so a long turn is scanned, not tokenized.
use super::query::Plan;
use memchr::memmem;

/// A snippet and whether it came from the turn's prose or only from its tools field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snippet {
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

/// True when a term may start at byte `i`: at a word start, or at an identifier part boundary
/// (`_`, connectors, camel hump).
fn starts_part(orig: &[u8], i: usize) -> bool {
    if i == 0 {
        return true;
    }
    let (p, c) = (orig[i - 1], orig[i]);
    !p.is_ascii_alphanumeric() && p < 0x80 || (p.is_ascii_lowercase() && c.is_ascii_uppercase())
}

/// True when a term may end at byte `i` (exclusive).
fn ends_part(orig: &[u8], i: usize) -> bool {
    if i >= orig.len() {
        return true;
    }
    let (p, c) = (orig[i - 1], orig[i]);
    !c.is_ascii_alphanumeric() && c < 0x80 || (p.is_ascii_lowercase() && c.is_ascii_uppercase())
}

fn matches(text: &str, plan: &Plan) -> Vec<Match> {
    let orig = text.as_bytes();
    let lower = text.to_ascii_lowercase();
    let hay = lower.as_bytes();
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for t in &plan.terms {
        if t.text.is_empty() || seen.contains(&t.text.as_str()) {
            continue;
        }
        seen.push(&t.text);
        for start in memmem::find_iter(hay, t.text.as_bytes()) {
            let end = start + t.text.len();
            if starts_part(orig, start) && ends_part(orig, end) {
                out.push(Match {
                    start,
                    end,
                    group: t.group,
                });
            }
        }
    }
    for (p, g) in &plan.prefixes {
        for start in memmem::find_iter(hay, p.as_bytes()) {
            if starts_part(orig, start) {
                let end = start + p.len();
                let end = end
                    + hay[end..]
                        .iter()
                        .take_while(|b| b.is_ascii_alphanumeric())
                        .count();
                out.push(Match {
                    start,
                    end,
                    group: *g,
                });
            }
        }
    }
    out.sort_by_key(|m| (m.start, m.end));
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

/// The byte window of `text` of about `max` characters that holds the most distinct query
/// terms (then the most occurrences), centred on them. Linear in the number of occurrences.
fn window(text: &str, found: &[Match], max: usize) -> (usize, usize) {
    if found.is_empty() {
        return (0, floor_char(text, max * 4));
    }
    let budget = max;
    let groups = found.iter().map(|m| m.group as usize).max().unwrap_or(0) + 1;
    let mut count = vec![0u32; groups];
    let mut distinct = 0usize;
    let (mut best, mut best_score) = ((found[0].start, found[0].end), (0usize, 0usize));
    let mut j = 0; // window is found[i..j]
    for i in 0..found.len() {
        while j < found.len() && found[j].end - found[i].start <= budget {
            let g = found[j].group as usize;
            if count[g] == 0 {
                distinct += 1;
            }
            count[g] += 1;
            j += 1;
        }
        if j == i {
            // a single occurrence longer than the budget
            j = i + 1;
            let g = found[i].group as usize;
            if count[g] == 0 {
                distinct += 1;
            }
            count[g] += 1;
        }
        let score = (distinct, j - i);
        if score > best_score {
            best_score = score;
            best = (found[i].start, found[j - 1].end);
        }
        let g = found[i].group as usize;
        count[g] -= 1;
        if count[g] == 0 {
            distinct -= 1;
        }
    }
    let span = best.1 - best.0;
    let pad = budget.saturating_sub(span) / 2;
    let start = floor_char(text, best.0.saturating_sub(pad));
    let end = floor_char(text, (best.1 + pad).max(start + budget));
    (start, end)
}

/// Cuts `text[start..end]` to at most `max` characters at word boundaries, marking cuts.
fn cut(text: &str, mut start: usize, mut end: usize, max: usize) -> String {
    // snap to word boundaries (whitespace), moving at most 20 bytes
    if start > 0 {
        let probe = floor_char(text, end.min(start + 20));
        if let Some(ws) = text[start..probe].find(char::is_whitespace) {
            start += ws;
            start += text[start..].chars().next().map_or(1, char::len_utf8);
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
    let mut chars = body.chars();
    let kept: String = chars.by_ref().take(max.saturating_sub(1)).collect();
    if chars.next().is_some() {
        out.push_str(&kept);
        out.push('…');
    } else {
        out.push_str(&kept);
        if end < text.len() {
            out.push('…');
        }
    }
    out
}

/// A snippet of at most about `max` characters of `prose` (prompt and reply) centred on the
/// densest cluster of the plan's terms; falls back to the `tools` field when the terms only
/// occur there.
pub(crate) fn centred(prose: &str, tools: &str, plan: &Plan, max: usize) -> Snippet {
    let found = matches(prose, plan);
    if found.is_empty() {
        let in_tools = matches(tools, plan);
        if !in_tools.is_empty() {
            let (s, e) = window(tools, &in_tools, max);
            return Snippet {
                text: cut(tools, s, e, max),
                tools_only: true,
            };
        }
    }
    let (s, e) = window(prose, &found, max);
    Snippet {
        text: cut(prose, s, e, max),
        tools_only: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::query::parse;
    use crate::index::tokenizer::{Tokenizer, TokenizerConfig};

    fn plan(q: &str) -> Plan {
        parse(q, &mut Tokenizer::with_config(TokenizerConfig::default()))
    }

    #[test]
    fn centres_on_a_distant_match() {
        let text = format!(
            "{} the zebracorn appears here {}",
            "filler words ".repeat(500),
            "more text ".repeat(50)
        );
        let s = centred(&text, "", &plan("zebracorn"), 300);
        assert!(s.text.contains("zebracorn"), "{}", s.text);
        assert!(s.text.starts_with('…') && s.text.ends_with('…'));
        assert!(s.text.chars().count() <= 302);
        assert!(!s.tools_only);
    }

    #[test]
    fn prefers_the_densest_cluster() {
        let text = format!(
            "alpha {} alpha beta gamma {}",
            "x ".repeat(400),
            "y ".repeat(400)
        );
        let s = centred(&text, "", &plan("alpha beta gamma"), 100);
        assert!(s.text.contains("alpha beta gamma"), "{}", s.text);
    }

    #[test]
    fn matches_words_and_identifier_parts_not_inside_words() {
        let found = matches("other theThing the_x", &plan("the"));
        let starts: Vec<usize> = found.iter().map(|m| m.start).collect();
        assert_eq!(starts, [6, 15]);
    }

    #[test]
    fn says_when_only_tools_matched() {
        let s = centred(
            "nothing here",
            "tools: Edit\nedit: src/index/query.rs",
            &plan("query.rs"),
            300,
        );
        assert!(s.tools_only);
        assert!(s.text.contains("query.rs"));
    }

    #[test]
    fn cuts_multibyte_text_on_char_boundaries() {
        let text = format!(
            "{}検索 zebra {}",
            "日本語のテキスト".repeat(80),
            "ü".repeat(400)
        );
        for max in [10, 50, 300] {
            let s = centred(&text, "", &plan("zebra"), max);
            assert!(s.text.contains("zebra"), "{max}: {}", s.text);
        }
    }
}
