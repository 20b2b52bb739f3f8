//! A session file delivered in arbitrary chunks (split points anywhere: inside lines, inside
//! UTF-8 sequences), with the server observing after every chunk, ends up exactly like the
//! whole file indexed at once by a fresh server: same turns (prompt, reply, tools, timestamps)
//! and the same search scores.

use crate::common;

use std::time::Duration;

use crate::common::fixture::{ProjectsDir, SessionWriter, new_msg_id, new_tool_id};
use crate::common::live::{
    append, num, render, score_table, serve_live, table_diff, turns, wait_caught_up, wait_status,
};
use crate::common::mcp::McpClient;
use crate::common::words;
use proptest::prelude::*;
use serde_json::{Value, json};

const SID: &str = "c4a40000-0000-4000-8000-000000000001";
const BACKGROUND: &str = "c4a40000-0000-4000-8000-000000000002";
const PROJECT: &str = "-home-u-chunks";
const DEBOUNCE_MS: u64 = 50;

/// Words with multi-byte characters, so random split points often fall inside one.
const VOCAB: &[&str] = &[
    "café",
    "naïve",
    "größe",
    "ωmega",
    "日本語",
    "kestrel",
    "plover",
    "über",
    "señor",
    "smörgås",
];
const QUERIES: &[&str] = &[
    "café",
    "naïve",
    "größe",
    "ωmega",
    "日本",
    "kestrel plover",
    "über señor",
    "smörgås",
    "\"café naïve\"",
    "cargo",
    "src",
];

#[derive(Debug, Clone)]
struct TurnSpec {
    prompt: String,
    reply: String,
    thinking: bool,
    /// 0 Bash, 1 Read, 2 Grep; with the word it is about.
    tool: Option<(u8, &'static str)>,
}

fn turn_spec() -> impl Strategy<Value = TurnSpec> {
    (
        words(VOCAB, 6),
        words(VOCAB, 6),
        any::<bool>(),
        prop::option::of((0..3u8, prop::sample::select(VOCAB))),
    )
        .prop_map(|(prompt, reply, thinking, tool)| TurnSpec {
            prompt,
            reply,
            thinking,
            tool,
        })
}

fn write_turn(w: &mut SessionWriter, t: &TurnSpec) {
    w.user(&t.prompt);
    let msg = new_msg_id();
    if t.thinking {
        w.assistant_thinking(&msg, &format!("pondering {}", t.prompt));
    }
    match t.tool {
        None => {
            w.assistant_text(&msg, &t.reply);
        }
        Some((kind, word)) => {
            let id = new_tool_id();
            let (name, input) = match kind {
                0 => ("Bash", json!({"command": format!("cargo test {word}")})),
                1 => (
                    "Read",
                    json!({"file_path": format!("/home/u/chunks/src/{word}.rs")}),
                ),
                _ => ("Grep", json!({"pattern": word, "path": "src"})),
            };
            w.assistant_tool_use(&msg, &id, name, input);
            w.tool_result(&id, &format!("output mentioning {word}"), Value::Null);
            w.assistant_text(&new_msg_id(), &t.reply);
        }
    }
}

/// Byte positions where the file is cut: the chosen ones plus, when asked, one inside a
/// multi-byte character.
fn cuts(
    bytes: &[u8],
    picks: &[prop::sample::Index],
    inside_char: Option<prop::sample::Index>,
) -> Vec<usize> {
    let mut at: Vec<usize> = picks.iter().map(|i| 1 + i.index(bytes.len() - 1)).collect();
    let continuation: Vec<usize> = (1..bytes.len())
        .filter(|&i| bytes[i] & 0xC0 == 0x80)
        .collect();
    if let (Some(i), false) = (inside_char, continuation.is_empty()) {
        at.push(continuation[i.index(continuation.len())]);
    }
    at.sort_unstable();
    at.dedup();
    at
}

/// Offset just past the last newline of `bytes` (what the server can have read).
fn complete_prefix(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i as u64 + 1)
}

fn observe(
    c: &McpClient,
) -> (
    Vec<Value>,
    std::collections::BTreeMap<String, common::live::Scores>,
    Value,
) {
    (turns(c, SID), score_table(c, QUERIES), c.index_status())
}

fn run_case(specs: &[TurnSpec], cut: impl FnOnce(&[u8]) -> Vec<usize>) {
    let whole = render(SID, |w| {
        w.custom_title("chunked delivery");
        for t in specs {
            write_turn(w, t);
        }
    });
    let dir = ProjectsDir::new();
    let project = dir.project(PROJECT);
    let mut bg = project.session(BACKGROUND);
    bg.exchange("background café kestrel", "background plover reply");
    bg.exchange("more background größe", "reply über");
    let path = project.path().join(format!("{SID}.jsonl"));
    let root = dir.path().to_path_buf();
    let s = serve_live(dir, DEBOUNCE_MS, &[]);
    let base = num(&s.index_status(), "bytes_indexed");

    let mut start = 0;
    let mut read = 0;
    let mut at = cut(&whole);
    at.sort_unstable();
    at.dedup();
    let pieces = at.len() + 1;
    for end in at.into_iter().chain([whole.len()]) {
        append(&path, &whole[start..end]);
        start = end;
        let want = complete_prefix(&whole[..end]);
        if want > read {
            // processed once the server has read up to the last complete line
            wait_status(&s, "the chunk read", |st| {
                num(st, "bytes_indexed") == base + want
            });
            read = want;
        } else {
            // nothing complete yet: give the server time to look at the partial line
            std::thread::sleep(Duration::from_millis(DEBOUNCE_MS + 30));
        }
    }
    wait_caught_up(&s, &root);
    let live = observe(&s);
    let fresh_server = McpClient::indexed(&root, &[]);
    let fresh = observe(&fresh_server);
    assert_eq!(
        live.0, fresh.0,
        "turns differ (live, then fresh) with the file in {pieces} pieces"
    );
    let diff = table_diff(&live.1, &fresh.1);
    assert!(diff.is_empty(), "scores differ:\n{diff}");
    for k in ["turns", "sessions", "skipped_lines", "bytes_indexed"] {
        assert_eq!(
            live.2[k], fresh.2[k],
            "{k}: live {} fresh {}",
            live.2, fresh.2
        );
    }
    assert_eq!(live.2["skipped_lines"], 0, "{}", live.2);
    assert_eq!(live.0.len(), specs.len());
}

#[test]
fn every_byte_of_a_multibyte_character_and_every_line_end_as_a_cut() {
    let specs = vec![TurnSpec {
        prompt: "日本語 café".into(),
        reply: "naïve größe".into(),
        thinking: true,
        tool: Some((1, "smörgås")),
    }];
    run_case(&specs, |whole| {
        let first = whole.iter().position(|&b| b >= 0x80).expect("multi-byte");
        (first..first + 4)
            .chain((0..whole.len()).filter(|&i| whole[i] == b'\n'))
            .chain((0..whole.len()).filter(|&i| i > 0 && whole[i - 1] == b'\n'))
            .filter(|&i| i > 0 && i < whole.len())
            .collect()
    });
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 10,
        max_shrink_iters: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn chunked_delivery_equals_the_whole_file(
        specs in prop::collection::vec(turn_spec(), 1..6),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..8),
        inside in prop::option::of(any::<prop::sample::Index>()),
    ) {
        run_case(&specs, |whole| cuts(whole, &picks, inside));
    }
}
