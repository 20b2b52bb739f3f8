"""Profiles and the corpus driver.

Owns the three profiles - fixtures (a hand-written scenario that exercises
every parsing rule), realistic (sized by --target-mb, long-tailed sessions,
byte mix dominated by tool results) and dense (--turns short turns for scale
benchmarks) - and generate(), which lays out projects, orders sessions in
time, hands each SessionSpec to SessionGen and finally writes the queries.
All randomness flows from random.Random objects derived from --seed; nothing
reads the clock, and no output depends on set iteration order (so
PYTHONHASHSEED does not matter).
"""
import math
import os
import random
import time

from .ledger import Ledger
from .records import BASE_EPOCH_MS, STYLES, Stats, new_uuid
from .session import SHARED_FILE, SessionGen, SessionSpec
from .tools import Project
from .vocab import Lexicon, LinePool, Writer

DAY = 86_400_000


def encode_cwd(cwd):
    """Claude Code's directory name: every non-[A-Za-z0-9] character -> '-'."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


class Sizes:
    def __init__(self, result=(3200, 1.3, 400_000), tool_input=(2000, 1.1, 60_000),
                 thinking=(3800, 0.8, 40_000), fresh=0.05, max_file=120_000):
        self._res, self._inp, self._thk = result, tool_input, thinking
        self.fresh = fresh
        self.max_file = max_file

    @staticmethod
    def _draw(r, spec):
        med, sigma, cap = spec
        return int(min(cap, r.lognormvariate(math.log(med), sigma)))

    def result(self, r):
        return self._draw(r, self._res)

    def tool_input(self, r):
        return self._draw(r, self._inp)

    def thinking(self, r):
        return self._draw(r, self._thk)


class Ctx:
    def __init__(self, out, seed, lex, ledger, sizes):
        self.out = out
        self.seed = seed
        self.lex = lex
        self.ledger = ledger
        self.sizes = sizes
        self.stats = Stats()
        self.pools = {lang: LinePool(Writer(lex, random.Random("pool:" + lang)), lang, 2500)
                      for lang in ("rust", "python", "ts", "go", "js")}
        self.r = None
        self.w = None

    def bind(self, key):
        """Fresh rng + writer for one session, derived from (seed, key)."""
        self.r = random.Random("%s:%s" % (self.seed, key))
        self.w = Writer(self.lex, self.r)
        self.w.pools = self.pools
        self.w.max_file = self.sizes.max_file


def make_project(ctx, cwd, lang, branch):
    p = Project(cwd, lang, branch, ctx.w)
    p.dirname = encode_cwd(cwd)
    return p


SLUG_A = "humble zippy quiet brave mellow sunny crisp nimble witty gentle".split()
SLUG_B = "doodling wondering sailing humming drifting sparkling roaming skipping".split()
SLUG_C = "wolf wadler otter falcon lark panda heron badger comet maple".split()


def slug(r):
    return "%s-%s-%s" % (r.choice(SLUG_A), r.choice(SLUG_B), r.choice(SLUG_C))


# -- fixtures ------------------------------------------------------------------
FIXTURE_PROJECTS = (
    ("/home/dev/work/001-sites/diff-website", "ts", "v2b", "main"),
    ("/home/dev/work/001-sites/blog", "js", "v2a", "gh-pages"),
    ("/home/dev/src/conversation-search", "rust", "v3", "main"),
    ("/Users/ana/code/tide_pool.v2", "python", "v1", None),
    ("/home/dev/experiments/notebooks", "python", "v2b", "HEAD"),
    ("/srv/app/payment-gateway", "go", "v2", "master"),
)
# (project index, style key or None, turns, title, features)
FIXTURE_SESSIONS = (
    (0, None, 12, "ai", {"dups"}),
    (0, None, 8, "none", {"long_first_prompt", "non_ascii"}),
    (1, None, 10, "none", {"slash_init", "interrupts", "subagent", "old_agent_no_prompt", "warmup_agent"}),
    (1, None, 6, "none", {"bash_mode", "blank_prompt", "system_reminder", "task_notification", "local_stderr"}),
    (2, None, 14, "custom+ai", {"subagent", "compact_auto", "shared_file_write"}),
    (2, None, 10, "ai", {"oddities", "api_error", "shared_file_edit"}),
    (2, None, 8, "ai", {"slash_model", "dups", "non_ascii", "shared_file_edit"}),
    (3, None, 10, "summaries", {"capture"}),
    (3, None, 8, "summaries", set()),
    (3, "v1b", 6, "none", {"resume"}),
    (4, None, 10, "none", {"compact_manual"}),
    (4, None, 6, "none", {"subagent", "no_slug"}),
    (5, None, 12, "summaries", {"subagent", "old_agent_no_prompt", "interrupts"}),
    (5, None, 8, "custom", set()),
    (5, None, 6, "none", set()),
)
FIXTURE_KNOBS = {"steps": (0, 0, 0, 1, 1, 2), "tools": (1, 1, 1, 1, 2), "thinking": 0.25, "paras": (1, 2),
                 "ide": 0.35, "dup": 0.04, "local_cmd": 0.0,
                 "prompt_cmd": 0.0, "bash": 0.0, "notify": 0.0, "reminder": 0.0, "interrupt": 0.0, "compact": 0.0,
                 "task": 0.0, "api_error": 0.0, "near_miss": 0.35, "hooks": 0.12, "snapshot": 0.4, "queue": 0.2,
                 "pretext": 0.3, "prompt_sentences": (1, 3),
                 "long_prompt": 0.0, "warmup": 0.0, "ai_title": 0.2}
# session index -> {prompt index: tools forced into the first step}, so every tool shape is present
FIXTURE_TOOLS = {1: {2: ("Glob", "Grep")}, 7: {3: ("MultiEdit", "TodoWrite"), 5: ("WebSearch",)},
                 10: {2: ("NotebookEdit", "WebFetch")}, 13: {1: ("TodoWrite", "Write")}}


def fixture_specs(ctx, master):
    ctx.bind("projects")
    projects = [make_project(ctx, cwd, lang, br) for cwd, lang, _, br in FIXTURE_PROJECTS]
    t = BASE_EPOCH_MS
    specs = []
    for n, (pi, style_key, turns, title, feats) in enumerate(FIXTURE_SESSIONS):
        t += master.randint(2, 20) * 3_600_000
        key = style_key or FIXTURE_PROJECTS[pi][2]
        spec = SessionSpec(project=projects[pi], style=STYLES[key](), session_id=new_uuid(master), start_ms=t,
                           turns=turns, title=title, features=set(feats), knobs=FIXTURE_KNOBS,
                           slug=None if ("no_slug" in feats or key.startswith("v1")) else slug(master))
        if "capture" in feats:
            spec.capture, spec.no_plant = 2, 2
        spec.force_tools = FIXTURE_TOOLS.get(n, {})
        specs.append(spec)
    return specs


# -- realistic -----------------------------------------------------------------
LANGS = (("rust", 35), ("python", 25), ("ts", 20), ("go", 10), ("js", 10))
REALISTIC_KNOBS = {"steps": (0, 1, 1, 1, 1, 2, 2, 2, 3, 4), "tools": (1, 1, 1, 1, 2, 2, 3), "thinking": 0.6,
                   "ide": 0.3, "dup": 0.06, "local_cmd": 0.03, "prompt_cmd": 0.03, "bash": 0.02, "notify": 0.02,
                   "reminder": 0.02, "interrupt": 0.03, "compact": 0.004, "task": 0.008, "api_error": 0.005,
                   "near_miss": 0.25, "hooks": 0.25, "snapshot": 0.7, "queue": 0.15, "long_prompt": 0.1, "warmup": 0.3,
                   "ai_title": 0.1, "pretext": 0.3}
DENSE_KNOBS = dict(REALISTIC_KNOBS, steps=(1,), tools=(1,), thinking=0.0, task=0.0)


def project_paths(r, lex, n):
    users = ("dev", "ana", "mk", "sam")
    out, seen = [], set()
    while len(out) < n:
        a, b = r.choice(lex.ident), r.choice(lex.ident)
        name = r.choice(("%s-%s", "%s_%s", "%s.%s", "%s%s")) % (a, b) if r.random() < 0.8 else a
        u = r.choice(users)
        cwd = r.choice(("/home/%s/src/%s", "/home/%s/work/001-sites/%s", "/Users/%s/code/%s",
                        "/home/%s/work/clients/%s")) % (u, name)
        if encode_cwd(cwd) in seen:
            continue
        seen.add(encode_cwd(cwd))
        lang = r.choices([x for x, _ in LANGS], [k for _, k in LANGS])[0]
        branch = r.choice(("main", "main", "master", "develop", "")) if r.random() > 0.05 else None
        out.append((cwd, lang, branch))
    return out


def style_at(frac, r, dense=False):
    if dense:   # any version at any time; lighter envelopes weigh more
        return ("v1", "v1b", "v2", "v2a", "v2", "v2a", "v2b", "v2b", "v3", "v3")[int(r.random() * 10)]
    if frac < 0.12:
        return r.choice(("v1", "v1b"))
    if frac < 0.40:
        return r.choice(("v2a", "v2"))
    if frac < 0.60:
        return "v2b"
    return "v3"


def title_for(family, r):
    x = r.random()
    if family == "v1":
        return "summaries" if x < 0.7 else "none"
    if family == "v2":
        return "summaries" if x < 0.2 else "none"
    return "ai" if x < 0.7 else "custom+ai" if x < 0.8 else "custom" if x < 0.85 else "none"


def scaled_specs(ctx, master, n_sessions, n_projects, dense):
    ctx.bind("projects")
    defs = project_paths(master, ctx.lex, n_projects)
    projects = [make_project(ctx, cwd, lang, br) for cwd, lang, br in defs]
    pw = [1.0 / (i + 1) ** 0.8 for i in range(n_projects)]
    span = 60 * DAY
    specs = []
    for n in range(n_sessions):
        frac = n / max(1, n_sessions - 1)
        p = projects[master.choices(range(n_projects), pw)[0]]
        key = style_at(frac, master, dense)
        st = STYLES[key]()
        spec = SessionSpec(project=p, style=st, session_id=new_uuid(master),
                           start_ms=BASE_EPOCH_MS + int(frac * span) + master.randint(0, 3_600_000),
                           title=title_for(st.family, master), knobs=DENSE_KNOBS if dense else REALISTIC_KNOBS,
                           dense=dense, slug=slug(master) if st.family != "v1" and master.random() < 0.8 else None)
        if p.branch is not None and p.branch != "" and master.random() < 0.25:
            spec.branch = "feat/%s-%s" % (master.choice(ctx.lex.ident), master.choice(ctx.lex.ident))
        if master.random() < 0.01:
            spec.branch = "HEAD"
        if not dense and st.family in ("v1", "v2") and master.random() < 0.03:
            spec.capture, spec.no_plant = 2, 2
        specs.append(spec)
    return specs


# -- driver ------------------------------------------------------------------------
def ledger_for(args, lex, expected_turns, enabled):
    prof = args.profile
    if prof == "fixtures":
        return Ledger(lex, args.seed, known=50, code=50, decoys=16, plant_p=0.38,
                      decoy_rates={"tool_result": 0.2, "tool_use_result": 0.2, "thinking": 0.5}, enabled=enabled)
    q = 330
    p = min(0.5, q * 1.15 / max(1, expected_turns))
    if prof == "realistic":
        tools = expected_turns * 2.2      # tool calls per turn (opportunities for result decoys)
        thinking = expected_turns * 0.5   # non-empty thinking blocks per turn (v1/v2 styles only)
        band = (800, 12000)
    else:
        tools = expected_turns * 0.15
        thinking = expected_turns * 0.02
        band = (3000, 40000)
    rates = {"tool_result": min(0.5, 130 / tools), "tool_use_result": min(0.5, 130 / tools),
             "thinking": min(0.5, 130 / max(1.0, thinking))}
    return Ledger(lex, args.seed, known=q, code=q, decoys=110, known_band=band, plant_p=p,
                  decoy_rates=rates, enabled=enabled)


def generate(args):
    t0 = time.perf_counter()
    lex = Lexicon()
    master = random.Random(args.seed)
    if args.profile == "fixtures":
        expected = 150
        sizes = Sizes(result=(200, 0.8, 1500), tool_input=(180, 0.7, 1200), thinking=(220, 0.6, 1200), fresh=0.3,
                      max_file=1500)
    elif args.profile == "realistic":
        expected = int(args.target_mb * 28)
        sizes = Sizes()
    else:
        expected = args.turns
        sizes = Sizes(result=(200, 0.8, 1500), tool_input=(120, 0.6, 600), thinking=(200, 0.5, 800), fresh=0.2,
                      max_file=3000)
    ledger = ledger_for(args, lex, expected, enabled=bool(args.queries) or args.profile == "fixtures")
    ctx = Ctx(args.out, args.seed, lex, ledger, sizes)
    if args.profile == "fixtures":
        run_fixtures(ctx, master)
    elif args.profile == "realistic":
        n_s = max(10, round(args.target_mb))
        specs = scaled_specs(ctx, master, n_s, max(6, round(2 * math.sqrt(n_s))), dense=False)
        run_budgeted(ctx, specs, int(args.target_mb * 1_000_000), master)
    else:
        n_s = max(1, round(args.turns / 200))
        specs = scaled_specs(ctx, master, n_s, 50 if n_s >= 50 else max(2, n_s), dense=True)
        run_dense(ctx, specs, args.turns, master)
    queries, report = ledger.finalize()
    if args.queries:
        ledger.write(args.queries, queries)
    summary = ctx.stats.summary()
    summary["queries"] = report
    summary["profile"] = args.profile
    summary["seed"] = args.seed
    summary["seconds"] = round(time.perf_counter() - t0, 2)
    return summary


def _run(ctx, spec, key):
    ctx.bind(key)
    if getattr(spec, "branch", None) is not None:
        spec.project = _with_branch(spec.project, spec.branch)
    return SessionGen(ctx, spec).run()


def _with_branch(p, branch):
    q = Project.__new__(Project)
    q.__dict__.update(p.__dict__)
    q.branch = branch
    return q  # shares the virtual files with p


def run_fixtures(ctx, master):
    specs = fixture_specs(ctx, master)
    done = {}
    for n, spec in enumerate(specs):
        pi = FIXTURE_SESSIONS[n][0]
        feats = spec.features
        if "resume" in feats:
            src = next(d for d in done.values() if d["pi"] == pi and d["info"]["capture"])
            spec.resume = (src["info"]["capture"], src["info"]["capture_last"], src["info"]["captured_turns"])
        if spec.title == "summaries":
            prev = [d["info"]["last_uuid"] for d in done.values() if d["pi"] == pi]
            spec.summary_leafs = prev[-1:] if prev else [new_uuid(master)]
        if "shared_file_write" in feats or "shared_file_edit" in feats:
            spec.project.paths.insert(0, SHARED_FILE)
        info = _run(ctx, spec, "fixture-%d" % n)
        done[n] = {"pi": pi, "info": info}


def run_budgeted(ctx, specs, total, master):
    weights = [master.lognormvariate(0, 1.25) for _ in specs]
    left_w = sum(weights)
    captured = {}
    for n, (spec, wt) in enumerate(zip(specs, weights)):
        remaining = total - ctx.stats.total
        spec.budget = max(20_000, int(remaining * wt / left_w))
        left_w -= wt
        key = spec.project.dirname
        if key in captured and spec.style.family in ("v1", "v2") and master.random() < 0.3:
            spec.resume = captured.pop(key)
        info = _run(ctx, spec, "session-%d" % n)
        if info["capture"]:
            captured[key] = (info["capture"], info["capture_last"], info["captured_turns"])
        if ctx.stats.total >= total:
            break


def run_dense(ctx, specs, total_turns, master):
    for n, spec in enumerate(specs):
        left = total_turns - ctx.stats.turns
        if left <= 0:
            break
        spec.turns = left if n == len(specs) - 1 else min(left, master.randint(100, 300))
        _run(ctx, spec, "dense-%d" % n)


def check_out_dir(path):
    if os.path.exists(path) and os.listdir(path):
        raise SystemExit("error: --out %s exists and is not empty" % path)
