//! The head section of the persistent index: the catalog (every file with what was read of it
//! and the conversations it holds; every conversation's metadata, turn count and turn offsets),
//! without where the documents live nor the segments, so a reader that needs only the catalog
//! decodes nothing else. Its file entry and its conversation entry are also the deltas'
//! (`delta`), which name a conversation's file differently.
use super::catalog::{Catalog, ConvId, Conversation};
use super::files::{FileEntry, Files};
use super::generation::Generation;
use super::ingest::{CachedState, FileState, Fingerprint};
use crate::store::record::{get_meta, get_role, put_meta, put_role};
use crate::transcript::{SourceFile, adapter};
use crate::util::blob::{Blob, Cursor};
use crate::util::codec::{Decoder, Encoder, Source, corrupt};
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A file's entry as read back: its description, what was read of it, and its conversations
/// (id as the parser reports it, internal id).
pub(super) type CachedFile = (SourceFile, CachedState, Vec<(String, ConvId)>);

/// The catalog as read back from a head section.
pub(super) struct Head {
    /// Each file's read state and its conversations (id as the parser reports it, internal id).
    pub(super) files: Vec<(FileState, Vec<(String, ConvId)>)>,
    pub(super) convs: Vec<Conversation>,
    pub(super) next_conv: ConvId,
    pub(super) next_seg: u64,
    /// Who wrote it ([`crate::cache::Cache::sharing`]) and the generation it is: chain and
    /// sequence number (see [`crate::cache::sharing`]).
    pub(super) sharing: u64,
    pub(super) chain: u64,
    pub(super) seq: u64,
}

fn put_time<W: Write>(e: &mut Encoder<W>, t: Option<SystemTime>) -> io::Result<()> {
    match t.and_then(|t| t.duration_since(UNIX_EPOCH).ok()) {
        Some(d) => {
            e.u8(1)?;
            e.u64(d.as_secs())?;
            e.u32(d.subsec_nanos())
        }
        None => e.u8(0),
    }
}

fn get_time<R: Read>(d: &mut Decoder<R>) -> io::Result<Option<SystemTime>> {
    if !d.bool()? {
        return Ok(None);
    }
    let secs = d.u64()?;
    let nanos = d.u32()?;
    Ok(UNIX_EPOCH.checked_add(Duration::new(secs, nanos.min(999_999_999))))
}

fn put_source<W: Write>(e: &mut Encoder<W>, s: &SourceFile) -> io::Result<()> {
    e.bytes(s.path.as_os_str().as_encoded_bytes())?;
    e.str(s.format)?;
    e.opt_str(s.group.as_deref())?;
    put_role(e, &s.role)
}

fn get_source<R: Read>(d: &mut Decoder<R>) -> io::Result<SourceFile> {
    let path = PathBuf::from(String::from_utf8(d.bytes()?).map_err(|_| corrupt("path"))?);
    let format = adapter(&d.string()?)
        .ok_or_else(|| corrupt("unknown format"))?
        .name();
    let group = d.opt_string()?;
    let role = get_role(d)?;
    Ok(SourceFile {
        path,
        format,
        group,
        role,
    })
}

/// A file's entry, shared by the head and the deltas: its description, what was read of it,
/// and its conversations (id as the parser reports it, internal id).
pub(super) fn put_file_entry<W: Write>(e: &mut Encoder<W>, entry: &FileEntry) -> io::Result<()> {
    put_source(e, &entry.src)?;
    put_cached(e, &entry.state.cached())?;
    e.varint(entry.convs.len() as u64)?;
    for (id, conv) in &entry.convs {
        e.str(id)?;
        e.u32(*conv)?;
    }
    Ok(())
}

/// A file's entry as [`put_file_entry`] wrote it; its internal conversation ids must be below
/// `next_conv`.
pub(super) fn get_file_entry<R: Read>(
    d: &mut Decoder<R>,
    next_conv: ConvId,
) -> io::Result<CachedFile> {
    let src = get_source(d)?;
    let cached = get_cached(d)?;
    let mut convs = Vec::new();
    for _ in 0..d.length()? {
        let id = d.string()?;
        let conv = d.u32()?;
        if conv >= next_conv {
            return Err(corrupt("conversation id"));
        }
        convs.push((id, conv));
    }
    Ok((src, cached, convs))
}

/// The head section's bytes: who wrote it and the generation it is, the ids to hand out next,
/// the files, the conversations.
pub(super) fn head_bytes(
    sharing: u64,
    generation: &Generation,
    files: &Files,
    catalog: &Catalog,
    next_seg: u64,
) -> io::Result<Vec<u8>> {
    let mut e = Encoder::new(Vec::new());
    // first: read without decoding the rest by `Cache::peek_base_generation`
    e.u64(sharing)?;
    e.u64(generation.chain)?;
    e.u64(generation.seq)?;
    e.u32(catalog.next_id())?;
    e.u64(next_seg)?;
    e.varint(files.len() as u64)?;
    let file_index: HashMap<&Path, u64> = files
        .paths()
        .enumerate()
        .map(|(i, p)| (p, i as u64))
        .collect();
    for entry in files.entries() {
        put_file_entry(&mut e, entry)?;
    }
    let convs: Vec<&Arc<Conversation>> = catalog.iter().collect();
    e.varint(convs.len() as u64)?;
    for c in convs {
        e.u32(c.conv)?;
        put_conv_fields(&mut e, c, Some(&file_index))?;
    }
    Ok(e.into_inner())
}

fn put_cached<W: Write>(e: &mut Encoder<W>, s: &CachedState) -> io::Result<()> {
    e.u64(s.offset)?;
    e.u64(s.size)?;
    put_time(e, s.mtime)?;
    e.u64(s.fingerprint.head)?;
    e.u64(s.fingerprint.tail)?;
    e.u64(s.fingerprint.prefix)?;
    e.u64(s.fingerprint.sampled)?;
    e.u64(s.skipped)?;
    e.varint(s.unknown.len() as u64)?;
    for (kind, n) in &s.unknown {
        e.str(kind)?;
        e.u64(*n)?;
    }
    e.varint(s.stamp.len() as u64)?;
    for st in &s.stamp {
        match st {
            Some((size, mtime)) => {
                e.u8(1)?;
                e.u64(*size)?;
                put_time(e, *mtime)?;
            }
            None => e.u8(0)?,
        }
    }
    Ok(())
}

fn get_cached<R: Read>(d: &mut Decoder<R>) -> io::Result<CachedState> {
    let offset = d.u64()?;
    let size = d.u64()?;
    let mtime = get_time(d)?;
    let fingerprint = Fingerprint {
        head: d.u64()?,
        tail: d.u64()?,
        prefix: d.u64()?,
        sampled: d.u64()?,
    };
    let skipped = d.u64()?;
    let mut unknown = Vec::new();
    for _ in 0..d.length()? {
        unknown.push((d.string()?, d.u64()?));
    }
    let mut stamp = Vec::new();
    for _ in 0..d.length()? {
        stamp.push(if d.bool()? {
            Some((d.u64()?, get_time(d)?))
        } else {
            None
        });
    }
    Ok(CachedState {
        offset,
        size,
        mtime,
        fingerprint,
        skipped,
        unknown,
        stamp,
    })
}

/// Decodes a head section (already verified against its checksum); every byte must be used.
/// Arrays of a mapped head (the turn offsets) stay views of the mapping.
pub(super) fn read_head(bytes: Blob) -> io::Result<Head> {
    let mut d = Decoder::new(Cursor::new(bytes));
    // verified bytes can still be a bug's: a panic while decoding is a corrupt file
    let head = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode_head(&mut d)))
        .map_err(|_| corrupt("undecodable head"))??;
    let mut extra = [0u8; 1];
    if d.fill(&mut extra).is_ok() {
        return Err(corrupt("trailing bytes in head"));
    }
    Ok(head)
}

fn decode_head<R: Source>(d: &mut Decoder<R>) -> io::Result<Head> {
    let sharing = d.u64()?;
    let chain = d.u64()?;
    let seq = d.u64()?;
    let next_conv = d.u32()?;
    let next_seg = d.u64()?;
    let mut files = Vec::new();
    let mut sources: Vec<Arc<SourceFile>> = Vec::new();
    for _ in 0..d.length()? {
        let (src, cached, convs) = get_file_entry(d, next_conv)?;
        sources.push(Arc::new(src.clone()));
        files.push((FileState::restored(src, cached), convs));
    }
    let mut convs = Vec::new();
    for _ in 0..d.length()? {
        let conv = d.u32()?;
        let c = get_conv_fields(d, conv, Some(&sources))?;
        if conv >= next_conv {
            return Err(corrupt("conversation"));
        }
        convs.push(c);
    }
    Ok(Head {
        files,
        convs,
        next_conv,
        next_seg,
        sharing,
        chain,
        seq,
    })
}

/// A conversation's entry after its internal id (written by the caller, with whatever precedes it),
/// shared by the head and the deltas. Its file is named by index into the head's file table
/// (`table`, the head's), one past the last meaning the file's description follows the entry
/// (a store-only conversation, whose file is not followed); without a table (a delta) the
/// description always follows.
pub(super) fn put_conv_fields<W: Write>(
    e: &mut Encoder<W>,
    c: &Conversation,
    table: Option<&HashMap<&Path, u64>>,
) -> io::Result<()> {
    e.str(&c.id)?;
    let inline = match table {
        Some(table) => {
            let index = table.get(c.file.path.as_path()).copied();
            e.varint(index.unwrap_or(table.len() as u64))?;
            index.is_none()
        }
        None => true,
    };
    e.opt_str(c.parent.as_deref())?;
    put_meta(e, &c.meta)?;
    e.u32(c.turn_count)?;
    e.column(&c.turn_offsets)?;
    e.u64(c.end_offset)?;
    e.u32(c.source_turns)?;
    e.bool(c.followed)?;
    e.opt_i64(c.gone_since)?;
    if inline {
        put_source(e, &c.file)?;
    }
    Ok(())
}

/// A conversation entry as [`put_conv_fields`] wrote it, given its internal id (read by the
/// caller) and the head's file table (`None` for a delta).
pub(super) fn get_conv_fields<R: Source>(
    d: &mut Decoder<R>,
    conv: ConvId,
    table: Option<&[Arc<SourceFile>]>,
) -> io::Result<Conversation> {
    let id = d.string()?;
    let file = match table {
        Some(table) => {
            let index = d.varint()?;
            match table.get(index as usize) {
                Some(f) => Some(Arc::clone(f)),
                None if index == table.len() as u64 => None,
                None => return Err(corrupt("file index")),
            }
        }
        None => None,
    };
    let parent = d.opt_string()?;
    let meta = get_meta(d)?;
    let turn_count = d.u32()?;
    let turn_offsets = d.column()?;
    let end_offset = d.u64()?;
    let source_turns = d.u32()?;
    let followed = d.bool()?;
    let gone_since = d.opt_i64()?;
    let file = match file {
        Some(f) => f,
        None => Arc::new(get_source(d)?),
    };
    if (followed && turn_offsets.len() != source_turns as usize) || source_turns > turn_count {
        return Err(corrupt("conversation"));
    }
    Ok(Conversation {
        conv,
        id,
        file,
        parent,
        meta,
        turn_count,
        turn_offsets,
        end_offset,
        source_turns,
        followed,
        gone_since,
    })
}
