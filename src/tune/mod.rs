//! `engine tune`: measures this machine and writes a config with the
//! search threads, batch size and CPU backend that serve a stated target
//! best, as KataGo's `genconfig` and `benchmark -tune` do for its own.
//!
//! # Targets
//!
//! - `play` (GTP, `engine gtp`): a game at `-time` seconds per move. Each
//!   candidate searches the benchmark's positions ([`crate::play::benchmark`],
//!   `-visits` each) and is scored by KataGo's Elo estimate for a search of
//!   that length ([`BenchmarkResult::elo_effect`]): speed gains Elo, each
//!   search thread costs a little (MCTS with many threads is weaker per
//!   visit).
//! - `analysis` (`engine analysis`, many positions): positions per second
//!   with `numAnalysisThreads` searches running at once, `-visits` each, as
//!   the analysis engine runs queries.
//!
//! # Candidates
//!
//! 1. The CPU backend (`nnCpuBackend`): the Rust backend (in fp32 by
//!    name where a reduced precision is tried beside it, since unset is
//!    `auto`); the Rust backend in the reduced precision `nnPrecision =
//!    "auto"` would pick
//!    for this net on this CPU (bf16 for a trunk of 64 channels or more
//!    where the CPU runs it, never for a narrower one: see
//!    `setup::backend::auto_cpu_precision` and docs/RESULTS.md) where the
//!    config names no precision; libtorch in a build with it; each at one
//!    search thread per core. On a GPU, or with one of these only, there
//!    is nothing to choose.
//! 2. With the better one: search threads 1, 2, 4, ... up to twice the
//!    cores (8 to 128 on a GPU) for `play`; for `analysis` one, two and
//!    four analysis threads per core with one search thread each, and one
//!    per core with two. Each with a batch of the threads shared out among
//!    the evaluator's servers (one per core on the Rust backend, so each
//!    server takes its own rows) and a batch of all of them. (On a GPU,
//!    the analysis shapes are 4x8, 8x8, 8x16 and 16x8 with a batch of all
//!    the threads; no GPU has run them yet.)
//! 3. The best three of all of these are measured again in turn
//!    `-rounds` times and the best median kept: one short run on a shared
//!    machine can be off by a tenth or more.
//!
//! Then the chosen config and the one it starts from (`-config`, else the
//! command's built-in config) are measured in turn `-rounds` times, and
//! the medians are compared.
//!
//! # The config written
//!
//! `-output` gets the starting config's text with the chosen keys set:
//! each replaces the key's line (or its commented-out line) where the text
//! has one and is appended at the end otherwise, marked "engine tune". The
//! text is read back before it is written and must give the chosen
//! values; the file is written whole or not at all (through the run
//! store's atomic writes).

mod candidates;
mod config_text;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::game::GameState;
use crate::nn::device::Precision;
use crate::nn::ModelFile;
use crate::play::benchmark::{
    benchmark_positions, run_analysis_threads, run_thread_count, BenchmarkResult,
};
use crate::search::{NnSearchEvaluator, SearchParams, SetupFor};
use crate::setup::{
    auto_cpu_precision_here, load_network_from, BuiltInConfig, CpuBackend, EngineArgs, Network,
    ANALYSIS_CONFIG, GTP_CONFIG, NUM_ANALYSIS_THREADS,
};
use candidates::{thread_candidates, Candidate, NetBackend};
use config_text::{check_written, set_keys, write_whole};

/// What the config is tuned for (`-target`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// `engine gtp` playing at `-time` seconds per move.
    Play,
    /// `engine analysis` analysing many positions: positions per second.
    Analysis,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Play => "play",
            Target::Analysis => "analysis",
        }
    }

    /// The command's built-in config (what it reads without `-config`).
    fn built_in(self) -> BuiltInConfig {
        match self {
            Target::Play => GTP_CONFIG,
            Target::Analysis => ANALYSIS_CONFIG,
        }
    }
}

/// Flags of `engine tune`.
#[derive(Debug, clap::Args)]
pub struct TuneArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// What to tune for: `play` (engine gtp at -time seconds per move) or
    /// `analysis` (engine analysis: positions per second).
    #[arg(long = "target", value_enum, default_value_t = Target::Play)]
    pub target: Target,
    /// With `-target play`: seconds per move to tune for.
    #[arg(short = 'i', long = "time", default_value_t = 5.0)]
    pub seconds_per_move: f64,
    /// Visits per searched position (default 400 for play, 200 for
    /// analysis).
    #[arg(short = 'v', long = "visits")]
    pub visits: Option<i64>,
    /// Board size of the positions (7 to 19).
    #[arg(long = "boardsize", default_value_t = 19)]
    pub board_size: usize,
    /// Positions per measurement (default 10 for play, 24 for analysis).
    #[arg(short = 'n', long = "numpositions")]
    pub num_positions: Option<usize>,
    /// Rounds of the closing comparison (chosen config against the
    /// starting one, in turn).
    #[arg(long = "rounds", default_value_t = 2)]
    pub rounds: usize,
    /// The config file to write (`.toml`, or KataGo's `.cfg` format when
    /// `-config` is a `.cfg` file).
    #[arg(long = "output")]
    pub output: PathBuf,
}

/// What the tuner works with: the model, the starting config, the
/// positions.
struct Bench<'a> {
    target: Target,
    file: ModelFile,
    model: &'a Path,
    base: Config,
    visits: i64,
    seconds_per_move: f64,
    positions: Vec<GameState>,
    threads_key: &'static str,
}

/// One measurement.
#[derive(Debug, Clone, Copy)]
struct Measured {
    result: BenchmarkResult,
    score: f64,
}

impl Bench<'_> {
    /// The starting config with `candidate`'s keys.
    fn config_for(&self, candidate: &Candidate) -> Config {
        let mut cfg = self.base.clone();
        for (k, v) in candidate.settings(self.target, self.threads_key) {
            cfg.set(k, v.toml());
        }
        cfg
    }

    /// The network as `cfg` builds it, with the command's default batch.
    fn network(&self, cfg: &Config, default_batch: usize) -> Result<Network, String> {
        load_network_from(self.file.clone(), self.model, cfg, default_batch)
            .map_err(|e| e.to_string())
    }

    /// The search parameters of `cfg` for the target, `visits` a search.
    fn params(&self, cfg: &Config) -> Result<SearchParams, String> {
        let settings = match self.target {
            Target::Play => crate::setup::search_settings(cfg),
            Target::Analysis => crate::setup::analysis_search_settings(cfg),
        };
        let setup = match self.target {
            Target::Play => SetupFor::Gtp,
            Target::Analysis => SetupFor::Analysis,
        };
        let mut p =
            SearchParams::from_overrides(setup, settings.iter().map(|(k, v)| (k.as_str(), v)))
                .map_err(|e| format!("search settings in the config: {e}"))?;
        p.max_visits = self.visits;
        p.max_playouts = self.visits;
        p.max_time = 1e20;
        Ok(p)
    }

    /// Searches the positions with `net` as `analysis_threads` searches
    /// of `search_threads` threads each, and scores the speed.
    fn run(
        &self,
        net: &Arc<NnSearchEvaluator>,
        params: &SearchParams,
        analysis_threads: usize,
        search_threads: usize,
    ) -> Result<Measured, String> {
        let result = match self.target {
            Target::Play => run_thread_count(net, params, &self.positions, search_threads)?,
            Target::Analysis => {
                let mut p = params.clone();
                p.num_threads = search_threads.min(i32::MAX as usize) as i32;
                run_analysis_threads(net, &p, &self.positions, analysis_threads)?
            }
        };
        Ok(Measured {
            result,
            score: self.score(&result),
        })
    }

    fn score(&self, r: &BenchmarkResult) -> f64 {
        match self.target {
            Target::Play => r.elo_effect(self.seconds_per_move),
            Target::Analysis => positions_per_second(r),
        }
    }

    fn measure(&self, candidate: &Candidate) -> Result<Measured, String> {
        let cfg = self.config_for(candidate);
        let net = self.network(&cfg, candidate.max_batch)?;
        let params = self.params(&cfg)?;
        self.run(
            &net.evaluator,
            &params,
            candidate.analysis_threads,
            candidate.search_threads,
        )
    }

    /// The starting config as the command would run it: its threads, or
    /// the command's defaults for the keys it does not set.
    fn measure_base(&self) -> Result<(Measured, Candidate), String> {
        let cfg = &self.base;
        let params = self.params(cfg)?;
        let (analysis_threads, search_threads, default_batch) = match self.target {
            Target::Play => (1, None, 16),
            Target::Analysis => {
                // engine analysis: numAnalysisThreads, else its default
                // for the machine.
                let a = match NUM_ANALYSIS_THREADS.read(cfg).map_err(|e| e.to_string())? {
                    Some(n) => n as usize,
                    None => {
                        crate::setup::default_analysis_threads(cfg).map_err(|e| e.to_string())?
                    }
                };
                let s = params.num_threads.max(1) as usize;
                (a, Some(s), (a * s).max(8))
            }
        };
        let net = self.network(cfg, default_batch)?;
        // engine gtp: numSearchThreads, else its default for the machine.
        let search_threads = search_threads.unwrap_or(if cfg.contains("numSearchThreads") {
            params.num_threads.max(1) as usize
        } else {
            net.default_search_threads
        });
        let shape = Candidate {
            backend: None,
            analysis_threads,
            search_threads,
            max_batch: net.max_batch_size,
        };
        let m = self.run(&net.evaluator, &params, analysis_threads, search_threads)?;
        Ok((m, shape))
    }

    /// One result line.
    fn line(&self, label: &str, m: &Measured, baseline: Option<&Measured>) -> String {
        let r = &m.result;
        let head = format!(
            "{label}: visits/s = {:.1}, positions/s = {:.2}, avgBatchSize = {:.2}",
            r.total_visits as f64 / r.total_seconds.max(1e-9),
            positions_per_second(r),
            r.avg_batch_size()
        );
        match (self.target, baseline) {
            (Target::Play, Some(b)) => format!("{head}, Elo {:+.0}", m.score - b.score),
            (Target::Play, None) => format!("{head}, Elo baseline"),
            (Target::Analysis, _) => head,
        }
    }
}

fn positions_per_second(r: &BenchmarkResult) -> f64 {
    r.positions_searched as f64 / r.total_seconds.max(1e-9)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// Runs `engine tune`.
pub fn run(args: &TuneArgs) -> crate::exit::CommandResult {
    run_inner(args)
        .map(|()| crate::exit::Exit::Success)
        .map_err(crate::exit::CommandError::runtime)
}

/// The starting config's text and whether it is TOML.
fn base_text(args: &TuneArgs) -> Result<(String, bool, String), String> {
    match &args.engine.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            Ok((text, is_toml(path), path.display().to_string()))
        }
        None => {
            let b = args.target.built_in();
            Ok((b.text.to_string(), true, b.name.to_string()))
        }
    }
}

fn is_toml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// Checks the flags before anything is measured.
fn check_args(args: &TuneArgs, toml_base: bool) -> Result<(), String> {
    if args.engine.human_model.is_some() {
        return Err("-human-model is not used by engine tune".to_string());
    }
    if !crate::play::benchmark::BOARD_SIZES.contains(&args.board_size) {
        return Err(format!("-boardsize {}: expected 7 to 19", args.board_size));
    }
    if !(args.seconds_per_move > 0.0 && args.seconds_per_move <= 1e6) {
        return Err(format!(
            "-time {}: expected seconds per move above 0",
            args.seconds_per_move
        ));
    }
    if let Some(v) = args.visits {
        if !(2..1_000_000_000).contains(&v) {
            return Err(format!("-visits {v}: expected 2 or more"));
        }
    }
    if args.num_positions.is_some_and(|n| n == 0 || n > 100_000) {
        return Err("-numpositions: expected 1 to 100000".to_string());
    }
    if args.rounds > 100 {
        return Err(format!("-rounds {}: expected at most 100", args.rounds));
    }
    if is_toml(&args.output) != toml_base {
        return Err(format!(
            "-output {}: the config it starts from is {}, so the output must be a {} file",
            args.output.display(),
            if toml_base {
                "TOML"
            } else {
                "in KataGo's .cfg format"
            },
            if toml_base { ".toml" } else { ".cfg" }
        ));
    }
    Ok(())
}

fn run_inner(args: &TuneArgs) -> Result<(), String> {
    let (text, toml_base, base_name) = base_text(args)?;
    check_args(args, toml_base)?;
    let startup =
        crate::setup::start(&args.engine, args.target.built_in()).map_err(|e| e.to_string())?;
    let model = startup.model_path().map_err(|e| e.to_string())?;
    let file = crate::setup::read_model(&model).map_err(|e| e.to_string())?;
    let target = args.target;
    let visits = args.visits.unwrap_or(match target {
        Target::Play => 400,
        Target::Analysis => 200,
    });
    let n = args.num_positions.unwrap_or(match target {
        Target::Play => 10,
        Target::Analysis => 24,
    });
    // An analysis config may name the search threads either way (KataGo's
    // alias); keep the spelling it has.
    let threads_key = match target {
        Target::Play => "numSearchThreads",
        Target::Analysis if startup.config.contains("numSearchThreads") => "numSearchThreads",
        Target::Analysis => "numSearchThreadsPerAnalysisThread",
    };
    let mut bench = Bench {
        target,
        file,
        model: &model,
        base: startup.config.clone(),
        visits,
        seconds_per_move: args.seconds_per_move,
        positions: Vec::new(),
        threads_key,
    };
    let first = bench.network(&bench.base, 16)?;
    bench.positions = benchmark_positions(&first.evaluator, args.board_size, n)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let gpu = first.on_cuda;
    println!("engine tune: target {}", target_line(args, visits));
    println!("Model {} ({})", first.model_name, first.device);
    println!(
        "Machine: {}, {cores} cores{}",
        crate::nn::cpu_info::summary(),
        crate::setup::total_memory_bytes()
            .map(|b| format!(", {:.1} GiB of memory", b as f64 / (1u64 << 30) as f64))
            .unwrap_or_default()
    );
    println!(
        "{} positions of a {s}x{s} game, {visits} visits each",
        bench.positions.len(),
        s = args.board_size
    );
    drop(first);

    // Stage 1: the CPU backend.
    let mut measured: Vec<(Candidate, Measured)> = Vec::new();
    let backend = choose_backend(&bench, gpu, cores, &mut measured)?;

    // Stage 2: threads and batch with that backend.
    let servers = {
        let probe = bench.config_for(&Candidate {
            backend,
            analysis_threads: 1,
            search_threads: 1,
            max_batch: 1,
        });
        match backend {
            Some(b) if b.cpu_backend == "rust" => {
                crate::setup::rust_servers(&probe, cores).map_err(|e| e.to_string())?
            }
            _ => crate::setup::NN_SERVER_THREADS
                .read(&probe)
                .map_err(|e| e.to_string())?
                .unwrap_or(1) as usize,
        }
    };
    println!();
    println!(
        "Threads and batch size ({}, {servers} evaluator server{}):",
        backend.map_or("the configured backend".to_string(), |b| {
            format!(
                "{}{}",
                b.cpu_backend,
                b.precision.map(|p| format!(" {p}")).unwrap_or_default()
            )
        }),
        if servers == 1 { "" } else { "s" }
    );
    for c in thread_candidates(target, backend, servers, cores, gpu) {
        let m = match measured.iter().find(|(d, _)| *d == c) {
            Some((_, m)) => *m,
            None => bench.measure(&c)?,
        };
        println!(
            "{}",
            bench.line(
                &c.label(target, threads_key),
                &m,
                measured.first().map(|x| &x.1)
            )
        );
        measured.push((c, m));
    }
    let chosen = pick_among_finalists(&bench, &measured, args.rounds)?;
    println!();
    println!("Chosen: {}", chosen.label(target, threads_key));

    // The config, checked, then written whole.
    let mut header = vec![format!(
        "Written by engine tune for {} from {base_name}, on {}, {cores} cores.",
        target_line(args, visits),
        crate::nn::cpu_info::summary()
    )];
    header.push(format!(
        "Chosen: {}. Run engine tune again on another machine.",
        chosen.label(target, threads_key)
    ));
    let settings = chosen.settings(target, threads_key);
    let tuned_text = set_keys(&text, toml_base, &settings, &header);
    check_written(&tuned_text, toml_base, &settings)?;
    write_whole(&args.output, tuned_text.as_bytes())?;
    println!("Wrote {}", args.output.display());

    if args.rounds > 0 {
        compare_with_start(&bench, &chosen, args, &base_name)?;
    }
    Ok(())
}

/// The reduced precision stage 1 tries beside the config's: the one
/// `nnPrecision = "auto"` would run this net in on this CPU (bf16 for a
/// wide trunk where it runs, none for a narrow one, which it costs strength),
/// and none where the config names a precision.
fn reduced_precision(bench: &Bench<'_>) -> Option<Precision> {
    if bench.base.contains("nnPrecision") {
        return None;
    }
    let (precision, _why) = auto_cpu_precision_here(CpuBackend::Rust, &bench.file);
    (precision != Precision::F32).then_some(precision)
}

/// Stage 1: the CPU backends this build has, each at one search thread
/// per core (nothing to choose on a GPU or without libtorch); their
/// measurements go into `measured`.
fn choose_backend(
    bench: &Bench<'_>,
    gpu: bool,
    cores: usize,
    measured: &mut Vec<(Candidate, Measured)>,
) -> Result<Option<NetBackend>, String> {
    let backends: Vec<Option<NetBackend>> = if gpu {
        vec![None]
    } else {
        let reduced = reduced_precision(bench);
        [
            // Beside a reduced precision, fp32 by name: unset is `auto`,
            // which would run the reduced one again.
            Some(match reduced {
                Some(_) => NetBackend::rust_in(Precision::F32),
                None => NetBackend::RUST,
            }),
            reduced.map(NetBackend::rust_in),
            cfg!(feature = "torch").then_some(NetBackend::LIBTORCH),
        ]
        .into_iter()
        .flatten()
        .map(Some)
        .collect()
    };
    if backends.len() == 1 {
        return Ok(backends[0]);
    }
    let (analysis_threads, search_threads) = match bench.target {
        Target::Play => (1, cores),
        Target::Analysis => (cores, 1),
    };
    println!();
    println!("The CPU backend, at one search thread per core:");
    let mut best: Option<(Option<NetBackend>, f64)> = None;
    for b in backends {
        let c = Candidate {
            backend: b,
            analysis_threads,
            search_threads,
            max_batch: analysis_threads * search_threads,
        };
        let m = bench.measure(&c)?;
        println!(
            "{}",
            bench.line(
                &c.label(bench.target, bench.threads_key),
                &m,
                measured.first().map(|x| &x.1)
            )
        );
        if best.is_none_or(|(_, s)| m.score > s) {
            best = Some((b, m.score));
        }
        measured.push((c, m));
    }
    Ok(best.and_then(|(b, _)| b))
}

/// Measures the written config (`chosen`) against the starting one in
/// turn, `args.rounds` times, and prints each run and the medians.
fn compare_with_start(
    bench: &Bench<'_>,
    chosen: &Candidate,
    args: &TuneArgs,
    base_name: &str,
) -> Result<(), String> {
    let (target, threads_key) = (bench.target, bench.threads_key);
    println!();
    println!(
        "The written config against {base_name}, {} rounds in turn:",
        args.rounds
    );
    let mut base_scores = Vec::new();
    let mut tuned_scores = Vec::new();
    let mut base_results = Vec::new();
    let mut tuned_results = Vec::new();
    let mut base_shape = None;
    for _ in 0..args.rounds {
        let (b, shape) = bench.measure_base()?;
        println!(
            "{}",
            bench.line(
                &format!("starting config ({})", shape.label(target, threads_key)),
                &b,
                None
            )
        );
        let t = bench.measure(chosen)?;
        println!("{}", bench.line("written config", &t, Some(&b)));
        base_scores.push(b.score);
        tuned_scores.push(t.score);
        base_results.push(b.result);
        tuned_results.push(t.result);
        base_shape = Some(shape);
    }
    let vps = |rs: &[BenchmarkResult]| {
        median(
            rs.iter()
                .map(|r| r.total_visits as f64 / r.total_seconds.max(1e-9))
                .collect(),
        )
    };
    let pps = |rs: &[BenchmarkResult]| median(rs.iter().map(positions_per_second).collect());
    println!();
    if let Some(shape) = base_shape {
        println!("Starting config: {}", shape.label(target, threads_key));
    }
    match target {
        Target::Play => println!(
            "Medians: visits/s {:.1} written against {:.1} starting ({:.2}x); Elo estimate \
             at {} s per move {:+.0}",
            vps(&tuned_results),
            vps(&base_results),
            vps(&tuned_results) / vps(&base_results),
            args.seconds_per_move,
            median(tuned_scores) - median(base_scores)
        ),
        Target::Analysis => println!(
            "Medians: positions/s {:.2} written against {:.2} starting ({:.2}x); visits/s \
             {:.1} against {:.1}",
            pps(&tuned_results),
            pps(&base_results),
            pps(&tuned_results) / pps(&base_results),
            vps(&tuned_results),
            vps(&base_results)
        ),
    }
    Ok(())
}

/// Candidates measured again, in turn, before one is chosen: the best
/// [`FINALISTS`] of the first measurements (a single short run on a shared
/// machine can be off by a tenth or more).
const FINALISTS: usize = 3;

/// Measures the best few of `measured` `rounds` more times in turn and
/// returns the one with the best median score (all its measurements).
fn pick_among_finalists(
    bench: &Bench<'_>,
    measured: &[(Candidate, Measured)],
    rounds: usize,
) -> Result<Candidate, String> {
    let mut ranked: Vec<&(Candidate, Measured)> = measured.iter().collect();
    ranked.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
    let mut finalists: Vec<(Candidate, Vec<f64>)> = Vec::new();
    for (c, m) in ranked {
        match finalists.iter().position(|(d, _)| d == c) {
            Some(i) => finalists[i].1.push(m.score),
            None if finalists.len() < FINALISTS => finalists.push((c.clone(), vec![m.score])),
            None => {}
        }
    }
    if finalists.len() > 1 && rounds > 0 {
        println!();
        println!(
            "The best {} measured again, {rounds} rounds in turn:",
            finalists.len()
        );
        let baseline = measured.first().map(|x| &x.1);
        for _ in 0..rounds {
            for (c, scores) in finalists.iter_mut() {
                let m = bench.measure(c)?;
                println!(
                    "{}",
                    bench.line(&c.label(bench.target, bench.threads_key), &m, baseline)
                );
                scores.push(m.score);
            }
        }
    }
    finalists
        .into_iter()
        .max_by(|a, b| median(a.1.clone()).total_cmp(&median(b.1.clone())))
        .map(|(c, _)| c)
        .ok_or_else(|| "nothing was measured".to_string())
}

fn target_line(args: &TuneArgs, visits: i64) -> String {
    match args.target {
        Target::Play => format!(
            "{} at {} s per move ({}x{}, {visits} visits a position)",
            args.target.name(),
            args.seconds_per_move,
            args.board_size,
            args.board_size
        ),
        Target::Analysis => format!(
            "{} ({}x{}, {visits} visits a position)",
            args.target.name(),
            args.board_size,
            args.board_size
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }
}
