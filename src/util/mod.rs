//! Small self-contained helpers shared by every layer: timestamps, globs, varints and a
//! binary codec.
pub mod codec;
pub mod glob;
pub mod time;
pub mod varint;
