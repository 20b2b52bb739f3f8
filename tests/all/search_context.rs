//! A turn is also found by its context: the prompt of the turn before it counts, at a lower
//! weight, so the answer that follows a topic is found by the topic's words, below the turns
//! that hold the words themselves, and its result says how it matched.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::hit_keys;
use crate::common::serve;
use serde_json::json;

#[test]
fn a_turn_is_found_through_the_previous_turns_prompt_below_a_turn_holding_the_words() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-chat").session("c1");
    for i in 0..20 {
        w.exchange(
            &format!("plain unrelated chatter number {i} about lunch"),
            "ok",
        );
    }
    // turn 20 names the topic; turn 21, the answer, does not
    w.exchange("Have you been to the pottery studio downtown?", "ok");
    w.exchange("Yes, I made a blue bowl there last month", "ok");
    for i in 0..5 {
        w.exchange(&format!("more chatter {i} about the weather"), "ok");
    }
    // a turn that holds the topic's words itself
    w.exchange("The pottery studio closes early on Sundays", "ok");
    let s = serve(dir);
    let r = s.search_with(json!({"query": "pottery studio", "limit": 10}));
    let keys = hit_keys(&r);
    let rank = |t: u64| keys.iter().position(|k| *k == ("c1".to_string(), t));
    let answer = rank(21).unwrap_or_else(|| panic!("the answer is not found: {r}"));
    for own in [20, 27] {
        let own = rank(own).unwrap_or_else(|| panic!("turn {own} is not found: {r}"));
        assert!(own < answer, "a turn holding the words ranks first: {r}");
    }
    let hit = &r["results"][answer];
    assert_eq!(hit["matched_terms"], json!([]), "{hit}");
    assert_eq!(
        hit["note"], "matched only through the previous turn's prompt",
        "{hit}"
    );
}
