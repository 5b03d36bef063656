//! Long cycles under simple ko (KataGo's reading of Chinese rules): a
//! position that stands for the third time ends the game without result,
//! as in KataGo, so the search scores a move that repeats a position a
//! third time as a no result (winrate 50%) and an engine that is ahead
//! breaks the cycle. `engine analysis` with g170 b6c96 on a 9x9 triple ko
//! (the unit test `a_triple_ko_ends_without_result_at_the_third_repetition_under_simple_ko`
//! checks the rule itself); KataGo 1.17.2 answered the same queries with
//! the same values (docs/gtp.md, "Long cycles").

use serde_json::{json, Value};

#[path = "common/engine_cli.rs"]
mod engine_cli;
use engine_cli::{analysis_responses, final_response as response};

/// KataGo's g170 b6c96 in the shared data.
fn g170() -> String {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let net = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    assert!(net.is_file(), "shared net missing: {}", net.display());
    net.display().to_string()
}

/// Three kos down the left side of a 9x9 board (C8/D8, C5/D5, C2/D2), the
/// rest empty; komi -40, so Black is far ahead whatever the kos do.
fn triple_ko_query(id: &str, turns: usize, allow: Option<&str>) -> Value {
    let stones = [
        ("W", "C9"),
        ("B", "D9"),
        ("W", "B8"),
        ("B", "C8"),
        ("B", "E8"),
        ("W", "C7"),
        ("B", "D7"),
        ("W", "C6"),
        ("B", "D6"),
        ("W", "B5"),
        ("B", "C5"),
        ("B", "E5"),
        ("W", "C4"),
        ("B", "D4"),
        ("W", "C3"),
        ("B", "D3"),
        ("W", "B2"),
        ("W", "D2"),
        ("B", "E2"),
        ("W", "C1"),
        ("B", "D1"),
    ];
    // The six captures of the cycle, White first; each takes a ko the
    // previous capture did not touch.
    let cycle = [
        ("W", "D8"),
        ("B", "C2"),
        ("W", "D5"),
        ("B", "C8"),
        ("W", "D2"),
        ("B", "C5"),
    ];
    let moves: Vec<Value> = cycle
        .iter()
        .cycle()
        .take(turns)
        .map(|(p, m)| json!([p, m]))
        .collect();
    let mut q = json!({
        "id": id,
        "boardXSize": 9,
        "boardYSize": 9,
        "rules": "chinese",
        "komi": -40,
        "initialStones": stones.iter().map(|(p, m)| json!([p, m])).collect::<Vec<_>>(),
        "moves": moves,
        "maxVisits": 200,
    });
    if let Some(mv) = allow {
        q["allowMoves"] = json!([{"player": "B", "moves": [mv], "untilDepth": 1}]);
    }
    q
}

fn analyse(queries: &[Value]) -> Vec<Value> {
    analysis_responses(
        &g170(),
        "numSearchThreads=1,numAnalysisThreads=1,nnRandSeed=cycle-tests,searchRandSeed=cycle-tests",
        queries,
    )
}

fn winrate(v: &Value) -> f64 {
    v["rootInfo"]["winrate"].as_f64().expect("rootInfo.winrate")
}

#[test]
fn ahead_the_engine_breaks_a_triple_ko_cycle_at_the_third_repetition() {
    // After 13 moves (twice round the cycle and one more) Black's C2 would
    // make a position stand for the third time; after 7 it would not.
    let lines = analyse(&[
        triple_ko_query("free", 13, None),
        triple_ko_query("repeat", 13, Some("C2")),
        triple_ko_query("elsewhere", 13, Some("G5")),
        triple_ko_query("early", 7, None),
        triple_ko_query("early-repeat", 7, Some("C2")),
    ]);
    let repeat = response(&lines, "repeat");
    assert!(
        (0.45..=0.55).contains(&winrate(repeat)),
        "C2 at the third repetition is a no result: {repeat}"
    );
    let lead = repeat["rootInfo"]["scoreLead"].as_f64().unwrap();
    assert!(lead.abs() < 3.0, "a no result has no lead: {repeat}");
    assert!(winrate(response(&lines, "elsewhere")) > 0.95);
    let free = response(&lines, "free");
    let best = free["moveInfos"][0]["move"].as_str().unwrap();
    assert_ne!(best, "C2", "ahead, the engine leaves the cycle: {free}");
    assert!(winrate(free) > 0.95, "{free}");

    // Earlier the same capture only takes a ko: as good as any move.
    assert!(winrate(response(&lines, "early-repeat")) > 0.95);
    let early = response(&lines, "early");
    let c2 = early["moveInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["move"] == "C2")
        .unwrap_or_else(|| panic!("C2 searched before the third repetition: {early}"));
    assert!(c2["winrate"].as_f64().unwrap() > 0.95, "{c2}");
}
