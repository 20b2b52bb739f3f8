//! Generations on disk, writer side: what changed since the last published generation (files
//! and document locations noted as they change; conversations and segments found by comparing
//! with the catalog and view of that generation), written as one delta file that followers
//! apply instead of reading transcripts (see `follow` for the reading side).
//!
//! A delta holds the new state of every changed file, conversation and document-location list,
//! the whole ordered list of segment ids with the tombstones of those whose dead documents
//! changed, and the new segments themselves (read back as views of the mapped file, so every
//! follower shares their pages).
use super::catalog::ConvId;
use super::gens::{SEG_NEW, SEG_SAME};
use super::saved::{put_conv_fields, put_file_entry};
use super::writer::Writer;
use crate::cache::Cache;
use crate::index::persist::{write_segment, write_tombstones};
use crate::util::codec::Encoder;
use std::collections::BTreeSet;
use std::io::{self, Write};

impl Writer {
    /// Publishes what changed since the last generation as the next one's delta file, when
    /// a base of this chain exists (before that no follower could use it). Returns whether a
    /// delta was written.
    pub fn publish_delta(&mut self, cache: &Cache) -> io::Result<bool> {
        if !self.gens.based {
            return Ok(false);
        }
        let convs = self.changed_convs();
        let kinds: Vec<u8> = (0..self.view.segs.len())
            .map(|i| self.gens.seg_kind(&self.view, i))
            .collect();
        let same_segs =
            kinds.iter().all(|&k| k == SEG_SAME) && kinds.len() == self.gens.seg_count();
        if self.gens.files.is_empty() && convs.is_empty() && same_segs {
            return Ok(false);
        }
        let seq = self.gens.seq + 1;
        cache
            .delta(self.gens.chain, seq)
            .write(|w| self.write_delta(w, seq, &convs, &kinds))?;
        self.gens.seq = seq;
        self.gens.mark(&self.catalog, &self.view);
        Ok(true)
    }

    /// Conversations whose catalog entry or document locations changed, in id order.
    fn changed_convs(&self) -> Vec<ConvId> {
        let mut convs: BTreeSet<ConvId> = self
            .catalog
            .changed_since(self.gens.catalog())
            .into_iter()
            .collect();
        convs.extend(self.gens.books.iter().copied());
        convs.into_iter().collect()
    }

    fn write_delta<W: Write>(
        &self,
        w: &mut W,
        seq: u64,
        convs: &[ConvId],
        kinds: &[u8],
    ) -> io::Result<()> {
        let mut e = Encoder::new(&mut *w);
        e.u64(self.gens.chain)?;
        e.u64(seq)?;
        e.u32(self.next_conv)?;
        e.u64(self.next_seg)?;
        e.bool(self.complete)?;
        let s = &self.stats;
        for v in [
            s.updates,
            s.files_reread,
            s.files_appended,
            s.files_removed,
            s.files_added,
            s.files_touched,
            s.segments_merged,
            s.last_update_ms.to_bits(),
        ] {
            e.u64(v)?;
        }
        e.varint(self.catalog.groups().len() as u64)?;
        for g in self.catalog.groups() {
            e.str(g)?;
        }
        e.varint(self.gens.files.len() as u64)?;
        for path in &self.gens.files {
            e.bytes(path.as_os_str().as_encoded_bytes())?;
            let Some(entry) = self.files.get(path) else {
                e.bool(false)?;
                continue;
            };
            e.bool(true)?;
            put_file_entry(&mut e, entry)?;
        }
        e.varint(convs.len() as u64)?;
        for &conv in convs {
            e.u32(conv)?;
            match self.catalog.get(conv) {
                Some(c) => {
                    e.bool(true)?;
                    put_conv_fields(&mut e, c, None)?;
                }
                None => e.bool(false)?,
            }
            match self.books.get(&conv) {
                Some(book) => {
                    e.bool(true)?;
                    book.write(&mut e)?;
                }
                None => e.bool(false)?,
            }
        }
        e.varint(self.view.segs.len() as u64)?;
        for (sv, &kind) in self.view.segs.iter().zip(kinds) {
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
}
