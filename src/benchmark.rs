//! `engine benchmark`: searches a fixed set of positions with each of
//! several search thread counts and reports visits per second, as
//! `katago benchmark` does (same flags, same output lines, same Elo-based
//! recommendation).
//!
//! # The positions
//!
//! KataGo samples positions from a built-in game record. We have no game
//! records of our own in the binary, so the positions come from a game the
//! loaded network plays against itself from its raw policy
//! ([`crate::play::benchmark`], shared with GTP's `kata-benchmark`). The
//! set depends only on the network (and on the backend's arithmetic being
//! the same from run to run).
//!
//! # Differences from KataGo
//!
//! - Without `-t` KataGo tunes the thread count by ternary search; we test
//!   1, 2, 4, ... up to twice the CPU count (at most 32) instead.
//! - On the CPU, KataGo's Eigen backend runs one single-threaded server
//!   per search thread; ours keeps one batching server with libtorch
//!   threads on all cores (see [`crate::setup::cpu_threads`]).
//!
//! # `-nn`: the network alone
//!
//! `engine benchmark -nn -batch 64,256,1024` measures the network without
//! a search: one model of the evaluator the config would build (device,
//! precision and layout as any command picks them), fed full batches of a
//! fixed position, for `-seconds` per batch size after a warm-up (batches
//! 1, 8 and 32 on the CPU, 64, 256 and 1024 on a GPU unless `-batch`
//! says). It prints evaluations/s, milliseconds per batch and the
//! convolution arithmetic achieved, and the fraction of a peak: on a GPU
//! whose fp16 tensor-core peak is known
//! ([`crate::nn::device::fp16_tensor_peak_tflops`]) that one, on a CPU with
//! AVX2/FMA the measured fp32 FMA peak of the cores the model computes on
//! ([`crate::nn::cpu_info`]), with the CPU and its SIMD path; the last line
//! is the same as JSON, for scripts.

use std::path::Path;
use std::time::Instant;

use crate::config::{Config, Key, Row};
use crate::exit::{CommandError, CommandResult, Exit};
use crate::nn::ModelFile;
use crate::play::benchmark::{
    benchmark_positions, run_thread_count, BenchmarkResult, ELO_GAIN_PER_DOUBLING,
};
use crate::search::{SearchParams, SetupFor};
use crate::setup::{load_network, EngineArgs, NN_MAX_BATCH_SIZE};

/// KataGo's `defaultMaxVisits` for GPU builds.
pub const DEFAULT_VISITS: i64 = 800;
/// KataGo's `defaultSecondsPerGameMove`.
pub const DEFAULT_SECONDS_PER_MOVE: f64 = 5.0;
pub use crate::play::benchmark::BOARD_SIZES;

/// `defaultBoardSize`: the board size without `-boardsize`.
const BOARD_SIZE: Key<i64> =
    Key::int("defaultBoardSize", 19, 2..=19).doc("Board size to test without -boardsize.");

/// The configuration reference's rows of the benchmark's own keys.
pub fn config_rows() -> Vec<Row> {
    vec![BOARD_SIZE.setting().row()]
}

/// Flags of `engine benchmark` (KataGo's `benchmark` flags).
#[derive(Debug, Clone, clap::Args)]
pub struct BenchmarkArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Visits per search.
    #[arg(short = 'v', long = "visits", default_value_t = DEFAULT_VISITS)]
    pub visits: i64,
    /// Search thread counts to test, comma-separated, e.g. `1,2,4`.
    #[arg(short = 't', long = "threads")]
    pub threads: Option<String>,
    /// Positions to search per thread count.
    #[arg(short = 'n', long = "numpositions", default_value_t = 10)]
    pub num_positions: usize,
    /// Board size (7 to 19); default the config's `defaultBoardSize`, else 19.
    #[arg(long = "boardsize")]
    pub board_size: Option<usize>,
    /// Typical seconds per move, for the thread recommendation.
    #[arg(short = 'i', long = "time", default_value_t = DEFAULT_SECONDS_PER_MOVE)]
    pub seconds_per_move: f64,
    #[command(flatten)]
    pub nn: NnBenchArgs,
}

/// Flags of `engine benchmark -nn` (part of the benchmark's flags).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct NnBenchArgs {
    /// Measure the network alone (no search): evaluations/s at each batch
    /// size of `-batch`, on the device and precision the config picks.
    #[arg(long = "nn")]
    pub nn: bool,
    /// With `-nn`: batch sizes, comma-separated (default 1,8,32 on the
    /// CPU, 64,256,1024 on a GPU).
    #[arg(long = "batch")]
    pub batch: Option<String>,
    /// With `-nn`: seconds to measure each batch size (after a warm-up).
    #[arg(long = "seconds", default_value_t = 5.0)]
    pub seconds: f64,
}

impl Default for NnBenchArgs {
    fn default() -> Self {
        NnBenchArgs {
            nn: false,
            batch: None,
            seconds: 5.0,
        }
    }
}

/// KataGo's `printEloComparison`: which thread count to use.
pub fn elo_comparison(results: &[BenchmarkResult], seconds_per_move: f64) -> String {
    use std::fmt::Write;
    let mut best = 0;
    for (i, r) in results.iter().enumerate() {
        if r.elo_effect(seconds_per_move) > results[best].elo_effect(seconds_per_move) {
            best = i;
        }
    }
    let mut out = String::new();
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Based on some test data, each speed doubling gains perhaps ~{ELO_GAIN_PER_DOUBLING} Elo \
         by searching deeper."
    );
    let _ = writeln!(
        out,
        "Based on some test data, each thread costs perhaps 7 Elo if using 800 visits, and 2 Elo \
         if using 5000 visits (by making MCTS worse)."
    );
    let _ = writeln!(
        out,
        "So APPROXIMATELY based on this benchmark, if you intend to do a {seconds_per_move} second \
         search: "
    );
    let Some(first) = results.first() else {
        return out;
    };
    for (i, r) in results.iter().enumerate() {
        let rec = if i == best { " (recommended)" } else { "" };
        if i == 0 {
            let _ = writeln!(
                out,
                "numSearchThreads = {:2}: (baseline){rec}",
                r.num_threads
            );
        } else {
            let elo = r.elo_effect(seconds_per_move) - first.elo_effect(seconds_per_move);
            let _ = writeln!(
                out,
                "numSearchThreads = {:2}: {elo:+5.0} Elo{rec}",
                r.num_threads
            );
        }
    }
    out
}

/// Parses `-t`: comma-separated thread counts, each 1..=4096.
pub fn parse_threads(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for piece in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match piece.parse::<usize>() {
            Ok(n) if (1..=4096).contains(&n) => out.push(n),
            _ => return Err(format!("Number of threads to use: invalid value: {piece}")),
        }
    }
    if out.is_empty() {
        return Err("Must specify at least one valid value for -threads".to_string());
    }
    Ok(out)
}

/// The config's search parameters for the benchmark: KataGo's benchmark
/// defaults, the config's settings, then the visit limit and no time limit.
fn benchmark_params(cfg: &Config, visits: i64) -> Result<SearchParams, String> {
    let settings = crate::setup::search_settings(cfg);
    let settings = settings.iter().map(|(k, v)| (k.as_str(), v));
    let mut p =
        SearchParams::from_overrides(SetupFor::Benchmark, settings).map_err(|e| e.to_string())?;
    p.max_visits = visits;
    p.max_playouts = visits;
    p.max_time = 1e20;
    p.search_factor_after_one_pass = 1.0;
    p.search_factor_after_two_pass = 1.0;
    Ok(p)
}

fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `engine benchmark`, printing as KataGo does.
pub fn run(args: &BenchmarkArgs) -> CommandResult {
    // Only `engine gtp` and `engine analysis` evaluate a second,
    // human-style net so far.
    if args.engine.human_model.is_some() {
        return Err(CommandError::usage(
            "-human-model is not used by engine benchmark yet (engine gtp and engine analysis read it)",
        ));
    }
    let Some(model) = &args.engine.model else {
        return Err(CommandError::usage("-model is required"));
    };
    let threads = match args.threads.as_deref().map(parse_threads) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => return Err(CommandError::usage(e)),
    };
    let result = if args.nn.nn {
        run_nn(args, model)
    } else {
        run_inner(args, model, threads)
    };
    result
        .map(|()| Exit::Success)
        .map_err(CommandError::runtime)
}

fn run_inner(
    opts: &BenchmarkArgs,
    model: &Path,
    threads: Option<Vec<usize>>,
) -> Result<(), String> {
    if opts.visits <= 1 || opts.visits >= 1_000_000_000 {
        return Err(format!(
            "Number of visits to use: invalid value {}",
            opts.visits
        ));
    }
    if opts.num_positions == 0 || opts.num_positions > 100_000 {
        return Err(format!(
            "Number of positions per game to use: invalid value {}",
            opts.num_positions
        ));
    }
    if !(opts.seconds_per_move > 0.0 && opts.seconds_per_move <= 1e6) {
        return Err(format!(
            "Number of seconds per game move to assume: invalid value {}",
            opts.seconds_per_move
        ));
    }
    let mut cfg =
        crate::setup::load_config(opts.engine.config.as_deref(), &opts.engine.override_config)
            .map_err(|e| e.to_string())?;
    let size = match opts.board_size {
        Some(s) => s,
        None => BOARD_SIZE.read(&cfg).map_err(|e| e.to_string())? as usize,
    };
    if !BOARD_SIZES.contains(&size) {
        return Err(format!("Board size to test: invalid value {size}"));
    }
    let threads = match threads {
        Some(t) => t,
        None => {
            let max = (2 * cpu_count()).clamp(1, 32);
            std::iter::successors(Some(1usize), |&t| Some(t * 2))
                .take_while(|&t| t <= max)
                .collect()
        }
    };
    let max_threads = threads.iter().copied().max().unwrap_or(1);
    let hardcoded_batch = NN_MAX_BATCH_SIZE.read(&cfg).map_err(|e| e.to_string())?;
    if let Some(given) = &hardcoded_batch {
        println!(
            "WARNING: Your nnMaxBatchSize is hardcoded to {given}, ignoring it and assuming it is \
             >= threads, for this benchmark."
        );
    }
    // KataGo's benchmark sizes the batch for the most threads tested.
    cfg.set(
        "nnMaxBatchSize",
        toml::Value::Integer(8.max(max_threads.div_ceil(4) * 4) as i64),
    );
    let params = benchmark_params(&cfg, opts.visits)?;
    eprintln!("Loading model and initializing benchmark...");
    let net = load_network(model, &cfg, 8).map_err(|e| e.to_string())?;
    for line in crate::setup::config_key_report(&cfg, "engine benchmark") {
        eprintln!("{line}");
    }
    eprintln!("Testing with default positions for board size: {size}");
    let positions = benchmark_positions(&net.evaluator, size, opts.num_positions)?;
    eprintln!("Loaded config {}", cfg.file_name());
    eprintln!("Loaded model {}", model.display());
    println!();
    println!("Testing using {} visits.", opts.visits);
    if opts.visits == DEFAULT_VISITS {
        println!(
            "  If you have a good GPU, you might increase this using \"-visits N\" to get more \
             accurate results."
        );
        println!(
            "  If you have a weak GPU and this is taking forever, you can decrease it instead to \
             finish the benchmark faster."
        );
    }
    println!();
    println!("Network: {} on {}", net.model_name, net.device);
    println!();
    if cfg.contains("numSearchThreads") {
        println!(
            "Your GTP config is currently set to use numSearchThreads = {}",
            params.num_threads
        );
    } else {
        println!(
            "Your GTP config does not set numSearchThreads; engine gtp uses {} on this machine",
            net.default_search_threads
        );
    }
    if threads.len() > 1 {
        println!("Testing different numbers of threads (board size {size}x{size}): ");
    } else {
        println!("Testing (board size {size}x{size}): ");
    }
    let mut results: Vec<BenchmarkResult> = Vec::new();
    for &t in &threads {
        let r = run_thread_count(&net.evaluator, &params, &positions, t)?;
        println!(
            "{}",
            r.line_with_elo(results.first(), opts.seconds_per_move)
        );
        results.push(r);
    }
    println!();
    if results.len() > 1 {
        print!("{}", elo_comparison(&results, opts.seconds_per_move));
        println!(
            "If you care about performance, you may want to edit numSearchThreads in {} based on \
             the above results!",
            cfg.file_name()
        );
        if let Some(given) = &hardcoded_batch {
            println!(
                "WARNING: Your nnMaxBatchSize is hardcoded to {given}, recommend deleting it and \
                 using the default (which this benchmark assumes)"
            );
        }
        println!(
            "If you intend to do much longer searches, configure the seconds per game move you \
             expect with the '-time' flag and benchmark again."
        );
        println!(
            "If you intend to do short or fixed-visit searches, use lower numSearchThreads for \
             better strength, high threads will weaken strength."
        );
        println!();
    }
    Ok(())
}

/// Multiply-adds of one evaluation on an `h x w` board, counted as two
/// operations each: every convolution at every point, plus the matmuls
/// (the work the net defines, whatever algorithm runs it).
pub fn flops_per_eval(file: &ModelFile, h: usize, w: usize) -> f64 {
    2.0 * file.multiply_adds(h, w, &|_| true, true)
}

/// One batch size's result of `engine benchmark -nn`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NnBenchResult {
    pub batch: usize,
    pub batches: u64,
    pub seconds: f64,
    pub evals_per_second: f64,
    pub ms_per_batch: f64,
    pub tflops: f64,
    /// Achieved / the GPU's fp16 tensor-core peak (half precisions on a
    /// GPU in the table only).
    pub peak_ratio: Option<f64>,
    /// Achieved / the fp32 FMA peak of the CPU cores the model ran on
    /// (CPU with AVX2/FMA only), the work counted as direct convolutions.
    pub cpu_peak_ratio: Option<f64>,
}

/// A batch of `n` copies of a mid-game-like position on a `size` board
/// (stones, liberties and komi planes set), every row a whole board, for
/// a net of `c` planes and `g_len` globals (its model version's inputs).
fn nn_bench_batch(n: usize, size: usize, (c, g_len): (usize, usize)) -> crate::nn::InputBatch {
    let mut b = crate::nn::InputBatch::default();
    let hw = size * size;
    b.reset(n, (c, g_len, 0), size, size);
    for r in 0..n {
        let row = &mut b.spatial[r * c * hw..(r + 1) * c * hw];
        for i in 0..hw {
            row[i] = 1.0;
            let k = (i * 7 + r) % 11;
            if k < 3 {
                row[(1 + k % 2) * hw + i] = 1.0;
                row[(3 + k) * hw + i] = 1.0;
            }
        }
        let g = &mut b.global[r * g_len..(r + 1) * g_len];
        g[5] = -0.5;
        g[6] = 1.0;
        b.mask[r * hw..(r + 1) * hw].fill(1.0);
    }
    b.include_ownership = true;
    b
}

/// The fp32 FMA peak of the `threads` cores a CPU model computes on
/// (each measured as one core's, [`crate::nn::cpu_info`]), printed with
/// the CPU and its SIMD path; `None` without AVX2/FMA.
fn cpu_peak(threads: usize) -> Option<f64> {
    use crate::nn::cpu_info;
    println!("CPU: {}", cpu_info::summary());
    let per_core = cpu_info::fma_peak_gflops_per_core()?;
    let cores = threads.min(std::thread::available_parallelism().map_or(1, |n| n.get()));
    let total = per_core * cores as f64;
    println!(
        "fp32 FMA peak: {per_core:.1} GFLOP/s per core measured (12 chains of {} FMAs), \
         x {cores} core{} = {total:.1} GFLOP/s; the % below counts the work as direct \
         convolutions (Winograd does it with fewer multiply-adds, so it can pass 100%)",
        if cpu_info::SimdPath::detect() == cpu_info::SimdPath::Avx512 {
            "8- or 16-wide"
        } else {
            "8-wide"
        },
        if cores == 1 { "" } else { "s" }
    );
    Some(total)
}

/// `engine benchmark -nn` (see the module docs).
fn run_nn(opts: &BenchmarkArgs, model: &Path) -> Result<(), String> {
    if !(opts.nn.seconds > 0.0 && opts.nn.seconds <= 3600.0) {
        return Err(format!("-seconds: invalid value {}", opts.nn.seconds));
    }
    let cfg =
        crate::setup::load_config(opts.engine.config.as_deref(), &opts.engine.override_config)
            .map_err(|e| e.to_string())?;
    let size = opts.board_size.unwrap_or(19);
    if !(2..=crate::nn::MAX_BOARD_LEN).contains(&size) {
        return Err(format!("Board size to test: invalid value {size}"));
    }
    if crate::setup::is_missing_local_file(model) {
        return Err(format!("model file not found: {}", model.display()));
    }
    let file = crate::setup::read_model(model).map_err(|e| e.to_string())?;
    let backend = crate::setup::build_backend(&file, &cfg).map_err(|e| e.to_string())?;
    for line in crate::setup::config_key_report(&cfg, "engine benchmark -nn") {
        eprintln!("{line}");
    }
    let desc = backend.description.clone();
    let on_cpu = backend.plan.cuda_devices.is_none();
    let batch_list = opts
        .nn
        .batch
        .clone()
        .unwrap_or_else(|| if on_cpu { "1,8,32" } else { "64,256,1024" }.to_string());
    let batches =
        parse_threads(&batch_list).map_err(|_| format!("-batch: invalid list {batch_list}"))?;
    let mut models = backend.models;
    let model = models.first_mut().ok_or("no model")?;
    let flops = flops_per_eval(&file, size, size);
    let peak = desc
        .gpu
        .as_ref()
        .filter(|_| desc.precision != crate::nn::device::Precision::F32)
        .and_then(|g| crate::nn::device::fp16_tensor_peak_tflops(&g.name));
    println!("Network: {} on {}", file.name, desc.line());
    println!(
        "{size}x{size}, {:.2} GFLOP per evaluation (2 x multiply-adds of the convolutions and matmuls)",
        flops / 1e9
    );
    if let Some((p, label)) = peak {
        println!("fp16 tensor-core peak of the {label}: {p} TFLOP/s (dense)");
    }
    let cpu_peak_gflops = if on_cpu {
        cpu_peak(desc.threads_per_server.unwrap_or(1))
    } else {
        None
    };
    let mut results = Vec::new();
    for &n in &batches {
        let inputs = (file.num_input_channels, file.num_input_global_channels);
        let batch = nn_bench_batch(n, size, inputs);
        let mut run = || -> Result<(), String> {
            let out = model.forward(&batch).map_err(|e| e.to_string())?;
            out.check(n, batch.y_len, batch.x_len)
                .map_err(|e| format!("batch {n}: {e}"))?;
            let bad = !out.value_logits.iter().all(|v| v.is_finite())
                || out.policy.iter().any(|v| !v.is_finite());
            if bad {
                return Err(format!("batch {n}: outputs are not finite"));
            }
            Ok(())
        };
        // Warm-up: cuDNN's autotuning and the allocator's first blocks.
        for _ in 0..2 {
            run()?;
        }
        let start = Instant::now();
        let mut count = 0u64;
        while count < 3 || start.elapsed().as_secs_f64() < opts.nn.seconds {
            run()?;
            count += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        let eps = (count as f64 * n as f64) / secs;
        let tflops = eps * flops / 1e12;
        let r = NnBenchResult {
            batch: n,
            batches: count,
            seconds: secs,
            evals_per_second: eps,
            ms_per_batch: secs * 1e3 / count as f64,
            tflops,
            peak_ratio: peak.map(|(p, _)| tflops / p),
            cpu_peak_ratio: cpu_peak_gflops.map(|p| tflops * 1e3 / p),
        };
        println!(
            "batch {:5}: {:10.1} evals/s, {:8.2} ms/batch, {:8.3} TFLOP/s{} ({} batches, {:.1} s)",
            n,
            r.evals_per_second,
            r.ms_per_batch,
            r.tflops,
            r.peak_ratio
                .map(|x| (x, "fp16"))
                .or(r.cpu_peak_ratio.map(|x| (x, "FMA")))
                .map(|(x, peak)| format!(" = {:.1}% of the {peak} peak", 100.0 * x))
                .unwrap_or_default(),
            r.batches,
            r.seconds
        );
        results.push(r);
    }
    let json = serde_json::json!({
        "nn_benchmark": {
            "model": file.name,
            "device": desc.line(),
            "gpu": desc.gpu.as_ref().map(|g| g.name.clone()),
            "precision": desc.precision.name(),
            "board_size": size,
            "gflops_per_eval": flops / 1e9,
            "peak_tflops": peak.map(|(p, _)| p),
            "cpu": on_cpu.then(crate::nn::cpu_info::summary),
            "cpu_fma_peak_gflops": cpu_peak_gflops,
            "results": results,
        }
    });
    println!("{json}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(threads: usize, visits: i64, secs: f64) -> BenchmarkResult {
        BenchmarkResult {
            num_threads: threads,
            total_positions: 10,
            positions_searched: 10,
            total_visits: visits,
            total_seconds: secs,
            nn_evals: 4601,
            nn_batches: 2402,
        }
    }

    #[test]
    fn line_matches_katago_format() {
        let r = result(2, 8000, 15.625);
        assert_eq!(
            r.line_with_elo(None, 5.0),
            "numSearchThreads =  2: 10 / 10 positions, visits/s = 512.00 nnEvals/s = 294.46 \
             nnBatches/s = 153.73 avgBatchSize = 1.92 (15.6 secs) (EloDiff baseline)"
        );
        let faster = result(4, 16000, 15.625);
        let line = faster.line_with_elo(Some(&r), 5.0);
        // Twice the speed: +250 Elo, minus the cost of two more threads.
        let expected = 250.0 - (4.0 * 7.0 * (1600.0f64 / (800.0 + 5120.0)).powf(0.85))
            + 2.0 * 7.0 * (1600.0f64 / (800.0 + 2560.0)).powf(0.85);
        assert!(
            line.ends_with(&format!("(EloDiff {:+.0})", expected)),
            "{line}"
        );
    }

    #[test]
    fn recommendation_picks_the_best_elo() {
        let rs = [
            result(1, 1000, 10.0),
            result(2, 1900, 10.0),
            result(4, 2000, 10.0),
        ];
        // 1.9x and 2x the speed; the 4-thread cost is smaller than the
        // gain of the last 5% of speed here.
        let elo = |r: &BenchmarkResult| r.elo_effect(5.0) - rs[0].elo_effect(5.0);
        let text = elo_comparison(&rs, 5.0);
        assert!(
            text.contains("numSearchThreads =  1: (baseline)\n"),
            "{text}"
        );
        let two = format!("numSearchThreads =  2: {:+5.0} Elo\n", elo(&rs[1]));
        let four = format!(
            "numSearchThreads =  4: {:+5.0} Elo (recommended)\n",
            elo(&rs[2])
        );
        assert!(text.contains(&two) && text.contains(&four), "{text}");
        let slow = [result(1, 1000, 10.0), result(2, 1010, 10.0)];
        assert!(elo_comparison(&slow, 5.0).contains("1: (baseline) (recommended)"));
    }

    #[test]
    fn thread_lists_parse_like_katago() {
        assert_eq!(parse_threads("1, 2,,4").unwrap(), vec![1, 2, 4]);
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("x").is_err());
        assert!(parse_threads(" , ").is_err());
    }
}
