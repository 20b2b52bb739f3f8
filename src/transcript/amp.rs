//! Amp threads (`$XDG_DATA_HOME/amp/threads/T-<uuid>.json`, default
//! `~/.local/share/amp/threads`): one JSON document per thread, rewritten in place, so each
//! file is re-read whole when it changes.
//!
//! A thread is `{v, id, created (epoch ms), title, messages:[…], env:{initial:{trees:[{uri,
//! repository:{ref}}]}}}`; messages are `{role, messageId, content:[blocks], meta:{sentAt},
//! usage:{timestamp}}` with Anthropic-style blocks. A user message with text is a prompt; one
//! that only carries `tool_result` blocks is tool output. Thinking blocks and tool results are
//! never indexed. The working directory is the first tree's `file://` URI and the branch its
//! repository `ref`.
use super::blocks::{self, Blocks};
use super::dir::files_in;
use super::lenient::{self, LNum, LStr};
use super::reread::DocumentReader;
use super::{Adapter, At, ConvMeta, ConvState, Reader, Role, SourceFile, TurnBuilder};
use crate::util::glob::Glob;
use crate::util::time::any_ms;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) const FORMAT: &str = "amp";

/// The Amp adapter.
pub(crate) struct Amp;

impl Adapter for Amp {
    fn name(&self) -> &'static str {
        FORMAT
    }

    /// `$XDG_DATA_HOME/amp/threads` when that is set (as Amp itself does), else
    /// `~/.local/share/amp/threads`.
    fn default_root(&self, home: &Path) -> PathBuf {
        let data = match std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
            Some(d) if d.is_absolute() => d,
            _ => home.join(".local").join("share"),
        };
        data.join("amp").join("threads")
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

/// `T-<uuid>.json`.
fn source(path: &Path) -> Option<SourceFile> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".json")?;
    stem.starts_with("T-").then(|| SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group: None,
        role: Role::Session {
            id: format!("{FORMAT}:{stem}"),
        },
    })
}

#[derive(Deserialize)]
struct Thread<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(default)]
    created: LNum,
    #[serde(borrow, default)]
    title: LStr<'a>,
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    env: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: LStr<'a>,
    #[serde(borrow, default)]
    content: Blocks<'a>,
    #[serde(borrow, default)]
    meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

/// `{sentAt}` of a message's `meta`, `{timestamp}` of its `usage`.
#[derive(Deserialize, Default)]
struct Stamp<'a> {
    #[serde(rename = "sentAt", default)]
    sent_at: LNum,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
}

fn stamp(raw: Option<&RawValue>) -> Stamp<'_> {
    raw.and_then(lenient::parse).unwrap_or_default()
}

/// A `file://` URI as a path (percent escapes decoded).
pub(crate) fn file_uri_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok().filter(|p| !p.is_empty())
}

/// Working directory and branch of the thread's first tree.
fn workspace(env: Option<&RawValue>) -> (Option<String>, Option<String>) {
    let v: serde_json::Value = env.and_then(lenient::parse).unwrap_or_default();
    let tree = v.pointer("/initial/trees/0");
    let text = |p: &str| tree.and_then(|t| t.pointer(p)).and_then(|s| s.as_str());
    let cwd = text("/uri").and_then(file_uri_path);
    let branch = text("/repository/ref").map(|r| r.strip_prefix("refs/heads/").unwrap_or(r));
    (cwd, branch.filter(|b| !b.is_empty()).map(str::to_owned))
}

/// One thread document as a conversation.
fn conversation(raw: &str, fallback: &str) -> io::Result<ConvState> {
    let t: Thread = serde_json::from_str(raw)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    let id =
        t.id.non_empty()
            .map_or_else(|| fallback.to_owned(), |i| format!("{FORMAT}:{i}"));
    let (cwd, git_branch) = workspace(t.env);
    let created = t.created.0.and_then(|c| any_ms(Some(c), None));
    let mut meta = ConvMeta {
        recorded_session_id: t.id.non_empty().map(str::to_owned),
        cwd,
        git_branch,
        ai_title: t.title.non_empty().map(str::to_owned),
        created_ts: created,
        ..ConvMeta::default()
    };
    meta.note_timestamp(created);
    let mut turns = TurnBuilder::default();
    for (i, raw) in t.messages.unwrap_or_default().into_iter().enumerate() {
        let Some(m) = lenient::parse::<Message>(raw) else {
            continue;
        };
        let (sent, used) = (stamp(m.meta), stamp(m.usage));
        let timestamp = any_ms(sent.sent_at.0, used.timestamp.as_deref());
        meta.note_timestamp(timestamp);
        let at = At {
            offset: i as u64,
            timestamp,
            dup_key: None,
        };
        match m.role.as_deref() {
            Some("user") if !blocks::is_tool_output(&m.content) => {
                let text = blocks::texts(&m.content).join("\n").trim().to_owned();
                if text.is_empty() {
                    turns.touch(timestamp);
                    continue;
                }
                meta.first_prompt.get_or_insert_with(|| text.clone());
                turns.prompt(at, text);
            }
            Some("assistant") => {
                for text in blocks::texts(&m.content) {
                    turns.assistant_text(at, None, text.trim());
                }
                for call in blocks::tool_calls(&m.content) {
                    turns.tool_call(at, call);
                }
            }
            _ => turns.touch(timestamp),
        }
    }
    Ok(ConvState::finished(id, meta, turns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_workspace() {
        assert_eq!(file_uri_path("file:///a%20b/c").as_deref(), Some("/a b/c"));
        assert_eq!(file_uri_path("https://x"), None);
        let env = r#"{"initial":{"trees":[{"uri":"file:///w/r","repository":{"ref":"refs/heads/dev"}}]}}"#;
        let raw: &RawValue = serde_json::from_str(env).unwrap();
        assert_eq!(
            workspace(Some(raw)),
            (Some("/w/r".to_owned()), Some("dev".to_owned()))
        );
    }
}
