//! What a query word matches besides itself: a natural-language word also meets its other
//! forms (same English stem) at a lower weight, so the exact form still ranks first; an opaque
//! token (a UUID, key, hash) matches only the turns holding it whole, never a fragment of it,
//! and `matched_terms` says so.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::hit_keys;
use crate::common::{Served, serve};
use serde_json::json;

/// Session `f1` with `prompts` as its turns (each answered `ok`), then unrelated turns so that
/// document frequencies look like a real conversation.
fn conversation(prompts: &[&str]) -> Served {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-forms").session("f1");
    for p in prompts {
        w.exchange(p, "ok");
    }
    for i in 0..30 {
        w.exchange(
            &format!("plain unrelated chatter number {i} about lunch and the weather"),
            "ok",
        );
    }
    serve(dir)
}

fn turns(s: &Served, query: &str) -> Vec<u64> {
    let r = s.search_with(json!({"query": query, "limit": 10}));
    hit_keys(&r).into_iter().map(|(_, t)| t).collect()
}

#[test]
fn a_word_finds_its_other_forms_below_the_form_typed() {
    let s = conversation(&[
        "we talked about the pet that sleeps on the sofa",
        "we talked about the pets that sleep on the sofa",
    ]);
    assert_eq!(turns(&s, "pets"), [1, 0], "`pets` first, then `pet`");
    assert_eq!(turns(&s, "pet"), [0, 1], "`pet` first, then `pets`");
    // in a question, the function words match other turns too: the exact form ranks first and
    // the other form above every chatter turn but the one right after the `pets` prompt, which
    // holds `about` itself and `pets` in its context (the previous prompt counts, at half weight)
    let q = turns(&s, "What did they say about pets?");
    assert_eq!(q[0], 1, "{q:?}");
    assert!(q[1..3].contains(&0), "{q:?}");
}

#[test]
fn identifiers_paths_and_flags_meet_no_other_forms() {
    let s = conversation(&[
        "renamed pet_records in the schema",
        "opened src/pets/mod.rs and the --pets flag",
        "pets_record pets recorded",
    ]);
    // code: its parts are not stemmed, so `pets`, `record`, `recorded` stand in for nothing
    assert_eq!(turns(&s, "pet_records"), [0]);
    assert!(
        !turns(&s, "src/pet/mod.rs").contains(&2),
        "a path is not stemmed"
    );
    assert_eq!(turns(&s, "--pet"), [0], "a flag is not stemmed");
}

#[test]
fn an_opaque_token_matches_only_the_turns_holding_it_whole() {
    let uuid = "550e8400-e29b-41d4-a716-446655440000";
    let s = conversation(&[
        &format!("the deploy key {uuid} was rotated"),
        "build 550e8400 failed and e29b looked odd",
        "another id 123e4567-e29b-41d4-a716-426614174000 from the logs",
    ]);
    let r = s.search_with(json!({"query": uuid, "limit": 10}));
    assert_eq!(hit_keys(&r), [("f1".to_string(), 0)], "{r}");
    assert_eq!(r["results"][0]["matched_terms"], json!([uuid]), "{r}");
    // among other words it still matches only whole: the fragments add nothing
    let r = s.search_with(json!({"query": format!("logs {uuid}"), "limit": 10}));
    let keys: Vec<u64> = hit_keys(&r).into_iter().map(|(_, t)| t).collect();
    assert_eq!(keys, [0, 2], "{r}");
    assert_eq!(r["results"][1]["matched_terms"], json!(["logs"]), "{r}");
}
