//! What the index stores about a document: its fields, the per-field term frequencies of a
//! posting, the metadata kept per document and its text by field. A leaf: every other index
//! module builds on these definitions and this module imports none of them.

/// Indexed fields of a turn.
pub const FIELD_USER: usize = 0;
pub const FIELD_ASSISTANT: usize = 1;
/// Tool names, files touched and commands run.
pub const FIELD_TOOLS: usize = 2;
pub const FIELDS: usize = 3;

/// Term frequencies of one posting, per field.
pub type Tf = [u32; FIELDS];

/// Per-document metadata kept in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocMeta {
    /// The caller's number for the group the document belongs to (a conversation).
    pub conv: u32,
    pub turn: u32,
    /// Epoch milliseconds, `i64::MIN` when unknown.
    pub timestamp: i64,
    /// Number of terms in the document (BM25 length).
    pub len: u32,
    /// Start of the turn's text in the segment's text arena; field lengths follow.
    pub text_start: u64,
    pub field_len: [u32; FIELDS],
    /// Duplicate-turn fingerprint (0 = none).
    pub dup_key: u64,
}

/// The text of one document, by field.
#[derive(Debug, Clone, Copy)]
pub struct DocText<'a> {
    pub user: &'a str,
    pub assistant: &'a str,
    pub tools: &'a str,
}

impl<'a> DocText<'a> {
    pub fn field(&self, f: usize) -> &'a str {
        match f {
            FIELD_USER => self.user,
            FIELD_ASSISTANT => self.assistant,
            _ => self.tools,
        }
    }
}

/// A document to add: where it belongs and its text by field.
#[derive(Debug, Clone, Copy)]
pub struct NewDoc<'a> {
    pub conv: u32,
    pub turn: u32,
    pub timestamp: Option<i64>,
    pub dup_key: Option<u64>,
    pub fields: [&'a str; FIELDS],
}
