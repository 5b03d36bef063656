//! Board benchmarks (filled in with the game core).
fn main() {}
