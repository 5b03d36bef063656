//! The real g170 b6c96 network behind the batching evaluator, on real
//! positions from `shared/vectors/games`:
//!
//! - 8 threads firing requests at one `Evaluator` (so rows of different
//!   positions, symmetries and board sizes share batches) get the same
//!   outputs as one-at-a-time evaluation, within 5e-5 on probabilities and
//!   ownership (batching only changes the order of float sums);
//! - evaluating a rotated or reflected position under the inverse symmetry
//!   gives the original position's outputs moved by the symmetry, within
//!   1e-4 (the feature encoder, the symmetry code and the network agree).
//!
//! Needs the shared data folder (see `engine::shared_data_dir`).

// libtorch (and the trainer) are in the default build only.
#![cfg(feature = "torch")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use engine::game::sgf::parse_collection;
use engine::game::{Board, BoardHistory, Color, Loc, Move, Player, Rules};
use engine::nn::{
    nn_input_hash, EncodedInput, EvalParams, EvalRequest, Evaluator, EvaluatorConfig,
    FeatureEncoder, Model, NnInputParams, NnOutput, Symmetry, SymmetryChoice,
    NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7,
};
use tch::Device;

fn shared() -> PathBuf {
    engine::shared_data_dir().unwrap_or_else(|m| panic!("{m}"))
}

fn evaluator(max_batch_size: usize) -> Evaluator {
    let model = Model::load(
        shared().join("models/g170-b6c96-s175395328-d26788732.bin.gz"),
        Device::Cpu,
    )
    .expect("g170 loads");
    Evaluator::new(
        Box::new(model),
        EvaluatorConfig {
            max_batch_size,
            max_batch_wait: Duration::from_millis(2),
            // Boards of every size share 19x19 tensors, masked, as KataGo.
            pad_to_len: Some(19),
            ..EvaluatorConfig::default()
        },
    )
}

/// A position: board, history and player to move.
#[derive(Clone)]
struct Position {
    board: Board,
    hist: BoardHistory,
    next: Player,
}

/// The position after `turns` moves of the game in `sgf`, every point
/// moved by `sym` (a square board keeps its size).
fn position(sgf: &Path, turns: usize, sym: Symmetry) -> Position {
    let text = std::fs::read_to_string(sgf).expect("read sgf");
    let rec = parse_collection(&text).expect("parse")[0]
        .record()
        .expect("record");
    assert_eq!(rec.x_size, rec.y_size, "square boards only");
    let sidecar: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(sgf.with_extension("json")).expect("sidecar"),
    )
    .expect("json");
    let komi = sidecar["KM"].as_f64().expect("KM") as f32;
    let rules = Rules::parse_without_komi(&sidecar["rules"].to_string(), komi).expect("rules");
    let size = rec.x_size;
    let at = |(x, y): (usize, usize)| {
        let (sx, sy) = sym.point(x, y, size, size);
        Loc::from_xy(sx, sy, size)
    };
    let mut board = Board::new(size, size).expect("board");
    let setup: Vec<(Loc, Color)> = rec.setup.iter().map(|&(c, xy)| (at(xy), c)).collect();
    assert!(board.set_stones_fail_if_no_libs(&setup));
    let first = rec.moves.first().map_or(Player::Black, |&(p, _)| p);
    let mut hist = BoardHistory::new(&board, first, rules);
    hist.set_assume_multiple_starting_black_moves_are_handicap(true);
    let mut next = first;
    for &(pla, xy) in rec.moves.iter().take(turns) {
        let mv = xy.map_or(Move::Pass, |xy| Move::Play(at(xy)));
        assert!(hist.is_legal(&board, mv, pla), "illegal move in {sgf:?}");
        hist.play(&mut board, mv, pla);
        next = pla.opp();
    }
    Position { board, hist, next }
}

/// A request for `pos` under symmetry `sym`, every point's policy and the
/// ownership asked for, the cache bypassed.
fn request(pos: &Position, sym: Symmetry) -> EvalRequest {
    let (x, y) = (pos.board.x_size(), pos.board.y_size());
    let params = NnInputParams::default();
    let mut input = EncodedInput {
        x_size: x,
        y_size: y,
        spatial: vec![0.0; NUM_SPATIAL_FEATURES_V7 * x * y],
        global: vec![0.0; NUM_GLOBAL_FEATURES_V7],
        meta: vec![],
    };
    FeatureEncoder::new().fill_row_v7(
        &pos.board,
        &pos.hist,
        pos.next,
        &params,
        &mut input.spatial,
        &mut input.global,
    );
    let mut legal: Vec<bool> = pos
        .board
        .locs()
        .map(|loc| pos.hist.is_legal(&pos.board, Move::Play(loc), pos.next))
        .collect();
    legal.push(true);
    let hash = nn_input_hash(&pos.board, &pos.hist, pos.next, &params).0;
    let mut req = EvalRequest::new(input, legal, pos.next, hash);
    req.params = EvalParams {
        symmetry: SymmetryChoice::Fixed(sym),
        include_ownership: true,
        skip_cache: true,
        ..EvalParams::default()
    };
    req
}

/// Positions from games of three board sizes, at several move numbers.
fn positions() -> Vec<Position> {
    let games = shared().join("vectors/games");
    let mut out = Vec::new();
    for (file, turns) in [
        ("game_007_19x19_area.sgf", [0, 30, 90, 160, 230]),
        ("game_019_19x19_territory.sgf", [11, 55, 120, 180, 250]),
        ("game_001_13x13_area.sgf", [5, 25, 50, 75, 100]),
        ("game_005_9x9_area.sgf", [3, 12, 24, 36, 48]),
    ] {
        for t in turns {
            out.push(position(&games.join(file), t, Symmetry::IDENTITY));
        }
    }
    out
}

/// Largest differences between the two outputs: `(probabilities and
/// ownership, scores in points)`, with `b`'s points looked up through `map`.
fn max_diff(a: &NnOutput, b: &NnOutput, map: impl Fn(usize) -> usize) -> (f32, f32) {
    let area = a.x_size * a.y_size;
    let mut worst = 0f32;
    let mut cmp = |x: f32, y: f32| worst = worst.max((x - y).abs());
    let (oa, ob) = (
        a.white_ownership.as_ref().expect("ownership"),
        b.white_ownership.as_ref().expect("ownership"),
    );
    for i in 0..area {
        cmp(a.policy[i], b.policy[map(i)]);
        cmp(oa[i], ob[map(i)]);
    }
    cmp(a.policy[area], b.policy[area]);
    cmp(a.white_win_prob, b.white_win_prob);
    cmp(a.white_loss_prob, b.white_loss_prob);
    cmp(a.white_no_result_prob, b.white_no_result_prob);
    let score = (a.white_score_mean - b.white_score_mean)
        .abs()
        .max((a.white_lead - b.white_lead).abs());
    (worst, score)
}

#[test]
fn concurrent_batched_evaluation_equals_one_at_a_time() {
    tch::set_num_threads(1);
    let positions = positions();
    // Every position under two symmetries: 40 distinct requests.
    let jobs: Vec<(usize, Symmetry)> = (0..positions.len())
        .flat_map(|p| [p % 8, (p + 3) % 8].map(|s| (p, Symmetry::from_index(s).expect("symmetry"))))
        .collect();

    let single = evaluator(1);
    let want: Vec<Arc<NnOutput>> = jobs
        .iter()
        .map(|&(p, s)| single.evaluate(request(&positions[p], s)).expect("eval"))
        .collect();
    drop(single);

    let batched = evaluator(16);
    const THREADS: usize = 8;
    const ROUNDS: usize = 2;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (batched, positions, jobs, want) = (&batched, &positions, &jobs, &want);
            scope.spawn(move || {
                // Each thread walks the jobs from its own offset, so
                // concurrent batches mix positions, symmetries and sizes.
                for k in 0..ROUNDS * jobs.len() {
                    let j = (k + t * jobs.len() / THREADS) % jobs.len();
                    let (p, s) = jobs[j];
                    let got = batched.evaluate(request(&positions[p], s)).expect("eval");
                    let (d, score) = max_diff(&want[j], &got, |i| i);
                    // Batches of other sizes sum in other orders (the
                    // Winograd GEMMs block differently); measured worst:
                    // 1.3e-5 on probabilities, 6.5e-5 points on scores.
                    assert!(
                        d < 5e-5 && score < 5e-4,
                        "thread {t}, job {j}: batched differs from single by {d}, score by {score}"
                    );
                }
            });
        }
    });
    let stats = batched.stats();
    assert!(
        stats.average_batch_size() > 2.0,
        "requests were not batched: {stats:?}"
    );
}

#[test]
fn symmetric_positions_give_symmetric_outputs() {
    tch::set_num_threads(1);
    let eval = evaluator(8);
    let games = shared().join("vectors/games");
    for (file, turns) in [
        ("game_007_19x19_area.sgf", 77),
        ("game_001_13x13_area.sgf", 40),
    ] {
        let sgf = games.join(file);
        let plain = position(&sgf, turns, Symmetry::IDENTITY);
        let want = eval
            .evaluate(request(&plain, Symmetry::IDENTITY))
            .expect("eval");
        let size = plain.board.x_size();
        for sym in Symmetry::ALL {
            // The moved position, evaluated under the inverse symmetry, puts
            // exactly the original position's planes into the network.
            let moved = position(&sgf, turns, sym);
            let got = eval.evaluate(request(&moved, sym.inverse())).expect("eval");
            let (d, score) = max_diff(&want, &got, |i| {
                let (x, y) = sym.point(i % size, i / size, size, size);
                y * size + x
            });
            assert!(
                d < 1e-4 && score < 1e-3,
                "{file} under {sym:?}: differs by {d}, score by {score}"
            );
        }
    }
}
