//! The writer's state in the index cache file, written and read back: the catalog first, as
//! the file's head section (files with what was read of them, conversations; see
//! [`super::cache_head`]), then where each turn's document lives, and the segments. A restored
//! file keeps its documents while its size, mtime and fingerprint are unchanged; anything else
//! is read again, so the cache can only ever save work, never change results.
use super::cache_head::{Head, head_bytes, read_head};
use super::catalog::{Catalog, ConvId};
use super::doc_index::DocIndex;
use super::dups::DupTracker;
use super::files::Files;
use super::generation::Generation;
use super::ingest::FileState;
use super::turn_locations::TurnLocations;
use crate::cache::{self, Cache, HEAD_FRAME, split_frame};
use crate::index::segment_codec::{
    RawSegment, read_segment, read_tombstones, write_segment, write_tombstones,
};
use crate::index::{IndexView, SegView, Tombstones};
use crate::transcript::SourceFile;
use crate::util::codec::{Decoder, Encoder, Source, corrupt};
use rustc_hash::FxHashSet;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender};

/// Everything restored from a cache file, installed only once the whole file checked out.
pub(super) struct Restored {
    pub(super) head: Head,
    pub(super) docs: DocIndex,
}

/// What the disk holds now, looked at while a cache file was read: the restored files found
/// exactly as recorded (not read again), and every file there is.
pub(super) struct Rechecked {
    pub(super) unchanged: FxHashSet<PathBuf>,
    pub(super) found: Vec<SourceFile>,
}

/// Writes the state made of these parts to the cache file. Returns the file's size.
pub(super) fn write(
    cache: &Cache,
    generation: &Generation,
    files: &Files,
    catalog: &Catalog,
    docs: &DocIndex,
) -> io::Result<u64> {
    let head = head_bytes(cache.sharing, generation, files, catalog, docs.next_seg())?;
    cache.write(|w| {
        let mut e = Encoder::new(&mut *w);
        e.bytes_raw(&crate::cache::head_frame(&head))?;
        e.bytes_raw(&head)?;
        let locations = docs.sorted_locations();
        e.varint(locations.len() as u64)?;
        for (conv, locs) in locations {
            e.u32(conv)?;
            locs.write(&mut e)?;
        }
        let view = docs.view();
        e.varint(view.segs.len() as u64)?;
        for sv in &view.segs {
            write_segment(&mut e, &sv.seg)?;
            write_tombstones(&mut e, &sv.dead)?;
        }
        let (sum, len) = (e.checksum(), e.written());
        w.write_all(&sum.to_le_bytes())?;
        w.write_all(&len.to_le_bytes())?;
        Ok(())
    })
}

/// Reads the cache file back. Nothing is returned unless the whole file reads back with a
/// matching checksum (verified in the same pass as it is decoded, every length bounded by what
/// is left of the file). While the payload is decoded on another thread, this one looks at the
/// disk: which restored files are unchanged, and which files exist now (under the roots of
/// `files`). `Ok(None)` when there is no cache file.
pub(super) fn read(cache: &Cache, files: &Files) -> io::Result<Option<(Restored, Rechecked)>> {
    let Some((mut r, payload)) = cache.open()? else {
        return Ok(None);
    };
    let mut d = Decoder::bounded(&mut r, payload);
    let mut frame = [0u8; HEAD_FRAME];
    d.fill(&mut frame)?;
    let (head_len, _) = split_frame(&frame);
    if head_len > payload {
        return Err(corrupt("head length out of range"));
    }
    let head = d.raw_blob(head_len as usize)?;
    cache::check_head(&frame, &head)?;
    let mut head = read_head(head)?;
    let (next_conv, next_seg) = (head.next_conv, head.next_seg);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(RawSegment, Tombstones)>(2);
    let decoder = &mut d;
    let t0 = std::time::Instant::now();
    let (locations, (view, dups), rechecked) = std::thread::scope(|s| {
        let decoding = s.spawn(move || read_state(decoder, tx));
        let rechecked = Rechecked {
            unchanged: unchanged_files(&mut head.files),
            found: files.discover(),
        };
        let recheck_ms = t0.elapsed().as_millis() as u64;
        // the block maxima of each segment are computed here while the next one is read
        let view = assemble(rx, next_conv, next_seg);
        tracing::debug!(
            recheck_ms,
            read_ms = t0.elapsed().as_millis() as u64,
            "cache payload read"
        );
        // a panic while decoding (the checksum is not verified yet) is a corrupt file,
        // not a dead indexer
        let locations = decoding
            .join()
            .map_err(|_| corrupt("undecodable payload"))?;
        io::Result::Ok((locations?, view?, rechecked))
    })?;
    let docs = DocIndex::restored(view, locations, dups, next_seg)?;
    let sum = d.checksum();
    cache::check_trailer(&mut r, sum, payload)?;
    log_heap(&docs);
    Ok(Some((Restored { head, docs }, rechecked)))
}

/// The restored files that are still exactly as recorded (size, mtime, fingerprint).
fn unchanged_files(files: &mut [(FileState, Vec<(String, ConvId)>)]) -> FxHashSet<PathBuf> {
    files
        .iter_mut()
        .filter_map(|(state, _)| state.still_as_restored().then(|| state.path().to_owned()))
        .collect()
}

type Locations = Vec<(ConvId, TurnLocations)>;

/// The rest of the payload after the head: where the documents live, then the segments, each
/// handed over as soon as it is read.
fn read_state<R: Source>(
    d: &mut Decoder<R>,
    segments: SyncSender<(RawSegment, Tombstones)>,
) -> io::Result<Locations> {
    let mut locations = Vec::new();
    for _ in 0..d.length()? {
        let conv = d.u32()?;
        locations.push((conv, TurnLocations::read(d)?));
    }
    for _ in 0..d.length()? {
        let seg = read_segment(d)?;
        let dead = read_tombstones(d, &seg)?;
        if segments.send((seg, dead)).is_err() {
            break;
        }
    }
    Ok(locations)
}

/// The index view of the segments read by [`read_state`], checked against the head's ids,
/// and the duplicate keys of its live documents. Stops at the first bad segment (which drops
/// the channel, so the reader stops too).
fn assemble(
    segments: Receiver<(RawSegment, Tombstones)>,
    next_conv: u32,
    next_seg: u64,
) -> io::Result<(IndexView, DupTracker)> {
    let mut view = IndexView::default();
    for (raw, dead) in segments {
        let seg = raw.finish();
        if seg.id >= next_seg || seg.convs().iter().any(|&c| c >= next_conv) {
            return Err(corrupt("segment ids"));
        }
        view.push(SegView {
            seg: Arc::new(seg),
            dead: Arc::new(dead),
        });
    }
    let dups = DupTracker::restored(&view);
    Ok((view, dups))
}

/// Logs the heap bytes a restored index holds, by structure.
fn log_heap(docs: &DocIndex) {
    let mb = |b: usize| b as f64 / (1u64 << 20) as f64;
    tracing::debug!(
        "restored index heap: {}",
        docs.heap_parts()
            .iter()
            .map(|(k, v)| format!("{k} {:.1} MB", mb(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Root;
    use crate::corpus::files::FileEntry;
    use crate::transcript::Turn;
    use crate::util::glob::Glob;

    #[test]
    fn a_written_state_reads_back_and_a_damaged_one_does_not() {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("projects");
        let p = root.join("-p").join("s.jsonl");
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(
            &p,
            r#"{"type":"user","sessionId":"s","uuid":"u1","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hello there"}}
"#,
        )
        .expect("write");
        let mut files = Files::new(vec![Root {
            adapter: crate::transcript::adapter("claude").expect("claude"),
            dir: root,
            pattern: Glob::new("*"),
        }]);
        let mut catalog = Catalog::default();
        let mut docs = DocIndex::default();
        for src in files.discover() {
            let mut entry = FileEntry::new(src);
            let _ = entry.state.read();
            let conv = catalog.allocate();
            entry.convs.push(("s".into(), conv));
            docs.replace_from(conv, 0);
            let turn = Turn {
                user_text: "hello there".into(),
                ..Turn::default()
            };
            docs.add_turn(conv, &turn);
            files.insert(entry.src.path.clone(), entry);
        }
        docs.commit();
        let cache = Cache::new(tmp.path().join("cache"), b"test");
        let generation = Generation::default();
        write(&cache, &generation, &files, &catalog, &docs).expect("written");
        let (restored, rechecked) = read(&cache, &files).expect("read").expect("a file");
        assert_eq!(restored.docs.live_docs(), 1);
        assert_eq!(restored.head.files.len(), 1);
        assert_eq!(restored.head.next_conv, 1);
        assert_eq!(
            (restored.head.chain, restored.head.seq),
            (generation.chain, 0)
        );
        assert_eq!(rechecked.unchanged.len(), 1);
        assert_eq!(rechecked.found.len(), 1);
        // one byte changed in the middle: refused
        let mut bytes = std::fs::read(cache.path()).expect("bytes");
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xff;
        std::fs::write(cache.path(), &bytes).expect("damage");
        assert!(read(&cache, &files).is_err());
    }
}
