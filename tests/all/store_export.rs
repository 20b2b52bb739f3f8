//! Moving history: `export` writes the store as NDJSON (plain, or an OpenSearch `_bulk` body),
//! read at one commit even while a server commits; `import` merges it into another store (each
//! turn once, forgotten conversations stay forgotten, a bad line imports nothing); a server
//! over another projects directory lists and searches the store-only conversations, with
//! their original project.

use crate::common::fixture::{new_msg_id, new_tool_id};
use crate::common::run_cli;
use crate::common::store::{StoreEnv, listed, wait_presence, wait_stored};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;

const A: &str = "e4900000-0000-4000-8000-00000000000a";
const B: &str = "e4900000-0000-4000-8000-00000000000b";
const TOKEN: &str = "ghp_k9Tz2mr7SZiAMfQyuvBjMqQfNXo8Lw3dHe5P";

/// A (3 turns, one with a Read of `/w/mover.rs`) and B (1 turn holding a secret), project
/// `-home-u-mover`, stored by a server that is returned still running.
fn corpus(env: &StoreEnv) -> crate::common::mcp::McpClient {
    let p = env.projects.project("-home-u-mover");
    let mut a = p.session(A);
    a.exchange("first ploverprompt about moving", "ploverreply one");
    let msg = new_msg_id();
    a.user("second turn reads the mover file");
    a.assistant_text(&msg, "reading it now");
    a.assistant_tool_use(
        &msg,
        &new_tool_id(),
        "Read",
        json!({"file_path": "/w/mover.rs"}),
    );
    a.exchange("third turn godwitword", "godwitreply");
    let mut b = p.session(B);
    b.exchange(&format!("use token {TOKEN} for curlewword"), "curlew reply");
    let s = env.serve(&[]);
    wait_stored(&s, 4);
    s
}

/// A CLI run against `env`'s data directory.
fn cli_raw(env: &StoreEnv, args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--data-dir", env.data_str()]);
    run_cli(&all, &[])
}

fn export_to(env: &StoreEnv, file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["export", "--out", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    env.cli(&args)
}

/// Exports `env`'s store to `file`, then deletes its transcripts (another machine has none).
fn export_and_leave(env: &StoreEnv, file: &Path) {
    export_to(env, file, &[]);
    std::fs::remove_dir_all(env.projects.path().join("-home-u-mover")).unwrap();
}

fn import(env: &StoreEnv, file: &Path) -> Value {
    env.cli(&["import", file.to_str().unwrap()])
}

fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A tool answer without what differs between a present transcript and a store-only copy, and
/// without the note (on the new machine it names the projects dir that holds no transcript).
fn comparable(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["source_present", "source_missing_since", "note"] {
            o.remove(k);
        }
    }
    v
}

fn tmp_file(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[test]
fn export_then_import_into_an_empty_data_dir_answers_read_turn_identically() {
    let env = StoreEnv::new();
    let s = corpus(&env);
    let out = tempfile::tempdir().unwrap();
    let file = tmp_file(&out, "history.ndjson");
    let done = export_to(&env, &file, &[]);
    assert_eq!(done["conversations"], 2, "{done}");
    assert_eq!(done["turns"], 4, "{done}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(TOKEN), "the export holds a secret");
    assert!(text.contains("[REDACTED"), "{text}");
    let recs = lines(&file);
    assert!(recs.iter().all(|r| r["v"] == 1), "{text}");
    assert_eq!(recs[0]["kind"], "conversation", "{text}");
    // stdout gives the same lines
    let piped = cli_raw(&env, &["export"]);
    assert!(piped.status.success());
    assert_eq!(String::from_utf8_lossy(&piped.stdout), text);

    // what the tools answer here, before the transcripts go
    let mut turns = Vec::new();
    for (id, n) in [(A, 3), (B, 1)] {
        for i in 0..n {
            turns.push((id, i, comparable(s.read_turn(id, i))));
        }
    }
    let rows: Vec<Value> = [A, B].iter().map(|id| listed(&s, id).unwrap()).collect();
    let queries = ["plover", "godwitword", "curlewword", "mover.rs"];
    let hits: Vec<_> = queries.iter().map(|q| s.hits(q)).collect();
    drop(s);
    // another machine: an empty data dir, a projects dir elsewhere, none of the transcripts
    std::fs::remove_dir_all(env.projects.path().join("-home-u-mover")).unwrap();
    let there = StoreEnv::new();
    let got = import(&there, &file);
    assert_eq!(got["conversations_added"], 2, "{got}");
    assert_eq!(got["turns_added"], 4, "{got}");
    assert_eq!(there.store_status_cli()["only_in_store"], 2);
    let t = there.serve(&[]);
    for (id, i, answer) in turns {
        assert_eq!(comparable(t.read_turn(id, i)), answer, "{id} turn {i}");
    }
    for (id, mine) in [A, B].iter().zip(rows) {
        let row = wait_presence(&t, id, false);
        for k in ["project", "turn_count", "summary", "source"] {
            assert_eq!(row[k], mine[k], "{id} {k}: {row} vs {mine}");
        }
    }
    for (q, h) in queries.iter().zip(hits) {
        assert_eq!(t.hits(q), h, "{q}");
    }
}

#[test]
fn importing_twice_adds_nothing_twice() {
    let env = StoreEnv::new();
    let _s = corpus(&env);
    let out = tempfile::tempdir().unwrap();
    let file = tmp_file(&out, "h.ndjson");
    export_and_leave(&env, &file);
    let there = StoreEnv::new();
    assert_eq!(import(&there, &file)["turns_added"], 4);
    let again = import(&there, &file);
    assert_eq!(again["conversations_added"], 0, "{again}");
    assert_eq!(again["conversations_extended"], 0, "{again}");
    assert_eq!(again["turns_added"], 0, "{again}");
    assert_eq!(again["turns_present"], 4, "{again}");
    let st = there.store_status_cli();
    assert_eq!(
        (st["conversations"].clone(), st["turns"].clone()),
        (json!(2), json!(4))
    );
    // and back into the store it came from: nothing new either
    let home = import(&env, &file);
    assert_eq!(home["turns_added"], 0, "{home}");
    let t = there.serve(&[]);
    assert_eq!(t.hits("godwitword"), vec![(A.to_string(), 2)]);
}

#[test]
fn a_forgotten_conversation_stays_forgotten_after_an_import_that_holds_it() {
    let env = StoreEnv::new();
    let _s = corpus(&env);
    let out = tempfile::tempdir().unwrap();
    let file = tmp_file(&out, "h.ndjson");
    export_and_leave(&env, &file);
    let there = StoreEnv::new();
    import(&there, &file);
    there.cli(&["forget", "--session", A, "--yes"]);
    let got = import(&there, &file);
    assert_eq!(got["forgotten"], json!([A]), "{got}");
    assert_eq!(got["turns_added"], 0, "{got}");
    assert_eq!(there.store_status_cli()["conversations"], 1);
    // and where the export came from
    env.cli(&["forget", "--session", A, "--yes"]);
    assert_eq!(import(&env, &file)["forgotten"], json!([A]));
    let t = there.serve(&[]);
    assert!(listed(&t, A).is_none());
    assert!(t.hits("plover").is_empty());
    assert_eq!(t.hits("curlewword"), vec![(B.to_string(), 0)]);
}

/// Every conversation line comes before its turns, which are numbered 0..turn_count.
fn assert_consistent(recs: &[Value]) -> u64 {
    let mut expected: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    let mut total = 0;
    for r in recs {
        match r["kind"].as_str() {
            Some("conversation") => {
                let id = r["id"].as_str().unwrap().to_owned();
                assert!(
                    expected
                        .insert(id, (r["turn_count"].as_u64().unwrap(), 0))
                        .is_none()
                );
            }
            Some("turn") => {
                let e = expected
                    .get_mut(r["conversation"].as_str().unwrap())
                    .expect("turn after its conversation");
                assert_eq!(r["number"].as_u64().unwrap(), e.1, "{r}");
                e.1 += 1;
                total += 1;
            }
            other => panic!("kind {other:?}"),
        }
    }
    for (id, (count, seen)) in expected {
        assert_eq!(count, seen, "{id}");
    }
    total
}

#[test]
fn export_while_a_server_commits_gives_a_consistent_file() {
    let env = StoreEnv::new();
    let s = corpus(&env);
    let p = env.projects.project("-home-u-mover");
    let mut a = p.session(A);
    let out = tempfile::tempdir().unwrap();
    let mut last = 0;
    for round in 0..6 {
        a.exchange(&format!("more sandpiper {round}"), "ok");
        let file = tmp_file(&out, &format!("h{round}.ndjson"));
        let done = export_to(&env, &file, &[]);
        let turns = assert_consistent(&lines(&file));
        assert_eq!(done["turns"].as_u64().unwrap(), turns);
        assert!(turns >= last, "{turns} after {last}");
        last = turns;
        let there = StoreEnv::new();
        assert_eq!(
            import(&there, &file)["turns_added"].as_u64().unwrap(),
            turns
        );
    }
    wait_stored(&s, 10);
    let file = tmp_file(&out, "final.ndjson");
    export_to(&env, &file, &[]);
    assert_eq!(assert_consistent(&lines(&file)), 10);
    assert!(s.is_alive());
}

#[test]
fn opensearch_bulk_lines_are_action_and_document_pairs() {
    let env = StoreEnv::new();
    let _s = corpus(&env);
    let out = tempfile::tempdir().unwrap();
    let file = tmp_file(&out, "bulk.ndjson");
    let done = export_to(
        &env,
        &file,
        &["--format", "opensearch-bulk", "--index", "history"],
    );
    assert_eq!(done["turns"], 4, "{done}");
    let recs = lines(&file);
    assert_eq!(recs.len(), 2 * 6, "one pair per conversation and per turn");
    let mut ids = std::collections::BTreeSet::new();
    for pair in recs.chunks(2) {
        let action = &pair[0]["index"];
        assert_eq!(pair[0].as_object().unwrap().len(), 1, "{}", pair[0]);
        assert_eq!(action["_index"], "history", "{}", pair[0]);
        assert!(ids.insert(action["_id"].as_str().unwrap().to_owned()));
        let doc = &pair[1];
        assert_eq!(doc["v"], 1, "{doc}");
        match doc["kind"].as_str().unwrap() {
            "conversation" => assert!(doc["id"].is_string(), "{doc}"),
            "turn" => {
                assert!(doc["number"].is_u64(), "{doc}");
                assert!(doc["source"].is_string(), "{doc}");
                assert_eq!(doc["group"], "-home-u-mover", "{doc}");
            }
            k => panic!("kind {k}"),
        }
    }
    // the bulk body imports like the plain form
    let there = StoreEnv::new();
    assert_eq!(import(&there, &file)["turns_added"], 4);
}

#[test]
fn a_server_over_another_projects_dir_lists_store_only_conversations() {
    let env = StoreEnv::new();
    let s = corpus(&env);
    drop(s);
    // the home moved: the old projects tree is gone, the store stays
    std::fs::remove_dir_all(env.projects.path().join("-home-u-mover")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let t = crate::common::mcp::McpClient::start(&[
        "--projects-dir",
        elsewhere.path().to_str().unwrap(),
        "--data-dir",
        env.data_str(),
        "--cache-dir",
        env.cache.path().to_str().unwrap(),
    ]);
    t.wait_ready();
    let row = wait_presence(&t, A, false);
    assert_eq!(row["turn_count"], 3, "{row}");
    assert!(
        row["project"].as_str().unwrap().contains("mover"),
        "the original project: {row}"
    );
    assert!(listed(&t, B).is_some());
    assert_eq!(t.hits("godwitword"), vec![(A.to_string(), 2)]);
    assert!(
        t.read_turn(A, 1)["user_text"]
            .as_str()
            .unwrap()
            .contains("mover file")
    );
}

#[test]
fn bad_lines_are_named_by_number_and_import_nothing() {
    let env = StoreEnv::new();
    let _s = corpus(&env);
    let out = tempfile::tempdir().unwrap();
    let good = tmp_file(&out, "good.ndjson");
    export_to(&env, &good, &[]);
    let text = std::fs::read_to_string(&good).unwrap();
    let mut bad_lines: Vec<String> = text.lines().map(str::to_owned).collect();
    bad_lines.insert(1, "{not json".into());
    bad_lines.insert(2, r#"{"v":9,"kind":"turn"}"#.into());
    bad_lines.push(
        r#"{"v":1,"kind":"turn","conversation":"nobody","number":0,"user":"x","assistant":"y"}"#
            .into(),
    );
    bad_lines.push(r#"{"v":1,"kind":"conversation","id":"x"}"#.into());
    let bad = tmp_file(&out, "bad.ndjson");
    std::fs::write(&bad, bad_lines.join("\n")).unwrap();
    let there = StoreEnv::new();
    let run = cli_raw(&there, &["import", bad.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    let err = String::from_utf8_lossy(&run.stderr);
    let n = bad_lines.len();
    for want in [
        "line 2: not JSON".to_owned(),
        "line 3: record version 9".to_owned(),
        format!("line {}: a turn of `nobody`", n - 1),
        format!("line {n}: not a conversation or turn record"),
        "nothing was imported".to_owned(),
    ] {
        assert!(err.contains(&want), "{want:?} in {err}");
    }
    let reply: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(
        reply["error"].as_str().unwrap().contains("line 2"),
        "{reply}"
    );
    assert_eq!(there.store_status_cli()["turns"], 0);
    // the good file still imports whole
    assert_eq!(import(&there, &good)["turns_added"], 4);
}
