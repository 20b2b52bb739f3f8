#!/usr/bin/env python3
"""The workload an instrumented build runs to train the static binary's profile (scripts/pgo-train).

  pgo_workload.py BIN CORPUS QUERIES

The paths users run: a first build of a generated Claude Code corpus with the default cache and
store, every labelled query, common-word pairs and triples, the prefix, phrase, exclusion and
filter shapes, the other tools, live appends to a session until they are searchable, and a warm
restart from the cache and store. The first build dominates the counts, as it dominates a
server's CPU. Python 3.11 stdlib only; exits non-zero when a step fails (a profile of a broken
run would train the wrong paths).
"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib.mcp import Server  # noqa: E402

SHAPES = [
    "ke*", "co*", "st*", "pa* wa*", "index ke*", "token", "error handling", "test file",
    "index query", '"index query"', "index -query", "fix the build", "cache OR store",
]
# what agents mostly type: two or three of the corpus's common words (a known-item query of
# rare words is cheap; these are where a search spends its time)
COMMON = ["index", "query", "token", "parser", "watcher", "schema", "cache", "thread", "mutex",
          "channel", "buffer", "stream", "iterator", "trait", "struct", "enum", "module", "config",
          "server", "merge", "response", "client", "handler", "request", "session", "router",
          "column", "field", "record", "table", "score", "ranking", "commit", "cursor", "snippet",
          "test", "file", "error", "build", "fix"]


def common_queries():
    """Pairs and triples of common words, in a fixed order."""
    n = len(COMMON)
    pairs = [COMMON[i] + " " + COMMON[(i * 7 + 3) % n] for i in range(n)]
    triples = [" ".join(COMMON[(i * k) % n] for k in (1, 5, 11)) for i in range(1, n)]
    return pairs + triples


def check(err, payload, what):
    if err:
        raise SystemExit("pgo_workload: %s failed: %s" % (what, json.dumps(payload)[:400]))
    return payload


def queries(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["query"] for line in f if line.strip()]


def use_tools(srv, qs):
    """Every query, each shape with filters and sorts, and the reading tools on the hits."""
    hits = []
    for q in qs + SHAPES + common_queries() * 3:
        res = check(*srv.call("search_conversations", {"query": q, "limit": 5}), "search %r" % q)
        hits += res.get("results", [])[:1]
    for q in SHAPES:
        for extra in ({"sort": "recent"}, {"role": "user"}, {"scope": "all", "limit": 20},
                      {"since": "2026-01-01", "offset": 5}):
            check(*srv.call("search_conversations", dict({"query": q}, **extra)), "search %r %s" % (q, extra))
    for h in hits[:60]:
        sid, turn = h.get("session_id"), h.get("turn_number")
        if not sid:
            continue
        check(*srv.call("read_conversation", {"session_id": sid, "limit": 20}), "read_conversation")
        if turn is not None:
            check(*srv.call("read_turn", {"session_id": sid, "turn_number": turn}), "read_turn")
    for args in ({}, {"limit": 50}, {"scope": "all", "offset": 20}):
        check(*srv.call("list_conversations", args), "list_conversations %s" % args)
    check(*srv.call("recent_context", {}), "recent_context")
    for path in ("src/main.rs", "README.md", "Cargo.toml"):
        check(*srv.call("find_file_history", {"path": path, "scope": "all"}), "find_file_history")


def append_live(srv, corpus):
    """Appends turns to the largest session, one at a time, each waited for until searchable."""
    sessions = [os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs if f.endswith(".jsonl")]
    target = max(sessions, key=os.path.getsize)
    sid = os.path.basename(target)[: -len(".jsonl")]
    for i in range(20):
        word = "pgotrainword%dx" % i
        rec = {"type": "user", "uuid": "00000000-0000-4000-8000-%012d" % i, "sessionId": sid,
               "timestamp": "2026-11-29T12:%02d:00.000Z" % i, "cwd": "/tmp/pgo",
               "message": {"role": "user", "content": "please look at %s and the index" % word}}
        with open(target, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")
        deadline = time.monotonic() + 30
        while True:
            res = check(*srv.call("search_conversations", {"query": word}), "search live")
            if res.get("results"):
                break
            if time.monotonic() > deadline:
                raise SystemExit("pgo_workload: appended turn %d not searchable after 30 s" % i)
            time.sleep(0.05)


def main():
    binary, corpus, query_file = sys.argv[1:4]
    qs = queries(query_file)
    work = tempfile.mkdtemp(prefix="cs-pgo-")
    try:
        # the corpus is copied: live appends must not change the caller's
        tree = os.path.join(work, "projects")
        shutil.copytree(corpus, tree)
        home = os.path.join(work, "home")
        # one home for both servers: the second starts warm from the first's cache and store
        env = {"HOME": home, "XDG_CACHE_HOME": os.path.join(home, ".cache"),
               "XDG_CONFIG_HOME": os.path.join(home, ".config"),
               "XDG_DATA_HOME": os.path.join(home, ".local/share"),
               "XDG_STATE_HOME": os.path.join(home, ".local/state")}
        os.makedirs(home)
        log = os.path.join(work, "server.log")
        with Server(binary, tree, env, log, args=("--debounce-ms", "100")) as srv:
            st, took = srv.wait_indexed(600)
            print("pgo_workload: first build of %s turns in %.1f s" % (st.get("turns"), took))
            use_tools(srv, qs)
            append_live(srv, tree)
        with Server(binary, tree, env, log, args=("--debounce-ms", "100")) as srv:
            st, took = srv.wait_indexed(600)
            print("pgo_workload: warm start in %.1f s" % took)
            use_tools(srv, qs[:100])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
