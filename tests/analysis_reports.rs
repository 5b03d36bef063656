//! During-search reports of `engine analysis` on the real search (the own
//! 9x9 net): `firstReportDuringSearchAfter` alone gives one report before
//! the final one (it once made the search thread panic: its period, left
//! unset, was too long to add to the clock), and with
//! `reportDuringSearchEvery` more follow.

#[path = "common/engine_cli.rs"]
mod engine_cli;

use serde_json::{json, Value};

use engine_cli::{analysis_args, run_ok};

/// (during-search reports, final responses) of one query.
fn reports(extra: Value) -> (usize, usize) {
    let mut q = json!({"id": "r", "moves": [], "rules": "tromp-taylor", "komi": 7,
                       "boardXSize": 9, "boardYSize": 9, "maxVisits": 3000});
    for (k, v) in extra.as_object().expect("object") {
        q[k] = v.clone();
    }
    let (stdout, _) = run_ok(&analysis_args("nnRandomize=false"), &(q.to_string() + "\n"));
    let all: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let during = all.iter().filter(|v| v["isDuringSearch"] == true).count();
    let finals = all
        .iter()
        .filter(|v| v["isDuringSearch"] == false && v.get("moveInfos").is_some())
        .count();
    (during, finals)
}

#[test]
fn first_report_alone_then_the_final() {
    assert_eq!(
        reports(json!({"firstReportDuringSearchAfter": 0.01})),
        (1, 1)
    );
}

#[test]
fn first_report_then_every_period() {
    let (during, finals) = reports(json!({"firstReportDuringSearchAfter": 0.001,
                                          "reportDuringSearchEvery": 0.05}));
    assert_eq!(finals, 1);
    assert!(during >= 2, "{during}");
}
