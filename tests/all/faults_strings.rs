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
