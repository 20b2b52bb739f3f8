//! A generation's delta file: what changed from one generation of the writer's state to the
//! next, written by the server holding the writer lock and read by the servers that follow it
//! instead of reading transcripts.
//!
//! A delta holds the new state of every changed file, conversation and document-location list,
//! the whole ordered list of segment ids with the tombstones of those whose dead documents
//! changed, and the new segments themselves (read back as views of the mapped file, so every
//! follower shares their pages).
use super::cache_head::{
    CachedFile, get_conv_fields, get_file_entry, put_conv_fields, put_file_entry,
};
use super::catalog::{Catalog, ConvId, Conversation};
use super::doc_index::{DocIndex, SegmentChange};
use super::files::Files;
use super::generation::{SEG_DEAD, SEG_NEW, SEG_SAME};
use super::turn_locations::TurnLocations;
use crate::index::segment_codec::{
    read_segment, read_tombstones, read_tombstones_of, write_segment, write_tombstones,
};
use crate::util::codec::{Decoder, Encoder, Source, corrupt};
use std::io::{self, Write};
use std::path::PathBuf;

/// The update counters a delta carries, in order: updates, files re-read, appended, removed,
/// added, touched, segments merged, and the last update's duration (`f64` bits).
pub(super) type Counters = [u64; 8];

/// What a delta is written from: the writer's parts, what changed, and the header's fields.
pub(super) struct DeltaOf<'a> {
    pub(super) chain: u64,
    pub(super) seq: u64,
    pub(super) files: &'a Files,
    pub(super) catalog: &'a Catalog,
    pub(super) docs: &'a DocIndex,
    /// Conversations whose catalog entry or locations changed, in id order.
    pub(super) convs: &'a [ConvId],
    /// Per segment of the view: new, other tombstones, or the same.
    pub(super) kinds: &'a [u8],
    pub(super) complete: bool,
    pub(super) counters: Counters,
}

impl DeltaOf<'_> {
    /// Writes the delta (payload and trailer) to `w`.
    pub(super) fn write<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let mut e = Encoder::new(&mut *w);
        e.u64(self.chain)?;
        e.u64(self.seq)?;
        e.u32(self.catalog.next_id())?;
        e.u64(self.docs.next_seg())?;
        e.bool(self.complete)?;
        for v in self.counters {
            e.u64(v)?;
        }
        e.varint(self.catalog.groups().len() as u64)?;
        for g in self.catalog.groups() {
            e.str(g)?;
        }
        self.write_files(&mut e)?;
        self.write_convs(&mut e)?;
        let view = self.docs.view();
        e.varint(view.segs.len() as u64)?;
        for (sv, &kind) in view.segs.iter().zip(self.kinds) {
            e.u64(sv.seg.id)?;
            e.u8(kind)?;
            if kind == SEG_NEW {
                write_segment(&mut e, &sv.seg)?;
            }
            if kind != SEG_SAME {
                write_tombstones(&mut e, &sv.dead)?;
            }
        }
        let (sum, len) = (e.checksum(), e.written());
        w.write_all(&sum.to_le_bytes())?;
        w.write_all(&len.to_le_bytes())
    }

    /// Every changed file: its path, then its entry (or none: dropped).
    fn write_files<W: Write>(&self, e: &mut Encoder<W>) -> io::Result<()> {
        let changed = self.files.changed();
        e.varint(changed.len() as u64)?;
        for path in changed {
            e.bytes(path.as_os_str().as_encoded_bytes())?;
            let Some(entry) = self.files.get(path) else {
                e.bool(false)?;
                continue;
            };
            e.bool(true)?;
            put_file_entry(e, entry)?;
        }
        Ok(())
    }

    /// Every changed conversation: its id, then its entry and its locations (each or none).
    fn write_convs<W: Write>(&self, e: &mut Encoder<W>) -> io::Result<()> {
        e.varint(self.convs.len() as u64)?;
        for &conv in self.convs {
            e.u32(conv)?;
            match self.catalog.get(conv) {
                Some(c) => {
                    e.bool(true)?;
                    put_conv_fields(e, c, None)?;
                }
                None => e.bool(false)?,
            }
            match self.docs.locations(conv) {
                Some(locs) => {
                    e.bool(true)?;
                    locs.write(e)?;
                }
                None => e.bool(false)?,
            }
        }
        Ok(())
    }
}

/// A changed file: its path, and its entry (none: dropped).
pub(super) type FileChange = (PathBuf, Option<CachedFile>);

/// One generation's change, decoded and verified before anything is installed.
pub(super) struct Delta {
    pub(super) next_conv: ConvId,
    pub(super) next_seg: u64,
    pub(super) complete: bool,
    pub(super) counters: Counters,
    pub(super) groups: Vec<String>,
    pub(super) files: Vec<FileChange>,
    pub(super) convs: Vec<(ConvId, Option<Conversation>)>,
    pub(super) locations: Vec<(ConvId, Option<TurnLocations>)>,
    pub(super) segs: Vec<(u64, SegmentChange)>,
}

impl Delta {
    /// Reads a delta's payload after its chain and sequence number; segments with other
    /// tombstones are read against those of `docs`.
    pub(super) fn read<R: Source>(d: &mut Decoder<R>, docs: &DocIndex) -> io::Result<Delta> {
        let next_conv = d.u32()?;
        let next_seg = d.u64()?;
        let complete = d.bool()?;
        let mut counters = [0u64; 8];
        for c in &mut counters {
            *c = d.u64()?;
        }
        let groups = (0..d.length()?)
            .map(|_| d.string())
            .collect::<io::Result<_>>()?;
        let files = read_files(d, next_conv)?;
        let (convs, locations) = read_convs(d, next_conv)?;
        let mut segs = Vec::new();
        for _ in 0..d.length()? {
            let id = d.u64()?;
            segs.push((id, read_segment_change(d, id, docs, (next_conv, next_seg))?));
        }
        Ok(Delta {
            next_conv,
            next_seg,
            complete,
            counters,
            groups,
            files,
            convs,
            locations,
            segs,
        })
    }
}

fn read_files<R: Source>(d: &mut Decoder<R>, next_conv: ConvId) -> io::Result<Vec<FileChange>> {
    let mut files = Vec::new();
    for _ in 0..d.length()? {
        let path = PathBuf::from(String::from_utf8(d.bytes()?).map_err(|_| corrupt("path"))?);
        if !d.bool()? {
            files.push((path, None));
            continue;
        }
        let entry = get_file_entry(d, next_conv)?;
        if entry.0.path != path {
            return Err(corrupt("file path"));
        }
        files.push((path, Some(entry)));
    }
    Ok(files)
}

type ConvChanges = (
    Vec<(ConvId, Option<Conversation>)>,
    Vec<(ConvId, Option<TurnLocations>)>,
);

fn read_convs<R: Source>(d: &mut Decoder<R>, next_conv: ConvId) -> io::Result<ConvChanges> {
    let (mut convs, mut locations) = (Vec::new(), Vec::new());
    for _ in 0..d.length()? {
        let conv = d.u32()?;
        if conv >= next_conv {
            return Err(corrupt("conversation id"));
        }
        let c = if d.bool()? {
            Some(get_conv_fields(d, conv, None)?)
        } else {
            None
        };
        let locs = if d.bool()? {
            Some(TurnLocations::read(d)?)
        } else {
            None
        };
        convs.push((conv, c));
        locations.push((conv, locs));
    }
    Ok((convs, locations))
}

/// One segment's entry; a new segment's ids must be below `(next_conv, next_seg)`.
fn read_segment_change<R: Source>(
    d: &mut Decoder<R>,
    id: u64,
    docs: &DocIndex,
    (next_conv, next_seg): (ConvId, u64),
) -> io::Result<SegmentChange> {
    Ok(match d.u8()? {
        SEG_SAME => SegmentChange::Same,
        SEG_DEAD => {
            let old = docs.segment(id)?;
            SegmentChange::Dead(read_tombstones_of(d, &old)?)
        }
        SEG_NEW => {
            let raw = read_segment(d)?;
            let dead = read_tombstones(d, &raw)?;
            let seg = raw.finish();
            if seg.id != id || id >= next_seg || seg.convs().iter().any(|&c| c >= next_conv) {
                return Err(corrupt("segment ids"));
            }
            SegmentChange::New(Box::new(seg), dead)
        }
        _ => return Err(corrupt("segment kind")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Turn;

    #[test]
    fn a_delta_reads_back_as_written() {
        let mut docs = DocIndex::default();
        let mut catalog = Catalog::default();
        let conv = catalog.allocate();
        docs.replace_from(conv, 0);
        docs.add_turn(
            conv,
            &Turn {
                user_text: "words".into(),
                ..Turn::default()
            },
        );
        docs.commit();
        let files = Files::new(Vec::new());
        let convs = [conv];
        let mut bytes = Vec::new();
        DeltaOf {
            chain: 5,
            seq: 2,
            files: &files,
            catalog: &catalog,
            docs: &docs,
            convs: &convs,
            kinds: &[SEG_NEW],
            complete: true,
            counters: [1, 2, 3, 4, 5, 6, 7, 8],
        }
        .write(&mut bytes)
        .expect("written");
        let mut d = Decoder::new(&bytes[..]);
        assert_eq!((d.u64().expect("chain"), d.u64().expect("seq")), (5, 2));
        let delta = Delta::read(&mut d, &DocIndex::default()).expect("read");
        assert_eq!(
            (delta.next_conv, delta.next_seg, delta.complete),
            (1, 2, true)
        );
        assert_eq!(delta.counters, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(matches!(delta.convs[..], [(0, None)]), "not in the catalog");
        assert!(matches!(delta.locations[..], [(0, Some(_))]));
        assert!(matches!(delta.segs[..], [(1, SegmentChange::New(..))]));
        // tombstones of a segment the reader lacks: refused
        let mut bytes = Vec::new();
        DeltaOf {
            chain: 5,
            seq: 3,
            files: &files,
            catalog: &catalog,
            docs: &docs,
            convs: &[],
            kinds: &[SEG_DEAD],
            complete: true,
            counters: [0; 8],
        }
        .write(&mut bytes)
        .expect("written");
        let mut d = Decoder::new(&bytes[16..]);
        assert!(Delta::read(&mut d, &DocIndex::default()).is_err());
    }
}
