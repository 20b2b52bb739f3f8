//! One index over several agents' transcripts (`--source claude:… --source codex:…` …): a
//! query finds turns from every source, the `source` filter of search and list narrows them,
//! and an unknown source is a tool error.

use crate::common;

use std::collections::BTreeSet;

use crate::common::fixture::ProjectsDir;
use crate::common::formats::{
    CodexRollout, GeminiChat, OpenClawSession, SourceRoot, codex_id, oc_text, serve_sources,
};
use serde_json::{Value, json};

fn sources_of(reply: &Value, key: &str) -> BTreeSet<String> {
    reply[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {reply}"))
        .iter()
        .map(|r| r["source"].as_str().expect("source").to_string())
        .collect()
}

struct Corpus {
    claude: ProjectsDir,
    codex: SourceRoot,
    gemini: SourceRoot,
    openclaw: SourceRoot,
}

impl Corpus {
    fn build() -> Corpus {
        let claude = ProjectsDir::new();
        let mut s = claude
            .project("-home-u-claudeproj")
            .session("c1a0de00-0000-4000-8000-000000000001");
        s.exchange("kangaroo migration in the claude project", "claude answer");

        let codex = SourceRoot::new("cs-mixed-codex-");
        let mut r = CodexRollout::new(codex.path(), &codex_id(), "/home/u/codexproj", Some("main"));
        r.user_turn("kangaroo migration in the codex project")
            .assistant("codex answer");

        let gemini = SourceRoot::new("cs-mixed-gemini-");
        GeminiChat::project_root(gemini.path(), "gemslug", "/home/u/gemproj");
        let mut g = GeminiChat::new(
            gemini.path(),
            "gemslug",
            "9e9e9e9e-0000-4000-8000-000000000009",
        );
        g.user("u1", "kangaroo migration in the gemini project")
            .gemini("g1", "gemini answer", vec![], &[]);

        let openclaw = SourceRoot::new("cs-mixed-openclaw-");
        let mut o = OpenClawSession::new(openclaw.path(), "main", "oc-mixed", "/home/u/clawproj");
        o.user("kangaroo migration in the openclaw project")
            .assistant(vec![oc_text("openclaw answer")]);
        Corpus {
            claude,
            codex,
            gemini,
            openclaw,
        }
    }

    fn args(&self) -> Vec<String> {
        vec![
            format!("claude:{}", self.claude.path_str()),
            self.codex.arg("codex"),
            self.gemini.arg("gemini"),
            self.openclaw.arg("openclaw"),
        ]
    }
}

#[test]
fn one_query_spans_every_source_and_filters_narrow_it() {
    let corpus = Corpus::build();
    let c = serve_sources(&corpus.args(), &[]);

    let all = c.search_with(json!({"query": "kangaroo migration", "limit": 20}));
    let want: BTreeSet<String> = ["claude", "codex", "gemini", "openclaw"]
        .map(String::from)
        .into();
    assert_eq!(sources_of(&all, "results"), want, "{all}");
    let ids: Vec<String> = common::mcp::hit_sessions(&all);
    assert!(
        ids.iter()
            .any(|i| i == "c1a0de00-0000-4000-8000-000000000001"),
        "claude ids stay bare: {ids:?}"
    );
    assert!(
        ids.iter().any(|i| i.starts_with("codex:")) && ids.iter().any(|i| i == "openclaw:oc-mixed")
    );
    assert!(
        ids.iter()
            .any(|i| i == "gemini:9e9e9e9e-0000-4000-8000-000000000009")
    );

    for source in ["claude", "codex", "gemini", "openclaw"] {
        let only = c.search_with(json!({"query": "kangaroo migration", "source": source}));
        assert_eq!(
            sources_of(&only, "results"),
            BTreeSet::from([source.to_string()]),
            "{only}"
        );
        let listed = c.list(json!({"source": source}));
        assert_eq!(
            sources_of(&listed, "conversations"),
            BTreeSet::from([source.to_string()]),
            "{listed}"
        );
        assert_eq!(listed["conversations"].as_array().unwrap().len(), 1);
    }
    let projects: BTreeSet<String> = c.list(json!({}))["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["project"].as_str().unwrap().to_string())
        .collect();
    let want: BTreeSet<String> = ["claudeproj", "codexproj", "gemproj", "clawproj"]
        .map(String::from)
        .into();
    assert_eq!(projects, want);

    // every tool takes the prefixed ids
    let gid = "gemini:9e9e9e9e-0000-4000-8000-000000000009";
    assert_eq!(c.read_turn(gid, 0)["assistant_text"], "gemini answer");
    let only = c.search_with(json!({"query": "kangaroo", "session_id": "openclaw:oc-mixed"}));
    assert_eq!(common::mcp::hit_sessions(&only), ["openclaw:oc-mixed"]);

    let err = c.err(
        "search_conversations",
        json!({"query": "kangaroo", "source": "nope"}),
    );
    assert!(err.error_message().contains("nope"), "{}", err.text);
    c.err("list_conversations", json!({"source": "nope"}));

    let status = c.index_status();
    let per: Vec<(String, u64)> = status["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["source"].as_str().unwrap().to_string(),
                s["turns"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per,
        [
            ("claude".into(), 1),
            ("codex".into(), 1),
            ("gemini".into(), 1),
            ("openclaw".into(), 1)
        ]
    );
}

#[test]
fn bare_formats_use_each_agents_default_location() {
    let home = SourceRoot::new("cs-mixed-home-");
    let h = home.path();
    let mut r = CodexRollout::new(&h.join(".codex/sessions"), &codex_id(), "/w/a", None);
    r.user_turn("default location wallaby");
    let mut g = GeminiChat::new(
        &h.join(".gemini/tmp"),
        "proj",
        "7a7a7a7a-0000-4000-8000-000000000007",
    );
    g.user("u1", "default location wallaby");
    let mut o = OpenClawSession::new(&h.join(".openclaw/agents"), "main", "oc-default", "/w/o");
    o.user("default location wallaby");
    let home_str = h.to_str().unwrap();
    let args = [
        "--source", "codex", "--source", "gemini", "--source", "openclaw",
    ];
    let c = common::mcp::McpClient::spawn(&args, &[("HOME", home_str)]);
    c.initialize();
    c.wait_ready();
    let mut got = common::mcp::hit_sessions(&c.search("wallaby"));
    got.sort();
    let mut want = vec![r.id(), g.id(), o.id()];
    want.sort();
    assert_eq!(got, want);
}
