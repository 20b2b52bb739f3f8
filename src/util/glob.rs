//! The project PATTERN: a shell-style glob (`*`, `?`, `[abc]`, `[!a-z]`, and globset's `{a,b}`)
//! matched against whole project-directory names (not paths), compiled once with `globset`.

use globset::{GlobBuilder, GlobMatcher};

/// A compiled glob pattern matched against whole names (not paths).
#[derive(Clone, Debug)]
pub(crate) struct Glob {
    pattern: String,
    /// `None` when globset rejects the pattern: then it matches only itself.
    matcher: Option<GlobMatcher>,
}

impl Glob {
    /// Compiles `pattern`. Never fails: an unclosed `[` is a literal `[` (as in a shell), and
    /// a pattern globset still rejects (an unclosed `{`, a reversed range) matches only itself.
    pub(crate) fn new(pattern: &str) -> Self {
        let matcher = GlobBuilder::new(pattern)
            // names hold no separators; a backslash is a character, on every platform
            .backslash_escape(false)
            .allow_unclosed_class(true)
            .build()
            .ok()
            .map(|g| g.compile_matcher());
        Self {
            pattern: pattern.to_owned(),
            matcher,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.pattern
    }

    pub(crate) fn matches(&self, name: &str) -> bool {
        match &self.matcher {
            Some(m) => m.is_match(name),
            None => name == self.pattern,
        }
    }
}

impl PartialEq for Glob {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for Glob {}

#[cfg(test)]
mod tests {
    use super::Glob;

    #[test]
    fn matches_like_a_shell() {
        assert!(Glob::new("*").matches("-home-a-proj"));
        assert!(Glob::new("*proj*").matches("-home-a-proj-x"));
        assert!(!Glob::new("*proj").matches("-home-a-proj-x"));
        assert!(Glob::new("-home-?-proj").matches("-home-a-proj"));
        assert!(Glob::new("[-]home*").matches("-home"));
        assert!(Glob::new("*[!x]").matches("ab"));
        assert!(!Glob::new("*[!b]").matches("ab"));
        assert!(Glob::new("a[").matches("a["));
        assert!(Glob::new("*a*b*c").matches("xxaxxbxxc"));
    }

    #[test]
    fn matches_whole_names_only() {
        assert!(!Glob::new("proj").matches("-home-a-proj"));
        assert!(Glob::new("[a-c]x").matches("bx"));
        assert!(!Glob::new("[a-c]x").matches("dx"));
        assert!(Glob::new(r"a\b").matches(r"a\b"));
        assert!(Glob::new("a{b").matches("a{b"));
        assert!(Glob::new("*-{api,web}-*").matches("-home-a-web-x"));
        assert!(Glob::new("").matches(""));
        assert!(!Glob::new("").matches("a"));
    }
}
