//! AFL++ harness for the `sgf` target; the body is
//! [`engine::fuzz_targets::sgf`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::sgf(data);
    });
}
