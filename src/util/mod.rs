//! Small self-contained helpers shared by every layer: timestamps, globs, hashing.
pub mod glob;
pub mod hash;
pub mod time;
