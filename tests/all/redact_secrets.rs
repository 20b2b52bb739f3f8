//! Black-box tests of secret redaction: a secret of every kind, planted in a prompt, a reply, a
//! command, a sub-agent description and a title, is neither searchable, nor returned by any
//! tool, nor present in the bytes of the persistent index; look-alikes (SHAs, UUIDs, digests,
//! placeholders) stay searchable and are returned as written.
//!
//! Secrets are generated at run time from pieces, so no complete secret sits in the source.
use crate::common;

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::McpClient;
use serde_json::json;
use std::path::Path;

/// A tiny deterministic generator (xorshift), so failures reproduce.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick(&mut self, n: usize, alphabet: &str) -> String {
        let a = alphabet.as_bytes();
        (0..n)
            .map(|_| a[(self.next() % a.len() as u64) as usize] as char)
            .collect()
    }

    /// `n` alphanumerics that hold a digit, an upper- and a lower-case letter.
    fn alnum(&mut self, n: usize) -> String {
        let mut s = self.pick(n - 3, ALNUM);
        s.insert(s.len() / 2, '7');
        s.insert(s.len() / 3, 'Q');
        s.push('k');
        s
    }
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";
const UPPER32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// One planted secret: its kind, the text it is written in, and a part of it that must never
/// come back (searched for, and looked for in every output and in the cache's bytes).
struct Planted {
    kind: &'static str,
    text: String,
    /// The whole secret as written (what someone would search for).
    value: String,
    probe: String,
}

/// The run of token characters around `probe` in `text`: the secret a reader would copy.
fn value_of(text: &str, probe: &str) -> String {
    let at = text.find(probe).expect("probe in text");
    let word = |c: char| c.is_ascii_alphanumeric() || "_-+/.".contains(c);
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| word(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = text[at..]
        .char_indices()
        .find(|(_, c)| !word(*c) && *c != '=')
        .map_or(text.len(), |(i, _)| at + i);
    text[start..end].to_owned()
}

fn b64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A random AWS secret access key: 40 base64 characters, both cases (as real keys have).
fn aws_secret(g: &mut Gen) -> String {
    format!("{}a{}Z/", g.pick(18, B64), g.pick(19, B64))
}

/// One secret of every kind, written the way people write them.
fn planted(g: &mut Gen) -> Vec<Planted> {
    let mut out = Vec::new();
    let mut add = |kind, text: String, probe: String| {
        let value = value_of(&text, &probe);
        out.push(Planted {
            kind,
            text,
            value,
            probe,
        });
    };
    let r = g.alnum(44);
    let pem = format!("-----BEGIN OPENSSH PRIVATE {}-----", "KEY");
    add(
        "private_key",
        format!(
            "{pem}\n{r}\n{}\n-----END OPENSSH PRIVATE {}-----",
            g.alnum(40),
            "KEY"
        ),
        r,
    );
    let r = g.pick(16, UPPER32);
    add(
        "aws_access_key_id",
        format!("aws_access_key_id={}{r}", "AKIA"),
        r,
    );
    let r = g.alnum(40);
    add(
        "aws_secret_key",
        format!("export AWS_SECRET_ACCESS_KEY=\"{r}\""),
        r,
    );
    let r = g.pick(40, HEX);
    add(
        "gcp_service_account",
        format!("{{\"type\": \"service_account\", \"private_key_id\": \"{r}\"}}"),
        r,
    );
    let r = g.alnum(35);
    add(
        "gcp_api_key",
        format!("https://maps.example.com/api?key={}{r}&z=1", "AIza"),
        r,
    );
    let r = g.alnum(86);
    add(
        "azure_connection_string",
        format!(
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={r}==;EndpointSuffix=core.windows.net"
        ),
        r,
    );
    let r = g.alnum(86);
    add("azure_storage_key", format!("AZURE_STORAGE_KEY={r}=="), r);
    let r = g.alnum(36);
    add(
        "github_token",
        format!("git push https://{}{r}@github.com/o/r", "ghp_"),
        r,
    );
    let r = g.alnum(20);
    add("gitlab_token", format!("PRIVATE-TOKEN: {}{r}", "glpat-"), r);
    let r = g.alnum(24);
    add(
        "slack_token",
        format!("token {}-2048-1234567890-{r}", "xoxb"),
        r,
    );
    let r = g.alnum(24);
    add(
        "stripe_key",
        format!("Stripe.api_key = '{}{r}'", "sk_live_"),
        r,
    );
    let r = g.pick(32, HEX);
    add("twilio_key", format!("the api key is {}{r}", "SK"), r);
    let (a, r) = (g.alnum(22), g.alnum(43));
    add(
        "sendgrid_key",
        format!("{{\"sendgrid\": \"{}.{a}.{r}\"}}", "SG"),
        r,
    );
    let r = g.alnum(36);
    add("npm_token", format!("NPM_TOKEN={}{r}", "npm_"), r);
    let r = g.alnum(60);
    add(
        "pypi_token",
        format!("twine upload -p {}{r}", "pypi-AgEIcHlwaS5vcmc"),
        r,
    );
    let r = g.pick(34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
    add(
        "huggingface_token",
        format!("huggingface-cli login --token {}{r}", "hf_"),
        r,
    );
    let r = g.alnum(48);
    add(
        "openai_key",
        format!("OPENAI_API_KEY=\"{}{r}\"", "sk-proj-"),
        r,
    );
    let r = g.alnum(90);
    add(
        "anthropic_key",
        format!("x-api-key: {}{r}AA", "sk-ant-api03-"),
        r,
    );
    let r = g.alnum(43);
    let payload = b64(format!("{{\"sub\":\"{}\"}}", g.alnum(12)).as_bytes()).replace('=', "");
    add(
        "jwt",
        format!("cookie: session={}.{payload}.{r}", "eyJhbGciOiJIUzI1NiJ9"),
        r,
    );
    let r = g.alnum(40);
    add(
        "bearer_token",
        format!("curl -H \"Authorization: Bearer \\\n  {r}\" https://api.example.com"),
        r,
    );
    let r = b64(format!("admin:{}", g.alnum(15)).as_bytes());
    add("basic_auth", format!("-H 'Authorization: Basic {r}'"), r);
    let r = g.alnum(18);
    add(
        "database_url",
        format!("DATABASE_URL=postgres://app:{r}@db.internal:5432/app"),
        r,
    );
    let r = g.alnum(18);
    add(
        "url_password",
        format!("git clone https://deploy:{r}@git.example.org/r.git"),
        r,
    );
    let r = format!("{}!{}", g.alnum(10), g.alnum(6));
    add("password_assignment", format!("DB_PASSWORD={r}"), r);
    let r = g.alnum(24);
    add("secret_assignment", format!("client_secret: \"{r}\""), r);
    let r = g.alnum(24);
    add("token_assignment", format!("--token {r}"), r);
    let r = g.alnum(24);
    add("api_key_assignment", format!("{{\"apiKey\": \"{r}\"}}"), r);
    // the shapes pair detectors catch (issue 39): next to an access key id on one line or in
    // one record, after a `secret` word, in `~/.aws/credentials` lines
    let id = || format!("{}{}", "AKIA", "IOSFODNN7QXZ2MV4");
    let r = aws_secret(g);
    add(
        "aws_secret_key",
        format!("my key is {} and secret {r}", id()),
        r,
    );
    let r = aws_secret(g);
    add(
        "aws_secret_key",
        format!("{{\"AccessKeyId\": \"{}\",\n \"Key\": \"{r}\"}}", id()),
        r,
    );
    let r = aws_secret(g);
    add("aws_secret_key", format!("secret_key = {r}"), r);
    let r = aws_secret(g);
    add(
        "aws_secret_key",
        format!(
            "[default]\naws_access_key_id = {}\naws_secret_access_key = {r}\n",
            id()
        ),
        r,
    );
    out
}

/// Look-alikes that must stay: each is searched for and must be found, verbatim.
fn look_alikes(g: &mut Gen) -> Vec<String> {
    vec![
        g.pick(40, HEX),
        format!(
            "{}-{}-4{}-a{}-{}",
            g.pick(8, HEX),
            g.pick(4, HEX),
            g.pick(3, HEX),
            g.pick(3, HEX),
            g.pick(12, HEX)
        ),
        format!("sha256:{}", g.pick(64, HEX)),
        format!("#{}", g.pick(6, HEX)),
        "v2.14.3-rc1".to_owned(),
        "src/index/tokenizer_snapshot_v2.rs".to_owned(),
        "ConversationSearchIndexWriterConfigurationBuilder".to_owned(),
        "password=changeme".to_owned(),
        "api_key=<your-key>".to_owned(),
        "token=${GITHUB_TOKEN}".to_owned(),
        "secret=***".to_owned(),
        // 40-character runs that are no AWS secret key, next to an access key id (below)
        "src/Components/Header2/NavigationBarItem".to_owned(),
        "TokenizerSnapshotV2BuilderFactoryManager".to_owned(),
        format!("secret {}", g.pick(40, HEX)),
    ]
}

/// Writes one session per planted secret: the secret in the prompt, the reply, a `Bash`
/// command, a `Task` description and the custom title; plus one session of look-alikes.
fn write_corpus(dir: &ProjectsDir, secrets: &[Planted], alikes: &[String]) {
    let project = dir.project("-work-app");
    for (i, p) in secrets.iter().enumerate() {
        let mut s = project.session(&format!("5ec0{i:04}-0000-4000-8000-000000000000"));
        s.user(&format!("plantmark{i} please use {}", p.text));
        let msg = format!("msg_{i}");
        s.assistant_text(&msg, &format!("replymark{i} configured with {}", p.text));
        s.assistant_tool_use(
            &msg,
            &format!("toolu_b{i}"),
            "Bash",
            json!({"command": p.text}),
        );
        s.assistant_tool_use(
            &msg,
            &format!("toolu_t{i}"),
            "Task",
            json!({"description": p.text, "prompt": "x", "subagent_type": "general"}),
        );
        s.custom_title(&format!("titlemark{i} {}", p.text));
    }
    let mut s = project.session("a11ce000-0000-4000-8000-000000000000");
    // an access key id in the same text: only it is redacted, not the look-alikes
    let id = format!("{}{}", "ASIA", "Z3Q7MXKD2WPLN4RT");
    s.exchange(&format!("lookalikes key {id} {}", alikes.join(" ")), "ok");
}

/// Every byte under the cache directory (the generations directory included).
fn cache_bytes(dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).expect("cache dir").flatten() {
        if e.path().is_dir() {
            all.extend(cache_bytes(&e.path()));
        } else {
            all.extend(std::fs::read(e.path()).expect("cache file"));
        }
    }
    all
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Everything the tools return about conversation `i`.
/// What a search shows of the transcripts: its results without the echoed query terms.
fn shown(found: &serde_json::Value) -> String {
    let mut results = found["results"].clone();
    for r in results.as_array_mut().into_iter().flatten() {
        r["matched_terms"] = json!(null);
    }
    results.to_string()
}

fn outputs(c: &McpClient, id: &str) -> String {
    let mut all = c.read_turn(id, 0).to_string();
    all.push_str(&c.read_conversation(id).to_string());
    all
}

#[test]
fn every_kind_in_every_field_is_neither_searchable_nor_returned_nor_cached() {
    let mut g = Gen(0x5eed_2024_cafe_f00d);
    let secrets = planted(&mut g);
    let alikes = look_alikes(&mut g);
    let dir = ProjectsDir::new();
    write_corpus(&dir, &secrets, &alikes);
    let cache_dir = tempfile::tempdir().expect("cache dir");
    let cache = cache_dir.path().to_str().expect("utf-8");
    let c = McpClient::indexed(dir.path(), &["--cache-dir", cache]);
    common::cache::wait_written(&c);
    let list = c.list(json!({"limit": 100})).to_string();
    let bytes = cache_bytes(cache_dir.path());
    let mut failures = Vec::new();
    for (i, p) in secrets.iter().enumerate() {
        let id = format!("5ec0{i:04}-0000-4000-8000-000000000000");
        let marker = format!("[REDACTED:{}]", p.kind);
        // the random part is no term of the planted turn; the whole value may still find it
        // through a part of the kind's name (`npm_…` → `npm`), but never shows the secret
        if c.hits(&p.probe).iter().any(|(s, _)| *s == id) {
            failures.push(format!("{}: found by searching {}", p.kind, p.probe));
        }
        let by_value = shown(&c.search_with(json!({"query": p.value, "limit": 100})));
        if by_value.contains(&p.probe) {
            failures.push(format!("{}: shown by searching {}", p.kind, p.value));
        }
        let found =
            c.search_with(json!({"query": format!("plantmark{i} replymark{i}"), "limit": 5}));
        let out = outputs(&c, &id);
        let turn = c.read_turn(&id, 0);
        for (what, text) in [
            ("search", shown(&found)),
            ("read", out.clone()),
            ("list", list.clone()),
        ] {
            if text.contains(&p.probe) {
                failures.push(format!("{}: returned by {what}", p.kind));
            }
        }
        let fields = [
            ("prompt", turn["user_text"].to_string()),
            ("reply", turn["assistant_text"].to_string()),
            ("command+description", turn["tools_used"].to_string()),
        ];
        for (field, text) in fields {
            if !text.contains(&marker) {
                failures.push(format!("{}: no {marker} in the {field}: {text}", p.kind));
            }
        }
        if !list.contains(&format!("titlemark{i} ")) || !list.contains(&marker) {
            failures.push(format!("{}: title not listed redacted", p.kind));
        }
        if contains(&bytes, &p.probe) {
            failures.push(format!("{}: in the cache file's bytes", p.kind));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        contains(&bytes, "lookalikes"),
        "the byte check sees stored text"
    );
}

#[test]
fn look_alikes_stay_searchable_and_are_returned_as_written() {
    let mut g = Gen(0x0dd_ba11);
    let secrets = planted(&mut g);
    let alikes = look_alikes(&mut g);
    let dir = ProjectsDir::new();
    write_corpus(&dir, &secrets[..1], &alikes);
    let c = McpClient::indexed(dir.path(), &["--no-cache"]);
    let id = "a11ce000-0000-4000-8000-000000000000";
    let text = c.read_turn(id, 0)["user_text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    for a in &alikes {
        assert!(
            text.contains(a.as_str()),
            "look-alike {a:?} changed: {text}"
        );
    }
    for a in &alikes[..7] {
        let hits = c.hits(a);
        assert!(
            hits.iter().any(|(s, _)| s == id),
            "look-alike {a:?} not found: {hits:?}"
        );
    }
}

#[test]
fn no_redact_returns_secrets_as_written() {
    let mut g = Gen(0xfeed);
    let secrets = planted(&mut g);
    let dir = ProjectsDir::new();
    write_corpus(&dir, &secrets, &[]);
    let c = McpClient::indexed(dir.path(), &["--no-cache", "--no-redact"]);
    for (i, p) in secrets.iter().enumerate() {
        let id = format!("5ec0{i:04}-0000-4000-8000-000000000000");
        assert!(
            outputs(&c, &id).contains(&p.probe),
            "{}: not returned with --no-redact",
            p.kind
        );
    }
    let tokens = secrets
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind.ends_with("_token"));
    for (i, p) in tokens {
        let id = format!("5ec0{i:04}-0000-4000-8000-000000000000");
        let hits = c.hits(&p.value);
        assert!(
            hits.iter().any(|(s, _)| *s == id),
            "{}: {} not found with --no-redact: {hits:?}",
            p.kind,
            p.value
        );
    }
    assert!(
        c.stderr_text().contains("--no-redact"),
        "the unsafe mode is logged"
    );
}
