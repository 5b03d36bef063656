//! AFL++ harness for the `match_settings` target; the body is
//! [`engine::fuzz_targets::match_settings`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::match_settings(data);
    });
}
