"""Tool calls: realistic inputs and results, backed by per-project virtual files.

Owns Project (a cwd, a language and a small virtual file system, so that
Write / Read / Edit of one file stay consistent across sessions) and Toolbox,
which builds one tool call at a time: the tool_use input plus the tool_result
content, is_error flag and top-level toolUseResult that Claude Code would
write. Decoys (ledger.py) are injected here, only into tool_result content or
toolUseResult, never into inputs. Subagent (Task/Agent) calls live in
session.py because they spawn a transcript of their own.
"""
from collections import namedtuple

Call = namedtuple("Call", "name input content is_error tur")

TODO_DONE = ("Todos have been modified successfully. Ensure that you continue to use the todo list "
             "to track your progress. Please proceed with the current tasks if applicable")
REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
            "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
            "wait for the user to tell you how to proceed.")
UPDATED = ("The file %s has been updated. Here's the result of running `cat -n` on a snippet of the edited "
           "file:\n%s")
MAX_FILE = 48_000


def inject(r, text, token):
    """Insert token at a word boundary of text."""
    if not text:
        return token
    i = text.find(" ", r.randrange(len(text)))
    if i < 0:
        return text + " " + token
    return text[:i] + " " + token + text[i:]


def numbered(lines, start=1):
    return "\n".join("%6d\u2192%s" % (start + i, ln) for i, ln in enumerate(lines))


class Project:
    def __init__(self, cwd, lang, branch, w, n_paths=40):
        self.cwd = cwd
        self.lang = lang
        self.branch = branch
        fixed = {"rust": ["Cargo.toml", "src/main.rs", "src/lib.rs"], "python": ["pyproject.toml", "app/__init__.py"],
                 "ts": ["package.json", "src/index.ts"], "go": ["go.mod", "main.go"],
                 "js": ["package.json", "src/index.js"]}.get(lang, [])
        self.paths = fixed + ["README.md"] + [w.path(lang) for _ in range(n_paths)]
        self.files = {}

    def abs(self, rel):
        return self.cwd + "/" + rel

    def get(self, w, rel, size):
        c = self.files.get(rel)
        if c is None:
            c = self.files[rel] = self.fill(w, rel, size)
        return c

    def fill(self, w, rel, size):
        if rel.endswith(".md"):
            size = min(size, w.max_file)
            parts, n = ["# " + w.title()], 0
            while n < size:
                p = w.paragraph()
                parts.append(p)
                n += len(p)
            return "\n\n".join(parts)
        lines, n = [], 0
        pool = w.pools[self.lang].code
        size = min(size, w.max_file)
        while n < size:
            ln = pool[w.r.randrange(len(pool))]
            lines.append(ln)
            n += len(ln) + 1
        return "\n".join(lines)

    def put(self, rel, content, limit=MAX_FILE):
        self.files[rel] = content[:limit]


class Toolbox:
    """Builds tool calls for one session (rng, writer and sizes are the session's)."""

    WEIGHTS = (("Read", 30), ("Bash", 25), ("Edit", 12), ("Grep", 10), ("Glob", 5), ("Write", 5),
               ("TodoWrite", 4), ("MultiEdit", 2), ("WebFetch", 2), ("WebSearch", 2))

    def __init__(self, ctx, w, project, sizes, style):
        self.ctx = ctx
        self.w = w
        self.r = w.r
        self.p = project
        self.sizes = sizes
        self.st = style
        self.names = [n for n, _ in self.WEIGHTS]
        self.cum = []
        t = 0
        for _, k in self.WEIGHTS:
            t += k
            self.cum.append(t)

    def pick(self):
        if self.p.lang == "python" and "notebook" in self.p.cwd and self.r.random() < 0.25:
            return "NotebookEdit"
        return self.r.choices(self.names, cum_weights=self.cum)[0]

    def make(self, name=None, rel=None, decoys=True):
        name = name or self.pick()
        call = getattr(self, "t_" + name)(rel) if rel else getattr(self, "t_" + name)()
        return self._decoys(call) if decoys else call

    # -- decoys ------------------------------------------------------------
    def _decoys(self, c):
        led, r = self.ctx.ledger, self.r
        if c.is_error:
            return c
        tok = led.decoy("tool_result")
        content, tur = c.content, c.tur
        if tok and isinstance(content, str) and content:
            content = inject(r, content, tok)
            if isinstance(tur, dict) and tur.get("stdout") == c.content:
                tur = dict(tur, stdout=content)
        elif tok and isinstance(content, list) and content and content[0].get("type") == "text":
            content = [dict(content[0], text=inject(r, content[0]["text"], tok))] + content[1:]
        elif tok:
            led.undo_decoy(tok)
        tok = led.decoy("tool_use_result")
        if tok and isinstance(tur, dict):
            tur = self._tur_decoy(tur, tok)
        return c._replace(content=content, tur=tur)

    def _tur_decoy(self, tur, tok):
        r = self.r
        if "file" in tur:
            f = dict(tur["file"])
            f["content"] = inject(r, f["content"], tok)
            return dict(tur, file=f)
        for k in ("originalFile", "originalFileContents", "stdout", "result", "content"):
            if isinstance(tur.get(k), str) and tur[k]:
                return dict(tur, **{k: inject(r, tur[k], tok)})
        self.ctx.ledger.undo_decoy(tok)
        return tur

    # -- helpers -------------------------------------------------------------
    def _text_lines(self, kind, size):
        return self.w.filler(self.p.lang, kind, size, self.sizes.fresh)

    def _rel(self, existing_bias=0.7):
        r = self.r
        if self.p.files and r.random() < existing_bias:
            keys = list(self.p.files)
            return keys[r.randrange(len(keys))]
        return self.p.paths[r.randrange(len(self.p.paths))]

    # -- tools ---------------------------------------------------------------
    def t_Read(self, rel=None):
        r, rel = self.r, rel or self._rel()
        text = self.p.get(self.w, rel, self.sizes.result(r) // 2)
        lines = text.split("\n")
        inp = {"file_path": self.p.abs(rel)}
        start = 1
        if len(lines) > 400 and r.random() < 0.5:
            start = r.randint(1, len(lines) - 200)
            lim = r.randint(80, 300)
            inp["offset"] = start
            inp["limit"] = lim
            lines = lines[start - 1:start - 1 + lim]
        body = "\n".join(lines)
        tur = {"type": "text", "file": {"filePath": inp["file_path"], "content": body, "numLines": len(lines),
                                        "startLine": start, "totalLines": len(text.split("\n"))}}
        return Call("Read", inp, numbered(lines, start), False, tur)

    def t_Write(self, rel=None):
        r, w = self.r, self.w
        rel = rel or self._rel(0.3)
        n = max(3, self.sizes.tool_input(r) // 40)
        content = w.code(self.p.lang, n) if not rel.endswith(".md") else w.markdown(max(1, n // 8))
        existed = rel in self.p.files
        self.p.put(rel, content, self.sizes.max_file)
        path = self.p.abs(rel)
        if existed:
            msg = UPDATED % (path, numbered(content.split("\n")[:12]))
            tur = {"type": "update", "filePath": path, "content": content, "structuredPatch": [], "originalFile": None}
        else:
            msg = "File created successfully at: " + path
            tur = {"type": "create", "filePath": path, "content": content, "structuredPatch": [], "originalFile": None}
        return Call("Write", {"file_path": path, "content": content}, msg, False, tur)

    def _edit_one(self, text):
        r, w = self.r, self.w
        lines = text.split("\n")
        if len(lines) < 3:
            lines = lines + [w.code_line(self.p.lang) for _ in range(4)]
        k = min(len(lines) - 1, r.randint(1, max(1, self.sizes.tool_input(r) // 120)))
        i = r.randrange(0, len(lines) - k)
        old = lines[i:i + k]
        new = [ln if r.random() < 0.5 else w.code_line(self.p.lang) for ln in old]
        new += [w.code_line(self.p.lang) for _ in range(r.randint(0, 3))]
        if new == old:
            new.append(w.code_line(self.p.lang))
        patched = lines[:i] + new + lines[i + k:]
        patch = {"oldStart": i + 1, "oldLines": k, "newStart": i + 1, "newLines": len(new),
                 "lines": [" " + x for x in lines[max(0, i - 3):i]] + ["-" + x for x in old] + ["+" + x for x in new]}
        return "\n".join(old), "\n".join(new), "\n".join(patched), patch, i

    def t_Edit(self, rel=None):
        r = self.r
        rel = rel or self._rel(0.9)
        text = self.p.get(self.w, rel, self.sizes.result(r) // 2)
        old, new, patched, patch, i = self._edit_one(text)
        self.p.put(rel, patched, self.sizes.max_file)
        path = self.p.abs(rel)
        snip = patched.split("\n")[max(0, i - 4):i + 10]
        msg = UPDATED % (path, numbered(snip, max(1, i - 3)))
        inp = {"file_path": path, "old_string": old, "new_string": new}
        if r.random() < 0.1:
            inp["replace_all"] = False
        tur = {"filePath": path, "oldString": old, "newString": new, "originalFile": text,
               "structuredPatch": [patch], "userModified": False, "replaceAll": False}
        return Call("Edit", inp, msg, False, tur)

    def t_MultiEdit(self):
        r = self.r
        rel = self._rel(0.9)
        text = orig = self.p.get(self.w, rel, self.sizes.result(r) // 2)
        edits, patches = [], []
        for _ in range(r.randint(2, 4)):
            old, new, text, patch, _ = self._edit_one(text)
            edits.append({"old_string": old, "new_string": new})
            patches.append(patch)
        self.p.put(rel, text, self.sizes.max_file)
        path = self.p.abs(rel)
        msg = "Applied %d edits to %s:\n" % (len(edits), path) + "\n".join(
            '%d. Replaced "%s" with "%s"' % (k + 1, e["old_string"][:60], e["new_string"][:60])
            for k, e in enumerate(edits))
        tur = {"filePath": path, "edits": [dict(e, replace_all=False) for e in edits], "originalFileContents": orig,
               "structuredPatch": patches, "userModified": False}
        return Call("MultiEdit", {"file_path": path, "edits": edits}, msg, False, tur)

    def t_NotebookEdit(self):
        r, w = self.r, self.w
        nb = self.p.abs("analysis/%s.ipynb" % w.iwords(1)[0])
        cell = "cell-%d" % r.randint(0, 40)
        src = w.code("python", r.randint(2, 12))
        inp = {"notebook_path": nb, "cell_id": cell, "new_source": src, "cell_type": "code", "edit_mode": "replace"}
        tur = {"new_source": src, "cell_id": cell, "cell_type": "code", "language": "python",
               "edit_mode": "replace", "error": ""}
        return Call("NotebookEdit", inp, "Updated cell %s with %s" % (cell, src), False, tur)

    def _command(self):
        r, w, lang = self.r, self.w, self.p.lang
        a, b = w.iwords(2)
        test = {"rust": "cargo test %s" % a, "python": "python -m pytest tests/test_%s.py -q" % a,
                "ts": "npm test -- %s" % a, "js": "npm test -- %s" % a, "go": "go test ./%s/..." % a}[lang]
        build = {"rust": "cargo build --release", "python": "ruff check .", "ts": "npx tsc --noEmit",
                 "js": "npm run build", "go": "go build ./..."}[lang]
        return r.choice(((test, "Run the %s tests" % a, "log"), (build, "Build the project", "log"),
                         ("git status", "Show working tree status", "prose"),
                         ("git diff %s" % w.path(lang), "Show unstaged changes", "code"),
                         ("git log --oneline -20", "Show recent commits", "prose"),
                         ("ls -la %s" % (self.p.cwd + "/src"), "List source files", "prose"),
                         ("rg -n '%s' src/" % b, "Search for %s" % b, "code"),
                         ("cargo clippy --all-targets -- -D warnings" if lang == "rust" else build,
                          "Lint the code", "log")))

    def t_Bash(self):
        r = self.r
        cmd, desc, kind = self._command()
        size = self.sizes.result(r)
        out = "\n".join(self._text_lines(kind, size)) if size > 40 else ""
        inp = {"command": cmd, "description": desc}
        if r.random() < 0.1:
            inp["timeout"] = 600000
        if r.random() < 0.1:
            code = r.choice((1, 2, 101, 127))
            content = "Exit code %d\n%s" % (code, out)
            return Call("Bash", inp, content, True, "Error: " + content)
        tur = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
        if not out and r.random() < 0.5:
            tur["returnCodeInterpretation"] = "No matches found"
        return Call("Bash", inp, out, False, tur)

    def t_Grep(self):
        r, w = self.r, self.w
        pat = w.ident().strip("`")
        if r.random() < 0.5:
            files = [self.p.abs(self._rel(0.5)) for _ in range(r.randint(0, 12))]
            files = list(dict.fromkeys(files))
            inp = {"pattern": pat, "path": self.p.cwd, "output_mode": "files_with_matches"}
            content = ("Found %d files\n" % len(files) + "\n".join(files)) if files else "No files found"
            return Call("Grep", inp, content, False, {"mode": "files_with_matches", "filenames": files,
                                                      "numFiles": len(files)})
        lines = ["%s:%d:%s" % (self._rel(0.5), r.randint(1, 900), ln)
                 for ln in self._text_lines("code", self.sizes.result(r) // 2)]
        inp = {"pattern": pat, "path": "src", "output_mode": "content", "-n": True}
        text = "\n".join(lines)
        return Call("Grep", inp, text, False, {"mode": "content", "numFiles": 0, "filenames": [],
                                              "content": text, "numLines": len(lines)})

    def t_Glob(self):
        r = self.r
        ext = {"rust": "rs", "python": "py", "ts": "ts", "js": "js", "go": "go"}[self.p.lang]
        files = list(dict.fromkeys(self.p.abs(p) for p in self.p.paths[:r.randint(3, len(self.p.paths))]))
        inp = {"pattern": "**/*." + ext}
        if r.random() < 0.3:
            inp["path"] = self.p.cwd
        return Call("Glob", inp, "\n".join(files), False,
                    {"filenames": files, "durationMs": r.randint(3, 90), "numFiles": len(files), "truncated": False})

    def t_TodoWrite(self):
        r, w = self.r, self.w
        todos = []
        for k in range(r.randint(2, 6)):
            c = w.sentence(r.randint(3, 8)).rstrip(".?:!")
            st = r.choice(("pending", "in_progress", "completed"))
            if self.st.family == "v1":
                todos.append({"content": c, "status": st, "priority": r.choice(("high", "medium", "low")),
                              "id": str(k + 1)})
            else:
                todos.append({"content": c, "status": st, "activeForm": "Working on " + c[:40]})
        return Call("TodoWrite", {"todos": todos}, TODO_DONE, False, {"oldTodos": [], "newTodos": todos})

    def t_WebFetch(self):
        r, w = self.r, self.w
        a, b = w.iwords(2)
        url = r.choice(("https://docs.rs/%s/latest/%s/" % (a, a),
                        "https://github.com/%s/%s/issues/%d" % (a, b, r.randint(1, 4000)),
                        "https://%s.dev/guide/%s" % (a, b)))
        body = "\n\n".join(self._text_lines("prose", self.sizes.result(r) // 2))
        inp = {"url": url, "prompt": w.sentence(r.randint(6, 14))}
        content = body if r.random() < 0.5 else [{"type": "text", "text": p} for p in body.split("\n\n")]
        return Call("WebFetch", inp, content, False, {"bytes": len(body) * 3, "code": 200, "codeText": "OK",
                                                   "result": body, "durationMs": r.randint(300, 9000), "url": url})

    def t_WebSearch(self):
        r, w = self.r, self.w
        q = " ".join(w.words(r.randint(3, 6)))
        links = [{"title": w.title(), "url": "https://%s.org/%s" % tuple(w.iwords(2))} for _ in range(r.randint(3, 8))]
        prose = "\n".join(self._text_lines("prose", self.sizes.result(r) // 3))
        content = 'Web search results for query: "%s"\n\nLinks: %s\n\n%s' % (
            q, "[" + ",".join('{"title":"%s","url":"%s"}' % (x["title"], x["url"]) for x in links) + "]", prose)
        srv = "srvtoolu_01" + "".join(r.choices("abcdefghijkmnopXYZ0123456789", k=22))
        tur = {"query": q, "results": [{"tool_use_id": srv, "content": links}, prose],
               "durationSeconds": round(r.uniform(2, 30), 3)}
        return Call("WebSearch", {"query": q}, content, False, tur)

    def rejected(self):
        """A tool call the user rejected (interrupt during tool use)."""
        c = self.t_Edit() if self.r.random() < 0.5 else self.t_Bash()
        return c._replace(content=REJECTED, is_error=True, tur="Error: " + REJECTED)
