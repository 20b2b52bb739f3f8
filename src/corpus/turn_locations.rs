//! Where each turn of a conversation lives in the index, (segment id, document) by turn
//! number: restored as two columns viewing the mapped cache file (shared by every server
//! restored from it), copied onto the heap only when the conversation changes.
use crate::util::blob::Column;
use crate::util::codec::{Decoder, Encoder, Source, corrupt};
use std::io::{self, Write};

/// A conversation's document locations, one per turn (`(0, u32::MAX)`: none).
pub(super) enum TurnLocations {
    /// As restored: segment ids and documents, equally long.
    Mapped {
        segs: Column<u64>,
        docs: Column<u32>,
    },
    Owned(Vec<(u64, u32)>),
}

impl Default for TurnLocations {
    fn default() -> Self {
        TurnLocations::Owned(Vec::new())
    }
}

impl TurnLocations {
    pub(super) fn len(&self) -> usize {
        match self {
            TurnLocations::Mapped { docs, .. } => docs.len(),
            TurnLocations::Owned(v) => v.len(),
        }
    }

    /// Location of turn `t`'s document (panics past the end).
    pub(super) fn get(&self, t: usize) -> (u64, u32) {
        match self {
            TurnLocations::Mapped { segs, docs } => (segs[t], docs[t]),
            TurnLocations::Owned(v) => v[t],
        }
    }

    /// Every turn's location, in turn order.
    pub(super) fn locs(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        (0..self.len()).map(|t| self.get(t))
    }

    /// The locations, to change them (copied onto the heap first when restored).
    fn owned(&mut self) -> &mut Vec<(u64, u32)> {
        if let TurnLocations::Mapped { .. } = self {
            *self = TurnLocations::Owned(self.locs().collect());
        }
        match self {
            TurnLocations::Owned(v) => v,
            TurnLocations::Mapped { .. } => unreachable!("made owned above"),
        }
    }

    /// Forgets turns `from..`, handing their locations to `out`.
    pub(super) fn truncate(&mut self, from: usize, out: &mut Vec<(u64, u32)>) {
        if from >= self.len() {
            return;
        }
        out.extend(self.locs().skip(from));
        self.owned().truncate(from);
    }

    /// Records where turn `t`'s document is.
    pub(super) fn set(&mut self, t: usize, loc: (u64, u32)) {
        let v = self.owned();
        if v.len() <= t {
            v.resize(t + 1, (0, u32::MAX));
        }
        v[t] = loc;
    }

    pub(super) fn heap_bytes(&self) -> usize {
        match self {
            TurnLocations::Mapped { segs, docs } => segs.heap_bytes() + docs.heap_bytes(),
            TurnLocations::Owned(v) => v.capacity() * 16,
        }
    }

    pub(super) fn write<W: Write>(&self, e: &mut Encoder<W>) -> io::Result<()> {
        e.column(&self.locs().map(|l| l.0).collect::<Vec<_>>())?;
        e.column(&self.locs().map(|l| l.1).collect::<Vec<_>>())
    }

    /// Reads locations written by [`Self::write`] (the caller checks where they point).
    pub(super) fn read<R: Source>(d: &mut Decoder<R>) -> io::Result<Self> {
        let segs = d.column::<u64>()?;
        let docs = d.column::<u32>()?;
        if segs.len() != docs.len() {
            return Err(corrupt("document locations"));
        }
        Ok(TurnLocations::Mapped { segs, docs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restored_locations_read_and_change_like_owned_ones() {
        let mut owned = TurnLocations::default();
        for (t, loc) in [(0, (1, 5)), (2, (1, 6)), (1, (3, 0))] {
            owned.set(t, loc);
        }
        let mut e = Encoder::new(Vec::new());
        owned.write(&mut e).expect("write");
        let bytes = e.into_inner();
        let mut book = TurnLocations::read(&mut Decoder::new(&bytes[..])).expect("read");
        assert_eq!(book.locs().collect::<Vec<_>>(), [(1, 5), (3, 0), (1, 6)]);
        let mut killed = Vec::new();
        book.truncate(1, &mut killed);
        book.truncate(4, &mut killed);
        assert_eq!(killed, [(3, 0), (1, 6)]);
        book.set(2, (9, 9));
        assert_eq!(
            book.locs().collect::<Vec<_>>(),
            [(1, 5), (0, u32::MAX), (9, 9)]
        );
        assert!(TurnLocations::read(&mut Decoder::new(&bytes[..bytes.len() - 4])).is_err());
    }
}
