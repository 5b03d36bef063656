//! The code-shape rules of `docs/ARCHITECTURE.md`, checked from the
//! sources by `scripts/code_shape.py`: no import circle, no import into
//! the same or a higher layer, no source file over 800 lines and no
//! function over 150 lines, at most 15 config reads by hand outside
//! `src/config/` (tests aside). The script exits 1 and names each break.

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
        "config reads by hand outside src/config (tests aside): ",
    ] {
        assert!(report.contains(rule), "no {rule:?} in:\n{report}");
    }
}

/// The checker sees what it must: a circle between siblings two levels
/// down (`a::m::x` and `a::m::y`, as `train::model::blocks` and
/// `transformer` once were), uses after a string continued with `\`, and
/// braces inside such strings do not count toward a function's length.
#[test]
fn the_checker_finds_deep_circles_and_reads_continued_strings() {
    let dir = std::env::temp_dir().join(format!("code-shape-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let m = dir.join("game/m");
    std::fs::create_dir_all(&m).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod game;\n").unwrap();
    std::fs::write(dir.join("game/mod.rs"), "mod m;\n").unwrap();
    std::fs::write(m.join("mod.rs"), "mod x;\nmod y;\n").unwrap();
    // x: a string continued with a backslash that holds a quote and
    // braces, then a use of y after it.
    std::fs::write(
        m.join("x.rs"),
        "pub fn f() -> &'static str {\n    \"one \\\"{{\\\n     two {\"\n}\nuse super::y::g;\n",
    )
    .unwrap();
    std::fs::write(m.join("y.rs"), "use super::x::f;\npub fn g() {}\n").unwrap();
    let out = Command::new("python3")
        .arg(format!(
            "{}/scripts/code_shape.py",
            env!("CARGO_MANIFEST_DIR")
        ))
        .arg(&dir)
        .output()
        .expect("python3 runs scripts/code_shape.py");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{report}");
    assert!(
        report.contains("import circles, sibling modules:   1")
            && report.contains("game::m::x <-> game::m::y"),
        "{report}"
    );
    assert!(
        report.contains("functions over 150 lines (tests aside): 0"),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The config-read rule counts the config's getters called outside
/// `src/config/` in code (16 fail it), and not those inside `src/config/`,
/// in a trailing test module, in comments or in strings.
#[test]
fn the_checker_counts_config_reads_outside_config() {
    let dir = std::env::temp_dir().join(format!("code-shape-reads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("config")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod config;\npub mod game;\n").unwrap();
    let reads = |n: usize| -> String {
        (0..n)
            .map(|i| format!("    let _ = cfg.get_i64_or(\"k{i}\", 1, 0..=9);\n"))
            .collect()
    };
    // Inside src/config: not counted, however many.
    std::fs::write(
        dir.join("config/mod.rs"),
        format!("pub fn f(cfg: &C) {{\n{}}}\n", reads(20)),
    )
    .unwrap();
    let game = |n: usize| {
        format!(
            "pub fn g(cfg: &C) {{\n{}    let _ = cfg.get_bool(\"k\");\n    // cfg.get_f64(\"in a comment\")\n    let _ = \".get_string(\";\n}}\n\n#[cfg(test)]\nmod tests {{\n    fn t(cfg: &C) {{\n{}    }}\n}}\n",
            reads(n),
            reads(5)
        )
    };
    let run = || {
        Command::new("python3")
            .arg(format!(
                "{}/scripts/code_shape.py",
                env!("CARGO_MANIFEST_DIR")
            ))
            .arg(&dir)
            .output()
            .expect("python3 runs scripts/code_shape.py")
    };
    // 14 + get_bool: 15 reads, the most allowed.
    std::fs::write(dir.join("game.rs"), game(14)).unwrap();
    let out = run();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("config reads by hand outside src/config (tests aside): 15 (at most 15)"),
        "{report}"
    );
    assert!(out.status.success(), "{report}");
    // One more fails, and the report names where.
    std::fs::write(dir.join("game.rs"), game(15)).unwrap();
    let out = run();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{report}");
    assert!(
        report.contains("config reads by hand outside src/config (tests aside): 16 (at most 15)")
            && report.contains("game.rs:2"),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
