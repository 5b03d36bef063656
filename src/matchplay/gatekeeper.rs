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
//! in [`LOG_HEADER`]); the games' SGFs and the match summary go to
//! `SGF_DIR/<candidate>/`.

use std::cmp::Ordering;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Args;

use super::report::{summary_json, write_json};
use super::run::{load_evaluators, Logger, MatchError, MatchRunner, Tally};
use super::settings::{bot_params, BotSpec, MatchSettings};
use super::stats::Wld;
use crate::store::layout::ModelsDir;
use crate::store::{Store, StoreUrl};

/// Flags of `engine gatekeeper` (KataGo's spelling). Folders are paths or
/// `s3://` URLs.
#[derive(Debug, Args)]
pub struct GatekeeperArgs {
    /// Gatekeeper config (`configs/gatekeeper.toml`, or KataGo's gatekeeper1.cfg).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Config overrides, `key=value[,key=value...]`; may be repeated.
    #[arg(long = "override-config")]
    pub override_config: Vec<String>,
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
    /// Also append the progress lines to this file.
    #[arg(long = "log-file")]
    pub log_file: Option<PathBuf>,
}

/// Columns of `gatekeeper_log.tsv`.
pub const LOG_HEADER: &str =
    "time_unix\tcandidate\topponent\tgames\twins\tlosses\tdraws\tscore\trequired\taccepted\treason";

/// Seconds between looks at an empty test folder.
const POLL_SECONDS: u64 = 10;

/// Runs `engine gatekeeper`; returns the exit code.
pub fn run(args: &GatekeeperArgs) -> i32 {
    match run_inner(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("engine gatekeeper: {e}");
            match e {
                MatchError::Usage(_) => 2,
                _ => 1,
            }
        }
    }
}

/// Whether a gating of `total` games is decided after `points` of the
/// candidate in `played` games (KataGo's early stop): accepted once
/// `points >= required × total`, rejected once even winning every game
/// left cannot get there. `Some(accepted)` when decided.
pub fn gating_decided(points: f64, played: u64, total: u64, required: f64) -> Option<bool> {
    let need = required * total as f64;
    if points >= need {
        Some(true)
    } else if points + (total.saturating_sub(played)) as f64 + 1e-10 < need {
        Some(false)
    } else {
        None
    }
}

/// The decision `gatekeeper_log.tsv` holds for `candidate` (its last
/// line), if any: accepted or not.
fn logged_decision(log: &Store, candidate: &str) -> Result<Option<bool>, MatchError> {
    let Some(text) = log.get_opt("gatekeeper_log.tsv")? else {
        return Ok(None);
    };
    Ok(String::from_utf8_lossy(&text)
        .lines()
        .skip(1)
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols.len() >= 10 && cols[1] == candidate).then(|| cols[9] == "true")
        })
        .last())
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn run_inner(args: &GatekeeperArgs) -> Result<(), MatchError> {
    let cfg = crate::setup::load_config(args.config.as_deref(), &args.override_config)
        .map_err(Box::new)?;
    let base = MatchSettings::from_config(&cfg, "numGamesPerGating", false)?;
    let required = match args.required_candidate_win_prop {
        Some(p) => p,
        None => cfg
            .get_f64_or("requiredCandidateWinProp", 0.5, 0.0..=1.0)
            .map_err(Box::new)?,
    };
    if !(0.0..=1.0).contains(&required) {
        return Err(MatchError::Usage(format!(
            "-required-candidate-win-prop must be in 0..1, got {required}"
        )));
    }
    let params = bot_params(&cfg, usize::MAX)?;
    let log = Logger::new("engine gatekeeper", args.log_file.as_deref())?;
    let open = |text: &str| -> Result<ModelsDir, MatchError> {
        Ok(ModelsDir::open(&StoreUrl::parse(text)?)?)
    };
    let test = open(&args.test_models_dir)?;
    let accepted_dir = open(&args.accepted_models_dir)?;
    let rejected_dir = open(&args.rejected_models_dir)?;
    let sgf_store = Store::open_str(&args.sgf_output_dir)?;
    log.line(&format!(
        "watching {} for nets ({} games per gating, required score {required})",
        test.url(),
        base.num_games_total
    ));
    loop {
        let Some(candidate) = test.newest()? else {
            if args.quit_if_no_nets_to_test {
                log.line("no nets left to test, quitting");
                return Ok(());
            }
            std::thread::sleep(Duration::from_secs(POLL_SECONDS));
            continue;
        };
        let record = |opponent: &str, r: &Wld, accepted: bool, reason: &str| {
            let line = format!(
                "{}\t{}\t{opponent}\t{}\t{}\t{}\t{}\t{}\t{required}\t{}\t{reason}",
                now_unix(),
                candidate.name,
                r.games(),
                r.wins,
                r.losses,
                r.draws,
                r.points(),
                accepted
            );
            sgf_store.append_line("gatekeeper_log.tsv", LOG_HEADER, &line)
        };
        let move_to =
            |dest: &ModelsDir| -> Result<(), MatchError> { Ok(test.move_to(&candidate, dest)?) };
        // Each decision is logged before its move: a candidate still here
        // with a logged decision was cut short by a crash. Finish the move
        // instead of gating it again.
        if let Some(accepted) = logged_decision(&sgf_store, &candidate.name)? {
            let dest = if accepted {
                &accepted_dir
            } else {
                &rejected_dir
            };
            move_to(dest)?;
            log.line(&format!(
                "{} was decided before a restart ({}): moved to {}",
                candidate.name,
                if accepted { "accepted" } else { "rejected" },
                dest.url()
            ));
            continue;
        }
        let Some(accepted) = accepted_dir.newest()? else {
            record("-", &Wld::default(), true, "first net")?;
            move_to(&accepted_dir)?;
            log.line(&format!(
                "no accepted net yet: accepting {} at once ({})",
                candidate.name,
                accepted_dir.describe(&candidate)
            ));
            continue;
        };
        if accepted.cmp_age(&candidate) == Ordering::Greater {
            record(
                &accepted.name,
                &Wld::default(),
                false,
                "older than accepted",
            )?;
            move_to(&rejected_dir)?;
            log.line(&format!(
                "rejecting {} unplayed: older than the accepted {} ({})",
                candidate.name,
                accepted.name,
                rejected_dir.describe(&candidate)
            ));
            continue;
        }
        let candidate_file = PathBuf::from(test.describe(&candidate));
        let accepted_file = PathBuf::from(accepted_dir.describe(&accepted));
        // A net that does not load cannot play: rejected, and the
        // gatekeeper goes on with the next one.
        if let Err(e) = crate::setup::read_model(&candidate_file) {
            record(&accepted.name, &Wld::default(), false, "unloadable")?;
            move_to(&rejected_dir)?;
            log.line(&format!(
                "rejecting {} unplayed: it cannot be loaded ({e}) ({})",
                candidate.name,
                rejected_dir.describe(&candidate)
            ));
            continue;
        }
        let mut settings = base.clone();
        let mut names = [candidate.name.clone(), accepted.name.clone()];
        if names[0] == names[1] {
            names[1].push_str("-accepted");
        }
        settings.bots = vec![
            BotSpec {
                name: names[0].clone(),
                model: candidate_file.clone(),
                params: params.clone(),
            },
            BotSpec {
                name: names[1].clone(),
                model: accepted_file.clone(),
                params: params.clone(),
            },
        ];
        let total = settings.num_games_total;
        let (r, stopped_early) = if total == 0 {
            (Wld::default(), false)
        } else {
            log.line(&format!(
                "testing {} against {}",
                candidate.name, accepted.name
            ));
            let evaluators = load_evaluators(
                &[candidate_file.clone(), accepted_file.clone()],
                &cfg,
                settings.num_game_threads.max(8),
                &log,
            )?;
            let sgf_dir = sgf_store.child(&candidate.name)?;
            let runner = MatchRunner {
                settings: &settings,
                evaluators,
                sgf_dir: sgf_dir.clone(),
                run_name: format!("gate-{}", now_unix()),
                log: &log,
            };
            let decided = |t: &Tally| {
                let r = t.table[0][1];
                gating_decided(r.points(), r.games(), total, required).is_some()
            };
            let on_game = |t: &Tally, _: &super::game::GameOutcome| {
                let r = t.table[0][1];
                log.line(&format!(
                    "{} vs {}: {}-{}-{} after {} of {total} games",
                    names[0],
                    names[1],
                    r.wins,
                    r.losses,
                    r.draws,
                    r.games()
                ));
            };
            let result = runner.run(&decided, &on_game)?;
            write_json(
                &sgf_dir,
                "match_summary.json",
                &summary_json(
                    &settings,
                    &result.tally,
                    None,
                    result.stopped_early,
                    result.seconds,
                ),
            )?;
            (result.tally.table[0][1], result.stopped_early)
        };
        let accept = gating_decided(r.points(), r.games(), total, required)
            .unwrap_or(r.points() + 1e-10 >= required * r.games() as f64);
        record(
            &accepted.name,
            &r,
            accept,
            if total == 0 {
                "no games"
            } else if stopped_early {
                "decided early"
            } else {
                "all games"
            },
        )?;
        let into = if accept { &accepted_dir } else { &rejected_dir };
        move_to(into)?;
        log.line(&format!(
            "candidate {} {}: score {} of {} games (W {} L {} D {}), required {required}; moved to {}",
            candidate.name,
            if accept { "accepted" } else { "rejected" },
            r.points(),
            r.games(),
            r.wins,
            r.losses,
            r.draws,
            into.describe(&candidate)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gating_stops_when_decided() {
        // 10 games, need 5 points.
        assert_eq!(gating_decided(5.0, 5, 10, 0.5), Some(true));
        assert_eq!(gating_decided(4.5, 9, 10, 0.5), None);
        // 3 points after 8 games: at most 5, still possible.
        assert_eq!(gating_decided(3.0, 8, 10, 0.5), None);
        // 2.5 after 8: at most 4.5 < 5.
        assert_eq!(gating_decided(2.5, 8, 10, 0.5), Some(false));
        assert_eq!(gating_decided(0.0, 0, 10, 0.0), Some(true));
    }
}
