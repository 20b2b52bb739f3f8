//! Questions as people write them: possessives and contractions are words of the question (no
//! piece of them outweighs the rest), and question and function words weigh next to nothing,
//! so a question and its keyword form find the same turn first, while a query of only such
//! words still finds the turns holding them.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::hit_keys;
use crate::common::{Served, serve};
use serde_json::json;

/// Session `q1` with `prompts` as its turns (each answered `ok`), then unrelated turns so that
/// document frequencies look like a real conversation.
fn conversation(prompts: &[&str]) -> Served {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-chat").session("q1");
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

fn first(s: &Served, query: &str) -> (String, u64) {
    let r = s.search_with(json!({"query": query, "limit": 10}));
    hit_keys(&r)
        .first()
        .cloned()
        .unwrap_or_else(|| panic!("{query:?} found nothing: {r}"))
}

#[test]
fn a_possessive_question_ranks_the_answer_above_a_greeting_that_only_names_the_person() {
    let s = conversation(&[
        "Bye Nate! Talk soon, Nate.",
        "My favorite movie trilogy is the one with the rings, I watch it every winter",
    ]);
    for q in [
        "What is Nate's favorite movie trilogy?",
        "What is Nate\u{2019}s favorite movie trilogy?",
    ] {
        assert_eq!(first(&s, q), ("q1".to_string(), 1), "{q}");
    }
}

#[test]
fn a_contraction_or_a_call_is_no_whole_form_that_outweighs_the_other_words() {
    let s = conversation(&[
        "don don don said hello",
        "the parser must not panic when the buffer is empty",
    ]);
    assert_eq!(
        first(&s, "don't parser buffer empty"),
        ("q1".to_string(), 1)
    );
    let s = conversation(&[
        "foo foo foo again",
        "calling bar with the retry budget fixed the flaky upload",
    ]);
    assert_eq!(
        first(&s, "foo(bar) retry budget upload"),
        ("q1".to_string(), 1)
    );
}

#[test]
fn a_question_and_its_keywords_give_the_same_first_hit() {
    let s = conversation(&[
        "What did you do? What did they say when it was over? Did Melanie go?",
        "Melanie showed me the paint set she bought for the sunrise picture",
    ]);
    let question = first(&s, "What did Melanie paint when she was there?");
    assert_eq!(question, first(&s, "melanie paint"));
    assert_eq!(question, ("q1".to_string(), 1));
}

#[test]
fn a_query_of_only_function_words_still_finds_the_turns_holding_them() {
    let s = conversation(&[
        "What did you do? What did they say when it was over?",
        "Melanie showed me the paint set she bought",
    ]);
    assert_eq!(first(&s, "what did they say"), ("q1".to_string(), 0));
}
