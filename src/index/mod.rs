//! The index layer: tokenizer, immutable segments with compact postings, a snapshot view with
//! exact BM25 statistics, query evaluation and snippets. Knows nothing about transcripts.
pub mod blockmax;
pub mod facts;
pub mod intern;
pub mod persist;
pub mod postings;
pub mod query;
pub mod scoring;
pub mod segment;
pub mod snippet;
pub mod stop;
pub mod tokenizer;
pub mod topk;
pub mod view;

pub use scoring::{Bm25, Hit, Plan, PlanTerm};
pub use segment::{DocMeta, DocText, NewDoc, Segment, SegmentBuilder};
pub use stop::Stop;
pub use tokenizer::Tokenizer;
pub use topk::{Evaluation, Pruning, evaluate};
pub use view::{IndexView, SegView, Tombstones};
