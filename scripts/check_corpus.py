#!/usr/bin/env python3
"""Independent checker for a Claude Code transcript tree (and its query set).

Re-derives conversations and turns from the files alone - it shares no code
with scripts/gen/ - and so documents the turn rules the server implements:

  * A conversation is one session file <proj>/<uuid>.jsonl, or one subagent
    file (<proj>/agent-<id>.jsonl, or <proj>/<session>/subagents/agent-<id>.jsonl).
    Turns are numbered from 0 in file order.
  * A turn starts at a `user` record with human text: not isMeta, not
    isCompactSummary, `message.content` a string or a block list with >= 1
    `text` block and no `tool_result` block. Leading IDE context blocks
    (<ide_opened_file>, <ide_selection>, <ide_diagnostics>) are stripped first.
    The record is skipped (no turn) when the remaining text is blank, consists
    only of harness tags (command-name/-message/-args, local-command-stdout/
    -stderr/-caveat, bash-input/-stdout/-stderr, task-notification,
    system-reminder) or is an interrupt marker.
  * A turn collects the `text` and `tool_use` blocks of the following
    `assistant` records until the next turn starts; lines repeating a block of
    the same message.id (identical text, or a prefix streamed before the final
    text, or the same tool_use id) count once.
  * Assistant records before the first turn start form turn 0 (empty user text).
  * Never indexed: thinking, tool_result content, toolUseResult, every other
    record type. Unparseable lines (bad JSON, invalid UTF-8, blank) are skipped.

With --queries it verifies every query: known_item words all occur in the
named turn and no other turn holds them all; code tokens occur (as
substrings) in the named turn only; decoys occur in no turn's indexed text but
do occur in the non-indexed place they claim. Exit status 1 on any failure.
"""
import argparse
import bisect
import json
import os
import re
import sys

HARNESS_TAGS = ("command-name", "command-message", "command-args", "local-command-stdout",
                "local-command-stderr", "local-command-caveat", "bash-input", "bash-stdout", "bash-stderr",
                "task-notification", "system-reminder")
IDE_TAGS = ("ide_opened_file", "ide_selection", "ide_diagnostics")
INTERRUPTS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
TAG_SPAN = re.compile(r"<(%s)>.*?</\1>" % "|".join(map(re.escape, HARNESS_TAGS)), re.S)
IDE_BLOCK = re.compile(r"\s*<(%s)>.*</\1>\s*" % "|".join(IDE_TAGS), re.S)
LOST_UUID = re.compile(rb'"uuid":"([0-9a-f-]{36})"')
ENVELOPE = ("parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "uuid", "timestamp")


class Turn:
    __slots__ = ("conv", "n", "user", "ide", "texts", "tools", "by_msg", "tool_ids")

    def __init__(self, conv, n, user, ide):
        self.conv, self.n, self.user, self.ide = conv, n, user, ide
        self.texts = []            # [message id, text] in order
        self.tools = []
        self.by_msg = {}
        self.tool_ids = set()

    def add_text(self, mid, text):
        for slot in self.by_msg.get(mid, ()):
            old = self.texts[slot][1]
            if text == old or old.startswith(text):
                return
            if text.startswith(old):
                self.texts[slot][1] = text
                return
        self.by_msg.setdefault(mid, []).append(len(self.texts))
        self.texts.append([mid, text])

    def indexed(self):
        parts = [self.user] + [t for _, t in self.texts]
        for name, inp in self.tools:
            parts.append(name)
            parts.extend(strings(inp))
        return "\n".join(parts)


def strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)
    elif obj is not None:
        yield str(obj)


def human_text(rec):
    """(text, stripped IDE text) if rec starts a turn, else None."""
    msg = rec.get("message")
    if rec.get("type") != "user" or not isinstance(msg, dict):
        return None
    if rec.get("isMeta") is True or rec.get("isCompactSummary") is True:
        return None
    content, ide = msg.get("content"), []
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict)]
        if any(b.get("type") == "tool_result" for b in blocks):
            return None
        texts = [b.get("text") or "" for b in blocks if b.get("type") == "text"]
        if not texts:
            return None
        while texts and IDE_BLOCK.fullmatch(texts[0]):
            ide.append(texts.pop(0))
        text = "\n".join(texts)
    else:
        return None
    if not text.strip() or not TAG_SPAN.sub("", text).strip() or text.strip() in INTERRUPTS:
        return None
    return text, "\n".join(ide)


class Conversation:
    def __init__(self, path, rel, kind, session_id, agent_id):
        self.path, self.rel, self.kind = path, rel, kind
        self.session_id, self.agent_id = session_id, agent_id
        self.turns = []
        self.records = 0
        self.odd = {"malformed_json": 0, "invalid_utf8": 0, "blank": 0}
        self.lost_uuids = []   # uuids of records on unparseable lines (children may point at them)
        self.non_indexed = {"tool_result": [], "tool_use_result": [], "thinking": []}


def read_conversation(conv, sessions, errors):
    """Parse one file: derive its turns, run the envelope checks, and keep the
    non-indexed text (for decoy checks). Nothing survives beyond this file."""
    with open(conv.path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    cur = None
    seen, by_msg = set(), {}
    for raw in lines:
        if not raw.strip():
            conv.odd["blank"] += 1
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            conv.odd["invalid_utf8"] += 1
            seen.update(m.decode() for m in LOST_UUID.findall(raw))
            continue
        except ValueError:
            conv.odd["malformed_json"] += 1
            seen.update(m.decode() for m in LOST_UUID.findall(raw))
            continue
        if not isinstance(rec, dict):
            conv.odd["malformed_json"] += 1
            continue
        conv.records += 1
        structure(conv, rec, seen, by_msg, errors)
        collect_non_indexed(conv, rec)
        h = human_text(rec)
        if h is not None:
            cur = Turn(conv, len(conv.turns), h[0], h[1])
            conv.turns.append(cur)
            continue
        if rec.get("type") == "assistant" and isinstance(rec.get("message"), dict):
            if cur is None:
                cur = Turn(conv, 0, "", "")
                conv.turns.append(cur)
            msg = rec["message"]
            mid = msg.get("id")
            for b in msg.get("content") or ():
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "text":
                    cur.add_text(mid, b.get("text") or "")
                elif b.get("type") == "tool_use" and b.get("id") not in cur.tool_ids:
                    cur.tool_ids.add(b.get("id"))
                    cur.tools.append((b.get("name"), b.get("input")))
    if conv.kind == "session" and conv.session_id not in sessions:
        errors.append("%s: file name is not a session id" % conv.rel)


def structure(conv, rec, seen, by_msg, errors):
    """Envelope and splitting checks on one parsed record."""
    t = rec.get("type")
    if t in ("user", "assistant", "system", "attachment", "progress") and "uuid" in rec:
        for k in ENVELOPE:
            if k not in rec:
                errors.append("%s: %s record %s lacks %s" % (conv.rel, t, rec.get("uuid"), k))
        p = rec.get("parentUuid")
        if p is not None and p not in seen:
            errors.append("%s: parentUuid %s of %s not earlier in file" % (conv.rel, p, rec["uuid"]))
        seen.add(rec["uuid"])
        if conv.kind != "session":
            if rec.get("isSidechain") is not True or rec.get("agentId") != conv.agent_id:
                errors.append("%s: subagent record without isSidechain/agentId" % conv.rel)
            if rec.get("sessionId") != conv.session_id:
                errors.append("%s: subagent sessionId %s != parent %s" % (conv.rel, rec.get("sessionId"),
                                                                        conv.session_id))
    if t == "assistant" and isinstance(rec.get("message"), dict):
        m = rec["message"]
        if len(m.get("content") or ()) != 1:
            errors.append("%s: assistant line with %d blocks" % (conv.rel, len(m.get("content") or ())))
        if "requestId" not in rec or not str(m.get("id", "")).startswith("msg_"):
            errors.append("%s: assistant line without requestId / message.id" % conv.rel)
        u = dict(m.get("usage") or {})
        u.pop("output_tokens", None)     # a streamed partial line reports fewer output tokens
        u.pop("iterations", None)
        key = (rec.get("requestId"), json.dumps(u, sort_keys=True), m.get("model"))
        if by_msg.setdefault(m.get("id"), key) != key:
            errors.append("%s: lines of %s disagree on requestId/usage/model" % (conv.rel, m.get("id")))


def collect_non_indexed(conv, rec):
    msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
    content = msg.get("content")
    if "toolUseResult" in rec:
        conv.non_indexed["tool_use_result"].append(json.dumps(rec["toolUseResult"], ensure_ascii=False))
    if isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_result":
                conv.non_indexed["tool_result"].append(json.dumps(b.get("content"), ensure_ascii=False))
            elif b.get("type") == "thinking":
                conv.non_indexed["thinking"].append(b.get("thinking") or "")


def discover(root, errors):
    convs = []
    for proj in sorted(os.listdir(root)):
        pdir = os.path.join(root, proj)
        if not os.path.isdir(pdir):
            continue
        sessions = sorted(f[:-6] for f in os.listdir(pdir) if f.endswith(".jsonl") and not f.startswith("agent-"))
        for name in sorted(os.listdir(pdir)):
            path = os.path.join(pdir, name)
            if name.endswith(".jsonl"):
                if name.startswith("agent-"):
                    sid = first_session_id(path)
                    if sid not in sessions:
                        errors.append("%s/%s: flat subagent sessionId %s has no session file" % (proj, name, sid))
                    convs.append(Conversation(path, proj + "/" + name, "flat_agent", sid, name[6:-6]))
                else:
                    convs.append(Conversation(path, proj + "/" + name, "session", name[:-6], None))
            elif os.path.isdir(os.path.join(path, "subagents")):
                sub = os.path.join(path, "subagents")
                for an in sorted(os.listdir(sub)):
                    if an.startswith("agent-") and an.endswith(".jsonl"):
                        meta = os.path.join(sub, an[:-6] + ".meta.json")
                        try:
                            with open(meta, encoding="utf-8") as f:
                                m = json.load(f)
                            if not {"agentType", "description"} <= set(m):
                                errors.append("%s: meta lacks agentType/description" % meta)
                        except (OSError, ValueError) as e:
                            errors.append("%s: %s" % (meta, e))
                        convs.append(Conversation(os.path.join(sub, an), "%s/%s/subagents/%s" % (proj, name, an),
                                                  "nested_agent", name, an[6:-6]))
    return convs, {c.session_id for c in convs if c.kind == "session"}


def first_session_id(path):
    with open(path, "rb") as f:
        for raw in f:
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("sessionId"):
                return rec["sessionId"]
    return None


WORD = re.compile(r"[^\W_]+")
HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def words(text):
    out = {w.lower() for w in WORD.findall(text)}
    for chunk in WORD.findall(text):
        out.update(h.lower() for h in HUMP.findall(chunk))
    return out


class QueryCheck:
    """Verifies queries while conversations stream by (memory: the queries only)."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.queries = [json.loads(x) for x in f if x.strip()]
        self.hits = [[] for _ in self.queries]       # (conv rel, turn, strict?) per query
        self.target = [None] * len(self.queries)     # (conv rel, turn) of the named turn
        self.by_word = {}
        self.code, self.decoy = [], []
        self.by_session = {}
        for i, q in enumerate(self.queries):
            kind = q.get("kind")
            if kind == "known_item":
                for w in set(q["query"].lower().split()):
                    self.by_word.setdefault(w, []).append(i)
            elif kind == "code":
                self.code.append(i)
            elif kind == "decoy":
                self.decoy.append(i)
            if kind in ("known_item", "code"):
                self.by_session.setdefault(q["session_id"], []).append(i)
        self.keys = frozenset(self.by_word)
        self.found = set()    # decoys seen in their non-indexed place

    def feed(self, conv):
        texts = [t.indexed() for t in conv.turns]
        if conv.kind == "session":
            for i in self.by_session.get(conv.session_id, ()):
                n = self.queries[i]["turn_number"]
                if 0 <= n < len(conv.turns):
                    self.target[i] = (conv.rel, n)
        for t, text in zip(conv.turns, texts):
            ws = words(text + "\n" + t.ide)
            cnt = {}
            for w in ws & self.keys:
                for i in self.by_word[w]:
                    cnt[i] = cnt.get(i, 0) + 1
            strict = None
            for i, c in cnt.items():
                need = set(self.queries[i]["query"].lower().split())
                if c == len(need):
                    strict = strict if strict is not None else words(text)
                    self.hits[i].append((conv.rel, t.n, need <= strict))
        lows = [(text + "\n" + t.ide).lower() for t, text in zip(conv.turns, texts)]
        big = "\x00".join(lows)
        starts, pos = [], 0
        for s in lows:
            starts.append(pos)
            pos += len(s) + 1
        for i in self.code + self.decoy:
            tok = self.queries[i]["query"].lower()
            at = big.find(tok)
            last = -1
            while at >= 0:
                k = bisect.bisect_right(starts, at) - 1
                if k != last:
                    self.hits[i].append((conv.rel, k, tok in texts[k].lower()))
                    last = k
                at = big.find(tok, at + 1)
        blobs = {k: "\n".join(v).lower() for k, v in conv.non_indexed.items()}
        for i in self.decoy:
            if i not in self.found and self.queries[i]["query"].lower() in blobs.get(self.queries[i].get("where"), ""):
                self.found.add(i)

    def finish(self, errors):
        counts = {}
        for i, q in enumerate(self.queries):
            kind = q.get("kind")
            counts[kind] = counts.get(kind, 0) + 1
            hits = self.hits[i]
            if kind in ("known_item", "code"):
                tgt = self.target[i]
                if tgt is None:
                    errors.append("%s %r: no turn %s/%s" % (kind, q["query"], q["session_id"], q["turn_number"]))
                    continue
                mine = [h for h in hits if (h[0], h[1]) == tgt]
                if not mine or not mine[0][2]:
                    errors.append("%s %r: not in the indexed text of %s turn %d" % (kind, q["query"], *tgt))
                others = [h for h in hits if (h[0], h[1]) != tgt]
                if others:
                    errors.append("%s %r: also in %d other turns (e.g. %s turn %d)"
                                  % (kind, q["query"], len(others), others[0][0], others[0][1]))
            elif kind == "decoy":
                if hits:
                    errors.append("decoy %r: in indexed text of %s turn %d" % (q["query"], hits[0][0], hits[0][1]))
                if i not in self.found:
                    errors.append("decoy %r: not found in any %s" % (q["query"], q.get("where")))
            else:
                errors.append("unknown query kind %r" % kind)
        return counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", help="projects directory (DIR/<encoded-cwd>/...)")
    ap.add_argument("--queries", help="queries.jsonl to verify")
    ap.add_argument("--expect-odd", type=int, help="exact number of unparseable/blank lines expected")
    ap.add_argument("--dump-turns", action="store_true", help="print every turn (file, number, user text head)")
    args = ap.parse_args(argv)
    errors = []
    convs, sessions = discover(args.root, errors)
    qc = QueryCheck(args.queries) if args.queries else None
    odd = {"malformed_json": 0, "invalid_utf8": 0, "blank": 0}
    summary = {"conversations": len(convs), "sessions": len(sessions),
               "subagents": sum(c.kind != "session" for c in convs), "turns": 0, "records": 0}
    for c in convs:
        read_conversation(c, sessions, errors)
        for k, v in c.odd.items():
            odd[k] += v
        summary["turns"] += len(c.turns)
        summary["records"] += c.records
        if args.dump_turns:
            for t in c.turns:
                print("%s\t%d\t%s" % (c.rel, t.n, t.user[:70].replace("\n", " ")))
        if qc:
            qc.feed(c)
        c.turns, c.non_indexed = None, None
    summary["odd_lines"] = odd
    if args.expect_odd is not None and sum(odd.values()) != args.expect_odd:
        errors.append("expected %d odd lines, found %s" % (args.expect_odd, odd))
    if qc:
        summary["queries"] = qc.finish(errors)
    summary["errors"] = len(errors)
    for e in errors[:50]:
        print("ERROR", e, file=sys.stderr)
    print(json.dumps(summary))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
