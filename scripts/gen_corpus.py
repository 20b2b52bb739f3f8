#!/usr/bin/env python3
"""Deterministic generator of synthetic Claude Code transcripts (CLI).

Writes a tree laid out like ~/.claude/projects (sessions, flat and nested
subagents) and optionally a labelled query set for retrieval benchmarks.
Same arguments -> byte-identical output. Python 3.11 stdlib only; the
implementation lives in scripts/gen/ (see its __init__.py).

  gen_corpus.py --profile fixtures --out DIR [--queries FILE]
  gen_corpus.py --profile realistic --target-mb 300 --out DIR [--queries FILE]
  gen_corpus.py --profile dense --turns 1000000 --out DIR [--queries FILE]
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gen.plan import check_out_dir, generate  # noqa: E402


def main(argv=None):
    head, _, rest = __doc__.partition("\n\n")
    ap = argparse.ArgumentParser(description=head, epilog=rest,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output directory (created; must be empty or absent)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--profile", choices=("fixtures", "realistic", "dense"), default="fixtures")
    ap.add_argument("--target-mb", type=float, default=300.0,
                    help="realistic: approximate corpus size in MB (10^6 bytes), default 300")
    ap.add_argument("--turns", type=int, default=1_000_000, help="dense: total number of turns, default 1000000")
    ap.add_argument("--queries", metavar="FILE", help="also write the labelled query set (JSONL) to FILE")
    ap.add_argument("--print-stats", action="store_true", help="print a JSON summary on stdout")
    args = ap.parse_args(argv)
    if args.target_mb <= 0 or args.turns <= 0:
        ap.error("--target-mb and --turns must be positive")
    check_out_dir(args.out)
    os.makedirs(args.out, exist_ok=True)
    if args.queries and os.path.dirname(args.queries):
        os.makedirs(os.path.dirname(args.queries), exist_ok=True)
    summary = generate(args)
    if args.print_stats:
        print(json.dumps(summary, indent=2, sort_keys=False))


if __name__ == "__main__":
    main()
