//! Several conversations read from one line file: a session and the sub-agents its file records
//! inline. Each has its own metadata and turns; a drain reports the session and every sub-agent
//! that changed since the last drain (the session always comes first, so a file that grows a
//! sub-agent never looks like a single conversation that changed its id).
use super::{ConvMeta, ConvState, ToolCall, TurnBuilder};
use rustc_hash::FxHashMap;

/// One conversation of the file.
#[derive(Debug, Default)]
pub(crate) struct Conv {
    pub id: String,
    pub meta: ConvMeta,
    pub turns: TurnBuilder,
    /// Tool calls whose arguments may still be streaming in: shown in the open turn, added to it
    /// for good by [`Conv::commit`].
    pub streaming: Vec<ToolCall>,
    dirty: bool,
}

impl Conv {
    pub(crate) fn new(id: String, meta: ConvMeta) -> Self {
        Conv {
            id,
            meta,
            ..Conv::default()
        }
    }

    fn state(&mut self) -> ConvState {
        let mut open = self.turns.open_turn();
        if let Some(turn) = open.as_mut() {
            turn.tools.extend(self.streaming.iter().cloned());
        }
        ConvState {
            id: self.id.clone(),
            meta: self.meta.clone(),
            completed: self.turns.take_completed(),
            open,
            turn_count: self.turns.turn_count(),
        }
    }
}

/// The session (index 0) and its inline sub-agents, by a key the format chooses.
#[derive(Debug, Default)]
pub(crate) struct ConvSet {
    convs: Vec<Conv>,
    by_key: FxHashMap<String, usize>,
}

impl ConvSet {
    pub(crate) fn new(main: Conv) -> Self {
        ConvSet {
            convs: vec![main],
            by_key: FxHashMap::default(),
        }
    }

    /// The session.
    pub(crate) fn main(&mut self) -> &mut Conv {
        let c = &mut self.convs[0];
        c.dirty = true;
        c
    }

    /// The session, unchanged.
    pub(crate) fn main_ref(&self) -> &Conv {
        &self.convs[0]
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// The sub-agent under `key`, if known.
    pub(crate) fn get(&mut self, key: &str) -> Option<&mut Conv> {
        let c = &mut self.convs[*self.by_key.get(key)?];
        c.dirty = true;
        Some(c)
    }

    /// The sub-agent under `key`, created by `make` when new.
    pub(crate) fn get_or_insert_with(
        &mut self,
        key: &str,
        make: impl FnOnce() -> Conv,
    ) -> &mut Conv {
        let i = match self.by_key.get(key) {
            Some(&i) => i,
            None => {
                self.convs.push(make());
                self.by_key.insert(key.to_owned(), self.convs.len() - 1);
                self.convs.len() - 1
            }
        };
        let c = &mut self.convs[i];
        c.dirty = true;
        c
    }

    /// Every conversation, the session first.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Conv> {
        self.convs.iter_mut()
    }

    /// The session and the sub-agents that changed since the last drain.
    pub(crate) fn drain(&mut self) -> Vec<ConvState> {
        let mut out = Vec::new();
        for (i, c) in self.convs.iter_mut().enumerate() {
            if i == 0 || std::mem::take(&mut c.dirty) {
                out.push(c.state());
            }
        }
        out
    }
}
