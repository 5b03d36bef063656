//! AFL++ harness for the `gtp_lines` target; the body is
//! [`engine::fuzz_targets::gtp_lines`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::gtp_lines(data);
    });
}
