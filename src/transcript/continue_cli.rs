//! Continue CLI sessions (`~/.continue/sessions/<sessionId>.json`, or under
//! `$CONTINUE_GLOBAL_DIR`): one JSON document per session, rewritten in place, so each file is
//! re-read whole when it changes.
//!
//! A session is `{sessionId, title, workspaceDirectory, history:[{message:{role, content,
//! toolCalls?}, contextItems, toolCallStates?}]}`. A `user` message's text is a prompt (the
//! context items attached to it are not); an `assistant` message's text is the reply and its
//! `toolCalls` (`{id, function:{name, arguments}}`, arguments JSON in a string) the tools it
//! used. Tool outputs (`toolCallStates[].output`, `tool` messages) and thinking are never
//! indexed. The files carry no per-message times.
use super::amp::file_uri_path;
use super::dir::files_in;
use super::lenient::{self, Content, LStr};
use super::reread::DocumentReader;
use super::tools::calls_of;
use super::{Adapter, At, ConvMeta, ConvState, Reader, Role, SourceFile, TurnBuilder};
use crate::util::glob::Glob;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) const FORMAT: &str = "continue";

/// The index of sessions Continue keeps beside them (not a session).
const INDEX: &str = "sessions.json";
/// The title Continue gives a session before it names it.
const UNNAMED: &str = "New Session";

/// The Continue CLI adapter.
pub(crate) struct Continue;

impl Adapter for Continue {
    fn name(&self) -> &'static str {
        FORMAT
    }

    /// `$CONTINUE_GLOBAL_DIR/sessions` when that is set (as Continue itself does), else
    /// `~/.continue/sessions`.
    fn default_root(&self, home: &Path) -> PathBuf {
        let global = match std::env::var_os("CONTINUE_GLOBAL_DIR").map(PathBuf::from) {
            Some(d) if d.is_absolute() => d,
            _ => home.join(".continue"),
        };
        global.join("sessions")
    }

    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        files_in(root, source).collect()
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        (path.parent()? == root).then(|| source(path))?
    }

    fn reader(&self, _file: &SourceFile) -> Reader {
        Reader::Unit(Box::new(DocumentReader::new(FORMAT, conversation)))
    }
}

/// `<sessionId>.json`.
fn source(path: &Path) -> Option<SourceFile> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".json").filter(|_| name != INDEX)?;
    (!stem.is_empty()).then(|| SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: None,
        role: Role::Session {
            id: format!("{FORMAT}:{stem}"),
        },
    })
}

#[derive(Deserialize)]
struct Session<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LStr<'a>,
    #[serde(borrow, default)]
    title: LStr<'a>,
    #[serde(rename = "workspaceDirectory", borrow, default)]
    workspace: LStr<'a>,
    #[serde(borrow, default)]
    history: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: LStr<'a>,
    #[serde(borrow, default)]
    content: Content<'a, Part<'a>>,
    #[serde(rename = "toolCalls", borrow, default)]
    tool_calls: Option<Vec<Call<'a>>>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    text: LStr<'a>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

fn text_of(content: &Content<Part>) -> String {
    match content {
        Content::Text(t) => t.trim().to_owned(),
        Content::Blocks(parts) => parts
            .iter()
            .filter(|p| p.kind.as_deref().is_none_or(|k| k == "text"))
            .filter_map(|p| p.text.non_empty())
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// One session document as a conversation.
fn conversation(raw: &str, fallback: &str) -> io::Result<ConvState> {
    let s: Session = serde_json::from_str(raw)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    let id =
        (s.session_id.non_empty()).map_or_else(|| fallback.to_owned(), |i| format!("{FORMAT}:{i}"));
    let cwd = s
        .workspace
        .non_empty()
        .map(|w| file_uri_path(w).unwrap_or_else(|| w.to_owned()));
    let mut meta = ConvMeta {
        recorded_session_id: s.session_id.non_empty().map(str::to_owned),
        cwd,
        ai_title: s
            .title
            .non_empty()
            .filter(|t| *t != UNNAMED)
            .map(str::to_owned),
        ..ConvMeta::default()
    };
    let mut turns = TurnBuilder::default();
    for (i, raw) in s.history.unwrap_or_default().into_iter().enumerate() {
        let Some(m) = lenient::parse::<Item>(raw).and_then(|item| item.message) else {
            continue;
        };
        let at = At {
            offset: i as u64,
            timestamp: None,
            dup_key: None,
        };
        match m.role.as_deref() {
            Some("user") => {
                let text = text_of(&m.content);
                if !text.is_empty() {
                    meta.first_prompt.get_or_insert_with(|| text.clone());
                    turns.prompt(at, text);
                }
            }
            Some("assistant") => {
                turns.assistant_text(at, None, &text_of(&m.content));
                for c in m.tool_calls.unwrap_or_default() {
                    let Some(f) = c.function else { continue };
                    let name = f.name.non_empty().unwrap_or("unknown");
                    for call in calls_of(c.id.non_empty().map(str::to_owned), name, f.arguments) {
                        turns.tool_call(at, call);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(ConvState::finished(id, meta, turns))
}
