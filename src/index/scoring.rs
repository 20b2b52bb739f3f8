//! BM25 scoring over an [`IndexView`]: document-at-a-time merging of the query terms' postings
//! (cost grows with the postings of the query terms, not with the corpus), per-field term
//! weights, required/excluded clauses, caller filters, and top-k selection with a stable order.
use super::segment::FIELDS;
use std::cmp::Ordering;

/// BM25 parameters and field weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25 {
    pub k1: f32,
    pub b: f32,
    /// Weight of a term occurrence per field (user, assistant, tools).
    pub field_weights: [f32; FIELDS],
}

impl Default for Bm25 {
    /// The measured defaults; `CONVERSATION_SEARCH_BM25` (`k1,b,user,assistant,tools`, read
    /// once) overrides them for the retrieval benchmark.
    fn default() -> Self {
        static PARAMS: std::sync::OnceLock<Bm25> = std::sync::OnceLock::new();
        *PARAMS.get_or_init(|| {
            // b = 0.5 rather than the textbook 0.75: measured on the retrieval benchmark, long
            // turns holding every query word no longer lose to short turns holding some.
            // Field weights 1/1/1: weighting prompts, replies or tools differently only hurt.
            let base = Bm25 {
                k1: 1.2,
                b: 0.5,
                field_weights: [1.0, 1.0, 1.0],
            };
            let Ok(v) = std::env::var("CONVERSATION_SEARCH_BM25") else {
                return base;
            };
            let n: Vec<f32> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            match n.as_slice() {
                [k1, b, u, a, t] => Bm25 {
                    k1: *k1,
                    b: *b,
                    field_weights: [*u, *a, *t],
                },
                _ => base,
            }
        })
    }
}

/// Lucene's BM25 idf: always positive.
pub fn idf(n_docs: u64, df: u64) -> f32 {
    let n = n_docs as f64;
    let df = df as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// One term of a query plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanTerm {
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
pub struct Plan {
    pub terms: Vec<PlanTerm>,
    /// (prefix, group): expanded to the dictionary's terms with that prefix.
    pub prefixes: Vec<(String, u16)>,
    /// Bit per group that every match must hold.
    pub required: u64,
    pub excluded: Vec<String>,
    /// Phrases every match must contain, normalised by `query::normalize_for_phrase`.
    pub phrases: Vec<String>,
    /// Phrases no match may contain, normalised likewise.
    pub excluded_phrases: Vec<String>,
    /// What the user wrote for each group (keyword, `"phrase"`, `prefix*`).
    pub labels: Vec<String>,
    /// When to give up and return what was found (time budget, cancellation).
    pub stop: super::stop::Stop,
}

impl Plan {
    /// Starts a new clause labelled `label`; groups past 63 share the last bit.
    pub fn new_group(&mut self, label: &str) -> u16 {
        self.labels.push(label.to_owned());
        (self.labels.len() - 1) as u16
    }

    /// True when nothing in the plan can match a document.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.prefixes.is_empty()
    }

    /// Labels of the groups set in `groups`.
    pub fn matched_labels(&self, groups: u64) -> Vec<String> {
        self.labels
            .iter()
            .enumerate()
            .filter(|(i, _)| groups & (1u64 << (*i).min(63)) != 0)
            .map(|(_, l)| l.clone())
            .collect()
    }
}

/// Most dictionary terms one prefix expands to, per segment (the most frequent ones).
pub const MAX_PREFIX_EXPANSION: usize = 64;

/// A scored document.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// Index into `IndexView::segs`.
    pub seg: usize,
    pub doc: u32,
    pub score: f32,
    /// Bit per group the document matched.
    pub groups: u64,
    /// Bit per field in which any scoring term matched.
    pub fields: u8,
    /// Score rounded to 4 decimals (what is shown and compared).
    pub rounded: i64,
}

/// Relevance order: rounded score descending, then `tie` (a stable key order).
pub fn by_score(a: &Hit, b: &Hit, tie: impl Fn(&Hit, &Hit) -> Ordering) -> Ordering {
    b.rounded.cmp(&a.rounded).then_with(|| tie(a, b))
}

/// Weight of a compound keyword's whole form relative to its parts: the exact identifier,
/// path or flag the agent typed (`notify_debouncer`) outweighs turns that only hold its parts
/// (`notify`, `debouncer`), even short ones.
pub const WHOLE_FORM_WEIGHT: f32 = 8.0;

/// Score rounded to 4 decimals, as an integer for exact comparisons.
pub fn quantize(score: f32) -> i64 {
    // scores are positive: adding a half and truncating rounds half up, without a libm call
    (f64::from(score.max(0.0)) * 10_000.0 + 0.5) as i64
}

/// Whether a document's text passes the plan's phrase constraints.
pub(super) fn phrases_ok(
    plan: &Plan,
    text: &super::segment::DocText,
    scratch: &mut String,
) -> bool {
    if plan.phrases.is_empty() && plan.excluded_phrases.is_empty() {
        return true;
    }
    // a phrase lies within one field: it never spans the prompt and the reply
    let mut found = vec![false; plan.phrases.len()];
    for field in [text.user, text.assistant, text.tools] {
        super::query::normalize_for_phrase(field, scratch);
        if plan
            .excluded_phrases
            .iter()
            .any(|p| scratch.contains(p.as_str()))
        {
            return false;
        }
        for (f, p) in found.iter_mut().zip(&plan.phrases) {
            *f |= scratch.contains(p.as_str());
        }
    }
    found.iter().all(|&f| f)
}
