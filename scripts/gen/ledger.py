"""Query ledger: planted material for the retrieval benchmark, and its proof.

Owns the three query kinds written by --queries:
  known_item  2-3 mid-frequency words planted together in one turn's user or
              assistant text (each word also occurs elsewhere on its own);
  code        one identifier / path / flag / error code planted in one turn's
              user or assistant text, with near-miss variants (parts of it)
              sprinkled into other turns so that ranking matters;
  decoy       a made-up token ("zq..." - the vocabulary has no "q") placed only
              in tool_result content, toolUseResult or thinking text.
All pools are drawn before any text is written, and every finished turn of
every conversation is observed (Conv._flush_turn), so a query is kept only if
its material occurs in exactly one turn - the one it was planted in - counting
IDE context text conservatively as if it were indexed.
"""
import json
import random
import re

from .vocab import COMMON_ERROR_CODES, KNOWN_BAND, PLANT_BAND, syllable

_ALNUM = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def word_set(text):
    """Lower-cased words, splitting on non-alphanumerics and on camelCase humps."""
    s = set(_ALNUM.findall(text.lower()))
    s.update(" ".join(_CAMEL.findall(text)).lower().split())
    return s


class Ledger:
    """Planting always happens (so the corpus does not depend on --queries);
    `enabled` only switches the per-turn verification that --queries needs."""

    def __init__(self, lex, seed, *, known=0, code=0, decoys=0, known_band=KNOWN_BAND,
                 plant_p=0.0, decoy_rates=None, enabled=True):
        self.enabled = enabled
        self.r = random.Random("ledger:%s" % seed)
        self.lex = lex
        self.plant_p = plant_p
        self.decoy_rates = decoy_rates or {}
        self.decoy_left = {k: decoys for k in ("tool_result", "tool_use_result", "thinking")}
        self.known = self._known_pool(known, known_band)
        self.code, self.variants = self._code_pool(code)
        self.known_by_word = {}
        for i, tup in enumerate(self.known):
            for wd in tup:
                self.known_by_word.setdefault(wd, []).append(i)
        self.code_by_key = {}
        for i, (_, key) in enumerate(self.code):
            self.code_by_key.setdefault(key, []).append(i)
        self.known_keys = frozenset(self.known_by_word)
        self.code_keys = frozenset(self.code_by_key)
        self.k_next = 0
        self.c_next = 0
        self.k_target = {}   # tuple index -> (session_id, turn, conv key)
        self.c_target = {}
        self.k_hits = {}     # tuple index -> [(conv key, turn, strict)]
        self.c_hits = {}
        self.decoys = []     # (token, where)
        self._decoy_seen = set()
        self.observed_turns = 0

    # -- pools -------------------------------------------------------------
    def _known_pool(self, n, band):
        r, words = self.r, self.lex.band(band)
        out = []
        for _ in range(n):
            k = 3 if r.random() < 0.7 else 2
            out.append(tuple(r.sample(words, k)))
        return out

    def _code_pool(self, n):
        r, lex = self.r, self.lex
        plant = lex.band(PLANT_BAND)
        ident = lex.ident
        toks, variants, seen_codes = [], [], set(COMMON_ERROR_CODES)
        kinds = ("snake", "camel", "path", "flag", "dotted", "crate", "errcode")
        while len(toks) < n:
            kind = kinds[len(toks) % len(kinds)]
            a, c, x = r.choice(ident), r.choice(ident), r.choice(ident)
            b = r.choice(plant)
            key = b
            if kind == "snake":
                tok, vs = "%s_%s_%s" % (a, b, c), ["%s_%s" % (a, b), "%s_%s_%s" % (b, c, x)]
            elif kind == "camel":
                cap = str.capitalize
                tok, vs = cap(a) + cap(b) + cap(c), [cap(a) + cap(b), cap(x) + cap(b) + cap(c)]
            elif kind == "path":
                ext = r.choice((".rs", ".rs", ".py", ".ts", ".go"))
                tok = r.choice(("src/%s/%s%s", "lib/%s/%s%s", "crates/%s/src/%s%s")) % (b, a, ext)
                vs = ["src/%s/mod%s" % (b, ext), "tests/%s%s" % (a, ext)]
            elif kind == "flag":
                tok, vs = "--%s-%s-ms" % (a, b), ["--%s-%s" % (a, b), "--%s-%s-ms" % (x, b)]
            elif kind == "dotted":
                tok, vs = "%s.%s.%s" % (a, b, c), ["%s.%s" % (a, b), "%s.%s.%s" % (x, b, c)]
            elif kind == "crate":
                tok, vs = "%s-%s" % (b, a), ["%s-%s" % (b, x), "%s-%s" % (x, a)]
            else:
                tok = "%s%04d" % (r.choice(("E", "E", "E", "TS")), r.randint(1, 9999))
                if tok in seen_codes:
                    continue
                seen_codes.add(tok)
                key, vs = tok.lower(), []
            low = tok.lower()
            if any(low in t.lower() or t.lower() in low for t, _ in toks):
                continue
            toks.append((tok, key))
            variants.extend(v for v in vs if low not in v.lower())
        # a variant must never contain any planted token
        lows = [t.lower() for t, _ in toks]
        variants = [v for v in variants if not any(t in v.lower() for t in lows)]
        return toks, variants

    # -- planting ----------------------------------------------------------
    def take_known(self, conv):
        if not (conv.eligible and self.k_next < len(self.known)):
            return None
        if self.r.random() >= self.plant_p:
            return None
        self.k_next += 1
        return self.k_next - 1

    def take_code(self, conv, force=False):
        if not (conv.eligible and self.c_next < len(self.code)):
            return None
        if self.r.random() >= self.plant_p and not force:
            return None
        self.c_next += 1
        return self.c_next - 1

    def known_words(self, i):
        return self.known[i]

    def code_token(self, i):
        return self.code[i][0]

    def target(self, kind, i, conv):
        """Record that planted item i sits in conv's current turn."""
        t = (conv.session_id, conv.turn, conv.key)
        (self.k_target if kind == "known" else self.c_target)[i] = t

    def near_miss(self, r):
        if not self.variants:
            return None
        return self.variants[r.randrange(len(self.variants))]

    def decoy(self, where):
        if self.decoy_left.get(where, 0) <= 0:
            return None
        if self.r.random() >= self.decoy_rates.get(where, 0.0):
            return None
        while True:
            tok = "zq" + "".join(syllable(self.r) for _ in range(3))
            if tok not in self._decoy_seen and len(tok) >= 9:
                break
        self._decoy_seen.add(tok)
        self.decoy_left[where] -= 1
        self.decoys.append((tok, where))
        return tok

    def undo_decoy(self, tok):
        if self.decoys and self.decoys[-1][0] == tok:
            _, where = self.decoys.pop()
            self.decoy_left[where] += 1

    # -- verification ------------------------------------------------------
    def observe(self, conv, turn, strict, extra):
        if not self.enabled:
            return
        self.observed_turns += 1
        low_all = (strict + "\n" + extra).lower()
        if "zq" in low_all:
            raise AssertionError("decoy-shaped token in indexed text of %s turn %d" % (conv.key, turn))
        ws = word_set(strict + "\n" + extra)
        cnt = {}
        for wd in ws & self.known_keys:
            for i in self.known_by_word[wd]:
                cnt[i] = cnt.get(i, 0) + 1
        strict_ws = None
        for i, c in cnt.items():
            if c == len(self.known[i]):
                if strict_ws is None:
                    strict_ws = word_set(strict)
                ok = all(wd in strict_ws for wd in self.known[i])
                self.k_hits.setdefault(i, []).append((conv.key, turn, ok))
        keys = ws & self.code_keys
        if keys:
            strict_low = strict.lower()
            for key in keys:
                for i in self.code_by_key[key]:
                    tok = self.code[i][0].lower()
                    if tok in low_all:
                        self.c_hits.setdefault(i, []).append((conv.key, turn, tok in strict_low))

    def _valid(self, target, hits):
        if target is None or not hits or len(hits) != 1:
            return False
        key, turn, ok = hits[0]
        return ok and key == target[2] and turn == target[1]

    def finalize(self):
        out, rep = [], {"known_item": [0, 0], "code": [0, 0], "decoy": [0, 0]}
        for i, t in sorted(self.k_target.items()):
            rep["known_item"][0] += 1
            if self._valid(t, self.k_hits.get(i)):
                rep["known_item"][1] += 1
                out.append({"kind": "known_item", "query": " ".join(self.known[i]),
                            "session_id": t[0], "turn_number": t[1]})
        for i, t in sorted(self.c_target.items()):
            rep["code"][0] += 1
            if self._valid(t, self.c_hits.get(i)):
                rep["code"][1] += 1
                out.append({"kind": "code", "query": self.code[i][0], "session_id": t[0], "turn_number": t[1]})
        for tok, where in self.decoys:
            rep["decoy"][0] += 1
            rep["decoy"][1] += 1
            out.append({"kind": "decoy", "query": tok, "where": where})
        report = {k: {"planted": v[0], "kept": v[1] if self.enabled else None} for k, v in rep.items()}
        return out, report

    def write(self, path, queries):
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for q in queries:
                f.write(json.dumps(q, ensure_ascii=False, separators=(", ", ": ")) + "\n")
