//! `engine analysis`: reads the config, builds the backend, runs the
//! server on stdin/stdout.

use std::io::{self, BufReader};
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{Config, ConfigError};

use super::position::ReplayOptions;
use super::query::ParseOptions;
use super::response::ReportPerspective;
use super::server::{serve, ServerOptions};
use super::stub::StubBackend;

/// Command-line settings of `engine analysis`.
#[derive(Debug, Clone, Default)]
pub struct AnalysisCommand {
    /// Network file.
    pub model: Option<PathBuf>,
    /// Config file.
    pub config: Option<PathBuf>,
    /// `-override-config` arguments.
    pub override_config: Vec<String>,
    /// `-analysis-threads N` (instead of `numAnalysisThreads`).
    pub analysis_threads: Option<usize>,
    /// `-quit-without-waiting`.
    pub quit_without_waiting: bool,
    /// Hidden test switch: answer with the stub search instead of a network.
    pub stub_search: bool,
}

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(Box<ConfigError>),
    #[error("{0}")]
    Invalid(String),
    #[error("reading stdin: {0}")]
    Io(#[from] io::Error),
}

impl From<ConfigError> for StartError {
    fn from(e: ConfigError) -> Self {
        StartError::Config(Box::new(e))
    }
}

/// Server options from the config (KataGo's keys and defaults).
pub fn server_options(cfg: &Config, cmd: &AnalysisCommand) -> Result<ServerOptions, StartError> {
    let num_analysis_threads = match cmd.analysis_threads {
        Some(_) if cfg.contains("numAnalysisThreads") => {
            return Err(StartError::Invalid(format!(
                "When specifying numAnalysisThreads in the config ({}), it is redundant and \
                 disallowed to also specify it via -analysis-threads",
                cfg.file_name()
            )))
        }
        Some(n) if (1..=16384).contains(&n) => n,
        Some(n) => {
            return Err(StartError::Invalid(format!(
                "Invalid value for numAnalysisThreads: {n}"
            )))
        }
        None => cfg.get_i64_or("numAnalysisThreads", 1, 1..=16384)? as usize,
    };
    let perspective = if cfg.contains("reportAnalysisWinratesAs") {
        cfg.get_parsed::<ReportPerspective>(
            "reportAnalysisWinratesAs",
            "BLACK, WHITE or SIDETOMOVE",
        )?
    } else {
        ReportPerspective::SideToMove
    };
    Ok(ServerOptions {
        num_analysis_threads,
        quit_without_waiting: cmd.quit_without_waiting,
        parse: ParseOptions {
            warn_unused_fields: cfg.get_bool_or("warnUnusedFields", true)?,
        },
        analysis_pv_len: cfg.get_i64_or("analysisPVLen", 15, 1..=100)? as usize,
        perspective,
        replay: ReplayOptions {
            assume_multiple_starting_black_moves_are_handicap: cfg
                .get_bool_or("assumeMultipleStartingBlackMovesAreHandicap", true)?,
            prevent_encore: cfg.get_bool_or("preventCleanupPhase", true)?,
        },
    })
}

/// Loads the config named on the command line (empty if none) with the
/// overrides applied.
pub fn load_config(cmd: &AnalysisCommand) -> Result<Config, ConfigError> {
    let mut cfg = match &cmd.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    for o in &cmd.override_config {
        cfg.apply_overrides(o)?;
    }
    Ok(cfg)
}

/// Runs `engine analysis`; returns the exit code.
pub fn run(cmd: &AnalysisCommand) -> i32 {
    match run_inner(cmd) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("engine analysis: {e}");
            1
        }
    }
}

fn run_inner(cmd: &AnalysisCommand) -> Result<(), StartError> {
    let cfg = load_config(cmd)?;
    let opts = server_options(&cfg, cmd)?;
    if !cmd.stub_search {
        return Err(StartError::Invalid(
            "the analysis engine's search is not wired to a network yet".to_string(),
        ));
    }
    let backend = Arc::new(StubBackend {
        default_max_visits: cfg.get_i64_or("maxVisits", 500, 1..=1 << 50)? as u64,
    });
    eprintln!("Started, ready to begin handling requests");
    serve(backend, opts, BufReader::new(io::stdin()), io::stdout())?;
    Ok(())
}
