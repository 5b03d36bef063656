//! KataGo's eval cache (`useEvalCache`) end to end, on the project's own
//! 9x9 net with fixed symmetry (`nnRandomize = false`):
//! - `engine analysis` shares one cache across queries: a quick query
//!   after a deep one of the same position finds the deep one's values;
//! - its parameters cannot change after start-up (KataGo's error), in an
//!   analysis query's `overrideSettings` and in GTP's `kata-set-param`.

#[path = "common/engine_cli.rs"]
mod engine_cli;
#[path = "common/gtp.rs"]
mod gtp;

use serde_json::{json, Value};

use engine_cli::{analysis_args, run_ok, FIRST_NET};

fn query(id: &str, visits: u64) -> Value {
    json!({"id": id, "moves": [["B", "E5"], ["W", "C4"]], "rules": "tromp-taylor",
           "komi": 7, "boardXSize": 9, "boardYSize": 9, "maxVisits": visits})
}

/// Every stdout line as JSON.
fn responses(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn final_of<'a>(all: &'a [Value], id: &str) -> &'a Value {
    all.iter()
        .find(|v| v["id"] == id && v["isDuringSearch"] == false)
        .unwrap_or_else(|| panic!("no final response for {id}: {all:?}"))
}

/// The searched moves of a response: (move, winrate, scoreLead).
fn searched(r: &Value) -> Vec<(String, f64, f64)> {
    r["moveInfos"]
        .as_array()
        .expect("moveInfos")
        .iter()
        .filter(|m| m["visits"].as_u64().unwrap_or(0) > 0)
        .map(|m| {
            (
                m["move"].as_str().unwrap_or_default().to_string(),
                m["winrate"].as_f64().unwrap_or(f64::NAN),
                m["scoreLead"].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect()
}

/// A deep query leaves its values in the cache; a two-visit query of the
/// same position that follows (one analysis thread: in order) expands one
/// move, whose first evaluation the cache pulls most of the way to the
/// deep search's value for it. Without the cache that move gets the net's
/// raw value.
#[test]
fn analysis_queries_share_the_cache() {
    const SETTINGS: &str = "numAnalysisThreads=1,nnRandomize=false,evalCacheMinVisits=20";
    let with_cache = format!("{SETTINGS},useEvalCache=true");
    let mut bad = query("bad", 2);
    bad["overrideSettings"] = json!({"useEvalCache": false});
    let input = [query("deep", 400), query("quick", 2), bad]
        .iter()
        .map(|q| q.to_string() + "\n")
        .collect::<String>();
    let (stdout, _) = run_ok(&analysis_args(&with_cache), &input);
    let all = responses(&stdout);
    let quick = searched(final_of(&all, "quick"));
    assert_eq!(quick.len(), 1, "{quick:?}");
    let (mv, quick_wr, quick_lead) = quick[0].clone();
    let deep = searched(final_of(&all, "deep"));
    let (_, deep_wr, deep_lead) = deep
        .iter()
        .find(|(m, ..)| *m == mv)
        .cloned()
        .unwrap_or_else(|| panic!("{mv} not searched deep: {deep:?}"));
    let error = all
        .iter()
        .find(|v| v["id"] == "bad")
        .expect("an answer to the bad query");
    assert_eq!(error["field"], "overrideSettings", "{error}");
    assert_eq!(
        error["error"],
        "Could not set settings: Cannot change useEvalCache after initialization"
    );

    // The same move's first evaluation without the cache.
    let mut raw = query("raw", 2);
    raw["allowMoves"] = json!([{"player": "B", "moves": [mv.clone()], "untilDepth": 1}]);
    let without = format!("{SETTINGS},useEvalCache=false");
    let (stdout, _) = run_ok(&analysis_args(&without), &(raw.to_string() + "\n"));
    let all = responses(&stdout);
    let plain = searched(final_of(&all, "raw"));
    assert_eq!(plain.len(), 1, "{plain:?}");
    let (plain_mv, raw_wr, raw_lead) = plain[0].clone();
    assert_eq!(plain_mv, mv);
    // An entry of w visits counts as √(20·w) ≥ 20: the cache's share of
    // a one-visit node is 1/(1 + 3/20·(1 + 2/400)) > 0.86 at least.
    assert!(
        (quick_wr - deep_wr).abs() <= 0.15 * (raw_wr - deep_wr).abs() + 1e-4,
        "winrate: quick {quick_wr}, deep {deep_wr}, raw {raw_wr}"
    );
    assert!(
        (quick_lead - deep_lead).abs() <= 0.15 * (raw_lead - deep_lead).abs() + 1e-3,
        "lead: quick {quick_lead}, deep {deep_lead}, raw {raw_lead}"
    );
    assert!(
        (raw_wr - deep_wr).abs() > 1e-3 || (raw_lead - deep_lead).abs() > 1e-2,
        "the deep search found nothing the net did not: the test shows nothing"
    );
}

/// GTP: `kata-set-param` cannot turn the cache on or off (KataGo's error);
/// `clear_cache` empties it.
#[test]
fn gtp_keeps_the_cache_settings_fixed() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let model = root.join(FIRST_NET);
    let args = [
        "-model".as_ref(),
        model.as_os_str(),
        "-override-config".as_ref(),
        "useEvalCache=true,maxVisits=60,evalCacheMinVisits=10".as_ref(),
    ];
    let input = "boardsize 9\ngenmove b\nkata-set-param useEvalCache false\n\
                 kata-set-param evalCacheMinVisits 11\nkata-set-param evalCacheMinVisits 10\n\
                 clear_cache\ngenmove w\nkata-get-param useEvalCache\n";
    let (answers, stderr) = gtp::session(&args, input);
    assert_eq!(answers.len(), 8, "{answers:?}\n{stderr}");
    assert!(answers[1].starts_with("= "), "{answers:?}");
    assert_eq!(
        answers[2],
        "? Could not set params: Cannot change useEvalCache after initialization"
    );
    assert_eq!(
        answers[3],
        "? Could not set params: Cannot change evalCacheMinVisits after initialization"
    );
    assert_eq!(answers[4], "=");
    assert_eq!(answers[5], "=");
    assert!(answers[6].starts_with("= "), "{answers:?}");
    assert_eq!(answers[7], "= true");
}
