//! Every command reports its config's keys at start-up the same way (one
//! path, `engine::setup::config_key_report`): a key no command knows, with
//! the nearest known key as a hint, and a known key the command does not
//! use; each command's own example config in `configs/` gives no such line.
//! Each run sets, by `-override-config`, one typo (`maxVisitz`) and one key
//! that belongs to another command, and must print exactly those two
//! warnings.

use std::path::PathBuf;

#[path = "common/engine_cli.rs"]
mod engine_cli;
use engine_cli::{repo, run_engine as run, FIRST_NET};

/// The tests' fixed small net ([`FIRST_NET`]).
fn net() -> PathBuf {
    repo().join(FIRST_NET)
}

fn config(name: &str) -> String {
    repo().join("configs").join(name).display().to_string()
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-keys-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The typo every run sets, and the warning it must give.
const TYPO: &str = "maxVisitz=5";
const TYPO_LINE: &str = "WARNING: unknown config key 'maxVisitz' in -override-config (did you mean 'maxVisits'?): it has no effect";

/// Checks that `args` (with `-override-config TYPO,<unused>=<value>`) ends
/// well and warns about exactly the typo and `unused`.
fn check(command: &str, args: &[&str], unused: (&str, &str), stdin: &str) {
    let overrides = format!("{TYPO},{}={}", unused.0, unused.1);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-override-config", &overrides]);
    let out = run(&all, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{command} failed ({}):\n{}\n{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    let mut warnings: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.find("WARNING:").map(|i| &l[i..]))
        .filter(|l| l.contains("config key"))
        .collect();
    let unused_line = format!(
        "WARNING: config key '{}' in -override-config is not used by {command}: it has no effect",
        unused.0
    );
    warnings.sort_unstable();
    let mut expected = vec![unused_line.as_str(), TYPO_LINE];
    expected.sort_unstable();
    assert_eq!(
        warnings, expected,
        "{command}: warnings of its own config and the overrides\n{stderr}"
    );
}

#[test]
fn gtp_reports_keys() {
    let net = net().display().to_string();
    check(
        "engine gtp",
        &["gtp", "-model", &net, "-config", &config("gtp.toml")],
        ("numGameThreads", "2"),
        "quit\n",
    );
}

#[test]
fn analysis_reports_keys() {
    let net = net().display().to_string();
    check(
        "engine analysis",
        &[
            "analysis",
            "-model",
            &net,
            "-config",
            &config("analysis.toml"),
        ],
        ("ponderingEnabled", "false"),
        "",
    );
}

#[test]
fn benchmark_reports_keys() {
    let net = net().display().to_string();
    check(
        "engine benchmark",
        &[
            "benchmark",
            "-model",
            &net,
            "-v",
            "4",
            "-t",
            "1",
            "-n",
            "1",
            "-boardsize",
            "9",
        ],
        ("ponderingEnabled", "false"),
        "",
    );
    check(
        "engine benchmark -nn",
        &[
            "benchmark",
            "-nn",
            "-model",
            &net,
            "-batch",
            "1",
            "-seconds",
            "0.1",
            "-boardsize",
            "9",
        ],
        ("ponderingEnabled", "false"),
        "",
    );
}

#[test]
fn selfplay_reports_keys() {
    let dir = scratch("selfplay");
    let net = net().display().to_string();
    check(
        "engine selfplay",
        &[
            "selfplay",
            "-config",
            &config("selfplay.toml"),
            "-model",
            &net,
            "-output-dir",
            dir.to_str().unwrap(),
            "-max-games-total",
            "1",
            "-override-config",
            "maxVisits=2,cheapSearchVisits=1,reducedVisitsMin=1,numGameThreads=1,bSizes=9,bSizeRelProbs=1,maxMovesPerGame=6",
        ],
        ("ponderingEnabled", "false"),
        "",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn match_reports_keys() {
    let dir = scratch("match");
    let net = net().display().to_string();
    check(
        "engine match",
        &[
            "match",
            "-config",
            &config("match.toml"),
            "-bot",
            &format!("a={net}"),
            "-bot",
            &format!("b={net}"),
            "-games",
            "1",
            "-boardsize",
            "9",
            "-komi",
            "7",
            "-sgf-output-dir",
            dir.to_str().unwrap(),
            "-override-config",
            "maxVisits=2,maxMovesPerGame=6,numGameThreads=1",
        ],
        ("ponderingEnabled", "false"),
        "",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `engine gatekeeper` with its example config over empty folders in `dir`,
/// quitting when there is nothing to test, then `extra`.
fn gatekeeper_args(dir: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let d = |n: &str| dir.join(n).display().to_string();
    let mut args: Vec<String> = vec![
        "gatekeeper".into(),
        "-config".into(),
        config("gatekeeper.toml"),
        "-test-models-dir".into(),
        d("test"),
        "-accepted-models-dir".into(),
        d("accepted"),
        "-rejected-models-dir".into(),
        d("rejected"),
        "-sgf-output-dir".into(),
        d("sgfs"),
        "-quit-if-no-nets-to-test".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[test]
fn gatekeeper_reports_keys_before_any_net_arrives() {
    let dir = scratch("gate");
    let args = gatekeeper_args(&dir, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check(
        "engine gatekeeper",
        &args,
        ("ponderingEnabled", "false"),
        "",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bad value of a network key is refused when the gatekeeper starts, not
/// when the first candidate arrives.
#[test]
fn gatekeeper_checks_network_keys_at_start() {
    let dir = scratch("gate-bad");
    let args = gatekeeper_args(&dir, &["-override-config", "nnCacheSizePowerOfTwo=99"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args, "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("nnCacheSizePowerOfTwo"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
