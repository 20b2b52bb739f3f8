//! Table b-tree traversal: interior (0x05) and leaf (0x0D) pages, cell pointer arrays, the
//! local/overflow split of leaf payloads, in rowid order, with guards against cycles, bad
//! pointers and runaway depth. Index b-trees are not read.
use super::corrupt;
use super::pager::Pager;
use super::record::{MAX_PAYLOAD, varint};
use std::collections::HashSet;
use std::io;

const INTERIOR_TABLE: u8 = 0x05;
const LEAF_TABLE: u8 = 0x0d;
/// Deeper than any real tree: SQLite itself gives up at 20 levels.
const MAX_DEPTH: u32 = 40;

/// One leaf cell: the row's key and where its payload is.
pub(super) struct Cell<'a> {
    pub rowid: i64,
    pub payload_len: u64,
    /// The part of the payload stored on the leaf page.
    pub local: &'a [u8],
    /// First overflow page, when the payload does not fit on the page.
    pub overflow: Option<u32>,
}

/// What a scan went through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ScanStats {
    /// Levels of the tree (1 for a lone leaf root).
    pub depth: u32,
    pub pages: u32,
    pub rows: u64,
}

fn be16(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_be_bytes([b[at], b[at + 1]]))
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// How many payload bytes of a leaf cell are stored locally (SQLite's rule for table leaves).
pub(super) fn local_size(payload: u64, usable: u32) -> u64 {
    let u = u64::from(usable);
    let max_local = u - 35;
    if payload <= max_local {
        return payload;
    }
    let min_local = ((u - 12) * 32 / 255) - 23;
    let k = min_local + (payload - min_local) % (u - 4);
    if k <= max_local { k } else { min_local }
}

/// Cell pointers of a page whose b-tree header starts at `h`.
fn cell_pointers(
    page: &[u8],
    h: usize,
    header_len: usize,
    usable: usize,
) -> io::Result<Vec<usize>> {
    let count = be16(page, h + 3);
    let array = h + header_len;
    if array + 2 * count > usable {
        return Err(corrupt("cell pointer array runs off the page"));
    }
    (0..count)
        .map(|i| {
            let p = be16(page, array + 2 * i);
            if p < array + 2 * count || p >= usable {
                Err(corrupt("cell pointer outside the cell content area"))
            } else {
                Ok(p)
            }
        })
        .collect()
}

/// Visits every row of the table b-tree rooted at `root`, in rowid order.
pub(super) fn scan(
    pager: &Pager,
    root: u32,
    each: &mut dyn FnMut(Cell<'_>) -> io::Result<()>,
) -> io::Result<ScanStats> {
    let usable = pager.usable as usize;
    let mut stats = ScanStats::default();
    let mut seen: HashSet<u32> = HashSet::new();
    // depth-first; children pushed right to left so the leftmost is visited first
    let mut stack: Vec<(u32, u32)> = vec![(root, 1)];
    while let Some((pgno, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(corrupt("b-tree too deep"));
        }
        if !seen.insert(pgno) {
            return Err(corrupt(format!("page {pgno} is reached twice in a b-tree")));
        }
        let page = pager.page(pgno)?;
        if page.len() < usable {
            return Err(corrupt("page shorter than its usable size"));
        }
        stats.pages += 1;
        stats.depth = stats.depth.max(depth);
        let h = if pgno == 1 { 100 } else { 0 };
        match page[h] {
            INTERIOR_TABLE => {
                let cells = cell_pointers(&page, h, 12, usable)?;
                stack.push((be32(&page, h + 8), depth + 1));
                for &p in cells.iter().rev() {
                    if p + 4 > usable {
                        return Err(corrupt("interior cell runs off the page"));
                    }
                    stack.push((be32(&page, p), depth + 1));
                }
            }
            LEAF_TABLE => {
                for p in cell_pointers(&page, h, 8, usable)? {
                    let cell = &page[p..usable];
                    let (payload_len, a) =
                        varint(cell).ok_or_else(|| corrupt("truncated cell header"))?;
                    let (rowid, b) =
                        varint(&cell[a..]).ok_or_else(|| corrupt("truncated rowid"))?;
                    if payload_len > MAX_PAYLOAD {
                        return Err(corrupt("cell payload too large"));
                    }
                    let local = local_size(payload_len, pager.usable) as usize;
                    let start = a + b;
                    let overflow = local < payload_len as usize;
                    let end = start + local + if overflow { 4 } else { 0 };
                    if end > cell.len() {
                        return Err(corrupt("cell runs off the page"));
                    }
                    stats.rows += 1;
                    each(Cell {
                        rowid: rowid as i64,
                        payload_len,
                        local: &cell[start..start + local],
                        overflow: overflow.then(|| be32(cell, start + local)),
                    })?;
                }
            }
            t => {
                return Err(corrupt(format!(
                    "page {pgno} is not a table b-tree page (type {t:#04x})"
                )));
            }
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::local_size;

    #[test]
    fn local_payload_split() {
        // 4096-byte pages: up to 4061 bytes stay local
        assert_eq!(local_size(100, 4096), 100);
        assert_eq!(local_size(4061, 4096), 4061);
        // M = (4084*32/255)-23 = 489; K = 489 + (5000-489) % 4092 = 908
        assert_eq!(local_size(5000, 4096), 908);
        assert_eq!(local_size(8000, 4096), 3908);
        // K = 489 + 3600 = 4089 > 4061 falls back to M
        assert_eq!(local_size(489 + 3600 + 4092, 4096), 489);
    }
}
