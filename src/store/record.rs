//! What the store keeps of a turn and of a conversation, as compressed, checksummed records:
//! exactly what the tools return (prompt, reply, tool calls as `read_turn` renders them,
//! timestamp; a conversation's source, project inputs, titles, parent links) and nothing more —
//! never tool results or thinking, which the transcript layer never hands out anyway.
use crate::transcript::{
    Attachment, ConvMeta, Role, SourceFile, SummaryRecord, ToolCall, ToolKind, Turn,
};
use crate::util::codec::{Decoder, Encoder, corrupt};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use xxhash_rust::xxh3::Xxh3Default;

/// Payloads shorter than this are stored as they are (deflate would not pay off).
const COMPRESS_MIN: usize = 96;
/// Largest payload a record may inflate to (a guard against a damaged length).
const INFLATE_LIMIT: usize = 256 << 20;

/// One turn as stored: its identity and a compressed body whose checksum is `hash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnRecord {
    pub number: u32,
    /// Checksum of the content (body and timestamp): equal hashes mean the same turn, so a
    /// rewrite with the same content is a no-op and an in-place edit replaces the old version.
    pub hash: u64,
    pub timestamp: Option<i64>,
    /// The corpus's duplicate key (a resumed or forked copy of a turn shares it).
    pub dup_key: Option<u64>,
    pub body: Vec<u8>,
}

/// The content hash of a payload and timestamp.
fn content_hash(payload: &[u8], timestamp: Option<i64>) -> u64 {
    let mut h = Xxh3Default::new();
    h.update(payload);
    h.update(&timestamp.unwrap_or(i64::MIN).to_le_bytes());
    // 0 never appears, so a zeroed column reads as damaged
    h.digest().max(1)
}

/// Deflate level of what is committed: [`pack`].
const LEVEL: u8 = 6;
/// Deflate level of the records a first build's workers make ([`TurnRecord::packed_of`]):
/// several times faster than [`LEVEL`], the output somewhat larger.
const QUICK_LEVEL: u8 = 1;

/// Compresses a payload: one tag byte (0 stored, 1 deflate) then the bytes.
pub(crate) fn pack(payload: &[u8]) -> Vec<u8> {
    pack_at(payload, LEVEL)
}

/// [`pack`] at deflate level `level`.
fn pack_at(payload: &[u8], level: u8) -> Vec<u8> {
    if payload.len() < COMPRESS_MIN {
        let mut out = Vec::with_capacity(payload.len() + 1);
        out.push(0);
        out.extend_from_slice(payload);
        return out;
    }
    // extended from one byte: the body holds no more than it needs
    let mut out = vec![1];
    out.extend(miniz_oxide::deflate::compress_to_vec(payload, level));
    out
}

/// A record body as it goes to disk: a raw body (as [`TurnRecord::of`] makes them, so reading
/// transcripts never waits for compression) is deflated here, at commit time.
pub(crate) fn packed(body: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match body.split_first() {
        Some((0, payload)) if payload.len() >= COMPRESS_MIN => {
            std::borrow::Cow::Owned(pack(payload))
        }
        _ => std::borrow::Cow::Borrowed(body),
    }
}

/// A payload as a raw (not deflated) record body.
fn raw(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 1);
    out.push(0);
    out.extend_from_slice(payload);
    out
}

/// The payload of a packed record.
pub(crate) fn unpack(body: &[u8]) -> io::Result<Vec<u8>> {
    match body.split_first() {
        Some((0, rest)) => Ok(rest.to_vec()),
        Some((1, rest)) => miniz_oxide::inflate::decompress_to_vec_with_limit(rest, INFLATE_LIMIT)
            .map_err(|_| corrupt("record does not inflate")),
        _ => Err(corrupt("unknown record encoding")),
    }
}

/// Only the arguments `read_turn` renders for a call of this kind (the full command line is
/// kept: search matches it).
fn put_tool<W: Write>(e: &mut Encoder<W>, t: &ToolCall) -> io::Result<()> {
    e.str(&t.name)?;
    e.u8(kind_code(t.kind))?;
    let (file, chars, command, pattern, agent, web, action) = match t.kind {
        ToolKind::Read | ToolKind::Edit => (true, false, false, false, false, false, false),
        ToolKind::Write => (true, true, false, false, false, false, false),
        ToolKind::Shell => (false, false, true, false, false, false, false),
        ToolKind::Search => (false, false, false, true, false, false, false),
        ToolKind::Agent => (false, false, false, false, true, false, false),
        ToolKind::Web => (false, false, false, false, false, true, false),
        ToolKind::Browser => (false, false, false, false, false, false, true),
        ToolKind::Other => (false, false, false, false, false, false, false),
    };
    let pick = |keep: bool, v: &Option<String>| if keep { v.clone() } else { None };
    for s in [
        pick(file, &t.file),
        pick(command, &t.command),
        pick(pattern, &t.pattern),
        pick(agent, &t.agent_type),
        pick(agent, &t.description),
        pick(web, &t.query),
        pick(web, &t.url),
        pick(action, &t.action),
    ] {
        e.opt_str(s.as_deref())?;
    }
    e.opt_i64(if chars {
        t.chars.map(|c| c as i64)
    } else {
        None
    })
}

fn get_tool<R: Read>(d: &mut Decoder<R>) -> io::Result<ToolCall> {
    let name = d.string()?;
    let kind = kind_of_code(d.u8()?)?;
    Ok(ToolCall {
        id: None,
        name,
        kind,
        file: d.opt_string()?,
        command: d.opt_string()?,
        pattern: d.opt_string()?,
        agent_type: d.opt_string()?,
        description: d.opt_string()?,
        query: d.opt_string()?,
        url: d.opt_string()?,
        action: d.opt_string()?,
        chars: d.opt_i64()?.map(|c| c as u64),
    })
}

const KINDS: [ToolKind; 9] = [
    ToolKind::Read,
    ToolKind::Write,
    ToolKind::Edit,
    ToolKind::Shell,
    ToolKind::Search,
    ToolKind::Agent,
    ToolKind::Web,
    ToolKind::Browser,
    ToolKind::Other,
];

fn kind_code(k: ToolKind) -> u8 {
    KINDS.iter().position(|&x| x == k).unwrap_or(8) as u8
}

fn kind_of_code(c: u8) -> io::Result<ToolKind> {
    KINDS
        .get(c as usize)
        .copied()
        .ok_or_else(|| corrupt("tool kind"))
}

impl TurnRecord {
    /// The record of a turn.
    pub(crate) fn of(turn: &Turn) -> Self {
        let mut e = Encoder::new(Vec::new());
        let written = (|| {
            e.str(&turn.user_text)?;
            e.str(&turn.assistant_text)?;
            e.varint(turn.tools.len() as u64)?;
            turn.tools.iter().try_for_each(|t| put_tool(&mut e, t))?;
            e.varint(turn.attachments.len() as u64)?;
            turn.attachments.iter().try_for_each(|a| {
                e.str(&a.kind)?;
                e.opt_str(a.media_type.as_deref())
            })
        })();
        debug_assert!(written.is_ok(), "writing to a Vec cannot fail");
        let payload = e.into_inner();
        TurnRecord {
            number: turn.number,
            hash: content_hash(&payload, turn.timestamp),
            timestamp: turn.timestamp,
            dup_key: turn.dup_key,
            body: raw(&payload),
        }
    }

    /// The record of a turn with its body deflated now (quickly): what a first build's workers
    /// make, so that the turns waiting for the store take a fraction of their text's memory
    /// and the commits that drain them, on the writer's thread, do not compress.
    pub(crate) fn packed_of(turn: &Turn) -> Self {
        let mut r = Self::of(turn);
        if r.body.len() > COMPRESS_MIN {
            r.body = pack_at(&r.body[1..], QUICK_LEVEL);
        }
        r
    }

    /// The turn back, checked against its hash.
    pub(crate) fn turn(&self) -> io::Result<Turn> {
        let payload = unpack(&self.body)?;
        if content_hash(&payload, self.timestamp) != self.hash {
            return Err(corrupt("turn record fails its checksum"));
        }
        let mut d = Decoder::new(payload.as_slice());
        let user_text = d.string()?;
        let assistant_text = d.string()?;
        let mut tools = Vec::new();
        for _ in 0..d.length()? {
            tools.push(get_tool(&mut d)?);
        }
        let mut attachments = Vec::new();
        for _ in 0..d.length()? {
            attachments.push(Attachment {
                kind: d.string()?,
                media_type: d.opt_string()?,
            });
        }
        Ok(Turn {
            number: self.number,
            start_offset: 0,
            timestamp: self.timestamp,
            user_text,
            assistant_text,
            tools,
            attachments,
            dup_key: self.dup_key,
        })
    }
}

/// A conversation as stored (its turns are rows of their own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConvRecord {
    pub id: String,
    /// The transcript it was last read from (format, path, group, role).
    pub file: SourceFile,
    pub parent: Option<String>,
    pub meta: ConvMeta,
    /// Turns stored (the most the conversation ever had: a transcript that shrank keeps its
    /// stored tail).
    pub turn_count: u32,
    /// Bytes of the transcript read when it was stored (tells a stale row from a current one).
    pub end_offset: u64,
    /// When its transcript was found gone; `None` while it exists.
    pub gone_since: Option<i64>,
}

impl ConvRecord {
    /// The packed description (source role, parent, metadata) and its checksum.
    pub(crate) fn blob(&self) -> (u64, Vec<u8>) {
        let mut e = Encoder::new(Vec::new());
        let written = (|| {
            put_role(&mut e, &self.file.role)?;
            e.opt_str(self.parent.as_deref())?;
            put_meta(&mut e, &self.meta)
        })();
        debug_assert!(written.is_ok(), "writing to a Vec cannot fail");
        let payload = e.into_inner();
        (content_hash(&payload, None), pack(&payload))
    }

    /// Reads the packed description back into `self` (`file.role`, `parent`, `meta`).
    pub(crate) fn read_blob(&mut self, hash: u64, blob: &[u8]) -> io::Result<()> {
        let payload = unpack(blob)?;
        if content_hash(&payload, None) != hash {
            return Err(corrupt("conversation record fails its checksum"));
        }
        let mut d = Decoder::new(payload.as_slice());
        self.file.role = get_role(&mut d)?;
        self.parent = d.opt_string()?;
        self.meta = get_meta(&mut d)?;
        Ok(())
    }

    /// An empty record for `id` read from `path` (filled by [`ConvRecord::read_blob`]).
    pub(crate) fn bare(
        id: String,
        format: &'static str,
        path: PathBuf,
        group: Option<String>,
    ) -> Self {
        ConvRecord {
            id,
            file: SourceFile {
                path,
                format,
                group,
                role: Role::Session { id: String::new() },
            },
            parent: None,
            meta: ConvMeta::default(),
            turn_count: 0,
            end_offset: 0,
            gone_since: None,
        }
    }
}

/// A source file's role.
pub(crate) fn put_role<W: Write>(e: &mut Encoder<W>, role: &Role) -> io::Result<()> {
    match role {
        Role::Session { id } => {
            e.u8(0)?;
            e.str(id)
        }
        Role::Subagent {
            agent_id,
            parent,
            agent_type,
            description,
        } => {
            e.u8(1)?;
            e.str(agent_id)?;
            e.opt_str(parent.as_deref())?;
            e.opt_str(agent_type.as_deref())?;
            e.opt_str(description.as_deref())
        }
    }
}

pub(crate) fn get_role<R: Read>(d: &mut Decoder<R>) -> io::Result<Role> {
    Ok(match d.u8()? {
        0 => Role::Session { id: d.string()? },
        1 => Role::Subagent {
            agent_id: d.string()?,
            parent: d.opt_string()?,
            agent_type: d.opt_string()?,
            description: d.opt_string()?,
        },
        _ => return Err(corrupt("role")),
    })
}

/// A conversation's metadata (titles, summaries, cwd, branch, parent links, times).
pub(crate) fn put_meta<W: Write>(e: &mut Encoder<W>, m: &ConvMeta) -> io::Result<()> {
    for s in [
        &m.recorded_session_id,
        &m.cwd,
        &m.git_branch,
        &m.slug,
        &m.custom_title,
        &m.ai_title,
        &m.first_prompt,
        &m.parent_id,
        &m.forked_from,
        &m.agent_type,
        &m.agent_description,
    ] {
        e.opt_str(s.as_deref())?;
    }
    e.opt_i64(m.first_ts)?;
    e.opt_i64(m.last_ts)?;
    e.opt_i64(m.created_ts)?;
    e.varint(m.cwds.len() as u64)?;
    for c in &m.cwds {
        e.str(c)?;
    }
    e.varint(m.summaries.len() as u64)?;
    for s in &m.summaries {
        e.str(&s.text)?;
        e.opt_str(s.leaf.as_deref())?;
        e.bool(s.leaf_in_file)?;
    }
    Ok(())
}

pub(crate) fn get_meta<R: Read>(d: &mut Decoder<R>) -> io::Result<ConvMeta> {
    let mut m = ConvMeta {
        recorded_session_id: d.opt_string()?,
        cwd: d.opt_string()?,
        git_branch: d.opt_string()?,
        slug: d.opt_string()?,
        custom_title: d.opt_string()?,
        ai_title: d.opt_string()?,
        first_prompt: d.opt_string()?,
        parent_id: d.opt_string()?,
        forked_from: d.opt_string()?,
        agent_type: d.opt_string()?,
        agent_description: d.opt_string()?,
        ..ConvMeta::default()
    };
    m.first_ts = d.opt_i64()?;
    m.last_ts = d.opt_i64()?;
    m.created_ts = d.opt_i64()?;
    for _ in 0..d.length()? {
        m.cwds.push(d.string()?);
    }
    for _ in 0..d.length()? {
        m.summaries.push(SummaryRecord {
            text: d.string()?,
            leaf: d.opt_string()?,
            leaf_in_file: d.bool()?,
        });
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn() -> Turn {
        Turn {
            number: 3,
            start_offset: 99,
            timestamp: Some(1_700_000_000_000),
            user_text: "fix the parser ".repeat(20),
            assistant_text: "done".into(),
            tools: vec![
                ToolCall {
                    id: Some("toolu_1".into()),
                    name: "Bash".into(),
                    kind: ToolKind::Shell,
                    command: Some("cargo test".into()),
                    file: Some("ignored for a shell".into()),
                    ..ToolCall::default()
                },
                ToolCall {
                    name: "Write".into(),
                    kind: ToolKind::Write,
                    file: Some("/a/b.rs".into()),
                    chars: Some(120),
                    ..ToolCall::default()
                },
            ],
            attachments: vec![Attachment {
                kind: "image".into(),
                media_type: Some("image/png".into()),
            }],
            dup_key: Some(42),
        }
    }

    #[test]
    fn a_turn_round_trips_without_what_read_turn_does_not_show() {
        let mut r = TurnRecord::of(&turn());
        assert_eq!(r.body[0], 0, "made raw while reading transcripts");
        r.body = packed(&r.body).into_owned();
        assert_eq!(r.body[0], 1, "long text is deflated when committed");
        let back = r.turn().expect("decodes");
        assert_eq!(back.user_text, turn().user_text);
        assert_eq!(back.tools[0].command.as_deref(), Some("cargo test"));
        assert_eq!(back.tools[0].file, None);
        assert_eq!(back.tools[0].id, None);
        assert_eq!(back.tools[1].chars, Some(120));
        assert_eq!(back.dup_key, Some(42));
        assert_eq!(back.attachments, turn().attachments);
        assert_eq!(
            TurnRecord::of(&turn()).hash,
            r.hash,
            "same content, same hash"
        );
    }

    #[test]
    fn a_record_packed_while_reading_is_the_same_turn_and_committed_as_it_is() {
        let quick = TurnRecord::packed_of(&turn());
        let raw = TurnRecord::of(&turn());
        assert_eq!(quick.body[0], 1, "deflated already");
        assert!(quick.body.len() < raw.body.len());
        assert_eq!(quick.hash, raw.hash, "the hash is of the content");
        assert_eq!(quick.turn().expect("decodes"), raw.turn().expect("decodes"));
        assert!(matches!(packed(&quick.body), std::borrow::Cow::Borrowed(_)));
        let short = TurnRecord::packed_of(&Turn {
            user_text: "short".into(),
            ..turn()
        });
        assert_eq!(short.body[0], 0, "too short to deflate");
    }

    #[test]
    fn a_damaged_body_fails_its_checksum() {
        let mut r = TurnRecord::of(&Turn {
            user_text: "short".into(),
            ..turn()
        });
        let last = r.body.len() - 1;
        r.body[last] ^= 0x20;
        assert!(r.turn().is_err());
    }
}
