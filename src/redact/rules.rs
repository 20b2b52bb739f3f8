//! The redaction rules, as data: a kind, the literal anchors that gate it, a pattern, a check
//! and examples. README.md's table lists them; a unit test keeps the two in step.
//!
//! How a rule reads:
//! - `anchors`: literals one of which every match contains. Lowercase anchors match in any
//!   case; an anchor with an uppercase letter matches exactly. A text that holds no anchor of
//!   a rule is never matched against its pattern (the one-pass prefilter).
//! - `pattern`: a `regex` pattern. The secret is the last capture group that took part in the
//!   match (the whole match when none did); only the secret is replaced.
//! - `check`: what the secret must also satisfy (see [`Check`]).
//! - `examples`: texts with the secret marked `«…»`: redacted, the marked part and nothing else
//!   becomes `[REDACTED:<name>]` (`«other_rule:…»` marks a part another rule names). `keep`: look-alikes that must come out unchanged. Secrets in
//!   examples are assembled with `concat!` so that no complete secret literal sits in the
//!   source (push protection and scanners would flag it).
//!
//! Order is priority: where matches of two rules overlap, their union is redacted under the
//! earlier rule's name (specific token shapes before generic `key=value` assignments).
//! Changing a pattern or anchor changes [`super::fingerprint`] by itself; bump
//! [`super::RULES_VERSION`] when a check changes.

use super::{Check, Family, Rule};

/// Between a key and its value: quotes, spaces, `=`, `:`, `=>`, and shell line continuations
/// (`\` + newline), so `export K=\⏎  value` is caught.
macro_rules! sep {
    () => {
        r#"(?:[ \t"'\\:=>]|\\\r?\n){1,12}"#
    };
}

/// A generic `key = value` assignment whose key contains `$kw`: shell, `.env`, JSON, YAML,
/// TOML, code and `--flag value`. Groups: `key`, `op`, then the value (`dq`, `sq` or `bare`).
macro_rules! assign {
    ($kw:literal) => {
        concat!(
            r#"(?i)(?P<key>[A-Za-z0-9_.\-]*"#,
            $kw,
            r#"[A-Za-z0-9_.\-]*)\\?["']?(?P<op>[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)(?:\\\r?\n[ \t]*)?"#,
            r#"(?:\\?"(?P<dq>[^"\\\r\n]+)\\?"|'(?P<sq>[^'\r\n]+)'|(?P<bare>[^\s"'`,;&|<>(){}\[\]\\]+))"#
        )
    };
}

/// Every rule, highest priority first.
pub(crate) static RULES: &[Rule] = &[
    Rule {
        name: "gcp_service_account",
        anchors: &["private_key"],
        pattern: r#"\\?"private_key_id\\?"[ \t]*:[ \t]*\\?"([0-9a-f]{40})|\\?"private_key\\?"[ \t]*:[ \t]*\\?"(-----BEGIN[^"]{16,})"#,
        check: Check::Any,
        examples: &[concat!(
            r#"{"type": "service_account", "private_key_id": "«0a1b2c3d4e5f"#,
            r#"60718293a4b5c6d7e8f90a1b2c3d»", "#,
            r#""private_key": "«-----BEGIN "#,
            r#"PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE"#,
            r#" KEY-----\n»", "client_email": "x@p.iam.gserviceaccount.com"}"#
        )],
        keep: &[r#"{"private_key_id": "<id>", "private_key": "see below"}"#],
    },
    Rule {
        name: "private_key",
        anchors: &["-----begin"],
        pattern: concat!(
            r"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----",
            r"(?:(?s:.)*?-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----",
            r"|(?:(?:[ \t]*(?:\r?\n|\\[rn])[ \t]*)+(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: [^\r\n\\]*))+)"
        ),
        check: Check::Any,
        examples: &[
            concat!(
                "key:\n«-----BEGIN OPENSSH ",
                "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB\n",
                "AAAAMwAAAAtzc2gtZWQyNTUxOQAAACBZ2jq0\n-----END OPENSSH ",
                "PRIVATE KEY-----» done"
            ),
            concat!(
                "truncated: «-----BEGIN RSA ",
                "PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\\nqQfN»"
            ),
        ],
        keep: &[
            "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----",
        ],
    },
    Rule {
        name: "aws_access_key_id",
        anchors: &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        pattern: r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?-u:\b)",
        check: Check::Any,
        examples: &[concat!("aws_access_key_id = «AKIA", "Z3Q7MXKD2WPLN4RT»")],
        keep: &["AKIAFOO", "ASIAN_FOOD_MENU_ITEMS_LIST_LONG"],
    },
    Rule {
        name: "aws_secret_key",
        anchors: &["secret", "aws_sk", "awssk", "aws-sk"],
        pattern: concat!(
            r"(?i:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key|aws[_-]?sk)",
            sep!(),
            r"([A-Za-z0-9/+]{40,})"
        ),
        check: Check::Len(40),
        examples: &[
            concat!(
                "export AWS_SECRET_ACCESS_KEY=«k9Tz2mr7SZiAMfQyuvBjM",
                "/qQfN+Xo8Lw3dHe5Ps1»"
            ),
            concat!(
                "export AWS_SECRET_ACCESS_KEY=\\\n  «k9Tz2mr7SZiAMfQyuvBjM",
                "/qQfN+Xo8Lw3dHe5Ps1»"
            ),
            concat!(
                r#""SecretAccessKey": "«k9Tz2mr7SZiAMfQyuvBjM"#,
                r#"/qQfN+Xo8Lw3dHe5Ps1»""#
            ),
        ],
        keep: &["secret_access_key: ${AWS_SECRET_ACCESS_KEY}"],
    },
    Rule {
        // `secret`, `secret_key`, `secret access key` before a bare 40-character key: the
        // key must look like one (see `Check::AwsSecret`), the word alone is common
        name: "aws_secret_key",
        anchors: &["secret"],
        pattern: concat!(
            r"(?i:secret[_ -]?(?:access[_ -]?)?key|secret)",
            sep!(),
            r"([A-Za-z0-9/+]{40,})"
        ),
        check: Check::AwsSecret,
        examples: &[
            concat!("and secret «wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYEXAMPLEKEY»"),
            concat!(
                "secret_key = «k9Tz2mr7SZiAMfQyuvBjM",
                "/qQfN+Xo8Lw3dHe5Ps1»"
            ),
            concat!(
                r#""secretKey": "«k9Tz2mr7SZiAMfQyuvBjM"#,
                r#"/qQfN+Xo8Lw3dHe5Ps1»""#
            ),
        ],
        keep: &[
            "secret 0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d",
            "secret key: src/Components/Header2/NavigationBarItem",
            "the secret is TokenizerSnapshotV2BuilderFactoryManager",
            concat!("secret k9Tz2mr7SZiAMfQyuvBjM", "/qQfN+Xo8Lw3dHe5Ps1=="),
        ],
    },
    Rule {
        // a bare 40-character key in a text (a record) that holds an access key id, as
        // pair detectors do: `my key is AKIA… and secret …`, or the two on separate lines
        name: "aws_secret_key",
        anchors: &["AKIA", "ASIA"],
        pattern: r"(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40,})",
        check: Check::AwsPair,
        examples: &[
            concat!(
                "my key is «aws_access_key_id:AKIA",
                "IOSFODNN7EXAMPLE» and «wJalrXUtnFEMI/K7MDENG",
                "/bPxRfiCYEXAMPLEKEY»"
            ),
            concat!(
                "[default]\nid «aws_access_key_id:ASIA",
                "Z3Q7MXKD2WPLN4RT»\nregion eu-west-1\nkey «k9Tz2mr7SZiAMfQyuvBjM",
                "/qQfN+Xo8Lw3dHe5Ps1»\n"
            ),
        ],
        keep: &[
            // no access key id in the text: a 40-character run alone stays
            "k9Tz2mr7SZiAMfQyuvBjM/qQfN+Xo8Lw3dHe5Ps1",
            "AKIAFOO k9Tz2mr7SZiAMfQyuvBjM/qQfN+Xo8Lw3dHe5Ps1",
        ],
    },
    Rule {
        name: "gcp_api_key",
        anchors: &["AIza"],
        pattern: r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
        check: Check::Any,
        examples: &[concat!(
            "?key=«AIza",
            "SyB3x9Qk2LmN7pRt5VwYz1Ac4De6Fg8Hi0J»&q=1"
        )],
        keep: &["AIzaShort"],
    },
    Rule {
        name: "azure_connection_string",
        anchors: &["accountkey", "sharedaccesskey", "sharedaccesssignature"],
        pattern: r#"(?i:(?:DefaultEndpointsProtocol|Endpoint|AccountName|BlobEndpoint)=[^\s"']*?;[ \t]*(?:AccountKey|SharedAccessKey|SharedAccessSignature)=)([^;\s"'<>]{16,})"#,
        check: Check::NotPlaceholder,
        examples: &[concat!(
            "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;",
            "SharedAccessKey=«q9Zk3LmN7pRt5VwYz1Ac4De6Fg8Hi0Jk",
            "Lm2No4Pq6Rs=»;EntityPath=q"
        )],
        keep: &["AccountName=dev;AccountKey=<your-account-key>"],
    },
    Rule {
        name: "azure_storage_key",
        anchors: &[
            "accountkey",
            "account_key",
            "account-key",
            "storage_key",
            "storagekey",
            "storage-key",
            "access_key",
            "access-key",
            "accesskey",
        ],
        pattern: concat!(
            r"(?i:AccountKey|azure[_-]?storage[_-]?(?:account[_-]?)?(?:access[_-]?)?key|--account-key)",
            sep!(),
            r"([A-Za-z0-9+/]{86}==)"
        ),
        check: Check::Any,
        examples: &[concat!(
            "az storage blob list --account-key «Xk9Tz2mr7SZiAMfQyuvBjMqQfN",
            "Xo8Lw3dHe5Ps1Yk9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5Ps1Yk9Tz2mr",
            "==»"
        )],
        keep: &["AZURE_STORAGE_KEY=changeme"],
    },
    Rule {
        name: "github_token",
        anchors: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        pattern: r"(?-u:\b)(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?-u:\b)",
        check: Check::Any,
        examples: &[
            concat!("GH_TOKEN=«ghp_", "k9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5P»"),
            concat!(
                "https://«github_pat_",
                "11ABCDEFG0k9Tz2mr7SZiAM_fQyuvBjMqQfNXo8Lw3dHe5P»@github.com/o/r"
            ),
        ],
        keep: &["ghp_short", "github_pat_"],
    },
    Rule {
        name: "gitlab_token",
        anchors: &[
            "glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glsoat-", "glffct-", "glimt-",
            "glagent-", "gloas-",
        ],
        pattern: r"(?-u:\b)(?:glpat|gldt|glptt|glrt|glcbt|glsoat|glffct|glimt|glagent|gloas)-[0-9A-Za-z_\-]{20,}",
        check: Check::Any,
        examples: &[concat!("PRIVATE-TOKEN: «glpat-", "k9Tz2mr7SZiAMfQyuvBj»")],
        keep: &["glpat-short"],
    },
    Rule {
        name: "slack_token",
        anchors: &["xox", "xapp-"],
        pattern: r"(?-u:\b)(?:xox[abposrce]|xapp)-[0-9A-Za-z\-]{10,}",
        check: Check::DigitAndLetter,
        examples: &[concat!(
            "SLACK_BOT_TOKEN='«xoxb-",
            "2048-1234567890-k9Tz2mr7SZiAMfQyuvBjMqQf»'"
        )],
        keep: &["xoxo-hugs-and-kisses"],
    },
    Rule {
        name: "slack_webhook",
        anchors: &["hooks.slack.com"],
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_\-]{20,})",
        check: Check::Any,
        examples: &[concat!(
            "https://hooks.slack.com/services/«T0123ABCD/B0456EFGH/",
            "k9Tz2mr7SZiAMfQyuvBjMqQf»"
        )],
        keep: &["https://hooks.slack.com/services/"],
    },
    Rule {
        name: "stripe_key",
        anchors: &["sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"],
        pattern: r"(?-u:\b)(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z]{20,})",
        check: Check::Any,
        examples: &[concat!(
            "stripe.api_key = \"«sk_live_",
            "51Hk9Tz2mr7SZiAMfQyuvBjMqQf»\""
        )],
        keep: &["pk_live_51Hk9Tz2mr7SZiAMfQyuvBjMqQf", "sk_live_"],
    },
    Rule {
        name: "twilio_key",
        anchors: &["SK", "twilio"],
        pattern: concat!(
            r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)|(?i:twilio[A-Za-z0-9_\-]{0,24}(?:token|secret|key))",
            sep!(),
            r"([0-9a-fA-F]{32})(?-u:\b)"
        ),
        check: Check::Any,
        examples: &[
            concat!("api key «SK", "0123456789abcdef0123456789abcdef» ok"),
            concat!("TWILIO_AUTH_TOKEN=«9f8e7d6c5b4a", "39281706f5e4d3c2b1a0»"),
        ],
        keep: &["SKU0123456789", "SK-2024-release"],
    },
    Rule {
        name: "sendgrid_key",
        anchors: &["SG."],
        pattern: r"(?-u:\b)SG\.[0-9A-Za-z_\-]{22}\.[0-9A-Za-z_\-]{43}",
        check: Check::Any,
        examples: &[concat!(
            "«SG.",
            "k9Tz2mr7SZiAMfQyuvBjMq.Xo8Lw3dHe5Ps1Yk9Tz2mr7SZiAMfQyuvBjMqQfNXo8L»"
        )],
        keep: &["SG.short.token"],
    },
    Rule {
        name: "npm_token",
        anchors: &["npm_", "_authtoken"],
        pattern: r#"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)|_authToken[ \t]*=[ \t]*["']?([^\s"']{8,})"#,
        check: Check::NotPlaceholder,
        examples: &[
            concat!("NPM_TOKEN=«npm_", "k9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5P»"),
            concat!(
                "//registry.npmjs.org/:_authToken=«k9Tz2mr7-SZiA",
                "-MfQy-uvBjMqQfNXo8»"
            ),
        ],
        keep: &["//registry.npmjs.org/:_authToken=${NPM_TOKEN}"],
    },
    Rule {
        name: "pypi_token",
        anchors: &["pypi-AgE"],
        pattern: r"(?-u:\b)pypi-AgE[A-Za-z0-9_\-]{50,}",
        check: Check::Any,
        examples: &[concat!(
            "password = «pypi-AgE",
            "IcHlwaS5vcmcCJGk9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5Ps1Yk9Tz2m»"
        )],
        keep: &["pypi-AgEshort"],
    },
    Rule {
        name: "huggingface_token",
        anchors: &["hf_"],
        pattern: r"(?-u:\b)hf_[A-Za-z0-9]{34,40}(?-u:\b)",
        check: Check::Any,
        examples: &[concat!(
            "HF_TOKEN=«hf_",
            "kTzmrSZiAMfQyuvBjMqQfNXoLwdHePsYkTzm»"
        )],
        keep: &["hf_hub_download_with_a_long_function_name"],
    },
    Rule {
        name: "anthropic_key",
        anchors: &["sk-ant-"],
        pattern: r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{32,}",
        check: Check::Any,
        examples: &[concat!(
            "x-api-key: «sk-ant-",
            "api03-k9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5Ps1Yk9Tz2-AA»"
        )],
        keep: &["sk-ant-short"],
    },
    Rule {
        name: "openai_key",
        anchors: &["sk-"],
        pattern: r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}",
        check: Check::DigitAndLetter,
        examples: &[concat!(
            "OPENAI_API_KEY=«sk-",
            "proj-k9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5Ps1Yk9Tz2»"
        )],
        keep: &["sk-learn-compatible-estimator-interface-name"],
    },
    Rule {
        name: "jwt",
        anchors: &["eyJ"],
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        check: Check::Any,
        examples: &[concat!(
            "token: «eyJhbGciOiJIUzI1NiJ9",
            ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk»"
        )],
        keep: &["eyJmb28iOiJiYXIifQ=="],
    },
    Rule {
        name: "basic_auth",
        anchors: &["basic"],
        pattern: r"(?i:(?-u:\b)basic)(?:[ \t]|\\\r?\n)+([A-Za-z0-9+/]{6,}={0,2})",
        check: Check::Basic,
        examples: &[concat!(
            "-H 'Authorization: Basic «YWRtaW46",
            "czNjcjN0LXBhc3M=»'"
        )],
        keep: &["Basic authentication is configured", "basic setup"],
    },
    Rule {
        name: "basic_auth",
        anchors: &["-u", "--user"],
        pattern: r#"(?:^|[ \t])(?:-u|--user)[ \t]+["']?[^\s:"']+:([^\s"']+)"#,
        check: Check::NotPlaceholder,
        examples: &["curl -u admin:«Zq7-w9xP!k2» https://x"],
        keep: &["curl -u \"$USER:$TOKEN\" https://x", "ls -u a:b"],
    },
    Rule {
        name: "bearer_token",
        anchors: &["bearer", "authorization"],
        pattern: r#"(?i:(?-u:\b)bearer)(?:[ \t]|\\\r?\n)+([A-Za-z0-9_\-.=+/~]{16,})|(?i:(?-u:\b)authorization)["']?[ \t]*[:=][ \t]*["']?(?i:token|bot|apikey|key|sso-key)[ \t]+([A-Za-z0-9_\-.=+/~:]{16,})"#,
        check: Check::Bearer,
        examples: &[
            "-H \"Authorization: Bearer «Zk2mR7sZiAMfQyuvBjMq0fNXo8Lw3dHe»\"",
            "curl -H \"Authorization: Bearer \\\n  «Zk2mR7sZiAMfQyuvBjMq0fNXo8Lw3dHe»\" https://api",
            "Authorization: token «Zk2mR7sZiAMfQyuvBjMq0fNXo8Lw3dHe»",
        ],
        keep: &[
            "Authorization: Bearer $TOKEN",
            "Bearer <your-token-here>",
            "bearer authentication_scheme",
        ],
    },
    Rule {
        name: "database_url",
        anchors: &["://"],
        pattern: r#"(?i:(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|clickhouse|cockroachdb|oracle|couchdb|neo4j|bolt)(?:\+[a-z0-9]+)?)://[^\s:/?#@"'<>\[\]]*:([^\s/?#@"'<>\[\]]+)@"#,
        check: Check::NotPlaceholder,
        examples: &["DATABASE_URL=postgres://app:«Zq7w9xPk2Lm»@db.internal:5432/app"],
        keep: &[
            "postgres://user:password@localhost/db",
            "postgres://app:${DB_PASSWORD}@db/app",
            "mysql://root@localhost/test",
        ],
    },
    Rule {
        name: "url_password",
        anchors: &["://"],
        pattern: r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@"'<>\[\]]*:([^\s/?#@"'<>\[\]]+)@"#,
        check: Check::NotPlaceholder,
        examples: &["git clone https://deploy:«Zq7w9xPk2Lm»@git.example.org/r.git"],
        keep: &[
            "https://user:****@example.com",
            "http://localhost:8080/@scope/pkg",
            "ssh://git@github.com:22/o/r",
        ],
    },
    Rule {
        name: "password_assignment",
        anchors: &["password", "passwd", "passphrase", "_pass", "pwd"],
        pattern: assign!("(?:password|passwd|passphrase|_pass|pwd)"),
        check: Check::Assign(Family::Password),
        examples: &[
            "DB_PASSWORD=«hunter2-Xq»",
            "{\"password\": \"«s3cr3t pass»\"}",
            "  password: «Zq7w9xPk2!»",
            "mysql --password=«Zq7w9xPk2» -h db",
            "curl -d \"{\\\"password\\\":\\\"«Zq7w9xPk2»\\\"}\"",
        ],
        keep: &[
            "password=***",
            "password=<your-key>",
            "password=changeme",
            "password=${VAR}",
            "password: str",
            "password = getpass()",
            "password=os.environ",
            "if password == confirm:",
            "PASSWORD_MIN_LENGTH=12",
            "the password reset link",
            "PWD=/home/me/src",
        ],
    },
    Rule {
        name: "secret_assignment",
        anchors: &["secret"],
        pattern: assign!("secret"),
        check: Check::Assign(Family::Secret),
        examples: &[
            "CLIENT_SECRET=«Zq7w9xPk2Lm4Rt»",
            "client_secret: \"«Zq7w9xPk2Lm4Rt»\"",
        ],
        keep: &[
            "secret=<your-key>",
            "secret: ${{ secrets.DEPLOY }}",
            "the secret sauce",
            "SECRET_FILE=/run/secrets/x",
        ],
    },
    Rule {
        name: "token_assignment",
        anchors: &["token"],
        pattern: assign!("token"),
        check: Check::Assign(Family::Token),
        examples: &[
            "ACCESS_TOKEN=«Zq7w9xPk2Lm4Rt»",
            "--token «Zq7w9xPk2Lm4Rt»",
            "refresh_token: '«Zq7w9xPk2Lm4Rt»'",
        ],
        keep: &[
            "max_tokens=4096",
            "token=changeme",
            "token: String",
            "tokenizer=bert-base-uncased",
            "token expired yesterday",
        ],
    },
    Rule {
        name: "api_key_assignment",
        anchors: &[
            "api_key",
            "api-key",
            "apikey",
            "api.key",
            "access_key",
            "access-key",
            "accesskey",
            "auth_key",
            "auth-key",
            "authkey",
            "private_key",
            "private-key",
            "privatekey",
            "client_key",
            "client-key",
            "clientkey",
        ],
        pattern: assign!(
            "(?:api[_\\-.]?key|access[_\\-]?key|auth[_\\-]?key|private[_\\-]?key|client[_\\-]?key)"
        ),
        check: Check::Assign(Family::ApiKey),
        examples: &[
            "API_KEY=«Zq7w9xPk2Lm4Rt»",
            "-H 'x-api-key: «Zq7w9xPk2Lm4Rt»'",
            "apiKey: \"«Zq7w9xPk2Lm4Rt»\"",
        ],
        keep: &[
            "api_key=<your-key>",
            "api_key = config.api_key",
            "PRIVATE_KEY_PATH=/etc/ssl/key.pem",
        ],
    },
];
