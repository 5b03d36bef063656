//! The root ending score bonus (`rootEndingBonusPoints`, KataGo's
//! `getEndingWhiteScoreBonus`) against KataGo 1.17.2: for four 9x9
//! positions of `shared/vectors/nn/nn.jsonl`, the bonus of every root move
//! KataGo's `evalsgf -print-root-ending-bonus` printed (g170 net, 400
//! visits, `rootNumSymmetriesToSample=8`, `rootEndingBonusPoints` 0.5),
//! from our root ownership averaged over the same 8 symmetries. KataGo
//! prints two decimals; the bonus moves 10x as fast as the ownership near
//! the edge of the "sure" band, so the tolerance is the rounding plus a
//! little.

use engine::analysis::{build_positions, parse_line, ParseOptions, Request};
use engine::config::Config;
use engine::game::{GameOptions, GameState, Move};
use engine::search::{EvalOptions, SearchState};

const TOLERANCE: f64 = 0.005 + 0.004;

/// (nn.jsonl query id, KataGo's (move, white score bonus) per root child).
const CASES: &[(&str, &[(&str, f64)])] = &[
    // Area scoring, black to move: moves inside Black's sure area lose
    // about half a point; capturing the dead white stones (A6) does not.
    (
        "deadgroup_9_chinese_k7.5",
        &[
            ("A6", 0.0),
            ("pass", 0.0),
            ("D7", 0.0),
            ("D8", 0.45),
            ("C8", 0.47),
            ("B8", 0.46),
            ("A8", 0.47),
            ("D9", 0.47),
            ("C9", 0.48),
        ],
    ),
    // Territory scoring, white to move: a pass loses two thirds of the
    // bonus, moves in sure territory most of it.
    (
        "deadgroup_9_japanese_k6.5_white",
        &[("pass", -0.33), ("A4", -0.44), ("H2", -0.42)],
    ),
    // Unsettled positions: no bonus anywhere.
    (
        "pass2_9_chinese_k7.5",
        &[
            ("F1", 0.0),
            ("F3", 0.0),
            ("pass", 0.0),
            ("H8", 0.0),
            ("B1", 0.0),
            ("C2", 0.0),
            ("J6", 0.0),
            ("J5", 0.0),
            ("F9", 0.0),
            ("F5", 0.0),
            ("B2", 0.0),
        ],
    ),
    (
        "moves_9_t55_aga",
        &[("A8", 0.0), ("J3", 0.0), ("F3", 0.0), ("F1", 0.0)],
    ),
];

/// The position a query of nn.jsonl analyses (its last requested turn).
fn position(lines: &str, id: &str) -> GameState {
    let line = lines
        .lines()
        .find(|l| l.contains(&format!("\"id\": \"{id}\"")))
        .unwrap_or_else(|| panic!("{id} not in nn.jsonl"));
    let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    let query = record["query"].to_string();
    let Ok(Request::Analyze(q)) = parse_line(&query, &ParseOptions::default()).result else {
        panic!("{id}: not a query");
    };
    let mut turns = build_positions(&q, &GameOptions::default()).expect("legal moves");
    turns.pop().expect("a position").1
}

#[test]
fn ending_bonuses_match_katago() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let lines = std::fs::read_to_string(shared.join("vectors/nn/nn.jsonl")).expect("nn.jsonl");
    let cfg = Config::from_toml_str("nnRandomize = false\n", "test.toml").unwrap();
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    let net = engine::setup::load_network(&model, &cfg, 8).expect("the g170 net");
    let mut failures = Vec::new();
    for (id, katago) in CASES {
        let state = position(&lines, id);
        let opts = EvalOptions {
            num_symmetries: 8,
            include_ownership: true,
            ..EvalOptions::default()
        };
        let nn = net
            .evaluator
            .evaluate_state(&state, &opts)
            .expect("evaluation");
        let own = nn.white_ownership.as_ref().expect("ownership");
        let bonus = state.ending_score_bonuses(own, 0.5);
        let (xs, ys) = (state.x_size(), state.y_size());
        assert_eq!(bonus.len(), xs * ys + 1, "{id}");
        for &(vertex, want) in *katago {
            let mv = Move::parse(vertex, xs, ys).expect("a vertex");
            let got = bonus[mv.policy_index(xs, ys)];
            if (got - want).abs() > TOLERANCE {
                failures.push(format!("{id} {vertex}: ours {got:.4}, KataGo {want:.2}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
