//! AFL++ harness for the `train_json` target; the body is
//! [`engine::fuzz_targets::train_json`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::train_json(data);
    });
}
