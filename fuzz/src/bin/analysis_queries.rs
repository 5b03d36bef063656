//! AFL++ harness for the `analysis_queries` target; the body is
//! [`engine::fuzz_targets::analysis_queries`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::analysis_queries(data);
    });
}
