//! Markup in transcript text, for every format: removing the elements (`<tag>…</tag>`) that
//! harnesses and editors wrap around or add to what the human typed.

/// Removes every `<tag …>…</tag>` element of the given tags (unclosed ones run to the end).
pub(crate) fn strip_elements(text: &str, tags: &[&str]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while let Some(lt) = rest.find('<') {
        for tag in tags {
            let after = &rest[lt + 1..];
            if after.starts_with(tag)
                && after[tag.len()..].starts_with(|c: char| c == '>' || c.is_whitespace())
            {
                out.push_str(&rest[..lt]);
                let close = format!("</{tag}>");
                rest = match rest[lt..].find(&close) {
                    Some(end) => &rest[lt + end + close.len()..],
                    None => "",
                };
                continue 'outer;
            }
        }
        out.push_str(&rest[..=lt]);
        rest = &rest[lt + 1..];
    }
    out.push_str(rest);
    out
}
