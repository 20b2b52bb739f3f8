//! Property tests: arbitrary bytes as a session file, and random record sequences built from
//! the typed helpers (with malformed lines mixed in), never crash the server; for record
//! sequences the turns, user texts and searchable words also match a model of the turn rules.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use crate::common::fixture::{
    ProjectsDir, SessionWriter, image_block, new_msg_id, new_tool_id, text_block,
};
use crate::common::mcp::hit_keys;
use crate::common::serve;
use proptest::prelude::*;
use serde_json::{Value, json};

const FUZZ: &str = "f0220000-0000-4000-8000-000000000001";
const CONTROL: &str = "c0270000-0000-4000-8000-000000000002";

/// Search vocabulary: distinctive words, none a prefix of another, none a stop word.
const VOCAB: &[&str] = &[
    "zebra", "quokka", "narwhal", "axolotl", "capybara", "ocelot", "pangolin", "tapir", "wombat",
    "okapi",
];
const TOOLS: &[&str] = &["Read", "Bash", "Grep", "TodoWrite", "WebFetch"];
const MALFORMED: &[&str] = &[
    "{",
    "not json at all",
    "{\"type\":\"user\"}",
    "{\"type\":\"assistant\",\"uuid\":\"x\"}",
    "{\"message\":{\"role\":\"user\",\"content\":\"zebra\"}}",
    "[1,2,3]",
    "null",
    "{\"type\":\"user\",\"message\":",
];

#[derive(Debug, Clone)]
enum Op {
    Prompt(String),
    PromptBlocks(String),
    IdePrompt(String),
    Meta(String),
    Compact(String),
    Command(String),
    LocalStdout(String),
    Interrupt,
    InterruptToolUse,
    /// assistant text; `true` = same message id as the previous assistant line of this turn
    Text(String, bool),
    Thinking(bool),
    ToolUse(&'static str, bool),
    ToolResult,
    Summary(String),
    Title(String),
    Unknown,
    Malformed(&'static str),
    RawBytes(Vec<u8>),
}

/// 1 to 3 words of `VOCAB`.
fn words() -> impl Strategy<Value = String> {
    common::words(VOCAB, 3)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => words().prop_map(Op::Prompt),
        1 => words().prop_map(Op::PromptBlocks),
        1 => words().prop_map(Op::IdePrompt),
        1 => words().prop_map(Op::Meta),
        1 => words().prop_map(Op::Compact),
        1 => words().prop_map(Op::Command),
        1 => words().prop_map(Op::LocalStdout),
        1 => Just(Op::Interrupt),
        1 => Just(Op::InterruptToolUse),
        4 => (words(), any::<bool>()).prop_map(|(t, same)| Op::Text(t, same)),
        1 => any::<bool>().prop_map(Op::Thinking),
        2 => (prop::sample::select(TOOLS), any::<bool>()).prop_map(|(t, s)| Op::ToolUse(t, s)),
        1 => Just(Op::ToolResult),
        1 => words().prop_map(Op::Summary),
        1 => words().prop_map(Op::Title),
        1 => Just(Op::Unknown),
        2 => prop::sample::select(MALFORMED).prop_map(Op::Malformed),
        1 => prop::collection::vec(any::<u8>(), 0..48).prop_map(Op::RawBytes),
    ]
}

/// What the spec says the server must see in the fuzzed session.
#[derive(Default, Debug)]
struct Model {
    users: Vec<String>,
    words: Vec<BTreeSet<String>>,
    malformed: usize,
}

fn add_words(set: &mut BTreeSet<String>, text: &str) {
    set.extend(text.split_whitespace().map(str::to_string));
}

fn start_turn(m: &mut Model, text: &str, msg: &mut Option<String>) {
    m.users.push(text.to_string());
    let mut set = BTreeSet::new();
    add_words(&mut set, text);
    m.words.push(set);
    *msg = None;
}

/// The message id for the next assistant line: the previous one of this turn if `same`.
fn msg_id(same: bool, msg: &mut Option<String>) -> String {
    match (same, msg.as_ref()) {
        (true, Some(id)) => id.clone(),
        _ => {
            let id = new_msg_id();
            *msg = Some(id.clone());
            id
        }
    }
}

/// Writes `ops` (after an initial prompt) and returns the model of the expected turns.
fn write_ops(w: &mut SessionWriter, first: &str, ops: &[Op]) -> Model {
    let mut m = Model::default();
    let mut msg: Option<String> = None;
    w.user(first);
    start_turn(&mut m, first, &mut msg);
    for op in ops {
        match op {
            Op::Prompt(t) => {
                w.user(t);
                start_turn(&mut m, t, &mut msg);
            }
            Op::PromptBlocks(t) => {
                w.user_blocks(vec![text_block(t), image_block()]);
                start_turn(&mut m, t, &mut msg);
            }
            Op::IdePrompt(t) => {
                w.user_blocks(vec![
                    text_block("<ide_opened_file>The user opened the file /src/a.rs in the IDE.</ide_opened_file>"),
                    text_block(t),
                ]);
                start_turn(&mut m, t, &mut msg);
            }
            Op::Meta(t) => drop(w.user_meta(t)),
            Op::Compact(t) => drop(w.compact_summary(t)),
            Op::Command(t) => drop(w.command("model", t)),
            Op::LocalStdout(t) => drop(w.local_stdout(t)),
            Op::Interrupt => drop(w.interrupt()),
            Op::InterruptToolUse => drop(w.interrupt_tool_use()),
            Op::Text(t, same) => {
                let id = msg_id(*same, &mut msg);
                w.assistant_text(&id, t);
                add_words(m.words.last_mut().unwrap(), t);
            }
            Op::Thinking(same) => {
                let id = msg_id(*same, &mut msg);
                w.assistant_thinking(&id, "thinkonlyword pondering");
            }
            Op::ToolUse(name, same) => {
                let id = msg_id(*same, &mut msg);
                w.assistant_tool_use(&id, &new_tool_id(), name, json!({"command": "true"}));
            }
            Op::ToolResult => drop(w.tool_result(
                &new_tool_id(),
                "resultonlyword output",
                json!({"stdout": "resultonlyword"}),
            )),
            Op::Summary(t) => {
                let leaf = w.last_uuid().unwrap_or_default();
                w.summary(t, &leaf);
            }
            Op::Title(t) => w.custom_title(t),
            Op::Unknown => w.record(json!({"type": "future-record-kind", "x": 1})),
            Op::Malformed(line) => {
                w.raw_line(line);
                m.malformed += 1;
            }
            Op::RawBytes(b) => {
                let mut b = b.clone();
                b.push(b'\n');
                w.raw_bytes(&b);
            }
        }
    }
    m
}

fn corpus_with<F: FnOnce(&common::fixture::Project)>(f: F) -> common::Served {
    let dir = ProjectsDir::new();
    let p = dir.project("-home-u-work-fuzz");
    p.session(CONTROL).exchange("controlword prompt", "ok");
    f(&p);
    serve(dir)
}

/// The server is alive and answering, and the control session is intact.
fn assert_healthy(s: &common::Served) -> Value {
    let st = s.index_status();
    assert!(st["generation"].as_u64().unwrap_or(0) >= 1, "{st}");
    assert_eq!(
        hit_keys(&s.search("controlword")),
        vec![(CONTROL.to_string(), 0)]
    );
    let l = s.list(json!({"limit": 100}));
    for c in l["conversations"].as_array().unwrap() {
        s.read_conversation(c["session_id"].as_str().unwrap());
    }
    assert!(s.is_alive());
    st
}

/// A small valid session used as the base for byte mutations.
fn valid_session_bytes() -> Vec<u8> {
    let dir = ProjectsDir::new();
    let mut w = dir.project("tmp").session("x");
    w.exchange("zebra prompt", "quokka reply");
    let m = new_msg_id();
    w.assistant_thinking(&m, "hmm");
    w.assistant_tool_use(&m, "toolu_1", "Bash", json!({"command": "ls"}));
    w.tool_result("toolu_1", "a b", json!({"stdout": "a b"}));
    w.custom_title("title");
    std::fs::read(w.path()).unwrap()
}

fn file_bytes() -> impl Strategy<Value = Vec<u8>> {
    let valid = valid_session_bytes();
    let len = valid.len();
    let (v1, v2) = (valid.clone(), valid);
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..2048),
        (0..len).prop_map(move |cut| v1[..cut].to_vec()),
        prop::collection::vec((0..len, any::<u8>()), 1..8).prop_map(move |muts| {
            let mut v = v2.clone();
            for (i, b) in muts {
                v[i] = b;
            }
            v
        }),
        prop::collection::vec(
            prop::sample::select(vec![
                "{",
                "}",
                "\"type\":",
                "\"user\"",
                "\"message\"",
                ":",
                ",",
                "\n",
                "[",
                "]",
                "\"content\"",
                "null",
                "\u{0}",
                "\u{feff}"
            ]),
            0..40
        )
        .prop_map(|parts| parts.concat().into_bytes()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        max_shrink_iters: 24,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_crash_the_server(bytes in file_bytes()) {
        let s = corpus_with(|p| {
            p.write_file(&format!("{FUZZ}.jsonl"), &bytes);
        });
        assert_healthy(&s);
        let r = s.call_tool("search_conversations", json!({"query": "zebra quokka user"}));
        prop_assert!(!r.is_error, "{}", r.text);
        s.assert_clean_stdout();
    }

    #[test]
    fn record_sequences_follow_the_turn_rules(first in words(), ops in prop::collection::vec(op(), 0..24)) {
        let mut model = Model::default();
        let s = corpus_with(|p| {
            let mut w = p.session(FUZZ);
            model = write_ops(&mut w, &first, &ops);
        });
        let st = assert_healthy(&s);
        prop_assert!(
            st["skipped_lines"].as_u64().unwrap() >= model.malformed as u64,
            "skipped_lines {} < {} malformed lines", st["skipped_lines"], model.malformed
        );
        let conv = s.read_conversation(FUZZ);
        prop_assert_eq!(conv["total_turns"].as_u64().unwrap(), model.users.len() as u64);
        let got: Vec<String> = conv["turns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["user_text"].as_str().unwrap().trim().to_string())
            .collect();
        prop_assert_eq!(&got, &model.users);
        // every vocabulary word finds exactly the turns whose user/assistant text contains it
        for word in VOCAB {
            let mut want: BTreeMap<u64, ()> = BTreeMap::new();
            for (i, set) in model.words.iter().enumerate() {
                if set.contains(*word) {
                    want.insert(i as u64, ());
                }
            }
            let hits: BTreeMap<u64, ()> = hit_keys(&s.search_with(json!({"query": word, "limit": 100})))
                .into_iter()
                .filter(|(sid, _)| sid == FUZZ)
                .map(|(_, n)| (n, ()))
                .collect();
            prop_assert_eq!(hits, want, "query {:?}", word);
        }
        prop_assert_eq!(&s.search("thinkonlyword")["total"], &json!(0));
        prop_assert_eq!(&s.search("resultonlyword")["total"], &json!(0));
        s.assert_clean_stdout();
    }
}
