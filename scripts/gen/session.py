"""One session: its turns, agent loop, subagents, titles and planted queries.

Owns SessionGen, which writes one main transcript (and the subagent files it
spawns) from a SessionSpec: how many turns or bytes, which Claude Code style,
which special features must appear (fixtures) and how likely the optional
ones are (realistic / dense). Planted query material goes only into prompt or
assistant text; harness noise comes from harness.py, tool calls from tools.py.
"""
import json
import os

from . import harness as H
from .records import Conv, new_uuid, signature, toolu_id
from .tools import Call, Toolbox, inject

SHARED_FILE = "src/index/writer.rs"   # fixtures: written, read and edited across sessions

NON_ASCII = (
    "K\u00f6nntest du bitte pr\u00fcfen, warum die Indexierung bei gro\u00dfen Dateien so langsam ist? "
    "Die Fehlerbehandlung im Watcher verschluckt anscheinend \u00c4nderungen, und der Speicherverbrauch "
    "steigt st\u00e4ndig.",
    "\u691c\u7d22\u7d50\u679c\u306e\u30b9\u30cb\u30da\u30c3\u30c8\u304c\u9577\u3059\u304e\u307e\u3059\u3002"
    "\u30bf\u30fc\u30f3\u3054\u3068\u306b\u77ed\u304f\u3057\u3066\u3001\u65e5\u672c\u8a9e\u306e\u30c6\u30ad"
    "\u30b9\u30c8\u3082\u6b63\u3057\u304f\u533a\u5207\u308c\u308b\u304b\u78ba\u8a8d\u3057\u3066\u304f\u3060"
    "\u3055\u3044\u3002",
)


class SessionSpec:
    def __init__(self, **kw):
        self.turns = None          # exact number of human prompts, or
        self.budget = None         # bytes after which the session stops
        self.features = set()      # fixtures: features that must appear
        self.knobs = {}            # probabilities of optional behaviour
        self.title = "none"        # none | ai | custom+ai | custom | summaries
        self.summary_leafs = []    # leafUuids for summaries in other files
        self.resume = None         # (lines, last uuid, captured turns) to copy at the top
        self.capture = 0           # capture the first N turns (for a later resume)
        self.no_plant = 0          # first N turns get no planted material
        self.slug = None
        self.dense = False
        self.force_tools = {}      # prompt index -> tool names forced into its first step
        self.__dict__.update(kw)


DEFAULT_KNOBS = {"steps": (1, 2, 3, 4), "tools": (1, 2), "thinking": 0.5, "ide": 0.3, "dup": 0.08, "local_cmd": 0.03,
                 "prompt_cmd": 0.01, "bash": 0.02, "notify": 0.02, "reminder": 0.02, "interrupt": 0.03,
                 "compact": 0.01, "task": 0.04, "api_error": 0.01, "near_miss": 0.2, "hooks": 0.5,
                 "snapshot": 0.7, "queue": 0.1, "long_prompt": 0.05, "warmup": 0.3, "ai_title": 0.15,
                 "pretext": 0.6}


class SessionGen:
    def __init__(self, ctx, spec):
        self.ctx = ctx
        self.s = spec
        self.r = ctx.r
        self.w = ctx.w
        self.p = spec.project
        self.st = spec.style
        self.k = dict(DEFAULT_KNOBS, **spec.knobs)
        self.f = spec.features
        self.tb = Toolbox(ctx, self.w, self.p, ctx.sizes, self.st)
        self.final_uuid = new_uuid(self.r) if spec.title == "summaries" else None
        self.final_used = False
        self.start_bytes = ctx.stats.total

    def on(self, feature, knob=None):
        if feature in self.f:
            return True
        return knob is not None and self.r.random() < self.k.get(knob, 0)

    def at(self, feature, i, n, knob):
        """Forced feature: exactly at prompt index n; otherwise by probability."""
        if feature in self.f:
            return i == n
        return self.r.random() < self.k.get(knob, 0)

    # prompt indexes at which forced fixture features fire (no planting there)
    SPECIAL = {"interrupts": (2, 5, 7), "oddities": (3,), "api_error": (4,)}

    def special(self, i):
        return any(f in self.f and i in ix for f, ix in self.SPECIAL.items())

    # -- whole session ---------------------------------------------------------
    def run(self):
        s, ctx = self.s, self.ctx
        path = os.path.join(ctx.out, s.project.dirname, s.session_id + ".jsonl")
        conv = self.conv = Conv(ctx, path, s.session_id, self.st, self.p.cwd, self.p.branch,
                                slug=s.slug, clock_ms=s.start_ms)
        conv.lang = self.p.lang
        ctx.stats.sessions += 1
        ctx.stats.projects.add(s.project.dirname)
        if s.capture:
            conv.start_capture(s.capture)
        if self.st.version.startswith("2.0") and self.on("warmup_agent", "warmup"):
            self.warmup_agent()
        self._top()
        n = 0
        while True:
            last = s.turns is not None and n == s.turns - 1
            done = self.turn(n, last)
            n += 1
            over = s.budget is not None and ctx.stats.total - self.start_bytes >= s.budget
            if done or over or (s.turns is not None and n >= s.turns):
                break
        self._bottom()
        end = conv.close()
        return {"end_ms": end, "last_uuid": self.final_uuid if self.final_used else conv.last_uuid,
                "capture": conv.capture_done,
                "capture_last": conv.capture_last, "captured_turns": conv.captured_turns}

    def _top(self):
        s, conv, w, r = self.s, self.conv, self.w, self.r
        if s.title == "summaries" or s.resume:
            leafs = list(s.summary_leafs) + ([self.final_uuid] if self.final_uuid else [])
            if s.resume:
                leafs = [s.resume[1]] + leafs
            for leaf in leafs:
                H.summary(conv, w.title(), leaf)
        if self.st.family == "v3":
            H.permission_mode(conv, r.choice(("default", "acceptEdits")))
        if s.resume:
            lines, last, turns = s.resume
            for ln in lines:
                conv.write_raw(ln)
                self.ctx.stats.records += 1
            conv.parent = last
            for strict, extra in turns:
                conv.begin_turn(strict, extra)
        if self.st.progress and r.random() < self.k["hooks"]:
            H.hook_progress(conv, "SessionStart:startup", new_uuid(r))
            conv.parent = None
        if self.on("slash_model"):
            H.local_command(conv, r)
        if self.on("slash_init", "prompt_cmd") and not s.resume:
            H.prompt_command(conv, w, "init")
            led = self.ctx.ledger
            ci = led.take_code(conv, force="slash_init" in self.f)
            self.agent_loop(plant=[led.code_token(ci)] if ci is not None else None, final=True, i=-1)
            if ci is not None:
                led.target("code", ci, conv)

    def _bottom(self):
        conv, w, r = self.conv, self.w, self.r
        if self.st.family == "v3" and r.random() < 0.3:
            H.away_summary(conv, w)

    # -- one turn --------------------------------------------------------------
    def turn(self, i, last):
        s, conv, w, r, led = self.s, self.conv, self.w, self.r, self.ctx.ledger
        if s.dense:
            return self.dense_turn(i)
        self.pre_prompt(i)
        plant_ok = conv.turn + 1 >= s.no_plant and not self.special(i)
        ki = led.take_known(conv) if plant_ok else None
        ci = led.take_code(conv) if plant_ok else None
        user_plant, asst_plant, targets = [], [], []
        if ki is not None:
            (user_plant if r.random() < 0.5 else asst_plant).extend(led.known_words(ki))
            targets.append(("known", ki))
        if ci is not None:
            tok = led.code_token(ci)
            (user_plant if r.random() < 0.5 else asst_plant).append("`%s`" % tok if r.random() < 0.5 else tok)
            targets.append(("code", ci))
        text = self.prompt_text(i, user_plant)
        self.write_prompt(text)
        for kind, idx in targets:
            led.target(kind, idx, conv)
        if self.st.family == "v3":
            H.v3_prompt_attachments(conv, w)
            if self.hooks:
                H.hook_attachment(conv, "UserPromptSubmit", new_uuid(r), r)
        ended = self.agent_loop(plant=asst_plant, final=True, last=last, i=i)
        if not ended:
            self.post_turn(text, i)
        return False

    @property
    def hooks(self):
        if not hasattr(self, "_hooks"):
            self._hooks = self.r.random() < self.k["hooks"]
        return self._hooks

    def pre_prompt(self, i):
        conv, w, r = self.conv, self.w, self.r
        if i > 0 and r.random() < self.k["local_cmd"]:
            H.local_command(conv, r)
        if "local_stderr" in self.f and i == 1:
            H.local_command(conv, r, stderr=True)
        if self.at("bash_mode", i, 2, "bash"):
            H.bash_mode(conv, w)
        if self.at("task_notification", i, 3, "notify"):
            H.task_notification(conv, w)
            if r.random() < 0.7 and conv.turn >= 0:
                conv.assistant([{"type": "text", "text": w.paragraph(1)}])
        if self.at("system_reminder", i, 1, "reminder"):
            H.system_reminder(conv, w)
        if "blank_prompt" in self.f and i == 4:
            H.blank_prompt(conv)
        if "oddities" in self.f and i == 3:
            H.malformed_line(conv)
            H.blank_line(conv)
            H.unknown_type(conv, w)
            H.missing_message(conv)
        if "compact_manual" in self.f and i == 5:
            H.compaction(conv, w, manual=True)

    def prompt_text(self, i, plant):
        w, r, s = self.w, self.r, self.s
        if i == 0 and ("long_first_prompt" in self.f or r.random() < self.k["long_prompt"]):
            text = w.paragraph(r.randint(4, 6), plant=plant)
            while len(text) <= 200:
                text += " " + w.sentence()
            return text
        if "non_ascii" in self.f and i == 1:
            return NON_ASCII[0] + (" " + w.sentence(plant=plant) if plant else "")
        if "non_ascii" in self.f and i == 3:
            return NON_ASCII[1] + (" " + w.sentence(plant=plant) if plant else "")
        if s.dense:
            return w.paragraph(r.randint(1, 2), plant=plant)
        if r.random() < self.k["near_miss"]:
            nm = self.ctx.ledger.near_miss(r)
            if nm:
                plant = list(plant) + ["`%s`" % nm]
        return w.paragraph(r.randint(*self.k.get("prompt_sentences", (1, 4))), plant=plant)

    def write_prompt(self, text):
        conv, r, w = self.conv, self.r, self.w
        ide = []
        if self.st.family in ("v2", "v3") and self.st.version.startswith("2.1") and self.on("_", "ide"):
            rel = self.p.paths[r.randrange(len(self.p.paths))]
            ide.append("<ide_opened_file>The user opened the file %s in the IDE. This may or may not be related "
                       "to the current task.</ide_opened_file>" % self.p.abs(rel))
            if r.random() < 0.12 or (self.f and not getattr(self, "_diag", False)):
                self._diag = True
                ide.append("<ide_diagnostics>%s:%d: warning: unused variable `%s`</ide_diagnostics>"
                           % (self.p.abs(rel), r.randint(1, 400), w.iwords(1)[0]))
            if r.random() < 0.3:
                lines = w.pools[self.p.lang].code[:r.randint(2, 6)]
                ide.append("<ide_selection>The user selected the lines 1 to %d from %s:\n%s\n\nThis may or may not "
                           "be related to the current task.</ide_selection>"
                           % (len(lines), self.p.abs(rel), "\n".join(lines)))
        uid = new_uuid(r)
        if self.st.family != "v1" and r.random() < self.k["snapshot"]:
            H.snapshot(conv, uid)
        if self.st.version in ("2.0.42", "2.1.114") and r.random() < self.k["queue"]:
            H.queue_ops(conv, text)
        conv.prompt(text, ide_blocks=ide, as_blocks=r.random() < 0.2, rec_uuid=uid)

    def post_turn(self, text, i):
        conv, w, r, s = self.conv, self.w, self.r, self.s
        if self.st.family == "v3":
            if self.hooks:
                H.stop_hooks(conv, r, r.randint(2000, 400000))
            H.last_prompt(conv, text)
        elif self.st.progress and self.hooks:
            H.stop_hooks(conv, r, 0)
        if s.title in ("ai", "custom+ai") and (i == 1 or (i > 1 and r.random() < self.k["ai_title"])):
            H.ai_title(conv, w.title())
        if s.title in ("custom", "custom+ai") and i == 2:
            H.custom_title(conv, w.title())
        if s.title == "custom+ai" and i == 4:
            H.custom_title(conv, w.title())   # renamed again: the last one wins

    # -- the agent loop ----------------------------------------------------
    def thinking_block(self, n_bytes=None):
        r, w = self.r, self.w
        sig = signature(r, max(48, (n_bytes or self.ctx.sizes.thinking(r)) // 3))
        if self.st.family != "v1" and r.random() < 0.04:
            return {"type": "redacted_thinking", "data": sig}
        if self.st.thinking == "empty":
            return {"type": "thinking", "thinking": "", "signature": sig}
        size = n_bytes or self.ctx.sizes.thinking(r)
        text = " ".join(w.filler(self.p.lang, "prose", size, 0.15))
        tok = self.ctx.ledger.decoy("thinking")
        if tok:
            text = inject(r, text, tok)
        return {"type": "thinking", "thinking": text, "signature": sig}

    def needs_tools(self, i):
        f = self.f
        return (("interrupts" in f and i in (2, 5)) or ("oddities" in f and i == 3) or ("compact_auto" in f and i == 6)
                or (i == 1 and ("shared_file_write" in f or "shared_file_edit" in f))
                or ("subagent" in f and not getattr(self, "_spawned", False)))

    def _dup(self, blocks):
        if "dups" in self.f or self.r.random() < self.k["dup"]:
            idx = [n for n, b in enumerate(blocks) if b["type"] == "text" and len(b["text"]) > 30]
            if idx:
                return (self.r.choice(("same", "prefix")), self.r.choice(idx))
        return None

    def agent_loop(self, plant, final, last=False, i=0):
        """Assistant steps with tools, then a final text. Returns True if the
        turn ended in an interrupt (no final text)."""
        conv, w, r, led, k = self.conv, self.w, self.r, self.ctx.ledger, self.k
        steps = r.choice(k["steps"])
        if steps == 0 and (self.needs_tools(i) or i in self.s.force_tools):
            steps = 1
        for step in range(steps):
            blocks = []
            if r.random() < k["thinking"]:
                blocks.append(self.thinking_block())
            if step == 0 and self.st.version == "2.1.42" and r.random() < 0.2:
                blocks.insert(0, {"type": "text", "text": "\n\n"})
            if r.random() < k["pretext"]:
                blocks.append({"type": "text", "text": w.sentence(r.randint(5, 14))})
            forced_intr = "interrupts" in self.f and i in (2, 5) and step == 0
            intr = not last and not plant and (
                forced_intr or ("interrupts" not in self.f and r.random() < k["interrupt"]))
            calls = []
            bad = "oddities" in self.f and i == 3 and step == 0
            if bad:
                calls.append(self.tb.t_Bash())   # built without decoys: this line gets an invalid byte
            if step == 0 and i in self.s.force_tools:
                calls.extend(self.tb.make(name, decoys=not intr) for name in self.s.force_tools[i])
            if i == 1 and step == 0 and ("shared_file_write" in self.f or "shared_file_edit" in self.f):
                first = "Write" if "shared_file_write" in self.f else "Read"
                calls.append(self.tb.make(first, SHARED_FILE, decoys=not intr))
                calls.append(self.tb.make("Read" if first == "Write" else "Edit", SHARED_FILE, decoys=not intr))
            for _ in range(r.choice(k["tools"])):
                must_spawn = "subagent" in self.f and not getattr(self, "_spawned", False)
                if not intr and (r.random() < k["task"] or must_spawn):
                    self._spawned = True
                    calls.append(self.task_call())
                else:
                    calls.append(self.tb.make(decoys=not intr))
            ids = []
            for c in calls:
                tid = toolu_id(r)
                ids.append(tid)
                b = {"type": "tool_use", "id": tid, "name": c.name, "input": c.input}
                if self.st.family == "v3":
                    b["caller"] = {"type": "direct"}
                blocks.append(b)
            conv.assistant(blocks, stop="tool_use", dup=self._dup(blocks))
            if intr:
                rej = self.tb.rejected()
                for tid in ids[:-1]:
                    conv.tool_result(tid, "Interrupted by user", True, "Error: Interrupted by user")
                conv.tool_result(ids[-1], rej.content, True, rej.tur)
                H.interrupt(conv, for_tool=True)
                return True
            for n, (tid, c) in enumerate(zip(ids, calls)):
                conv.tool_result(tid, c.content, c.is_error, c.tur, raw_bad=bad and n == 0)
                if self.st.progress and self.hooks:
                    H.hook_progress(conv, "PostToolUse:" + c.name, tid)
                elif self.st.family == "v3" and self.hooks:
                    H.hook_attachment(conv, "PostToolUse:" + c.name, tid, r)
            if ("compact_auto" in self.f and i == 6 and step == 0) or r.random() < k["compact"]:
                H.compaction(conv, w, manual=False)
        if not final:
            return False
        if self.s.budget is not None and self.ctx.stats.total - self.start_bytes >= self.s.budget:
            last = True   # the session stops after this turn
        if ("api_error" in self.f and i == 4) or r.random() < k["api_error"]:
            conv.assistant([{"type": "text", "text": 'API Error: 529 {"type":"error","error":{"type":"overloaded_error",'
                                                     '"message":"Overloaded"}}'}], model="<synthetic>", synthetic=True)
        blocks = []
        if r.random() < k["thinking"] * 0.5:
            blocks.append(self.thinking_block())
        plant = list(plant or ())
        if plant and r.random() < 0.3 and self.st.family != "v1":
            # planted text in a second, streamed text block of the same message
            blocks.append({"type": "text", "text": w.sentence()})
        if r.random() < k["near_miss"] * 0.5:
            nm = led.near_miss(r)
            if nm:
                plant.append("`%s`" % nm)
        blocks.append({"type": "text", "text": w.markdown(r.randint(*k.get("paras", (1, 4))), plant=plant)})
        plain_intr = (not plant and not last and "interrupts" not in self.f and k["interrupt"] > 0
                      and r.random() < k["interrupt"] * 0.3)
        if ("interrupts" in self.f and i == 7) or plain_intr:   # fixtures: a special turn, nothing planted
            cut = blocks[-1]["text"][: len(blocks[-1]["text"]) // 2]
            conv.assistant(blocks[:-1] + [{"type": "text", "text": cut}], stop=None)
            H.interrupt(conv, for_tool=False)
            return True
        leaf = self.final_uuid if last and not self.final_used else None
        self.final_used = self.final_used or leaf is not None
        conv.assistant(blocks, dup=self._dup(blocks), last_uuid=leaf)
        return False

    # -- dense turns -----------------------------------------------------------
    def dense_turn(self, i):
        conv, w, r, led = self.conv, self.w, self.r, self.ctx.ledger
        ki, ci = led.take_known(conv), led.take_code(conv)
        user_plant, asst_plant, targets = [], [], []
        if ki is not None:
            (user_plant if r.random() < 0.5 else asst_plant).extend(led.known_words(ki))
            targets.append(("known", ki))
        if ci is not None:
            (user_plant if r.random() < 0.5 else asst_plant).append(led.code_token(ci))
            targets.append(("code", ci))
        uid = new_uuid(r)
        if self.st.family != "v1" and r.random() < 0.2:
            H.snapshot(conv, uid)
        text = w.paragraph(r.randint(1, 2), plant=user_plant)
        conv.prompt(text, rec_uuid=uid)
        for kind, idx in targets:
            led.target(kind, idx, conv)
        if r.random() < 0.15:
            c = self.tb.make(r.choice(("Bash", "Read", "Grep", "Glob")))
            tid = toolu_id(r)
            conv.assistant([{"type": "text", "text": w.sentence(r.randint(5, 12))},
                            {"type": "tool_use", "id": tid, "name": c.name, "input": c.input}], stop="tool_use")
            conv.tool_result(tid, c.content, c.is_error, c.tur)
        n = (1, 1, 1, 1, 2, 2, 2, 3)[int(r.random() * 8)]
        slots = [[] for _ in range(n)]
        for p in asst_plant:
            slots[r.randrange(n)].append(p)
        blocks = [{"type": "text", "text": w.sentence(plant=slots[j])} for j in range(n)]
        if self.st.thinking == "text" and r.random() < 0.04:
            blocks.insert(0, self.thinking_block(r.randint(150, 600)))
        conv.assistant(blocks, dup=("same", 0) if r.random() < 0.02 else None)
        if self.st.family == "v3" and r.random() < 0.3:
            H.last_prompt(conv, text)
        return False

    # -- subagents -------------------------------------------------------------
    def task_call(self):
        """Spawn a subagent transcript; return the Task/Agent call for the parent."""
        ctx, r, w, st, s = self.ctx, self.r, self.w, self.st, self.s
        desc = " ".join(w.words(r.randint(2, 5))).capitalize()
        agent_type = r.choice(("general-purpose", "general-purpose", "Explore", "Plan"))
        prompt = w.paragraph(r.randint(2, 5))
        nested = st.nested_agents
        if nested:
            aid = "a%016x" % r.getrandbits(64)
            path = os.path.join(ctx.out, s.project.dirname, s.session_id, "subagents", "agent-%s.jsonl" % aid)
        else:
            aid = "%08x" % r.getrandbits(32)
            path = os.path.join(ctx.out, s.project.dirname, "agent-%s.jsonl" % aid)
        cwd, branch = self.p.cwd, self.p.branch
        if nested and r.random() < 0.3:
            cwd = "%s/.claude/worktrees/agent-%s" % (self.p.cwd, aid[:8])
            branch = "worktree-agent-%s" % aid[:8]
        sub = Conv(ctx, path, s.session_id, st, cwd, branch, slug=self.s.slug, agent_id=aid,
                   eligible=False, clock_ms=self.conv.clock)
        sub.slug_on = bool(self.s.slug) and st.family == "v2"
        sub.lang = self.p.lang
        ctx.stats.subagents += 1
        starts_with_prompt = nested or "old_agent_no_prompt" not in self.f or getattr(self, "_old_np", False)
        if not nested and "old_agent_no_prompt" in self.f:
            self._old_np = True
        if starts_with_prompt:
            sub.prompt(prompt)
        saved = self.conv
        tools_used = 0
        for _ in range(r.randint(1, 4)):
            blocks = [{"type": "text", "text": w.sentence(r.randint(5, 12))}]
            calls = [self.tb.make(r.choice(("Read", "Grep", "Glob", "Bash"))) for _ in range(r.randint(1, 3))]
            ids = [toolu_id(r) for _ in calls]
            blocks += [{"type": "tool_use", "id": t, "name": c.name, "input": c.input} for t, c in zip(ids, calls)]
            sub.assistant(blocks, stop="tool_use")
            for t, c in zip(ids, calls):
                sub.tool_result(t, c.content, c.is_error, c.tur)
            tools_used += len(calls)
        report = w.markdown(r.randint(2, 4))
        sub.assistant([{"type": "text", "text": report}])
        end = sub.close()
        dur = max(1000, end - saved.clock)
        saved.clock = end
        if nested:
            meta = {"agentType": agent_type, "description": desc}
            if r.random() < 0.3:
                meta["toolUseId"] = "pending"
            with open(path[:-len(".jsonl")] + ".meta.json", "w", encoding="utf-8", newline="\n") as f:
                f.write(json.dumps(meta, ensure_ascii=False, separators=(",", ":")))
            ctx.stats.files += 1
        usage = st.usage(r)
        content = [{"type": "text", "text": report}]
        if st.family == "v3":
            content.append({"type": "text", "text": "agentId: %s (use SendMessage with to: '%s' to continue this agent)\n"
                                                    "<usage>total_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>"
                                                    % (aid, aid, usage["output_tokens"] * 9, tools_used, dur)})
        tur = {"status": "completed", "prompt": prompt, "agentId": aid}
        if st.family == "v3":
            tur["agentType"] = agent_type
        tur.update({"content": [{"type": "text", "text": report}], "totalDurationMs": dur,
                    "totalTokens": usage["output_tokens"] * 9, "totalToolUseCount": tools_used, "usage": usage})
        inp = {"description": desc, "prompt": prompt, "subagent_type": agent_type}
        return Call(st.task_tool, inp, content, False, tur)

    def warmup_agent(self):
        """2.0.x wrote tiny 'Warmup' sidechain files beside the session."""
        ctx, r, s = self.ctx, self.r, self.s
        aid = "%08x" % r.getrandbits(32)
        path = os.path.join(ctx.out, s.project.dirname, "agent-%s.jsonl" % aid)
        sub = Conv(ctx, path, s.session_id, self.st, self.p.cwd, self.p.branch, agent_id=aid,
                   eligible=False, clock_ms=s.start_ms - 500)
        ctx.stats.subagents += 1
        sub.prompt("Warmup")
        sub.assistant([{"type": "text", "text": "I'm ready to help. What would you like me to look into in this "
                                                "codebase?"}])
        sub.close()
