"""The this-project ranking prior, measured: a corpus where the same words occur in several
projects, and recall@1/MRR@10 with and without the prior (`--no-project-prior`).

From a generated realistic corpus and its labelled queries, every picked target turn gets
`echoes` near-copies written as sessions of other projects (the target's prompt and reply with
a fifth of the words dropped and as many taken from another turn, so scores are close and
either may win). Each query then runs with the one-shot CLI (`search --json`, one shared warm
cache) from two perspectives:
  home  --project-root = the target's project (the user asks about this project: the prior
        should help);
  away  --project-root = the first echo's project (the user asks about another project's
        work: the prior can only hurt);
each with and without --no-project-prior.
"""
import json
import os
import random
import shutil
import subprocess

from . import corpus, metrics


def cli(binary, projects, cache, root, prior, *args):
    cmd = [binary, "--projects-dir", projects, "--cache-dir", cache, "--project-root", root]
    if not prior:
        cmd.append("--no-project-prior")
    cmd += ["--json"] + list(args)
    env = dict(os.environ, CONVERSATION_SEARCH_LOG="error")
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def _perturb(words, filler, rng):
    keep = [w for w in words if rng.random() >= 0.2]
    return keep + rng.sample(filler, min(len(filler), len(words) - len(keep)))


def _echo_session(path, sid, cwd, text, ts):
    recs = [
        {"type": "user", "uuid": sid + "-u", "parentUuid": None, "sessionId": sid, "cwd": cwd,
         "timestamp": ts, "message": {"role": "user", "content": text[0]}},
        {"type": "assistant", "uuid": sid + "-a", "parentUuid": sid + "-u", "sessionId": sid,
         "cwd": cwd, "timestamp": ts,
         "message": {"role": "assistant", "id": "msg-" + sid, "content": [{"type": "text", "text": text[1]}]}},
    ]
    with open(path, "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")


def build(base_projects, queries, binary, name, echoes, queries_max, seed, log):
    """Copies `base_projects` to <bench dir>/<name>/projects and writes the echoes. Returns
    (projects, cache dir, picked queries with their `home` and `away` roots)."""
    out = os.path.join(corpus.bench_dir(), name)
    if os.path.exists(out):
        shutil.rmtree(out)
    projects = os.path.join(out, "projects")
    shutil.copytree(base_projects, projects)
    cache = os.path.join(out, "cache")
    where = corpus.session_cwds(projects)
    groups = sorted({g for g, _ in where.values()})
    cwd_of = {g: c for g, c in where.values()}
    rng = random.Random(seed)
    picked = [q for q in queries if q["kind"] in metrics.LABELLED and q["session_id"] in where]
    rng.shuffle(picked)
    picked = picked[:queries_max]
    texts = []
    for q in picked:
        _, cwd = where[q["session_id"]]
        t = cli(binary, projects, cache, cwd, True, "show", q["session_id"], str(q["turn_number"]))
        texts.append((t.get("user_text", ""), t.get("assistant_text", "")))
    print("project prior: writing %d x %d echoes over %d projects" % (len(picked), echoes, len(groups)),
          file=log)
    for i, (q, (user, reply)) in enumerate(zip(picked, texts)):
        home = where[q["session_id"]][0]
        others = rng.sample([g for g in groups if g != home], echoes)
        filler = (texts[(i + 1) % len(texts)][0] + " " + texts[(i + 1) % len(texts)][1]).split()
        q["away"] = cwd_of[others[0]]
        q["home"] = where[q["session_id"]][1]
        for k, g in enumerate(others):
            sid = "echo%04d-%d-0000-4000-8000-000000000000" % (i, k)
            text = (" ".join(_perturb(user.split(), filler, rng)),
                    " ".join(_perturb(reply.split(), filler, rng)))
            _echo_session(os.path.join(projects, g, sid + ".jsonl"), sid, cwd_of[g], text,
                          "2026-01-01T00:00:00.000Z")
    return projects, cache, picked


def measure(binary, projects, cache, picked, side, prior, limit=10):
    outcomes = []
    for q in picked:
        r = cli(binary, projects, cache, q[side], prior, "search", "--limit", str(limit), "--", q["query"])
        outcomes.append({"kind": q["kind"], "query": q["query"], "error": None,
                         "rank": metrics.rank_of(r.get("results", []), q["session_id"], q["turn_number"])})
    return metrics.summarize(outcomes)["overall"]


def run(binary, base_projects, queries, name, echoes, queries_max, seed, log):
    """The report section: per perspective (home, away) and prior (on, off), the overall
    recall@1, recall@10 and MRR@10."""
    projects, cache, picked = build(base_projects, queries, binary, name, echoes, queries_max, seed, log)
    section = {"corpus": projects, "queries": len(picked), "echoes": echoes, "results": {}}
    for side in ("home", "away"):
        for prior in (True, False):
            key = "%s/%s" % (side, "prior" if prior else "no-prior")
            m = measure(binary, projects, cache, picked, side, prior)
            section["results"][key] = m
            print("%-16s R@1 %.4f  R@10 %.4f  MRR %.4f" % (key, m.get("recall@1", 0), m.get("recall@10", 0),
                                                          m.get("mrr@10", 0)), file=log)
    shutil.rmtree(os.path.dirname(projects), ignore_errors=True)
    return section
