"""Locating or generating the labelled corpus (outside git).

Generated corpora live in ${TMPDIR:-/tmp}/conversation-search-bench/<profile>-<mb>mb-seed<seed>/
as projects/ + queries.jsonl, written by scripts/gen_corpus.py; a `.complete`
marker makes a finished corpus reusable, an unfinished one is regenerated. The corpora of
`scripts/bench` and `scripts/bench-cold` are named (NAMED) and live in <name>/ beside
<name>.stats.json (the generator's statistics, which mark them finished) and
<name>.queries.jsonl.
"""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bench_dir():
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", "conversation-search-bench")


# the corpora `scripts/bench` and `scripts/bench-cold` generate by name (gen_corpus.py arguments)
NAMED = {
    "realistic-300": ["--profile", "realistic", "--target-mb", "300"],
    "realistic-1000": ["--profile", "realistic", "--target-mb", "1000"],
    "dense-1m": ["--profile", "dense", "--turns", "1000000"],
}


def named(name, base=None, log=sys.stderr):
    """(corpus dir, generator stats) of the generated corpus `name` (a key of NAMED) under
    `base` (default bench_dir()), generating it when it or its stats file is missing; its
    queries are written beside it as `<name>.queries.jsonl`."""
    if name not in NAMED:
        raise SystemExit("unknown corpus `%s`: one of %s" % (name, ", ".join(NAMED)))
    base = str(base or bench_dir())
    out = os.path.join(base, name)
    stats_file = os.path.join(base, name + ".stats.json")
    if os.path.isdir(out) and os.path.exists(stats_file):
        with open(stats_file, encoding="utf-8") as f:
            return out, json.load(f)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(base, exist_ok=True)
    print("generating %s under %s (minutes) ..." % (name, out), file=log)
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "gen_corpus.py"), "--out", out,
           "--queries", os.path.join(base, name + ".queries.jsonl"), "--print-stats"] + NAMED[name]
    stdout = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    stats = json.loads(stdout)
    with open(stats_file, "w", encoding="utf-8") as f:
        f.write(stdout)
    return out, stats


def generated(target_mb, seed, log=sys.stderr):
    """(projects dir, queries file) of the realistic corpus, generating it when needed."""
    name = "realistic-%smb-seed%d" % (("%g" % target_mb).replace(".", "_"), seed)
    base = os.path.join(bench_dir(), name)
    projects, queries = os.path.join(base, "projects"), os.path.join(base, "queries.jsonl")
    if os.path.exists(os.path.join(base, ".complete")):
        print("reusing corpus %s" % base, file=log)
        return projects, queries
    if os.path.exists(base):
        shutil.rmtree(base)
    os.makedirs(base)
    print("generating %g MB realistic corpus in %s ..." % (target_mb, base), file=log)
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "gen_corpus.py"), "--profile", "realistic",
           "--target-mb", "%g" % target_mb, "--seed", str(seed), "--out", projects, "--queries", queries]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    subprocess.run(cmd, check=True, env=env)
    open(os.path.join(base, ".complete"), "w").close()
    return projects, queries


def load_queries(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            q = json.loads(line)
            if q.get("kind") not in ("known_item", "code", "decoy") or not q.get("query"):
                raise SystemExit("%s:%d: not a query record: %s" % (path, n, line))
            out.append(q)
    return out


def session_cwds(projects):
    """session id -> (project dir name, cwd of its first record that has one), for a Claude
    Code projects directory (one `<session id>.jsonl` per session)."""
    out = {}
    for group in sorted(os.listdir(projects)):
        gdir = os.path.join(projects, group)
        if not os.path.isdir(gdir):
            continue
        for name in sorted(os.listdir(gdir)):
            if not name.endswith(".jsonl"):
                continue
            with open(os.path.join(gdir, name), encoding="utf-8") as f:
                for line in f:
                    rec = json.loads(line)
                    if rec.get("cwd"):
                        out[name[:-6]] = (group, rec["cwd"])
                        break
    return out
