//! LEB128 varints, the one codec for both the posting lists and the cache file.
//!
//! Kept by hand rather than taken from a crate: decoding postings is the search's inner loop,
//! and `integer-encoding`'s `decode_var` measured slower there (best of 200 decodes of the
//! same lists, deltas + per-field frequencies: +1.6% with 1-byte deltas, +5.3% with 2-byte
//! deltas, -0.8% with 3-byte ones), for what is a dozen lines either way.

/// Longest encoding of a `u64`.
pub(crate) const MAX_LEN: usize = 10;

/// Encodes `v` into `buf`; returns the number of bytes used.
#[inline]
pub(crate) fn encode(mut v: u64, buf: &mut [u8; MAX_LEN]) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        buf[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    n + 1
}

/// Appends `v` to `out`.
#[inline]
#[cfg(test)]
pub(crate) fn put(out: &mut Vec<u8>, v: u64) {
    put_with(v, |b| out.push(b));
}

/// Hands the bytes of `v` to `push`, one at a time (byte by byte: a copy through a scratch
/// buffer compiled to a `memcpy` call per varint, 5% of the first build; nearly every varint
/// is one or two bytes).
#[inline]
pub(crate) fn put_with(mut v: u64, mut push: impl FnMut(u8)) {
    while v >= 0x80 {
        push((v as u8) | 0x80);
        v >>= 7;
    }
    push(v as u8);
}

/// Reads a varint at `*pos` and moves past it. A varint cut off by the end of `buf` yields
/// the bits read so far (callers bound their reads by counts, not by this).
#[inline]
pub(crate) fn get(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&b) = buf.get(*pos) {
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_at_every_width() {
        let values = [
            0,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        let mut out = Vec::new();
        for &v in &values {
            put(&mut out, v);
        }
        assert_eq!(out[..4], [0, 1, 127, 0x80]);
        let mut pos = 0;
        for &v in &values {
            assert_eq!(get(&out, &mut pos), v);
        }
        assert_eq!(pos, out.len());
        let mut buf = [0u8; MAX_LEN];
        assert_eq!(encode(u64::MAX, &mut buf), MAX_LEN);
    }
}
