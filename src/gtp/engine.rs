//! The GTP engine: its state (game, clocks, settings, the bot). The
//! commands are in `commands.rs` (the one table) and the command groups
//! (`board_cmds.rs`, `rules_cmds.rs`, `scoring_cmds.rs`, `sgf_cmds.rs`,
//! `search_cmds.rs`); the settings in `settings.rs`; the read loop in
//! `session.rs`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::game::{Board, ByPlayer, Move, Player};
use crate::timecontrol::TimeControls;

use super::bot::GtpBot;
use super::position::GtpGame;
use super::protocol::Output;
use super::settings::GtpSettings;

/// What handling a command did.
pub enum Handled {
    /// Answer with `=` and this text.
    Ok(String),
    /// Answer with `?` and this text.
    Err(String),
    /// The command wrote its own response.
    Written,
    /// Answer `=` and end the session.
    Quit,
}

impl From<Result<String, String>> for Handled {
    fn from(r: Result<String, String>) -> Handled {
        match r {
            Ok(s) => Handled::Ok(s),
            Err(s) => Handled::Err(s),
        }
    }
}

/// What a finished genmove leaves for the engine's state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct GenmoveRecord {
    pub pla: Player,
    /// The move answered (after the passing hacks).
    pub mv: Move,
    /// The search's root win-loss value, White's view.
    pub white_win_loss: f64,
    /// Seconds from the command to the answer.
    pub seconds: f64,
}

/// A search running on its own thread: analysis, pondering or a
/// cancellable search. The command loop stops it on the next input line.
pub(super) struct Background {
    pub stop: Arc<AtomicBool>,
    /// A cancellable search's finished move, for the engine to record.
    pub handle: JoinHandle<Option<GenmoveRecord>>,
    /// Analysis ends its open response with a blank line once stopped.
    pub ends_response: bool,
}

/// The engine behind `engine gtp`.
pub struct GtpEngine {
    pub(super) settings: GtpSettings,
    pub(super) game: GtpGame,
    pub(super) bot: Arc<Mutex<Box<dyn GtpBot>>>,
    pub(super) out: Output,
    pub(super) clocks: ByPlayer<TimeControls>,
    pub(super) recent_win_loss: Vec<f64>,
    pub(super) genmove_time_sum: f64,
    pub(super) background: Option<Background>,
    pub(super) name: String,
    pub(super) version: String,
    /// KataGo's automatic avoid patterns, when configured.
    pub(super) auto_avoid: Option<super::auto_avoid::AutoAvoidGames>,
    /// The problem `genmove` plays inside (`kata-tsumego-frame`), if any.
    pub(super) tsumego_frame: Option<super::tsumego_frame::TsumegoFrame>,
}

impl GtpEngine {
    /// An engine with `settings`, answering on `out`. `unlimited_config`
    /// says whether the config set no visit/playout/time limit, in which
    /// case KataGo assumes a fast clock (1 s main, 5 x 5 s byo-yomi).
    pub fn new(
        settings: GtpSettings,
        bot: Box<dyn GtpBot>,
        out: Output,
        no_search_limit_in_config: bool,
    ) -> Result<GtpEngine, String> {
        let (xs, ys) = settings.default_size;
        let board = Board::new(xs, ys).map_err(|e| e.to_string())?;
        let mut rules = settings.initial_rules;
        if let Some(k) = settings.forced_komi {
            rules.komi = k;
        }
        let clock = if no_search_limit_in_config {
            TimeControls::byo_yomi(1.0, 5.0, 5)
        } else {
            TimeControls::default()
        };
        if bot.supported_rules(&rules).is_some() {
            return Err(format!(
                "Rules {} from the config are NOT supported by neural net",
                rules.to_json(false)
            ));
        }
        let model = bot.model_name();
        let version = if model.is_empty() {
            env!("CARGO_PKG_VERSION").to_string()
        } else {
            format!("{}+{model}", env!("CARGO_PKG_VERSION"))
        };
        let game = GtpGame::new(board, rules, settings.game_options);
        Ok(GtpEngine {
            game,
            settings,
            bot: Arc::new(Mutex::new(bot)),
            out,
            clocks: ByPlayer::both(clock),
            recent_win_loss: Vec::new(),
            genmove_time_sum: 0.0,
            background: None,
            name: "engine".to_string(),
            version,
            auto_avoid: None,
            tsumego_frame: None,
        })
    }

    /// The current game.
    pub fn game(&self) -> &GtpGame {
        &self.game
    }

    /// Stops any background search and waits for it; ends an open
    /// analysis response with its blank line.
    pub fn stop_background(&mut self) {
        if let Some(bg) = self.background.take() {
            bg.stop.store(true, Ordering::Relaxed);
            if let Ok(Some(record)) = bg.handle.join() {
                self.record_genmove(&record);
            }
            if bg.ends_response {
                self.out.write_str("\n");
            }
        }
    }

    /// Keeps what a finished genmove leaves: its time, its win-loss value
    /// (for resignation and the search factor) and, with automatic avoid
    /// patterns, its move.
    pub(super) fn record_genmove(&mut self, record: &GenmoveRecord) {
        self.genmove_time_sum += record.seconds;
        self.recent_win_loss.push(record.white_win_loss);
        self.auto_avoid_record(record.pla, record.mv);
    }
}

/// KataGo's automatic avoid patterns (see [`super::auto_avoid`]).
impl GtpEngine {
    /// Turns KataGo's automatic avoid patterns on: the bot searches with
    /// the table of the saved moves from now on.
    pub fn set_auto_avoid(&mut self, games: super::auto_avoid::AutoAvoidGames) {
        if let Some(table) = games.load_table() {
            self.bot.lock().set_pattern_bonus_table(Some(table));
        }
        self.auto_avoid = Some(games);
    }

    /// Before `command`: saves the gathered moves if due and, for
    /// `clear_board` after a save, rebuilds the bot's table.
    pub(super) fn auto_avoid_before(&mut self, command: &str) {
        let Some(games) = &mut self.auto_avoid else {
            return;
        };
        if !super::auto_avoid::SAVE_BEFORE.contains(&command) {
            return;
        }
        games.maybe_save(false);
        if command == "clear_board" && games.reload {
            games.reload = false;
            if let Some(table) = games.load_table() {
                self.bot.lock().set_pattern_bonus_table(Some(table));
            }
        }
    }

    /// Gathers a genmove's move (when automatic avoid patterns are on).
    pub(super) fn auto_avoid_record(&mut self, pla: crate::game::Player, mv: crate::game::Move) {
        if let Some(games) = &mut self.auto_avoid {
            games.record(&self.game, pla, mv);
        }
    }

    /// Saves whatever was gathered (the session is ending).
    pub fn auto_avoid_finish(&mut self) {
        if let Some(games) = &mut self.auto_avoid {
            games.maybe_save(true);
        }
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
