//! The one integration-test binary: every black-box test of the `conversation-search` binary,
//! one module per area, sharing the harness in `common` (one link step instead of one per file).

mod common;

mod bad_input;
mod budgets;
mod cache;
mod cli;
mod content;
mod discovery;
mod duplicates;
mod errors;
mod faults_strings;
mod file_history;
mod format_aider;
mod format_amp;
mod format_codex;
mod format_continue;
mod format_crush;
mod format_droid;
mod format_gemini;
mod format_goose;
mod format_openclaw;
mod format_opencode;
mod format_opencode_live;
mod format_qwen;
mod harness;
mod live_chunks;
mod live_concurrency;
mod live_debounce;
mod live_dirs;
mod live_files;
mod live_stats;
mod metadata;
mod mixed_sources;
mod prop_parser;
mod real_samples;
mod search;
mod search_filters;
mod search_order;
mod search_ranking;
mod search_snippets;
mod search_syntax;
mod server;
mod subagents;
mod tools_read;
mod turns;
