//! AFL++ harness for the `model_file` target; the body is
//! [`engine::fuzz_targets::model_file`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::model_file(data);
    });
}
