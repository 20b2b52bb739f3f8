"""Deterministic generator of synthetic Claude Code transcripts (package root).

Owns nothing but the package marker. Modules:
  vocab    - fixed built-in word lists, Zipf sampler, prose/identifier makers
  records  - ids, clock, envelope styles, the streaming per-file writer (Conv)
  tools    - tool calls (inputs) and their results, per-project virtual files
  harness  - records that are not human turns (slash commands, interrupts,
             compaction, titles and other metadata, hooks, broken lines)
  session  - one session: turns, agent loop, subagents, titles
  plan     - profiles (fixtures / realistic / dense) and the corpus driver
  ledger   - planted query material, uniqueness verification, queries.jsonl
The CLI is scripts/gen_corpus.py; the independent re-derivation of turns is
scripts/check_corpus.py.
"""
