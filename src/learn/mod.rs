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

use crate::setup::ConfigArgs;
use crate::store::layout::Run;
use crate::store::StoreUrl;

/// Exit code when a signal stopped the learner.
pub const EXIT_STOPPED: i32 = 3;
/// Exit code when another learner holds the run.
pub const EXIT_HELD: i32 = 4;

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

/// Runs `engine learn`; returns the exit code.
pub fn run(args: &LearnArgs) -> i32 {
    let url = match StoreUrl::parse(&args.store) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("engine learn: -store: {e}");
            return 2;
        }
    };
    let run = match Run::open(&url) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("engine learn: {e}");
            return 1;
        }
    };
    if args.action == LearnAction::Status {
        let report = if args.json {
            status::report_json(&run)
        } else {
            status::report(&run)
        };
        return match report {
            Ok(text) => {
                print!("{text}");
                0
            }
            Err(e) => {
                eprintln!("engine learn status: {e}");
                1
            }
        };
    }
    let settings = match load_settings(args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("engine learn: {e}");
            return 2;
        }
    };
    if args.action == LearnAction::Worker {
        return run_worker(&settings, args, &run);
    }
    if let Err(e) = signals::install() {
        eprintln!("engine learn: {e}");
        return 1;
    }
    let files = match run.learn() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("engine learn: {e}");
            return 1;
        }
    };
    let lease = loop {
        match lease::Lease::acquire(&files, settings.lease_seconds) {
            Ok(l) => break l,
            Err(e @ lease::LeaseError::Held { .. }) if args.wait_for_lease => {
                eprintln!("learn: {e}; waiting");
                let wait = std::time::Duration::from_secs_f64(settings.lease_seconds / 6.0);
                if learner::sleep_unless_stopped(wait) {
                    return EXIT_STOPPED;
                }
            }
            Err(e @ lease::LeaseError::Held { .. }) => {
                eprintln!("engine learn: {e}");
                return EXIT_HELD;
            }
            Err(e) => {
                eprintln!("engine learn: {e}");
                return 1;
            }
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
    let mut learner = match Learner::new(
        settings,
        args.config.file.clone(),
        run,
        lease,
        args.synchronous,
    ) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("engine learn: {e}");
            return 1;
        }
    };
    let result = learner.run();
    learner.release();
    match result {
        Ok(Outcome::Done) => 0,
        Ok(Outcome::Stopped) => {
            eprintln!(
                "learn: stopped by {}; run the same command to go on",
                signals::name()
            );
            EXIT_STOPPED
        }
        Err(e) => {
            eprintln!("engine learn: {e}");
            1
        }
    }
}

/// `engine learn ... worker`: replaces this process with the run's
/// self-play (signals then reach it directly: SIGTERM writes the finished
/// games and exits 3).
fn run_worker(settings: &LearnSettings, args: &LearnArgs, run: &Run) -> i32 {
    use std::os::unix::process::CommandExt;
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
            Err(e) => {
                eprintln!("engine learn worker: {e}");
                return 1;
            }
        }
        std::thread::sleep(std::time::Duration::from_secs_f64(
            settings.poll_seconds.min(10.0),
        ));
    }
    let extra = std::env::var(SELFPLAY_OVERRIDES_ENV).unwrap_or_default();
    let mut cmd = match learner::selfplay_command(
        settings,
        args.config.file.as_deref(),
        run.url(),
        None,
        &extra,
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("engine learn worker: {e}");
            return 1;
        }
    };
    eprintln!("learn worker: {cmd:?}");
    let e = cmd.exec();
    eprintln!("engine learn worker: starting self-play: {e}");
    1
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
