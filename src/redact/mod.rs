//! Secret redaction: every text that leaves the transcript layer (prompts, replies, tool-call
//! inputs, titles, summaries) passes through [`redact`] first, so the index, the persistent
//! cache and every tool output only ever hold `[REDACTED:<kind>]` where a secret was.
//!
//! One pass per text: an Aho–Corasick automaton over every rule's literal anchors finds which
//! rules can match at all (usually none); only those rules' patterns then run, each compiled the
//! first time it is needed (a one-shot command reading a few files compiles few). Matches are
//! checked ([`rules::Check`]), overlapping ones merged, and the secrets replaced.
//!
//! `--no-redact` turns it off for the process ([`set_enabled`], once at start-up; unsafe: the
//! secrets are then indexed, cached and returned as written). The rules' identity
//! ([`key_bytes`]) is part of the persistent index's key, so changed rules rebuild it.
mod checks;
mod gate;
pub(crate) mod rules;

use gate::Gate;
use regex::Regex;
use rules::RULES;
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, OnceLock};
use xxhash_rust::xxh3::Xxh3Default;

/// Version of the rules' checks; bump it when a check in `checks.rs` changes what it accepts.
/// Patterns and anchors enter [`fingerprint`] by themselves.
pub(crate) const RULES_VERSION: u32 = 1;

/// Environment variable holding one more pattern to redact (kind `extra`), for secrets of a
/// shape no rule knows; it changes the fingerprint like any rule change.
pub(crate) const EXTRA_ENV: &str = "CONVERSATION_SEARCH_REDACT_EXTRA";

/// What a matched secret must also satisfy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Check {
    /// Nothing more.
    Any,
    /// Exactly this many characters (a fixed-length token in an unbounded run).
    Len(usize),
    /// Not an obvious placeholder (`***`, `<your-key>`, `changeme`, `${VAR}`, …).
    NotPlaceholder,
    /// Holds a digit and a letter (random tokens do; long identifiers mostly do not).
    DigitAndLetter,
    /// Base64 of `user:password`.
    Basic,
    /// A bearer token: long, random-looking, not a placeholder.
    Bearer,
    /// The value of a `key = value` assignment of this family (see `checks::assignment`).
    Assign(Family),
    /// An AWS secret access key without its full key name: exactly 40 characters, not
    /// followed by `=` (longer base64), upper and lower case letters, and not a path or an
    /// identifier made of words (see `checks::aws_secret`).
    AwsSecret,
    /// [`Check::AwsSecret`] in a text that also holds an access key id (`AKIA…`, `ASIA…`).
    AwsPair,
}

/// The key families of generic assignments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    Password,
    Secret,
    Token,
    ApiKey,
}

/// One rule. `name` is the kind shown in `[REDACTED:<name>]`; two rules may share a kind.
#[derive(Debug)]
pub(crate) struct Rule {
    pub name: &'static str,
    pub anchors: &'static [&'static str],
    pub pattern: &'static str,
    pub check: Check,
    /// Texts the rule must redact, and look-alikes it must keep: read by the rule tests.
    #[cfg_attr(not(test), allow(dead_code))]
    pub examples: &'static [&'static str],
    #[cfg_attr(not(test), allow(dead_code))]
    pub keep: &'static [&'static str],
}

static DISABLED: AtomicBool = AtomicBool::new(false);

/// Turns redaction on or off for the whole process. Call once at start-up, before anything is
/// read; off (`--no-redact`) means secrets are indexed, cached and returned as written.
pub(crate) fn set_enabled(on: bool) {
    DISABLED.store(!on, Ordering::Relaxed);
}

/// Whether redaction is on (it is unless [`set_enabled`] turned it off).
pub(crate) fn enabled() -> bool {
    !DISABLED.load(Ordering::Relaxed)
}

static STANDARD: LazyLock<Redactor> = LazyLock::new(Redactor::standard);

/// `text` with every secret replaced by `[REDACTED:<kind>]` (borrowed when nothing was found
/// or redaction is off).
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    if enabled() {
        STANDARD.redact(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// Redacts `s` in place.
pub(crate) fn redact_string(s: &mut String) {
    if let Cow::Owned(r) = redact(s) {
        *s = r;
    }
}

/// Redacts an optional text in place.
pub(crate) fn redact_opt(s: &mut Option<String>) {
    if let Some(s) = s.as_mut() {
        redact_string(s);
    }
}

/// What identifies the redaction applied to stored text: on/off, [`RULES_VERSION`] and the
/// rules' fingerprint. Part of the persistent index's key (and of any store's).
pub(crate) fn key_bytes() -> Vec<u8> {
    if enabled() {
        format!("redact:v{RULES_VERSION}:{:016x}", STANDARD.fingerprint).into_bytes()
    } else {
        b"redact:off".to_vec()
    }
}

/// A rule ready to run; its pattern is compiled on first use.
struct Compiled {
    name: &'static str,
    pattern: &'static str,
    regex: OnceLock<Regex>,
    check: Check,
}

impl Compiled {
    /// Panics on an invalid built-in pattern: the unit tests compile every rule.
    fn regex(&self) -> &Regex {
        self.regex.get_or_init(|| {
            Regex::new(self.pattern).unwrap_or_else(|e| panic!("rule {}: {e}", self.name))
        })
    }
}

/// A compiled rule set with its anchor prefilter.
pub(crate) struct Redactor {
    rules: Vec<Compiled>,
    gate: Gate,
    /// Rules without anchors (the extra pattern), as a bit set: checked on every text.
    unanchored: u64,
    fingerprint: u64,
}

impl Redactor {
    /// The built-in rules plus the one from [`EXTRA_ENV`], if any.
    pub(crate) fn standard() -> Self {
        let extra = std::env::var(EXTRA_ENV).ok().filter(|p| !p.is_empty());
        let extra = extra.and_then(|p| match Regex::new(&p) {
            Ok(_) => Some(p),
            Err(e) => {
                tracing::warn!("ignoring {EXTRA_ENV}: not a valid pattern ({e})");
                None
            }
        });
        Self::new(RULES, extra.as_deref())
    }

    /// Prepares `rules` (and an `extra` pattern without anchors, checked on every text): the
    /// anchors' automaton now, each rule's pattern when a text first needs it.
    pub(crate) fn new(rules: &'static [Rule], extra: Option<&str>) -> Self {
        let mut h = Xxh3Default::new();
        h.update(&RULES_VERSION.to_le_bytes());
        let mut compiled = Vec::new();
        let mut anchors = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            for part in [r.name, r.pattern].iter().chain(r.anchors) {
                h.update(&(part.len() as u64).to_le_bytes());
                h.update(part.as_bytes());
            }
            h.update(format!("{:?}", r.check).as_bytes());
            anchors.extend(r.anchors.iter().map(|&a| (i, a)));
            compiled.push(Compiled {
                name: r.name,
                pattern: r.pattern,
                regex: OnceLock::new(),
                check: r.check,
            });
        }
        if let Some(p) = extra.and_then(|p| Regex::new(p).ok().map(|re| (p, re))) {
            h.update(b"extra");
            h.update(p.0.as_bytes());
            compiled.push(Compiled {
                name: "extra",
                pattern: "",
                regex: OnceLock::from(p.1),
                check: Check::Any,
            });
        }
        assert!(compiled.len() <= 64, "at most 64 rules (a u64 bit set)");
        let unanchored = (0..compiled.len())
            .filter(|&i| rules.get(i).is_none_or(|r| r.anchors.is_empty()))
            .fold(0u64, |m, i| m | (1 << i));
        Redactor {
            rules: compiled,
            gate: Gate::new(&anchors),
            unanchored,
            fingerprint: h.digest(),
        }
    }

    /// Which rules can match `text`, as a bit set: those with an anchor in it (one pass),
    /// and any without anchors.
    fn candidates(&self, text: &str) -> u64 {
        self.unanchored | self.gate.rules(text.as_bytes())
    }

    /// The secrets in `text`: byte ranges with the index of the rule that names them, sorted
    /// and merged (overlapping matches become one range named by the earliest rule).
    pub(crate) fn find(&self, text: &str) -> Vec<(usize, usize, usize)> {
        let mut found = Vec::new();
        let want = self.candidates(text);
        if want == 0 {
            return Vec::new();
        }
        for (i, rule) in self.rules.iter().enumerate() {
            if want & (1 << i) == 0 {
                continue;
            }
            for caps in rule.regex().captures_iter(text) {
                let Some(m) = caps.iter().skip(1).flatten().last().or_else(|| caps.get(0)) else {
                    continue;
                };
                if !m.is_empty() && checks::passes(rule.check, &caps, m.as_str(), text) {
                    found.push((m.start(), m.end(), i));
                }
            }
        }
        found.sort_unstable();
        let mut merged: Vec<(usize, usize, usize)> = Vec::with_capacity(found.len());
        for (s, e, i) in found {
            match merged.last_mut() {
                Some(last) if s < last.1 => {
                    last.1 = last.1.max(e);
                    last.2 = last.2.min(i);
                }
                _ => merged.push((s, e, i)),
            }
        }
        merged
    }

    /// `text` with every secret replaced by `[REDACTED:<kind>]`.
    pub(crate) fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let found = self.find(text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (s, e, i) in found {
            out.push_str(&text[at..s]);
            out.push_str("[REDACTED:");
            out.push_str(self.rules[i].name);
            out.push(']');
            at = e;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests;
