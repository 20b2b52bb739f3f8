//! Host fit, schemas (issue point 5) and host conventions: tool schemas without non-standard
//! `format` values, `$ref`s or `[X, "null"]` type arrays; optional parameters simply not
//! required; closed sets as `enum`s; a compact `tools/list`; short server instructions; and the
//! official TypeScript SDK client driving every tool and validating each result against its
//! output schema (`scripts/sdk-client`, when Node and its packages are installed).

use crate::common::fixture::ProjectsDir;
use crate::common::raw::{ERAS, Raw};
use serde_json::{Value, json};
use std::path::Path;

/// `format` values JSON Schema defines.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "uuid",
    "regex",
];

/// Paths in `v` that some host rejects or warns about.
fn problems(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                let here = format!("{at}/{k}");
                let bad = match k.as_str() {
                    "$ref" | "$defs" | "anyOf" | "oneOf" | "allOf" => true,
                    "type" => child.is_array(),
                    "format" => child
                        .as_str()
                        .is_none_or(|f| !STANDARD_FORMATS.contains(&f)),
                    _ => false,
                };
                if bad {
                    out.push(format!("{here} = {child}"));
                }
                problems(child, &here, out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                problems(child, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn tools(s: &mut Raw) -> (Vec<Value>, usize) {
    let r = s.call("tools/list", json!({}));
    let size = r.to_string().len();
    (
        r["result"]["tools"].as_array().expect("tools").clone(),
        size,
    )
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn schemas_are_portable_with_enums_for_closed_sets() {
    let dir = ProjectsDir::new();
    for era in ERAS {
        let mut s = Raw::start(&["--projects-dir", dir.path_str()], &[], era);
        let (tools, size) = tools(&mut s);
        let mut bad = Vec::new();
        for t in &tools {
            problems(&t["inputSchema"], &format!("{}/input", t["name"]), &mut bad);
            problems(
                &t["outputSchema"],
                &format!("{}/output", t["name"]),
                &mut bad,
            );
        }
        assert!(
            bad.is_empty(),
            "{era:?}: non-portable schema parts:\n{}",
            bad.join("\n")
        );
        let search = &tool(&tools, "search_conversations")["inputSchema"];
        assert_eq!(search["required"], json!(["query"]));
        assert_eq!(
            search["properties"]["role"]["enum"],
            json!(["user", "assistant"])
        );
        assert_eq!(
            search["properties"]["sort"]["enum"],
            json!(["relevance", "recent"])
        );
        assert!(
            search["properties"]["source"]["enum"]
                .as_array()
                .is_some_and(|e| e.contains(&json!("claude")))
        );
        assert_eq!(search["properties"]["limit"]["type"], "integer");
        let history = &tool(&tools, "find_file_history")["outputSchema"];
        let op = &history["properties"]["results"]["items"]["properties"]["operation"];
        assert_eq!(op["enum"], json!(["read", "edit", "write"]), "{history}");
        // compact: was 22,038 bytes with six tools, 26,974 with seven (recent_context, scope,
        // 17 sources) before the portable schemas; ~17,750 then, ~18,800 with the durable
        // store's fields (source_present, source_missing_since, index_status.store)
        assert!(size < 19_500, "{era:?}: tools/list is {size} bytes");
    }
}

#[test]
fn instructions_are_short_and_name_what_the_tools_are_for() {
    let dir = ProjectsDir::new();
    let mut s = Raw::spawn(
        &["--projects-dir", dir.path_str()],
        &[],
        crate::common::raw::Era::Init("2025-06-18"),
    );
    let init = s.call(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let text = init["result"]["instructions"]
        .as_str()
        .expect("instructions");
    assert!(text.len() < 2048, "{} bytes", text.len());
    for word in [
        "search_conversations",
        "read_turn",
        "find_file_history",
        "past",
        "sessions",
        "conversations",
        "history",
    ] {
        assert!(text.contains(word), "instructions lack {word:?}: {text}");
    }
}

#[test]
fn optional_nulls_are_accepted_as_absent() {
    let dir = ProjectsDir::new();
    dir.project("-home-u-work-nulls")
        .session("nulls-1")
        .exchange("zebracorn null prompt", "answer");
    for era in ERAS {
        let mut s = Raw::start(&["--projects-dir", dir.path_str()], &[], era);
        crate::common::poll_until_desc("the index", std::time::Duration::from_secs(30), || {
            (s.tool_ok("index_status", json!({}))["complete"] == true).then_some(())
        });
        let r = s.tool_ok(
            "search_conversations",
            json!({"query": "zebracorn", "limit": null, "role": null, "sort": null}),
        );
        assert_eq!(r["total"], 1, "{era:?}: {r}");
    }
}

/// The TypeScript SDK client of `scripts/sdk-client`, against the binary under test. Skipped
/// (visibly) when Node or the client's packages are missing; CI installs them and runs it.
#[test]
fn the_typescript_sdk_client_drives_every_tool_and_validates_every_result() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sdk-client");
    let node_ok = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node_ok || !root.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        crate::common::skip(&format!(
            "the TypeScript SDK client needs node and `npm ci` in `{}` (CI runs it)",
            root.display()
        ));
        return;
    }
    let out = std::process::Command::new("node")
        .arg(root.join("client.mjs"))
        .arg(crate::common::bin_path())
        .env(
            "CLIENT_FIXTURES",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude/projects"),
        )
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "SDK client failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("all tools validated"), "{stdout}\n{stderr}");
}
