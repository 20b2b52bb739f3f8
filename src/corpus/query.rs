//! Read operations over a snapshot: search, listing, and re-reading turns from their files.
//! These are the domain behind the MCP tools and the CLI; they validate nothing the caller
//! already checked and return plain data.
use super::Snapshot;
use super::catalog::{ConvId, Conversation};
use crate::index::{self, Bm25, snippet};
use crate::transcript::{Reader, Turn, adapter};
use crate::util::hash::FxHashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

/// Characters of turn text shown in a search result.
pub const SNIPPET_CHARS: usize = 300;

/// A search request, validated.
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: String,
    pub limit: usize,
    pub offset: usize,
    pub session_id: Option<String>,
    pub project: Option<String>,
    /// Only conversations of this format.
    pub source: Option<String>,
}

/// One search hit.
#[derive(Debug, Clone)]
pub struct SearchHit {
    pub conv: Arc<Conversation>,
    pub project: String,
    pub turn: u32,
    pub score: f64,
    pub timestamp: Option<i64>,
    pub snippet: String,
}

#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub total: usize,
    pub hits: Vec<SearchHit>,
}

/// One row of `list_conversations`.
#[derive(Debug, Clone)]
pub struct Listed {
    pub conv: Arc<Conversation>,
    pub project: String,
    pub subagent_count: usize,
}

/// Why turns could not be read back from their file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(
        "cannot read `{path}`: {source}; the file may have been moved or deleted, try again after the index catches up"
    )]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` changed since it was indexed; try again in a moment")]
    Changed { path: String },
}

/// The turn text a snippet is cut from: prompt, reply and tools line.
pub fn turn_text(user: &str, assistant: &str, tools: &str) -> String {
    [user, assistant, tools]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
}

impl Snapshot {
    /// Project name of a conversation.
    pub fn project_of(&self, conv: &Conversation) -> String {
        self.catalog.project_name(conv)
    }

    pub fn search(&self, req: &SearchRequest) -> SearchOutcome {
        let plan = index::query::parse(&req.query);
        let only_conv: Option<ConvId> = match &req.session_id {
            Some(id) => match self.catalog.by_id(id) {
                Some(c) => Some(c.conv),
                None => {
                    return SearchOutcome {
                        total: 0,
                        hits: Vec::new(),
                    };
                }
            },
            None => None,
        };
        let project = req.project.as_ref().map(|p| p.to_lowercase());
        let conv_ok: Option<FxHashMap<ConvId, bool>> = (project.is_some() || req.source.is_some())
            .then(|| {
                self.catalog
                    .iter()
                    .map(|c| {
                        let ok = project
                            .as_deref()
                            .is_none_or(|p| self.catalog.project_matches(c, p))
                            && req.source.as_deref().is_none_or(|s| c.source() == s);
                        (c.conv, ok)
                    })
                    .collect()
            });
        let accept = |_: usize, _: u32, meta: &index::DocMeta, _: u8| {
            only_conv.is_none_or(|c| c == meta.conv)
                && conv_ok
                    .as_ref()
                    .is_none_or(|m| m.get(&meta.conv).copied().unwrap_or(false))
                && self.catalog.get(meta.conv).is_some()
        };
        let key = |h: &index::Hit| {
            let meta = self.index.segs[h.seg].seg.doc(h.doc);
            let id = self.catalog.get(meta.conv).map_or("", |c| c.id.as_str());
            (id, meta.turn)
        };
        let want = req.offset + req.limit;
        let (total, top) = index::evaluate(
            &self.index,
            &plan,
            &Bm25::default(),
            accept,
            want,
            |a, b| key(a).cmp(&key(b)),
        );
        let hits = top
            .into_iter()
            .skip(req.offset)
            .filter_map(|h| {
                let seg = &self.index.segs[h.seg].seg;
                let meta = seg.doc(h.doc);
                let conv = Arc::clone(self.catalog.get(meta.conv)?);
                let text = seg.text(h.doc);
                Some(SearchHit {
                    project: self.project_of(&conv),
                    conv,
                    turn: meta.turn,
                    score: index::scoring::quantize(h.score) as f64 / 10_000.0,
                    timestamp: (meta.timestamp != i64::MIN).then_some(meta.timestamp),
                    snippet: snippet::head(
                        &turn_text(text.user, text.assistant, text.tools),
                        SNIPPET_CHARS,
                    ),
                })
            })
            .collect();
        SearchOutcome { total, hits }
    }

    /// Main sessions, newest activity first, with their sub-agent counts.
    pub fn list(
        &self,
        project: Option<&str>,
        source: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> (usize, Vec<Listed>) {
        let mut subagents: FxHashMap<&str, usize> = FxHashMap::default();
        for c in self.catalog.iter().filter(|c| c.is_subagent()) {
            if let Some(p) = c.parent.as_deref() {
                *subagents.entry(p).or_default() += 1;
            }
        }
        let filter = project.map(str::to_lowercase);
        let mut rows: Vec<&Arc<Conversation>> = self
            .catalog
            .iter()
            .filter(|c| !c.is_subagent())
            .filter(|c| source.is_none_or(|s| c.source() == s))
            .filter(|c| {
                filter
                    .as_deref()
                    .is_none_or(|f| self.catalog.project_matches(c, f))
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
                subagent_count: subagents.get(c.id.as_str()).copied().unwrap_or(0),
                conv: Arc::clone(c),
            })
            .collect();
        (total, listed)
    }

    /// Re-reads turns `from..to` of a conversation from its file, at full fidelity.
    pub fn read_turns(
        &self,
        conv: &Conversation,
        from: u32,
        to: u32,
    ) -> Result<Vec<Turn>, ReadError> {
        let to = to.min(conv.turn_count);
        if from >= to {
            return Ok(Vec::new());
        }
        let path = conv.file.path.display().to_string();
        let io = |source| ReadError::Io {
            path: path.clone(),
            source,
        };
        let Some(adapter) = adapter(conv.file.format) else {
            return Err(ReadError::Changed { path });
        };
        let mut parser = match adapter.reader(&conv.file) {
            Reader::Lines(p) => p,
            Reader::Unit(mut unit) => {
                // whole-unit formats: re-read the unit and take the conversation's turns
                let read = unit.read(&conv.file).map_err(io)?;
                let turns: Vec<Turn> = read
                    .changed
                    .into_iter()
                    .find(|c| c.id == conv.id)
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
        let mut buf = Vec::with_capacity((end - start) as usize);
        file.take(end - start).read_to_end(&mut buf).map_err(io)?;
        let mut offset = start;
        for line in buf.split(|&b| b == b'\n') {
            let _ = parser.feed_line(offset, line.strip_suffix(b"\r").unwrap_or(line));
            offset += line.len() as u64 + 1;
        }
        let mut turns: Vec<Turn> = Vec::new();
        for state in parser.drain() {
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
}
