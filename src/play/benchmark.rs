//! Search speed on a fixed set of positions, as KataGo's
//! `PlayUtils::benchmarkSearchOnPositionsAndPrint`: shared by `engine
//! benchmark` and GTP's `kata-benchmark`.
//!
//! The positions come from a game the loaded network plays against itself
//! from its raw policy: always the most likely legal move other than a
//! pass, identity symmetry, Tromp-Taylor rules with komi 7.5, for
//! `MOVES_PER_POINT` moves per board point (or until the net prefers to
//! pass); `n` positions are taken evenly along that game, the empty board
//! first. KataGo samples them from a built-in game record instead.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use crate::game::{Board, BoardHistory, GameState, Move, Player, Rules};
use crate::search::{
    EvalOptions, NnEvalSettings, NnSearchEvaluator, PositionEvaluator, RunOptions, Search,
    SearchParams, SearchState,
};

/// Smallest and largest board sizes the benchmark positions are made for
/// (KataGo's `MIN/MAX_BENCHMARK_SGF_DATA_SIZE`).
pub const BOARD_SIZES: std::ops::RangeInclusive<usize> = 7..=19;

/// Length of the generated game, in moves per board point.
const MOVES_PER_POINT: f64 = 0.6;
/// From KataGo's test matches with g170: Elo gained per doubling of speed.
pub const ELO_GAIN_PER_DOUBLING: f64 = 250.0;

/// The outcome of one thread count (KataGo's `PlayUtils::BenchmarkResults`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BenchmarkResult {
    pub num_threads: usize,
    pub total_positions: usize,
    pub positions_searched: usize,
    pub total_visits: i64,
    pub total_seconds: f64,
    /// Rows the network evaluated (cache hits not counted).
    pub nn_evals: u64,
    pub nn_batches: u64,
}

impl BenchmarkResult {
    /// Mean rows per forward pass.
    pub fn avg_batch_size(&self) -> f64 {
        if self.nn_batches == 0 {
            0.0
        } else {
            self.nn_evals as f64 / self.nn_batches as f64
        }
    }

    fn per_second(&self, x: f64) -> f64 {
        x / self.total_seconds
    }

    /// KataGo's `toString`: the result line without the Elo column.
    pub fn line(&self) -> String {
        format!(
            "numSearchThreads = {:2}: {} / {} positions, visits/s = {:.2} nnEvals/s = {:.2} \
             nnBatches/s = {:.2} avgBatchSize = {:.2} ({:.1} secs)",
            self.num_threads,
            self.positions_searched,
            self.total_positions,
            self.per_second(self.total_visits as f64),
            self.per_second(self.nn_evals as f64),
            self.per_second(self.nn_batches as f64),
            self.avg_batch_size(),
            self.total_seconds
        )
    }

    /// KataGo's `toStringWithElo`: the line plus the Elo difference to `baseline`.
    pub fn line_with_elo(
        &self,
        baseline: Option<&BenchmarkResult>,
        seconds_per_move: f64,
    ) -> String {
        match baseline {
            None => format!("{} (EloDiff baseline)", self.line()),
            Some(b) => format!(
                "{} (EloDiff {:+.0})",
                self.line(),
                self.elo_effect(seconds_per_move) - b.elo_effect(seconds_per_move)
            ),
        }
    }

    /// KataGo's ad-hoc `computeEloEffect`: Elo from speed minus the cost of
    /// many threads at the visits a move of `seconds_per_move` gets.
    pub fn elo_effect(&self, seconds_per_move: f64) -> f64 {
        let visits_per_second = self.per_second(self.total_visits as f64);
        let gain = ELO_GAIN_PER_DOUBLING * visits_per_second.log2();
        let visits_per_move = visits_per_second * seconds_per_move;
        let cost = self.num_threads as f64 * 7.0 * (1600.0 / (800.0 + visits_per_move)).powf(0.85);
        gain - cost
    }
}

/// The benchmark positions (see the module docs): `n` states taken evenly
/// along a raw-policy game of the network on a `size`x`size` board.
pub fn benchmark_positions(
    net: &NnSearchEvaluator,
    size: usize,
    n: usize,
) -> Result<Vec<GameState>, String> {
    let board = Board::new(size, size).map_err(|e| e.to_string())?;
    let mut rules = Rules::tromp_taylor();
    rules.komi = 7.5;
    let start = GameState::new(
        board.clone(),
        BoardHistory::new(&board, Player::Black, rules),
        Player::Black,
    );
    // Identity symmetry whatever the config's nnRandomize says.
    let fixed = NnSearchEvaluator::new(
        net.evaluator().clone(),
        NnEvalSettings {
            randomize_symmetry: false,
            ..*net.settings()
        },
    );
    let max_moves = (MOVES_PER_POINT * (size * size) as f64).round() as usize;
    let mut game = vec![start.clone()];
    let mut state = start;
    let opts = EvalOptions::default();
    while game.len() <= max_moves && state.outcome().is_none() {
        let nn = fixed.evaluate(&state, &opts).map_err(|e| e.to_string())?;
        let pass = size * size;
        let best = nn.policy[..pass]
            .iter()
            .enumerate()
            .filter(|(_, &p)| p >= 0.0)
            .fold(None, |best: Option<(usize, f32)>, (i, &p)| match best {
                Some((_, b)) if b >= p => best,
                _ => Some((i, p)),
            });
        let Some((i, p)) = best else { break };
        if p < nn.policy[pass] {
            break;
        }
        let mv = Move::Play(crate::game::Loc::from_xy(i % size, i / size, size));
        if !state.is_legal(mv) {
            break;
        }
        state.play(mv);
        game.push(state.clone());
    }
    // Searching the same state twice would hit the (cleared) cache no
    // differently, but keep the positions distinct where the game allows.
    let len = game.len();
    Ok((0..n.max(1))
        .map(|i| game[(i * len / n.max(1)).min(len - 1)].clone())
        .collect())
}

/// GTP's `kata-benchmark VISITS`: the genmove parameters `params` with
/// `visits` visits (no playout or time limit), on the benchmark's 10
/// positions of a `size`x`size` board, with the parameters' search
/// threads; the NN cache is cleared before each position, as in the
/// benchmark.
pub fn benchmark_gtp(
    net: &Arc<NnSearchEvaluator>,
    params: &SearchParams,
    size: usize,
    visits: i64,
) -> Result<BenchmarkResult, String> {
    let positions = benchmark_positions(net, size, GTP_BENCHMARK_POSITIONS)?;
    let mut p = params.clone();
    p.max_visits = visits;
    p.max_playouts = 1 << 50;
    p.max_time = 1e20;
    let threads = usize::try_from(p.num_threads.max(1)).unwrap_or(1);
    run_thread_count(net, &p, &positions, threads)
}

/// Positions `kata-benchmark` searches (KataGo's).
const GTP_BENCHMARK_POSITIONS: usize = 10;

/// A 5-visit, one-thread search of `state` before a measurement, so that
/// the network's first calls (buffers, caches) are not timed.
fn warm_up(
    net: &Arc<NnSearchEvaluator>,
    params: &SearchParams,
    state: &GameState,
) -> Result<(), String> {
    let mut warm = params.clone();
    warm.max_visits = 5;
    warm.max_playouts = 5;
    warm.num_threads = 1;
    let mut s = Search::new(warm, net.clone(), state.clone(), 1);
    s.run(&RunOptions::default()).map_err(|e| e.to_string())?;
    Ok(())
}

/// Searches every position once with `threads` search threads (NN cache
/// cleared before each, after a warm-up), as KataGo's benchmark does.
pub fn run_thread_count(
    net: &Arc<NnSearchEvaluator>,
    params: &SearchParams,
    positions: &[GameState],
    threads: usize,
) -> Result<BenchmarkResult, String> {
    let mut p = params.clone();
    p.num_threads = threads.min(i32::MAX as usize) as i32;
    let evaluator = net.evaluator();
    let mut result = BenchmarkResult {
        num_threads: threads,
        total_positions: positions.len(),
        ..BenchmarkResult::default()
    };
    // Warm up this thread count (KataGo re-warms after changing Eigen threads).
    warm_up(net, &p, &positions[0])?;
    evaluator.clear_cache();
    evaluator.clear_stats();
    let mut search = Search::new(p, net.clone(), positions[0].clone(), 0x5eed_0001);
    let progress = std::io::stderr().is_terminal();
    for state in positions {
        if progress {
            eprint!("\r{}      ", not_done_line(&result));
        }
        search.set_position(state.clone());
        evaluator.clear_cache();
        let start = Instant::now();
        search
            .run(&RunOptions::default())
            .map_err(|e| e.to_string())?;
        result.total_seconds += start.elapsed().as_secs_f64();
        result.positions_searched += 1;
        result.total_visits += search.view().root_values().visits;
    }
    if progress {
        eprint!("\r");
    }
    let stats = evaluator.stats();
    result.nn_evals = stats.rows;
    result.nn_batches = stats.batches;
    Ok(result)
}

/// Analysis throughput: `analysis_threads` searches at once, as the
/// analysis engine's threads run queries, each taking the next of
/// `positions` until none is left (the NN cache cleared once, after a
/// warm-up). `num_threads` of the result is the search threads in all;
/// `total_seconds` the wall time.
pub fn run_analysis_threads(
    net: &Arc<NnSearchEvaluator>,
    params: &SearchParams,
    positions: &[GameState],
    analysis_threads: usize,
) -> Result<BenchmarkResult, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let Some(first) = positions.first() else {
        return Err("no positions to search".to_string());
    };
    let analysis_threads = analysis_threads.max(1);
    let evaluator = net.evaluator();
    warm_up(net, params, first)?;
    evaluator.clear_cache();
    evaluator.clear_stats();
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    // Per analysis thread: (positions searched, visits).
    let per_thread: Vec<Result<(usize, i64), String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..analysis_threads)
            .map(|i| {
                let next = &next;
                scope.spawn(move || {
                    let mut search: Option<Search<GameState, NnSearchEvaluator>> = None;
                    let (mut searched, mut visits) = (0usize, 0i64);
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(state) = positions.get(k) else { break };
                        let s = match &mut search {
                            Some(s) => {
                                s.set_position(state.clone());
                                s
                            }
                            None => search.insert(Search::new(
                                params.clone(),
                                net.clone(),
                                state.clone(),
                                0x5eed_0001 + i as u64,
                            )),
                        };
                        s.run(&RunOptions::default()).map_err(|e| e.to_string())?;
                        searched += 1;
                        visits += s.view().root_values().visits;
                    }
                    Ok((searched, visits))
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("an analysis thread panicked".to_string()))
            })
            .collect()
    });
    let total_seconds = start.elapsed().as_secs_f64();
    let mut result = BenchmarkResult {
        num_threads: analysis_threads * usize::try_from(params.num_threads.max(1)).unwrap_or(1),
        total_positions: positions.len(),
        total_seconds,
        ..BenchmarkResult::default()
    };
    for r in per_thread {
        let (searched, visits) = r?;
        result.positions_searched += searched;
        result.total_visits += visits;
    }
    let stats = evaluator.stats();
    result.nn_evals = stats.rows;
    result.nn_batches = stats.batches;
    Ok(result)
}

/// KataGo's `toStringNotDone` (progress, on stderr here when it is a terminal).
fn not_done_line(r: &BenchmarkResult) -> String {
    let vps = if r.total_seconds > 0.0 {
        r.total_visits as f64 / r.total_seconds
    } else {
        0.0
    };
    format!(
        "numSearchThreads = {:2}: {} / {} positions, visits/s = {:.2} ({:.1} secs)",
        r.num_threads, r.positions_searched, r.total_positions, vps, r.total_seconds
    )
}
