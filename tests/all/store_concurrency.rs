//! Many servers, one store: four servers on one data directory, exactly one of them the
//! writer; appends, deletions and new files reach all of them, and each answers as a fresh
//! single server does; when the writer exits another server takes the lock over and stores
//! what it reads.

use crate::common::mcp::McpClient;
use crate::common::store::{StoreEnv, listed, store_status};
use crate::common::{poll_until_desc, squash_ws};
use serde_json::{Value, json};
use std::time::Duration;

fn id(i: usize) -> String {
    format!("c0c00000-0000-4000-8000-{i:012}")
}

/// What a server answers: hits of each query and the listing (id, turns, presence).
fn answers(c: &McpClient) -> Value {
    let queries = ["alphaword", "betaword", "gammaword", "deltaword", "shared"];
    let hits: Vec<Value> = queries.iter().map(|q| json!(c.hits(q))).collect();
    let rows: Vec<Value> = c.list(json!({"limit": 100}))["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["session_id"], r["turn_count"], r["source_present"]]))
        .collect();
    json!({"hits": hits, "list": rows, "turn": squash_ws(&c.read_turn(&id(1), 0).to_string())})
}

#[test]
fn four_servers_share_one_store_and_answer_like_a_fresh_one() {
    let env = StoreEnv::new();
    let p = env.projects.project("-home-u-many");
    let mut w0 = p.session(&id(0));
    w0.exchange("alphaword shared", "reply");
    let mut w1 = p.session(&id(1));
    w1.exchange("betaword shared", "reply");
    let servers: Vec<McpClient> = (0..4).map(|_| env.serve(&[])).collect();
    let roles: Vec<String> = servers
        .iter()
        .map(|s| store_status(s)["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        roles.iter().filter(|r| *r == "writer").count(),
        1,
        "{roles:?}"
    );

    w0.exchange("gammaword appended", "reply");
    let mut w2 = p.session(&id(2));
    w2.exchange("deltaword new file", "reply");
    std::fs::remove_file(w1.path()).unwrap();
    for s in &servers {
        poll_until_desc("every change seen", Duration::from_secs(30), || {
            let ok = s.hits("gammaword").len() == 1
                && s.hits("deltaword").len() == 1
                && listed(s, &id(1)).is_some_and(|r| r["source_present"] == false);
            ok.then_some(())
        });
    }
    let fresh = env.serve(&[]);
    let expected = answers(&fresh);
    drop(fresh);
    for (i, s) in servers.iter().enumerate() {
        assert_eq!(
            answers(s),
            expected,
            "server {i} differs from a fresh server"
        );
    }

    // the writer exits: another server takes over and stores new turns
    let writer = roles.iter().position(|r| r == "writer").unwrap();
    let mut servers = servers;
    drop(servers.remove(writer));
    let before = env.store_status_cli()["turns"].as_u64().unwrap();
    poll_until_desc("a new writer", Duration::from_secs(20), || {
        servers
            .iter()
            .any(|s| store_status(s)["role"] == "writer")
            .then_some(())
    });
    w2.exchange("epsilonword after handover", "reply");
    poll_until_desc("stored by the new writer", Duration::from_secs(20), || {
        (env.store_status_cli()["turns"].as_u64().unwrap() > before).then_some(())
    });
    for s in &servers {
        poll_until_desc("epsilon", Duration::from_secs(20), || {
            (s.hits("epsilonword").len() == 1).then_some(())
        });
    }
}
