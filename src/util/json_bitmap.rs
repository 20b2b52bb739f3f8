//! Finding the bytes of a JSON line that end a string's body, escape it or may not stand in it
//! (quotes, backslashes, control characters): one pass marks them all in a bitmap, sixteen bytes
//! a step with SSE2 on x86-64 (part of its baseline, so no run-time check), a byte a step
//! elsewhere; the same pass says whether the line is all ASCII. A hand-written JSON line scanner
//! spends most of its time finding string ends: with the bitmap each is a few bit operations.
#![allow(unsafe_code)]

/// Whether `b` ends, escapes or may not stand in a JSON string's body.
#[inline]
#[cfg(test)]
pub(crate) fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// Marks the special bytes (see [`is_special`]) of `hay` in `bits`: bit `k` of word `w` stands
/// for byte `64 * w + k` (bits past the end are clear). Returns `hay` as text when every byte
/// is ASCII (then no UTF-8 check is needed); `None` says only that some byte is not ASCII.
/// One pass over the line, so that each later search for a special byte is a few bit
/// operations ([`next_special`]) instead of a scan with its own set-up.
pub(crate) fn mark_specials<'a>(hay: &'a [u8], bits: &mut Vec<u64>) -> Option<&'a str> {
    bits.clear();
    bits.reserve(hay.len().div_ceil(64));
    let high = mark_all(hay, bits);
    if high != 0 {
        return None;
    }
    // SAFETY: every byte of `hay` is below 0x80 (no high bit was set in any chunk), and a
    // sequence of ASCII bytes is valid UTF-8.
    Some(unsafe { std::str::from_utf8_unchecked(hay) })
}

/// The first special byte at or after `from`, in bits made by [`mark_specials`].
#[inline]
pub(crate) fn next_special(bits: &[u64], from: usize) -> Option<usize> {
    let mut w = from / 64;
    let mut m = bits.get(w)? & (u64::MAX << (from % 64));
    loop {
        if m != 0 {
            return Some(w * 64 + m.trailing_zeros() as usize);
        }
        w += 1;
        m = *bits.get(w)?;
    }
}

/// Marks every chunk of `hay` in `bits` (the last one padded with spaces: neither special nor
/// outside ASCII); the bits of the bytes that are not ASCII, all chunks' or-ed together.
fn mark_all(hay: &[u8], bits: &mut Vec<u64>) -> u64 {
    let mut high = 0u64;
    let mut chunks = hay.chunks_exact(64);
    for chunk in &mut chunks {
        let (special, top) = chunk_bits(chunk.try_into().expect("64 bytes"));
        bits.push(special);
        high |= top;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut padded = [b' '; 64];
        super::copy_short(&mut padded, tail);
        let (special, top) = chunk_bits(&padded);
        bits.push(special);
        high |= top;
    }
    high
}

/// The special bytes of 64 bytes as bits, and the bytes that are not ASCII as bits.
#[cfg(target_arch = "x86_64")]
#[inline]
fn chunk_bits(chunk: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let (mut special, mut high) = (0u64, 0u64);
    // SAFETY: SSE2 is in the x86-64 baseline, so these instructions exist on every target this
    // compiles for; each load reads the sixteen bytes `chunk[16 * k..16 * k + 16]`, inside the
    // 64-byte array, and `loadu` takes any alignment.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let control = _mm_set1_epi8(0x1f);
        for k in 0..4 {
            let v = _mm_loadu_si128(chunk.as_ptr().add(16 * k).cast());
            // a byte is at most 0x1f exactly when the unsigned maximum with 0x1f is 0x1f
            let low = _mm_cmpeq_epi8(_mm_max_epu8(v, control), control);
            let hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                low,
            );
            special |= u64::from(_mm_movemask_epi8(hit) as u16) << (16 * k);
            high |= u64::from(_mm_movemask_epi8(v) as u16) << (16 * k);
        }
    }
    (special, high)
}

/// The special bytes of 64 bytes as bits, and the bytes that are not ASCII as bits.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn chunk_bits(chunk: &[u8; 64]) -> (u64, u64) {
    let (mut special, mut high) = (0u64, 0u64);
    for (k, &b) in chunk.iter().enumerate() {
        special |= u64::from(is_special(b)) << k;
        high |= u64::from(b >> 7) << k;
    }
    (special, high)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(hay: &[u8], from: usize) -> Option<usize> {
        (from..hay.len()).find(|&i| is_special(hay[i]))
    }

    /// Every search from every place in `hay` agrees with a byte-by-byte one, and the text is
    /// returned exactly when the bytes are ASCII.
    fn check(hay: &[u8]) {
        let mut bits = vec![u64::MAX; 3]; // stale contents must not leak in
        let text = mark_specials(hay, &mut bits);
        assert_eq!(text.map(str::as_bytes), hay.is_ascii().then_some(hay));
        assert_eq!(bits.len(), hay.len().div_ceil(64));
        for from in 0..=hay.len() + 70 {
            assert_eq!(
                next_special(&bits, from),
                naive(hay, from),
                "from {from} of {hay:?}"
            );
        }
    }

    #[test]
    fn every_special_byte_at_every_place() {
        for special in (0u8..0x20).chain([b'"', b'\\']) {
            for len in [1, 2, 15, 16, 17, 63, 64, 65, 127, 128, 129, 200] {
                for at in 0..len {
                    let mut hay = vec![b'a'; len];
                    hay[at] = special;
                    check(&hay);
                }
            }
        }
        // the neighbours of the special ranges are not special
        let plain: Vec<u8> =
            [0x20u8, b'!', b'#', b'[', b']', 0x7f, 0x80, 0xa2, 0xdc, 0xff].repeat(15);
        check(&plain);
        let mut bits = Vec::new();
        assert_eq!(mark_specials(&plain, &mut bits), None);
        assert_eq!(next_special(&bits, 0), None);
        check(b"");
        check(b"ab");
        // a byte outside ASCII in the last, padded chunk
        let mut late = vec![b'a'; 70];
        late[69] = 0xc3;
        check(&late);
    }

    proptest! {
        #[test]
        fn agrees_with_a_byte_by_byte_search(
            hay in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20, 0x20u8..=0x7f, 0x20u8..=0xff],
                0..300,
            ),
        ) {
            check(&hay);
        }
    }
}
