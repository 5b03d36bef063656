//! The code-shape rules of `docs/ARCHITECTURE.md`, checked from the
//! sources by `scripts/code_shape.py`: no import circle, no import into
//! the same or a higher layer, no source file over 800 lines and no
//! function over 150 lines (tests aside). The script exits 1 and names
//! each break.

use std::process::Command;

#[test]
fn the_sources_keep_the_architecture_rules() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/scripts/code_shape.py"))
        .arg(format!("{root}/src"))
        .output()
        .expect("python3 runs scripts/code_shape.py");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/code_shape.py found a break of docs/ARCHITECTURE.md's rules:\n{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The report names every rule it checked, so a script that checks
    // nothing cannot pass.
    for rule in [
        "import circles, top-level modules: 0",
        "import circles, sibling modules:   0",
        "arrows",
        "source files over 800 lines (tests aside): 0",
        "functions over 150 lines (tests aside): 0",
    ] {
        assert!(report.contains(rule), "no {rule:?} in:\n{report}");
    }
}
