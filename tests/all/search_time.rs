//! Time in a query ranks: a date or a relative time (`on 3 June 2023`, `yesterday`) raises the
//! turns from that time among equal texts (a soft prior, never a filter), its words are not
//! searched as text, and the response says what it read.

use crate::common::fixture::ProjectsDir;
use crate::common::mcp::{McpClient, hit_keys};
use serde_json::{Value, json};

/// Sessions `a-may`, `b-june3` and `c-june9`, each one turn saying the same thing on its day.
fn dated_sessions() -> ProjectsDir {
    let dir = ProjectsDir::new();
    for (id, day) in [
        ("a-may", "2023-05-20T10:00:00Z"),
        ("b-june3", "2023-06-03T10:00:00Z"),
        ("c-june9", "2023-06-09T10:00:00Z"),
    ] {
        let mut w = dir.project("-home-u-chat").session(id);
        w.set_time(day);
        w.exchange("we adopted a puppy called Biscuit", "ok");
    }
    dir
}

fn served(dir: &ProjectsDir, now: &str) -> McpClient {
    let path = dir.path().to_str().expect("utf-8 path");
    let c = McpClient::spawn(
        &["--projects-dir", path],
        &[("CONVERSATION_SEARCH_NOW", now)],
    );
    c.initialize();
    c.wait_ready();
    c
}

fn search(c: &McpClient, query: &str) -> Value {
    c.search_with(json!({"query": query, "limit": 10}))
}

#[test]
fn a_date_in_the_query_ranks_that_days_turn_first_among_equal_texts() {
    let dir = dated_sessions();
    let c = served(&dir, "2023-06-10T12:00:00Z");
    for q in [
        "puppy on 3 June 2023",
        "What puppy did we adopt on 3 June, 2023?",
        "puppy 2023-06-03",
    ] {
        let r = search(&c, q);
        let keys = hit_keys(&r);
        assert_eq!(keys.len(), 3, "a prior filters nothing: {r}");
        assert_eq!(keys[0], ("b-june3".to_string(), 0), "{q}: {r}");
        let matched = r["results"][0]["matched_terms"].to_string().to_lowercase();
        assert!(
            matched.contains("puppy") && !matched.contains("june") && !matched.contains("2023"),
            "{q}: the time's words are not searched as text: {r}"
        );
        let note = r["note"].as_str().unwrap_or_default();
        assert!(
            note.contains("2023-06-03"),
            "{q}: the note says what was read: {r}"
        );
    }
}

#[test]
fn a_relative_time_counts_from_now() {
    let dir = dated_sessions();
    let c = served(&dir, "2023-06-10T12:00:00Z");
    let r = search(&c, "puppy yesterday");
    assert_eq!(hit_keys(&r)[0], ("c-june9".to_string(), 0), "{r}");
    let r = search(&c, "puppy last month");
    assert_eq!(hit_keys(&r)[0], ("a-may".to_string(), 0), "{r}");
    // since/until stay the hard filters
    let r =
        c.search_with(json!({"query": "puppy on 3 June 2023", "since": "2023-06-05T00:00:00Z"}));
    assert_eq!(hit_keys(&r), [("c-june9".to_string(), 0)], "{r}");
}
