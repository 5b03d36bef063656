//! `maxMemoryMB` end to end on the default net: `engine analysis` and
//! `engine gtp` say at start-up how they split the budget (the NN cache
//! trimmed, each tree's share), and a search asked for far more visits than
//! fit stops at the tree's share and says so.

#[path = "common/engine_cli.rs"]
mod engine_cli;
use engine_cli::{analysis_args, run_ok as run, FIRST_NET};

use engine::config::Config;
use engine::setup::MemoryBudget;

/// The visits a 19x19 tree holds under 4 MB with `threads` search threads
/// and one search, as the engine computes them.
fn cap_19x19(threads: i64) -> i64 {
    let cfg = Config::from_toml_str("maxMemoryMB = 4", "t.toml").unwrap();
    let plan = MemoryBudget::from_config(&cfg)
        .unwrap()
        .unwrap()
        .plan(20, 1);
    // A slot is counted at 19x19 size (the cache bounds its bytes to
    // that on bigger boards).
    assert_eq!(
        plan.cache_power_of_two, 9,
        "4 MB hold 2^9 cache entries of 19x19"
    );
    (plan.tree_bytes / engine::search::tree_node_bytes(19, 19)) as i64 - threads
}

#[test]
fn analysis_stops_a_search_at_the_trees_share() {
    let query = r#"{"id":"big","moves":[],"rules":"tromp-taylor","komi":7.5,"boardXSize":19,"boardYSize":19,"maxVisits":100000}"#;
    let (stdout, stderr) = run(
        &analysis_args("maxMemoryMB=4,numAnalysisThreads=1,numSearchThreadsPerAnalysisThread=2"),
        &format!("{query}\n"),
    );
    assert!(
        stderr.contains("trimmed to 2^9") && stderr.contains("maxMemoryMB = 4:"),
        "{stderr}"
    );
    assert!(stderr.contains("search stopped at"), "{stderr}");
    let answer: serde_json::Value = stdout
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .expect("an answer");
    let visits = answer["rootInfo"]["visits"].as_i64().expect("root visits");
    assert_eq!(visits, cap_19x19(2), "{answer}");
}

#[test]
fn gtp_analysis_stops_at_the_trees_share() {
    let (stdout, stderr) = run(
        &[
            "gtp",
            "-model",
            FIRST_NET,
            "-override-config",
            "maxMemoryMB=4,numSearchThreads=2,maxVisits=100000",
        ],
        "boardsize 19\nclear_board\ngenmove b\nkata-analyze w 1000\nquit\n",
    );
    assert!(stderr.contains("trimmed to 2^9"), "{stderr}");
    let capped = stderr
        .lines()
        .filter(|l| l.starts_with("search stopped at"))
        .count();
    assert!(capped >= 1, "{stderr}");
    assert!(stdout.contains("= "), "{stdout}");
    // Each stop is at the cap (the genmove's tree, then kata-analyze's
    // after reuse).
    for l in stderr
        .lines()
        .filter(|l| l.starts_with("search stopped at"))
    {
        assert!(l.contains(&format!("at {} visits", cap_19x19(2))), "{l}");
    }
}
