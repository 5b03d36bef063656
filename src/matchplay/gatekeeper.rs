//! `engine gatekeeper` (KataGo's `gatekeeper`): tests each new net in the
//! test-models folder against the newest accepted net and moves it into
//! the accepted or the rejected folder.
//!
//! A model is a sub-folder holding `model.bin.gz` (the layout `engine
//! train -exportdir` writes and `engine selfplay -models-dir` reads) or a
//! bare `.bin.gz` file; the newest by modification time is tested first,
//! as KataGo's `findLatestModel` picks it. The candidate is moved with one
//! `rename` (atomic: after a crash it is still in the test folder and is
//! tested again). Rules, as KataGo's:
//! - no accepted net yet: the candidate is accepted at once;
//! - a candidate older than the newest accepted net is rejected unplayed;
//! - otherwise `numGamesPerGating` games (paired openings, alternating
//!   colours); accepted when its points (wins + draws / 2) reach
//!   `requiredCandidateWinProp` × games, stopping as soon as that is
//!   certain either way.
//!
//! Each gating appends one line to `SGF_DIR/gatekeeper_log.tsv` (columns
//! in [`LOG_HEADER`]); the games' SGFs and the match summary go to
//! `SGF_DIR/<candidate>/`.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use clap::Args;

use super::report::{summary_json, write_json};
use super::run::{io_err, load_evaluators, Logger, MatchError, MatchRunner, Tally};
use super::settings::{bot_params, BotSpec, MatchSettings};
use super::stats::Wld;

/// Flags of `engine gatekeeper` (KataGo's spelling).
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
    pub test_models_dir: PathBuf,
    /// Folder accepted nets are moved to.
    #[arg(long = "accepted-models-dir")]
    pub accepted_models_dir: PathBuf,
    /// Folder rejected nets are moved to.
    #[arg(long = "rejected-models-dir")]
    pub rejected_models_dir: PathBuf,
    /// Folder for the games' SGFs and `gatekeeper_log.tsv`.
    #[arg(long = "sgf-output-dir")]
    pub sgf_output_dir: PathBuf,
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

/// A net found in a models folder.
#[derive(Debug, Clone)]
pub struct FoundModel {
    /// Its name (the sub-folder's name, or the file's without extension).
    pub name: String,
    /// The network file.
    pub file: PathBuf,
    /// What is moved: the sub-folder, or the bare file.
    pub entry: PathBuf,
    /// Modification time of `entry`.
    pub time: SystemTime,
}

/// The newest net in `dir` (see the module doc); `None` if there is none.
pub fn newest_model(dir: &Path) -> Option<FoundModel> {
    let (name, file) = crate::selfplay::find_latest_model(dir).ok()?;
    let parent = file.parent()?;
    let same_dir = |a: &Path, b: &Path| {
        std::fs::canonicalize(a)
            .ok()
            .zip(std::fs::canonicalize(b).ok())
            .is_some_and(|(x, y)| x == y)
    };
    let entry = if same_dir(parent, dir) {
        file.clone()
    } else {
        parent.to_path_buf()
    };
    let time = std::fs::metadata(&entry)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    Some(FoundModel {
        name,
        file,
        entry,
        time,
    })
}

/// Moves `model` into `into` with one rename; returns its new path.
pub fn move_model(model: &FoundModel, into: &Path) -> Result<PathBuf, MatchError> {
    let file_name = model
        .entry
        .file_name()
        .ok_or_else(|| MatchError::Model(format!("{}: no file name", model.entry.display())))?;
    let dest = into.join(file_name);
    if dest.exists() {
        return Err(MatchError::Model(format!(
            "cannot move {} to {}: it already exists",
            model.entry.display(),
            dest.display()
        )));
    }
    std::fs::rename(&model.entry, &dest).map_err(io_err(&model.entry))?;
    // Make the rename durable in both folders.
    for d in [into, model.entry.parent().unwrap_or(Path::new("."))] {
        if let Ok(f) = std::fs::File::open(d) {
            let _ = f.sync_all();
        }
    }
    Ok(dest)
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

fn append_log(sgf_dir: &Path, line: &str) -> Result<(), MatchError> {
    let path = sgf_dir.join("gatekeeper_log.tsv");
    let new = !path.exists();
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(io_err(&path))?;
    let text = if new {
        format!("{LOG_HEADER}\n{line}\n")
    } else {
        format!("{line}\n")
    };
    // One write of the whole line: a crash leaves whole lines only.
    f.write_all(text.as_bytes()).map_err(io_err(&path))?;
    f.sync_all().map_err(io_err(&path))
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
    for d in [
        &args.test_models_dir,
        &args.accepted_models_dir,
        &args.rejected_models_dir,
        &args.sgf_output_dir,
    ] {
        std::fs::create_dir_all(d).map_err(io_err(d))?;
    }
    log.line(&format!(
        "watching {} for nets ({} games per gating, required score {required})",
        args.test_models_dir.display(),
        base.num_games_total
    ));
    loop {
        let Some(candidate) = newest_model(&args.test_models_dir) else {
            if args.quit_if_no_nets_to_test {
                log.line("no nets left to test, quitting");
                return Ok(());
            }
            std::thread::sleep(Duration::from_secs(POLL_SECONDS));
            continue;
        };
        let record = |opponent: &str, r: &Wld, accepted: bool, reason: &str| {
            append_log(
                &args.sgf_output_dir,
                &format!(
                    "{}\t{}\t{opponent}\t{}\t{}\t{}\t{}\t{}\t{required}\t{}\t{reason}",
                    now_unix(),
                    candidate.name,
                    r.games(),
                    r.wins,
                    r.losses,
                    r.draws,
                    r.points(),
                    accepted
                ),
            )
        };
        let Some(accepted) = newest_model(&args.accepted_models_dir) else {
            let dest = move_model(&candidate, &args.accepted_models_dir)?;
            log.line(&format!(
                "no accepted net yet: accepting {} at once ({})",
                candidate.name,
                dest.display()
            ));
            record("-", &Wld::default(), true, "first net")?;
            continue;
        };
        if accepted.time > candidate.time {
            let dest = move_model(&candidate, &args.rejected_models_dir)?;
            log.line(&format!(
                "rejecting {} unplayed: older than the accepted {} ({})",
                candidate.name,
                accepted.name,
                dest.display()
            ));
            record(
                &accepted.name,
                &Wld::default(),
                false,
                "older than accepted",
            )?;
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
                model: candidate.file.clone(),
                params: params.clone(),
            },
            BotSpec {
                name: names[1].clone(),
                model: accepted.file.clone(),
                params: params.clone(),
            },
        ];
        log.line(&format!(
            "testing {} against {}",
            candidate.name, accepted.name
        ));
        let evaluators = load_evaluators(
            &[candidate.file.clone(), accepted.file.clone()],
            &cfg,
            settings.num_game_threads.max(8),
            &log,
        )?;
        let sgf_dir = args.sgf_output_dir.join(&candidate.name);
        let runner = MatchRunner {
            settings: &settings,
            evaluators,
            sgf_dir: sgf_dir.clone(),
            run_name: format!("gate-{}", now_unix()),
            log: &log,
        };
        let total = settings.num_games_total;
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
        let r = result.tally.table[0][1];
        let accept = gating_decided(r.points(), r.games(), total, required)
            .unwrap_or(r.points() + 1e-10 >= required * r.games() as f64);
        write_json(
            &sgf_dir.join("match_summary.json"),
            &summary_json(
                &settings,
                &result.tally,
                None,
                result.stopped_early,
                result.seconds,
            ),
        )?;
        let into = if accept {
            &args.accepted_models_dir
        } else {
            &args.rejected_models_dir
        };
        let dest = move_model(&candidate, into)?;
        log.line(&format!(
            "candidate {} {}: score {} of {} games (W {} L {} D {}), required {required}; moved to {}",
            candidate.name,
            if accept { "accepted" } else { "rejected" },
            r.points(),
            r.games(),
            r.wins,
            r.losses,
            r.draws,
            dest.display()
        ));
        record(
            &accepted.name,
            &r,
            accept,
            if result.stopped_early {
                "decided early"
            } else {
                "all games"
            },
        )?;
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

    #[test]
    fn newest_model_and_move() {
        let root = std::env::temp_dir().join(format!("gatekeeper-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (t, a) = (root.join("t"), root.join("a"));
        std::fs::create_dir_all(t.join("net1")).unwrap();
        std::fs::create_dir_all(&a).unwrap();
        std::fs::write(t.join("net1/model.bin.gz"), b"x").unwrap();
        std::fs::write(t.join("bare.bin.gz"), b"x").unwrap();
        assert!(newest_model(&a).is_none());
        let mut found = Vec::new();
        while let Some(m) = newest_model(&t) {
            let dest = move_model(&m, &a).unwrap();
            assert!(dest.exists() && !m.entry.exists());
            found.push(m.name);
        }
        found.sort();
        assert_eq!(found, ["bare", "net1"]);
        assert!(a.join("net1/model.bin.gz").is_file());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
