//! BM25 arithmetic: the parameters and per-field weights, Lucene's idf, the scored [`Hit`]
//! and its relevance order, and the 4-decimal rounding scores are shown and compared with.
//! The evaluation that uses them is `topk`.
use super::schema::{FIELD_CONTEXT, FIELDS, OWN_FIELDS, Tf};
use std::cmp::Ordering;

/// BM25 parameters and field weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bm25 {
    pub k1: f32,
    pub b: f32,
    /// Weight of a term occurrence per field (user, assistant, tools, context).
    pub field_weights: [f32; FIELDS],
}

impl Bm25 {
    /// `1 / (1 - b + b len / avg)`: a field group's length normalisation.
    #[inline]
    pub(crate) fn inv_norm(&self, len: u32, avg: f32) -> f32 {
        1.0 / (1.0 - self.b + self.b * len as f32 / avg)
    }

    /// BM25F's pseudo-frequency `x` of a term in a document (the contribution is then
    /// `idf (k1 + 1) x / (x + k1)`): the weighted frequencies of the own fields over their
    /// normalised length, plus the context's over its own; `inv` is [`Self::inv_norm`] of the
    /// own fields and of the context. Combined before saturation, so a topic word in both the
    /// turn and its context is still one word, not two.
    #[inline]
    pub(crate) fn weighted_tf(&self, tf: &Tf, inv: [f32; 2]) -> f32 {
        let w = &self.field_weights;
        let own: f32 = (0..OWN_FIELDS).map(|f| w[f] * tf[f] as f32).sum();
        own * inv[0] + w[FIELD_CONTEXT] * tf[FIELD_CONTEXT] as f32 * inv[1]
    }
}

impl Default for Bm25 {
    /// The measured defaults; `CONVERSATION_SEARCH_BM25` (`k1,b,user,assistant,tools[,context]`,
    /// read once) overrides them for the retrieval benchmark.
    fn default() -> Self {
        static PARAMS: std::sync::OnceLock<Bm25> = std::sync::OnceLock::new();
        *PARAMS.get_or_init(|| {
            // b = 0.5 rather than the textbook 0.75: measured on the retrieval benchmark, long
            // turns holding every query word no longer lose to short turns holding some.
            // Field weights 1/1/1: weighting prompts, replies or tools differently only hurt.
            // The context (the previous prompt) at its query weight (`QueryWeights::context`).
            let base = Bm25 {
                k1: 1.2,
                b: 0.5,
                field_weights: [1.0, 1.0, 1.0, QueryWeights::get().context],
            };
            let Ok(v) = std::env::var("CONVERSATION_SEARCH_BM25") else {
                return base;
            };
            let n: Vec<f32> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            match n.as_slice() {
                [k1, b, u, a, t] => Bm25 {
                    k1: *k1,
                    b: *b,
                    field_weights: [*u, *a, *t, base.field_weights[FIELD_CONTEXT]],
                },
                [k1, b, u, a, t, c] => Bm25 {
                    k1: *k1,
                    b: *b,
                    field_weights: [*u, *a, *t, *c],
                },
                _ => base,
            }
        })
    }
}

/// Lucene's BM25 idf: always positive.
pub(crate) fn idf(n_docs: u64, df: u64) -> f32 {
    let n = n_docs as f64;
    let df = df as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// A scored document.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hit {
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
pub(crate) fn by_score(a: &Hit, b: &Hit, tie: impl Fn(&Hit, &Hit) -> Ordering) -> Ordering {
    b.rounded.cmp(&a.rounded).then_with(|| tie(a, b))
}

/// Weight of a compound keyword's whole form relative to its parts: the exact identifier,
/// path or flag the agent typed (`notify_debouncer`) outweighs turns that only hold its parts
/// (`notify`, `debouncer`), even short ones.
pub(crate) const WHOLE_FORM_WEIGHT: f32 = 8.0;

/// Score rounded to 4 decimals, as an integer for exact comparisons.
pub(crate) fn quantize(score: f32) -> i64 {
    // scores are positive: adding a half and truncating rounds half up, without a libm call
    (f64::from(score.max(0.0)) * 10_000.0 + 0.5) as i64
}

/// Default of `QueryWeights::form_max`.
const FORM_MAX: bool = true;

/// Query-side weights of the ranking rules, measured on the dev sets (`scripts/bench-quality`).
/// `CONVERSATION_SEARCH_RANK` (`name=value` pairs, comma-separated, read once) overrides them
/// for that benchmark; it is not a user setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct QueryWeights {
    /// Multiplier of a function word's weight in a query with other words (`fw`).
    pub function_word: f32,
    /// Weight of a term occurrence in a turn's context field (the previous prompt) relative
    /// to one in the turn itself (`ctx`; [`Bm25`]'s context field weight).
    pub context: f32,
    /// Multiplier of the score of a turn from the time a query names (`time`).
    pub time: f32,
    /// Whether a turn that matches only through its context is a hit (`ctxfind`, 0 or 1);
    /// when not, the context only raises turns that match themselves.
    pub context_finds: bool,
    /// Weight of another form of a natural-language word (same stem), relative to the word as
    /// typed (`stem`; 0: word forms do not meet).
    pub word_form: f32,
    /// Whether a word and its other forms count once in a turn: the largest of their
    /// contributions, not their sum (`formmax`, 0 or 1).
    pub form_max: bool,
}

impl QueryWeights {
    pub(crate) const DEFAULT: QueryWeights = QueryWeights {
        function_word: 0.2,
        context: 0.5,
        time: 2.5,
        context_finds: false,
        word_form: 0.5,
        form_max: FORM_MAX,
    };

    /// The weights in effect.
    pub(crate) fn get() -> QueryWeights {
        static W: std::sync::OnceLock<QueryWeights> = std::sync::OnceLock::new();
        *W.get_or_init(|| {
            let mut w = Self::DEFAULT;
            let Ok(v) = std::env::var("CONVERSATION_SEARCH_RANK") else {
                return w;
            };
            for pair in v.split(',') {
                let Some((k, x)) = pair.split_once('=') else {
                    continue;
                };
                let Ok(x) = x.trim().parse::<f32>() else {
                    continue;
                };
                match k.trim() {
                    "fw" => w.function_word = x,
                    "ctx" => w.context = x,
                    "time" => w.time = x,
                    "ctxfind" => w.context_finds = x != 0.0,
                    "stem" => w.word_form = x,
                    "formmax" => w.form_max = x != 0.0,
                    _ => {}
                }
            }
            w
        })
    }
}
