//! Browsing a snapshot without a query: listing sessions, the history of a file across
//! turns, and re-reading turns at full fidelity from their transcript file by byte range.
use super::Snapshot;
use super::catalog::Conversation;
use super::project::Scope;
use crate::transcript::{Reader, Turn, redacted, stream};
use rustc_hash::FxHashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

/// Filters of `list_conversations`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListRange<'a> {
    pub project: Option<&'a str>,
    pub source: Option<&'a str>,
    /// Sessions active at or after (last timestamp).
    pub since: Option<i64>,
    /// Sessions started before (first timestamp).
    pub until: Option<i64>,
    pub scope: Scope,
}

/// One row of `list_conversations`.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub conv: Arc<Conversation>,
    pub project: String,
    pub this_project: bool,
    pub subagent_count: usize,
}

/// One row of `find_file_history`.
#[derive(Debug, Clone)]
pub(crate) struct FileTouch {
    pub conv: Arc<Conversation>,
    pub project: String,
    pub this_project: bool,
    pub turn: u32,
    pub timestamp: Option<i64>,
    pub path: String,
    /// Operations on the path in that turn, strongest last (read < edit < write).
    pub ops: Vec<u8>,
}

/// Why turns could not be read back from their file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error(
        "cannot read `{path}`: {source}; the file may have been moved or deleted, try again after the index catches up"
    )]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` changed since it was indexed; try again in a moment")]
    Changed { path: String },
    #[error(
        "the turn of `{id}` is not in the durable store (its transcript is gone, and it was removed by forget or retention, or never stored)"
    )]
    NotStored { id: String },
    #[error("{0}")]
    Store(String),
    #[error("cannot read back a turn of `{path}`: {why}")]
    TooLarge { path: String, why: String },
}

impl Snapshot {
    /// Turns whose tool calls read or changed a path containing `needle` (case-insensitive),
    /// newest first. Returns the total and one page.
    pub(crate) fn file_history(
        &self,
        needle: &str,
        since: Option<i64>,
        scope: Scope,
        offset: usize,
        limit: usize,
    ) -> (usize, Vec<FileTouch>) {
        let needle = needle.to_lowercase();
        // (conv, turn, path) -> ops; copies of a turn collapse to one key
        let mut rows: FxHashMap<(u32, u32, String), (i64, Vec<u8>)> = FxHashMap::default();
        let all = |_: u32| true;
        for (si, sv) in self.index.segs.iter().enumerate() {
            for (pi, path) in sv.seg.paths().iter().enumerate() {
                if !path.to_lowercase().contains(&needle) {
                    continue;
                }
                for &(_, d, op) in sv.seg.path_docs(pi as u32) {
                    if sv.dead.contains(d) {
                        continue;
                    }
                    let (s, doc) = self.earliest_copy(si, d, &all);
                    let meta = self.index.segs[s].seg.doc(doc);
                    if self.catalog.get(meta.conv).is_none()
                        || since.is_some_and(|t| meta.timestamp < t)
                    {
                        continue;
                    }
                    let entry = rows
                        .entry((meta.conv, meta.turn, path.to_string()))
                        .or_insert((meta.timestamp, Vec::new()));
                    if !entry.1.contains(&op) {
                        entry.1.push(op);
                    }
                }
            }
        }
        let mut out: Vec<FileTouch> = rows
            .into_iter()
            .filter_map(|((c, turn, path), (ts, mut ops))| {
                let conv = Arc::clone(self.catalog.get(c)?);
                let this_project = self.in_project(&conv);
                if scope == Scope::Project && !this_project {
                    return None;
                }
                ops.sort_unstable();
                Some(FileTouch {
                    project: self.project_of(&conv),
                    this_project,
                    conv,
                    turn,
                    timestamp: (ts != i64::MIN).then_some(ts),
                    path,
                    ops,
                })
            })
            .collect();
        out.sort_by(|a, b| {
            b.timestamp
                .cmp(&a.timestamp)
                .then_with(|| a.conv.id.cmp(&b.conv.id))
                .then(a.turn.cmp(&b.turn))
                .then_with(|| a.path.cmp(&b.path))
        });
        let total = out.len();
        (total, out.into_iter().skip(offset).take(limit).collect())
    }

    /// Main sessions, newest activity first, with their sub-agent counts.
    pub(crate) fn list(
        &self,
        range: &ListRange,
        offset: usize,
        limit: usize,
    ) -> (usize, Vec<Listed>) {
        let mut subagents: FxHashMap<&str, usize> = FxHashMap::default();
        for c in self.catalog.iter().filter(|c| c.is_subagent()) {
            if let Some(p) = c.parent.as_deref() {
                *subagents.entry(p).or_default() += 1;
            }
        }
        let project = range.project.map(str::to_lowercase);
        let mut rows: Vec<&Arc<Conversation>> = self
            .catalog
            .iter()
            .filter(|c| !c.is_subagent())
            .filter(|c| range.source.is_none_or(|s| c.source() == s))
            .filter(|c| {
                project
                    .as_deref()
                    .is_none_or(|p| self.catalog.project_matches(c, p))
            })
            .filter(|c| self.in_scope(range.scope, c))
            .filter(|c| {
                range
                    .since
                    .is_none_or(|s| c.meta.last_ts.is_some_and(|t| t >= s))
            })
            .filter(|c| {
                range
                    .until
                    .is_none_or(|u| c.meta.first_ts.is_some_and(|t| t < u))
            })
            .collect();
        rows.sort_by(|a, b| {
            b.meta
                .last_ts
                .cmp(&a.meta.last_ts)
                .then_with(|| a.id.cmp(&b.id))
        });
        let total = rows.len();
        let listed = rows
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|c| Listed {
                project: self.project_of(c),
                this_project: self.in_project(c),
                subagent_count: subagents.get(c.id.as_str()).copied().unwrap_or(0),
                conv: Arc::clone(c),
            })
            .collect();
        (total, listed)
    }

    /// Turns `from..to` of a conversation at full fidelity: re-read from its transcript, or
    /// from the durable store for turns the transcript no longer holds.
    pub(crate) fn read_turns(
        &self,
        conv: &Conversation,
        from: u32,
        to: u32,
    ) -> Result<Vec<Turn>, ReadError> {
        let to = to.min(conv.turn_count);
        if from >= to {
            return Ok(Vec::new());
        }
        let split = if conv.followed {
            conv.source_turns.clamp(from, to)
        } else {
            from
        };
        let mut turns = read_file_turns(conv, from, split)?;
        if split < to {
            turns.extend(self.read_stored_turns(conv, split, to)?);
        }
        Ok(turns)
    }

    /// Turns `from..to` from the durable store.
    fn read_stored_turns(
        &self,
        conv: &Conversation,
        from: u32,
        to: u32,
    ) -> Result<Vec<Turn>, ReadError> {
        let Some(store) = &self.store else {
            return Err(ReadError::NotStored {
                id: conv.id.clone(),
            });
        };
        let records = store
            .with_read(|conn, path| crate::store::read::turns(conn, path, &conv.id, from, to))
            .map_err(|e| ReadError::Store(e.to_string()))?;
        let mut out = Vec::with_capacity(records.len());
        for r in records {
            out.push(r.turn().map_err(|e| {
                ReadError::Store(format!(
                    "turn {} of `{}` in `{}` is damaged ({e})",
                    r.number,
                    conv.id,
                    store.path.display()
                ))
            })?);
        }
        if out.is_empty() {
            return Err(ReadError::NotStored {
                id: conv.id.clone(),
            });
        }
        Ok(out)
    }
}

/// Re-reads turns `from..to` of a conversation from its transcript, at full fidelity.
pub(super) fn read_file_turns(
    conv: &Conversation,
    from: u32,
    to: u32,
) -> Result<Vec<Turn>, ReadError> {
    if from >= to {
        return Ok(Vec::new());
    }
    let path = conv.file.path.display().to_string();
    let io = |source| ReadError::Io {
        path: path.clone(),
        source,
    };
    let Some(reader) = redacted::open(&conv.file) else {
        return Err(ReadError::Changed { path });
    };
    let mut parser = match reader {
        Reader::Lines(p) => p,
        Reader::Unit(mut unit) => {
            // whole-unit formats: re-read the conversation from the unit
            let turns: Vec<Turn> = unit
                .read_conversation(&conv.file, &conv.id)
                .map_err(io)?
                .map(|s| s.completed.into_iter().chain(s.open).collect())
                .unwrap_or_default();
            if turns.len() < to as usize {
                return Err(ReadError::Changed { path });
            }
            return Ok(turns
                .into_iter()
                .skip(from as usize)
                .take((to - from) as usize)
                .collect());
        }
    };
    let (start, end) = conv
        .byte_range(from, to)
        .ok_or_else(|| ReadError::Changed { path: path.clone() })?;
    let mut file = File::open(&conv.file.path).map_err(io)?;
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    // streamed: a huge tool result is skipped, never held (memory bounded per read)
    stream::feed_lines(&mut *parser, file.take(end - start), start).map_err(|e| match e {
        stream::StreamError::Io(source) => ReadError::Io {
            path: path.clone(),
            source,
        },
        e @ stream::StreamError::TooLarge { .. } => ReadError::TooLarge {
            path: path.clone(),
            why: e.to_string(),
        },
    })?;
    // a file that holds several conversations (inline sub-agents) yields each of them
    let mut states = parser.drain();
    if states.iter().any(|s| s.id == conv.id) {
        states.retain(|s| s.id == conv.id);
    }
    let mut turns: Vec<Turn> = Vec::new();
    for state in states {
        turns.extend(state.completed);
        turns.extend(state.open);
    }
    if turns.len() != (to - from) as usize {
        return Err(ReadError::Changed { path });
    }
    for (i, t) in turns.iter_mut().enumerate() {
        t.number = from + i as u32;
    }
    Ok(turns)
}
