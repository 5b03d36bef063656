//! `docs/configuration.md` is generated from the settings tables
//! (`engine config-reference`); this test fails when the committed file
//! differs, so the reference cannot go stale. `ENGINE_BLESS=1` rewrites the
//! file instead of failing.

use std::path::Path;

#[test]
fn config_reference_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md");
    let generated = engine::cli::config_reference();
    if std::env::var_os("ENGINE_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write docs/configuration.md");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || committed.lines().count().min(generated.lines().count()) + 1,
                |i| i + 1,
            );
        panic!(
            "docs/configuration.md differs from what the code generates (first at line {line}); \
             regenerate it with `ENGINE_BLESS=1 cargo test --release --no-default-features \
             --test config_reference` or `engine config-reference > docs/configuration.md`"
        );
    }
}
