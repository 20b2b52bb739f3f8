//! Unit tests of the input judge: replies to unparsable and invalid input, the lifecycle, and
//! batches by protocol version.
use super::*;

fn reply(line: &str, phase: &mut Phase) -> Value {
    match judge(line.as_bytes(), phase) {
        Verdict::One(Action::Reply(v)) => v,
        other => panic!("expected a reply to {line}, got {other:?}"),
    }
}

#[test]
fn unparsable_and_invalid_messages_are_answered() {
    let mut p = Phase::Ready("2025-06-18".into());
    let r = reply(r#"{"jsonrpc":"2.0","id":3,"method":"#, &mut p);
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    let r = reply(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, &mut p);
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(3), json!(-32600))
    );
    let r = reply(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, &mut p);
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    let r = reply(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","arguments":[]}}"#,
        &mut p,
    );
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`arguments`")
    );
    let r = reply(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":{"query":"\ud800"}}}"#,
        &mut p,
    );
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(5), json!(-32602))
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("argument `query`")
    );
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{{"a":{}1{}}}}}"#,
        "[".repeat(3000),
        "]".repeat(3000)
    );
    let r = reply(&deep, &mut p);
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(6), json!(-32600))
    );
}

#[test]
fn lifecycle_is_enforced() {
    let mut p = Phase::New;
    let r = reply(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, &mut p);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
    assert!(matches!(
        judge(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &mut p
        ),
        Verdict::Nothing
    ));
    let init = r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert!(matches!(
        judge(init.as_bytes(), &mut p),
        Verdict::One(Action::Forward(_))
    ));
    assert_eq!(p, Phase::Initializing(RequestId::Number(2)));
    let r = reply(init, &mut p);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already initialized")
    );
    let mut q = Phase::New;
    let inline = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    assert!(matches!(
        judge(inline.as_bytes(), &mut q),
        Verdict::One(Action::Forward(_))
    ));
    assert_eq!(q, Phase::Inline("2026-07-28".into()));
    let r = reply("{", &mut q);
    assert!(r.get("id").is_none(), "{r}");
}

#[test]
fn batches_follow_the_protocol_version() {
    let mut p = Phase::Ready("2025-06-18".into());
    let r = reply(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, &mut p);
    assert_eq!(r["error"]["code"], -32600);
    let mut p = Phase::Ready("2025-03-26".into());
    match judge(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},3]"#, &mut p) {
        Verdict::Batch(a) => assert_eq!(a.len(), 2),
        other => panic!("{other:?}"),
    }
    let r = reply("[]", &mut p);
    assert_eq!(r["error"]["code"], -32600);
}
