"""Retrieval benchmark helpers for scripts/bench-retrieval (Python 3.11 stdlib only).

Modules:
  mcp       - a minimal MCP (JSON-RPC 2.0 over stdio) client driving the server binary
  variants  - the tokenizer / BM25 variants compared, as environment overrides
  metrics   - ranks, recall@k, MRR@10 per query kind, decoy leaks, miss reports
  corpus    - locating or generating the labelled corpus (scripts/gen_corpus.py)
"""
