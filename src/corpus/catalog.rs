//! The catalog: every conversation the index knows (sessions and sub-agents), looked up by id,
//! the ids to hand out, how a parser's news changes a conversation, and how project names are
//! derived from project directories and working directories.
use crate::transcript::{ConvMeta, ConvState, Role, SourceFile, Turn};
use crate::util::blob::Column;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Dense numeric id of a conversation inside the index (never reused within a process).
pub(crate) type ConvId = u32;

/// One conversation: a main session or a sub-agent transcript.
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    pub conv: ConvId,
    /// Public id: the session id, `<parent>/agent-<id>` for sub-agents, `<format>:<id>` for
    /// non-Claude formats.
    pub id: String,
    pub file: Arc<SourceFile>,
    /// Parent session id (sub-agents), or the session a fork started from.
    pub parent: Option<String>,
    pub meta: ConvMeta,
    pub turn_count: u32,
    /// Byte offset where each turn starts in the file (a view of the mapped cache file when
    /// restored).
    pub turn_offsets: Column<u64>,
    /// Bytes of the file read into the index.
    pub end_offset: u64,
    /// Turns read from the followed transcript (`..source_turns`, located by `turn_offsets`);
    /// later turns (a transcript that shrank) are read from the durable store.
    pub source_turns: u32,
    /// False when no transcript this server follows holds the conversation: it lives in the
    /// durable store only, and every turn is read from there.
    pub followed: bool,
    /// When its transcript was found gone (epoch ms); `None` while it exists.
    pub gone_since: Option<i64>,
}

impl Conversation {
    /// Sub-agent transcripts are searchable but not listed as sessions; forks are sessions.
    pub(crate) fn is_subagent(&self) -> bool {
        matches!(self.file.role, Role::Subagent { .. }) || self.meta.parent_id.is_some()
    }

    pub(crate) fn source(&self) -> &'static str {
        self.file.format
    }

    pub(crate) fn agent_type(&self) -> Option<&str> {
        match &self.file.role {
            Role::Subagent {
                agent_type: Some(t),
                ..
            } => Some(t),
            _ => self.meta.agent_type.as_deref(),
        }
    }

    pub(crate) fn agent_description(&self) -> Option<&str> {
        match &self.file.role {
            Role::Subagent {
                description: Some(d),
                ..
            } => Some(d),
            _ => self.meta.agent_description.as_deref(),
        }
    }

    /// Byte range of turns `from..to` in the file.
    pub(crate) fn byte_range(&self, from: u32, to: u32) -> Option<(u64, u64)> {
        let start = *self.turn_offsets.get(from as usize)?;
        let end = self
            .turn_offsets
            .get(to as usize)
            .copied()
            .unwrap_or(self.end_offset);
        Some((start, end.max(start)))
    }
}

/// Conversations by id, shared copy-on-write between snapshots.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    slots: Arc<Vec<Option<Arc<Conversation>>>>,
    by_id: Arc<FxHashMap<String, ConvId>>,
    /// Claude Code project directory names currently matched (sorted), for project naming.
    groups: Arc<Vec<String>>,
    /// Length of the prefix stripped from every group name.
    group_prefix: usize,
    /// Conversations stored under `<id>@<suffix>` because another file held `<id>`, by `<id>`:
    /// the first one still present takes `<id>` back when its holder goes (a transcript moved
    /// to another directory is added before its old path is seen gone).
    displaced: Arc<FxHashMap<String, Vec<ConvId>>>,
    /// The id the next new conversation gets.
    next: ConvId,
}

/// A conversation's new state without its turns' text (the turns go to the document index;
/// this is what the catalog keeps).
pub(super) struct ConvUpdate {
    pub(super) id: String,
    pub(super) meta: ConvMeta,
    pub(super) turn_count: u32,
    /// First turn whose document is replaced (turns before it are unchanged).
    pub(super) first_changed: u32,
    /// Start offsets of turns `first_changed..`.
    pub(super) offsets: Vec<u64>,
}

impl ConvUpdate {
    /// Splits a parser's state into the catalog update and the turns to index.
    pub(super) fn split(state: ConvState) -> (Self, Vec<Turn>) {
        let ConvState {
            id,
            meta,
            completed,
            open,
            turn_count,
        } = state;
        let turns: Vec<Turn> = completed.into_iter().chain(open).collect();
        let first_changed = turns.first().map_or(turn_count, |t| t.number);
        let offsets = turns.iter().map(|t| t.start_offset).collect();
        (
            ConvUpdate {
                id,
                meta,
                turn_count,
                first_changed,
                offsets,
            },
            turns,
        )
    }
}

impl Catalog {
    /// The id the next new conversation gets.
    pub(super) fn next_id(&self) -> ConvId {
        self.next
    }

    /// Ids below `next` are taken (by the first build's workers, or a restored state).
    pub(super) fn set_next_id(&mut self, next: ConvId) {
        self.next = next;
    }

    /// A new conversation's id.
    pub(super) fn allocate(&mut self) -> ConvId {
        let id = self.next;
        self.next += 1;
        id
    }

    /// Applies a conversation's new state, read from `file` up to `end_offset`: its turns from
    /// the first changed one are replaced. Returns whether the conversation is in the catalog
    /// now (a state without turns removes it).
    pub(super) fn update(
        &mut self,
        conv: ConvId,
        file: &Arc<SourceFile>,
        end_offset: u64,
        state: ConvUpdate,
    ) -> bool {
        let mut offsets = self
            .get(conv)
            .map(|c| c.turn_offsets.to_vec())
            .unwrap_or_default();
        offsets.truncate(state.first_changed as usize);
        offsets.extend(state.offsets);
        let parent = match &file.role {
            Role::Subagent { parent, .. } => parent
                .clone()
                .or_else(|| state.meta.recorded_session_id.clone()),
            Role::Session { .. } => state
                .meta
                .parent_id
                .clone()
                .or_else(|| state.meta.forked_from.clone()),
        };
        if state.turn_count == 0 {
            self.remove(conv);
            return false;
        }
        self.put(Conversation {
            conv,
            id: state.id,
            file: Arc::clone(file),
            parent,
            meta: state.meta,
            turn_count: state.turn_count,
            turn_offsets: Column::from(offsets),
            end_offset,
            source_turns: state.turn_count,
            followed: true,
            gone_since: None,
        });
        true
    }

    pub(crate) fn get(&self, conv: ConvId) -> Option<&Arc<Conversation>> {
        self.slots.get(conv as usize).and_then(Option::as_ref)
    }

    pub(crate) fn by_id(&self, id: &str) -> Option<&Arc<Conversation>> {
        self.by_id.get(id).and_then(|&c| self.get(c))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<Conversation>> {
        self.slots.iter().flatten()
    }

    pub(crate) fn groups(&self) -> &[String] {
        &self.groups
    }

    /// Inserts or replaces a conversation. Returns the id it was stored under (a colliding
    /// public id from another file gets a `@<group>` suffix).
    pub(crate) fn put(&mut self, mut conv: Conversation) -> String {
        let slot = conv.conv as usize;
        if let Some(old) = self.get(conv.conv).cloned() {
            if old.id != conv.id {
                Arc::make_mut(&mut self.by_id).remove(&old.id);
            }
        }
        if let Some(&other) = self.by_id.get(&conv.id) {
            if other != conv.conv {
                let suffix = conv
                    .file
                    .group
                    .clone()
                    .unwrap_or_else(|| conv.conv.to_string());
                let held = Arc::make_mut(&mut self.displaced)
                    .entry(conv.id.clone())
                    .or_default();
                if !held.contains(&conv.conv) {
                    held.push(conv.conv);
                }
                conv.id = format!("{}@{}", conv.id, suffix);
            }
        }
        if !self.by_id.contains_key(&conv.id) {
            Arc::make_mut(&mut self.by_id).insert(conv.id.clone(), conv.conv);
        }
        let id = conv.id.clone();
        let slots = Arc::make_mut(&mut self.slots);
        if slots.len() <= slot {
            slots.resize(slot + 1, None);
        }
        slots[slot] = Some(Arc::new(conv));
        id
    }

    /// Conversations that differ from `old`'s (added, replaced or removed), in id order: a
    /// replaced conversation is a new `Arc`, so comparing pointers finds every change.
    pub(crate) fn changed_since(&self, old: &Catalog) -> Vec<ConvId> {
        let n = self.slots.len().max(old.slots.len());
        (0..n)
            .filter(|&i| {
                match (
                    self.slots.get(i).and_then(Option::as_ref),
                    old.slots.get(i).and_then(Option::as_ref),
                ) {
                    (Some(a), Some(b)) => !Arc::ptr_eq(a, b),
                    (None, None) => false,
                    _ => true,
                }
            })
            .map(|i| i as ConvId)
            .collect()
    }

    /// Installs another server's conversations as they are (ids already resolved there):
    /// every old id of the changed slots is released first, then the new ones are taken.
    pub(crate) fn replace_exact(&mut self, changes: Vec<(ConvId, Option<Conversation>)>) {
        // the id map is shared with published snapshots: it is copied only when an id comes,
        // goes or moves (not when a conversation keeps its id, as on every append)
        let kept = |cat: &Catalog, conv: ConvId, new: &Option<Conversation>| {
            new.as_ref().is_some_and(|c| {
                cat.get(conv).is_some_and(|o| o.id == c.id) && cat.by_id.get(&c.id) == Some(&conv)
            })
        };
        let kept: Vec<bool> = changes.iter().map(|(c, n)| kept(self, *c, n)).collect();
        for ((conv, _), &kept) in changes.iter().zip(&kept) {
            if let Some(old) = self.get(*conv).cloned() {
                if !kept && self.by_id.get(&old.id) == Some(conv) {
                    Arc::make_mut(&mut self.by_id).remove(&old.id);
                }
                Arc::make_mut(&mut self.slots)[*conv as usize] = None;
            }
        }
        for ((conv, new), kept) in changes.into_iter().zip(kept) {
            let Some(c) = new else { continue };
            if !kept {
                Arc::make_mut(&mut self.by_id).insert(c.id.clone(), conv);
            }
            let slots = Arc::make_mut(&mut self.slots);
            if slots.len() <= conv as usize {
                slots.resize(conv as usize + 1, None);
            }
            slots[conv as usize] = Some(Arc::new(c));
        }
    }

    pub(crate) fn remove(&mut self, conv: ConvId) {
        if let Some(old) = self.get(conv).cloned() {
            Arc::make_mut(&mut self.slots)[conv as usize] = None;
            if self.by_id.get(&old.id) == Some(&conv) {
                Arc::make_mut(&mut self.by_id).remove(&old.id);
                self.restore_displaced(&old.id);
            }
        }
    }

    /// Gives `id` to the first conversation that was displaced from it and is still present.
    fn restore_displaced(&mut self, id: &str) {
        let Some(mut waiting) = Arc::make_mut(&mut self.displaced).remove(id) else {
            return;
        };
        waiting.retain(|&c| {
            self.get(c)
                .is_some_and(|x| x.id.strip_prefix(id).is_some_and(|r| r.starts_with('@')))
        });
        if waiting.is_empty() {
            return;
        }
        let first = waiting.remove(0);
        if !waiting.is_empty() {
            Arc::make_mut(&mut self.displaced).insert(id.to_owned(), waiting);
        }
        if let Some(c) = self.get(first).cloned() {
            Arc::make_mut(&mut self.by_id).remove(&c.id);
            let mut moved = (*c).clone();
            moved.id = id.to_owned();
            self.put(moved);
        }
    }

    /// Sets the matched project directories (sorted) and recomputes their common prefix.
    pub(crate) fn set_groups(&mut self, mut groups: Vec<String>) {
        groups.sort();
        groups.dedup();
        if *self.groups != groups {
            self.group_prefix = common_dash_prefix(&groups);
            self.groups = Arc::new(groups);
        }
    }

    /// The project a conversation belongs to: its directory name with the prefix common to all
    /// matched directories stripped; with a single directory, the last component of its cwd.
    pub(crate) fn project_name(&self, conv: &Conversation) -> String {
        let cwd_name = conv
            .meta
            .cwd
            .as_deref()
            .and_then(|c| c.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next())
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        if crate::transcript::adapter(conv.file.format)
            .is_none_or(|a| a.project_naming() != crate::transcript::ProjectNaming::Group)
        {
            return cwd_name
                .or_else(|| conv.file.group.clone())
                .unwrap_or_default();
        }
        match conv.file.group.as_deref() {
            Some(group) if self.groups.len() > 1 => {
                let stripped = group.get(self.group_prefix..).unwrap_or("");
                if stripped.is_empty() {
                    group.to_owned()
                } else {
                    stripped.to_owned()
                }
            }
            Some(group) => cwd_name.unwrap_or_else(|| group.to_owned()),
            None => cwd_name.unwrap_or_default(),
        }
    }

    /// Case-insensitive substring match of `filter` on project name, directory name and cwd.
    pub(crate) fn project_matches(&self, conv: &Conversation, filter_lower: &str) -> bool {
        let hit = |s: &str| s.to_lowercase().contains(filter_lower);
        hit(&self.project_name(conv))
            || conv.file.group.as_deref().is_some_and(hit)
            || conv.meta.cwd.as_deref().is_some_and(hit)
    }
}

/// Length of the longest prefix shared by all names, cut back to just after a `-`.
fn common_dash_prefix(names: &[String]) -> usize {
    if names.len() < 2 {
        return 0;
    }
    let first = names[0].as_bytes();
    let mut len = first.len();
    for n in &names[1..] {
        len = len.min(
            first
                .iter()
                .zip(n.as_bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    first[..len]
        .iter()
        .rposition(|&b| b == b'-')
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Role, SourceFile};

    fn file(path: &str, group: &str) -> Arc<SourceFile> {
        Arc::new(SourceFile {
            path: path.into(),
            format: "claude",
            group: Some(group.into()),
            role: Role::Session { id: "s".into() },
        })
    }

    fn update(id: &str, first_changed: u32, offsets: &[u64], turn_count: u32) -> ConvUpdate {
        ConvUpdate {
            id: id.into(),
            meta: ConvMeta::default(),
            turn_count,
            first_changed,
            offsets: offsets.to_vec(),
        }
    }

    #[test]
    fn updates_extend_a_conversation_and_an_empty_one_leaves() {
        let mut cat = Catalog::default();
        let f = file("/p/a.jsonl", "p");
        let conv = cat.allocate();
        assert_eq!((conv, cat.next_id()), (0, 1));
        assert!(cat.update(conv, &f, 100, update("s1", 0, &[0, 40], 2)));
        // turn 1 rewritten, turn 2 added
        assert!(cat.update(conv, &f, 180, update("s1", 1, &[50, 120], 3)));
        let c = cat.by_id("s1").expect("s1");
        assert_eq!(c.turn_offsets.to_vec(), [0, 50, 120]);
        assert_eq!((c.turn_count, c.source_turns, c.end_offset), (3, 3, 180));
        assert!(c.followed);
        assert!(!cat.update(conv, &f, 0, update("s1", 0, &[], 0)));
        assert!(cat.by_id("s1").is_none());
    }

    #[test]
    fn a_colliding_id_is_suffixed_and_takes_the_id_back_when_its_holder_goes() {
        let mut cat = Catalog::default();
        let (a, b) = (cat.allocate(), cat.allocate());
        cat.update(a, &file("/p/x.jsonl", "p"), 1, update("s", 0, &[0], 1));
        cat.update(b, &file("/q/x.jsonl", "q"), 1, update("s", 0, &[0], 1));
        assert_eq!(cat.by_id("s").map(|c| c.conv), Some(a));
        assert_eq!(cat.by_id("s@q").map(|c| c.conv), Some(b));
        let before = cat.clone();
        cat.remove(a);
        assert_eq!(cat.by_id("s").map(|c| c.conv), Some(b));
        assert_eq!(cat.changed_since(&before), [a, b]);
    }

    #[test]
    fn another_servers_conversations_are_installed_as_they_are() {
        let mut cat = Catalog::default();
        let a = cat.allocate();
        cat.update(a, &file("/p/x.jsonl", "p"), 1, update("s", 0, &[0], 1));
        let mut theirs = cat.get(a).map(|c| (**c).clone()).expect("a");
        theirs.id = "renamed".into();
        cat.replace_exact(vec![(a, Some(theirs)), (5, None)]);
        assert!(cat.by_id("s").is_none());
        assert_eq!(cat.by_id("renamed").map(|c| c.conv), Some(a));
        cat.replace_exact(vec![(a, None)]);
        assert_eq!(cat.iter().count(), 0);
    }

    #[test]
    fn strips_the_shared_dash_prefix() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let names = v(&[
            "-home-gbr-work-001-sites-diff-website",
            "-home-gbr-work-001-sites-blog",
        ]);
        assert_eq!(&names[0][common_dash_prefix(&names)..], "diff-website");
        let names = v(&["-home-a-foo", "-home-a-fab"]);
        assert_eq!(&names[0][common_dash_prefix(&names)..], "foo");
        let names = v(&["-a-b", "-a-b-c"]);
        assert_eq!(&names[1][common_dash_prefix(&names)..], "b-c");
    }
}
