//! Small self-contained helpers shared by every layer: timestamps, globs, varints and a
//! binary codec, immutable (possibly mapped) byte buffers, huge-page arrays, the search for a
//! JSON string's next special byte, short copies, and the static musl binary's memory functions.
pub(crate) mod blob;
pub(crate) mod codec;
pub(crate) mod glob;
pub(crate) mod huge;
pub(crate) mod json_bitmap;
#[cfg(target_arch = "x86_64")]
pub(crate) mod libc_mem;
pub(crate) mod time;
pub(crate) mod varint;

/// The MD5 digest of `data` as 32 lowercase hex digits: only to recognise directories an agent
/// names by the MD5 of a path (Kimi's work directories), never for anything security-related.
pub fn md5_hex(data: &[u8]) -> String {
    use md5::{Digest, Md5};
    Md5::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Copies `src` to the start of `dst` (at least as long) by a few fixed-size moves, not a call
/// to `memcpy`: terms are short and copied once or twice per token.
#[inline]
pub(crate) fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    // overlapping fixed-size moves cover the whole range: first and last block of a size
    macro_rules! blocks {
        ($size:expr) => {{
            let mut at = 0;
            while at + $size < n {
                dst[at..at + $size].copy_from_slice(&src[at..at + $size]);
                at += $size;
            }
            dst[n - $size..n].copy_from_slice(&src[n - $size..n]);
        }};
    }
    match n {
        16.. => blocks!(16),
        8..=15 => blocks!(8),
        4..=7 => blocks!(4),
        // three single moves, not a loop (LLVM turns a byte loop back into a `memcpy` call)
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        0 => {}
    }
}

/// Longest `src` that [`extend_short`] copies by fixed-size moves.
pub(crate) const SHORT: usize = 16;

/// Appends `src` to `out`; one of at most [`SHORT`] bytes by [`copy_short`] instead of a call
/// to `memcpy` (musl's took tens of cycles for a few bytes, before [`libc_mem`] replaced it in the
/// static binary). Such an append briefly needs [`SHORT`] bytes of room: a vector sized
/// exactly in advance gets that much more capacity.
#[inline]
pub(crate) fn extend_short(out: &mut Vec<u8>, src: &[u8]) {
    let n = src.len();
    if n > SHORT {
        out.extend_from_slice(src);
        return;
    }
    let at = out.len();
    out.extend_from_slice(&[0u8; SHORT]);
    copy_short(&mut out[at..at + n], src);
    out.truncate(at + n);
}

/// `a` and `b` compared in byte order, eight bytes a step: terms that share a long
/// prefix (paths, identifiers) are compared often while a dictionary is sorted (musl's
/// `memcmp`, what comparing slices calls, was a byte loop before [`libc_mem`] replaced it).
pub(crate) fn cmp_bytes(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    for (p, q) in (&mut x).zip(&mut y) {
        let (p, q) = (word(p), word(q));
        if p != q {
            return p.cmp(&q);
        }
    }
    // what is left of each (the rest of the shorter one is shorter than eight bytes)
    let done = a.len().min(b.len()) / 8 * 8;
    a[done..].cmp(&b[done..])
}

/// Whether `a` and `b` are the same bytes (see [`cmp_bytes`] for why not `==`).
#[inline]
pub(crate) fn eq_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && cmp_bytes(a, b).is_eq()
}

/// Eight bytes as a big-endian word (so that words compare as the bytes do).
#[inline]
fn word(chunk: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(chunk);
    u64::from_be_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::{SHORT, cmp_bytes, copy_short, eq_bytes, extend_short};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn byte_comparisons_agree_with_slices(
            a in proptest::collection::vec(0u8..4, 0..40),
            b in proptest::collection::vec(0u8..4, 0..40),
            shared in 0usize..30,
        ) {
            // a common prefix of random length makes the interesting cases frequent
            let prefix: Vec<u8> = (0..shared).map(|i| (i * 7) as u8).collect();
            let (a, b) = ([&prefix[..], &a].concat(), [&prefix[..], &b].concat());
            prop_assert_eq!(cmp_bytes(&a, &b), a.cmp(&b));
            prop_assert_eq!(cmp_bytes(&b, &a), b.cmp(&a));
            prop_assert_eq!(eq_bytes(&a, &b), a == b);
            prop_assert!(eq_bytes(&a, &a.clone()));
        }
    }

    #[test]
    fn short_copies_copy_exactly() {
        let src: Vec<u8> = (1..=70).collect();
        for n in 0..=70 {
            let mut dst = [0u8; 80];
            copy_short(&mut dst, &src[..n]);
            assert_eq!(&dst[..n], &src[..n], "{n}");
            assert!(dst[n..].iter().all(|&b| b == 0), "{n}: wrote past the end");
        }
    }

    #[test]
    fn short_appends_append_exactly() {
        let src: Vec<u8> = (1..=40).collect();
        for before in [0usize, 1, 7, 100] {
            for n in 0..=40 {
                let mut out = vec![9u8; before];
                out.reserve_exact(n + SHORT);
                let room = out.capacity();
                extend_short(&mut out, &src[..n]);
                assert_eq!(out.len(), before + n);
                assert!(out[..before].iter().all(|&b| b == 9));
                assert_eq!(&out[before..], &src[..n], "{before} + {n}");
                assert_eq!(out.capacity(), room, "no growth with SHORT bytes of room");
            }
        }
    }

    #[test]
    fn md5_matches_rfc_1321() {
        assert_eq!(super::md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(super::md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
