//! Command line: `engine <gtp|analysis|serve|selfplay|shuffle|train|export|learn|match|gatekeeper|benchmark|tune|tsumego|version>`.
//!
//! Flags follow KataGo's spelling (`-model`, `-config`, `-override-config`),
//! because GUIs and scripts are configured with KataGo's command lines. clap
//! wants long flags with two dashes, so single-dash words are rewritten to
//! two dashes before parsing ([`normalize_args`]); `--model` works as well.

use std::ffi::OsString;

use clap::{Args, Parser, Subcommand};

mod reference;

pub use reference::config_reference;

/// The engine's command line.
#[derive(Debug, Parser)]
#[command(
    name = "engine",
    version,
    about = "A Go engine that does what KataGo does"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The engine's jobs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// GTP engine for Sabaki, Lizzie and other GUIs (KataGo's extensions included).
    Gtp(EngineArgs),
    /// KataGo's JSON analysis protocol over stdin/stdout.
    Analysis(AnalysisArgs),
    /// The analysis engine as a network service: HTTP (ndjson, SSE) and
    /// WebSocket, keys, quotas, fair queueing, metrics.
    Serve(Box<crate::analysis::serve::ServeArgs>),
    /// Self-play, writing KataGo-style .npz training data.
    Selfplay(crate::selfplay::SelfplayArgs),
    /// Train the network on shuffled .npz data and export it.
    Train(TrainArgs),
    /// Export a training checkpoint to KataGo's model format.
    Export(ExportArgs),
    /// Shuffle .npz training data into a window of the newest rows (KataGo's shuffle.py).
    Shuffle(Box<crate::data::ShuffleArgs>),
    /// The learning loop over a run store: shuffle, train, export, gate, publish (resumable).
    Learn(Box<LearnArgs>),
    /// Play games between bots (nets, visits, settings): Elo table, SGFs, SPRT.
    Match(Box<crate::matchplay::MatchArgs>),
    /// Test new nets against the accepted one and accept or reject them.
    Gatekeeper(Box<crate::matchplay::GatekeeperArgs>),
    /// Search a fixed set of positions and report visits/s per thread count.
    Benchmark(BenchmarkArgs),
    /// Measure this machine and write a config with the best threads,
    /// batch size and CPU backend for playing or for analysis.
    Tune(Box<crate::tune::TuneArgs>),
    /// Solve a life-and-death problem (SGF) and write the solution tree as SGF.
    Tsumego(Box<crate::solve::TsumegoArgs>),
    /// Print the version and the libtorch devices available.
    Version,
    /// Print the configuration reference (`docs/configuration.md`), made
    /// from the settings tables.
    #[command(name = "config-reference", hide = true)]
    ConfigReference,
}

/// Flags shared by the engine's jobs (owned by [`crate::setup`]).
pub use crate::setup::EngineArgs;

#[cfg(feature = "torch")]
use crate::{learn::LearnArgs, train::ExportArgs, train::TrainArgs};
#[cfg(not(feature = "torch"))]
use {
    LibtorchOnlyArgs as TrainArgs, LibtorchOnlyArgs as ExportArgs, LibtorchOnlyArgs as LearnArgs,
};

/// The flags of a command that needs libtorch (`train`, `export`,
/// `learn`) in a build without it: taken as they come, so that the command
/// is still recognised and says what it needs instead of clap's "unrecognized
/// subcommand".
#[cfg(not(feature = "torch"))]
#[derive(Debug, Args)]
pub struct LibtorchOnlyArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<OsString>,
}

/// What `engine train`, `export` and `learn` say in a build without
/// libtorch; exit code 2.
#[cfg(not(feature = "torch"))]
fn needs_libtorch(command: &str) -> i32 {
    eprintln!(
        "engine {command}: this engine was built without libtorch (cargo's --no-default-features: \
         the light CPU-only build), which engine {command} needs; build it with the default \
         features (./setup.sh cargo build --release) to use engine {command}"
    );
    2
}

/// The libtorch line of `engine version`.
fn libtorch_line() -> String {
    #[cfg(feature = "torch")]
    return format!("libtorch: cuda available = {}", tch::Cuda::is_available());
    #[cfg(not(feature = "torch"))]
    return "libtorch: not in this build (pure-Rust CPU backend only; no CUDA, no training)".into();
}

/// Flags of `engine analysis`.
#[derive(Debug, Args)]
pub struct AnalysisArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Analyze up to this many positions in parallel (instead of
    /// `numAnalysisThreads` in the config).
    #[arg(long = "analysis-threads")]
    pub analysis_threads: Option<usize>,
    /// When stdin is closed, quit quickly without waiting for queued tasks.
    #[arg(long = "quit-without-waiting")]
    pub quit_without_waiting: bool,
    /// Testing only: answer with a stand-in search that needs no network.
    #[arg(long = "stub-search", hide = true)]
    pub stub_search: bool,
    /// Analyse on a remote `engine serve` instead (its WebSocket,
    /// `ws://HOST:PORT/v1/ws`): stdin and stdout are passed through.
    #[arg(long)]
    pub remote: Option<String>,
    /// With `-remote`: a file holding the key's secret (first line).
    #[arg(long = "key-file")]
    pub key_file: Option<std::path::PathBuf>,
}

/// Flags of `engine benchmark` (KataGo's `benchmark` flags).
#[derive(Debug, Args)]
pub struct BenchmarkArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Visits per search.
    #[arg(short = 'v', long = "visits", default_value_t = crate::benchmark::DEFAULT_VISITS)]
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
    #[arg(short = 'i', long = "time", default_value_t = crate::benchmark::DEFAULT_SECONDS_PER_MOVE)]
    pub seconds_per_move: f64,
    #[command(flatten)]
    pub nn: crate::benchmark::NnBenchArgs,
}

/// Rewrites KataGo-style single-dash long flags (`-model`) to clap's
/// double-dash form (`--model`). Single letters (`-v`, `-t`, `-h`) and values
/// that are negative numbers are left alone.
pub fn normalize_args(args: Vec<OsString>) -> Vec<OsString> {
    args.into_iter()
        .enumerate()
        .map(|(i, arg)| {
            if i == 0 {
                return arg;
            }
            match arg.to_str() {
                Some(s)
                    if s.len() > 2
                        && s.starts_with('-')
                        && !s.starts_with("--")
                        && s[1..].starts_with(|c: char| c.is_ascii_alphabetic()) =>
                {
                    OsString::from(format!("-{s}"))
                }
                _ => arg,
            }
        })
        .collect()
}

/// Runs the command line and returns the process exit code.
pub fn main(args: Vec<OsString>) -> i32 {
    let cli = match Cli::try_parse_from(normalize_args(args)) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    // Only `engine gtp` and `engine analysis` evaluate a second,
    // human-style net so far.
    let human_model_unused = match &cli.command {
        Command::Benchmark(b) => b.engine.human_model.is_some().then_some("benchmark"),
        _ => None,
    };
    if let Some(command) = human_model_unused {
        eprintln!(
            "engine {command}: -human-model is not used by engine {command} yet (engine gtp and engine analysis read it)"
        );
        return 2;
    }
    match cli.command {
        Command::ConfigReference => {
            print!("{}", config_reference());
            0
        }
        Command::Version => {
            println!("engine {}", env!("CARGO_PKG_VERSION"));
            println!("{}", libtorch_line());
            println!("cpu: {}", crate::nn::cpu_info::summary());
            0
        }
        Command::Gtp(args) => crate::gtp::run(&args),
        Command::Analysis(a) => crate::analysis::run_command(&crate::analysis::AnalysisCommand {
            model: a.engine.model,
            human_model: a.engine.human_model,
            config: a.engine.config,
            override_config: a.engine.override_config,
            analysis_threads: a.analysis_threads,
            quit_without_waiting: a.quit_without_waiting,
            stub_search: a.stub_search,
            remote: a.remote,
            key_file: a.key_file,
        }),
        Command::Serve(a) => crate::analysis::serve::run(&a),
        Command::Benchmark(b) => run_benchmark(b),
        Command::Tune(t) => crate::tune::run(&t),
        Command::Tsumego(t) => crate::solve::run(&t),
        Command::Shuffle(s) => crate::data::run_shuffle(&s),
        #[cfg(feature = "torch")]
        Command::Train(a) => match crate::train::run_train(&a) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("engine train: {e}");
                1
            }
        },
        #[cfg(feature = "torch")]
        Command::Export(a) => match crate::train::run_export(&a) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("engine export: {e}");
                1
            }
        },
        #[cfg(feature = "torch")]
        Command::Learn(a) => crate::learn::run(&a),
        #[cfg(not(feature = "torch"))]
        Command::Train(_) => needs_libtorch("train"),
        #[cfg(not(feature = "torch"))]
        Command::Export(_) => needs_libtorch("export"),
        #[cfg(not(feature = "torch"))]
        Command::Learn(_) => needs_libtorch("learn"),
        Command::Selfplay(a) => crate::selfplay::run(&a),
        Command::Match(a) => crate::matchplay::run_match(&a),
        Command::Gatekeeper(a) => crate::matchplay::run_gatekeeper(&a),
    }
}

fn run_benchmark(b: BenchmarkArgs) -> i32 {
    let Some(model) = b.engine.model else {
        eprintln!("engine benchmark: -model is required");
        return 2;
    };
    let threads = match b.threads.as_deref().map(crate::benchmark::parse_threads) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            eprintln!("engine benchmark: {e}");
            return 2;
        }
    };
    crate::benchmark::run(&crate::benchmark::BenchmarkOptions {
        model,
        config: b.engine.config,
        override_config: b.engine.override_config,
        visits: b.visits,
        threads,
        board_size: b.board_size,
        num_positions: b.num_positions,
        seconds_per_move: b.seconds_per_move,
        nn: b.nn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        normalize_args(args.iter().map(OsString::from).collect())
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn katago_style_flags_become_long_flags() {
        assert_eq!(
            norm(&["engine", "gtp", "-model", "m.bin.gz", "-config", "c.toml"]),
            ["engine", "gtp", "--model", "m.bin.gz", "--config", "c.toml"]
        );
    }

    #[test]
    fn short_flags_and_negative_numbers_are_kept() {
        assert_eq!(
            norm(&["engine", "-v", "-5", "--model"]),
            ["engine", "-v", "-5", "--model"]
        );
    }
}
