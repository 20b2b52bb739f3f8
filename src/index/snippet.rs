//! Snippets: a short window of a turn's text for search results.

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
