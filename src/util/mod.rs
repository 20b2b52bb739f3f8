//! Small self-contained helpers shared by every layer: timestamps, globs, a binary codec.
pub mod codec;
pub mod glob;
pub mod time;
