//! A turn is also found by its context: the prompt of the turn before it counts, at a lower
//! weight, so the answer that follows a topic ranks above turns that share only its own words,
//! and below a turn that holds every word itself; the context's words are not matched terms.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::hit_keys;
use crate::common::serve;
use serde_json::json;

#[test]
fn the_answer_after_a_topic_is_raised_by_the_previous_prompt_below_a_turn_holding_the_words() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-chat").session("c1");
    for i in 0..5 {
        w.exchange(
            &format!("plain unrelated chatter number {i} about lunch"),
            "ok",
        );
    }
    // turn 5: the query's last word only, in a short turn
    w.exchange("I had a bowl of soup", "ok");
    for i in 0..14 {
        w.exchange(
            &format!("more unrelated chatter number {i} about the weather"),
            "ok",
        );
    }
    // turn 20 names the topic; turn 21, the answer, has only the last word
    w.exchange("Have you been to the pottery studio downtown?", "ok");
    w.exchange("Yes, I made a blue bowl there last month", "ok");
    for i in 0..5 {
        w.exchange(&format!("chatter {i} about trains"), "ok");
    }
    // turn 27 holds every word itself
    w.exchange("I made a bowl at the pottery studio", "ok");
    let s = serve(dir);
    let r = s.search_with(json!({"query": "pottery studio bowl", "limit": 10}));
    let keys = hit_keys(&r);
    let rank = |t: u64| {
        keys.iter()
            .position(|k| *k == ("c1".to_string(), t))
            .unwrap_or_else(|| panic!("turn {t} is not found: {r}"))
    };
    assert_eq!(rank(27), 0, "the turn holding every word ranks first: {r}");
    assert!(
        rank(21) < rank(5),
        "the answer after the topic ranks above a turn sharing only its word: {r}"
    );
    assert_eq!(
        r["results"][rank(21)]["matched_terms"],
        json!(["bowl"]),
        "{r}"
    );
    // the context only raises turns that match themselves: nothing else is found
    assert_eq!(keys.len(), 4, "{r}");
}
