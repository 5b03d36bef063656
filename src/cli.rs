//! Command line: `engine <gtp|analysis|serve|selfplay|shuffle|train|export|learn|match|gatekeeper|benchmark|tune|tsumego|version>`.
//!
//! Flags follow KataGo's spelling (`-model`, `-config`, `-override-config`),
//! because GUIs and scripts are configured with KataGo's command lines. clap
//! wants long flags with two dashes, so single-dash words are rewritten to
//! two dashes before parsing ([`normalize_args`]); `--model` works as well.

use std::ffi::OsString;
use std::process::ExitCode;

#[cfg(not(feature = "torch"))]
use clap::Args;
use clap::{Parser, Subcommand};

use crate::exit::{self, CommandError, CommandResult, Exit, Failure};

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
    Analysis(crate::analysis::AnalysisArgs),
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
    Benchmark(crate::benchmark::BenchmarkArgs),
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
/// libtorch (a usage failure).
#[cfg(not(feature = "torch"))]
fn needs_libtorch(command: &str) -> CommandResult {
    Err(CommandError::usage(format_args!(
        "this engine was built without libtorch (cargo's --no-default-features: \
         the light CPU-only build), which engine {command} needs; build it with the default \
         features (./setup.sh cargo build --release) to use engine {command}"
    )))
}

/// The libtorch line of `engine version`.
fn libtorch_line() -> String {
    #[cfg(feature = "torch")]
    return format!("libtorch: cuda available = {}", tch::Cuda::is_available());
    #[cfg(not(feature = "torch"))]
    return "libtorch: not in this build (pure-Rust CPU backend only; no CUDA, no training)".into();
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

/// Runs the command line and returns the process exit code (the codes are
/// mapped in [`crate::exit`]); a failure's message goes to stderr (and the
/// log file, where the command opened one) as `engine <command>: ...`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(normalize_args(args)) {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` come this way too, on stdout.
            let code = if e.use_stderr() {
                Failure::Usage.code()
            } else {
                Exit::Success.code()
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let name = cli.command.name();
    let result = run(cli.command);
    ExitCode::from(exit::code(name, result, crate::logfile::startup))
}

impl Command {
    /// The command's name, as typed (`engine <name>`).
    fn name(&self) -> &'static str {
        match self {
            Command::Gtp(_) => "gtp",
            Command::Analysis(_) => "analysis",
            Command::Serve(_) => "serve",
            Command::Selfplay(_) => "selfplay",
            Command::Train(_) => "train",
            Command::Export(_) => "export",
            Command::Shuffle(_) => "shuffle",
            Command::Learn(_) => "learn",
            Command::Match(_) => "match",
            Command::Gatekeeper(_) => "gatekeeper",
            Command::Benchmark(_) => "benchmark",
            Command::Tune(_) => "tune",
            Command::Tsumego(_) => "tsumego",
            Command::Version => "version",
            Command::ConfigReference => "config-reference",
        }
    }
}

/// Runs one command: every command is `run(&Args) -> CommandResult`.
fn run(command: Command) -> CommandResult {
    match command {
        Command::ConfigReference => {
            print!("{}", config_reference());
            Ok(Exit::Success)
        }
        Command::Version => {
            println!("engine {}", env!("CARGO_PKG_VERSION"));
            println!("{}", libtorch_line());
            println!("cpu: {}", crate::nn::cpu_info::summary());
            Ok(Exit::Success)
        }
        Command::Gtp(a) => crate::gtp::run(&a),
        Command::Analysis(a) => crate::analysis::run_command(&a),
        Command::Serve(a) => crate::analysis::serve::run(&a),
        Command::Benchmark(a) => crate::benchmark::run(&a),
        Command::Tune(a) => crate::tune::run(&a),
        Command::Tsumego(a) => crate::solve::run(&a),
        Command::Shuffle(a) => crate::data::run_shuffle(&a),
        #[cfg(feature = "torch")]
        Command::Train(a) => crate::train::run_train(&a)
            .map(|()| Exit::Success)
            .map_err(CommandError::runtime),
        #[cfg(feature = "torch")]
        Command::Export(a) => crate::train::run_export(&a)
            .map(|()| Exit::Success)
            .map_err(CommandError::runtime),
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
