//! AFL++ harness for the `npz` target; the body is
//! [`engine::fuzz_targets::npz`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::npz(data);
    });
}
