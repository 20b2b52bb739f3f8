"""Labelled secrets and look-alikes for scripts/bench-redaction.

Every secret is random and generated here, in the shape of its kind; nothing real. A
planted secret is (kind, text as written, probe): the probe is the random part that must
never come back. Styles are the ways people really write them: bare, quoted, in a URL,
in JSON, and split by a shell line continuation inside a command.
"""
import base64
import json
import string

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"
B64 = ALNUM + "+/"
PW = ALNUM + "!%^*_+=.-#@"

STYLES = ("bare", "quoted", "url", "json", "split")


def rs(r, n, alphabet=ALNUM):
    """n random characters holding a digit and a letter (random tokens do)."""
    while True:
        s = "".join(r.choice(alphabet) for _ in range(n))
        if alphabet is not ALNUM or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
            return s


def b64(data):
    return base64.b64encode(data).decode()


def _pem(r, style):
    kind = r.choice(["OPENSSH ", "RSA ", "EC ", "", "ENCRYPTED "])
    lines = [rs(r, 64, B64) for _ in range(r.randint(3, 8))] + [rs(r, r.randint(8, 60), B64)]
    head, tail = "-----BEGIN %sPRIVATE KEY-----" % kind, "-----END %sPRIVATE KEY-----" % kind
    nl = "\\n" if style in ("json", "url") else "\n"
    return head + nl + nl.join(lines) + nl + tail, lines[0][:24]


def _token(prefix, body):
    return lambda r: (prefix + body(r), None)


# kind -> function(r) -> (value, probe or None: the value minus its fixed prefix)
TOKENS = {
    "aws_access_key_id": lambda r: ("%s%s" % (r.choice(["AKIA", "ASIA"]), rs(r, 16, B32)), None),
    "gcp_api_key": _token("AIza", lambda r: rs(r, 35, ALNUM + "-_")),
    "github_token": lambda r: (r.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + rs(r, 36), None)
    if r.random() < 0.7 else ("github_pat_" + rs(r, 22) + "_" + rs(r, 59), None),
    "gitlab_token": _token("glpat-", lambda r: rs(r, 20, ALNUM + "-_")),
    "slack_token": lambda r: ("%s-%d-%d-%s" % (r.choice(["xoxb", "xoxp"]), r.randint(10**9, 10**10),
                                               r.randint(10**11, 10**12), rs(r, 24)), None),
    "stripe_key": lambda r: (r.choice(["sk_live_", "sk_test_", "rk_live_"]) + rs(r, 24 + r.randint(0, 75)), None),
    "twilio_key": _token("SK", lambda r: rs(r, 32, HEX)),
    "sendgrid_key": lambda r: ("SG." + rs(r, 22, ALNUM + "-_") + "." + rs(r, 43, ALNUM + "-_"), None),
    "npm_token": _token("npm_", lambda r: rs(r, 36)),
    "pypi_token": _token("pypi-AgEIcHlwaS5vcmc", lambda r: rs(r, 70, ALNUM + "-_")),
    "huggingface_token": _token("hf_", lambda r: rs(r, 34, string.ascii_letters)),
    "openai_key": lambda r: (r.choice(["sk-proj-", "sk-", "sk-svcacct-"]) + rs(r, 48 + r.randint(0, 100), ALNUM + "-_"), None),
    "anthropic_key": _token("sk-ant-api03-", lambda r: rs(r, 93, ALNUM + "-_") + "AA"),
    "jwt": lambda r: (b64(b'{"alg":"HS256","typ":"JWT"}').rstrip("=") + "." +
                      b64(json.dumps({"sub": rs(r, 10), "exp": r.randint(10**9, 2 * 10**9)}).encode())
                      .rstrip("=").replace("+", "-").replace("/", "_") + "." + rs(r, 43, ALNUM + "-_"), None),
}


def _tok(kind):
    def write(r, style):
        v, _ = TOKENS[kind](r)
        name = {"aws_access_key_id": "AWS_ACCESS_KEY_ID", "jwt": "SESSION_JWT"}.get(kind, "API_TOKEN")
        text = {
            "bare": "use %s for this" % v,
            "quoted": "%s='%s'" % (name, v),
            "url": ("https://%s@github.com/o/r.git" % v) if kind == "github_token"
            else "https://api.example.com/v1/items?key=%s&page=2" % v,
            "json": json.dumps({"name": "ci", "credentials": {"value": v}}),
            "split": 'curl -sS https://api.example.com \\\n  -H "X-Api-Token: %s"' % v,
        }[style]
        return text, v[len(v) // 3:][:24]
    return write


def _assign(kind, keys, value):
    def write(r, style):
        v = value(r)
        key = r.choice(keys)
        text = {
            "bare": "%s=%s" % (key.upper(), v),
            "quoted": '%s: "%s"' % (key.lower(), v),
            "url": "https://example.com/cb?%s=%s&state=1" % (key.lower(), v),
            "json": json.dumps({key.lower(): v, "region": "eu-west-1"}),
            "split": "export %s=\\\n  '%s'" % (key.upper(), v),
        }[style]
        return text, v
    return write


def _aws_secret(r, style):
    v = rs(r, 40, B64)
    text = {
        "bare": "aws_secret_access_key = %s" % v,
        "quoted": "AWS_SECRET_ACCESS_KEY='%s'" % v,
        "url": "aws configure set aws_secret_access_key %s --profile ci" % v,
        "json": json.dumps({"Credentials": {"AccessKeyId": "ASIA" + rs(r, 16, B32), "SecretAccessKey": v}}),
        "split": "export AWS_SECRET_ACCESS_KEY=\\\n  %s" % v,
    }[style]
    return text, v[4:28]


def _aws_id(r):
    return r.choice(["AKIA", "ASIA"]) + rs(r, 16, B32)


def _aws_pair(r, style):
    """A secret with no key name, next to its access key id (same line or same record)."""
    i, v = _aws_id(r), rs(r, 40, B64)
    text = {
        "bare": "my key is %s and %s" % (i, v),
        "quoted": "User name,Access key ID,Key\nci,%s,%s" % (i, v),
        "url": "creds %s / %s" % (i, v),
        "json": json.dumps({"AccessKeyId": i, "Key": v, "Expiration": "2026-05-01T12:00:00Z"}),
        "split": "export K1=%s \\\n  K2='%s'" % (i, v),
    }[style]
    return text, v[4:28]


def _aws_word(r, style):
    """A secret after `secret` / `secret_key` words, no access key id in the text."""
    v = rs(r, 40, B64)
    text = {
        "bare": "and secret %s" % v,
        "quoted": "secret_key: '%s'" % v,
        "url": "s3cmd --secret-key %s ls" % v,
        "json": json.dumps({"secretKey": v, "region": "eu-west-1"}),
        "split": "aws-vault add ci --secret-key \\\n  %s" % v,
    }[style]
    return text, v[4:28]


def _aws_credentials(r, style):
    """`~/.aws/credentials` and `aws configure` style lines."""
    i, v = _aws_id(r), rs(r, 40, B64)
    creds = "[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n" % (i, v)
    text = {
        "bare": creds,
        "quoted": "cat > ~/.aws/credentials <<'EOF'\n%sEOF" % creds,
        "url": "aws_secret_access_key=%s" % v,
        "json": json.dumps({"file": "~/.aws/credentials", "text": creds}),
        "split": "printf '%s' \\\n  > ~/.aws/credentials" % creds.replace("\n", "\\n"),
    }[style]
    return text, v[4:28]


def _gcp_sa(r, style):
    v = rs(r, 40, HEX)
    doc = {"type": "service_account", "project_id": "p-%d" % r.randint(1, 999), "private_key_id": v,
           "client_email": "ci@p.iam.gserviceaccount.com"}
    text = json.dumps(doc, indent=2 if style == "bare" else None)
    if style == "split":
        text = "cat > sa.json <<'EOF'\n%s\nEOF" % text
    elif style == "quoted":
        text = "echo '%s' > sa.json" % text
    elif style == "url":
        text = "echo \"%s\"" % text.replace('"', '\\"')
    return text, v


def _azure_conn(r, style):
    if r.random() < 0.5:
        v = rs(r, 86, B64) + "=="
        conn = "DefaultEndpointsProtocol=https;AccountName=acct%d;AccountKey=%s;EndpointSuffix=core.windows.net" % (
            r.randint(1, 99), v)
    else:
        v = rs(r, 43, B64) + "="
        conn = ("Endpoint=sb://ns%d.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                "SharedAccessKey=%s" % (r.randint(1, 99), v))
    text = {"bare": conn, "quoted": 'AZURE_CONN="%s"' % conn, "url": conn,
            "json": json.dumps({"ConnectionStrings": {"Default": conn}}),
            "split": 'az storage container list \\\n  --connection-string "%s"' % conn}[style]
    return text, v[4:28]


def _azure_key(r, style):
    v = rs(r, 86, B64) + "=="
    text = {"bare": "AZURE_STORAGE_KEY=%s" % v, "quoted": "AccountKey='%s'" % v,
            "url": "az storage blob list --account-name acct --account-key %s" % v,
            "json": json.dumps({"AZURE_STORAGE_ACCOUNT_KEY": v}),
            "split": "az storage blob upload --account-key \\\n  %s -f x" % v}[style]
    return text, v[4:28]


def _slack_hook(r, style):
    path = "T%s/B%s/%s" % (rs(r, 8, B32), rs(r, 8, B32), rs(r, 24))
    url = "https://hooks.slack.com/services/" + path
    text = {"bare": url, "quoted": "SLACK_WEBHOOK='%s'" % url, "url": url,
            "json": json.dumps({"webhook_url": url}),
            "split": "curl -X POST \\\n  %s -d '{}'" % url}[style]
    return text, path[10:34]


def _basic(r, style):
    v = b64(("%s:%s" % (r.choice(["admin", "ci", "deploy"]), rs(r, 14, PW))).encode())
    text = {"bare": "Authorization: Basic %s" % v, "quoted": "-H 'Authorization: Basic %s'" % v,
            "url": "curl -u ci:%s https://ci.example.com" % rs(r, 14),
            "json": json.dumps({"headers": {"Authorization": "Basic " + v}}),
            "split": 'curl -H "Authorization: Basic \\\n  %s" https://x' % v}[style]
    probe = text.split("ci:")[1][:14] if style == "url" else v
    return text, probe


def _bearer(r, style):
    v = rs(r, r.randint(24, 64), ALNUM + "-_.")
    text = {"bare": "Authorization: Bearer %s" % v, "quoted": "-H 'Authorization: Bearer %s'" % v,
            "url": 'fetch(url, {headers: {Authorization: "Bearer %s"}})' % v,
            "json": json.dumps({"headers": {"Authorization": "Bearer " + v}}),
            "split": 'curl -H "Authorization: Bearer \\\n  %s" https://api.example.com' % v}[style]
    return text, v


def _db_url(r, style):
    v = rs(r, 18)
    scheme = r.choice(["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "amqp"])
    url = "%s://app:%s@db%d.internal:5432/app" % (scheme, v, r.randint(1, 9))
    text = {"bare": url, "quoted": "DATABASE_URL='%s'" % url, "url": url,
            "json": json.dumps({"db": {"url": url}}), "split": 'psql \\\n  "%s"' % url}[style]
    return text, v


def _url_pw(r, style):
    v = rs(r, 18)
    url = "%s://deploy:%s@%s.example.org/r.git" % (r.choice(["https", "http", "ftp", "smtp"]), v, rs(r, 6).lower())
    text = {"bare": url, "quoted": "git remote add origin '%s'" % url, "url": url,
            "json": json.dumps({"remote": url}), "split": "git clone \\\n  %s" % url}[style]
    return text, v


WRITERS = {
    "private_key": _pem,
    "aws_access_key_id": _tok("aws_access_key_id"),
    "aws_secret_key": _aws_secret,
    # the same kind in the shapes pair detectors catch (issue 39); `kind/shape` labels them
    "aws_secret_key/pair": _aws_pair,
    "aws_secret_key/word": _aws_word,
    "aws_secret_key/credentials": _aws_credentials,
    "gcp_service_account": _gcp_sa,
    "gcp_api_key": _tok("gcp_api_key"),
    "azure_connection_string": _azure_conn,
    "azure_storage_key": _azure_key,
    "slack_webhook": _slack_hook,
    "basic_auth": _basic,
    "bearer_token": _bearer,
    "database_url": _db_url,
    "url_password": _url_pw,
    "password_assignment": _assign("password_assignment", ["db_password", "PGPASSWORD", "smtp_pass", "admin_passwd"],
                                   lambda r: rs(r, 10, PW) + r.choice("!#%") + rs(r, 4)),
    "secret_assignment": _assign("secret_assignment", ["client_secret", "jwt_secret", "app_secret"],
                                 lambda r: rs(r, 32)),
    "token_assignment": _assign("token_assignment", ["access_token", "auth_token", "refresh_token"],
                                lambda r: rs(r, 32, ALNUM + "-_.")),
    "api_key_assignment": _assign("api_key_assignment", ["api_key", "apikey", "x-api-key", "client_key"],
                                  lambda r: rs(r, 32)),
}
for _k in TOKENS:
    WRITERS.setdefault(_k, _tok(_k))
KINDS = sorted(WRITERS)


def planted(r, kind, style):
    """(text, probe) of one secret of `kind` written in `style`."""
    text, probe = WRITERS[kind](r, style)
    assert probe in text, (kind, style, probe, text)
    return text, probe


PLACEHOLDERS = ["***", "<your-key>", "changeme", "${VAR}", "$API_KEY", "{{ .Values.secret }}", "xxxxxxxx",
                "YOUR_API_KEY_HERE", "********", "%s", "<password>", "${{ secrets.TOKEN }}", "REPLACE_ME",
                "example", "os.environ['X']", "process.env.TOKEN", "getpass()", "None", "String", "null"]


def kind_of(label):
    """The `[REDACTED:<kind>]` name of a planted label (`kind` or `kind/shape`)."""
    return label.split("/")[0]


WORDS = ["index", "writer", "config", "builder", "snapshot", "segment", "tokenizer", "merge", "policy",
         "handler", "factory", "provider", "registry", "session", "manager", "adapter", "src", "lib"]


def _words40(r, sep):
    """Exactly 40 characters of whole words (capitalised or not, some with short numbers)
    joined by `sep`, with a capital somewhere (a run of exactly 40 is never a cut word)."""
    while True:
        parts = []
        while len(sep.join(parts)) < 40:
            w = r.choice(WORDS)
            w = w.capitalize() if r.random() < 0.6 else w
            parts.append(w + (str(r.randint(1, 99)) if r.random() < 0.3 else ""))
        s = sep.join(parts)
        if len(s) == 40 and any(c.isupper() for c in s):
            return s


def look_alike_near_key(r, i):
    """One string that must stay although its text holds an access key id: 40-character runs
    that are not keys (git SHAs, paths, identifiers), `secret` before one, base64 of another
    length (as a key is exactly 40 characters)."""
    k = i % 8
    if k == 0:
        return rs(r, 40, HEX)  # git SHA
    if k == 1:
        return _words40(r, "/")  # a relative path of exactly 40 characters
    if k == 2:
        return "/" + _words40(r, "/")[1:]  # an absolute path
    if k == 3:
        return _words40(r, "")  # an identifier of exactly 40 characters
    if k == 4:
        return "secret " + rs(r, 40, HEX)
    if k == 5:
        n = r.choice([27, 28, 29, 31, 33])  # base64 of 36-44 characters, never a bare 40
        return b64(bytes(r.getrandbits(8) for _ in range(n)))
    if k == 6:
        return "sha256:" + rs(r, 64, HEX)
    return "secret_key=%s" % r.choice(PLACEHOLDERS)


def look_alike(r, i):
    """One string that must stay, of one of the shapes people mistake for secrets."""
    k = i % 16
    if k == 0:
        return rs(r, 40, HEX)  # git SHA
    if k == 1:
        h = rs(r, 32, HEX)
        return "%s-%s-4%s-a%s-%s" % (h[:8], h[8:12], h[13:16], h[17:20], rs(r, 12, HEX))  # UUID
    if k == 2:
        return "sha256:" + rs(r, 64, HEX)
    if k == 3:
        return b64(bytes(r.getrandbits(8) for _ in range(r.randint(9, 48))))  # base64 test data
    if k == 4:
        words = ["index", "writer", "config", "builder", "snapshot", "segment", "tokenizer", "merge", "policy",
                 "handler", "factory", "provider", "registry", "session", "manager", "adapter"]
        parts = [r.choice(words) for _ in range(r.randint(4, 7))]
        return "".join(p.capitalize() for p in parts) if r.random() < 0.5 else "_".join(parts)
    if k == 5:
        return "#%s" % rs(r, r.choice([3, 6, 8]), HEX)  # hex colour
    if k == 6:
        return "/home/dev/src/%s/%s_%d.rs" % (rs(r, 6).lower(), rs(r, 8).lower(), r.randint(1, 99))
    if k == 7:
        return "v%d.%d.%d%s" % (r.randint(0, 30), r.randint(0, 99), r.randint(0, 999),
                                r.choice(["", "-rc.1", "-beta.2", "+build.%d" % r.randint(1, 999)]))
    if k == 8:
        key = r.choice(["password", "api_key", "secret", "token", "DB_PASSWORD", "client_secret"])
        return "%s=%s" % (key, r.choice(PLACEHOLDERS))
    if k == 9:
        return rs(r, 64, HEX)  # bare sha256 digest
    if k == 10:
        return "sha512-" + b64(bytes(r.getrandbits(8) for _ in range(64)))  # npm integrity
    if k == 11:
        return "https://%s@github.com/%s/%s.git" % (r.choice(["git", "me"]), rs(r, 6).lower(), rs(r, 6).lower())
    if k == 12:
        return "arn:aws:iam::%d:role/%s" % (r.randint(10**11, 10**12 - 1), rs(r, 10))
    if k == 13:
        return r.choice(["max_tokens=%d" % r.randint(1, 9999), "token_count: %d" % r.randint(1, 9999),
                         "tokenizer=%s" % rs(r, 8).lower(), "PASSWORD_MIN_LENGTH=%d" % r.randint(6, 20)])
    if k == 14:
        return "msg_01%s" % rs(r, 22)  # message id
    return "%s:%d" % (r.choice(["localhost", "127.0.0.1", "db.internal"]), r.randint(1000, 65535))
