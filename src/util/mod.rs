//! Small self-contained helpers shared by every layer: timestamps, globs, varints and a
//! binary codec, immutable (possibly mapped) byte buffers, huge-page arrays, the search for a
//! JSON string's next special byte and short copies.
pub mod blob;
pub mod codec;
pub mod glob;
pub mod huge;
pub mod special;
pub mod time;
pub mod varint;

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
pub fn copy_short(dst: &mut [u8], src: &[u8]) {
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
        _ => {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = *s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_short;

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
    fn md5_matches_rfc_1321() {
        assert_eq!(super::md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(super::md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
