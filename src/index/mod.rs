//! The index layer: tokenizer, immutable segments with compact postings, a snapshot view with
//! exact BM25 statistics, query evaluation and snippets.
//!
//! It imports nothing from `transcript` or `corpus`: a document is three text fields of its own,
//! a context field (the previous turn's prompt, scored BM25F-style at a lower weight with its own
//! length normalisation) and a few numbers ([`schema`]), and the line format of the tools field ([`facts`]) is the index's own
//! schema, which the corpus writes and the segment builder reads back for its file table.
//!
//! Modules, each using only those before it: `schema` (documents and the posting format),
//! `tokenizer`, `intern`, `pool` (posting lists under construction) and `facts` (the leaves);
//! `scoring` (BM25 arithmetic); `blockmax`; `columns` (per-document metadata); `segment` and `builder`; `view`; `segment_codec`; `merge`; `phrase` (matching
//! phrases in texts); `query` (syntax and [`Plan`]); `snippet`; `expand` (what a prefix stands for, over the whole view); `forms` (the other forms of a query's words, over the view); `maxscore`
//! (one segment's scoring) and `topk` (the evaluation).
pub mod blockmax;
mod builder;
mod columns;
mod expand;
pub mod facts;
mod fold;
pub mod forms;
pub mod function_words;
pub mod intern;
mod lookahead;
pub mod maxscore;
pub mod merge;
pub mod phrase;
mod pool;
pub mod query;
pub mod schema;
pub mod scoring;
pub mod segment;
pub mod segment_codec;
pub mod snippet;
pub mod stop;
mod termsort;
pub mod tokenizer;
pub mod topk;
pub mod view;

pub use builder::SegmentBuilder;
pub use query::{Plan, PlanTerm};
pub use schema::{DocMeta, DocText, NewDoc};
pub use scoring::{Bm25, Hit};
pub use segment::Segment;
pub use stop::Stop;
pub use tokenizer::Tokenizer;
pub use topk::{EvalRequest, Evaluation, Lead, Pruning, evaluate};
pub use view::{IndexView, SegView, Tombstones};
