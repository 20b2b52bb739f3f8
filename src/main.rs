//! Entry point: parse the command line, set up logging on stderr, run.
fn main() {}
