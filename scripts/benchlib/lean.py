"""`scripts/bench --lean-only`: what a cold first build costs in memory and how soon it is useful
(issue 40). Per corpus, twice (store and cache on, in fresh temporary directories; then both off):

  newest_tenth_s   until every session of the newest tenth (by mtime) is found by a search for a
                   word of its first prompt within it
  complete_s       until `index_status` says complete
  peak_rss_mb      VmHWM over the whole run (the first build, the store's backlog, the cache write)
  peak_at_complete_mb  VmHWM when the build was complete
  settled_rss_mb   VmRSS once the store holds every turn and the cache is written, 3 s later
  peak_breakdown_mb  /proc/PID/smaps_rollup at the largest Rss sampled (every 20 ms): anonymous
                   memory (of it transparent huge pages) and file-backed pages
  append_ms        a 10 KB append, until a search finds it, written at three moments: right
                   after complete, during the store's backlog (if it still had turns waiting),
                   and settled

and once the 200 MB record case: `scripts/bench-read-memory` with a 200 MB tool result and with a
1 MB one (the baseline), the first build's peak and the peak of 8 concurrent `read_turn`s.
Debounce 200 ms. Timings on a shared machine are noisy; RSS much less so.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import corpus as corpora
from .mcp import Server

ROOT = Path(__file__).resolve().parent.parent.parent
DEBOUNCE_MS = 200


def status_kb(pid, field):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rollup_kb(pid):
    out = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    out[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        pass
    return out


class Sampler(threading.Thread):
    """Samples smaps_rollup every 20 ms; keeps the sample with the largest Rss."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.best, self.stop = pid, {}, threading.Event()

    def run(self):
        while not self.stop.wait(0.02):
            s = rollup_kb(self.pid)
            if s.get("Rss", 0) > self.best.get("Rss", 0):
                self.best = s

    def breakdown(self):
        b = self.best
        mb = lambda k: round(b.get(k, 0) / 1024, 1)
        return {"rss": mb("Rss"), "anonymous": mb("Anonymous"), "anon_huge_pages": mb("AnonHugePages"),
                "file_backed": round((b.get("Rss", 0) - b.get("Anonymous", 0)) / 1024, 1)}


def sessions_by_mtime(projects):
    """Main session files (no sub-agents), newest first."""
    files = [p for p in Path(projects).rglob("*.jsonl")
             if "subagents" not in p.parts and not p.name.startswith("agent-")]
    return sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)


def probe_word(path):
    """A word of the session's first prompt (a search for it within the session finds it once
    the session is indexed; `read_turn` finds no session before the build is complete)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            content = (rec.get("message") or {}).get("content") if rec.get("type") == "user" else None
            if isinstance(content, list):
                content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
            if not content or content.lstrip()[:1] in ("<", "["):
                continue  # an IDE notice, a command wrapper, an interruption: not a prompt
            words = [w for w in content.split() if w.isalpha() and 4 < len(w) <= 12]
            if words:
                return words[0].lower()
    return None


def searchable(server, sid, word):
    err, r = server.call("search_conversations", {"query": word, "session_id": sid, "limit": 1})
    return not err and r.get("total", 0) > 0


def append(server, target, tag):
    """Appends a 10 KB user turn to `target`; ms until a search finds it."""
    word = "zzlean%sx%d" % (tag, random.randrange(10 ** 9))
    filler = " ".join(["lorem ipsum dolor sit amet consectetur"] * 260)[:10000]
    rec = {"type": "user", "uuid": "lean-" + word, "timestamp": "2026-11-01T00:00:00.000Z",
           "sessionId": target.stem, "message": {"role": "user", "content": "%s %s" % (word, filler)}}
    t = time.perf_counter()
    with open(target, "a") as f:
        f.write(json.dumps(rec) + "\n")
    deadline = t + 60
    while time.perf_counter() < deadline:
        err, r = server.call("search_conversations", {"query": word, "limit": 1})
        if not err and r.get("total", 0) > 0:
            return round((time.perf_counter() - t) * 1000, 1)
        time.sleep(0.005)
    return None


def store_pending(st):
    store = st.get("store") or {}
    return store.get("pending_turns") or 0


def one_run(binary, projects, on, newest, target):
    tmp = Path(tempfile.mkdtemp(prefix="cs-lean-"))
    args = ["--debounce-ms", str(DEBOUNCE_MS)]
    args += ["--cache-dir", str(tmp / "cache"), "--data-dir", str(tmp / "data")] if on else ["--no-cache",
                                                                                          "--no-archive"]
    t0 = time.perf_counter()
    s = Server(binary, projects, {}, tmp / "server.log", args=args)
    sampler = Sampler(s.proc.pid)
    sampler.start()
    out = {"store_and_cache": on}
    try:
        pending = {p.stem: w for p in newest if (w := probe_word(p))}
        while True:
            for sid, word in list(pending.items()):
                if searchable(s, sid, word):
                    del pending[sid]
            if not pending and "newest_tenth_s" not in out:
                out["newest_tenth_s"] = round(time.perf_counter() - t0, 3)
            err, st = s.call("index_status", {"max_chars": 60000})
            if st.get("complete"):
                out["complete_s"] = round(time.perf_counter() - t0, 3)
                break
            time.sleep(0.02)
        # the last of them came in with the rest
        pending = {sid for sid, word in pending.items() if not searchable(s, sid, word)}
        out.setdefault("newest_tenth_s", None if pending else out["complete_s"])
        out["peak_at_complete_mb"] = round((status_kb(s.proc.pid, "VmHWM") or 0) / 1024, 1)
        appends = {"right_after_complete": append(s, target, "a")}
        err, st = s.call("index_status", {"max_chars": 60000})
        waiting = store_pending(st)
        appends["during_backlog"] = append(s, target, "b") if waiting else None
        appends["backlog_turns_when_written"] = waiting
        # settled: every turn stored, the cache written
        deadline = time.time() + 900
        while time.time() < deadline:
            err, st = s.call("index_status", {"max_chars": 60000})
            cache_done = not on or (st.get("cache") or {}).get("writes", 0) >= 1
            if store_pending(st) == 0 and cache_done:
                break
            time.sleep(0.1)
        out["settled_s"] = round(time.perf_counter() - t0, 2)
        time.sleep(3)
        out["settled_rss_mb"] = round((status_kb(s.proc.pid, "VmRSS") or 0) / 1024, 1)
        appends["settled"] = append(s, target, "c")
        out["append_ms"] = appends
        out["peak_rss_mb"] = round((status_kb(s.proc.pid, "VmHWM") or 0) / 1024, 1)
        sampler.stop.set()
        sampler.join()
        out["peak_breakdown_mb"] = sampler.breakdown()
    finally:
        sampler.stop.set()
        s.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def record_case(binary, mb):
    r = subprocess.run([str(ROOT / "scripts/bench-read-memory"), "--bin", binary, "--mb", str(mb)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr[-500:]}
    return json.loads(r.stdout)


def run(binary, base, name, args):
    projects, stats = corpora.named(name, base)
    sessions = sessions_by_mtime(projects)
    newest = sessions[: max(1, len(sessions) // 10)]
    # the appends go to a session from the middle (by mtime), read neither first nor last
    target = sessions[len(sessions) // 2]
    # fill the OS file cache so runs compare (cold means no persistent index, not a cold disk)
    for p in Path(projects).rglob("*"):
        if p.is_file():
            with open(p, "rb") as f:
                while f.read(1 << 20):
                    pass
    out = {"corpus": name, "files": stats.get("files"), "turns": stats.get("turns"),
           "sessions": len(sessions), "newest_tenth_sessions": len(newest), "debounce_ms": DEBOUNCE_MS}
    out["on"] = one_run(binary, projects, True, newest, target)
    out["off"] = one_run(binary, projects, False, newest, target)
    if getattr(args, "record_mb", 0):
        big = record_case(binary, args.record_mb)
        small = record_case(binary, 1)
        out["record"] = {"mb": args.record_mb, "big": big, "baseline_1mb": small,
                         "build_over_baseline_mb": round(big.get("peak_build_mb", 0) - small.get("peak_build_mb", 0), 1)
                         if "error" not in big and "error" not in small else None}
        args.record_mb = 0  # once per bench run
    return out
