//! Gating: KataGo's gatekeeper over a run's models folders, one candidate
//! at a time ([`Gatekeeper::gate_next`]). `engine gatekeeper` polls it;
//! `engine learn` calls it after each export. The rules are in
//! [`Gatekeeper::gate_next`]; each decision appends one line to
//! `gatekeeper_log.tsv` (columns in [`LOG_HEADER`]) before the net moves.

use std::cmp::Ordering;
use std::path::PathBuf;
use std::time::SystemTime;

use super::report::write_summary;
use super::runner::{load_evaluators, Logger, MatchRunner, Tally};
use super::settings::{bot_params, BotSpec, MatchSettings};
use crate::config::Config;
use crate::play::stats::Wld;
use crate::play::PlayError;
use crate::store::layout::{ModelEntry, ModelsDir};
use crate::store::Store;

/// Columns of `gatekeeper_log.tsv`.
pub const LOG_HEADER: &str =
    "time_unix\tcandidate\topponent\tgames\twins\tlosses\tdraws\tscore\trequired\taccepted\treason";

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

/// What the gatekeeper decided for one candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct GateDecision {
    /// The candidate net's name.
    pub candidate: String,
    /// The accepted net it played (`-` when there was none).
    pub opponent: String,
    /// The candidate's games: wins, losses, draws.
    pub result: Wld,
    /// The score share it needed.
    pub required: f64,
    /// Whether it was accepted (moved to the accepted folder).
    pub accepted: bool,
    /// Why: `first net`, `older than accepted`, `unloadable`, `no games`,
    /// `decided early`, `all games`.
    pub reason: String,
}

impl GateDecision {
    /// Its `gatekeeper_log.tsv` line (without the time column).
    fn log_columns(&self) -> String {
        let r = &self.result;
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.candidate,
            self.opponent,
            r.games(),
            r.wins,
            r.losses,
            r.draws,
            r.points(),
            self.required,
            self.accepted,
            self.reason
        )
    }

    /// The decision a `gatekeeper_log.tsv` line (all columns) holds.
    fn from_log_line(line: &str) -> Option<GateDecision> {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 10 {
            return None;
        }
        Some(GateDecision {
            candidate: cols[1].to_string(),
            opponent: cols[2].to_string(),
            result: Wld {
                wins: cols[4].parse().ok()?,
                losses: cols[5].parse().ok()?,
                draws: cols[6].parse().ok()?,
            },
            required: cols[8].parse().ok()?,
            accepted: cols[9] == "true",
            reason: cols.get(10).unwrap_or(&"").to_string(),
        })
    }
}

/// The decision `gatekeeper_log.tsv` of `log` holds for `candidate` (its
/// last line), if any.
fn logged_decision(log: &Store, candidate: &str) -> Result<Option<GateDecision>, PlayError> {
    let Some(text) = log.get_opt("gatekeeper_log.tsv")? else {
        return Ok(None);
    };
    Ok(String::from_utf8_lossy(&text)
        .lines()
        .skip(1)
        .filter_map(GateDecision::from_log_line)
        .filter(|d| d.candidate == candidate)
        .last())
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Where a gatekeeper reads and moves nets, and where it logs.
#[derive(Debug, Clone)]
pub struct GateFolders {
    /// Nets to test.
    pub test: ModelsDir,
    /// Accepted nets (the newest is the opponent).
    pub accepted: ModelsDir,
    /// Rejected nets.
    pub rejected: ModelsDir,
    /// The games' SGFs, match summaries and `gatekeeper_log.tsv`.
    pub log: Store,
}

/// What a gatekeeper reads from its config: the match settings of each
/// gating, the search of both bots and the score share a candidate needs.
#[derive(Debug, Clone)]
pub struct GateSettings {
    /// Match settings (`numGamesPerGating` games; no bots: they are nets
    /// found on disk).
    pub base: MatchSettings,
    /// Both bots' search.
    pub params: crate::search::SearchParams,
    /// The score share a candidate needs (`requiredCandidateWinProp`).
    pub required: f64,
}

impl GateSettings {
    /// Reads the settings of `cfg` (KataGo's gatekeeper keys;
    /// `requiredCandidateWinProp` unless `required` is given).
    pub fn from_config(cfg: &Config, required: Option<f64>) -> Result<GateSettings, PlayError> {
        let base = MatchSettings::from_config(cfg, "numGamesPerGating", false)?;
        let required = match required {
            Some(p) => p,
            None => super::settings::REQUIRED_WIN_PROP
                .read(cfg)
                .map_err(Box::new)?,
        };
        if !(0.0..=1.0).contains(&required) {
            return Err(PlayError::Usage(format!(
                "-required-candidate-win-prop must be in 0..1, got {required}"
            )));
        }
        let params = bot_params(cfg, usize::MAX)?;
        Ok(GateSettings {
            base,
            params,
            required,
        })
    }
}

/// KataGo's gatekeeper over a run's folders: [`Gatekeeper::gate_next`]
/// decides one candidate at a time.
pub struct Gatekeeper {
    cfg: Config,
    base: MatchSettings,
    params: crate::search::SearchParams,
    required: f64,
    folders: GateFolders,
    log: Logger,
}

impl Gatekeeper {
    /// A gatekeeper with the settings of `cfg` (KataGo's gatekeeper keys;
    /// `requiredCandidateWinProp` unless `required` is given), logging
    /// progress lines through `log`.
    pub fn new(
        cfg: Config,
        required: Option<f64>,
        folders: GateFolders,
        log: Logger,
    ) -> Result<Gatekeeper, PlayError> {
        // The nets are loaded when candidates arrive: check their keys now.
        crate::setup::check_network_keys(&cfg)
            .map_err(|e| PlayError::Usage(format!("{}: {e}", cfg.file_name())))?;
        let GateSettings {
            base,
            params,
            required,
        } = GateSettings::from_config(&cfg, required)?;
        Ok(Gatekeeper {
            cfg,
            base,
            params,
            required,
            folders,
            log,
        })
    }

    /// Games per gating.
    pub fn games_per_gating(&self) -> u64 {
        self.base.num_games_total
    }

    /// The score share a candidate needs.
    pub fn required(&self) -> f64 {
        self.required
    }

    /// The start-up report on the config's keys
    /// ([`crate::setup::config_key_report`]), under `command`'s name.
    pub fn config_key_report(&self, command: &str) -> Vec<String> {
        crate::setup::config_key_report(&self.cfg, command)
    }

    /// The progress log the gatekeeper writes to.
    pub fn log(&self) -> &Logger {
        &self.log
    }

    /// The logged decision on `candidate`, if it was gated.
    pub fn decision_of(&self, candidate: &str) -> Result<Option<GateDecision>, PlayError> {
        logged_decision(&self.folders.log, candidate)
    }

    /// Decides the newest net in the test folder and moves it; `None` when
    /// the folder holds none. Rules, as KataGo's: no accepted net yet:
    /// accepted at once; older than the newest accepted net or not
    /// loadable: rejected unplayed; otherwise a match. Each decision is
    /// logged before its move, so a candidate found with a logged decision
    /// (a crash in between) is moved without a new gating.
    pub fn gate_next(&self) -> Result<Option<GateDecision>, PlayError> {
        let f = &self.folders;
        let Some(candidate) = f.test.newest()? else {
            return Ok(None);
        };
        if let Some(done) = logged_decision(&f.log, &candidate.name)? {
            let dest = if done.accepted {
                &f.accepted
            } else {
                &f.rejected
            };
            f.test.move_to(&candidate, dest)?;
            self.log.line(&format!(
                "{} was decided before a restart ({}): moved to {}",
                candidate.name,
                if done.accepted {
                    "accepted"
                } else {
                    "rejected"
                },
                dest.url()
            ));
            return Ok(Some(done));
        }
        let decision = |opponent: &str, result: Wld, accepted: bool, reason: &str| GateDecision {
            candidate: candidate.name.clone(),
            opponent: opponent.to_string(),
            result,
            required: self.required,
            accepted,
            reason: reason.to_string(),
        };
        let decided = match f.accepted.newest()? {
            None => decision("-", Wld::default(), true, "first net"),
            Some(accepted) if accepted.cmp_age(&candidate) == Ordering::Greater => {
                decision(&accepted.name, Wld::default(), false, "older than accepted")
            }
            Some(accepted) => {
                let candidate_file = PathBuf::from(f.test.describe(&candidate));
                // A net that does not load cannot play: rejected, and the
                // gatekeeper goes on with the next one.
                match crate::setup::read_model(&candidate_file) {
                    Err(e) => {
                        self.log
                            .line(&format!("{} cannot be loaded: {e}", candidate.name));
                        decision(&accepted.name, Wld::default(), false, "unloadable")
                    }
                    Ok(_) => {
                        let (result, reason) =
                            self.play(&candidate.name, candidate_file, &accepted)?;
                        let accept = gating_decided(
                            result.points(),
                            result.games(),
                            self.base.num_games_total,
                            self.required,
                        )
                        .unwrap_or(
                            result.points() + 1e-10 >= self.required * result.games() as f64,
                        );
                        decision(&accepted.name, result, accept, reason)
                    }
                }
            }
        };
        f.log.append_line(
            "gatekeeper_log.tsv",
            LOG_HEADER,
            &format!("{}\t{}", now_unix(), decided.log_columns()),
        )?;
        let into = if decided.accepted {
            &f.accepted
        } else {
            &f.rejected
        };
        f.test.move_to(&candidate, into)?;
        let r = &decided.result;
        self.log.line(&format!(
            "candidate {} {} ({}): score {} of {} games (W {} L {} D {}) against {}, required {}; moved to {}",
            candidate.name,
            if decided.accepted { "accepted" } else { "rejected" },
            decided.reason,
            r.points(),
            r.games(),
            r.wins,
            r.losses,
            r.draws,
            decided.opponent,
            self.required,
            into.describe(&candidate)
        ));
        Ok(Some(decided))
    }

    /// Plays the gating match of `candidate` against `accepted`: its result
    /// from the candidate's side and how it ended.
    fn play(
        &self,
        candidate: &str,
        candidate_file: PathBuf,
        accepted: &ModelEntry,
    ) -> Result<(Wld, &'static str), PlayError> {
        let total = self.base.num_games_total;
        if total == 0 {
            return Ok((Wld::default(), "no games"));
        }
        let accepted_file = PathBuf::from(self.folders.accepted.describe(accepted));
        let mut settings = self.base.clone();
        let mut names = [candidate.to_string(), accepted.name.clone()];
        if names[0] == names[1] {
            names[1].push_str("-accepted");
        }
        settings.bots = vec![
            BotSpec {
                name: names[0].clone(),
                model: candidate_file.clone(),
                precision: None,
                params: self.params.clone(),
                patterns: None,
                human: None,
            },
            BotSpec {
                name: names[1].clone(),
                model: accepted_file.clone(),
                precision: None,
                params: self.params.clone(),
                patterns: None,
                human: None,
            },
        ];
        self.log
            .line(&format!("testing {candidate} against {}", accepted.name));
        let evaluators = load_evaluators(
            &settings.bots,
            &self.cfg,
            settings.num_game_threads.max(8),
            &self.log,
        )?;
        let sgf_dir = self.folders.log.child(candidate)?;
        let runner = MatchRunner {
            settings: &settings,
            evaluators,
            sgf_dir: sgf_dir.clone(),
            run_name: format!("gate-{}", now_unix()),
            log: &self.log,
        };
        let required = self.required;
        let decided = |t: &Tally| {
            let r = t.table[0][1];
            gating_decided(r.points(), r.games(), total, required).is_some()
        };
        let on_game = |t: &Tally, _: &super::game::GameOutcome| {
            let r = t.table[0][1];
            self.log.line(&format!(
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
        write_summary(&sgf_dir, &settings, &result, None)?;
        let reason = if result.stopped_early {
            "decided early"
        } else {
            "all games"
        };
        Ok((result.tally.table[0][1], reason))
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
