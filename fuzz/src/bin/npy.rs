//! AFL++ harness for the `npy` target; the body is
//! [`engine::fuzz_targets::npy`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::npy(data);
    });
}
