//! Small self-contained helpers shared by every layer: timestamps, globs, hashing (and MD5 for
//! directory names), a binary codec.
pub mod codec;
pub mod glob;
pub mod hash;
pub mod md5;
pub mod time;
