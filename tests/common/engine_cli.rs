//! Running the `engine` binary from the repository root with text on its
//! stdin, for the end-to-end tests of start-up, logs and budgets (each test
//! file uses some of it).
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The project's first shipped net, generation 60 of `models/training-run`,
/// relative to the repository root: b4c32, small and quick to load, and a
/// fixed file, so these tests do not move when the default net changes.
pub const FIRST_NET: &str = "models/training-run/engine-9x9-b4c32-gen60.bin.gz";

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `engine ARGS` from the repository root with `stdin` fed in and
/// closed; returns what it did.
pub fn run_engine(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("engine starts");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("write stdin");
    drop(input);
    child.wait_with_output().expect("engine ends")
}

/// `engine analysis` on the project's first shipped net (generation 60 of
/// `models/training-run`) and `configs/analysis.toml` with `overrides`
/// (`-override-config`), as [`run_ok`] runs it.
pub fn analysis_args(overrides: &str) -> Vec<&str> {
    vec![
        "analysis",
        "-model",
        FIRST_NET,
        "-config",
        "configs/analysis.toml",
        "-override-config",
        overrides,
    ]
}

/// [`run_engine`] that must succeed; returns stdout and stderr.
pub fn run_ok(args: &[&str], stdin: &str) -> (String, String) {
    let out = run_engine(args, stdin);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{args:?} failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// `engine analysis -model NET -config configs/analysis.toml
/// -override-config OVERRIDES` with `queries` as its input lines; every
/// response line, parsed.
pub fn analysis_responses(
    net: &str,
    overrides: &str,
    queries: &[serde_json::Value],
) -> Vec<serde_json::Value> {
    let input: String = queries.iter().map(|q| format!("{q}\n")).collect();
    let args = [
        "analysis",
        "-model",
        net,
        "-config",
        "configs/analysis.toml",
        "-override-config",
        overrides,
    ];
    let out = run_engine(&args, &input);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The final response (not a partial one) to query `id`.
pub fn final_response<'a>(lines: &'a [serde_json::Value], id: &str) -> &'a serde_json::Value {
    lines
        .iter()
        .find(|v| v["id"] == id && v.get("isDuringSearch") != Some(&serde_json::json!(true)))
        .unwrap_or_else(|| panic!("no response for {id}: {lines:?}"))
}
