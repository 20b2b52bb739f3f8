//! Qwen Code chats (`~/.qwen/projects/<sanitized-cwd>/chats/<session>.jsonl`, archived ones in
//! `chats/archive/`, older releases under `~/.qwen/tmp/<hash>/chats/`): discovery and a reader
//! that replays a chat file whole.
//!
//! Every line is a `ChatRecord` `{uuid, parentUuid, sessionId, timestamp, type, subtype,
//! provenance, cwd, gitBranch, message, systemPayload, …}`; `message` is a Gemini `Content`
//! (`{role, parts:[{text}|{functionCall}|{functionResponse}|{text, thought:true}]}`). Records
//! form a tree: a rewind continues from an earlier record, and the branch it abandoned is no
//! longer part of the chat, so the chat is the chain leading to the last record (plus records
//! not connected to it); the file is re-read whole when it changes. Prompts are `user` records
//! without a `subtype` (or typed mid-turn, `mid_turn_user_message`) whose `provenance` is not
//! the system's; `systemPayload.displayText` is what the human saw and typed. Tool results,
//! thoughts, telemetry and other system records are never indexed. Sidechain records
//! (`isSidechain`, background agents) form sub-agent conversations `qwen:<session>/<agent>`;
//! records copied by `/branch` (`forkedFrom`) are the origin's, not this chat's.
use super::dir::{files_in, sorted_entries};
use super::lenient::{self, LBool, LStr};
use super::tools::calls_of;
use super::{
    Adapter, At, ConvMeta, ConvState, Reader, Role, SourceFile, ToolCall, TurnBuilder, UnitRead,
    UnitReader,
};
use crate::util::glob::Glob;
use crate::util::time::parse_iso;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

pub(crate) const FORMAT: &str = "qwen";

/// The Qwen Code adapter.
pub(crate) struct Qwen;

impl Adapter for Qwen {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn default_root(&self, home: &Path) -> PathBuf {
        home.join(".qwen")
    }

    /// Chats of every project under `root` (`~/.qwen`, its `projects` or `tmp` directory, or
    /// one project directory).
    fn discover(&self, root: &Path, _pattern: &Glob) -> Vec<SourceFile> {
        let mut projects = vec![root.to_owned()];
        for base in [root.to_owned(), root.join("projects"), root.join("tmp")] {
            projects.extend(
                sorted_entries(&base)
                    .into_iter()
                    .filter(|e| e.is_dir)
                    .map(|e| e.path),
            );
        }
        let mut out = Vec::new();
        for p in projects {
            let chats = p.join("chats");
            for dir in [chats.join("archive"), chats] {
                out.extend(files_in(&dir, source));
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn classify(&self, root: &Path, _pattern: &Glob, path: &Path) -> Option<SourceFile> {
        let dir = path.parent()?;
        let chats = match dir.file_name()?.to_str()? {
            "chats" => dir,
            "archive" => dir
                .parent()
                .filter(|p| p.file_name() == Some("chats".as_ref()))?,
            _ => return None,
        };
        chats.starts_with(root).then(|| source(path))?
    }

    fn reader(&self, _file: &SourceFile) -> Reader {
        Reader::Unit(Box::<QwenReader>::default())
    }
}

/// `<session>.jsonl` in a `chats` (or `chats/archive`) directory; the project directory names
/// the project until a record gives the cwd.
fn source(path: &Path) -> Option<SourceFile> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    let chats = path.parent()?;
    let chats = match chats.file_name()? == "archive" {
        true => chats.parent()?,
        false => chats,
    };
    let group = chats.parent()?.file_name()?.to_str().map(str::to_owned);
    (!stem.is_empty()).then(|| SourceFile {
        path: path.to_owned(),
        format: FORMAT,
        group,
        role: Role::Session {
            id: format!("{FORMAT}:{stem}"),
        },
    })
}

/// One line as written (every field optional).
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    uuid: LStr<'a>,
    #[serde(rename = "parentUuid", borrow, default)]
    parent_uuid: LStr<'a>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LStr<'a>,
    #[serde(borrow, default)]
    timestamp: LStr<'a>,
    #[serde(rename = "type", borrow, default)]
    kind: LStr<'a>,
    #[serde(borrow, default)]
    subtype: LStr<'a>,
    #[serde(borrow, default)]
    provenance: LStr<'a>,
    #[serde(borrow, default)]
    cwd: LStr<'a>,
    #[serde(rename = "gitBranch", borrow, default)]
    git_branch: LStr<'a>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(rename = "systemPayload", borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(rename = "isSidechain", default)]
    sidechain: LBool,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: LStr<'a>,
    #[serde(rename = "agentName", borrow, default)]
    agent_name: LStr<'a>,
    #[serde(rename = "forkedFrom", borrow, default)]
    forked_from: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct Content<'a> {
    #[serde(borrow, default)]
    parts: Option<Vec<Part<'a>>>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default)]
    text: LStr<'a>,
    #[serde(default)]
    thought: LBool,
    #[serde(rename = "functionCall", borrow, default)]
    function_call: Option<Call<'a>>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    id: LStr<'a>,
    #[serde(borrow, default)]
    name: LStr<'a>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct Payload<'a> {
    #[serde(rename = "displayText", borrow, default)]
    display_text: LStr<'a>,
    #[serde(rename = "customTitle", borrow, default)]
    custom_title: LStr<'a>,
    #[serde(rename = "titleSource", borrow, default)]
    title_source: LStr<'a>,
    #[serde(rename = "parentSessionId", borrow, default)]
    parent_session_id: LStr<'a>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LStr<'a>,
}

/// What a record contributes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum What {
    Prompt(String),
    Reply(String, Vec<ToolCall>),
    /// A title and whether the human set it.
    Title(String, bool),
    ParentSession(String),
    Nothing,
}

/// A record reduced to what the index needs.
struct Rec {
    uuid: Option<String>,
    parent: Option<String>,
    timestamp: Option<i64>,
    stamp: String,
    cwd: Option<String>,
    branch: Option<String>,
    /// Sub-agent id for sidechain records.
    agent: Option<(String, Option<String>)>,
    /// Copied from another chat by `/branch`: that chat's id.
    forked_from: Option<String>,
    /// A message record (user, assistant, tool result): the ones whose cwd and branch count.
    message: bool,
    /// Can end the chat's chain (snapshot side records do not).
    leaf: bool,
    what: What,
}

/// Provenances of user records the harness wrote.
const NOT_HUMAN: &[&str] = &["goal_control", "goal_runtime", "system"];

fn parts_text(content: &Content) -> String {
    let parts = content.parts.as_deref().unwrap_or_default();
    let texts = parts
        .iter()
        .filter(|p| !p.thought.0)
        .filter_map(|p| p.text.non_empty());
    texts.map(str::trim).collect::<Vec<_>>().join("\n")
}

fn what(l: &Line) -> What {
    let content: Content = l.message.and_then(lenient::parse).unwrap_or_default();
    let payload: Payload = l.payload.and_then(lenient::parse).unwrap_or_default();
    match (l.kind.as_deref(), l.subtype.as_deref()) {
        (Some("user"), None | Some("mid_turn_user_message")) => {
            if l.provenance
                .as_deref()
                .is_some_and(|p| NOT_HUMAN.contains(&p))
            {
                return What::Nothing;
            }
            let shown = payload
                .display_text
                .non_empty()
                .map(|t| t.trim().to_owned());
            let text = shown.unwrap_or_else(|| parts_text(&content));
            if text.is_empty() {
                What::Nothing
            } else {
                What::Prompt(text)
            }
        }
        (Some("assistant"), _) => {
            let calls = content.parts.as_deref().unwrap_or_default().iter();
            let calls = calls
                .filter_map(|p| p.function_call.as_ref())
                .flat_map(|c| {
                    let name = c.name.non_empty().unwrap_or("unknown");
                    calls_of(c.id.non_empty().map(str::to_owned), name, c.args)
                });
            What::Reply(parts_text(&content), calls.collect())
        }
        (Some("system"), Some("custom_title")) => match payload.custom_title.non_empty() {
            Some(t) => What::Title(
                t.to_owned(),
                payload.title_source.as_deref() == Some("manual"),
            ),
            None => What::Nothing,
        },
        (Some("system"), Some("parent_session")) => match payload.parent_session_id.non_empty() {
            Some(p) => What::ParentSession(p.to_owned()),
            None => What::Nothing,
        },
        _ => What::Nothing,
    }
}

fn record(raw: &str, session: &mut Option<String>) -> Option<Rec> {
    let l: Line = serde_json::from_str(raw).ok()?;
    if session.is_none() {
        *session = l.session_id.non_empty().map(str::to_owned);
    }
    let own = |s: &LStr| s.non_empty().map(str::to_owned);
    let forked: Payload = l.forked_from.and_then(lenient::parse).unwrap_or_default();
    Some(Rec {
        uuid: own(&l.uuid),
        parent: own(&l.parent_uuid),
        timestamp: l.timestamp.as_deref().and_then(parse_iso),
        stamp: l.timestamp.as_deref().unwrap_or("").to_owned(),
        cwd: own(&l.cwd),
        branch: own(&l.git_branch),
        agent: l.sidechain.0.then(|| {
            let id = own(&l.agent_id).unwrap_or_else(|| "sidechain".to_owned());
            (id, own(&l.agent_name))
        }),
        forked_from: l
            .forked_from
            .map(|_| own(&forked.session_id).unwrap_or_default()),
        message: l.message.is_some(),
        leaf: !l
            .subtype
            .as_deref()
            .is_some_and(|s| s.ends_with("_snapshot")),
        what: what(&l),
    })
}

/// Records of the main chain that a rewind abandoned: those off the chain leading to the last
/// record (snapshot side records aside) whose ancestors reach that chain.
fn abandoned(recs: &[Rec]) -> FxHashSet<usize> {
    let main = |r: &&Rec| r.agent.is_none();
    let mut parents: FxHashMap<&str, Option<&str>> = FxHashMap::default();
    for r in recs.iter().filter(main) {
        if let Some(u) = &r.uuid {
            parents.insert(u, r.parent.as_deref());
        }
    }
    let mut active: FxHashSet<&str> = FxHashSet::default();
    let leaf = recs.iter().filter(main).rfind(|r| r.leaf);
    let mut cur = leaf.and_then(|r| r.uuid.as_deref());
    while let Some(u) = cur.filter(|u| active.insert(u)) {
        cur = parents.get(u).copied().flatten();
    }
    let mut memo: FxHashMap<&str, bool> = FxHashMap::default();
    let mut dead = FxHashSet::default();
    for (i, r) in recs.iter().enumerate().filter(|(_, r)| main(r)) {
        let Some(u) = r.uuid.as_deref().filter(|u| !active.contains(u)) else {
            continue;
        };
        let mut path = Vec::new();
        let mut at = Some(u);
        let reaches = loop {
            match at {
                Some(a) if active.contains(a) => break true,
                Some(a) if memo.contains_key(a) => break memo[a],
                Some(a) if !path.contains(&a) => {
                    path.push(a);
                    at = parents.get(a).copied().flatten();
                }
                _ => break false,
            }
        };
        memo.extend(path.into_iter().map(|p| (p, reaches)));
        if reaches {
            dead.insert(i);
        }
    }
    dead
}

/// Builds one conversation from its records.
fn conversation(id: String, recs: &[&Rec]) -> ConvState {
    let mut meta = ConvMeta::default();
    let mut turns = TurnBuilder::default();
    for (i, r) in recs.iter().enumerate() {
        meta.note_timestamp(r.timestamp);
        if r.forked_from.is_some() {
            meta.forked_from = r
                .forked_from
                .clone()
                .filter(|f| !f.is_empty())
                .map(|f| format!("{FORMAT}:{f}"));
            continue;
        }
        if r.message {
            meta.cwd = r.cwd.clone().or(meta.cwd.take());
            meta.git_branch = r.branch.clone().or(meta.git_branch.take());
        }
        let at = At {
            offset: i as u64,
            timestamp: r.timestamp,
            dup_key: None,
        };
        match &r.what {
            What::Prompt(text) => {
                meta.first_prompt.get_or_insert_with(|| text.clone());
                let key = r
                    .uuid
                    .as_ref()
                    .map(|u| xxh3_64(format!("{u}\0{}", r.stamp).as_bytes()));
                turns.prompt(At { dup_key: key, ..at }, text.clone());
            }
            What::Reply(text, calls) => {
                turns.assistant_text(at, r.uuid.as_deref(), text);
                for c in calls {
                    turns.tool_call(at, c.clone());
                }
            }
            What::Title(t, true) => meta.custom_title = Some(t.clone()),
            What::Title(t, false) => meta.ai_title = Some(t.clone()),
            What::ParentSession(p) => meta.parent_id = Some(format!("{FORMAT}:{p}")),
            What::Nothing => turns.touch(r.timestamp),
        }
    }
    ConvState::finished(id, meta, turns)
}

/// Re-reads a chat file whole and reports the conversations whose content changed.
#[derive(Default)]
pub(crate) struct QwenReader {
    fingerprints: FxHashMap<String, u64>,
}

impl UnitReader for QwenReader {
    fn read(&mut self, file: &SourceFile) -> std::io::Result<UnitRead> {
        let bytes = std::fs::read(&file.path)?;
        let text = String::from_utf8_lossy(&bytes);
        // a last line without its newline may still be being written
        let complete = text.rfind('\n').map_or("", |i| &text[..i]);
        let (mut session, mut skipped, mut recs) = (None, 0, Vec::new());
        for line in complete.lines().filter(|l| !l.trim().is_empty()) {
            match record(line, &mut session) {
                Some(r) => recs.push(r),
                None => skipped += 1,
            }
        }
        let dead = abandoned(&recs);
        let main_id = match (session, &file.role) {
            (Some(s), _) => format!("{FORMAT}:{s}"),
            (None, Role::Session { id }) => id.clone(),
            (None, Role::Subagent { agent_id, .. }) => format!("{FORMAT}:{agent_id}"),
        };
        let main: Vec<&Rec> = (recs.iter().enumerate())
            .filter(|(i, r)| r.agent.is_none() && !dead.contains(i))
            .map(|(_, r)| r)
            .collect();
        let mut convs = vec![conversation(main_id.clone(), &main)];
        let mut agents: Vec<&(String, Option<String>)> =
            recs.iter().filter_map(|r| r.agent.as_ref()).collect();
        agents.sort();
        agents.dedup_by(|a, b| a.0 == b.0);
        for (agent, name) in agents {
            let own: Vec<&Rec> = recs
                .iter()
                .filter(|r| r.agent.as_ref().is_some_and(|a| &a.0 == agent))
                .collect();
            let mut c = conversation(format!("{main_id}/{agent}"), &own);
            c.meta.parent_id = Some(main_id.clone());
            c.meta.agent_type = name.clone();
            convs.push(c);
        }
        let present = convs.iter().map(|c| c.id.clone()).collect();
        let mut changed = Vec::new();
        for c in convs {
            let fp = xxh3_64(format!("{:?}{:?}", c.meta, c.completed).as_bytes());
            if self.fingerprints.insert(c.id.clone(), fp) != Some(fp) {
                changed.push(c);
            }
        }
        Ok(UnitRead {
            changed,
            present,
            skipped,
            ..UnitRead::default()
        })
    }
}
