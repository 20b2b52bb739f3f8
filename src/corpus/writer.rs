//! The single writer: discovers transcript files, reads them (in parallel at start-up,
//! incrementally afterwards), turns their turns into index documents, keeps per-conversation
//! bookkeeping of where each turn's document lives, and publishes immutable snapshots.
use super::books::ConvBook;
use super::catalog::{Catalog, ConvId, Conversation};
use super::dups::DupTracker;
use super::ingest::FileState;
use super::{Root, Shared, Snapshot, SourceHealth, Stats};
use crate::index::{IndexView, NewDoc, Segment, SegmentBuilder, Tokenizer, facts};
use crate::transcript::{ConvState, FileOp, Role, SourceFile, ToolKind, Turn};
use crate::util::blob::Column;
use crate::util::time::now_ms;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// A followed file and the conversations it holds.
pub(super) struct FileEntry {
    pub(super) state: FileState,
    /// (conversation id as the parser reports it, internal id).
    pub(super) convs: Vec<(String, ConvId)>,
    pub(super) src: Arc<SourceFile>,
}

impl FileEntry {
    pub(super) fn new(src: SourceFile) -> Self {
        Self {
            src: Arc::new(src.clone()),
            state: FileState::new(src),
            convs: Vec::new(),
        }
    }
}

/// The text of a turn's tools field: tool names (sorted, unique), files touched and commands
/// run (see [`crate::index::facts`]).
pub fn tools_field(turn: &Turn) -> String {
    let names = turn.tool_names();
    let files = turn
        .tools
        .iter()
        .filter_map(|t| t.file_op())
        .map(|(op, f)| {
            let code = match op {
                FileOp::Read => facts::OP_READ,
                FileOp::Edit => facts::OP_EDIT,
                FileOp::Write => facts::OP_WRITE,
            };
            (code, f)
        });
    let commands = turn
        .tools
        .iter()
        .filter(|t| t.kind == ToolKind::Shell)
        .filter_map(|t| t.command.as_deref());
    facts::tools_field(&names, files, commands)
}

/// A conversation's new state without its turns' text (the turns go to a segment; this is
/// what the catalog keeps).
pub(super) struct ConvUpdate {
    pub(super) id: String,
    pub(super) meta: crate::transcript::ConvMeta,
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

/// Documents added to a segment under construction, to be located once it is finished.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) builder: SegmentBuilder,
    /// Per added document: (conversation, turn number).
    pub(super) docs: Vec<(ConvId, u32)>,
}

impl Batch {
    pub(super) fn add(&mut self, conv: ConvId, turn: &Turn) {
        let tools = tools_field(turn);
        self.builder.add(&NewDoc {
            conv,
            turn: turn.number,
            timestamp: turn.timestamp,
            dup_key: turn.dup_key,
            fields: [&turn.user_text, &turn.assistant_text, &tools],
        });
        self.docs.push((conv, turn.number));
    }
}

pub struct Writer {
    pub(super) roots: Arc<Vec<Root>>,
    pub(super) shared: Arc<Shared>,
    pub(super) files: BTreeMap<PathBuf, FileEntry>,
    pub(super) catalog: Catalog,
    pub(super) view: IndexView,
    pub(super) books: FxHashMap<ConvId, ConvBook>,
    pub(super) next_conv: ConvId,
    pub(super) next_seg: u64,
    pub(super) generation: u64,
    pub(super) stats: Stats,
    pub(super) tokenizer: Tokenizer,
    pub(super) complete: bool,
    pub(super) dups: DupTracker,
    /// The durable store, unless `--no-archive` (or it could not be opened).
    pub(super) archive: Option<super::history::Archive>,
    /// Conversations updated since the last [`Writer::settle`] (their stored tails are checked).
    pub(super) touched: Vec<ConvId>,
    /// Which generation this state is, and what changed since the last one published.
    pub(super) gens: super::gens::Gens,
}

impl Writer {
    pub fn new(roots: Vec<Root>, shared: Arc<Shared>) -> Self {
        Self {
            roots: Arc::new(roots),
            shared,
            files: BTreeMap::new(),
            catalog: Catalog::default(),
            view: IndexView::default(),
            books: FxHashMap::default(),
            next_conv: 0,
            next_seg: 1,
            generation: 0,
            stats: Stats::default(),
            tokenizer: Tokenizer::new(),
            complete: false,
            dups: DupTracker::default(),
            archive: None,
            touched: Vec::new(),
            gens: super::gens::Gens::default(),
        }
    }

    /// Paths of the transcript files indexed now.
    pub fn file_paths(&self) -> impl Iterator<Item = &std::path::Path> {
        self.files.keys().map(PathBuf::as_path)
    }

    pub fn roots(&self) -> &Arc<Vec<Root>> {
        &self.roots
    }

    /// Every transcript file currently under the roots.
    pub(super) fn discover(&self) -> Vec<SourceFile> {
        let mut files: Vec<SourceFile> = self
            .roots
            .iter()
            .flat_map(|root| root.adapter.discover(&root.dir, &root.pattern))
            .collect();
        files.sort();
        files.dedup_by(|a, b| a.path == b.path);
        files
    }

    /// Applies one conversation's new state: turns from the first changed one are replaced.
    /// Old documents to kill are reported through `kill`; new turns' documents are added by the
    /// caller (initial build) or here through `pending`.
    pub(super) fn update_conversation(
        &mut self,
        entry: &FileEntry,
        conv: ConvId,
        state: ConvUpdate,
        kills: &mut Vec<(u64, u32)>,
    ) {
        let first_changed = state.first_changed;
        self.gens.books.insert(conv);
        let book = self.books.entry(conv).or_default();
        book.truncate(first_changed as usize, kills);
        let mut offsets = self
            .catalog
            .get(conv)
            .map(|c| c.turn_offsets.to_vec())
            .unwrap_or_default();
        offsets.truncate(first_changed as usize);
        offsets.extend(state.offsets);
        let parent = match &entry.src.role {
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
            self.catalog.remove(conv);
            return;
        }
        self.catalog.put(Conversation {
            conv,
            id: state.id,
            file: Arc::clone(&entry.src),
            parent,
            meta: state.meta,
            turn_count: state.turn_count,
            turn_offsets: Column::from(offsets),
            end_offset: entry.state.offset,
            source_turns: state.turn_count,
            followed: true,
            gone_since: None,
        });
        self.touched.push(conv);
    }

    /// Finishes a batch into a segment and records where its documents went.
    pub(super) fn finish_batch(&mut self, batch: Batch) {
        if batch.docs.is_empty() {
            return;
        }
        let id = self.next_seg;
        self.next_seg += 1;
        let seg = batch.builder.finish(id);
        self.place_segment(seg, &batch.docs, true);
    }

    /// Adds a finished segment and records where its documents went.
    /// `new_docs`: the documents are new to the index (not moved by a merge), so they count for
    /// duplicate tracking.
    pub(super) fn place_segment(&mut self, seg: Segment, docs: &[(ConvId, u32)], new_docs: bool) {
        let id = seg.id;
        if new_docs {
            for &key in seg.keys() {
                self.dups.add(key);
            }
        }
        let seg = Arc::new(seg);
        for (doc, &(conv, turn)) in docs.iter().enumerate() {
            self.gens.books.insert(conv);
            let book = self.books.entry(conv).or_default();
            book.set(turn as usize, (id, doc as u32));
        }
        self.view.add(seg);
    }

    /// Group directories that hold indexed files of formats whose groups name projects.
    pub(super) fn project_groups(&self) -> Vec<String> {
        use crate::transcript::{ProjectNaming, adapter};
        self.files
            .values()
            .filter(|f| {
                adapter(f.src.format).is_some_and(|a| a.project_naming() == ProjectNaming::Group)
            })
            .filter_map(|f| f.src.group.clone())
            .collect()
    }

    /// Files, conversations and turns per source directory.
    fn source_health(&self) -> Vec<SourceHealth> {
        let mut out: Vec<SourceHealth> = self
            .roots
            .iter()
            .map(|r| SourceHealth {
                format: r.adapter.name(),
                path: r.dir.clone(),
                exists: r.dir.is_dir(),
                ..SourceHealth::default()
            })
            .collect();
        // byte prefixes: files are always joined onto their root, and this runs per file and
        // per conversation on every update (`Path::starts_with` walks components: slow)
        let keys: Vec<(&'static str, &[u8])> = self
            .roots
            .iter()
            .map(|r| (r.adapter.name(), r.dir.as_os_str().as_encoded_bytes()))
            .collect();
        let index_of = |path: &std::path::Path, format: &str| {
            let b = path.as_os_str().as_encoded_bytes();
            keys.iter().position(|(f, root)| {
                *f == format
                    && b.starts_with(root)
                    && (b.len() == root.len() || b[root.len()] == b'/' || root.ends_with(b"/"))
            })
        };
        let mut rows: Vec<(usize, u64, &FileEntry)> = Vec::new();
        for entry in self.files.values() {
            let Some(i) = index_of(&entry.src.path, entry.src.format) else {
                continue;
            };
            let mut turns = 0;
            for c in entry.convs.iter().filter_map(|&(_, c)| self.catalog.get(c)) {
                turns += u64::from(c.turn_count);
                // a followed conversation's file is this one: counted here, not looked up
                if c.followed {
                    if c.is_subagent() {
                        out[i].subagents += 1;
                    } else {
                        out[i].sessions += 1;
                    }
                }
            }
            rows.push((i, turns, entry));
        }
        // the conversations no followed file holds (kept by the store)
        for conv in self.catalog.iter().filter(|c| !c.followed) {
            if let Some(i) = index_of(&conv.file.path, conv.file.format) {
                if conv.is_subagent() {
                    out[i].subagents += 1;
                } else {
                    out[i].sessions += 1;
                }
            }
        }
        // files that yield no turn although they hold record types we do not know: drift
        let mut drifted: Vec<(u64, BTreeSet<&str>)> = vec![(0, BTreeSet::new()); out.len()];
        // counted by borrowed name first: this runs on every update, over every file
        let mut unknown: Vec<BTreeMap<&str, u64>> = vec![BTreeMap::new(); out.len()];
        for (i, turns, entry) in rows {
            let h = &mut out[i];
            h.files += 1;
            h.turns += turns;
            h.skipped_lines += entry.state.skipped;
            for (kind, n) in &entry.state.unknown {
                *unknown[i].entry(kind.as_str()).or_default() += n;
            }
            if turns == 0 {
                h.files_without_turns += 1;
                if !entry.state.unknown.is_empty() {
                    drifted[i].0 += 1;
                    drifted[i]
                        .1
                        .extend(entry.state.unknown.iter().map(|(k, _)| k.as_str()));
                }
            }
        }
        for (h, counts) in out.iter_mut().zip(unknown) {
            h.unknown_records = counts.into_iter().map(|(k, n)| (k.to_owned(), n)).collect();
        }
        for (h, (files, kinds)) in out.iter_mut().zip(drifted) {
            if files > 0 {
                let kinds: Vec<&str> = kinds.into_iter().take(8).collect();
                h.warning = Some(format!(
                    "{files} {} file(s) under `{}` yielded no turns and hold record types this version does not read ({}): the transcript format may have changed upstream; please report it",
                    h.format,
                    h.path.display(),
                    kinds.join(", ")
                ));
            }
        }
        for h in &mut out {
            if !h.exists {
                h.warning = Some(format!(
                    "{} transcripts directory `{}` does not exist (yet); it is watched for",
                    h.format,
                    h.path.display()
                ));
            } else if h.files > 0 && h.turns == 0 && h.warning.is_none() {
                h.warning = Some(format!(
                    "{} {} file(s) under `{}` were read but yielded no turns: the transcript format may have changed upstream; please report it",
                    h.files,
                    h.format,
                    h.path.display()
                ));
            }
        }
        out
    }

    pub(super) fn publish(&mut self, started: Instant) {
        self.generation += 1;
        self.publish_as_is(started);
    }

    /// Publishes what the writer holds without counting an update (the first build's progress).
    pub(super) fn publish_as_is(&mut self, started: Instant) {
        self.stats.files = self.files.len() as u64;
        self.stats.bytes_indexed = self.files.values().map(|f| f.state.offset).sum();
        self.stats.skipped_lines = self.files.values().map(|f| f.state.skipped).sum();
        self.stats.sources = self.source_health();
        self.stats.last_update_ms = started.elapsed().as_secs_f64() * 1000.0;
        self.shared.publish(Snapshot {
            generation: self.generation,
            complete: self.complete,
            indexed_at: Some(now_ms()),
            catalog: self.catalog.clone(),
            index: self.view.clone(),
            stats: self.stats.clone(),
            roots: Arc::clone(&self.roots),
            dup_multi: self.dups.multi(&self.view),
            store: self.archive.as_ref().map(|a| Arc::clone(&a.store)),
            // fixed at start: `Shared::publish` carries the current ones over
            project: Default::default(),
            progress: Default::default(),
            members: Default::default(),
            tally: Default::default(),
        });
    }
}
