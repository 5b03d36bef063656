//! KataGo's log keys on `engine gtp` and `engine analysis` (default net):
//! `logFile`/`logDir` get every line, time-stamped; `logToStderr = false`
//! keeps routine lines (the GTP conversation, search summaries) out of
//! stderr but not the start-up lines; `logSearchInfo` logs each genmove's
//! search; the analysis engine's `logAllRequests`, `logAllResponses`,
//! `logErrorsAndWarnings` and `logSearchInfo` log what KataGo's do.

use std::path::PathBuf;
use std::process::{Command, Stdio};

#[path = "common/engine_cli.rs"]
mod engine_cli;
use engine_cli::{analysis_args, repo, run_ok as run};

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
    let overrides = format!("logDir={},logTimeStamp=false", dir.display());
    let (_, stderr) = run(&analysis_args(&overrides), "");
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

/// The analysis engine's log keys, as KataGo's: `Request: LINE` for every
/// input line, `Response: LINE` for every output line, `Error: ...` and
/// `Warning: ...` (on by default), a summary of each finished search; and
/// with the defaults, only the errors and warnings.
#[test]
fn analysis_logs_requests_responses_errors_and_searches() {
    let dir = scratch("analysis-keys");
    let query = r#"{"id":"q","moves":[],"rules":"chinese","komi":7,"boardXSize":9,"boardYSize":9,"maxVisits":5,"analyzeTurns":[0]}"#;
    // An unknown field: a warning; not JSON: an error.
    let warned = r#"{"id":"w","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":2,"bogusField":1}"#;
    let input = format!("{query}\n{warned}\nnot json\n");
    let run_with = |name: &str, keys: &str| -> String {
        let file = dir.join(name);
        let overrides = format!("logFile={},logToStderr=false{keys}", file.display());
        let (stdout, _) = run(&analysis_args(&overrides), &input);
        assert!(stdout.contains("\"id\":\"q\""), "{stdout}");
        std::fs::read_to_string(&file).expect("the log file")
    };
    let log = run_with(
        "all.log",
        ",logAllRequests=true,logAllResponses=true,logSearchInfo=true",
    );
    for want in [
        &format!("Request: {query}"),
        "Request: not json",
        "Response: {\"id\":\"q\"",
        "Warning: {",
        "bogusField",
        "Error: {\"error\":",
        "Search for query \"q\" turn 0: 5 visits",
    ] {
        assert!(log.contains(want), "{want} missing from the log:\n{log}");
    }
    let quiet = run_with("default.log", "");
    assert!(quiet.contains("Error: {\"error\":"), "{quiet}");
    assert!(quiet.contains("Warning: {"), "{quiet}");
    for absent in ["Request:", "Response:", "Search for query"] {
        assert!(
            !quiet.contains(absent),
            "{absent} logged by default:\n{quiet}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
