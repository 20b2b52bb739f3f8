//! The SQLite record format: varints, serial types and lazily decoded rows whose payload may
//! continue on overflow pages (loaded only when a column beyond the local part is asked for).
use super::corrupt;
use super::pager::{Encoding, Pager};
use super::schema::Table;
use std::borrow::Cow;
use std::io;

/// Largest payload we accept (SQLite's default `SQLITE_MAX_LENGTH`); a bigger length can only
/// come from a corrupt cell.
pub(super) const MAX_PAYLOAD: u64 = 1_000_000_000;

/// Reads a SQLite varint (1–9 bytes, big-endian, 7 bits per byte, 8 in the ninth).
/// Returns the value and its length, or `None` when `buf` ends inside it.
pub(super) fn varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..8 {
        let b = *buf.get(i)?;
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    let b = *buf.get(8)?;
    Some(((v << 8) | u64::from(b), 9))
}

/// One column value. Text is decoded from the database's encoding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(Cow<'a, str>),
    Blob(&'a [u8]),
}

impl Value<'_> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }

    pub(crate) fn as_int(&self) -> Option<i64> {
        match self {
            Value::Integer(i) => Some(*i),
            Value::Real(f) if f.is_finite() => Some(*f as i64),
            _ => None,
        }
    }

    /// Text as an owned string (`None` for other types).
    pub(crate) fn into_string(self) -> Option<String> {
        match self {
            Value::Text(t) => Some(t.into_owned()),
            _ => None,
        }
    }
}

/// Size in bytes of a value of the given serial type.
fn serial_size(serial: u64) -> io::Result<u64> {
    Ok(match serial {
        0 | 8 | 9 => 0,
        1 => 1,
        2 => 2,
        3 => 3,
        4 => 4,
        5 => 6,
        6 | 7 => 8,
        10 | 11 => return Err(corrupt(format!("reserved serial type {serial}"))),
        n => (n - 12) / 2,
    })
}

fn decode<'a>(serial: u64, bytes: &'a [u8], encoding: Encoding) -> Value<'a> {
    let int = |b: &[u8]| {
        let mut v: i64 = if b[0] & 0x80 != 0 { -1 } else { 0 };
        for &x in b {
            v = (v << 8) | i64::from(x);
        }
        v
    };
    match serial {
        0 => Value::Null,
        1..=6 => Value::Integer(int(bytes)),
        7 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(bytes);
            Value::Real(f64::from_be_bytes(b))
        }
        8 => Value::Integer(0),
        9 => Value::Integer(1),
        n if n % 2 == 0 => Value::Blob(bytes),
        _ => Value::Text(encoding.decode(bytes)),
    }
}

/// One row of a table b-tree, decoded on demand.
pub(crate) struct Row<'a> {
    pub rowid: i64,
    pager: &'a Pager,
    table: &'a Table,
    local: &'a [u8],
    payload_len: u64,
    overflow: Option<u32>,
    full: Option<Vec<u8>>,
    /// (serial type, body offset) per stored column, once the header has been read.
    cols: Option<Vec<(u64, u64)>>,
}

impl<'a> Row<'a> {
    pub(super) fn new(
        pager: &'a Pager,
        table: &'a Table,
        rowid: i64,
        local: &'a [u8],
        payload_len: u64,
        overflow: Option<u32>,
    ) -> Self {
        Self {
            rowid,
            pager,
            table,
            local,
            payload_len,
            overflow,
            full: None,
            cols: None,
        }
    }

    /// Total size of the record, local part and overflow together (known without reading
    /// any overflow page).
    pub(crate) fn payload_len(&self) -> u64 {
        self.payload_len
    }

    /// Bytes `start..start + len` of the payload, loading the overflow chain if they are not
    /// all in the local part.
    fn bytes(&mut self, start: u64, len: u64) -> io::Result<&[u8]> {
        let end = start
            .checked_add(len)
            .filter(|&e| e <= self.payload_len)
            .ok_or_else(|| corrupt("record field runs past the end of its payload"))?;
        if end <= self.local.len() as u64 {
            return Ok(&self.local[start as usize..end as usize]);
        }
        if self.full.is_none() {
            let mut full = Vec::with_capacity(self.payload_len as usize);
            full.extend_from_slice(self.local);
            let first = self
                .overflow
                .ok_or_else(|| corrupt("payload longer than its cell without overflow page"))?;
            self.pager.read_overflow(
                first,
                self.payload_len - self.local.len() as u64,
                &mut full,
            )?;
            self.full = Some(full);
        }
        let full = self.full.as_deref().unwrap_or_default();
        Ok(&full[start as usize..end as usize])
    }

    /// First overflow page of the payload, if it has one.
    #[cfg(test)]
    pub(crate) fn overflow_page(&self) -> Option<u32> {
        self.overflow
    }

    fn header(&mut self) -> io::Result<&[(u64, u64)]> {
        if self.cols.is_none() {
            let head = self.bytes(0, self.payload_len.min(9))?;
            let (hsize, n) = varint(head).ok_or_else(|| corrupt("truncated record header"))?;
            if hsize < n as u64 || hsize > self.payload_len {
                return Err(corrupt("record header size out of range"));
            }
            let header = self.bytes(0, hsize)?.to_vec();
            let mut cols = Vec::new();
            let (mut at, mut body) = (n, hsize);
            while at < header.len() {
                let (serial, len) =
                    varint(&header[at..]).ok_or_else(|| corrupt("truncated serial type"))?;
                at += len;
                cols.push((serial, body));
                body += serial_size(serial)?;
            }
            if body > self.payload_len {
                return Err(corrupt("record body longer than its payload"));
            }
            self.cols = Some(cols);
        }
        Ok(self.cols.as_deref().unwrap_or_default())
    }

    /// Value of the table column at `column` (schema order). The rowid alias column reads as
    /// the rowid; columns missing from an older, shorter record read as NULL.
    pub(crate) fn value(&mut self, column: usize) -> io::Result<Value<'_>> {
        if self.table.rowid_alias == Some(column) {
            return Ok(Value::Integer(self.rowid));
        }
        let Some(index) = self.table.record_index(column) else {
            return Ok(Value::Null);
        };
        let encoding = self.pager.encoding;
        let Some(&(serial, offset)) = self.header()?.get(index) else {
            return Ok(Value::Null);
        };
        let size = serial_size(serial)?;
        let bytes = self.bytes(offset, size)?;
        Ok(decode(serial, bytes, encoding))
    }

    /// Value by raw record position (no schema mapping), for tests and the schema table.
    pub(crate) fn raw(&mut self, index: usize) -> io::Result<Value<'_>> {
        let encoding = self.pager.encoding;
        let Some(&(serial, offset)) = self.header()?.get(index) else {
            return Ok(Value::Null);
        };
        let size = serial_size(serial)?;
        let bytes = self.bytes(offset, size)?;
        Ok(decode(serial, bytes, encoding))
    }

    /// Text of a column (`None` when absent, NULL or not text).
    pub(crate) fn text(&mut self, column: Option<usize>) -> io::Result<Option<String>> {
        match column {
            Some(c) => Ok(self.value(c)?.into_string()),
            None => Ok(None),
        }
    }

    /// Integer of a column (`None` when absent, NULL or not a number).
    pub(crate) fn int(&mut self, column: Option<usize>) -> io::Result<Option<i64>> {
        match column {
            Some(c) => Ok(self.value(c)?.as_int()),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_every_length() {
        assert_eq!(varint(&[0x00]), Some((0, 1)));
        assert_eq!(varint(&[0x7f]), Some((127, 1)));
        assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x82, 0x80, 0x01]), Some(((2 << 14) | 1, 3)));
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81]), None);
        assert_eq!(varint(&[]), None);
        // the ninth byte contributes all 8 bits
        let mut nine = [0x80u8; 9];
        nine[8] = 0xff;
        assert_eq!(varint(&nine), Some((0xff, 9)));
    }

    #[test]
    fn serial_types_decode() {
        let e = Encoding::Utf8;
        assert_eq!(decode(1, &[0xff], e), Value::Integer(-1));
        assert_eq!(decode(2, &[0x01, 0x00], e), Value::Integer(256));
        assert_eq!(decode(3, &[0xff, 0xff, 0xfe], e), Value::Integer(-2));
        assert_eq!(decode(5, &[0, 0, 0, 0, 1, 0], e), Value::Integer(256));
        assert_eq!(
            decode(6, &i64::MIN.to_be_bytes(), e),
            Value::Integer(i64::MIN)
        );
        assert_eq!(decode(7, &1.5f64.to_be_bytes(), e), Value::Real(1.5));
        assert_eq!(decode(8, &[], e), Value::Integer(0));
        assert_eq!(decode(9, &[], e), Value::Integer(1));
        assert_eq!(decode(14, b"a", e), Value::Blob(b"a"));
        assert_eq!(decode(15, b"a", e), Value::Text("a".into()));
        assert!(serial_size(10).is_err());
        assert_eq!(serial_size(13).ok(), Some(0));
        assert_eq!(serial_size(12 + 2 * 70_000).ok(), Some(70_000));
    }
}
