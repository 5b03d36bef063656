//! `engine learn`: the learner side of KataGo's loop scripts
//! (`synchronous_loop.sh`, `shuffle_and_export_loop.sh`, `train.sh`) in one
//! resumable command over a run store (a folder or `s3://`).
//!
//! ```text
//! engine learn -store URL -config configs/learn.toml [-synchronous N] [-override-config k=v,...]
//! engine learn -store URL status
//! engine learn -store URL -config configs/learn.toml worker
//! ```
//!
//! Each generation: wait for enough new self-play rows (or, with
//! `-synchronous N`, play N games with the newest net by starting
//! `engine selfplay` itself) → shuffle the window → train to the
//! generation's sample target → export → gatekeeper → publish the accepted
//! net to `models/` (self-play workers follow it) → one ledger object,
//! written create-if-absent. Front door: [`run`] with [`LearnArgs`].
//!
//! Everything the learner knows is in the store ([`ledger`], the layout's
//! fixed names), so a restart after `kill -9` carries on; a second learner
//! on the same run refuses to start ([`lease`]). Exit codes: 0 done
//! (`maxGenerations`), 1 failure, 2 bad flags or config, 3 stopped by a
//! signal (SIGINT, SIGTERM, SIGUSR1; checkpointed), 4 another learner
//! holds the run.

mod learner;
pub mod lease;
pub mod ledger;
mod scan;
pub mod settings;
mod signals;
pub mod status;

use clap::{Args, ValueEnum};

pub use learner::{Learner, Outcome};
pub use ledger::{GenerationRecord, Ledger};
pub use settings::LearnSettings;

use crate::exit::{CommandError, CommandResult, Exit};
use crate::setup::ConfigArgs;
use crate::store::layout::Run;
use crate::store::StoreUrl;

/// What `engine learn` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LearnAction {
    /// Run the learner (the default).
    #[default]
    Run,
    /// Print what the run has done and exit.
    Status,
    /// Be a self-play worker of the run: `engine selfplay` with the
    /// config's self-play settings (plus `ENGINE_SELFPLAY_OVERRIDES`),
    /// following the run's newest net until stopped.
    Worker,
}

/// Extra self-play overrides of a worker (`engine learn ... worker`), e.g.
/// `numGameThreads=256,nnMaxBatchSize=256` on a GPU node.
pub const SELFPLAY_OVERRIDES_ENV: &str = "ENGINE_SELFPLAY_OVERRIDES";

/// Flags of `engine learn`.
#[derive(Debug, Args)]
pub struct LearnArgs {
    /// The run: a folder, `file:///path` or `s3://bucket/prefix`.
    #[arg(long)]
    pub store: String,
    /// `-config` (`configs/learn.toml`; paths in it are relative to its
    /// folder) and `-override-config`.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Play N games with the newest net per generation, by starting
    /// `engine selfplay` itself (one machine, reproducible turns).
    /// Without it, self-play workers run on their own and a generation
    /// starts every `newRowsPerGeneration` rows.
    #[arg(long)]
    pub synchronous: Option<u64>,
    /// When another learner holds the run, wait until its lease is
    /// released or goes stale instead of exiting with code 4 (a requeued
    /// job whose predecessor died without letting go).
    #[arg(long = "wait-for-lease")]
    pub wait_for_lease: bool,
    /// With `status`: print JSON (the ledger's records, the accepted and
    /// rejected nets oldest first, the lease) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// `run` (default), `status` or `worker`.
    #[arg(value_enum, default_value_t = LearnAction::Run)]
    pub action: LearnAction,
}

/// Why the learner stopped.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The config is not usable.
    #[error(transparent)]
    Settings(#[from] settings::SettingsError),
    /// A config file could not be read.
    #[error(transparent)]
    Config(#[from] Box<crate::config::ConfigError>),
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] ledger::LedgerError),
    /// The lease is held by another learner or was lost.
    #[error(transparent)]
    Lease(#[from] lease::LeaseError),
    /// Shuffling failed.
    #[error("shuffle: {0}")]
    Shuffle(#[from] crate::data::ShuffleError),
    /// A shuffled window is not usable.
    #[error(transparent)]
    Window(#[from] crate::store::layout::WindowError),
    /// Training or export failed.
    #[error("train: {0}")]
    Train(#[from] crate::train::TrainError),
    /// The gatekeeper failed.
    #[error("gatekeeper: {0}")]
    Gate(#[from] crate::play::PlayError),
    /// Anything else.
    #[error("{0}")]
    Invalid(String),
}

/// Runs `engine learn`: [`Exit::Stopped`] after a signal, [`Exit::Held`]
/// when another learner holds the run.
pub fn run(args: &LearnArgs) -> CommandResult {
    let url = StoreUrl::parse(&args.store)
        .map_err(|e| CommandError::usage(format_args!("-store: {e}")))?;
    let run = Run::open(&url).map_err(CommandError::runtime)?;
    if args.action == LearnAction::Status {
        let report = if args.json {
            status::report_json(&run)
        } else {
            status::report(&run)
        };
        let text = report.map_err(|e| CommandError::runtime(e).from_part("learn status"))?;
        print!("{text}");
        return Ok(Exit::Success);
    }
    let settings = load_settings(args).map_err(CommandError::usage)?;
    if args.action == LearnAction::Worker {
        return run_worker(&settings, args, &run);
    }
    signals::install().map_err(CommandError::runtime)?;
    let files = run.learn().map_err(CommandError::runtime)?;
    let lease = loop {
        match lease::Lease::acquire(&files, settings.lease_seconds) {
            Ok(l) => break l,
            Err(e @ lease::LeaseError::Held { .. }) if args.wait_for_lease => {
                eprintln!("learn: {e}; waiting");
                let wait = std::time::Duration::from_secs_f64(settings.lease_seconds / 6.0);
                if learner::sleep_unless_stopped(wait) {
                    return Ok(Exit::Stopped);
                }
            }
            Err(e @ lease::LeaseError::Held { .. }) => {
                eprintln!("engine learn: {e}");
                return Ok(Exit::Held);
            }
            Err(e) => return Err(CommandError::runtime(e)),
        }
    };
    eprintln!(
        "learn: run {} (lease {}), {} {} on posLen {}, {}",
        run.url(),
        lease.number(),
        settings.model_kind,
        settings.prefix(),
        settings.pos_len,
        match args.synchronous {
            Some(n) => format!("synchronous: {n} games per generation"),
            None => format!(
                "a generation every {} new rows",
                settings.new_rows_per_generation
            ),
        }
    );
    let mut learner = Learner::new(
        settings,
        args.config.file.clone(),
        run,
        lease,
        args.synchronous,
    )
    .map_err(CommandError::runtime)?;
    let result = learner.run();
    learner.release();
    match result {
        Ok(Outcome::Done) => Ok(Exit::Success),
        Ok(Outcome::Stopped) => {
            eprintln!(
                "learn: stopped by {}; run the same command to go on",
                signals::name()
            );
            Ok(Exit::Stopped)
        }
        Err(e) => Err(CommandError::runtime(e)),
    }
}

fn run_worker(settings: &LearnSettings, args: &LearnArgs, run: &Run) -> CommandResult {
    use std::os::unix::process::CommandExt;
    let failed = |e: &dyn std::fmt::Display| CommandError::runtime(e).from_part("learn worker");
    // A worker may start before the learner has published the run's first
    // net: it waits for one (as KataGo's self-play waits for a model).
    let mut said = false;
    loop {
        match run.models().and_then(|m| m.newest()) {
            Ok(Some(_)) => break,
            Ok(None) if !said => {
                eprintln!(
                    "learn worker: waiting for a net in {}",
                    run.url().join("models")
                );
                said = true;
            }
            Ok(None) => {}
            Err(e) => return Err(failed(&e)),
        }
        std::thread::sleep(std::time::Duration::from_secs_f64(
            settings.poll_seconds.min(10.0),
        ));
    }
    let extra = std::env::var(SELFPLAY_OVERRIDES_ENV).unwrap_or_default();
    let mut cmd = learner::selfplay_command(
        settings,
        args.config.file.as_deref(),
        run.url(),
        None,
        &extra,
    )
    .map_err(|e| failed(&e))?;
    eprintln!("learn worker: {cmd:?}");
    let e = cmd.exec();
    Err(failed(&format_args!("starting self-play: {e}")))
}

fn load_settings(args: &LearnArgs) -> Result<LearnSettings, LearnError> {
    let cfg = args.config.load().map_err(Box::new)?;
    let settings = LearnSettings::from_config(&cfg)?;
    if args.synchronous == Some(0) {
        return Err(LearnError::Invalid(
            "-synchronous must be at least 1".into(),
        ));
    }
    Ok(settings)
}
