//! AFL++ harness for the `shuffle_summary` target; the body is
//! [`engine::fuzz_targets::shuffle_summary`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::shuffle_summary(data);
    });
}
