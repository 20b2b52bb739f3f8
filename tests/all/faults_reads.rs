//! Faults, point 9: `read_turn` and `read_conversation` stream the turn's bytes, so a turn
//! holding a huge tool result (here 40 MB, in a record of twice that with its `toolUseResult`)
//! reads back right: prompt, reply, tool call and the turns around it, none of the output.
//! Memory is measured by `scripts/bench-read-memory`, not here. Lines of every length, many
//! straddling the first build's read boundaries, are each read whole and once.

use serde_json::{Value, json};

use crate::common::fixture::ProjectsDir;
use crate::common::serve;

const ID: &str = "5e790000-0000-4000-8000-000000000009";
const BIG: usize = 40 << 20;

fn tool_names(turn: &Value) -> Vec<String> {
    turn["tools_used"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["tool"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn fault_a_turn_with_a_huge_tool_result_reads_back_without_it() {
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-bigread").session(ID);
    w.exchange("beforeword first prompt", "first reply");
    w.user("hugeword print the big file");
    w.assistant_block(
        "msg_big_call",
        json!({"type": "tool_use", "id": "toolu_big", "name": "Bash",
            "input": {"command": "cat big.txt"}}),
    );
    // escapes and multi-byte characters all along, as real output has
    let output = "output line \"quoted\" caf\u{e9} \u{1f600}\n".repeat(BIG / 40);
    w.tool_result(
        "toolu_big",
        &output,
        json!({"stdout": output, "stderr": "", "interrupted": false}),
    );
    drop(output);
    w.assistant_text("msg_big_reply", "bigreplyword the file was printed");
    w.exchange("afterword last prompt", "last reply");
    let s = serve(dir);
    assert_eq!(s.search("bigreplyword")["total"], 1);

    let turn = s.read_turn(ID, 1);
    assert_eq!(turn["user_text"], "hugeword print the big file", "{turn}");
    assert_eq!(
        turn["assistant_text"], "bigreplyword the file was printed",
        "{turn}"
    );
    assert_eq!(tool_names(&turn), ["Bash"], "{turn}");
    assert!(!turn.to_string().contains("output line"), "{turn}");

    let conv = s.read_conversation(ID);
    let turns = conv["turns"].as_array().expect("turns");
    let texts: Vec<&str> = turns
        .iter()
        .map(|t| t["user_text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        texts,
        [
            "beforeword first prompt",
            "hugeword print the big file",
            "afterword last prompt"
        ],
        "{conv}"
    );
    assert_eq!(turns[2]["assistant_text"], "last reply", "{conv}");
    assert!(!conv.to_string().contains("output line"));
}

/// Prompts from 1 byte to ~190 KB, so lines end at every place relative to the first build's
/// reads (64 KiB each) and some span several reads: each prompt is one turn, found by the word
/// at its start and the word at its end, and by nothing else.
#[test]
fn fault_lines_straddling_read_boundaries_are_each_read_whole() {
    const TURNS: usize = 60;
    let dir = ProjectsDir::new();
    let mut w = dir.project("-home-u-work-straddle").session(ID);
    for i in 0..TURNS {
        let filler = "lorem ipsum ".repeat((i * 7_919) % 16_000);
        w.exchange(&format!("headword{i} {filler}tailword{i}"), "ok");
    }
    let s = serve(dir);
    for i in 0..TURNS {
        for word in [format!("headword{i}"), format!("tailword{i}")] {
            let found = s.search(&word);
            assert_eq!(found["total"], 1, "{word}: {found}");
        }
    }
    assert_eq!(s.search("lorem")["total"], TURNS - 1);
}
