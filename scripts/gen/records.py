"""Record layer: ids, clock, envelope styles and the streaming file writer.

Owns how one JSONL line looks on disk (key order per Claude Code version
family, compact JSON, UTF-8), the uuid/parentUuid chain, timestamps, the
one-content-block-per-line splitting of assistant messages (shared
message.id / requestId / usage), byte accounting per category, and the
writer's own notion of turn numbering (fed to the ledger). It writes each line
as soon as it is built; nothing of a corpus is kept in memory.
"""
import base64
import json
import os
import time

BASE_EPOCH_MS = 1772355600000  # 2026-03-01T09:00:00Z

_B58 = "123456789ABCDEFGHJKLMNPRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

CATEGORIES = ("prompt", "assistant_text", "thinking", "tool_input",
              "tool_result", "tool_use_result", "meta")


def jsize(obj):
    return len(_dumps(obj).encode("utf-8"))


def flatten(obj, out):
    """Collect the strings (keys and values) of a tool input, for turn text."""
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.append(k)
            flatten(v, out)
    elif isinstance(obj, list):
        for v in obj:
            flatten(v, out)
    elif obj is not None:
        out.append(str(obj))
    return out


_V4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_V4_SET = (4 << 76) | (0x8000 << 48)


def new_uuid(r):
    """Random (version 4, RFC 4122 variant) UUID string from the rng."""
    h = "%032x" % ((r.getrandbits(128) & _V4_CLEAR) | _V4_SET)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def b58(r, n):
    return "".join(r.choices(_B58, k=n))


def msg_id(r):
    return "msg_01" + b58(r, 22)


def toolu_id(r):
    return "toolu_01" + b58(r, 22)


def req_id(r):
    return "req_011C" + b58(r, 18)


def signature(r, nbytes):
    return base64.b64encode(r.getrandbits(8 * nbytes).to_bytes(nbytes, "little")).decode()


_ts_cache = {}


def iso(ms):
    sec, milli = divmod(ms, 1000)
    s = _ts_cache.get(sec)
    if s is None:
        if len(_ts_cache) > 4096:
            _ts_cache.clear()
        s = _ts_cache[sec] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
    return "%s.%03dZ" % (s, milli)


class Style:
    """Envelope conventions of one Claude Code version family.

    v1: 1.0.x (no gitBranch, no slug, summaries at the top, text thinking)
    v2: 2.0.x-2.1.4x (gitBranch, slug after gitBranch, flat agent files up
        to 2.0.x, nested from 2.1.x)
    v3: 2.1.1xx (type/message first, envelope tail, entrypoint, empty
        thinking with signature, Agent tool name, nested subagents)
    """

    def __init__(self, family, version, model, sub_model):
        self.family = family
        self.version = version
        self.model = model
        self.sub_model = sub_model
        self.nested_agents = family == "v3" or (family == "v2" and version.startswith("2.1"))
        self.thinking = {"v1": "text", "v2": "text", "v3": "empty"}[family]
        self.task_tool = "Agent" if family == "v3" else "Task"
        self.progress = family == "v2" and version.startswith("2.1")

    def usage(self, r, out_tokens=None):
        rnd = r.random
        cc = int(rnd() * 30000)
        cr = int(rnd() * 90000)
        inp = (1, 3, 4, 6, 8, 10, 11 + int(rnd() * 3000))[int(rnd() * 7)]
        out = out_tokens if out_tokens is not None else 1 + int(rnd() * 4000)
        if self.family == "v1":
            return {"input_tokens": inp, "cache_creation_input_tokens": cc,
                    "cache_read_input_tokens": cr, "output_tokens": out, "service_tier": "standard"}
        if self.family == "v2":
            u = {"input_tokens": inp, "cache_creation_input_tokens": cc, "cache_read_input_tokens": cr,
                 "cache_creation": {"ephemeral_5m_input_tokens": cc, "ephemeral_1h_input_tokens": 0},
                 "output_tokens": out, "service_tier": "standard"}
            if self.version.startswith("2.1"):
                u["inference_geo"] = "not_available"
            return u
        return {"input_tokens": inp, "cache_creation_input_tokens": cc, "cache_read_input_tokens": cr,
                "output_tokens": out, "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                "service_tier": "standard",
                "cache_creation": {"ephemeral_1h_input_tokens": cc, "ephemeral_5m_input_tokens": 0},
                "inference_geo": "", "iterations": [{"input_tokens": inp, "output_tokens": out,
                                                     "cache_read_input_tokens": cr, "cache_creation_input_tokens": cc,
                                                     "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                                                        "ephemeral_1h_input_tokens": cc},
                                                     "type": "message"}], "speed": "standard"}


STYLES = {
    "v1": lambda: Style("v1", "1.0.24", "claude-sonnet-4-20250514", "claude-sonnet-4-20250514"),
    "v1b": lambda: Style("v1", "1.0.61", "claude-opus-4-20250514", "claude-sonnet-4-20250514"),
    "v2": lambda: Style("v2", "2.0.55", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"),
    "v2a": lambda: Style("v2", "2.0.42", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"),
    "v2b": lambda: Style("v2", "2.1.42", "claude-opus-4-6", "claude-haiku-4-5-20251001"),
    "v3": lambda: Style("v3", "2.1.114", "claude-opus-4-7", "claude-opus-4-7"),
}


class Stats:
    def __init__(self):
        self.bytes = dict.fromkeys(CATEGORIES, 0)
        self.total = 0
        self.files = 0
        self.sessions = 0
        self.subagents = 0
        self.turns = 0
        self.records = 0
        self.projects = set()
        self.odd_lines = {"malformed_json": 0, "invalid_utf8": 0, "blank": 0}

    def summary(self):
        tot = self.total or 1
        env = self.total - sum(self.bytes.values())
        mix = dict(self.bytes, envelope=env)
        groups = {"tool_results": self.bytes["tool_result"] + self.bytes["tool_use_result"],
                  "thinking_and_tool_inputs": self.bytes["thinking"] + self.bytes["tool_input"],
                  "prompts_text_envelope": self.bytes["prompt"] + self.bytes["assistant_text"]
                  + self.bytes["meta"] + env}
        return {"projects": len(self.projects), "files": self.files, "sessions": self.sessions,
                "subagents": self.subagents, "turns": self.turns, "records": self.records,
                "bytes": self.total, "odd_lines": self.odd_lines,
                "byte_mix": {k: {"bytes": v, "share": round(v / tot, 4)} for k, v in mix.items()},
                "byte_groups": {k: round(v / tot, 4) for k, v in groups.items()}}


class Conv:
    """Streaming writer for one conversation file (session or subagent).

    The writer tracks turns exactly as the server is specified to: a turn
    starts at a human prompt (`prompt`), assistant output before the first
    prompt opens an implicit turn 0, everything else never starts a turn.
    Each finished turn's indexed text is handed to ledger.observe().
    """

    def __init__(self, ctx, path, session_id, style, cwd, branch, *, slug=None,
                 agent_id=None, eligible=True, clock_ms=None):
        self.ctx = ctx
        self.r = ctx.r
        self.path = path
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.f = open(path, "wb")
        self.session_id = session_id
        self.st = style
        self.cwd = cwd
        self.branch = branch
        self.slug = slug
        self.slug_on = False
        self.agent_id = agent_id
        self.eligible = eligible
        self.key = os.path.relpath(path, ctx.out)
        self.parent = None
        self.last_uuid = None
        self.clock = clock_ms if clock_ms is not None else BASE_EPOCH_MS
        self.turn = -1
        self.cur = []       # indexed text of the current turn
        self.extra = []     # stripped-but-nearby text (IDE blocks): collision checks only
        self.tool_src = {}  # tool_use id -> assistant line uuid
        self.prompt_id = None
        self.capture = None  # raw chained lines while capturing (resume copies)
        self.capture_n = 0   # capture the lines of the first capture_n turns
        self.capture_done = None
        self.capture_last = None
        self.captured_turns = []
        ctx.stats.files += 1

    # -- plumbing --------------------------------------------------------
    def tick(self, lo=40, hi=2500):
        self.clock += lo + int(self.r.random() * (hi - lo))
        return iso(self.clock)

    def write_line(self, obj, cats=None):
        data = (_dumps(obj) + "\n").encode("utf-8")
        self.f.write(data)
        st = self.ctx.stats
        st.total += len(data)
        st.records += 1
        if cats:
            for k, v in cats.items():
                st.bytes[k] += v
        if self.capture is not None and "uuid" in obj:
            self.capture.append(data)
        return data

    def write_raw(self, data, kind=None):
        self.f.write(data)
        self.ctx.stats.total += len(data)
        if kind:
            self.ctx.stats.odd_lines[kind] += 1

    def _head(self, rec_uuid, sidechain_extra=()):
        st = self.st
        d = {"parentUuid": self.parent, "isSidechain": self.agent_id is not None}
        if st.family == "v3":
            for k, v in sidechain_extra:
                d[k] = v
            if self.agent_id:
                d["agentId"] = self.agent_id
            return d
        d["userType"] = "external"
        d["cwd"] = self.cwd
        d["sessionId"] = self.session_id
        d["version"] = st.version
        if self.branch is not None:
            d["gitBranch"] = self.branch
        if self.agent_id:
            d["agentId"] = self.agent_id
        if self.slug_on:
            d["slug"] = self.slug
        return d

    def _tail(self, d):
        if self.st.family == "v3":
            d["userType"] = "external"
            d["entrypoint"] = "cli"
            d["cwd"] = self.cwd
            d["sessionId"] = self.session_id
            d["version"] = self.st.version
            d["gitBranch"] = self.branch if self.branch is not None else ""
            if self.slug_on:
                d["slug"] = self.slug
        return d

    def envelope_record(self, body, flags=(), post=(), rec_uuid=None, ts_first=False, pre=()):
        """Generic chained record: head, body items, flags, uuid+timestamp, post, tail."""
        u = rec_uuid or new_uuid(self.r)
        d = self._head(u, pre)
        for k, v in body:
            d[k] = v
        for k, v in flags:
            d[k] = v
        ts = self.tick()
        if ts_first:
            d["timestamp"] = ts
            d["uuid"] = u
        else:
            d["uuid"] = u
            d["timestamp"] = ts
        for k, v in post:
            d[k] = v
        self._tail(d)
        self.parent = u
        self.last_uuid = u
        return u, d

    # -- turn bookkeeping ------------------------------------------------
    def _flush_turn(self):
        if self.turn >= 0:
            strict = "\n".join(self.cur)
            extra = "\n".join(self.extra)
            self.ctx.ledger.observe(self, self.turn, strict, extra)
            if self.turn < self.capture_n:
                self.captured_turns.append((strict, extra))
        self.cur = []
        self.extra = []

    def begin_turn(self, text, extra=""):
        self._flush_turn()
        self.turn += 1
        self.ctx.stats.turns += 1
        self.cur.append(text)
        if extra:
            self.extra.append(extra)

    def implicit_turn(self):
        if self.turn < 0:
            self.begin_turn("")

    def start_capture(self, n_turns):
        self.capture = []
        self.capture_n = n_turns

    def _stop_capture(self):
        if self.capture is not None:
            self.capture_done = self.capture
            self.capture_last = self.parent
            self.capture = None

    def close(self):
        self._flush_turn()
        self._stop_capture()
        self.f.close()
        return self.clock

    # -- user side -------------------------------------------------------
    def user(self, content, *, flags=(), post=(), cats=None, rec_uuid=None):
        body = [("type", "user"), ("message", {"role": "user", "content": content})]
        pre = ()
        if self.st.family == "v3" and self.prompt_id:
            pre = (("promptId", self.prompt_id),)
        u, d = self.envelope_record(body, flags, post, rec_uuid=rec_uuid, pre=pre)
        self.write_line(d, cats)
        return u

    def prompt(self, text, *, ide_blocks=(), as_blocks=False, extra_post=(), rec_uuid=None):
        """A human prompt: starts a turn."""
        if self.capture is not None and self.turn + 1 >= self.capture_n:
            self._stop_capture()
        if self.st.family == "v3":
            self.prompt_id = new_uuid(self.r)
        if ide_blocks or as_blocks:
            content = [{"type": "text", "text": t} for t in ide_blocks] + [{"type": "text", "text": text}]
        else:
            content = text
        post = list(extra_post)
        if self.st.family != "v1" and self.r.random() < 0.5 and not self.agent_id:
            post += [("thinkingMetadata", {"maxThinkingTokens": 31999}), ("todos", [])]
        if self.st.family in ("v2", "v3") and self.st.version.startswith("2.1") and not self.agent_id:
            post.append(("permissionMode", "default"))
        cats = {"prompt": jsize(text), "meta": sum(jsize(t) for t in ide_blocks)}
        u = self.user(content, post=post, cats=cats, rec_uuid=rec_uuid)
        self.begin_turn(text, "\n".join(ide_blocks))
        return u

    def tool_result(self, tool_use_id, content, is_error, tur, *, raw_bad=False):
        blk = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
        if is_error or self.r.random() < 0.6:
            blk["is_error"] = bool(is_error)
        post = []
        if tur is not None:
            post.append(("toolUseResult", tur))
        if self.st.version.startswith("2.1") and tool_use_id in self.tool_src:
            post.append(("sourceToolAssistantUUID", self.tool_src[tool_use_id]))
        cats = {"tool_result": jsize(content), "tool_use_result": jsize(tur) if tur is not None else 0}
        body = [("type", "user"), ("message", {"role": "user", "content": [blk]})]
        pre = (("promptId", self.prompt_id),) if self.st.family == "v3" and self.prompt_id else ()
        u, d = self.envelope_record(body, (), post, pre=pre)
        if raw_bad:
            # Same record, but with one invalid UTF-8 byte inside the result text.
            line = (_dumps(d) + "\n").encode("utf-8")
            marker = b'"tool_result","content":"'
            i = line.find(marker)
            i = i + len(marker) + 3 if i >= 0 else len(line) // 2
            self.write_raw(line[:i] + b"\xff\xfe" + line[i:], "invalid_utf8")
            return u
        self.write_line(d, cats)
        return u

    # -- assistant side --------------------------------------------------
    def assistant(self, blocks, *, stop="end_turn", model=None, dup=None, synthetic=False, last_uuid=None):
        """Write one API message, one content block per line.

        dup: None | ("same", i) | ("prefix", i) - streamed duplicate of block i.
        Returns the uuid of the last line.
        """
        r = self.r
        self.implicit_turn()
        mid = msg_id(r)
        rid = req_id(r)
        usage = self.st.usage(r)
        model = model or (self.st.sub_model if self.agent_id else self.st.model)
        v12 = self.st.family != "v3"
        lines = []
        for i, b in enumerate(blocks):
            if dup and dup[1] == i and dup[0] == "prefix" and b["type"] == "text":
                cut = b["text"].rfind(" ", 0, max(1, len(b["text"]) // 3))
                if cut > 0:
                    partial = {"type": "text", "text": b["text"][:cut]}
                    lines.append((partial, dict(usage, output_tokens=r.randint(1, 3))))
            lines.append((b, usage))
            if dup and dup[1] == i and dup[0] == "same":
                lines.append((b, usage))
        for n, (b, us) in enumerate(lines):
            if v12:
                v20 = self.st.family == "v2" and not self.st.version.startswith("2.1")
                msg = {"model": model, "id": mid, "type": "message", "role": "assistant", "content": [b],
                       "stop_reason": None if v20 else stop,
                       "stop_sequence": None, "usage": us}
                if self.st.family == "v1":
                    msg = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [b],
                           "stop_reason": None, "stop_sequence": None, "usage": us}
            else:
                msg = {"model": model, "id": mid, "type": "message", "role": "assistant", "content": [b],
                       "stop_reason": stop, "stop_sequence": None, "stop_details": None, "usage": us}
            body = [("message", msg), ("requestId", rid), ("type", "assistant")]
            flags = (("isApiErrorMessage", True),) if synthetic else ()
            u, d = self.envelope_record(body, flags, rec_uuid=last_uuid if n == len(lines) - 1 else None)
            t = b["type"]
            if t == "text":
                cats = {"assistant_text": jsize(b["text"])}
                self.cur.append(b["text"])
            elif t == "tool_use":
                cats = {"tool_input": jsize(b["input"])}
                self.tool_src[b["id"]] = u
                self.cur.append(b["name"])
                self.cur.extend(flatten(b["input"], []))
            elif t == "thinking":
                cats = {"thinking": jsize(b["thinking"]) + jsize(b.get("signature", ""))}
            elif t == "redacted_thinking":
                cats = {"thinking": jsize(b["data"])}
            else:
                cats = None
            self.write_line(d, cats)
            if not self.slug_on and self.slug and self.st.family != "v1" and not self.agent_id:
                self.slug_on = True  # real files gain the slug after the first exchange
        return self.parent

    # -- harness records -------------------------------------------------
    def system(self, subtype, fields, *, parent_null=False, level=None):
        if parent_null:
            self.parent = None
        body = [("type", "system"), ("subtype", subtype)] + list(fields)
        if level:
            body.append(("level", level))
        post = (("isMeta", False),) if self.st.family == "v3" else ()
        u, d = self.envelope_record(body, (), post, ts_first=True)
        self.write_line(d, {"meta": 0})
        return u

    def progress(self, data, tool_use_id):
        body = [("type", "progress"), ("data", data), ("parentToolUseID", tool_use_id), ("toolUseID", tool_use_id)]
        parent = self.parent
        _, d = self.envelope_record(body, ts_first=True)
        self.parent = parent  # progress lines hang off the chain, they do not extend it
        self.write_line(d)

    def attachment(self, att):
        _, d = self.envelope_record([("attachment", att), ("type", "attachment")])
        self.write_line(d, {"meta": jsize(att)})

    def meta(self, obj):
        """Session-level metadata line (no uuid / parentUuid)."""
        self.write_line(obj, {"meta": 0})
