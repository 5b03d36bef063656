//! The real g170 b6c96 network behind the batching evaluator, on real
//! positions from `shared/vectors/games`:
//!
//! - 8 threads firing requests at one `Evaluator` (so rows of different
//!   positions, symmetries and board sizes share batches) get the same
//!   outputs as one-at-a-time evaluation, within 5e-5 on probabilities and
//!   ownership (batching only changes the order of float sums), on both
//!   backends: libtorch with boards padded to 19x19 as KataGo, the Rust
//!   CPU backend with exact-size boards as the engine runs it (its
//!   Winograd tiling and GEMM blocking depend on the batch's rows, so
//!   every batch size takes another path through the kernels);
//! - evaluating a rotated or reflected position under the inverse symmetry
//!   gives the original position's outputs moved by the symmetry, within
//!   1e-4 (the feature encoder, the symmetry code and the network agree).
//!
//! Needs the shared data folder (see `engine::shared_data_dir`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use engine::game::sgf::parse_collection;
use engine::game::{Board, BoardHistory, Color, Loc, Move, Player, Rules};
use engine::nn::{
    nn_input_hash, BatchModel, CpuModel, EncodedInput, EvalParams, EvalRequest, Evaluator,
    EvaluatorConfig, FeatureEncoder, NnInputParams, NnOutput, Symmetry, SymmetryChoice,
    NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7,
};

fn shared() -> PathBuf {
    engine::shared_data_dir().unwrap_or_else(|m| panic!("{m}"))
}

fn g170() -> PathBuf {
    shared().join("models/g170-b6c96-s175395328-d26788732.bin.gz")
}

/// The two network backends, each set up as the engine sets it up.
#[derive(Clone, Copy, Debug)]
enum Backend {
    /// libtorch on the CPU, every board in a masked 19x19 tensor as KataGo.
    #[cfg(feature = "torch")]
    Libtorch,
    /// The pure-Rust CPU backend, exact-size boards.
    RustCpu,
}

impl Backend {
    /// `servers` server threads' models (the Rust backend's replicas
    /// share one copy of the weights, as the engine builds them).
    fn models(self, servers: usize) -> Vec<Box<dyn BatchModel>> {
        match self {
            #[cfg(feature = "torch")]
            Backend::Libtorch => {
                tch::set_num_threads(1);
                (0..servers)
                    .map(|_| -> Box<dyn BatchModel> {
                        Box::new(
                            engine::nn::Model::load(g170(), tch::Device::Cpu).expect("g170 loads"),
                        )
                    })
                    .collect()
            }
            Backend::RustCpu => {
                let first = CpuModel::load(g170()).expect("g170 loads");
                let mut models: Vec<Box<dyn BatchModel>> = (1..servers)
                    .map(|_| -> Box<dyn BatchModel> { Box::new(first.replica()) })
                    .collect();
                models.push(Box::new(first));
                models
            }
        }
    }

    /// An evaluator as the engine sets one up for this backend, with
    /// `servers` server threads.
    fn evaluator(self, max_batch_size: usize, servers: usize) -> Evaluator {
        let (pad_to_len, callers_run) = match self {
            #[cfg(feature = "torch")]
            Backend::Libtorch => (Some(19), false),
            Backend::RustCpu => (None, true),
        };
        Evaluator::with_models(
            self.models(servers),
            EvaluatorConfig {
                max_batch_size,
                max_batch_wait: Duration::from_millis(2),
                pad_to_len,
                callers_run,
                ..EvaluatorConfig::default()
            },
        )
        .expect("evaluator starts")
    }
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

/// 8 threads firing 40 distinct requests (positions under two symmetries)
/// twice each at an evaluator batching up to 16 rows get what one-at-a-time
/// evaluation gives.
fn concurrent_batched_evaluation_equals_one_at_a_time(backend: Backend, servers: usize) {
    let positions = positions();
    // Every position under two symmetries: 40 distinct requests.
    let jobs: Vec<(usize, Symmetry)> = (0..positions.len())
        .flat_map(|p| [p % 8, (p + 3) % 8].map(|s| (p, Symmetry::from_index(s).expect("symmetry"))))
        .collect();

    let single = backend.evaluator(1, 1);
    let want: Vec<Arc<NnOutput>> = jobs
        .iter()
        .map(|&(p, s)| single.evaluate(request(&positions[p], s)).expect("eval"))
        .collect();
    drop(single);

    let batched = backend.evaluator(16, servers);
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
                        "{backend:?}, thread {t}, job {j}: batched differs from single by {d}, score by {score}"
                    );
                }
            });
        }
    });
    // Two servers split the 8 callers' rows between them (and callers run
    // rows themselves when no one waits), so their batches are smaller.
    let stats = batched.stats();
    let least = if servers == 1 { 2.0 } else { 1.2 };
    assert!(
        stats.average_batch_size() > least,
        "{backend:?}: requests were not batched: {stats:?}"
    );
}

#[test]
#[cfg(feature = "torch")]
fn libtorch_batched_evaluation_equals_one_at_a_time() {
    concurrent_batched_evaluation_equals_one_at_a_time(Backend::Libtorch, 1);
}

#[test]
fn rust_cpu_batched_evaluation_equals_one_at_a_time() {
    concurrent_batched_evaluation_equals_one_at_a_time(Backend::RustCpu, 1);
}

/// Two server threads on replicas of one net (the engine's default on 2
/// cores), callers running rows themselves when no one waits: forward
/// passes run at the same time on the shared weights.
#[test]
fn rust_cpu_two_servers_equal_one_at_a_time() {
    concurrent_batched_evaluation_equals_one_at_a_time(Backend::RustCpu, 2);
}

#[test]
#[cfg(feature = "torch")]
fn libtorch_symmetric_positions_give_symmetric_outputs() {
    symmetric_outputs(Backend::Libtorch);
}

#[test]
fn rust_cpu_symmetric_positions_give_symmetric_outputs() {
    symmetric_outputs(Backend::RustCpu);
}

/// A position moved by each symmetry, evaluated under the inverse
/// symmetry, gives the original's outputs moved by it.
fn symmetric_outputs(backend: Backend) {
    let eval = backend.evaluator(8, 1);
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
                "{backend:?}, {file} under {sym:?}: differs by {d}, score by {score}"
            );
        }
    }
}
