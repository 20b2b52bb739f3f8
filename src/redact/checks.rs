//! The checks a matched secret must pass beyond its pattern: placeholders, randomness, and the
//! judgement of generic `key = value` assignments (is the key about a secret, is the value one).
use super::{Check, Family};
use regex::Captures;

/// Whether the match `caps` of a rule with `check`, whose secret is `secret`, is a secret.
/// `text` is the whole haystack (to look at what follows the match).
pub(super) fn passes(check: Check, caps: &Captures<'_>, secret: &str, text: &str) -> bool {
    match check {
        Check::Any => true,
        Check::Len(n) => secret.len() == n,
        Check::NotPlaceholder => !is_placeholder(secret),
        Check::DigitAndLetter => has_digit_and_letter(secret),
        Check::Basic => basic_credentials(secret),
        Check::Bearer => bearer(secret),
        Check::Assign(family) => {
            let key = caps.name("key").map_or("", |m| m.as_str());
            let op = caps.name("op").map_or("", |m| m.as_str());
            let bare = caps.name("bare").is_some();
            let next = text[caps.get(0).map_or(0, |m| m.end())..].chars().next();
            assignment(family, key, op, secret, bare, next)
        }
        Check::AwsSecret => aws_secret(secret, text, caps),
        Check::AwsPair => aws_secret(secret, text, caps) && holds_access_key_id(text),
    }
}

/// An AWS secret access key: exactly 40 base64 characters (not the head of a longer base64
/// text, which the pattern's run and a following `=` show), with upper and lower case letters
/// (a git SHA has no upper case), and not made of words (a path such as
/// `src/Components/Header2/NavigationBarItem`, an identifier): random keys are not.
fn aws_secret(secret: &str, text: &str, caps: &Captures<'_>) -> bool {
    let end = caps.get(0).map_or(0, |m| m.end());
    if secret.len() != 40 || text[end..].starts_with('=') {
        return false;
    }
    let upper = secret.bytes().any(|b| b.is_ascii_uppercase());
    let lower = secret.bytes().any(|b| b.is_ascii_lowercase());
    upper && lower && !secret.split('/').all(wordish)
}

/// Whether `s` reads as words: runs of a capital and 2+ lowercase letters, 2+ lowercase
/// letters, up to 4 capitals or up to 4 digits (`Header2`, `HTTPServer`, `index`). A random
/// key almost always has a lone lowercase letter, a `+` or a long digit run somewhere.
fn wordish(s: &str) -> bool {
    let b = s.as_bytes();
    let run = |from: usize, f: fn(&u8) -> bool| b[from..].iter().take_while(|c| f(c)).count();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_uppercase() {
            let caps = run(i, u8::is_ascii_uppercase);
            let lower = run(i + caps, u8::is_ascii_lowercase);
            if lower == 0 {
                if caps > 4 {
                    return false;
                }
            } else if lower < 2 || caps > 5 {
                // a capital word after an acronym: `HTTPServer`
                return false;
            }
            i += caps + lower;
        } else if c.is_ascii_lowercase() {
            let lower = run(i, u8::is_ascii_lowercase);
            if lower < 2 {
                return false;
            }
            i += lower;
        } else if c.is_ascii_digit() {
            let digits = run(i, u8::is_ascii_digit);
            if digits > 4 {
                return false;
            }
            i += digits;
        } else {
            return false;
        }
    }
    true
}

/// Whether `text` holds an AWS access key id of a user (`AKIA…`) or a session (`ASIA…`).
fn holds_access_key_id(text: &str) -> bool {
    static ID: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)").expect("id pattern")
    });
    ID.is_match(text)
}

fn has_digit_and_letter(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Words and shapes that stand for a secret without being one.
const PLACEHOLDER_WORDS: &[&str] = &[
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourpass",
    "yourkey",
    "yoursecret",
    "yourtoken",
    "example",
    "placeholder",
    "dummy",
    "redacted",
    "replace",
    "insert",
    "xxxx",
    "****",
    "todo",
    "fixme",
    "sample",
    "notreal",
    "not-a-real",
    "_here",
    "-here",
];

/// Values that are names, types or literals rather than secrets.
const PLACEHOLDER_EXACT: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "key",
    "test",
    "testing",
    "null",
    "none",
    "nil",
    "undefined",
    "true",
    "false",
    "empty",
    "string",
    "str",
    "value",
    "foo",
    "bar",
    "baz",
    "required",
    "optional",
    "bool",
    "int",
    "number",
    "any",
    "object",
    "option",
    "secretstring",
    "env",
    "hidden",
    "masked",
    "unset",
];

/// An obvious placeholder: `***`, `<your-key>`, `changeme`, `${VAR}`, `$VAR`, `{{ x }}`, `%s`.
pub(super) fn is_placeholder(value: &str) -> bool {
    let v = value.trim().trim_matches(|c| c == '"' || c == '\'');
    if v.chars().count() < 3 {
        return true;
    }
    let first = v.chars().next().unwrap_or(' ');
    let last = v.chars().last().unwrap_or(' ');
    if matches!(first, '$' | '<' | '{' | '[') || matches!(last, '>' | '}') {
        return true;
    }
    // `%s`, `%(name)s`, `%APPDATA%`; a password may start with `%`
    if first == '%' && (v.len() <= 3 || v.starts_with("%(") || (last == '%' && v.len() > 1)) {
        return true;
    }
    if v.contains("{{") || v.contains("${") || v.contains("$(") || v.contains("...") {
        return true;
    }
    if v.chars()
        .all(|c| c == first || matches!(c, '*' | '•' | '.' | '#' | '-'))
    {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w)) || PLACEHOLDER_EXACT.contains(&&*lower)
}

/// `Basic <base64>` whose payload decodes to printable `user:password`.
fn basic_credentials(b64: &str) -> bool {
    let Some(bytes) = base64_decode(b64) else {
        return false;
    };
    let Some(colon) = bytes.iter().position(|&b| b == b':') else {
        return false;
    };
    colon > 0 && colon + 1 < bytes.len() && bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ')
}

/// Standard base64 (padding optional); `None` when `s` is not base64.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    (s.len() % 4 != 1).then_some(out)
}

/// A bearer token: 16+ characters with a digit, or 24+ of mixed case; not a placeholder.
fn bearer(token: &str) -> bool {
    if is_placeholder(token) {
        return false;
    }
    let digit = token.bytes().any(|b| b.is_ascii_digit());
    let mixed = token.bytes().any(|b| b.is_ascii_uppercase())
        && token.bytes().any(|b| b.is_ascii_lowercase());
    (token.len() >= 16 && digit) || (token.len() >= 24 && mixed)
}

/// Shannon entropy of `s` in bits per character.
pub(super) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Key suffixes that make a key about a secret's metadata, not the secret.
const NOT_SECRET_SUFFIXES: &[&str] = &[
    "file",
    "path",
    "dir",
    "env",
    "var",
    "name",
    "len",
    "length",
    "count",
    "limit",
    "max",
    "min",
    "size",
    "type",
    "policy",
    "field",
    "prompt",
    "expires",
    "expiry",
    "ttl",
    "timeout",
    "url",
    "uri",
    "endpoint",
    "header",
    "id",
    "format",
    "reset",
    "required",
    "enabled",
    "mode",
    "label",
    "placeholder",
    "input",
    "regex",
    "pattern",
    "ref",
    "version",
    "kind",
    "usage",
    "budget",
    "in",
    "at",
    "hint",
    "rotation",
    "manager",
    "store",
    "provider",
    "command",
    "cmd",
    "helper",
];

/// Values that name a type (`password: String`) rather than hold a secret.
const TYPE_NAMES: &[&str] = &[
    "str",
    "string",
    "bool",
    "boolean",
    "int",
    "number",
    "any",
    "option",
    "secret",
    "secretstring",
    "vec",
    "none",
    "null",
    "nil",
    "undefined",
    "true",
    "false",
    "bytes",
    "text",
    "varchar",
];

/// A generic assignment `key op value`: is the key about a secret of `family`, and is the
/// value one (not a placeholder, a path, a type, a variable or an expression)?
fn assignment(
    family: Family,
    key: &str,
    op: &str,
    value: &str,
    bare: bool,
    next: Option<char>,
) -> bool {
    let key = key.to_ascii_lowercase();
    if !secret_key(family, &key) {
        return false;
    }
    // `--password value` yes; `password reset` no
    let spaced = op.trim().is_empty();
    if spaced && !key.starts_with('-') {
        return false;
    }
    let value = value.trim();
    if value.len() > 256 || is_placeholder(value) || looks_like_path(value) {
        return false;
    }
    if bare && (code_like(value) || matches!(next, Some('(' | '[' | '.' | '<' | '{'))) {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if TYPE_NAMES.contains(&lower.as_str()) || lower == key.trim_start_matches('-') {
        return false;
    }
    match family {
        Family::Password => password_value(value, bare, op),
        Family::Secret | Family::Token | Family::ApiKey => random_value(value),
    }
}

/// Whether `key` (lowercase) names a secret of `family`: the family's word is not followed by
/// more letters (`tokens`, `tokenizer`) and the key does not end in a metadata suffix.
fn secret_key(family: Family, key: &str) -> bool {
    let words: &[&str] = match family {
        Family::Password => &["password", "passwd", "passphrase", "_pass", "pwd"],
        Family::Secret => &["secret"],
        Family::Token => &["token"],
        Family::ApiKey => &[
            "api_key",
            "api-key",
            "apikey",
            "api.key",
            "access_key",
            "access-key",
            "accesskey",
            "auth_key",
            "auth-key",
            "authkey",
            "private_key",
            "private-key",
            "privatekey",
            "client_key",
            "client-key",
            "clientkey",
        ],
    };
    let bare = key.trim_start_matches('-');
    if matches!(bare, "pwd" | "oldpwd") {
        return false;
    }
    let Some((at, word)) = words
        .iter()
        .filter_map(|w| key.rfind(w).map(|i| (i, *w)))
        .max_by_key(|(i, _)| *i)
    else {
        return false;
    };
    let rest = &key[at + word.len()..];
    if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return false;
    }
    let last = rest
        .rsplit(|c: char| !c.is_ascii_alphanumeric())
        .find(|p| !p.is_empty());
    !last.is_some_and(|l| NOT_SECRET_SUFFIXES.contains(&l))
}

/// A file path rather than a secret: `/etc/x`, `./x`, `~/x`, `../x` made of path characters.
fn looks_like_path(v: &str) -> bool {
    (v.starts_with('/') || v.starts_with("./") || v.starts_with("~/") || v.starts_with("../"))
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~'))
}

/// An expression rather than a literal: `config.token`, `os.environ`, `self.password`.
fn code_like(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        && !v.bytes().any(|b| b.is_ascii_digit())
}

/// A password: 4+ characters (6+ when only digits). A bare word of letters only counts after
/// `=` (`DB_PASSWORD=supersecret`), not after `:` (`password: required`, prose).
fn password_value(v: &str, bare: bool, op: &str) -> bool {
    let n = v.chars().count();
    if v.bytes().all(|b| b.is_ascii_digit()) {
        return n >= 6;
    }
    if n < 4 {
        return false;
    }
    let word = v.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
    if bare && word {
        return op.contains('=') && n >= 6 && !v.contains('_');
    }
    true
}

/// A machine-made secret: 8+ characters, not all digits, with a digit and a letter, three
/// classes of character, or high entropy.
fn random_value(v: &str) -> bool {
    if v.len() < 8 || v.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let lower = v.bytes().any(|b| b.is_ascii_lowercase());
    let upper = v.bytes().any(|b| b.is_ascii_uppercase());
    let digit = v.bytes().any(|b| b.is_ascii_digit());
    let other = v.bytes().any(|b| !b.is_ascii_alphanumeric());
    let classes = [lower, upper, digit, other].iter().filter(|&&c| c).count();
    (digit && (lower || upper)) || classes >= 3 || (v.len() >= 16 && entropy(v) >= 3.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_random_keys() {
        for w in [
            "src",
            "Components",
            "Header2",
            "HTTPServer",
            "index",
            "V2",
            "",
        ] {
            assert!(wordish(w), "{w}");
        }
        for r in [
            "wJalrXUtnFEMI",
            "K7MDENG",
            "bPxRfiCYEXAMPLEKEY",
            "k9Tz2mr7",
            "a",
            "x+y",
        ] {
            assert!(!wordish(r), "{r}");
        }
    }

    #[test]
    fn placeholders() {
        for p in [
            "***",
            "<your-key>",
            "changeme",
            "${VAR}",
            "$VAR",
            "{{ secret }}",
            "%s",
            "xxxxxxxx",
            "YOUR_API_KEY",
            "password",
            "",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for s in ["hunter2-Xq", "Zq7w9xPk2", "s3cr3t pass"] {
            assert!(!is_placeholder(s), "{s}");
        }
    }

    #[test]
    fn basic_needs_user_and_password() {
        assert!(basic_credentials("YWRtaW46czNjcjN0")); // admin:s3cr3t
        assert!(!basic_credentials("YWRtaW4=")); // admin
        assert!(!basic_credentials("authentication"));
    }

    #[test]
    fn keys() {
        assert!(secret_key(Family::Token, "github_token"));
        assert!(secret_key(Family::Token, "--token"));
        assert!(!secret_key(Family::Token, "max_tokens"));
        assert!(!secret_key(Family::Token, "tokenizer"));
        assert!(!secret_key(Family::Token, "token_count"));
        assert!(!secret_key(Family::Password, "pwd"));
        assert!(secret_key(Family::Password, "db_pass"));
        assert!(!secret_key(Family::Secret, "secret_file"));
    }

    #[test]
    fn entropy_of_uniform_text() {
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
        assert!(entropy("aaaa").abs() < 1e-9);
    }
}
