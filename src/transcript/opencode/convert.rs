//! From OpenCode records to a conversation, whatever the storage: message and part JSON (the
//! database's `data` columns and the legacy storage files hold the same objects), the tool
//! name → kind mapping, turn grouping and session metadata.
use crate::transcript::lenient::{self, LBool, LNum, LStr};
use crate::transcript::tools::patch_calls;
use crate::transcript::{At, ConvMeta, ConvState, ToolCall, ToolKind, TurnBuilder};
use serde::Deserialize;
use serde_json::value::RawValue;
use xxhash_rust::xxh3::xxh3_64;

pub(crate) const FORMAT: &str = "opencode";

/// `opencode:<sessionID>`.
pub(crate) fn conversation_id(session: &str) -> String {
    format!("{FORMAT}:{session}")
}

/// What a session row (or session file) says about the conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SessionInfo {
    pub id: String,
    pub parent_id: Option<String>,
    pub title: Option<String>,
    pub directory: Option<String>,
    /// The session's agent (newer databases), a fallback for a child session's agent type.
    pub agent: Option<String>,
    pub time_created: Option<i64>,
    pub time_updated: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MessageRole {
    User,
    Assistant,
    Other,
}

/// The fields of a message's info we use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MessageInfo {
    pub role: MessageRole,
    pub created: Option<i64>,
    /// Agent that handled a user message (`build`, `general`, …).
    pub agent: Option<String>,
    /// Working directory recorded on assistant messages.
    pub cwd: Option<String>,
}

/// A part reduced to what is indexed. Reasoning, tool outputs, files, steps are dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// `human` is false for `synthetic` or `ignored` text.
    Text {
        text: String,
        human: bool,
    },
    /// One call, or one per file for a patch.
    Tool(Vec<ToolCall>),
    Other,
}

/// One message with its parts, ready to be ordered.
#[derive(Debug, Clone)]
pub(crate) struct Message {
    pub id: String,
    /// Sort key: the row's `time_created` (or the info's `time.created`).
    pub created: i64,
    pub info: MessageInfo,
    /// (part id, part), ordered by id before use.
    pub parts: Vec<(String, Part)>,
}

#[derive(Deserialize, Default)]
struct Time {
    #[serde(default)]
    created: LNum,
}

#[derive(Deserialize, Default)]
struct PathInfo<'a> {
    #[serde(borrow, default)]
    cwd: LStr<'a>,
}

#[derive(Deserialize)]
struct MessageWire<'a> {
    #[serde(borrow, default)]
    role: LStr<'a>,
    #[serde(borrow, default)]
    time: Option<&'a RawValue>,
    #[serde(borrow, default)]
    agent: LStr<'a>,
    #[serde(borrow, default)]
    path: Option<&'a RawValue>,
}

/// Parses a message's info JSON.
pub(crate) fn parse_message(json: &str) -> Result<MessageInfo, String> {
    let w: MessageWire = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let role = match w.role.as_deref() {
        Some("user") => MessageRole::User,
        Some("assistant") => MessageRole::Assistant,
        _ => MessageRole::Other,
    };
    let time: Time = w.time.and_then(lenient::parse).unwrap_or_default();
    let path: PathInfo = w.path.and_then(lenient::parse).unwrap_or_default();
    Ok(MessageInfo {
        role,
        created: time.created.0,
        agent: w.agent.non_empty().map(str::to_owned),
        cwd: path.cwd.non_empty().map(str::to_owned),
    })
}

#[derive(Deserialize)]
struct PartWire<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(default)]
    synthetic: LBool,
    #[serde(default)]
    ignored: LBool,
    #[serde(borrow, default)]
    tool: LStr<'a>,
    #[serde(rename = "callID", borrow, default)]
    call_id: LStr<'a>,
    #[serde(borrow, default)]
    state: Option<&'a RawValue>,
}

/// Only the input of a tool state: `output`, `error`, `metadata` are skipped unread.
#[derive(Deserialize, Default)]
struct State<'a> {
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct ToolInput<'a> {
    #[serde(rename = "filePath", borrow, default)]
    file_path: LStr<'a>,
    #[serde(borrow, default)]
    path: LStr<'a>,
    #[serde(borrow, default)]
    content: LStr<'a>,
    #[serde(borrow, default)]
    command: LStr<'a>,
    #[serde(borrow, default)]
    pattern: LStr<'a>,
    #[serde(borrow, default)]
    subagent_type: LStr<'a>,
    #[serde(borrow, default)]
    description: LStr<'a>,
    #[serde(borrow, default)]
    url: LStr<'a>,
    #[serde(borrow, default)]
    query: LStr<'a>,
    #[serde(rename = "patchText", borrow, default)]
    patch_text: LStr<'a>,
}

/// What an OpenCode tool does, by name.
pub(crate) fn tool_kind(name: &str) -> ToolKind {
    match name {
        "read" => ToolKind::Read,
        "write" => ToolKind::Write,
        "edit" | "patch" | "multiedit" | "apply_patch" => ToolKind::Edit,
        "bash" => ToolKind::Shell,
        "grep" | "glob" | "list" => ToolKind::Search,
        "task" => ToolKind::Agent,
        "webfetch" | "websearch" | "codesearch" => ToolKind::Web,
        _ => ToolKind::Other,
    }
}

/// The normalised call(s) of a `tool` part, from its name and input only: one per file for a
/// patch (`patchText`), else one.
pub(crate) fn tool_calls(
    id: Option<String>,
    name: &str,
    input: Option<&RawValue>,
) -> Vec<ToolCall> {
    let args: ToolInput = input.and_then(lenient::parse).unwrap_or_default();
    if let Some(patch) = args.patch_text.as_deref() {
        return patch_calls(id, name, patch);
    }
    vec![tool_call(id, name, args)]
}

fn tool_call(id: Option<String>, name: &str, args: ToolInput) -> ToolCall {
    let kind = tool_kind(name);
    let mut call = ToolCall {
        id,
        name: name.to_owned(),
        kind,
        ..ToolCall::default()
    };
    match kind {
        ToolKind::Read | ToolKind::Edit => call.file = args.file_path.into_owned(),
        ToolKind::Write => {
            call.chars = args.content.as_deref().map(|c| c.chars().count() as u64);
            call.file = args.file_path.into_owned();
        }
        ToolKind::Shell => call.command = args.command.into_owned(),
        ToolKind::Search => call.pattern = args.pattern.into_owned().or(args.path.into_owned()),
        ToolKind::Agent => {
            call.agent_type = args.subagent_type.into_owned();
            call.description = args.description.into_owned();
        }
        ToolKind::Web => {
            call.url = args.url.into_owned();
            call.query = args.query.into_owned();
        }
        ToolKind::Browser | ToolKind::Other => {}
    }
    call
}

/// Parses a part's JSON.
pub(crate) fn parse_part(json: &str) -> Result<Part, String> {
    let w: PartWire = serde_json::from_str(json).map_err(|e| e.to_string())?;
    Ok(match w.kind.as_deref() {
        Some("text") => Part::Text {
            text: w.text.into_owned().unwrap_or_default(),
            human: !w.synthetic.0 && !w.ignored.0,
        },
        Some("tool") => {
            let state: State = w.state.and_then(lenient::parse).unwrap_or_default();
            let name = w.tool.as_deref().unwrap_or("unknown");
            Part::Tool(tool_calls(w.call_id.into_owned(), name, state.input))
        }
        _ => Part::Other,
    })
}

/// `New session - <ISO date>` and `Child session - <ISO date>`: OpenCode's placeholder titles.
fn is_default_title(title: &str) -> bool {
    ["New session - ", "Child session - "].iter().any(|p| {
        title.strip_prefix(p).is_some_and(|rest| {
            rest.len() >= 10 && rest.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        })
    })
}

/// `Investigate flaky test (@general subagent)` → (`Investigate flaky test`, `general`).
fn split_subagent_title(title: &str) -> Option<(&str, &str)> {
    let rest = title.strip_suffix(" subagent)")?;
    let at = rest.rfind(" (@")?;
    Some((&rest[..at], &rest[at + 3..]))
}

/// Builds the conversation of one session from its messages (any order).
pub(crate) fn build(session: &SessionInfo, mut messages: Vec<Message>) -> ConvState {
    messages.sort_by(|a, b| (a.created, &a.id).cmp(&(b.created, &b.id)));
    let mut meta = ConvMeta {
        cwd: session.directory.clone().filter(|d| !d.trim().is_empty()),
        ai_title: session
            .title
            .clone()
            .filter(|t| !t.trim().is_empty() && !is_default_title(t)),
        ..ConvMeta::default()
    };
    let mut turns = TurnBuilder::default();
    let mut user_agent: Option<String> = None;
    for mut m in messages {
        m.parts.sort_by(|a, b| a.0.cmp(&b.0));
        let ts = m.info.created.or(Some(m.created));
        meta.note_timestamp(ts);
        let at = At {
            offset: 0,
            timestamp: ts,
            dup_key: None,
        };
        match m.info.role {
            MessageRole::User => {
                let Some(text) = human_text(&m.parts) else {
                    turns.touch(ts);
                    continue;
                };
                meta.first_prompt.get_or_insert_with(|| text.clone());
                if user_agent.is_none() {
                    user_agent = m.info.agent.clone();
                }
                let key = Some(xxh3_64(conversation_id(&m.id).as_bytes()));
                turns.prompt(At { dup_key: key, ..at }, text);
            }
            MessageRole::Assistant => {
                if meta.cwd.is_none() {
                    meta.cwd = m.info.cwd.clone();
                }
                add_reply(&mut turns, at, m.parts);
            }
            MessageRole::Other => {}
        }
    }
    if meta.first_ts.is_none() {
        meta.note_timestamp(session.time_created);
        meta.note_timestamp(session.time_updated);
    }
    if let Some(parent) = &session.parent_id {
        note_parent(&mut meta, session, parent, user_agent);
    }
    let turn_count = turns.turn_count();
    ConvState {
        id: conversation_id(&session.id),
        meta,
        completed: turns.finish_all(),
        open: None,
        turn_count,
    }
}

/// A user message's human text (synthetic and empty parts left out), or `None` when it has
/// none.
fn human_text(parts: &[(String, Part)]) -> Option<String> {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|(_, p)| match p {
            Part::Text { text, human: true } if !text.trim().is_empty() => Some(text.trim()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// An assistant message's text and tool calls, added to the open turn.
fn add_reply(turns: &mut TurnBuilder, at: At, parts: Vec<(String, Part)>) {
    for (_, part) in parts {
        match part {
            Part::Text { text, .. } => turns.assistant_text(at, None, &text),
            Part::Tool(calls) => {
                for call in calls {
                    turns.tool_call(at, call);
                }
            }
            Part::Other => {}
        }
    }
}

/// A child session's parent and what kind of sub-agent it is: the agent of its first user
/// message, else the session's, else the one its title names; described by its title.
fn note_parent(
    meta: &mut ConvMeta,
    session: &SessionInfo,
    parent: &str,
    user_agent: Option<String>,
) {
    meta.parent_id = Some(conversation_id(parent));
    let split = session.title.as_deref().and_then(split_subagent_title);
    meta.agent_type = user_agent
        .or_else(|| session.agent.clone())
        .or_else(|| split.map(|(_, a)| a.to_owned()));
    meta.agent_description = match split {
        Some((d, _)) => Some(d.to_owned()),
        None => meta.ai_title.clone(),
    };
}

/// A fingerprint of what a conversation would put in the index, to skip re-indexing sessions
/// whose rows changed in ways that are not indexed (tool outputs, step parts, costs).
pub(crate) fn content_hash(state: &ConvState) -> u64 {
    xxh3_64(
        format!(
            "{:?}|{:?}|{}",
            state.meta, state.completed, state.turn_count
        )
        .as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_inputs_by_kind() {
        let raw = |s: &str| serde_json::from_str::<Box<RawValue>>(s).expect("json");
        let one = |name: &str, input: &str| {
            let mut v = tool_calls(None, name, Some(&raw(input)));
            assert_eq!(v.len(), 1);
            v.remove(0)
        };
        let w = one("write", r#"{"filePath":"/a","content":"héllo"}"#);
        assert_eq!(
            (w.kind, w.file.as_deref(), w.chars),
            (ToolKind::Write, Some("/a"), Some(5))
        );
        let l = one("list", r#"{"path":"src"}"#);
        assert_eq!(
            (l.kind, l.pattern.as_deref()),
            (ToolKind::Search, Some("src"))
        );
        let t = one("task", r#"{"subagent_type":"general","description":"d"}"#);
        assert_eq!(
            (t.agent_type.as_deref(), t.description.as_deref()),
            (Some("general"), Some("d"))
        );
        let odd = one("read", r#"{"filePath":7}"#);
        assert_eq!((odd.kind, odd.file), (ToolKind::Read, None));
        let patch = r#"{"patchText":"*** Begin Patch\n*** Update File: a.rs\n*** Update File: b.rs\n*** End Patch"}"#;
        let files: Vec<_> = tool_calls(Some("c".into()), "apply_patch", Some(&raw(patch)))
            .into_iter()
            .map(|c| (c.kind, c.file))
            .collect();
        assert_eq!(
            files,
            vec![
                (ToolKind::Edit, Some("a.rs".into())),
                (ToolKind::Edit, Some("b.rs".into()))
            ]
        );
        assert_eq!(tool_kind("mcp_server_tool"), ToolKind::Other);
    }

    #[test]
    fn parts_keep_inputs_and_drop_outputs() {
        let p = parse_part(
            r#"{"type":"tool","callID":"c","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"SECRET","metadata":{"exit":1}}}"#,
        )
        .expect("part");
        let Part::Tool(call) = p else {
            panic!("tool part")
        };
        assert_eq!(call[0].command.as_deref(), Some("ls"));
        assert!(!format!("{call:?}").contains("SECRET"));
        assert_eq!(
            parse_part(r#"{"type":"reasoning","text":"x"}"#),
            Ok(Part::Other)
        );
        assert_eq!(
            parse_part(r#"{"type":"text","text":"x","synthetic":true}"#),
            Ok(Part::Text {
                text: "x".into(),
                human: false
            })
        );
        assert!(parse_part("[1,2").is_err());
        let m = parse_message(r#"{"role":"assistant","time":5,"path":{"cwd":"/w"}}"#).expect("msg");
        assert_eq!(
            (m.role, m.created, m.cwd.as_deref()),
            (MessageRole::Assistant, None, Some("/w"))
        );
    }

    #[test]
    fn titles() {
        assert!(is_default_title("New session - 2026-01-02T10:00:00.000Z"));
        assert!(is_default_title("Child session - 2026-01-02T10:00:00.000Z"));
        assert!(!is_default_title("New session - ideas"));
        assert_eq!(
            split_subagent_title("Investigate flaky test (@general subagent)"),
            Some(("Investigate flaky test", "general"))
        );
        assert_eq!(split_subagent_title("Plain title"), None);
    }
}
