//! Host fit, results: every tool's `structuredContent` validated against the `outputSchema` the
//! server's own `tools/list` declares, always on (the TypeScript SDK client of `scripts/sdk-client`
//! checks the same in CI, where Node is installed): every listed tool at several budgets and
//! arguments, in each role a server takes (`sharing.role` writer, follower, alone; `store.role`
//! writer, reader, off); plus the checker of `common/schema_check.rs` itself.

use crate::common::fixture::{ProjectsDir, image_block, new_msg_id, text_block};
use crate::common::formats::{CodexRollout, SourceRoot, codex_id};
use crate::common::live::wait_status;
use crate::common::mcp::McpClient;
use crate::common::schema_check::{unsupported, validate};
use crate::common::search::{bash, edit, grep, multi_edit, notebook_edit, read, tool_turn, write};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const MAIN: &str = "5c4e0a00-0000-4000-8000-000000000001";
const OTHER: &str = "5c4e0a00-0000-4000-8000-000000000002";
const AGENT: &str = "5c4e0a00-0000-4000-8000-000000000001/agent-a1b2";
const ROOT: &str = "/home/u/work/shapes";

/// The budgets every call is made at (`None`: the default).
const BUDGETS: [Option<u64>; 4] = [Some(500), Some(777), Some(6000), None];

/// The transcripts: a Claude project with file tools, a long turn (cut text, tool calls left
/// out), an attachment, a title, a broken line and an unknown record type, a sub-agent with
/// meta; a second project on another branch; a Codex rollout.
struct Corpus {
    claude: ProjectsDir,
    codex: SourceRoot,
}

impl Corpus {
    fn build() -> Corpus {
        let claude = ProjectsDir::new();
        let p = claude.project("-home-u-work-shapes");
        let mut w = p.session(MAIN);
        w.set_slug(Some("shapes-of-results"));
        let f = |rel: &str| format!("{ROOT}/{rel}");
        tool_turn(
            &mut w,
            "read and fix the parser error",
            "fixed the parser error",
            &[
                read(&f("src/parser.rs")),
                edit(&f("src/parser.rs")),
                write(&f("src/lexer.rs")),
                multi_edit(&f("src/main.rs")),
                notebook_edit(&f("notes/errors.ipynb")),
                bash("cargo test error"),
                grep("error", &f("src")),
            ],
        );
        let long = "the error test keeps failing on the borrowed buffer. ".repeat(300);
        let reads: Vec<_> = (0..40).map(|i| read(&f(&format!("src/m{i}.rs")))).collect();
        tool_turn(&mut w, &format!("explain the error: {long}"), &long, &reads);
        w.user_blocks(vec![text_block("this error screenshot"), image_block()]);
        w.assistant_thinking(&new_msg_id(), "the screenshot shows the error");
        w.assistant_text(&new_msg_id(), "that error comes from the test");
        w.raw_line("{ not json");
        w.record(json!({"type": "a-record-type-from-the-future", "sessionId": MAIN}));
        w.custom_title("Shapes of the error results");
        let mut sub = p.subagent_nested(MAIN, "a1b2", Some(("Explore", "Find the error")));
        sub.exchange("find the error test", "the error test is tests/error.rs");
        let mut o = claude.project("-home-u-work-other").session(OTHER);
        o.set_git_branch(Some("feature-x"));
        o.exchange("error handling elsewhere", "an assistant error answer");
        let codex = SourceRoot::new("cs-results-codex-");
        let mut r = CodexRollout::new(codex.path(), &codex_id(), "/home/u/codexproj", Some("main"));
        r.user_turn("fix the codex error test")
            .function_call(
                "shell",
                json!({"command": ["bash", "-lc", "cargo test"]}),
                "1 error",
            )
            .assistant("fixed the codex error");
        Corpus { claude, codex }
    }

    /// A server over the corpus with `extra` arguments, initialized.
    fn spawn(&self, extra: &[&str]) -> McpClient {
        let claude = format!("claude:{}", self.claude.path_str());
        let codex = self.codex.arg("codex");
        let mut args = vec!["--source", &claude, "--source", &codex];
        args.extend_from_slice(extra);
        let c = McpClient::spawn(&args, &[]);
        c.initialize();
        c
    }
}

/// One server's tools and the checks made so far.
struct Checker<'a> {
    c: &'a McpClient,
    /// Output schemas by tool name, as listed.
    schemas: BTreeMap<String, Value>,
    /// Validated results by tool name.
    validated: BTreeMap<String, usize>,
    failures: Vec<String>,
}

impl<'a> Checker<'a> {
    /// Lists the tools; every output schema must use only keywords the checker knows.
    fn new(c: &'a McpClient) -> Checker<'a> {
        let mut schemas = BTreeMap::new();
        let mut failures = Vec::new();
        for t in c.list_tools() {
            let name = t["name"].as_str().expect("tool name").to_string();
            let schema = t["outputSchema"].clone();
            let mut bad = Vec::new();
            unsupported(&schema, "", &mut bad);
            failures.extend(bad.iter().map(|b| format!("{name} outputSchema {b}")));
            schemas.insert(name, schema);
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        let validated = schemas.keys().map(|k| (k.clone(), 0)).collect();
        Checker {
            c,
            schemas,
            validated,
            failures,
        }
    }

    /// Calls `name` with `args` at `budget` and validates the result; returns the structured
    /// content (`None` after an error result, itself a failure: every call here is valid).
    fn call(&mut self, name: &str, args: &Value, budget: Option<u64>) -> Option<Value> {
        let mut args = args.clone();
        if let Some(b) = budget {
            args["max_chars"] = json!(b);
        }
        let r = self.c.call_tool(name, args.clone());
        let call = format!("{name} {args}");
        if r.is_error {
            self.failures
                .push(format!("{call}: an error result: {}", r.text));
            return None;
        }
        let Some(value) = r.structured else {
            self.failures.push(format!("{call}: no structuredContent"));
            return None;
        };
        let Some(schema) = self.schemas.get(name) else {
            self.failures
                .push(format!("{call}: `{name}` is not in tools/list"));
            return Some(value);
        };
        let mut bad = Vec::new();
        validate(schema, &value, "", &mut bad);
        self.failures
            .extend(bad.iter().map(|b| format!("{call}: result {b}")));
        if serde_json::from_str::<Value>(&r.text).ok().as_ref() != Some(&value) {
            self.failures
                .push(format!("{call}: the text and structuredContent differ"));
        }
        let max = budget.unwrap_or(60_000) as usize;
        let chars = r.text.chars().count();
        if chars > max {
            self.failures
                .push(format!("{call}: {chars} characters over the budget {max}"));
        }
        *self.validated.entry(name.to_string()).or_default() += 1;
        Some(value)
    }

    /// `call` at every budget.
    fn each_budget(&mut self, name: &str, args: Value) {
        for b in BUDGETS {
            self.call(name, &args, b);
        }
    }

    /// Every listed tool with the arguments CI's SDK client uses and more: filters, paging,
    /// read-on offsets, sub-agent and Codex ids; a tool this test does not know is called
    /// without arguments. Panics naming each invalid result and each tool never validated.
    fn drive(mut self) {
        let found = self
            .call(
                "search_conversations",
                &json!({"query": "error", "limit": 20}),
                None,
            )
            .expect("the search");
        let hits: Vec<(String, u64)> = (found["results"].as_array().expect("results").iter())
            .map(|h| {
                (
                    h["session_id"].as_str().unwrap().to_string(),
                    h["turn_number"].as_u64().unwrap(),
                )
            })
            .collect();
        assert!(hits.len() >= 4, "too few hits for the fixture: {found}");
        let searches = [
            json!({"query": "error test", "role": "assistant", "sort": "recent"}),
            json!({"query": "\"the error\" -zzz", "source": "claude", "role": "user"}),
            json!({"query": "error", "source": "codex", "scope": "all"}),
            json!({"query": "error", "file": "parser.rs", "tool": "Edit", "limit": 2, "offset": 1}),
            json!({"query": "error", "git_branch": "feature-x", "project": "other"}),
            json!({"query": "error", "session_id": MAIN, "since": "2020-01-01", "until": "2100-01-01"}),
            json!({"query": "error", "limit": 1, "offset": 2}),
            json!({"query": "nothingmatchesthisword"}),
        ];
        for args in searches {
            self.each_budget("search_conversations", args);
        }
        for args in [
            json!({"limit": 20}),
            json!({"limit": 1, "offset": 1, "scope": "all"}),
            json!({"source": "codex"}),
            json!({"since": "2020-01-01", "until": "2100-01-01", "project": "shapes"}),
        ] {
            self.each_budget("list_conversations", args);
        }
        for args in [
            json!({"path": "src"}),
            json!({"path": "parser.rs", "limit": 1, "offset": 1, "scope": "all"}),
            json!({"path": "errors.ipynb", "since": "2020-01-01"}),
            json!({"path": "no/such/file.rs"}),
        ] {
            self.each_budget("find_file_history", args);
        }
        let codex =
            self.c.list(json!({"source": "codex"}))["conversations"][0]["session_id"].clone();
        for id in [json!(MAIN), json!(OTHER), json!(AGENT), codex] {
            self.each_budget("read_conversation", json!({"session_id": id, "limit": 5}));
            self.each_budget(
                "read_conversation",
                json!({"session_id": id, "offset": 1, "limit": 1}),
            );
            self.read_on(&json!({"session_id": id, "turn_number": 0}));
        }
        for (id, turn) in hits {
            self.read_on(&json!({"session_id": id, "turn_number": turn}));
        }
        for args in [
            json!({"scope": "all", "sessions": 5}),
            json!({}),
            json!({"sessions": 1}),
        ] {
            self.each_budget("recent_context", args);
        }
        self.each_budget("index_status", json!({}));
        let unknown: Vec<String> = (self.validated.iter())
            .filter(|(_, n)| **n == 0)
            .map(|(k, _)| k.clone())
            .collect();
        for name in unknown {
            // a tool this test does not know yet: validated if it runs without arguments
            let r = self.c.call_tool(&name, json!({}));
            if r.is_error {
                self.failures.push(format!(
                    "{name}: never called, so its results were never validated; give it \
                     arguments in host_fit_results.rs (without any it says: {})",
                    r.text
                ));
            } else {
                self.each_budget(&name, json!({}));
            }
        }
        assert!(
            self.failures.is_empty(),
            "{} problem(s) with tool results vs their output schemas:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }

    /// `read_turn` at every budget, then read on from where each answer stopped: the text from
    /// `next_offset`, the tool calls from `next_tool_offset`.
    fn read_on(&mut self, args: &Value) {
        for b in BUDGETS {
            let Some(first) = self.call("read_turn", args, b) else {
                continue;
            };
            for (field, arg) in [
                ("next_offset", "char_offset"),
                ("next_tool_offset", "tool_offset"),
            ] {
                if let Some(n) = first.get(field) {
                    let mut more = args.clone();
                    more[arg] = n.clone();
                    self.call("read_turn", &more, b);
                }
            }
        }
    }
}

#[test]
fn every_tool_result_matches_its_output_schema_in_every_role() {
    let corpus = Corpus::build();
    let cache = tempfile::tempdir().expect("cache dir");
    let cache_dir = cache.path().to_str().expect("utf-8 path");
    let data = cache.path().join("data");
    let shared = [
        "--cache-dir",
        cache_dir,
        "--data-dir",
        data.to_str().expect("utf-8 path"),
    ];
    let writer = corpus.spawn(&shared);
    wait_status(&writer, "the writer's first index", |st| {
        st["complete"] == true
            && st["sharing"]["role"] == "writer"
            && st["store"]["role"] == "writer"
            && st["cache"]["writes"].as_u64() >= Some(1)
    });
    Checker::new(&writer).drive();
    let follower = corpus.spawn(&shared);
    wait_status(&follower, "the follower's index", |st| {
        st["complete"] == true
            && st["sharing"]["role"] == "follower"
            && st["store"]["role"] == "reader"
    });
    Checker::new(&follower).drive();
    drop((writer, follower));
    let alone = corpus.spawn(&["--no-cache", "--no-archive"]);
    wait_status(&alone, "an index of its own", |st| {
        st["complete"] == true && st["sharing"]["role"] == "alone" && st["store"]["role"] == "off"
    });
    Checker::new(&alone).drive();
}

#[test]
fn the_checker_accepts_valid_values_and_names_path_value_and_rule_of_invalid_ones() {
    let schema = json!({"type": "object", "required": ["n", "role"], "properties": {
        "n": {"type": "integer", "minimum": 0},
        "role": {"type": "string", "enum": ["writer", "follower"]},
        "rows": {"type": "array", "items": {"type": "object",
            "additionalProperties": {"type": "integer"}}}}});
    let check = |value: Value| {
        let mut out = Vec::new();
        unsupported(&schema, "", &mut out);
        validate(&schema, &value, "", &mut out);
        out
    };
    let none: [&str; 0] = [];
    assert_eq!(
        check(json!({"n": 2.0, "role": "writer", "rows": [{"a": 1}], "x": 1})),
        none
    );
    assert_eq!(
        check(json!({"n": 1.5, "role": "user", "rows": [{"a": "x"}]})),
        [
            r#"/n: 1.5 is not of type integer"#,
            r#"/role: "user" is not one of the enum ["writer","follower"]"#,
            r#"/rows/0/a: "x" is not of type integer"#,
        ]
    );
    assert_eq!(
        check(json!({"n": -1})),
        [
            "/: {\"n\":-1} lacks the required property `role`",
            "/n: -1 is below the minimum 0",
        ]
    );
}

#[test]
fn the_checker_refuses_keywords_it_does_not_know_even_where_no_value_reaches() {
    let check = |schema: Value| {
        let mut out = Vec::new();
        unsupported(&schema, "", &mut out);
        out
    };
    let got = check(json!({"type": "array", "items": {"type": "string", "pattern": "^a"}}));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("/items/pattern: keyword `pattern`"),
        "{got:?}"
    );
    let got = check(json!({"properties": {"a": {"type": "uint"}}}));
    assert!(
        got[0].starts_with("/properties/a/type: malformed"),
        "{got:?}"
    );
}
