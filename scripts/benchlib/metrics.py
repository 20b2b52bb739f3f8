"""Ranks and metrics: recall@1, recall@10, MRR@10 per query kind and overall; decoy leaks.

A labelled query (known_item, code) names one target turn (session_id,
turn_number); its rank is the 1-based position of that turn among the first
`limit` results, or None. A decoy query must return nothing: any result is a
leak.
"""
import re

LABELLED = ("known_item", "code")

_ERRCODE = re.compile(r"^(E|TS)\d{4}$")


def code_shape(q):
    """The kind of identifier a code query is (as the generator plants them)."""
    if _ERRCODE.match(q):
        return "errcode"
    if q.startswith("--"):
        return "flag"
    if "/" in q:
        return "path"
    if "." in q:
        return "dotted"
    if "_" in q:
        return "snake"
    if "-" in q:
        return "crate"
    return "camel"


def rank_of(results, session_id, turn):
    for i, r in enumerate(results):
        if r.get("session_id") == session_id and r.get("turn_number") == turn:
            return i + 1
    return None


def _summary(ranks):
    n = len(ranks)
    if n == 0:
        return {"n": 0}
    r1 = sum(1 for r in ranks if r == 1)
    r10 = sum(1 for r in ranks if r is not None and r <= 10)
    mrr = sum(1.0 / r for r in ranks if r is not None and r <= 10)
    return {"n": n, "recall@1": round(r1 / n, 4), "recall@10": round(r10 / n, 4), "mrr@10": round(mrr / n, 4),
            "misses@1": n - r1, "misses@10": n - r10}


def summarize(outcomes):
    """outcomes: list of dicts {kind, query, rank, leak, ...} -> metrics dict."""
    by_kind = {}
    for o in outcomes:
        if o["kind"] in LABELLED:
            by_kind.setdefault(o["kind"], []).append(o["rank"])
    out = {k: _summary(v) for k, v in sorted(by_kind.items())}
    out["overall"] = _summary([o["rank"] for o in outcomes if o["kind"] in LABELLED])
    shapes = {}
    for o in outcomes:
        if o["kind"] == "code":
            shapes.setdefault(code_shape(o["query"]), []).append(o["rank"])
    if shapes:
        out["code_by_shape"] = {k: _summary(v) for k, v in sorted(shapes.items())}
    decoys = [o for o in outcomes if o["kind"] == "decoy"]
    out["decoy"] = {"n": len(decoys), "leaks": sum(1 for o in decoys if o["leak"]),
                    "leaked": [o["query"] for o in decoys if o["leak"]][:20]}
    # queries the server answered with an error result (counted as misses above)
    out["errors"] = {"n": sum(1 for o in outcomes if o.get("error")),
                     "queries": [o["query"] for o in outcomes if o.get("error")][:20]}
    return out


def meets_targets(m, r1=0.95, r10=0.99):
    o = m["overall"]
    return bool(o.get("n")) and o["recall@1"] >= r1 and o["recall@10"] >= r10 and m["decoy"]["leaks"] == 0


def worst(outcomes, n):
    """The n worst labelled queries: not found first, then by rank."""
    missed = [o for o in outcomes if o["kind"] in LABELLED and o["rank"] != 1]
    missed.sort(key=lambda o: (o["rank"] is not None, -(o["rank"] or 0), o["kind"], o["query"]))
    return missed[:n]
