//! Shell-style glob matching (`*`, `?`, `[abc]`, `[!a-z]`) for project-directory patterns.

/// A compiled glob pattern matched against whole names (not paths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
}

impl Glob {
    pub fn new(pattern: &str) -> Self {
        Self {
            pattern: pattern.to_owned(),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    pub fn matches(&self, name: &str) -> bool {
        let p: Vec<char> = self.pattern.chars().collect();
        let n: Vec<char> = name.chars().collect();
        match_from(&p, &n)
    }
}

/// Iterative wildcard matching with single-star backtracking (linear in practice).
fn match_from(p: &[char], n: &[char]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, len)) = match_class(&p[pi..], n[ni]) {
                        if matched {
                            pi += len;
                            ni += 1;
                            continue;
                        }
                    } else if n[ni] == '[' {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                }
                c if c == n[ni] => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Matches a `[...]` class at the start of `p`; returns (matched, pattern length) or `None`
/// when the bracket is not closed (then it is a literal `[`).
fn match_class(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(1), Some('!') | Some('^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

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
}
