//! AFL++ harness for the `config` target; the body is
//! [`engine::fuzz_targets::config`], shared with `tests/fuzz_regressions.rs`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        engine::fuzz_targets::config(data);
    });
}
