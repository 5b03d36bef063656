//! `engine gatekeeper` (KataGo's `gatekeeper`): tests each new net in the
//! test-models folder against the newest accepted net and moves it into
//! the accepted or the rejected folder.
//!
//! The folders are models folders of the run store (paths or `s3://`
//! URLs; see `crate::store::layout` for the layout and for which net is
//! newest). The newest candidate is tested first. A move is a
//! create-if-absent in the destination, then a delete from the test
//! folder: after a crash in between, the candidate is found in both and
//! the move is finished without a new gating. Rules, as KataGo's:
//! - no accepted net yet: the candidate is accepted at once;
//! - a candidate older than the newest accepted net is rejected unplayed;
//! - a candidate that cannot be loaded is rejected unplayed ("unloadable");
//! - otherwise `numGamesPerGating` games (paired openings, alternating
//!   colours); accepted when its points (wins + draws / 2) reach
//!   `requiredCandidateWinProp` × games, stopping as soon as that is
//!   certain either way (with 0 games: accepted at once).
//!
//! Each decision appends one line to `SGF_DIR/gatekeeper_log.tsv` (columns
//! in [`crate::play::matches::LOG_HEADER`]); the games' SGFs and the match summary go to
//! `SGF_DIR/<candidate>/`.

use std::time::Duration;

use clap::Args;

use super::LogFileArg;
use crate::play::matches::{GateFolders, Gatekeeper};
use crate::play::PlayError;
use crate::setup::ConfigArgs;
use crate::store::layout::ModelsDir;
use crate::store::{Store, StoreUrl};

/// Flags of `engine gatekeeper` (KataGo's spelling). Folders are paths or
/// `s3://` URLs.
#[derive(Debug, Args)]
pub struct GatekeeperArgs {
    /// `-config` (`configs/gatekeeper.toml`, or KataGo's
    /// `gatekeeper1.cfg`) and `-override-config`.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Folder of nets to test.
    #[arg(long = "test-models-dir")]
    pub test_models_dir: String,
    /// Folder accepted nets are moved to.
    #[arg(long = "accepted-models-dir")]
    pub accepted_models_dir: String,
    /// Folder rejected nets are moved to.
    #[arg(long = "rejected-models-dir")]
    pub rejected_models_dir: String,
    /// Folder for the games' SGFs and `gatekeeper_log.tsv`.
    #[arg(long = "sgf-output-dir")]
    pub sgf_output_dir: String,
    /// Exit (0) once no net is left to test instead of polling for more.
    #[arg(long = "quit-if-no-nets-to-test")]
    pub quit_if_no_nets_to_test: bool,
    /// Required score share to accept (`requiredCandidateWinProp`, default 0.5).
    #[arg(long = "required-candidate-win-prop")]
    pub required_candidate_win_prop: Option<f64>,
    /// `-log-file`.
    #[command(flatten)]
    pub log: LogFileArg,
}

/// Seconds between looks at an empty test folder.
const POLL_SECONDS: u64 = 10;

/// Runs `engine gatekeeper`.
pub fn run(args: &GatekeeperArgs) -> crate::exit::CommandResult {
    run_inner(args)
        .map(|()| crate::exit::Exit::Success)
        .map_err(|e| crate::exit::CommandError::new(e.failure(), e))
}

fn run_inner(args: &GatekeeperArgs) -> Result<(), PlayError> {
    let cfg = args.config.load().map_err(Box::new)?;
    let open = |text: &str| -> Result<ModelsDir, PlayError> {
        Ok(ModelsDir::open(&StoreUrl::parse(text)?)?)
    };
    let folders = GateFolders {
        test: open(&args.test_models_dir)?,
        accepted: open(&args.accepted_models_dir)?,
        rejected: open(&args.rejected_models_dir)?,
        log: Store::open_str(&args.sgf_output_dir)?,
    };
    let log = args.log.logger("engine gatekeeper")?;
    let test_url = folders.test.url().clone();
    let gatekeeper = Gatekeeper::new(cfg, args.required_candidate_win_prop, folders, log)?;
    for line in gatekeeper.config_key_report("engine gatekeeper") {
        gatekeeper.log().line(&line);
    }
    gatekeeper.log().line(&format!(
        "watching {test_url} for nets ({} games per gating, required score {})",
        gatekeeper.games_per_gating(),
        gatekeeper.required()
    ));
    loop {
        if gatekeeper.gate_next()?.is_some() {
            continue;
        }
        if args.quit_if_no_nets_to_test {
            gatekeeper.log().line("no nets left to test, quitting");
            return Ok(());
        }
        std::thread::sleep(Duration::from_secs(POLL_SECONDS));
    }
}
