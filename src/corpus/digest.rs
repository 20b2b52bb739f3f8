//! "Where we left off": the last few sessions of a scope with what a new session needs to pick
//! up from them (title, time span, turns, the files most touched, the last prompt and the start
//! of the last reply), read from the index alone (no transcript file is opened).
use super::Snapshot;
use super::catalog::{ConvId, Conversation};
use super::project::Scope;
use crate::index::facts;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Files listed per session, most touched first.
pub(crate) const FILES_PER_SESSION: usize = 5;

/// One recent session.
#[derive(Debug, Clone)]
pub(crate) struct SessionDigest {
    pub conv: Arc<Conversation>,
    pub project: String,
    /// Paths the session's tool calls touched, with the number of turns that touched each and
    /// the strongest operation; most touched first.
    pub files: Vec<(String, usize, u8)>,
    /// The last turn that has a prompt: its number, prompt and reply.
    pub last_turn: Option<u32>,
    pub last_prompt: String,
    pub last_reply: String,
}

/// What is gathered per session while scanning the documents.
#[derive(Default)]
struct Gathered {
    /// path -> (turns, strongest op, first turn seen)
    files: FxHashMap<String, (usize, u8, u32)>,
    last: Option<(u32, String, String)>,
}

impl Snapshot {
    /// The `n` main sessions of `scope` with the latest activity, newest first.
    pub(crate) fn recent(&self, scope: Scope, n: usize) -> Vec<&Arc<Conversation>> {
        let mut sessions: Vec<&Arc<Conversation>> = self
            .catalog
            .iter()
            .filter(|c| !c.is_subagent() && c.turn_count > 0)
            .filter(|c| self.in_scope(scope, c))
            .collect();
        sessions.sort_by(|a, b| {
            b.meta
                .last_ts
                .cmp(&a.meta.last_ts)
                .then_with(|| a.id.cmp(&b.id))
        });
        sessions.truncate(n);
        sessions
    }

    /// The `n` main sessions of `scope` with the latest activity, newest first, with their
    /// digests.
    pub(crate) fn recent_sessions(&self, scope: Scope, n: usize) -> Vec<SessionDigest> {
        let sessions = self.recent(scope, n);
        let mut wanted: FxHashMap<ConvId, Gathered> = sessions
            .iter()
            .map(|c| (c.conv, Gathered::default()))
            .collect();
        if !wanted.is_empty() {
            self.gather(&mut wanted);
        }
        sessions
            .into_iter()
            .map(|c| {
                let g = wanted.remove(&c.conv).unwrap_or_default();
                let mut files: Vec<(String, usize, u8, u32)> = g
                    .files
                    .into_iter()
                    .map(|(p, (n, op, first))| (p, n, op, first))
                    .collect();
                files.sort_by(|a, b| b.1.cmp(&a.1).then(a.3.cmp(&b.3)).then(a.0.cmp(&b.0)));
                let (last_turn, last_prompt, last_reply) = match g.last {
                    Some((t, p, r)) => (Some(t), p, r),
                    None => (None, String::new(), String::new()),
                };
                SessionDigest {
                    project: self.project_of(c),
                    conv: Arc::clone(c),
                    files: files
                        .into_iter()
                        .take(FILES_PER_SESSION)
                        .map(|(p, n, op, _)| (p, n, op))
                        .collect(),
                    last_turn,
                    last_prompt,
                    last_reply,
                }
            })
            .collect()
    }

    /// One pass over the live documents of the wanted conversations.
    fn gather(&self, wanted: &mut FxHashMap<ConvId, Gathered>) {
        for sv in &self.index.segs {
            let seg = &sv.seg;
            for d in 0..seg.doc_count() as u32 {
                let meta = seg.doc(d);
                let Some(g) = wanted.get_mut(&meta.conv) else {
                    continue;
                };
                if sv.dead.contains(d) {
                    continue;
                }
                let text = seg.text(d);
                let mut seen_here: Vec<&str> = Vec::new();
                for (op, path) in facts::files(text.tools) {
                    let e = g.files.entry(path.to_owned()).or_insert((0, op, meta.turn));
                    e.1 = e.1.max(op);
                    e.2 = e.2.min(meta.turn);
                    if !seen_here.contains(&path) {
                        seen_here.push(path);
                        e.0 += 1;
                    }
                }
                let later = g.last.as_ref().is_none_or(|(t, ..)| meta.turn > *t);
                if !text.user.trim().is_empty() && later {
                    g.last = Some((meta.turn, text.user.to_owned(), text.assistant.to_owned()));
                }
            }
        }
    }
}
