//! Units read whole on every change (a JSON document, a SQLite database): what the last read
//! reported, so that each read names every conversation present and reports as changed only
//! those whose content changed.
use super::{ConvState, Role, SourceFile, UnitRead, UnitReader};
use rustc_hash::FxHashMap;
use std::io;
use xxhash_rust::xxh3::xxh3_64;

/// The content hash of each conversation the last read reported, and whether the unit ever read.
#[derive(Default)]
pub(crate) struct Reported {
    hashes: FxHashMap<String, u64>,
    read_once: bool,
}

impl Reported {
    /// The read of a unit whose conversations are `convs`. A unit that does not parse
    /// (`InvalidData`: caught mid-rewrite, or not the format's) is an error once it has read, so
    /// the last reading stays until the next change; one that never read is an empty unit with
    /// one skipped record (`index_status` shows it).
    pub(crate) fn read(&mut self, convs: io::Result<Vec<ConvState>>) -> io::Result<UnitRead> {
        let convs = match convs {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::InvalidData && !self.read_once => {
                return Ok(UnitRead {
                    skipped: 1,
                    ..UnitRead::default()
                });
            }
            Err(e) => return Err(e),
        };
        self.read_once = true;
        let mut read = UnitRead::default();
        let mut hashes = FxHashMap::default();
        for c in convs {
            let hash = xxh3_64(format!("{:?}{:?}", c.meta, c.completed).as_bytes());
            read.present.push(c.id.clone());
            hashes.insert(c.id.clone(), hash);
            if self.hashes.get(&c.id) != Some(&hash) {
                read.changed.push(c);
            }
        }
        self.hashes = hashes;
        Ok(read)
    }
}

/// `items` grouped by the conversation `key` says each belongs to, in their order.
pub(crate) fn by_conversation<T>(
    items: &[T],
    key: impl Fn(&T) -> &str,
) -> FxHashMap<&str, Vec<&T>> {
    let mut out: FxHashMap<&str, Vec<&T>> = FxHashMap::default();
    for item in items {
        out.entry(key(item)).or_default().push(item);
    }
    out
}

/// How a whole document becomes its conversation: the document's text and the conversation id
/// to use when it names none.
pub(crate) type ParseDocument = fn(&str, &str) -> io::Result<ConvState>;

/// A unit that is one JSON document holding one conversation, re-read whole on every change.
pub(crate) struct DocumentReader {
    format: &'static str,
    parse: ParseDocument,
    reported: Reported,
}

impl DocumentReader {
    pub(crate) fn new(format: &'static str, parse: ParseDocument) -> DocumentReader {
        DocumentReader {
            format,
            parse,
            reported: Reported::default(),
        }
    }
}

impl UnitReader for DocumentReader {
    fn read(&mut self, file: &SourceFile) -> io::Result<UnitRead> {
        let bytes = std::fs::read(&file.path)?;
        let fallback = match &file.role {
            Role::Session { id } => id.clone(),
            Role::Subagent { agent_id, .. } => format!("{}:{agent_id}", self.format),
        };
        let conv = (self.parse)(&String::from_utf8_lossy(&bytes), &fallback);
        self.reported.read(conv.map(|c| vec![c]))
    }
}
