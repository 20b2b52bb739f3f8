"""The variants compared: each is a name and the environment it runs the server with.

CONVERSATION_SEARCH_TOKENIZER: comma list of whole-only, parts-only, stem, stopwords.
CONVERSATION_SEARCH_BM25: k1,b,user,assistant,tools (the defaults are 1.2,0.75,1,1,1).
"""

DEFAULT_BM25 = (1.2, 0.75, 1.0, 1.0, 1.0)


def bm25(k1=1.2, b=0.75, user=1.0, assistant=1.0, tools=1.0):
    return ",".join("%g" % x for x in (k1, b, user, assistant, tools))


# (name, tokenizer flags or None, BM25 string or None)
VARIANTS = (
    ("default", None, None),
    ("whole-only", "whole-only", None),
    ("parts-only", "parts-only", None),
    ("stem", "stem", None),
    ("stopwords", "stopwords", None),
    ("stem,stopwords", "stem,stopwords", None),
    ("tools=0.5", None, bm25(tools=0.5)),
    ("tools=2.0", None, bm25(tools=2.0)),
    ("user=2.0", None, bm25(user=2.0)),
    ("assistant=0.5", None, bm25(assistant=0.5)),
    ("k1=0.9,b=0.4", None, bm25(k1=0.9, b=0.4)),
    ("k1=1.5,b=0.75", None, bm25(k1=1.5, b=0.75)),
)


def env_of(tokenizer, bm25_params):
    env = {}
    if tokenizer:
        env["CONVERSATION_SEARCH_TOKENIZER"] = tokenizer
    if bm25_params:
        env["CONVERSATION_SEARCH_BM25"] = bm25_params
    return env


def parse_custom(spec):
    """NAME[:tokenizer=FLAGS][:bm25=k1,b,u,a,t] -> (name, tokenizer, bm25)."""
    name, *opts = spec.split(":")
    tok = params = None
    for o in opts:
        key, _, val = o.partition("=")
        if key == "tokenizer":
            tok = val
        elif key == "bm25":
            if len(val.split(",")) != 5:
                raise ValueError("bm25= needs 5 numbers: k1,b,user,assistant,tools (got %r)" % val)
            params = val
        else:
            raise ValueError("unknown variant option %r in %r (use tokenizer= or bm25=)" % (key, spec))
    if not name:
        raise ValueError("variant needs a name: %r" % spec)
    return name, tok, params


def select(names, custom):
    """The variants to run: named built-ins (all when names is empty) plus custom specs."""
    known = {v[0]: v for v in VARIANTS}
    out = []
    if names:
        for n in names:
            if n not in known:
                raise ValueError("unknown variant %r; known: %s" % (n, ", ".join(known)))
            out.append(known[n])
    elif not custom:
        out = list(VARIANTS)
    out.extend(parse_custom(c) for c in custom)
    return out
