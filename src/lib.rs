//! conversation-search: BM25 search over coding-agent transcripts, served over MCP (stdio or HTTP).
//!
//! This is the architecture; how to use the program is in `README.md`, how it is measured in
//! `scripts/README.md`.
//!
//! # Layers
//!
//! Layers point one way, bottom up; a module uses only its own layer and those below it, and
//! siblings do not import each other in a cycle (the unit test in `src/layering.rs` checks both,
//! over all non-test code of every file, and that no format is named outside [`transcript`];
//! `src/fn_length.rs` checks that a function over 80 lines says why in its doc comment):
//!
//! ```text
//! util → redact → transcript → index → cache → store → corpus → live → server → cli → main
//! ```
//!
//! - [`util`]: timestamps (chrono, with a fast path for the usual form), globs, varints, the cache
//!   codec (xxh3 checksums), immutable byte buffers that may be ranges of a mapped file, huge-page
//!   arrays, a JSON string's next special byte (SSE2), short copies, and the static musl binary's
//!   own `memcpy`/`memmove`/`memcmp`/`bcmp` (`util::libc_mem`).
//! - [`redact`]: secrets replaced by `[REDACTED:<kind>]` before any text is indexed or returned:
//!   the rules as data, their checks, one pass gated by an Aho–Corasick table over the rules'
//!   literal anchors.
//! - [`transcript`]: one file (or folder) per agent format, lenient wire types, no MCP types →
//!   conversations and turns; the [`transcript::Adapter`] registry. The only place a format is
//!   named: what differs per format (default location, environment overrides, whether `PATTERN`
//!   filters it, how its conversations are named as projects) is asked of its adapter.
//! - [`index`]: the tokenizer (accent and width folding, identifiers whole and by parts), immutable
//!   segments (dictionary, postings, per-turn columns, block maxima), MaxScore with block-max
//!   pruning, prefix expansion over the whole view, top-k, phrase checks, snippets.
//! - [`cache`]: the persistent index file (a disposable accelerator, keyed by an opaque
//!   configuration key, mapped read-only and verified while decoding) and the writer lock and
//!   generation files that servers sharing it use.
//! - [`store`]: the durable store of every conversation and turn ever indexed (SQLite in WAL mode):
//!   schema, records, writer lock, forget, retention, and `export`/`import` in the versioned
//!   exchange format of [`store::exchange`] (`"v":1` NDJSON, one line per conversation and per
//!   turn; the `_bulk` form adds an action line before each).
//! - [`corpus`]: the indexed corpus, owned by [`corpus::writer::Writer`], a coordinator of parts
//!   that each own their state (below), and the immutable [`corpus::Snapshot`] every query reads.
//! - [`live`]: keeping the corpus fresh: `live::indexer::Indexer` (lock election, watching,
//!   the debounce/staleness schedule, polling fallback, saving) or, for a follower, applying
//!   another server's generations until its lock comes free.
//! - [`server`]: the MCP server (rmcp): the stdio JSON-RPC transport (framing, limits, reply
//!   queue), the bounded tool pool, portable tool schemas, one thin file per tool, and
//!   `serve --http` with its per-request guard (Origin, bearer token, body size and time).
//! - [`cli`]: the command line and the only code that prints to stdout.
//!
//! # The corpus layer
//!
//! | part | file | what it owns |
//! | --- | --- | --- |
//! | `Writer` | `corpus/writer.rs` | the single writer: says when the parts act (ingest a change, merge, sync the store, publish) |
//! | `Contents` | `corpus/contents.rs` | what the index holds and how news changes it: the followed files, the catalog, the document index |
//! | `Files`, `FileEntry` | `corpus/files.rs` | the transcript files followed: roots, what was read of each, its parser state |
//! | `Catalog`, `Conversation` | `corpus/catalog.rs` | every conversation the index knows, by id, with its metadata and turn count |
//! | `DocIndex` | `corpus/doc_index.rs` | the segments, their dead documents and the merge policy |
//! | `TurnLocations` | `corpus/turn_locations.rs` | where each turn of a conversation lives (segment, document) |
//! | `DupTracker` | `corpus/dups.rs` | which duplicate-turn keys occur more than once among live documents |
//! | `Batch` | `corpus/batch.rs` | a segment under construction: turns made into index documents |
//! | `FirstBuild` | `corpus/build.rs` | the first build's parallel reading |
//! | `FileState` | `corpus/ingest.rs` | reading one transcript incrementally, complete lines only |
//! | `Fingerprint` | `corpus/fingerprint.rs` | whether a file's already-read part is still what was read |
//! | `StoreSync`, `Backlog`, `News` | `corpus/store_sync.rs`, `store_backlog.rs`, `store_news.rs` | keeping the index and the store in step: what waits to be written, what others committed |
//! | `Generation`, `Delta` | `corpus/generation.rs`, `corpus/delta.rs` | which generation is on disk, and a generation's delta file |
//! | `Head`, `Restored` | `corpus/cache_head.rs`, `corpus/cache_file.rs` | the cache file's catalog section and the whole file, written and read back |
//! | `Publisher` | `corpus/publish.rs` | the parts frozen into an immutable `Snapshot` and swapped in |
//! | `Search`, `SearchRequest` | `corpus/query.rs`, `corpus/request.rs` | a validated search and its evaluation over a snapshot |
//! | `Snapshot::phrase_first` | `corpus/phrase_first.rs` | quoted phrases ranked first, never a filter: the phrase holders, then the turns with only their words |
//! | `Project` | `corpus/project.rs` | this project: its directory, other worktrees, the ranking prior |
//!
//! # The index, and why it is hand-built
//!
//! Each transcript file's turns become documents of immutable segments; a change to a file kills
//! its old documents (tombstones) and adds new ones in a small segment, and a merge policy folds
//! small segments together (the first build's segments, or a restored state's, are the base,
//! left out of that, so a live change never waits for most of the index to be merged). BM25
//! statistics (document count, lengths, document frequencies) are kept exact over live documents
//! after every update. A query reads an immutable snapshot; an update builds the next one and
//! swaps a pointer, so queries never wait.
//!
//! The index is our own, not tantivy and not the `bm25` crate's. The `bm25` crate stems, drops
//! `not` and `no`, hashes words to colliding ids and tokenizes at ~2M tokens/s, so only its ideas
//! are used. Tantivy was not measured head to head; what the workload needs, and what the
//! hand-built index was measured to give on it (`scripts/README.md`), decided:
//!
//! - **Updates are tiny and constant.** A live append is a few turns of one file, applied every
//!   debounce (2 s) and visible to every server within milliseconds: 1.6 ms per 10 KB append at
//!   300 MB, 18 ms of writer CPU at 1M turns, followers 1–4 ms. Nothing is written to disk per
//!   update (the cache file is written at most every 30 s), where a tantivy commit writes and
//!   syncs segment files and its BM25 statistics count deleted documents until a merge.
//! - **Tokens are identifiers.** `notify_debouncer_full`, `CamelCase`, `src/index/mod.rs`,
//!   `E0502` are terms whole and by their parts, the whole weighted ×8: recall@1 1.0 on the
//!   labelled queries, 0.887 with parts only. Phrases are checked in the turn's text, so no
//!   positions are stored (index 14 MB for a 300 MB corpus, 572 MB at 1M turns).
//! - **One small static binary that starts at once.** 12.4 MiB with SQLite and the HTTP server
//!   (16 MiB limit); a restart maps the cache file and takes 0.06 s at 300 MB and 0.46 s at 1M
//!   turns; five servers share one mapped copy (summed PSS 1.24× one server at 1M turns).
//! - **Latency.** A two-term search round trip over stdio is 0.12–0.14 ms p50 at 300 MB and
//!   0.61–0.73 ms at 1M turns; the slowest query shape's p99 is 36 ms at 1M turns. A search that
//!   passes its time budget returns what it found, marked incomplete.
//!
//! # Cache, sharing and store
//!
//! - **Cache.** One file per configuration (sources, redaction rules, store): the catalog first, as
//!   a head section with its own checksum (`context` reads only that), then every segment. Files
//!   are keyed by path, size, modification time and hashes of the read prefix, so a restart
//!   re-reads only what changed. Restored segments are ranges of the read-only mapping (arrays
//!   written 8-byte aligned), checked against their checksums while decoding; nothing is installed
//!   before the checksum matched. Each writer writes its own temporary file and renames it over the
//!   old one.
//! - **Sharing.** The first server of a configuration takes `writer.lock` (an `flock`, released
//!   however the process ends) and is the only one that watches, indexes, stores and writes the
//!   cache. After every change it publishes a generation: a delta file (the changed files,
//!   conversations, location lists, new segments, changed tombstones), written and renamed, checked
//!   like the cache file. Followers restore the cache file, watch the generation folder and apply
//!   each delta, mapping its segments. When the writer goes, the first follower to take the lock
//!   continues from the generation it holds.
//! - **Store.** SQLite (`rusqlite`, bundled, so the static binary needs no system library) in WAL
//!   mode, `synchronous=NORMAL`: several processes on one file, crash-safe by design, reproducible
//!   in the musl build. One writer by `flock` on `writer.lock`; every server looks for new commits
//!   every 100 ms and reads what changed in one read transaction. Records are deflated and
//!   checksummed; turns are keyed by (conversation, number) with a content hash, copies by their
//!   duplicate key. The store holds only what the tools return. `export` reads it in one read
//!   transaction; `import` checks every line, then merges in one commit (turns it lacks only;
//!   forgotten ids win). A stored conversation no root of a server could hold is shown by it
//!   when only the store has it (transcript gone, or never on this machine). OpenCode's, Goose's and Crush's
//!   databases are still read by our own read-only SQLite reader (`transcript::sqlite`): SQLite
//!   itself creates `-shm` files beside a live database even read-only, or ignores its
//!   write-ahead log with `immutable=1`.
//!
//! # Conventions
//!
//! - **One concept per file**, each opening with a `//!` line that says what it owns; a type's
//!   methods live with the type. A function longer than about 80 lines says why in its comment
//!   (one hot loop, one state machine).
//! - **Nothing is `pub` that nothing outside needs**: the modules are private, the crate root
//!   re-exports the few items `src/main.rs` and the black-box tests use, every other item is
//!   `pub(crate)` at most (`unreachable_pub` warns otherwise), so rustc reports dead code.
//!   `cargo doc --document-private-items --open` renders every module.
//! - **One word per idea** across code, flags and docs: the *store* is the durable history, the
//!   *cache* the persistent index, a *turn* one prompt and its reply, a *conversation* a session
//!   or a sub-agent's run.
//!
//! # Unsafe code
//!
//! `unsafe_code` is denied crate-wide (`Cargo.toml`); the modules that allow it, each use with
//! its reason beside it: `server::stdio` (borrowing the standard descriptors for epoll),
//! `util::blob` (views of mapped files; written text handed out as `&str`), `util::huge`
//! (huge-page maps, prefetch, glibc's `malloc_trim`), `util::json_bitmap` (SSE2 intrinsics finding a
//! JSON string's special bytes) and `util::libc_mem` (the static binary's own `memcpy` family).
#![deny(clippy::print_stdout)]
#![warn(unreachable_pub)]

mod cache;
mod cli;
mod corpus;
mod index;
mod live;
mod redact;
mod server;
mod store;
mod transcript;
mod util;

#[cfg(test)]
mod fn_length;
#[cfg(test)]
mod layering;

// The binary (`src/main.rs`) and the black-box tests use only these; every other item is
// `pub(crate)` at most, so that rustc reports dead code, and `unreachable_pub` keeps it so.
pub use cli::{Cli, UsageError, run};
pub use util::huge::hold_freed_memory;
pub use util::md5_hex;
