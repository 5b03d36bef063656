//! One `engine gtp` session for the protocol tests: commands in, the
//! answers out (with the project's `configs/gtp.toml`).

// Each test file that includes this uses part of it.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The answers of a GTP transcript, one string per answer. KataGo's
/// `kata-raw-nn all` and `kata-raw-human-nn all` put a blank line between
/// the symmetries, inside the answer (a GTP answer ends at a blank line;
/// ours has none there): a piece that starts with neither `=` nor `?`
/// continues the answer before it.
pub fn answers(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for piece in text.split("\n\n").map(str::trim).filter(|a| !a.is_empty()) {
        match out.last_mut() {
            Some(last) if !piece.starts_with(['=', '?']) => {
                last.push('\n');
                last.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
    }
    out
}

/// Runs `engine gtp` with `args` on `input` and returns its answers.
pub fn session(args: &[&std::ffi::OsStr], input: &str) -> (Vec<String>, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("gtp")
        .args(args)
        .arg("-config")
        .arg(root.join("configs/gtp.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start engine");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write commands");
    let out = child.wait_with_output().expect("engine output");
    let stdout = String::from_utf8(out.stdout).expect("utf-8 output");
    (
        answers(&stdout),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
