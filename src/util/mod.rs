//! Small self-contained helpers shared by every layer: timestamps, globs, varints and a
//! binary codec, immutable (possibly mapped) byte buffers and huge-page arrays.
pub mod blob;
pub mod codec;
pub mod glob;
pub mod huge;
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

#[cfg(test)]
mod tests {
    #[test]
    fn md5_matches_rfc_1321() {
        assert_eq!(super::md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(super::md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
