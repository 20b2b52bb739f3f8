//! Aider chat histories through the binary: sessions as conversations, multi-line prompts,
//! in-chat commands, aider's own output lines (never indexed; edits and commands become tool
//! calls), reading single turns back, discovery under a directory, the usage error without a
//! path, live appends, chunked delivery and the samples.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::aider::AiderHistory;
use crate::common::chunks;
use crate::common::formats::{SourceRoot, serve_sources};
use crate::common::{poll_until_desc, run_cli, samples_or_skip};
use proptest::prelude::*;
use serde_json::json;

fn total(c: &common::mcp::McpClient, q: &str) -> u64 {
    c.search_with(json!({"query": q, "limit": 100}))["total"]
        .as_u64()
        .expect("total")
}

const S1: &str = "2026-06-09 14:01:00";
const S2: &str = "2026-06-10 09:30:00";

#[test]
fn sessions_prompts_replies_and_edits() {
    let root = SourceRoot::new("cs-aider-");
    let repo = root.path().join("work/wombat-repo");
    let mut h = AiderHistory::new(&repo);
    h.session(S1)
        .output("Aider v0.86.1")
        .output("Added src/ignored.py to the chat.")
        .prompt("add a retry to the wombat webhook\nwith exponential backoff")
        .reply("I'll add backoff.\n\nsrc/webhook.py\n```python\nretry()\n```")
        .output("Applied edit to src/webhook.py")
        .output("Creating empty file src/retry.py")
        .output("Did not apply edit to src/skip.py (--dry-run)")
        .output("Commit 1a2b3c feat: outputwordalpha")
        .prompt("/add src/config.py")
        .output("Added src/config.py to the chat.")
        .prompt("/ask why is the numbat slow?")
        .reply("The numbat loop is quadratic.")
        .prompt("/run cargo test")
        .output("Running cargo test")
        .session(S2)
        .prompt("make the quokka timeout configurable")
        .reply("Done.")
        .output("Applied edit to src/config.py");
    // histories in dependencies are not searched
    AiderHistory::new(&root.path().join("work/node_modules/pkg"))
        .session(S1)
        .prompt("dependency history about the dugong");
    let c = serve_sources(&[root.arg("aider")], &[]);
    let s1 = h.session_id(S1);
    let s2 = h.session_id(S2);
    assert_eq!(
        c.user_texts(&s1),
        [
            "add a retry to the wombat webhook\nwith exponential backoff",
            "why is the numbat slow?"
        ]
    );
    assert_eq!(c.user_texts(&s2), ["make the quokka timeout configurable"]);
    let t0 = c.read_turn(&s1, 0);
    assert_eq!(
        t0["assistant_text"],
        "I'll add backoff.\n\nsrc/webhook.py\n```python\nretry()\n```"
    );
    let tools: Vec<(String, String)> = t0["tools_used"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let what = t["file"].as_str().or(t["command"].as_str()).unwrap_or("");
            (t["tool"].as_str().unwrap().to_string(), what.to_string())
        })
        .collect();
    assert_eq!(
        tools,
        [
            ("edit".to_string(), "src/webhook.py".to_string()),
            ("create".to_string(), "src/retry.py".to_string()),
            ("add".to_string(), "src/config.py".to_string()),
        ]
    );
    // the last turn of the first session reads back without the next session
    let t1 = c.read_turn(&s1, 1);
    assert_eq!(t1["assistant_text"], "The numbat loop is quadratic.");
    assert_eq!(t1["tools_used"][0]["command"], "cargo test");
    for word in ["outputwordalpha", "dugong", "ignored", "skip"] {
        assert_eq!(total(&c, word), 0, "{word} must not be searchable");
    }
    let rows = c.list(json!({"source": "aider"}));
    let rows = rows["conversations"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let r2 = rows.iter().find(|r| r["session_id"] == s2).unwrap();
    assert_eq!(r2["project"], "wombat-repo");
    assert_eq!(r2["cwd"], repo.to_str().unwrap());
    assert_eq!(r2["first_timestamp"], "2026-06-10T09:30:00.000Z");
    let history = c.ok("find_file_history", json!({"path": "src/config.py"}));
    let ops: Vec<&str> = history["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["operation"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["edit", "read"], "{history}");
}

#[test]
fn no_default_location_is_a_usage_error() {
    let out = run_cli(&["--source", "aider", "list"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("aider:DIR"), "{err}");
    assert!(err.contains(".aider.chat.history.md"), "{err}");
}

#[test]
fn live_appends_and_new_sessions() {
    let root = SourceRoot::new("cs-aider-");
    let mut h = AiderHistory::new(&root.path().join("repo"));
    h.session(S1).prompt("first about the potoroo").reply("ok");
    let c = serve_sources(&[root.arg("aider")], &["--debounce-ms", "100"]);
    let s1 = h.session_id(S1);
    assert_eq!(c.hits("potoroo"), [(s1.clone(), 0)]);
    h.prompt("second about the bettong").reply("bettong reply");
    poll_until_desc("appended turn", Duration::from_secs(15), || {
        (c.hits("bettong") == [(s1.clone(), 1)]).then_some(())
    });
    h.session(S2).prompt("new session about the bilby");
    poll_until_desc("new session", Duration::from_secs(15), || {
        (c.hits("bilby") == [(h.session_id(S2), 0)]).then_some(())
    });
    assert_eq!(c.read_turn(&s1, 1)["assistant_text"], "bettong reply");
    let mut other = AiderHistory::new(&root.path().join("nested/other"));
    other.session(S1).prompt("another repo about the quoll");
    poll_until_desc("new repo", Duration::from_secs(15), || {
        (c.hits("quoll") == [(other.session_id(S1), 0)]).then_some(())
    });
}

#[test]
fn samples() {
    let Some(samples) = samples_or_skip() else {
        return;
    };
    let dir = samples.join("aider");
    if !dir.is_dir() {
        crate::common::skip("aider samples: files missing");
        return;
    }
    let c = serve_sources(&[format!("aider:{}", dir.display())], &[]);
    let h = AiderHistory::new(&dir.join("agentsview/myrepo"));
    let s1 = h.session_id("2026-06-09 14:01:00");
    assert_eq!(c.user_texts(&s1), ["add a retry to the webhook", "Step 1"]);
    let t = c.read_turn(&s1, 1);
    assert_eq!(t["assistant_text"], "Wrap the call in a loop.");
    let files: Vec<&str> = t["tools_used"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["file"].as_str())
        .collect();
    assert_eq!(files, ["src/webhook.py", "src/webhook.py", "src/retry.py"]);
    assert_eq!(
        c.user_texts(&h.session_id("2026-06-09 15:30:00")),
        ["make the timeout configurable"]
    );
    // the empty third session is not a conversation
    let rows = c.list(json!({"project": "myrepo"}));
    assert_eq!(rows["conversations"].as_array().unwrap().len(), 2, "{rows}");
}

fn render(specs: &[(String, String, bool)]) -> Vec<u8> {
    let scratch = SourceRoot::new("cs-aider-render-");
    let mut h = AiderHistory::new(scratch.path());
    h.session(S1);
    for (i, (prompt, reply, edit)) in specs.iter().enumerate() {
        if i == 2 {
            h.session(S2);
        }
        h.prompt(&format!("{prompt}\n{reply}"))
            .reply(&format!("{reply}\n\n{prompt}"));
        if *edit {
            h.output(&format!("Applied edit to src/{prompt}.py"));
        }
    }
    std::fs::read(&h.path).expect("rendered")
}

fn spec() -> impl Strategy<Value = (String, String, bool)> {
    let word = prop::sample::select(vec!["café", "naïve", "größe", "ωmega", "日本語", "kestrel"]);
    (word.clone(), word, any::<bool>()).prop_map(|(p, r, t)| (p.to_string(), r.to_string(), t))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, max_shrink_iters: 8, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn chunked_delivery_equals_the_whole_file(
        specs in prop::collection::vec(spec(), 1..5),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..6),
    ) {
        let whole = render(&specs);
        let root = SourceRoot::new("cs-aider-chunks-");
        let cuts = chunks::cut_points(whole.len(), &picks);
        let rel = Path::new("repo/.aider.chat.history.md");
        let seen = chunks::check("aider", root.path(), rel, &whole, &cuts, false);
        let turns: usize = seen.iter().map(|s| s.2.len()).sum();
        prop_assert_eq!(turns, specs.len());
    }
}
