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
pub(crate) mod blockmax;
mod builder;
mod columns;
mod expand;
pub(crate) mod facts;
mod fold;
pub(crate) mod forms;
pub(crate) mod function_words;
pub(crate) mod intern;
mod lookahead;
pub(crate) mod maxscore;
pub(crate) mod merge;
pub(crate) mod phrase;
mod pool;
pub(crate) mod query;
pub(crate) mod schema;
pub(crate) mod scoring;
pub(crate) mod segment;
pub(crate) mod segment_codec;
pub(crate) mod snippet;
pub(crate) mod stop;
mod termsort;
pub(crate) mod tokenizer;
pub(crate) mod topk;
pub(crate) mod view;

pub(crate) use builder::SegmentBuilder;
pub(crate) use query::Plan;
pub(crate) use schema::{DocMeta, NewDoc};
pub(crate) use scoring::{Bm25, Hit};
pub(crate) use segment::Segment;
pub(crate) use stop::Stop;
pub(crate) use tokenizer::Tokenizer;
pub(crate) use topk::{EvalRequest, Evaluation, Lead, Pruning, evaluate};
pub(crate) use view::{IndexView, SegView, Tombstones};
