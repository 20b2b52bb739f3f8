//! Faults, point 1: a lone surrogate escape (an emoji cut at a buffer edge) or invalid UTF-8
//! inside a JSON string reads as U+FFFD, as Node and Python read it; the record is kept.

use crate::common::fixture::ProjectsDir;
use crate::common::serve;

const ID: &str = "5a220000-0000-4000-8000-000000000001";

#[test]
fn fault_lone_surrogate_keeps_the_record_and_its_turn() {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-surrogate");
    let mut w = p.session(ID);
    w.exchange("firstword prompt", "ok");
    w.exchange("emojiword cut LONEA", "cutreply LONEB");
    w.exchange("lastword prompt", "ok");
    let path = w.path().to_owned();
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("LONEA", "\\ud83d")
        .replace("LONEB", "x\\udc00\\u0041");
    std::fs::write(&path, text).unwrap();
    let s = serve(dir);
    assert_eq!(
        s.user_texts(ID),
        [
            "firstword prompt",
            "emojiword cut \u{fffd}",
            "lastword prompt"
        ]
    );
    assert_eq!(s.search("cutreply")["total"], 1);
    assert_eq!(s.search("emojiword")["total"], 1);
    assert_eq!(s.index_status()["skipped_lines"], 0);
}

mod prop {
    use crate::common::fixture::ProjectsDir;
    use crate::common::serve;
    use proptest::prelude::*;

    const MARK: &str = "QQMARKQQ";
    const WORDS: &[&str] = &["zebra", "quokka", "narwhal", "okapi", "tapir"];
    const ESCAPES: &[&str] = &["\\ud83d", "\\ude00", "\\ud83d\\ud83d", "\\udbff x"];

    /// `text` with the mark inserted before char `at` (mod its length + 1).
    fn marked(text: &str, at: usize) -> String {
        let cut = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .nth(at % (text.chars().count() + 1))
            .unwrap_or(0);
        format!("{}{MARK}{}", &text[..cut], &text[cut..])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]
        /// Inserting unpaired surrogate escapes anywhere in prompts and replies never changes
        /// the number of turns.
        #[test]
        fn fault_lone_surrogates_anywhere_never_change_the_turn_count(
            turns in proptest::collection::vec(
                (proptest::sample::select(WORDS), any::<usize>(), any::<bool>()), 1..6),
            escape in proptest::sample::select(ESCAPES),
        ) {
            let dir = ProjectsDir::new();
            let p = dir.project("-home-u-prop");
            let mut w = p.session(super::ID);
            for (word, at, in_reply) in &turns {
                let text = format!("{word} prompt text");
                if *in_reply {
                    w.exchange(&text, &marked("reply words", *at));
                } else {
                    w.exchange(&marked(&text, *at), "ok");
                }
            }
            let path = w.path().to_owned();
            let raw = std::fs::read_to_string(&path).unwrap().replace(MARK, escape);
            std::fs::write(&path, raw).unwrap();
            let s = serve(dir);
            prop_assert_eq!(s.user_texts(super::ID).len(), turns.len());
            prop_assert_eq!(&s.index_status()["skipped_lines"], 0);
        }
    }
}
