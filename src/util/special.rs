//! Finding the next byte of a JSON string's body that ends it, escapes it or may not stand in
//! it (a quote, a backslash or a control character): sixteen bytes a step with SSE2 on x86-64
//! (part of its baseline, so no run-time check), eight bytes a step elsewhere. A hand-written
//! JSON line scanner spends most of its time here: nearly every byte of a record is inside a
//! string it reads or skips.
#![allow(unsafe_code)]

/// Whether `b` ends, escapes or may not stand in a JSON string's body.
#[inline]
pub fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// The index of the first special byte (see [`is_special`]) of `hay` at or after `from`.
#[inline]
pub fn first_special(hay: &[u8], from: usize) -> Option<usize> {
    let i = wide_steps(hay, from);
    hay.get(i..)?
        .iter()
        .position(|&b| is_special(b))
        .map(|p| i + p)
}

/// Skips whole sixteen-byte steps free of special bytes from `i`; where the first special byte
/// is, when a step holds one; else where fewer than sixteen bytes are left.
#[cfg(target_arch = "x86_64")]
#[inline]
fn wide_steps(hay: &[u8], mut i: usize) -> usize {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is in the x86-64 baseline, so these instructions exist on every target this
    // compiles for; each load reads the sixteen bytes `hay[i..i + 16]`, in bounds by the loop
    // condition, and `loadu` takes any alignment.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let control = _mm_set1_epi8(0x1f);
        while i + 16 <= hay.len() {
            let v = _mm_loadu_si128(hay.as_ptr().add(i).cast());
            // a byte is at most 0x1f exactly when the unsigned maximum with 0x1f is 0x1f
            let low = _mm_cmpeq_epi8(_mm_max_epu8(v, control), control);
            let hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                low,
            );
            let bits = _mm_movemask_epi8(hit) as u32;
            if bits != 0 {
                return i + bits.trailing_zeros() as usize;
            }
            i += 16;
        }
    }
    i
}

/// Eight bytes a step: the special bytes of a word as a mask of their high bits, exact for the
/// lowest (the lowest byte flagged is always a true one, and every true one is flagged).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn wide_steps(hay: &[u8], mut i: usize) -> usize {
    const ONES: u64 = u64::MAX / 255;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    while let Some(chunk) = hay.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let w = u64::from_le_bytes(w);
        let ctrl = w.wrapping_sub(ONES * 0x20) & !w;
        let m = (ctrl | zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\'))))
            & (ONES << 7);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(hay: &[u8], from: usize) -> Option<usize> {
        (from..hay.len()).find(|&i| is_special(hay[i]))
    }

    #[test]
    fn every_special_byte_at_every_place() {
        for special in (0u8..0x20).chain([b'"', b'\\']) {
            for len in 1..40 {
                for at in 0..len {
                    let mut hay = vec![b'a'; len];
                    hay[at] = special;
                    for from in 0..=len {
                        assert_eq!(
                            first_special(&hay, from),
                            naive(&hay, from),
                            "byte {special:#x} at {at} of {len} from {from}"
                        );
                    }
                }
            }
        }
        // the neighbours of the special ranges are not special
        let plain: Vec<u8> =
            [0x20u8, b'!', b'#', b'[', b']', 0x7f, 0x80, 0xa2, 0xdc, 0xff].repeat(5);
        assert_eq!(first_special(&plain, 0), None);
        assert_eq!(first_special(b"", 0), None);
        assert_eq!(first_special(b"ab", 5), None);
    }

    proptest! {
        #[test]
        fn agrees_with_a_byte_by_byte_search(
            hay in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20, 0x20u8..=0xff, 0x20u8..=0xff],
                0..100,
            ),
            from in 0usize..110,
        ) {
            prop_assert_eq!(first_special(&hay, from), naive(&hay, from));
        }
    }
}
