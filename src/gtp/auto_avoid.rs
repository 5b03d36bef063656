//! KataGo's automatic avoid patterns in GTP (`autoAvoidRepeat*`): each
//! genmove's position and move are gathered, saved to the folder in
//! chunks when the game changes (and always at the end of the session),
//! and the next `clear_board` after a save rebuilds the bot's pattern
//! table from the folder (see [`crate::search::AutoAvoidRepeat`]).

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::game::{Move, Player};
use crate::search::{AutoAvoidRepeat, PatternBonusTable, PositionSample};

use super::position::GtpGame;

/// The commands before which KataGo saves the gathered moves (a new game
/// or position is coming), as its `maybeSaveAvoidPatterns(false)` calls.
pub(super) const SAVE_BEFORE: &[&str] = &[
    "boardsize",
    "rectangular_boardsize",
    "clear_board",
    "set_position",
    "fixed_handicap",
    "place_free_handicap",
    "set_free_handicap",
    "loadsgf",
];

/// The moves gathered in this session and the folder they go to.
pub struct AutoAvoidGames {
    repeat: AutoAvoidRepeat,
    samples: Vec<PositionSample>,
    /// Saved since the table was last built.
    pub(super) reload: bool,
    /// Names the saved files.
    rng: StdRng,
}

impl AutoAvoidGames {
    /// Gathering for `repeat`, file names from `seed`.
    pub fn new(repeat: AutoAvoidRepeat, seed: u64) -> AutoAvoidGames {
        AutoAvoidGames {
            repeat,
            samples: Vec::new(),
            reload: false,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// The table against every saved move; what each folder gave is
    /// logged. `None` (logged) when the folder cannot be read.
    pub fn load_table(&self) -> Option<Arc<PatternBonusTable>> {
        match self.repeat.load_and_prune() {
            Ok((table, report)) => {
                for (folder, load) in report {
                    for file in &load.deleted {
                        crate::logfile::line(&format!("Removing old pos file: {}", file.display()));
                    }
                    crate::logfile::line(&format!(
                        "Loaded avoid poses from {}: numPosesUsed = {}, numPosesInvalid = {}, numPosLoadErrors = {}",
                        folder.display(),
                        load.poses_used,
                        load.poses_invalid,
                        load.load_errors
                    ));
                }
                Some(Arc::new(table))
            }
            Err(e) => {
                crate::logfile::line(&format!("ERROR: auto avoid patterns: {e}"));
                None
            }
        }
    }

    /// Gathers `pla` playing `mv` in `game` (before the move).
    pub(super) fn record(&mut self, game: &GtpGame, pla: Player, mv: Move) {
        self.samples.push(PositionSample {
            board: game.board().clone(),
            next_pla: pla,
            initial_turn_number: game.history().current_turn_number(),
            hint: Some(mv),
            weight: 1.0,
        });
    }

    /// Saves the gathered moves when there are a chunk's worth, or any
    /// with `force`; a failed save is logged and the moves kept.
    pub(super) fn maybe_save(&mut self, force: bool) {
        let due = self.samples.len() >= self.repeat.save_chunk_size;
        if self.samples.is_empty() || !(force || due) {
            return;
        }
        match self.repeat.save(&self.samples, self.rng.gen()) {
            Ok(()) => {
                crate::logfile::line(&format!(
                    "Saved {} avoid poses to {}",
                    self.samples.len(),
                    self.repeat.dir.display()
                ));
                self.samples.clear();
                self.reload = true;
            }
            Err(e) => crate::logfile::line(&format!("ERROR: auto avoid patterns: {e}")),
        }
    }
}
