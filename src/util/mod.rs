//! Small self-contained helpers shared by every layer: timestamps, globs, hashing, a binary codec.
pub mod codec;
pub mod glob;
pub mod hash;
pub mod time;
