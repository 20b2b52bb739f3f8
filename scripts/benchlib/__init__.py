"""Benchmark helpers for scripts/bench-retrieval and scripts/bench-context (Python 3.11 stdlib
only).

Modules:
  mcp       - a minimal MCP (JSON-RPC 2.0 over stdio) client driving the server binary
  variants  - the tokenizer / BM25 variants compared, as environment overrides
  metrics   - ranks, recall@k, MRR@10 per query kind, decoy leaks, miss reports
  corpus    - locating or generating the labelled corpus (scripts/gen_corpus.py); session cwds
  prior     - the this-project ranking prior: a corpus with echoes in other projects, measured
              with and without --no-project-prior
  timing    - timing one-shot commands (hyperfine or perf_counter), percentiles
"""
