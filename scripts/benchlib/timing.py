"""Timing one-shot commands: percentiles, and N runs of a command line timed with hyperfine
when it is installed, else with time.perf_counter around subprocess.run."""
import json
import os
import shutil
import subprocess
import tempfile
import time


def pct(values, p):
    """The p-th percentile (nearest rank on the sorted values), or None."""
    v = sorted(values)
    if not v:
        return None
    k = min(len(v) - 1, max(0, int(round(p / 100 * (len(v) - 1)))))
    return v[k]


def summary_ms(seconds):
    ms = [1000 * s for s in seconds]
    return {"runs": len(ms), "p50_ms": round(pct(ms, 50), 1), "p95_ms": round(pct(ms, 95), 1),
            "min_ms": round(min(ms), 1), "max_ms": round(max(ms), 1)}


def run_times(cmd, runs, warmup, env=None):
    """Wall-clock seconds of `runs` runs of `cmd` (stdout discarded) after `warmup` runs; and
    which timer measured them."""
    if shutil.which("hyperfine"):
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as t:
            out = t.name
        try:
            line = " ".join("'%s'" % a.replace("'", "'\\''") for a in cmd)
            subprocess.run(["hyperfine", "--style", "none", "--warmup", str(warmup), "--runs", str(runs),
                            "-N", "--export-json", out, line],
                           check=True, env=env, stdout=subprocess.DEVNULL)
            with open(out, encoding="utf-8") as f:
                return json.load(f)["results"][0]["times"], "hyperfine"
        finally:
            os.unlink(out)
    times = []
    for i in range(warmup + runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if i >= warmup:
            times.append(time.perf_counter() - t)
    return times, "perf_counter"
