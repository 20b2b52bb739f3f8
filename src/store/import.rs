//! `import`: exchange lines ([`super::exchange`], as `export` writes them, plain or in the
//! `_bulk` form) merged into a store. A first pass checks every line (keeping only ids and turn
//! numbers), a second merges them a few turns at a time in one commit, so a file of any size
//! imports in little memory: a file with a bad line imports nothing, and one that imports,
//! imports whole. Each turn is stored once (importing a file again adds nothing), and a conversation
//! forgotten in this store stays forgotten.
use super::exchange::{Line, VERSION};
use super::record::{ConvRecord, TurnRecord};
use super::write::{Commit, Merged};
use super::{Store, StoreError, schema};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

/// Most bad lines an error lists.
const MAX_LISTED: usize = 10;

/// What `import` merged.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Imported {
    pub path: String,
    /// Conversations in the file.
    pub conversations: u64,
    /// Conversations new to the store, and those it held that gained turns.
    pub conversations_added: u64,
    pub conversations_extended: u64,
    pub turns_added: u64,
    /// Turns the store held already (left as they are).
    pub turns_present: u64,
    /// Conversations forgotten in this store (not imported).
    pub forgotten: Vec<String>,
}

/// What can go wrong importing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImportError {
    #[error("cannot read `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "`{path}` has {count} bad line(s); nothing was imported. Fix or remove them and import again:\n{listed}"
    )]
    BadLines {
        path: String,
        count: usize,
        listed: String,
    },
    #[error("{0}")]
    Changed(String),
    #[error("{0}; nothing was imported")]
    Store(#[from] StoreError),
}

/// What the checking pass keeps of a conversation: where it is described and which turn
/// numbers the file holds (a bit each), not the records.
struct Seen {
    line: usize,
    turn_count: u32,
    turns: Vec<u64>,
}

impl Seen {
    /// Marks turn `n`; false when the file held it already.
    fn mark(&mut self, n: u32) -> bool {
        let (word, bit) = ((n / 64) as usize, 1u64 << (n % 64));
        if self.turns.len() <= word {
            self.turns.resize(word + 1, 0);
        }
        let fresh = self.turns[word] & bit == 0;
        self.turns[word] |= bit;
        fresh
    }

    /// Checks turn `n` of conversation `id`, on line `line`, adding what is wrong to `bad`.
    fn turn(&mut self, id: &str, line: usize, n: u32, bad: &mut Vec<(usize, String)>) {
        if n >= self.turn_count {
            bad.push((
                line,
                format!(
                    "turn {n} of `{id}`, whose conversation line (line {}) says {} turns",
                    self.line, self.turn_count
                ),
            ));
        } else if !self.mark(n) {
            bad.push((line, format!("turn {n} of `{id}` again")));
        }
    }
}

/// Reads `input` line by line, calling `each` with every line's number and what it holds
/// (`None`: a blank or `_bulk` action line).
fn each_line(
    input: &mut dyn BufRead,
    name: &str,
    mut each: impl FnMut(usize, Result<Option<Line>, String>) -> Result<(), ImportError>,
) -> Result<(), ImportError> {
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .map_err(|source| ImportError::Read {
                path: name.to_owned(),
                source,
            })?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        each(number, read_line(&buf))?;
    }
}

/// The first pass: every line checked, keeping only ids and turn numbers, so that a file of
/// any size is checked in little memory. Returns the number of conversations, or every bad
/// line (`line N: what`).
fn check(input: &mut dyn BufRead, name: &str) -> Result<usize, ImportError> {
    let mut convs: HashMap<String, Seen> = HashMap::new();
    // turns seen before their conversation's line: (line number, turn number)
    let mut early: BTreeMap<String, Vec<(usize, u32)>> = BTreeMap::new();
    let mut bad: Vec<(usize, String)> = Vec::new();
    each_line(input, name, |number, line| {
        match line {
            Ok(None) => {}
            Ok(Some(Line::Conversation(c))) => match c.record() {
                Err(e) => bad.push((number, e)),
                Ok(conv) => {
                    if let Some(first) = convs.get(&conv.id) {
                        bad.push((
                            number,
                            format!(
                                "conversation `{}` again (first on line {})",
                                conv.id, first.line
                            ),
                        ));
                        return Ok(());
                    }
                    let mut seen = Seen {
                        line: number,
                        turn_count: conv.turn_count,
                        turns: Vec::new(),
                    };
                    for (line, n) in early.remove(&conv.id).unwrap_or_default() {
                        seen.turn(&conv.id, line, n, &mut bad);
                    }
                    convs.insert(conv.id, seen);
                }
            },
            Ok(Some(Line::Turn(t))) => match t.record() {
                Err(e) => bad.push((number, e)),
                Ok(rec) => match convs.get_mut(&t.conversation) {
                    Some(seen) => seen.turn(&t.conversation, number, rec.number, &mut bad),
                    None => early
                        .entry(t.conversation)
                        .or_default()
                        .push((number, rec.number)),
                },
            },
            Err(e) => bad.push((number, e)),
        }
        Ok(())
    })?;
    for (id, turns) in early {
        for (line, _) in turns {
            bad.push((
                line,
                format!("a turn of `{id}`, which no conversation line of the file describes"),
            ));
        }
    }
    if bad.is_empty() {
        Ok(convs.len())
    } else {
        Err(bad_lines(name, bad))
    }
}

/// The error listing the bad lines (`line N: what`), the first few by line number.
fn bad_lines(name: &str, mut bad: Vec<(usize, String)>) -> ImportError {
    bad.sort_by_key(|(line, _)| *line);
    let count = bad.len();
    let mut listed: Vec<String> = (bad.into_iter().take(MAX_LISTED))
        .map(|(line, what)| format!("line {line}: {what}"))
        .collect();
    if count > MAX_LISTED {
        listed.push(format!("… and {} more", count - MAX_LISTED));
    }
    ImportError::BadLines {
        path: name.to_owned(),
        count,
        listed: listed.join("\n"),
    }
}

/// One line: a record, `None` for a blank line or a `_bulk` action line, or what is wrong.
fn read_line(bytes: &[u8]) -> Result<Option<Line>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned())?;
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let Some(obj) = value.as_object() else {
        return Err("not a JSON object".into());
    };
    if obj.len() == 1 && (obj.contains_key("index") || obj.contains_key("create")) {
        return Ok(None);
    }
    match obj.get("v").and_then(serde_json::Value::as_u64) {
        None => return Err("no record version `v` (an export line starts `{\"v\":1,`)".into()),
        Some(v) if v > u64::from(VERSION) => {
            return Err(format!(
                "record version {v} is newer than this build reads ({VERSION}); upgrade conversation-search"
            ));
        }
        Some(_) => {}
    }
    serde_json::from_value::<super::exchange::Versioned>(value)
        .map(|v| Some(v.line))
        .map_err(|e| format!("not a conversation or turn record: {e}"))
}

/// Most turns merged at once: a conversation's turns are merged in pieces of this many, so
/// the second pass holds one piece, not the file.
const PIECE_TURNS: usize = 256;

/// Most bytes of turn bodies merged at once.
const PIECE_BYTES: usize = 8 << 20;

/// Reads `file` (named `name` in messages) and merges it into the store of `dir`: one pass
/// checks every line, a second merges them in one commit, a few turns at a time.
pub(crate) fn import(dir: &Path, file: &mut File, name: &str) -> Result<Imported, ImportError> {
    let read_err = |source| ImportError::Read {
        path: name.to_owned(),
        source,
    };
    let conversations = check(&mut BufReader::new(&*file), name)?;
    file.seek(SeekFrom::Start(0)).map_err(read_err)?;
    // as the store's writer when no server holds the lock (the schema is created if needed),
    // else beside the running writer: SQLite's own lock serialises the commit with its commits
    let (store, mut writer, note) = Store::open(dir)?;
    if let Some(n) = note {
        tracing::error!("{n}");
    }
    let path = store.path.clone();
    let mut own;
    let conn = match writer.as_mut() {
        Some(w) => &mut w.conn,
        None => {
            own = schema::open_reader(&path)?;
            &mut own
        }
    };
    let mut merger = Merger {
        out: Imported {
            path: path.display().to_string(),
            conversations: conversations as u64,
            ..Imported::default()
        },
        now: crate::util::time::now_ms(),
        ..Merger::default()
    };
    let mut input = BufReader::new(&*file);
    super::write::commit_on(conn, &path, |tx| {
        each_line(&mut input, name, |_, line| match line {
            Ok(Some(l)) => merger.line(tx, l, name),
            Ok(None) => Ok(()),
            // checked by the first pass: a line that fails now was changed since
            Err(e) => Err(changed(name, &e)),
        })?;
        merger.flush(tx)
    })?;
    Ok(merger.out)
}

/// The error for a file that changed between the two passes.
fn changed(name: &str, what: &str) -> ImportError {
    ImportError::Changed(format!(
        "`{name}` changed while it was imported ({what}); nothing was imported: import it again"
    ))
}

/// The second pass: conversations as their lines come, turns gathered into pieces.
#[derive(Default)]
struct Merger {
    out: Imported,
    now: i64,
    /// Every conversation's record (turns may follow their conversation line anywhere).
    convs: HashMap<String, ConvRecord>,
    /// Conversations this import added (their later pieces extend them, not "extended").
    added: HashSet<String>,
    extended: HashSet<String>,
    forgotten: HashSet<String>,
    /// Turns that came before their conversation's line.
    early: HashMap<String, Vec<TurnRecord>>,
    /// The piece being gathered: its conversation, turns and their bytes.
    piece: Option<(String, Vec<TurnRecord>, usize)>,
}

impl Merger {
    fn line(&mut self, tx: &mut Commit<'_>, line: Line, name: &str) -> Result<(), ImportError> {
        let bad = |e: String| changed(name, &e);
        match line {
            Line::Conversation(c) => {
                let mut conv = c.record().map_err(bad)?;
                crate::transcript::redacted::meta(&mut conv.meta);
                // its transcript is not on this machine: only the store has it from now on
                if conv.gone_since.is_none() && !conv.file.path.exists() {
                    conv.gone_since = Some(self.now);
                }
                let early = self.early.remove(&conv.id).unwrap_or_default();
                let id = conv.id.clone();
                self.convs.insert(id.clone(), conv);
                // a conversation without turns in the file is merged all the same
                self.flush(tx)?;
                self.piece = Some((id, Vec::new(), 0));
                for t in early {
                    self.turn(tx, t)?;
                }
            }
            Line::Turn(t) => {
                let rec = t.record().map_err(bad)?;
                if self.convs.contains_key(&t.conversation) {
                    if self
                        .piece
                        .as_ref()
                        .is_none_or(|(id, ..)| *id != t.conversation)
                    {
                        self.flush(tx)?;
                        self.piece = Some((t.conversation, Vec::new(), 0));
                    }
                    self.turn(tx, rec)?;
                } else {
                    self.early.entry(t.conversation).or_default().push(rec);
                }
            }
        }
        Ok(())
    }

    /// Adds a turn to the piece, merging the piece once it is full.
    fn turn(&mut self, tx: &mut Commit<'_>, t: TurnRecord) -> Result<(), ImportError> {
        let Some((_, turns, bytes)) = self.piece.as_mut() else {
            return Ok(());
        };
        *bytes += t.body.len();
        turns.push(t);
        if turns.len() >= PIECE_TURNS || *bytes >= PIECE_BYTES {
            let id = self
                .piece
                .as_ref()
                .map(|(id, ..)| id.clone())
                .unwrap_or_default();
            self.flush(tx)?;
            self.piece = Some((id, Vec::new(), 0));
        }
        Ok(())
    }

    /// Merges the piece gathered so far.
    fn flush(&mut self, tx: &mut Commit<'_>) -> Result<(), ImportError> {
        let Some((id, turns, _)) = self.piece.take() else {
            return Ok(());
        };
        let Some(conv) = self.convs.get(&id) else {
            return Ok(());
        };
        if self.forgotten.contains(&id) {
            return Ok(());
        }
        let offered = turns.len() as u64;
        match tx.merge(conv, &turns)? {
            Merged::Added(n) => {
                self.out.conversations_added += 1;
                self.out.turns_added += n;
                self.added.insert(id);
            }
            Merged::Extended(n) => {
                if n > 0 && !self.added.contains(&id) && self.extended.insert(id) {
                    self.out.conversations_extended += 1;
                }
                self.out.turns_added += n;
                self.out.turns_present += offered - n;
            }
            Merged::Forgotten => {
                self.out.forgotten.push(id.clone());
                self.forgotten.insert(id);
            }
        }
        Ok(())
    }
}
