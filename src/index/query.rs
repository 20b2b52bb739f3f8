//! Queries: the syntax — plain keywords (any may match, BM25-ranked), `"exact phrase"`,
//! `-excluded` (a word or a `-"phrase"`), and `prefix*` — and the [`Plan`] it parses into,
//! which evaluation and snippets read. In a plan a phrase is required; a search ranks the turns
//! holding it first and then those holding its words ([`parse_words`]). Malformed syntax (an
//! unclosed quote) degrades to keywords; it is never an error.
use super::phrase::PhraseSet;
pub(crate) use super::phrase::normalize_for_phrase;
use super::schema::DocText;
use super::tokenizer::{MAX_TERM_BYTES, Tokenizer};
use std::sync::OnceLock;

/// One term of a query plan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanTerm {
    pub text: String,
    /// Clause the term belongs to (a keyword, a phrase, a prefix).
    pub group: u16,
    /// Query-side multiplicity.
    pub weight: f32,
    /// The whole form of a compound keyword (`notify_debouncer`, `src/index/mod.rs`, `--flag`,
    /// `CamelCase`): turns holding it rank above turns holding only its parts.
    pub whole: bool,
}

/// What to evaluate: scoring terms grouped in clauses, prefixes to expand, clauses every
/// match must satisfy, and terms no match may contain.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Plan {
    pub terms: Vec<PlanTerm>,
    /// (prefix, group): expanded to the dictionary's terms with that prefix.
    pub prefixes: Vec<(String, u16)>,
    /// Bit per group that every match must hold.
    pub required: u64,
    pub excluded: Vec<String>,
    /// Phrases every match must contain, normalised by [`normalize_for_phrase`].
    pub phrases: Vec<String>,
    /// Phrases no match may contain, normalised likewise.
    pub excluded_phrases: Vec<String>,
    /// The terms of the required phrases' ASCII words: a match holds each of them unless its
    /// segment marks it as having words that are not terms (see `tokenizer::words`).
    pub needed: Vec<String>,
    /// What the user wrote for each group (keyword, `"phrase"`, `prefix*`).
    pub labels: Vec<String>,
    /// The natural-language keywords (term, group) whose other word forms may also match
    /// (see [`super::forms`]).
    pub words: Vec<(String, u16)>,
    /// When to give up and return what was found (time budget, cancellation).
    pub stop: super::stop::Stop,
    /// `phrases` and `excluded_phrases`, compiled for matching.
    pub compiled: CompiledPhrases,
}

impl Plan {
    /// Starts a new clause labelled `label`; groups past 63 share the last bit.
    pub(crate) fn new_group(&mut self, label: &str) -> u16 {
        self.labels.push(label.to_owned());
        (self.labels.len() - 1) as u16
    }

    /// Whether the plan holds phrases to check (required or excluded).
    pub(crate) fn has_phrases(&self) -> bool {
        !self.phrases.is_empty() || !self.excluded_phrases.is_empty()
    }

    /// The labels of the required phrases, as written (`"exact phrase"`).
    pub(crate) fn phrase_labels(&self) -> Vec<String> {
        self.matched_labels(self.required)
    }

    /// True when nothing in the plan can match a document.
    pub(crate) fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.prefixes.is_empty()
    }

    /// Labels of the groups set in `groups`.
    pub(crate) fn matched_labels(&self, groups: u64) -> Vec<String> {
        self.labels
            .iter()
            .enumerate()
            .filter(|(i, _)| groups & (1u64 << (*i).min(63)) != 0)
            .map(|(_, l)| l.clone())
            .collect()
    }
}

impl Plan {
    /// Whether a document's text passes the plan's phrase constraints (`scratch` is reused
    /// between calls). A phrase lies within one field: it never spans the prompt and the reply.
    pub(crate) fn phrases_ok(&self, text: &DocText, scratch: &mut String) -> bool {
        if !self.has_phrases() {
            return true;
        }
        let set = self
            .compiled
            .0
            .get_or_init(|| PhraseSet::new(&self.phrases, &self.excluded_phrases));
        set.ok([text.user, text.assistant, text.tools], scratch)
    }
}

/// The plan's phrases compiled on first use. Not part of what a plan means (equal whatever
/// they hold), and not shared by clones (a clone may change its phrases).
#[derive(Debug, Default)]
pub(crate) struct CompiledPhrases(OnceLock<PhraseSet>);

impl Clone for CompiledPhrases {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for CompiledPhrases {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Longest phrase or query kept, in bytes (an agent pasting a whole file is not a query).
const MAX_QUERY_BYTES: usize = 4096;
/// Shortest prefix accepted before `*`.
const MIN_PREFIX_CHARS: usize = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Word(String),
    Phrase(String),
    Excluded(String),
    ExcludedPhrase(String),
    Prefix(String),
}

/// Splits a query into pieces, honouring quotes.
fn pieces(query: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = query;
    if rest.len() > MAX_QUERY_BYTES {
        let mut cut = MAX_QUERY_BYTES;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        rest = &rest[..cut];
    }
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let negated_phrase = rest.starts_with("-\"");
        if rest.starts_with('"') || negated_phrase {
            let body = &rest[if negated_phrase { 2 } else { 1 }..];
            match body.find('"') {
                Some(end) => {
                    let phrase = body[..end].trim().to_owned();
                    if !phrase.is_empty() {
                        out.push(if negated_phrase {
                            Piece::ExcludedPhrase(phrase)
                        } else {
                            Piece::Phrase(phrase)
                        });
                    }
                    rest = &body[end + 1..];
                }
                None => {
                    // unclosed quote: the rest is plain keywords
                    rest = body;
                }
            }
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        rest = &rest[end..];
        let chars: Vec<char> = word.chars().collect();
        if chars.len() >= 2 && chars[0] == '-' && chars[1].is_alphanumeric() {
            out.push(Piece::Excluded(word[1..].to_owned()));
        } else if let Some(stem) = word.strip_suffix('*') {
            let stem = stem
                .trim_start_matches(['-', '.', '/', ':', '\\'])
                .trim_end_matches('*');
            if stem.chars().count() >= MIN_PREFIX_CHARS {
                out.push(Piece::Prefix(stem.to_lowercase()));
            } else if !stem.is_empty() {
                out.push(Piece::Word(stem.to_owned()));
            }
        } else {
            out.push(Piece::Word(word.to_owned()));
        }
    }
    out
}

/// How a query's quoted phrases are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quotes {
    /// As phrases every match must hold.
    Phrases,
    /// As their words, plain keywords: what a phrase query falls back on.
    Words,
}

/// Parses a query into an evaluation plan.
pub(crate) fn parse(query: &str, tok: &mut Tokenizer) -> Plan {
    parse_as(query, tok, Quotes::Phrases)
}

/// Parses a query with its quoted phrases read as plain keywords (`"Becoming Nicole"` as
/// `Becoming Nicole`): the words that still rank when no turn holds a phrase. Exclusions,
/// `-"phrases"` included, stay.
pub(crate) fn parse_words(query: &str, tok: &mut Tokenizer) -> Plan {
    parse_as(query, tok, Quotes::Words)
}

fn parse_as(query: &str, tok: &mut Tokenizer, quotes: Quotes) -> Plan {
    let mut b = PlanBuilder::default();
    for piece in pieces(query) {
        match piece {
            Piece::Word(w) => b.word(&w, tok),
            Piece::Phrase(p) if quotes == Quotes::Words => {
                for w in p.split_whitespace() {
                    b.word(w, tok);
                }
            }
            Piece::Phrase(p) => b.phrase(&p, tok),
            Piece::Excluded(w) => b.excluded(&w, tok),
            Piece::ExcludedPhrase(p) => b.excluded_phrase(&p),
            Piece::Prefix(p) => {
                let group = b.plan.new_group(&format!("{p}*"));
                b.plan.prefixes.push((p, group));
            }
        }
    }
    weigh_function_words(&mut b.plan, b.keyword_groups);
    b.plan
}

/// A plan being built, one piece of the query at a time.
#[derive(Default)]
struct PlanBuilder {
    plan: Plan,
    /// Groups that are plain keywords (not phrases).
    keyword_groups: u64,
}

impl PlanBuilder {
    /// Adds `term` to `group`, or counts it once more if it is there.
    fn add(&mut self, term: &str, group: u16, whole: bool) {
        let plan = &mut self.plan;
        if let Some(existing) = plan
            .terms
            .iter_mut()
            .find(|p| p.text == term && p.group == group)
        {
            existing.weight += 1.0;
        } else {
            plan.terms.push(PlanTerm {
                text: term.to_owned(),
                group,
                weight: 1.0,
                whole,
            });
        }
    }

    /// A plain keyword: one clause per keyword as typed (a repeat joins it), its whole form and
    /// parts scoring together; a natural-language word may also meet its other forms.
    fn word(&mut self, w: &str, tok: &mut Tokenizer) {
        let terms = keyword_terms(w, tok);
        if terms.is_empty() {
            return;
        }
        let plan = &mut self.plan;
        let group = match plan.labels.iter().position(|l| l.eq_ignore_ascii_case(w)) {
            Some(g) => g as u16,
            None => plan.new_group(w),
        };
        self.keyword_groups |= 1u64 << group.min(63);
        if let [(t, false)] = terms.as_slice()
            && is_natural_word(w)
            && !super::function_words::is_function_word(t)
            && !plan.words.iter().any(|(x, g)| x == t && *g == group)
        {
            plan.words.push((t.clone(), group));
        }
        for (t, whole) in terms {
            self.add(&t, group, whole);
        }
    }

    /// A required phrase: its terms score as one clause every match must hold, its text is
    /// checked, and its ASCII words' terms are [`Plan::needed`].
    fn phrase(&mut self, p: &str, tok: &mut Tokenizer) {
        let mut terms = Vec::new();
        tok.for_each_term(p, |t| terms.push(t.to_owned()));
        if terms.is_empty() {
            return;
        }
        let group = self.plan.new_group(&format!("\"{p}\""));
        self.plan.required |= 1u64 << group.min(63);
        for t in terms {
            self.add(&t, group, false);
        }
        let mut norm = String::new();
        normalize_for_phrase(p, &mut norm);
        let plan = &mut self.plan;
        let words = norm.split(' ').filter(|w| !w.is_empty());
        for w in words.filter(|w| w.is_ascii() && w.len() <= MAX_TERM_BYTES) {
            tok.for_each_term(w, |t| {
                if !plan.needed.iter().any(|n| n == t) {
                    plan.needed.push(t.to_owned());
                }
            });
        }
        plan.phrases.push(norm);
    }

    /// An excluded word: its first term.
    fn excluded(&mut self, w: &str, tok: &mut Tokenizer) {
        let mut first = None;
        tok.for_each_term(w, |t| {
            first.get_or_insert_with(|| t.to_owned());
        });
        if let Some(t) = first {
            self.plan.excluded.push(t);
        }
    }

    fn excluded_phrase(&mut self, p: &str) {
        let mut norm = String::new();
        normalize_for_phrase(p, &mut norm);
        if !norm.trim().is_empty() {
            self.plan.excluded_phrases.push(norm);
        }
    }
}

/// The terms of keyword `w` as typed, each with whether it is a whole form: a compound's
/// whole form (`notify_debouncer`, `src/index/mod.rs`, `__init__`), which holds the keyword's
/// other terms, not merely the first of several words (`Nate's` is `nate` and `s`, `foo(bar)`
/// is `foo` and `bar`: no whole form). The ending of a possessive or contraction (`Nate's`,
/// `it’s`, `don't`, `we're`) is left out: the word is its head. An opaque token (a key, hash,
/// UUID: [`is_opaque`]) is only its whole forms: a turn holding a fragment of it does not match.
fn keyword_terms(w: &str, tok: &mut Tokenizer) -> Vec<(String, bool)> {
    let mut spans: Vec<(String, usize, usize)> = Vec::new();
    tok.for_each_term_at(w, |t, a, b| spans.push((t.to_owned(), a, b)));
    let ending = |t: &str, a: usize| {
        let before = &w[..a];
        (before.ends_with('\'') || before.ends_with('\u{2019}')) && is_contraction_tail(t)
    };
    let whole_forms = tok.config().whole;
    let opaque = is_opaque(w);
    let inside = |i: usize, a: usize, b: usize| {
        spans
            .iter()
            .enumerate()
            .any(|(j, (_, c, d))| j != i && c <= &a && &b <= d && (*c, *d) != (a, b))
    };
    spans
        .iter()
        .enumerate()
        .filter(|(_, (t, a, _))| !ending(t, *a))
        .filter(|(i, (_, a, b))| !(opaque && inside(*i, *a, *b)))
        .map(|(i, (t, a, b))| {
            let holds_others = spans
                .iter()
                .enumerate()
                .any(|(j, (_, c, d))| j != i && a <= c && d <= b && (c, d) != (a, b));
            (t.clone(), whole_forms && holds_others)
        })
        .collect()
}

/// Whether `t`, after an apostrophe, is the ending of a possessive or an English contraction
/// (`'s`, `n't`'s `t`, `'re`, `'ve`, `'ll`, `'d`, `'m`): not a word of the question.
pub(crate) fn is_contraction_tail(t: &str) -> bool {
    matches!(t, "s" | "t" | "re" | "ve" | "ll" | "d" | "m")
}

/// Shortest word stemmed, in bytes (`is`, `us` and the like are left alone).
const MIN_WORD: usize = 3;

/// Whether the keyword `typed` (as the user wrote it) is a natural-language word whose forms
/// may be met: letters only, lowercase after at most a first capital (`Pets`, `pets`), at least
/// [`MIN_WORD`] long, once the punctuation of a sentence around it (`"pets?"`, `(pets),`) and
/// a possessive or contraction ending (`Nate's`) are set aside. Anything with a digit, `_`,
/// `/`, `.`, `-`, a camel hump or all capitals is code or a name of something, and is not.
pub(crate) fn is_natural_word(typed: &str) -> bool {
    let w = typed.trim_start_matches(['"', '\'', '(', '[', '{', '\u{201C}', '\u{2018}']);
    let w = w.trim_end_matches([
        '?', '!', '.', ',', ';', ':', '"', '\'', ')', ']', '}', '\u{201D}', '\u{2019}',
    ]);
    let w = match w.rfind(['\'', '\u{2019}']) {
        Some(i)
            if super::query::is_contraction_tail(&w[i..].chars().skip(1).collect::<String>()) =>
        {
            &w[..i]
        }
        _ => w,
    };
    let b = w.as_bytes();
    b.len() >= MIN_WORD && b[0].is_ascii_alphabetic() && b[1..].iter().all(u8::is_ascii_lowercase)
}

/// Shortest opaque token, in bytes.
const MIN_OPAQUE: usize = 16;

/// Whether keyword `w` is an opaque token (a key, hash, UUID, base64 run): at least
/// [`MIN_OPAQUE`] bytes of ASCII letters, digits and `-_./+=:`, in which letters and digits
/// alternate at least 4 times and once per 10 bytes (`550e8400-e29b-41d4-…`), which no word
/// or identifier of words does (`sha256sum_x86_64` alternates 3 times).
pub(crate) fn is_opaque(w: &str) -> bool {
    let w = w.trim_start_matches(['"', '\'', '(', '[', '{', '<']);
    let w = w.trim_end_matches(['?', '!', '.', ',', ';', ':', '"', '\'', ')', ']', '}', '>']);
    let b = w.as_bytes();
    if b.len() < MIN_OPAQUE
        || !b
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_./+=:".contains(c))
    {
        return false;
    }
    let turns = b
        .windows(2)
        .filter(|p| {
            p[0].is_ascii_alphanumeric()
                && p[1].is_ascii_alphanumeric()
                && p[0].is_ascii_digit() != p[1].is_ascii_digit()
        })
        .count();
    turns >= 4 && turns * 10 >= b.len()
}

/// Weighs the function words of plain keywords ([`super::function_words`]) next to nothing
/// when the query has other words to rank by; a query of only such words keeps their weight.
fn weigh_function_words(plan: &mut Plan, keyword_groups: u64) {
    use super::function_words::is_function_word;
    let in_keyword = |t: &PlanTerm| keyword_groups & (1u64 << t.group.min(63)) != 0;
    let content = plan
        .terms
        .iter()
        .any(|t| !(in_keyword(t) && is_function_word(&t.text)))
        || !plan.prefixes.is_empty();
    if !content {
        return;
    }
    let weight = super::scoring::QueryWeights::get().function_word;
    for t in plan.terms.iter_mut() {
        if in_keyword(t) && is_function_word(&t.text) {
            t.weight *= weight;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::tokenizer::TokenizerConfig;

    fn plan(q: &str) -> Plan {
        parse(q, &mut Tokenizer::with_config(TokenizerConfig::default()))
    }

    #[test]
    fn parses_operators() {
        let p = plan(r#"watchdog "exact phrase" -noise debounc* --max-staleness-ms"#);
        assert!(p.terms.iter().any(|t| t.text == "watchdog"));
        assert!(p.terms.iter().any(|t| t.text == "max-staleness-ms"));
        assert_eq!(p.phrases, [" exact phrase "]);
        assert_eq!(p.excluded, ["noise"]);
        assert_eq!(p.prefixes.len(), 1);
        assert_eq!(p.prefixes[0].0, "debounc");
        assert_eq!(p.required.count_ones(), 1);
    }

    #[test]
    fn unclosed_quote_degrades_to_keywords() {
        let p = plan(r#""unclosed words here"#);
        assert!(p.phrases.is_empty());
        assert_eq!(p.terms.len(), 3);
        assert_eq!(p.required, 0);
    }

    #[test]
    fn parse_words_reads_phrases_as_keywords_and_keeps_exclusions() {
        let p = parse_words(
            r#""Becoming Nicole" nicole -"bad thing" -noise"#,
            &mut Tokenizer::with_config(TokenizerConfig::default()),
        );
        assert!(p.phrases.is_empty() && p.needed.is_empty());
        assert_eq!(p.required, 0);
        assert_eq!(p.labels, ["Becoming", "Nicole"]);
        let terms: Vec<(&str, f32)> = p
            .terms
            .iter()
            .map(|t| (t.text.as_str(), t.weight))
            .collect();
        assert_eq!(terms, [("becoming", 1.0), ("nicole", 2.0)]);
        assert_eq!(p.excluded_phrases, [" bad thing "]);
        assert_eq!(p.excluded, ["noise"]);
        assert_eq!(
            plan(r#""Becoming Nicole""#).phrase_labels(),
            ["\"Becoming Nicole\""]
        );
    }

    #[test]
    fn excluded_phrase_and_repeats() {
        let p = plan(r#"alpha alpha -"bad thing""#);
        assert_eq!(p.terms.len(), 1);
        assert_eq!(p.terms[0].weight, 2.0);
        assert_eq!(p.excluded_phrases, [" bad thing "]);
    }

    #[test]
    fn only_a_compound_whole_form_is_weighed_as_one() {
        let whole = |q: &str| -> Vec<(String, bool)> {
            plan(q)
                .terms
                .iter()
                .map(|t| (t.text.clone(), t.whole))
                .collect()
        };
        let own = |v: &[(&str, bool)]| -> Vec<(String, bool)> {
            v.iter().map(|(t, w)| (t.to_string(), *w)).collect()
        };
        assert_eq!(whole("Nate's"), own(&[("nate", false)]));
        assert_eq!(whole("it\u{2019}s"), own(&[("it", false)]));
        assert_eq!(whole("don't"), own(&[("don", false)]));
        assert_eq!(whole("we\u{2019}re"), own(&[("we", false)]));
        assert_eq!(whole("foo(bar)"), own(&[("foo", false), ("bar", false)]));
        assert_eq!(
            whole("Vec<String>"),
            own(&[("vec", false), ("string", false)])
        );
        assert_eq!(
            whole("notify_debouncer"),
            own(&[
                ("notify_debouncer", true),
                ("notify", false),
                ("debouncer", false)
            ])
        );
        assert_eq!(
            whole("__init__"),
            own(&[("__init__", true), ("init", false)])
        );
    }

    #[test]
    fn function_words_weigh_little_unless_they_are_the_whole_query() {
        let weights = |q: &str| -> Vec<f32> { plan(q).terms.iter().map(|t| t.weight).collect() };
        let fw = crate::index::scoring::QueryWeights::get().function_word;
        assert_eq!(weights("what did melanie paint"), [fw, fw, 1.0, 1.0]);
        assert_eq!(weights("what did they say"), [fw, fw, fw, 1.0]);
        assert_eq!(weights("what did they"), [1.0, 1.0, 1.0]);
        // a phrase's words are the phrase, not function words
        assert_eq!(weights("\"of the\" rings"), [1.0, 1.0, 1.0]);
    }
}
