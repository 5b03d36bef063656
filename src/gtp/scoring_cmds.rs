//! Scoring commands: `final_score` and `final_status_list`, exact for a
//! finished game, else from the search's estimate.

use crate::game::{Board, Move, Player, ScoringRule};

use super::engine::GtpEngine;

impl GtpEngine {
    /// Whether the game is over and the rules score it exactly (KataGo:
    /// finished under area scoring without friendly passes, or under
    /// territory scoring); otherwise scores come from a search.
    pub(super) fn scored_exactly(&self) -> bool {
        let hist = self.game.history();
        let rules = hist.rules();
        hist.is_game_finished()
            && ((rules.scoring_rule == ScoringRule::Area && !rules.friendly_pass_ok)
                || rules.scoring_rule == ScoringRule::Territory)
    }

    /// KataGo's `computeAnticipatedWinnerAndScore`: the winner (`None` for
    /// a draw or no result) and White minus Black.
    pub(super) fn anticipated_winner_and_score(&mut self) -> (Option<Player>, f64) {
        self.stop_background();
        if self.scored_exactly() {
            let hist = self.game.history();
            return (
                hist.winner(),
                f64::from(hist.final_white_minus_black_score()),
            );
        }
        let pla = self.game.next_pla();
        let lead = self.bot.lock().estimate_lead(&self.game, pla);
        let lead = if self.game.rules().game_result_will_be_integer() {
            lead.round()
        } else {
            (lead + 0.5).round() - 0.5
        };
        let winner = if lead > 0.0 {
            Some(Player::White)
        } else if lead < 0.0 {
            Some(Player::Black)
        } else {
            None
        };
        (winner, lead)
    }

    pub(super) fn final_score(&mut self) -> String {
        match self.anticipated_winner_and_score() {
            (Some(Player::White), score) => format!("W+{score:.1}"),
            (Some(Player::Black), score) => format!("B+{:.1}", -score),
            (None, _) => "0".to_string(),
        }
    }

    /// Alive (true) or dead for every stone, by `Loc::idx`: from the rules'
    /// own scoring of a finished game, else from the search's ownership.
    pub(super) fn anticipated_statuses(&mut self) -> Vec<bool> {
        self.stop_background();
        let board = *self.game.board();
        if self.scored_exactly() {
            let mut hist = self.game.history().clone();
            if hist.is_no_result() {
                return vec![true; crate::game::MAX_ARR_SIZE];
            }
            let area = hist.end_and_score_game_now(&board);
            let mut alive = vec![true; crate::game::MAX_ARR_SIZE];
            for loc in board.locs() {
                alive[loc.idx()] = board.get(loc) == area.get(loc);
            }
            return alive;
        }
        let pla = self.game.next_pla();
        let own = self.bot.lock().estimate_final(&self.game, pla).ownership;
        chain_statuses(&board, &own)
    }

    pub(super) fn final_status_list(&mut self, a: &[String]) -> Result<String, String> {
        let [which] = a else {
            return Err(format!(
                "Expected one argument for final_status_list but got '{}'",
                a.join(" ")
            ));
        };
        let want_alive = match which.as_str() {
            "alive" => Some(true),
            "dead" => Some(false),
            "seki" => None,
            _ => {
                return Err(
                    "Argument to final_status_list must be 'alive' or 'seki' or 'dead'".into(),
                )
            }
        };
        let Some(want_alive) = want_alive else {
            return Ok(String::new());
        };
        let alive = self.anticipated_statuses();
        Ok(self
            .game
            .stone_vertices(|l| alive.get(l.idx()).copied().unwrap_or(true) == want_alive)
            .join(" "))
    }
}

/// KataGo's life-and-death call from ownership (White positive): a chain
/// is alive when its mean ownership is above 0.2 for its colour and no
/// stone of it is below -0.6. Indexed by `Loc::idx`.
pub fn chain_statuses(board: &Board, ownership: &[f64]) -> Vec<bool> {
    let xs = board.x_size();
    let mut alive = vec![true; crate::game::MAX_ARR_SIZE];
    let mut solved = vec![false; crate::game::MAX_ARR_SIZE];
    for loc in board.locs() {
        let Some(pla) = board.get(loc).player() else {
            continue;
        };
        if solved[loc.idx()] {
            continue;
        }
        let sign = if pla == Player::White { 1.0 } else { -1.0 };
        let vals: Vec<f64> = board
            .chain_stones(loc)
            .map(|l| {
                sign * ownership
                    .get(Move::Play(l).policy_index(xs, board.y_size()))
                    .copied()
                    .unwrap_or(0.0)
            })
            .collect();
        let mean = vals.iter().sum::<f64>() / vals.len().max(1) as f64;
        let worst = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let is_alive = mean > 0.2 && worst > -0.6;
        for l in board.chain_stones(loc) {
            alive[l.idx()] = is_alive;
            solved[l.idx()] = true;
        }
    }
    alive
}
