//! `import`: exchange lines ([`super::exchange`], as `export` writes them, plain or in the
//! `_bulk` form) merged into a store. Every line is checked before anything is written, and
//! the merge is one commit: a file with a bad line imports nothing, and one that imports, imports
//! whole. Each turn is stored once (importing a file again adds nothing), and a conversation
//! forgotten in this store stays forgotten.
use super::exchange::{Line, VERSION};
use super::record::{ConvRecord, TurnRecord};
use super::write::Merged;
use super::{Store, StoreError, schema};
use std::collections::BTreeMap;
use std::io::BufRead;
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
    #[error("{0}; nothing was imported")]
    Store(#[from] StoreError),
}

/// A conversation read from the file, and its turns by number.
struct Incoming {
    line: usize,
    conv: ConvRecord,
    turns: BTreeMap<u32, TurnRecord>,
}

/// The file's lines, checked: conversations by id, or every bad line (`line N: what`).
fn parse(input: &mut dyn BufRead, name: &str) -> Result<BTreeMap<String, Incoming>, ImportError> {
    let mut parsed = Parsed::default();
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
            break;
        }
        number += 1;
        match read_line(&buf) {
            Ok(None) => {}
            Ok(Some(Line::Conversation(c))) => match c.record() {
                Err(e) => parsed.bad.push(format!("line {number}: {e}")),
                Ok(conv) => parsed.conversation(number, conv),
            },
            Ok(Some(Line::Turn(t))) => match t.record() {
                Err(e) => parsed.bad.push(format!("line {number}: {e}")),
                Ok(rec) => parsed.turn(number, t.conversation.clone(), rec),
            },
            Err(e) => parsed.bad.push(format!("line {number}: {e}")),
        }
    }
    parsed.finish(name)
}

/// The lines read so far: the conversations, the turns seen before their conversation's line,
/// and what is wrong.
#[derive(Default)]
struct Parsed {
    convs: BTreeMap<String, Incoming>,
    /// Turns seen before their conversation's line: (line number, record).
    early: BTreeMap<String, Vec<(usize, TurnRecord)>>,
    bad: Vec<String>,
}

impl Parsed {
    /// A conversation on line `number`, redacted; it takes the turns that came before it.
    fn conversation(&mut self, number: usize, mut conv: ConvRecord) {
        crate::transcript::redacted::meta(&mut conv.meta);
        if let Some(first) = self.convs.get(&conv.id) {
            self.bad.push(format!(
                "line {number}: conversation `{}` again (first on line {})",
                conv.id, first.line
            ));
            return;
        }
        let turns = self
            .early
            .remove(&conv.id)
            .unwrap_or_default()
            .into_iter()
            .map(|(_, t)| (t.number, t))
            .collect();
        self.convs.insert(
            conv.id.clone(),
            Incoming {
                line: number,
                conv,
                turns,
            },
        );
    }

    /// A turn of conversation `id` on line `number`.
    fn turn(&mut self, number: usize, id: String, rec: TurnRecord) {
        match self.convs.get_mut(&id) {
            Some(c) => {
                let turn = rec.number;
                if c.turns.insert(rec.number, rec).is_some() {
                    self.bad
                        .push(format!("line {number}: turn {turn} of `{id}` again"));
                }
            }
            None => self.early.entry(id).or_default().push((number, rec)),
        }
    }

    /// The conversations, once turns without a conversation and turns past a conversation's
    /// count are found; or the bad lines, in line order, the first [`MAX_LISTED`] listed.
    fn finish(mut self, name: &str) -> Result<BTreeMap<String, Incoming>, ImportError> {
        for (id, turns) in &self.early {
            for (line, _) in turns {
                self.bad.push(format!(
                    "line {line}: a turn of `{id}`, which no conversation line of the file describes"
                ));
            }
        }
        for c in self.convs.values() {
            if let Some((&n, _)) = c.turns.range(c.conv.turn_count..).next() {
                self.bad.push(format!(
                    "line {}: conversation `{}` says {} turns, but the file has turn {n}",
                    c.line, c.conv.id, c.conv.turn_count
                ));
            }
        }
        let mut bad = self.bad;
        if bad.is_empty() {
            return Ok(self.convs);
        }
        bad.sort_by_key(|l| {
            l.split(':')
                .next()
                .and_then(|s| s.trim_start_matches("line ").parse::<usize>().ok())
        });
        let count = bad.len();
        let mut listed: Vec<String> = bad.into_iter().take(MAX_LISTED).collect();
        if count > MAX_LISTED {
            listed.push(format!("… and {} more", count - MAX_LISTED));
        }
        Err(ImportError::BadLines {
            path: name.to_owned(),
            count,
            listed: listed.join("\n"),
        })
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

/// Reads `input` (named `name` in messages) and merges it into the store of `dir`.
pub(crate) fn import(
    dir: &Path,
    input: &mut dyn BufRead,
    name: &str,
) -> Result<Imported, ImportError> {
    let convs = parse(input, name)?;
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
    let mut out = Imported {
        path: path.display().to_string(),
        conversations: convs.len() as u64,
        ..Imported::default()
    };
    let now = crate::util::time::now_ms();
    let merged = super::write::commit_on(conn, &path, |tx| {
        let mut merged = Vec::with_capacity(convs.len());
        for (id, c) in &convs {
            let mut conv = c.conv.clone();
            // its transcript is not on this machine: only the store has it from now on
            if conv.gone_since.is_none() && !conv.file.path.exists() {
                conv.gone_since = Some(now);
            }
            let turns: Vec<TurnRecord> = c.turns.values().cloned().collect();
            merged.push((id.clone(), turns.len() as u64, tx.merge(&conv, &turns)?));
        }
        Ok(merged)
    })?;
    for (id, offered, m) in merged {
        match m {
            Merged::Added(n) => {
                out.conversations_added += 1;
                out.turns_added += n;
            }
            Merged::Extended(n) => {
                if n > 0 {
                    out.conversations_extended += 1;
                }
                out.turns_added += n;
                out.turns_present += offered - n;
            }
            Merged::Forgotten => out.forgotten.push(id),
        }
    }
    Ok(out)
}
