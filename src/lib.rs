//! conversation-search: BM25 search over coding-agent transcripts, served over MCP (stdio or HTTP).
//!
//! Layers, bottom up:
//! - [`util`]: timestamps, globs, varints and the cache codec.
//! - [`redact`]: secrets replaced by `[REDACTED:<kind>]` before any text is indexed or returned.
//! - [`transcript`]: agent formats on disk → conversations and turns (no index, no MCP).
//! - [`index`]: tokenizer, immutable segments with postings, BM25 scoring, snippets.
//! - [`cache`]: the persistent index file (a disposable accelerator).
//! - [`store`]: the durable store of every conversation and turn ever indexed (SQLite).
//! - [`corpus`]: the catalog of files and conversations, ingest, and immutable snapshots.
//! - [`live`]: keeping the corpus fresh while transcripts are being written.
//! - [`server`]: the MCP tools, thin shells over the corpus.
//! - [`cli`]: command line and the only code that prints to stdout.
#![deny(clippy::print_stdout)]

pub mod cache;
pub mod cli;
pub mod corpus;
pub mod index;
pub mod live;
pub mod redact;
pub mod server;
pub mod store;
pub mod transcript;
pub mod util;

#[cfg(test)]
mod layering;
