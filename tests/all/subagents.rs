//! Subagent transcripts: flat `agent-<id>.jsonl` and nested `<session>/subagents/` layouts,
//! conversation ids `<parent>/agent-<id>`, parent/agent_type/description on search hits,
//! subagent_count in list_conversations, read tools on subagent ids, index_status counts.

use crate::common::fixture::{ProjectsDir, new_msg_id};
use crate::common::mcp::{hit_keys, listed_sessions};
use crate::common::{Served, serve};
use serde_json::{Value, json};

const PARENT: &str = "9a4e0700-0000-4000-8000-000000000001";
const OTHER: &str = "9a4e0700-0000-4000-8000-000000000002";

/// PARENT with one flat and two nested subagents (one with meta); OTHER without subagents.
fn corpus() -> Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-agents");
    let mut main = p.session(PARENT);
    main.user("investigate the parser with helpers");
    let m = new_msg_id();
    main.assistant_tool_use(
        &m,
        "toolu_t1",
        "Task",
        json!({"subagent_type": "Explore", "description": "Find parser", "prompt": "Find the parser"}),
    );
    main.tool_result("toolu_t1", "Found it. agentId: f1a7", Value::Null);
    main.assistant_text(&new_msg_id(), "The helpers reported back.");

    let mut flat = p.subagent_flat("f1a7", PARENT);
    flat.user("Find the parser flatagentword");
    flat.assistant_text(&new_msg_id(), "The parser lives in src/parser.rs.");

    let mut nested = p.subagent_nested(
        PARENT,
        "a4ca7529859c158c2",
        Some(("general-purpose", "Research nested layout")),
    );
    nested.user("Research the nested layout nestedagentword");
    nested.assistant_text(&new_msg_id(), "Nested answer.");
    nested.exchange("second subagent turn", "more nested work secondturnword");

    let mut bare = p.subagent_nested(PARENT, "b0b0", None);
    bare.user("A subagent without meta bareagentword");
    bare.assistant_text(&new_msg_id(), "Bare answer.");

    let mut other = p.session(OTHER);
    other.exchange("unrelated session", "no helpers here");
    serve(dir)
}

fn only_hit(s: &Served, word: &str) -> Value {
    let r = s.search(word);
    assert_eq!(r["total"], 1, "{word}: {r}");
    r["results"][0].clone()
}

#[test]
fn flat_subagent_is_searchable_under_parent_scoped_id() {
    let s = corpus();
    let hit = only_hit(&s, "flatagentword");
    assert_eq!(hit["session_id"], format!("{PARENT}/agent-f1a7"));
    assert_eq!(hit["parent_session_id"], PARENT);
    assert_eq!(hit["turn_number"], 0);
}

#[test]
fn nested_subagent_carries_parent_and_meta() {
    let s = corpus();
    let hit = only_hit(&s, "nestedagentword");
    assert_eq!(
        hit["session_id"],
        format!("{PARENT}/agent-a4ca7529859c158c2")
    );
    assert_eq!(hit["parent_session_id"], PARENT);
    assert_eq!(hit["agent_type"], "general-purpose");
    assert_eq!(hit["agent_description"], "Research nested layout");
    let hit = only_hit(&s, "secondturnword");
    assert_eq!(hit["turn_number"], 1);
}

#[test]
fn nested_subagent_without_meta_has_no_agent_type() {
    let s = corpus();
    let hit = only_hit(&s, "bareagentword");
    assert_eq!(hit["session_id"], format!("{PARENT}/agent-b0b0"));
    assert_eq!(hit["parent_session_id"], PARENT);
    assert!(hit.get("agent_type").is_none_or(Value::is_null), "{hit}");
    assert!(
        hit.get("agent_description").is_none_or(Value::is_null),
        "{hit}"
    );
}

#[test]
fn subagent_hits_report_the_parent_project() {
    let s = corpus();
    assert_eq!(only_hit(&s, "flatagentword")["project"], "agents");
    assert_eq!(only_hit(&s, "nestedagentword")["project"], "agents");
}

#[test]
fn list_conversations_lists_main_sessions_with_subagent_counts() {
    let s = corpus();
    let l = s.list(json!({}));
    assert_eq!(l["total"], 2, "{l}");
    let convs = l["conversations"].as_array().unwrap();
    let ids: Vec<&str> = convs
        .iter()
        .map(|c| c["session_id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&PARENT) && ids.contains(&OTHER), "{ids:?}");
    for c in convs {
        let want = if c["session_id"] == PARENT { 3 } else { 0 };
        assert_eq!(c["subagent_count"], want, "{c}");
    }
}

#[test]
fn read_tools_accept_subagent_ids() {
    let s = corpus();
    let id = format!("{PARENT}/agent-a4ca7529859c158c2");
    let t = s.read_turn(&id, 1);
    assert_eq!(t["session_id"], id);
    assert_eq!(t["user_text"], "second subagent turn");
    assert_eq!(t["assistant_text"], "more nested work secondturnword");
    let c = s.read_conversation(&id);
    assert_eq!(c["session_id"], id);
    assert_eq!(c["total_turns"], 2);
    let flat = format!("{PARENT}/agent-f1a7");
    assert_eq!(
        s.read_turn(&flat, 0)["user_text"],
        "Find the parser flatagentword"
    );
}

#[test]
fn subagent_turns_do_not_leak_into_the_parent_session() {
    let s = corpus();
    let c = s.read_conversation(PARENT);
    assert_eq!(c["total_turns"], 1);
    let text = c.to_string();
    assert!(!text.contains("flatagentword") && !text.contains("nestedagentword"));
    assert_eq!(
        c["turns"][0]["tools_used"],
        json!([{"tool": "Task", "type": "Explore", "description": "Find parser"}])
    );
}

#[test]
fn session_id_filter_accepts_a_subagent_id() {
    let s = corpus();
    let id = format!("{PARENT}/agent-a4ca7529859c158c2");
    let r = s.search_with(json!({"query": "nested", "session_id": id, "limit": 100}));
    let keys = hit_keys(&r);
    assert!(!keys.is_empty());
    assert!(keys.iter().all(|(sid, _)| sid == &id), "{keys:?}");
}

#[test]
fn index_status_counts_subagents_separately() {
    let s = corpus();
    let st = s.index_status();
    assert_eq!(st["sessions"], 2, "{st}");
    assert_eq!(st["subagents"], 3, "{st}");
}

#[test]
fn flat_subagent_parent_comes_from_records_not_file_location() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-flatparent");
    p.session("parent-a").exchange("parent a prompt", "ok");
    p.session("parent-b").exchange("parent b prompt", "ok");
    let mut flat = p.subagent_flat("cafe01", "parent-b");
    flat.user("which parent owns me flatownerword");
    let s = serve(dir);
    let hit = only_hit(&s, "flatownerword");
    assert_eq!(hit["session_id"], "parent-b/agent-cafe01");
    assert_eq!(hit["parent_session_id"], "parent-b");
    let l = s.list(json!({}));
    assert!(listed_sessions(&l).contains(&"parent-b".to_string()), "{l}");
    for c in l["conversations"].as_array().unwrap() {
        let want = if c["session_id"] == "parent-b" { 1 } else { 0 };
        assert_eq!(c["subagent_count"], want, "{c}");
    }
}

#[test]
fn subagent_first_prompt_is_turn_zero_and_assistant_first_files_work() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-warm");
    p.session("warm-parent").exchange("parent", "ok");
    let mut flat = p.subagent_flat("w4rm", "warm-parent");
    flat.assistant_text(&new_msg_id(), "I'll explore the codebase warmupword.");
    flat.assistant_tool_use(
        &new_msg_id(),
        "toolu_w",
        "Glob",
        json!({"pattern": "**/*.py"}),
    );
    let s = serve(dir);
    let id = "warm-parent/agent-w4rm";
    let t = s.read_turn(id, 0);
    assert_eq!(t["user_text"], "");
    assert_eq!(t["assistant_text"], "I'll explore the codebase warmupword.");
    assert_eq!(hit_keys(&s.search("warmupword")), vec![(id.to_string(), 0)]);
}
