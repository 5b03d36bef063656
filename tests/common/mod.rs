#![allow(dead_code)]

pub mod learn_config;
pub mod s3_server;

use std::io::BufRead;
use std::process::Output;

/// A command's stdout and stderr, for failure messages.
pub fn output_text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Reads `lines` until one contains `needle`; panics (with what was read)
/// if they end first. Returns the lines read.
pub fn read_until(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    needle: &str,
) -> Vec<String> {
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("read a line");
        let found = line.contains(needle);
        seen.push(line);
        if found {
            return seen;
        }
    }
    panic!("the output ended before {needle:?}:\n{}", seen.join("\n"))
}

/// The lines of a child's stderr (which must be piped).
pub fn stderr_lines(
    child: &mut std::process::Child,
) -> std::io::Lines<std::io::BufReader<std::process::ChildStderr>> {
    std::io::BufReader::new(child.stderr.take().expect("piped stderr")).lines()
}
