//! What KataGo does with a genmove's search result before it answers
//! (its `handleGenMoveResult`): the legality check, the move delay, the
//! friendly pass and cleanup-before-pass hacks and the resignation test.
//! `genmove` and the cancellable searches (`kata-search_cancellable`, on
//! their own thread) both go through [`GenmoveFinish`].

use std::sync::Arc;

use parking_lot::Mutex;

use crate::config::Enabled;
use crate::game::{AreaOptions, Color, Move, Player, ScoringRule};

use super::bot::{GtpBot, SearchOutcome};
use super::engine::GenmoveRecord;
use super::position::GtpGame;
use super::scoring_cmds::chain_statuses;
use super::settings::GtpSettings;

/// A genmove's result, ready to answer and to record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct FinishedGenmove {
    /// Who moved.
    pub pla: Player,
    /// The move after the passing hacks (the one to play unless resigning).
    pub mv: Move,
    /// The bot resigns instead.
    pub resign: bool,
    /// The search's root win-loss value, White's view (KataGo's
    /// `recentWinLossValues`).
    pub white_win_loss: f64,
}

impl FinishedGenmove {
    /// What the engine keeps of it, `seconds` after the command came.
    pub fn record(&self, seconds: f64) -> GenmoveRecord {
        GenmoveRecord {
            pla: self.pla,
            mv: self.mv,
            white_win_loss: self.white_win_loss,
            seconds,
        }
    }
}

/// The engine state a genmove's finish reads: copies, so that it can run
/// on a cancellable search's thread.
pub(super) struct GenmoveFinish {
    pub settings: GtpSettings,
    pub game: GtpGame,
    pub bot: Arc<Mutex<Box<dyn GtpBot>>>,
    /// The earlier genmoves' win-loss values.
    pub recent_win_loss: Vec<f64>,
}

impl GenmoveFinish {
    /// KataGo's `handleGenMoveResult` for `pla`'s search `outcome`: an
    /// error for a move that is not legal, otherwise the move to answer
    /// (after the delay and the passing hacks) and whether to resign.
    pub fn finish(
        mut self,
        pla: Player,
        outcome: Option<SearchOutcome>,
    ) -> Result<FinishedGenmove, String> {
        let outcome = match outcome {
            Some(o) if self.game.is_legal_strict(o.best, pla) => o,
            _ => return Err("genmove returned null location or illegal move".into()),
        };
        self.delay_move(&outcome);
        let mv = self.maybe_friendly_pass(pla, outcome.best);
        let mv = self.maybe_cleanup_before_pass(pla, mv);
        self.recent_win_loss.push(outcome.white_win_loss);
        let resign = self.settings.allow_resignation && self.should_resign(pla, outcome.white_lead);
        Ok(FinishedGenmove {
            pla,
            mv,
            resign,
            white_win_loss: outcome.white_win_loss,
        })
    }

    /// KataGo's human-like pause before answering a genmove
    /// (`delayMoveScale`, `delayMoveMax`): a Gamma(2) wait whose mean,
    /// `delayMoveScale / 2 / (p + 0.1)` seconds, is longer for a move the
    /// net finds less likely (`p`: the human net's policy when one ran,
    /// else the main net's), capped at `delayMoveMax`.
    fn delay_move(&self, outcome: &SearchOutcome) {
        let (scale, max) = (self.settings.delay_move_scale, self.settings.delay_move_max);
        if scale <= 0.0 || max <= 0.0 {
            return;
        }
        let snap = &outcome.snapshot;
        let Some(nn) = snap.root_human_nn.as_ref().or(snap.root_nn.as_ref()) else {
            return;
        };
        let prob =
            f64::from(nn.policy[outcome.best.policy_index(snap.x_size, snap.y_size)]).max(0.0);
        let mean = 0.5 * scale / (prob + 0.10);
        // Gamma(2, 1): the sum of two unit exponentials.
        let gamma2 = -(1.0 - rand::random::<f64>()).ln() - (1.0 - rand::random::<f64>()).ln();
        let wait = (gamma2 * mean / 2.0).clamp(0.0001, max);
        std::thread::sleep(std::time::Duration::from_secs_f64(wait));
    }

    /// KataGo's `maybeFriendlyPass`: when the opponent has just passed and
    /// passing too would end the game under area scoring with friendly
    /// passes (rules with `friendlyPassOk`, or `friendlyPass = true`), pass
    /// instead of `mv` if the game is settled: no dead stone needs removing
    /// to see the borders closed (every point the search owns surely lies
    /// in a closed area once dead stones are lifted), `mv` touches no
    /// living opponent stone and saves nothing in atari, and a search after
    /// passing rates the game no worse than one after `mv` (utility within
    /// 0.1, score and lead within 0.25 points).
    fn maybe_friendly_pass(&self, pla: Player, mv: Move) -> Move {
        let s = &self.settings;
        if s.cleanup_before_pass == Enabled::True || mv == Move::Pass {
            return mv;
        }
        let hist = self.game.history();
        let rules = *hist.rules();
        let wanted = match s.friendly_pass {
            Enabled::True => true,
            Enabled::False => false,
            Enabled::Auto => rules.friendly_pass_ok && rules.scoring_rule == ScoringRule::Area,
        };
        let board = self.game.board().clone();
        let opponent_passed = hist.moves().last() == Some(&(Move::Pass, pla.opp()));
        if !wanted
            || rules.scoring_rule != ScoringRule::Area
            || !hist.is_final_phase()
            || hist.has_button()
            || !hist.pass_would_end_phase(&board, pla)
            || !opponent_passed
        {
            return mv;
        }
        let Move::Play(loc) = mv else {
            return mv;
        };
        let suicide_legal = hist.suicide_legal_for_pass_alive();
        let ownership = self.bot.lock().estimate_final(&self.game, pla).ownership;
        let alive = chain_statuses(&board, &ownership);
        let mut clean = board.clone();
        for l in board.locs() {
            if board.get(l) != Color::Empty && !alive[l.idx()] {
                clean.set_stone(l, Color::Empty);
            }
        }
        let area = clean.calculate_area(AreaOptions {
            non_pass_alive_stones: true,
            safe_big_territories: true,
            unsafe_big_territories: true,
            multi_stone_suicide_legal: suicide_legal,
        });
        let xs = board.x_size();
        let unsurrounded = board.locs().any(|l| {
            let own = ownership
                .get(Move::Play(l).policy_index(xs, board.y_size()))
                .copied()
                .unwrap_or(0.0);
            (own > 0.75 && area.get(l) != Color::White)
                || (own < -0.75 && area.get(l) != Color::Black)
        });
        if unsurrounded
            || clean.is_adjacent_to_pla(loc, pla.opp())
            || clean.would_be_capture(loc, pla.opp())
        {
            return mv;
        }
        let (after_pass, after_move) = {
            let mut bot = self.bot.lock();
            (
                bot.values_after_move(&self.game, pla, Move::Pass),
                bot.values_after_move(&self.game, pla, mv),
            )
        };
        match (after_pass, after_move) {
            (Some(p), Some(m)) if passing_is_no_worse(pla, p, m) => Move::Pass,
            _ => mv,
        }
    }

    /// KataGo's `maybeCleanupBeforePass`: instead of passing, capture an
    /// opponent stone left inside our pass-alive area (under area scoring
    /// without friendly passes, unless configured otherwise), so that a
    /// strict area count cannot give it to the opponent.
    fn maybe_cleanup_before_pass(&self, pla: Player, mv: Move) -> Move {
        let s = &self.settings;
        if mv != Move::Pass || s.friendly_pass == Enabled::True {
            return mv;
        }
        let hist = self.game.history();
        let rules = hist.rules();
        let wanted = match s.cleanup_before_pass {
            Enabled::True => true,
            Enabled::False => false,
            Enabled::Auto => !rules.friendly_pass_ok && rules.scoring_rule == ScoringRule::Area,
        };
        if !wanted || !hist.is_final_phase() || hist.has_button() {
            return mv;
        }
        let board = self.game.board();
        let safe = board.calculate_area(AreaOptions {
            non_pass_alive_stones: false,
            safe_big_territories: false,
            unsafe_big_territories: false,
            multi_stone_suicide_legal: rules.multi_stone_suicide_legal,
        });
        board
            .locs()
            .find(|&loc| {
                board.get(loc) == Color::Empty
                    && safe.get(loc) == pla.color()
                    && board.is_adjacent_to_pla(loc, pla.opp())
                    && hist.is_legal(board, Move::Play(loc), pla)
            })
            .map_or(mv, Move::Play)
    }

    /// KataGo's `shouldResign`, with the handicap allowance for White.
    fn should_resign(&self, pla: Player, white_lead: f64) -> bool {
        let s = &self.settings;
        let (xs, ys) = (self.game.x_size() as f64, self.game.y_size() as f64);
        let area = xs * ys;
        let init = self.game.initial_board();
        let handicap = if init.num_stones_of(Player::White) == 0 {
            init.num_stones_of(Player::Black)
        } else {
            0
        };
        let rules = self.game.rules();
        let komi = rules.komi as f64;
        let initial_black_advantage = if handicap <= 1 {
            7.0 - komi
        } else {
            use crate::game::{ScoringRule, WhiteHandicapBonusRule};
            let stone_value = if rules.scoring_rule == ScoringRule::Area {
                15.0
            } else {
                14.0
            };
            let bonus = match rules.white_handicap_bonus_rule {
                WhiteHandicapBonusRule::N => handicap as f64,
                WhiteHandicapBonusRule::NMinusOne => handicap as f64 - 1.0,
                WhiteHandicapBonusRule::Zero => 0.0,
            };
            stone_value * (handicap as f64 - 1.0) + (7.0 - komi - bonus)
        };
        let turns = self.game.moves().len() as f64;
        let mut min_turn = 0.0;
        let mut no_resign_above = area;
        if initial_black_advantage > 0.9 && pla == Player::White {
            min_turn = 1.0 + (area / 5.0).floor();
            let catch_up = (0.60 * area - min_turn).max(1.0);
            let spent = (turns - min_turn).clamp(0.0, catch_up);
            no_resign_above = -initial_black_advantage * ((catch_up - spent) / catch_up)
                - 5.0
                - initial_black_advantage * 0.15;
        }
        let min_turn = min_turn.max((s.resign_min_moves_per_board_area * area).floor());
        if turns < min_turn {
            return false;
        }
        if pla == Player::White && white_lead > no_resign_above {
            return false;
        }
        if s.resign_consec_turns > self.recent_win_loss.len() {
            return false;
        }
        let close = match pla {
            Player::White => white_lead > -s.resign_min_score_difference,
            Player::Black => white_lead < s.resign_min_score_difference,
        };
        if close {
            return false;
        }
        self.recent_win_loss
            .iter()
            .rev()
            .take(s.resign_consec_turns)
            .all(|&v| match pla {
                Player::White => v < s.resign_threshold,
                Player::Black => v > -s.resign_threshold,
            })
    }
}

/// KataGo's test in `maybeFriendlyPass`: passing is fine for `pla` if,
/// after it, White's utility, expected score and lead (`[utility, score,
/// lead]`) are no better for the opponent than after the move, within
/// 0.1 utility and a quarter point.
fn passing_is_no_worse(pla: Player, after_pass: [f64; 3], after_move: [f64; 3]) -> bool {
    // White wants these high, Black low.
    let sign = if pla == Player::White { 1.0 } else { -1.0 };
    let margins = [0.1, 0.25, 0.25];
    (0..3).all(|i| sign * after_pass[i] > sign * after_move[i] - margins[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn friendly_pass_margins_are_katago_s() {
        let mv = [0.5, 3.0, 3.0];
        // White: passing may cost up to 0.1 utility and a quarter point.
        assert!(passing_is_no_worse(Player::White, [0.45, 2.8, 2.8], mv));
        assert!(!passing_is_no_worse(Player::White, [0.39, 2.8, 2.8], mv));
        assert!(!passing_is_no_worse(Player::White, [0.5, 2.7, 3.0], mv));
        assert!(!passing_is_no_worse(Player::White, [0.5, 3.0, 2.74], mv));
        // Black wants White's values low.
        assert!(passing_is_no_worse(Player::Black, [0.55, 3.2, 3.2], mv));
        assert!(!passing_is_no_worse(Player::Black, [0.61, 3.0, 3.0], mv));
        assert!(!passing_is_no_worse(Player::Black, [0.5, 3.3, 3.0], mv));
    }
}
