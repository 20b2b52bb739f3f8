//! The scanner against serde: whatever it accepts, serde accepts as the same record.
use crate::transcript::claude::Record;
use proptest::prelude::*;

/// The scanner's reading of `line`, with fresh scratch space.
fn record(line: &[u8]) -> Option<Record<'_>> {
    let mut rec = Record::default();
    super::record(line, &mut Vec::new(), &mut rec).map(|()| rec)
}

fn serde(line: &[u8]) -> Option<Record<'_>> {
    serde_json::from_slice(line).ok()
}

/// Lines as Claude Code writes them (and a few it might): the scanner reads them all.
const USUAL: &[&str] = &[
    r#"{"parentUuid":"p","isSidechain":false,"message":{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Some \"quoted\" text\nand a line é ✓"},{"type":"thinking","thinking":"hmm","signature":"x"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la","description":"list"}}],"stop_reason":null,"usage":{"input_tokens":4,"cache_read_input_tokens":66002,"server_tool_use":{"web_search_requests":0},"iterations":[{"input_tokens":4,"x":1.5e-3,"y":-0}],"speed":"standard"}},"requestId":"r","type":"assistant","uuid":"u1","timestamp":"2026-04-23T05:02:13.734Z","userType":"external","cwd":"/home/a","sessionId":"s","version":"2.1.114","gitBranch":""}"#,
    r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"out\tput\u0041\ud83d\ude00","is_error":false}]},"uuid":"u2","timestamp":"2026-04-23T05:02:19.222Z","toolUseResult":{"stdout":"x","stderr":"","interrupted":false,"isImage":false,"list":[[],{},[1,2,{"a":[true,null]}]]},"slug":"zippy"}"#,
    r#"{"type":"user","message":{"role":"user","content":"fix the parser"},"isMeta":true,"isCompactSummary":null,"uuid":"u3"}"#,
    r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}}"#,
    r#"{"type":"attachment","attachment":{"type":"queued_command","prompt":[{"type":"text","text":"and this"}],"isMeta":false},"uuid":"u4"}"#,
    r#"{"type":"summary","summary":"Fixed it","leafUuid":"u3"}"#,
    r#"{"type":"custom-title","customTitle":"T","sessionId":"s"}"#,
    r#"{"type":"ai-title","aiTitle":"A"}"#,
    r#"  { "type" : "file-history-snapshot" , "snapshot" : { } , "message" : null , "attachment" : null }  "#,
    r#"{"type":"assistant","message":{"id":null,"content":[]}}"#,
    r#"{"type":"assistant","message":{"content":null}}"#,
    r#"{}"#,
];

#[test]
fn usual_lines_are_read_as_serde_reads_them() {
    for line in USUAL {
        let fast = record(line.as_bytes()).unwrap_or_else(|| panic!("not read: {line}"));
        assert_eq!(Some(fast), serde(line.as_bytes()), "{line}");
    }
}

/// Lines the scanner leaves to serde, whether serde reads them or not.
#[test]
fn unusual_lines_are_left_to_serde() {
    for line in [
        r#"{"type":"a","type":"b"}"#,
        r#"{"ty\u0070e":"user"}"#,
        r#"{"type":1}"#,
        r#"{"uuid":{"a":1}}"#,
        r#"{"message":["id",[]]}"#,
        r#"{"message":"text"}"#,
        r#"{"type":"user",}"#,
        r#"{"type":"user"} x"#,
        r#"{"type":"user","x":01}"#,
        r#"{"type":"user","x":"a\qb"}"#,
        r#"{"type":"user","x":"a"#,
        r#"["user"]"#,
        "{\"type\":\"us\u{1}er\"}",
    ] {
        assert!(record(line.as_bytes()).is_none(), "{line}");
    }
    assert!(record(b"{\"type\":\"us\xffer\"}").is_none());
    // a bad byte inside a skipped value is serde's business too, and both accept it
    let line = b"{\"type\":\"user\",\"toolUseResult\":\"a\xffb\"}";
    assert_eq!(record(line), serde(line));
    assert!(record(line).is_some());
}

const KEYS: &[&str] = &[
    "type",
    "uuid",
    "timestamp",
    "sessionId",
    "cwd",
    "gitBranch",
    "slug",
    "isMeta",
    "isCompactSummary",
    "summary",
    "leafUuid",
    "customTitle",
    "aiTitle",
    "text",
    "id",
    "name",
    "input",
    "source",
    "prompt",
    "content",
    "other",
    "toolUseResult",
    "a",
];

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,6}".prop_map(|s| format!("\"{s}\"")),
        "\\PC{0,6}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just(r#""a\nb\"c\\d\/e\u00e9\ud83d\ude00""#.to_owned()),
        Just(r#""lone \ud83d here""#.to_owned()),
        Just("\"raw é ✓\"".to_owned()),
    ]
}

fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => string(),
        1 => prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("false".to_owned()),
            Just("0".to_owned()),
            Just("-12.5e+3".to_owned()),
            Just("1E2".to_owned()),
        ],
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|kv| {
                let kv: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", kv.join(","))
            }),
        ]
    })
}

/// A string, `null` or (rarely) anything.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![6 => string(), 1 => Just("null".to_owned()), 1 => value()]
}

fn block() -> impl Strategy<Value = String> {
    let kind = prop::sample::select(vec!["text", "tool_use", "tool_result", "image", "thinking"]);
    (
        kind,
        prop::collection::vec((prop::sample::select(KEYS), field()), 0..4),
    )
        .prop_map(|(kind, kv)| {
            let mut parts = vec![format!("\"type\":\"{kind}\"")];
            parts.extend(kv.iter().map(|(k, v)| format!("\"{k}\":{v}")));
            format!("{{{}}}", parts.join(","))
        })
}

fn content() -> impl Strategy<Value = String> {
    prop_oneof![
        string(),
        prop::collection::vec(block(), 0..4).prop_map(|b| format!("[{}]", b.join(","))),
        value(),
    ]
}

fn line() -> impl Strategy<Value = String> {
    let message = (field(), content(), value())
        .prop_map(|(id, c, u)| format!("{{\"id\":{id},\"content\":{c},\"usage\":{u}}}"));
    let attachment = (field(), content(), field())
        .prop_map(|(k, p, m)| format!("{{\"type\":{k},\"prompt\":{p},\"isMeta\":{m}}}"));
    let member = prop_oneof![
        4 => (prop::sample::select(KEYS), field()).prop_map(|(k, v)| format!("\"{k}\":{v}")),
        2 => message.prop_map(|m| format!("\"message\":{m}")),
        1 => attachment.prop_map(|a| format!("\"attachment\":{a}")),
        1 => value().prop_map(|v| format!("\"message\":{v}")),
    ];
    prop::collection::vec(member, 0..8).prop_map(|m| format!("{{{}}}", m.join(",")))
}

/// One change that may break the line: a byte removed, inserted or replaced, or a cut.
fn mutate(line: &str, kind: u8, at: prop::sample::Index, byte: u8) -> Vec<u8> {
    let mut b = line.as_bytes().to_vec();
    if b.is_empty() {
        return b;
    }
    let i = at.index(b.len());
    let byte = b"{}[]\",:\\ \t\nu0aZ-.eE\x00\x1f\xff\xc3"[byte as usize % 23];
    match kind % 5 {
        0 => {}
        1 => {
            b.remove(i);
        }
        2 => b.insert(i, byte),
        3 => b[i] = byte,
        _ => b.truncate(i),
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn accepts_only_what_serde_reads_the_same(
        line in line(), kind in any::<u8>(), at in any::<prop::sample::Index>(), byte in any::<u8>()
    ) {
        let bytes = mutate(&line, kind, at, byte);
        let slow = serde(&bytes);
        if let Some(fast) = record(&bytes) {
            prop_assert!(slow.is_some(), "scanner read what serde rejects: {}", String::from_utf8_lossy(&bytes));
            prop_assert_eq!(Some(fast), slow);
        }
    }

}

/// The generated lines exercise the scanner's side: of those serde reads, it reads a good share
/// (two thirds; the others hold numbers, lists or objects where text is expected).
#[test]
fn reads_most_generated_lines() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut serde_read, mut both) = (0, 0);
    for _ in 0..2000 {
        let line = line().new_tree(&mut runner).unwrap().current();
        if serde(line.as_bytes()).is_some() {
            serde_read += 1;
            both += usize::from(record(line.as_bytes()).is_some());
        }
    }
    assert!(serde_read > 500, "{serde_read}");
    assert!(both * 3 > serde_read, "{both} of {serde_read}");
}
