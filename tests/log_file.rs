//! KataGo's log keys on `engine gtp` and `engine analysis` (default net):
//! `logFile`/`logDir` get every line, time-stamped; `logToStderr = false`
//! keeps routine lines (the GTP conversation, search summaries) out of
//! stderr but not the start-up lines; `logSearchInfo` logs each genmove's
//! search.

use std::path::PathBuf;
use std::process::{Command, Stdio};

#[path = "common/engine_cli.rs"]
mod engine_cli;
use engine_cli::{repo, run_ok as run};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-log-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A time-stamped log line: `YYYY-MM-DD HH:MM:SS+0000: text`.
fn stamped(line: &str) -> bool {
    let b = line.as_bytes();
    line.len() > 26 && b[4] == b'-' && b[10] == b' ' && &line[19..26] == "+0000: "
}

#[test]
fn gtp_writes_its_log_file() {
    let dir = scratch("gtp");
    let file = dir.join("gtp.log");
    let overrides = format!(
        "logFile={},logToStderr=false,logAllGTPCommunication=true,logSearchInfo=true,maxVisits=20",
        file.display()
    );
    let (stdout, stderr) = run(
        &["gtp", "-override-config", &overrides],
        "boardsize 9\ngenmove b\nquit\n",
    );
    assert!(stdout.contains("= "), "{stdout}");
    let log = std::fs::read_to_string(&file).expect("the log file");
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines.iter().all(|l| stamped(l)), "{log}");
    for want in [
        "GTP ready",
        "Controller: boardsize 9",
        "Controller: genmove b",
        "Search for Black: 20 visits",
    ] {
        assert!(log.contains(want), "{want} missing from the log:\n{log}");
    }
    // Start-up lines reach stderr too; the conversation and the search
    // summaries only the file.
    assert!(stderr.contains("GTP ready"), "{stderr}");
    assert!(!stderr.contains("Controller:"), "{stderr}");
    assert!(!stderr.contains("Search for"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn analysis_writes_a_log_in_log_dir() {
    let dir = scratch("analysis");
    let (_, stderr) = run(
        &[
            "analysis",
            "-model",
            "models/engine-9x9-b4c32-gen60.bin.gz",
            "-config",
            "configs/analysis.toml",
            "-override-config",
            &format!("logDir={},logTimeStamp=false", dir.display()),
        ],
        "",
    );
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("logDir made")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let log = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        log.contains("Started, ready to begin handling requests"),
        "{log}"
    );
    assert!(!log.lines().any(stamped), "logTimeStamp=false: {log}");
    // The analysis engine logs to stderr too unless told not to.
    assert!(stderr.contains("Started, ready"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_log_files_are_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gtp", "-override-config", "logFile=a.log,logDir=b"])
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
        .expect("engine runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("more than one of logFile"));
}
