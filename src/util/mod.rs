//! Small self-contained helpers shared by every layer: timestamps, globs, hashing (MD5 too, for
//! directory names), a binary codec.
pub mod codec;
pub mod glob;
pub mod hash;
pub mod time;
