//! AFL++ harness for the `checkpoint` target; the body is
//! [`engine::fuzz_targets::checkpoint`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::checkpoint(data);
    });
}
