"""Vocabulary: fixed built-in word lists and everything that turns them into text.

Owns the Lexicon (English glue words, technical terms and ~150k synthetic
syllable words, sampled with a Zipf law), the bands used for planted query
material, and the makers for prose, identifiers, paths, flags, error codes
and code lines. The vocabulary never depends on --seed (it is built from a
constant seed), and no synthetic word contains the letter "q", so tokens that
start with "zq" (decoys, see ledger.py) can never arise from it.
"""
import itertools
import random

# Prose glue: frequent English words (never used as query material).
GLUE = (
    "the a to of in for on with and or but is are was it this that we you i "
    "should could would can will not when then so if because after before "
    "from into by as at be have has still also just only now again maybe "
    "probably already both each every some any all more less same other first "
    "last next new old why how what where which there here them our its their "
    "while since until instead without about over under between through during "
    "think looks seems need want let make sure check keep use run see try fix "
    "add remove change update move rename split merge handle return read write "
    "open close start stop wait call pass fail break work done right wrong good "
    "bad small large fast slow empty full whole part once twice never always "
    "often actually really probably currently later earlier"
).split()

# Technical terms: the head of the content-word distribution.
TECH = (
    "index query token parser watcher schema cache thread mutex channel buffer "
    "stream iterator trait struct enum module crate config server client "
    "request response handler router session transcript record field column "
    "table row score ranking snippet offset cursor batch commit branch merge "
    "rebase test fixture benchmark latency throughput memory allocation "
    "lifetime borrow closure future runtime tokio serde json yaml toml regex "
    "tokenizer stemmer analyzer segment posting document corpus term frequency "
    "weight normalization unicode path directory file symlink inode mtime "
    "debounce event notify polling timeout retry backoff error panic unwrap "
    "result option logging tracing span metric counter histogram flag argument "
    "subcommand binary library dependency feature workspace target build "
    "release profile linker compile warning lint clippy format rustfmt nix "
    "flake shell derivation overlay package version semver changelog migration "
    "database sqlite transaction lock snapshot checkpoint journal replay "
    "compaction summary title prompt assistant agent subagent tool message "
    "block content thinking signature uuid timestamp cwd project sidechain "
    "chain parent child tree graph node edge queue worker pool task job "
    "scheduler deadline budget limit quota page pagination filter facet sort "
    "boost phrase prefix fuzzy wildcard highlight excerpt preview render "
    "template markdown html css layout widget component state reducer hook "
    "effect props route endpoint api protocol mcp stdio transport handshake "
    "capability resource notification subscription websocket http header "
    "cookie auth permission socket pipe signal process daemon service unit "
    "container image volume network proxy gateway payment invoice ledger "
    "account user customer order cart checkout webhook deploy rollback "
    "staging production preview website blog post notebook cell kernel plot "
    "dataframe array matrix vector tensor model embedding dataset sample"
).split()

_ONSETS = ("b br bl c ch cl cr d dr f fl fr g gl gr h j k kl l m n p pl pr r s "
           "sh sk sl sm sn sp st sw t th tr tw v w z").split()
_VOWELS = "a e i o u a e i o u a e i o u ai au ea ei io oa ou".split()
_CODAS = ["", "", "", "", "n", "n", "r", "r", "l", "l", "m", "t", "k", "nd", "rt", "st", "x", "ck", "nk", "lt", "rn"]
# Endings a stemmer might strip: words ending so are dropped, which keeps
# distinct synthetic words distinct after stemming.
_BAD_ENDINGS = ("s", "ed", "er", "ly", "al", "ic", "ful", "ive", "ize", "ent",
                "ant", "ion", "ism", "ist", "ity", "ous", "ment", "ness", "ing",
                "ate", "bl", "a", "e", "i", "o", "u")

SYNTH_WORDS = 150_000
KNOWN_BAND = (400, 6000)      # synthetic ranks used for known-item words
PLANT_BAND = (3000, 30000)    # synthetic ranks used in planted code tokens
IDENT_BAND = 2500             # identifiers elsewhere use ranks below this

COMMON_ERROR_CODES = ("E0382", "E0499", "E0308", "E0277", "E0425", "E0433",
                      "E0599", "E0106", "E0061", "E0412", "TS2322", "TS2339")
EXTS = {"rust": ".rs", "python": ".py", "ts": ".ts", "go": ".go", "js": ".js"}


def syllable(r):
    return r.choice(_ONSETS) + r.choice(_VOWELS) + r.choice(_CODAS)


def _build_synthetic():
    r = random.Random("conversation-search/vocab/v1")
    seen = set(GLUE) | set(TECH)
    out = []
    while len(out) < SYNTH_WORDS:
        n = 2 if r.random() < 0.75 else 3
        w = "".join(syllable(r) for _ in range(n))
        if len(w) < 5 or len(w) > 11 or w in seen or w.endswith(_BAD_ENDINGS):
            continue
        seen.add(w)
        out.append(w)
    return out


def _table(words, weights, size):
    total = sum(weights)
    out = []
    for w, p in zip(words, weights):
        out.extend([w] * max(1, round(p / total * size)))
    return out


class Lexicon:
    """Immutable word tables shared by every generator in one run."""

    def __init__(self):
        self.glue = list(GLUE)
        self.tech = list(TECH)
        self.synth = _build_synthetic()
        # Content words: technical terms first, then synthetic words (Zipf s=1).
        self.content = self.tech + self.synth
        self.glue_cum = list(itertools.accumulate(1.0 / (i + 2) for i in range(len(self.glue))))
        self.ident = self.tech + self.synth[:IDENT_BAND]
        # Sampling tables: word w appears ~p(w) * size times (at least once), so a
        # uniform index draws from the Zipf law - much faster than bisecting.
        g = [1.0 / (i + 2) for i in range(len(self.glue))]
        c = [1.0 / (i + 8) for i in range(len(self.content))]
        gs, cs = sum(g), sum(c)
        self.mix_table = _table(self.glue + self.content, [x * 0.45 / gs for x in g] + [x * 0.55 / cs for x in c],
                                1 << 21)
        self.content_table = _table(self.content, [x / cs for x in c], 1 << 21)
        self.ident_table = _table(self.ident, [1.0 / (i + 4) for i in range(len(self.ident))], 1 << 16)
        self.title_words = self.tech + self.synth[:300]

    def band(self, lo_hi):
        lo, hi = lo_hi
        return self.synth[lo:hi]


class Writer:
    """Text makers bound to one rng (one per session for determinism)."""

    def __init__(self, lex, rng):
        self.lex = lex
        self.r = rng

    # -- words -----------------------------------------------------------
    def words(self, n):
        t, rnd = self.lex.content_table, self.r.random
        k = len(t)
        return [t[int(rnd() * k)] for _ in range(n)]

    def glue(self, n):
        return self.r.choices(self.lex.glue, cum_weights=self.lex.glue_cum, k=n)

    def iwords(self, n):
        t, rnd = self.lex.ident_table, self.r.random
        k = len(t)
        return [t[int(rnd() * k)] for _ in range(n)]

    def title(self):
        r = self.r
        ws = [r.choice(self.lex.title_words) for _ in range(r.randint(3, 6))]
        return " ".join(w.capitalize() if i == 0 or r.random() < 0.5 else w for i, w in enumerate(ws))

    # -- identifiers -----------------------------------------------------
    def ident(self):
        r = self.r
        k = r.random()
        a, b, c = self.iwords(3)
        if k < 0.30:
            return "_".join((a, b, c)[: r.randint(2, 3)])
        if k < 0.50:
            return "".join(w.capitalize() for w in (a, b, c)[: r.randint(2, 3)])
        if k < 0.65:
            return self.path()
        if k < 0.75:
            return "--%s-%s" % (a, b)
        if k < 0.85:
            return "%s.%s()" % (a, b)
        if k < 0.93:
            return "%s-%s" % (a, b)
        return r.choice(COMMON_ERROR_CODES)

    def path(self, lang=None):
        r = self.r
        a, b = self.iwords(2)
        ext = EXTS.get(lang) or r.choice((".rs", ".rs", ".py", ".ts", ".md", ".toml"))
        top = r.choice(("src", "src", "src", "tests", "crates/%s/src" % a, "lib", "benches"))
        if r.random() < 0.3:
            return "%s/%s%s" % (top, b, ext)
        return "%s/%s/%s%s" % (top, a, b, ext)

    # -- prose -----------------------------------------------------------
    def sentence(self, n=None, plant=(), ident_p=0.07):
        """One sentence; `plant` words/tokens are inserted at random slots."""
        r = self.r
        rnd = r.random
        n = n or 6 + int(rnd() * 13)
        n_ident = int(n * ident_p + rnd())
        t = self.lex.mix_table
        k = len(t)
        out = [t[int(rnd() * k)] for _ in range(n - n_ident)]
        for _ in range(n_ident):
            tok = self.ident()
            out.insert(int(rnd() * (len(out) + 1)), "`%s`" % tok if rnd() < 0.5 else tok)
        for p in plant:
            out.insert(int(rnd() * (len(out) + 1)), p)
        out[0] = out[0][:1].upper() + out[0][1:]
        return " ".join(out) + "...?:!"[min(5, int(rnd() * 6))]

    def paragraph(self, sentences=None, plant=(), ident_p=0.07):
        r = self.r
        k = sentences or r.randint(1, 4)
        slots = [[] for _ in range(k)]
        for p in plant:
            slots[r.randrange(k)].append(p)
        return " ".join(self.sentence(plant=slots[i], ident_p=ident_p) for i in range(k))

    def markdown(self, paras, plant=()):
        """Assistant-style text: paragraphs, bullet lists, code spans."""
        r = self.r
        parts, slots = [], [[] for _ in range(paras)]
        for p in plant:
            slots[r.randrange(paras)].append(p)
        for i in range(paras):
            x = r.random()
            if x < 0.2:
                items = ["- " + self.sentence(r.randint(4, 10)) for _ in range(r.randint(2, 5))]
                if slots[i]:
                    items.append("- " + self.sentence(r.randint(4, 9), plant=slots[i]))
                parts.append("\n".join(items))
            elif x < 0.28:
                parts.append("**%s**" % self.title())
                parts.append(self.paragraph(1, plant=slots[i]))
            else:
                parts.append(self.paragraph(plant=slots[i]))
        return "\n\n".join(parts)

    # -- code ------------------------------------------------------------
    def code_line(self, lang):
        r = self.r
        a, b, c = self.iwords(3)
        k = r.random()
        if lang == "python":
            forms = ("def %s_%s(self, %s):" % (a, b, c), "    return self.%s.%s(%s)" % (a, b, c),
                     "    %s = %s_%s(%s)" % (a, b, c, a), "# %s" % " ".join(self.words(r.randint(3, 9))),
                     "from %s.%s import %s" % (a, b, c.capitalize()), "    if not %s:" % a,
                     "        raise %sError(\"%s\")" % (b.capitalize(), " ".join(self.words(4))))
        elif lang in ("ts", "js"):
            forms = ("export function %s%s(%s: string) {" % (a, b.capitalize(), c),
                     "  const %s = await %s.%s(%s);" % (a, b, c, a), "// %s" % " ".join(self.words(r.randint(3, 9))),
                     "import { %s } from './%s/%s';" % (a.capitalize() + b.capitalize(), a, b),
                     "  if (!%s) return null;" % a, "}", "  %s.%s = %s;" % (a, b, c))
        elif lang == "go":
            forms = ("func (%s *%s) %s(%s string) error {" % (a[0], b.capitalize(), c.capitalize(), a),
                     "\t%s, err := %s.%s(%s)" % (a, b, c.capitalize(), a), "\tif err != nil {", "\t\treturn err",
                     "// %s" % " ".join(self.words(r.randint(3, 9))), "}")
        else:
            forms = ("pub fn %s_%s(&self, %s: &str) -> Result<%s> {" % (a, b, c, c.capitalize()),
                     "    let %s = self.%s.%s(%s)?;" % (a, b, c, a), "    // %s" % " ".join(self.words(r.randint(3, 9))),
                     "use crate::%s::{%s, %s};" % (a, b.capitalize(), c.capitalize()),
                     "#[derive(Debug, Clone)]", "pub struct %s%s {" % (a.capitalize(), b.capitalize()),
                     "    %s: Vec<%s>," % (a, b.capitalize()), "}", "    Ok(%s)" % a,
                     "        .map(|%s| %s.%s())" % (a[0], a[0], b))
        return forms[int(k * len(forms))]

    def code(self, lang, lines, fresh=0.25):
        pool, r = self.pools[lang].code, self.r
        return "\n".join(self.code_line(lang) if r.random() < fresh else pool[r.randrange(len(pool))]
                         for _ in range(lines))

    def filler(self, lang, kind, size, fresh):
        """~size bytes of lines from the shared pools, a `fresh` share newly generated."""
        pools = self.pools[lang]
        pool = {"code": pools.code, "log": pools.log, "prose": pools.prose}[kind]
        out, n, r = [], 0, self.r
        while n < size:
            if r.random() < fresh:
                ln = self.sentence(ident_p=0.05) if kind == "prose" else (
                    self.code_line(lang) if kind == "code" else LinePool.log_line(self))
            else:
                ln = pool[r.randrange(len(pool))]
            out.append(ln)
            n += len(ln) + 1
        return out


class LinePool:
    """Pre-generated lines for bulk tool-result text (fast to assemble)."""

    def __init__(self, writer, lang, n):
        self.code = [writer.code_line(lang) for _ in range(n)]
        self.log = [self.log_line(writer) for _ in range(n)]
        self.prose = [writer.sentence(ident_p=0.05) for _ in range(n // 2)]

    @staticmethod
    def log_line(w):
        r = w.r
        a, b = w.iwords(2)
        lvl = r.choice(("INFO", "INFO", "DEBUG", "WARN", "TRACE", "ERROR"))
        return "%s %s::%s: %s" % (lvl, a, b, " ".join(w.words(r.randint(3, 10))))
