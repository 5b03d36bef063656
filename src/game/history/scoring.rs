//! Handicap, komi and the final score: area and territory counting, the
//! button, ending the game.

use super::BoardHistory;
use crate::game::area::AreaOptions;
use crate::game::board::{Area, Board};
use crate::game::rules::{ScoringRule, TaxRule, WhiteHandicapBonusRule};
use crate::game::types::{Color, Move, Player};

impl BoardHistory {
    // Handicap

    /// Handicap stones on a board alone: the black stones if there are at
    /// least two and no white ones.
    pub fn num_handicap_stones_on_board(board: &Board) -> u32 {
        handicap_helper(board, 0)
    }

    /// Handicap stones counting the override and, if enabled, a run of
    /// black moves at the start.
    pub fn compute_num_handicap_stones(&self) -> u32 {
        if let Some(n) = self.override_num_handicap_stones {
            return n;
        }
        let mut black_turns = 0;
        if self.assume_multiple_starting_black_moves_are_handicap {
            for (i, &(mv, pla)) in self.moves.iter().enumerate() {
                if pla != Player::Black {
                    // Two white moves in a row: a set-up position, not handicap.
                    if self
                        .moves
                        .get(i + 1)
                        .is_some_and(|&(_, p)| p != Player::Black)
                    {
                        black_turns = 0;
                        break;
                    }
                    // A lone white pass between black stones: keep counting.
                    if mv == Move::Pass {
                        continue;
                    }
                    break;
                }
                if mv != Move::Pass {
                    black_turns += 1;
                }
            }
        }
        handicap_helper(&self.initial_board, black_turns)
    }

    /// White's handicap bonus under the rules' white-handicap-bonus rule.
    pub fn compute_white_handicap_bonus(&self) -> u32 {
        match self.rules.white_handicap_bonus_rule {
            WhiteHandicapBonusRule::Zero => 0,
            WhiteHandicapBonusRule::N => self.compute_num_handicap_stones(),
            WhiteHandicapBonusRule::NMinusOne => {
                self.compute_num_handicap_stones().saturating_sub(1)
            }
        }
    }

    // ---------------------------------------------------------------
    // Komi

    /// The komi shift that folds draw utility into komi when results are
    /// integers.
    pub fn white_komi_adjustment_for_draws(&self, draw_equivalent_wins_for_white: f64) -> f32 {
        if self.rules.game_result_will_be_integer() {
            (draw_equivalent_wins_for_white - 0.5) as f32
        } else {
            0.0
        }
    }

    /// Komi from `pla`'s point of view including bonuses so far.
    pub fn current_self_komi(&self, pla: Player, draw_equivalent_wins_for_white: f64) -> f32 {
        let white = self.white_bonus_score
            + self.white_handicap_bonus_score
            + self.rules.komi
            + self.white_komi_adjustment_for_draws(draw_equivalent_wins_for_white);
        match pla {
            Player::White => white,
            Player::Black => -white,
        }
    }

    // ---------------------------------------------------------------
    // Scoring

    pub(super) fn count_area_score_white_minus_black(&self, board: &Board) -> (i32, Area) {
        let multi = self.suicide_legal_for_pass_alive();
        let mut score = 0;
        let area = match self.rules.tax_rule {
            TaxRule::None => board.calculate_area(AreaOptions {
                non_pass_alive_stones: true,
                safe_big_territories: true,
                unsafe_big_territories: true,
                multi_stone_suicide_legal: multi,
            }),
            TaxRule::Seki | TaxRule::All => {
                let (area, regions) = board.calculate_independent_life_area(false, true, multi);
                if self.rules.tax_rule == TaxRule::All {
                    score -= 2 * regions;
                }
                area
            }
        };
        for loc in board.locs() {
            match area.get(loc) {
                Color::White => score += 1,
                Color::Black => score -= 1,
                _ => {}
            }
        }
        (score, area)
    }

    pub(super) fn count_territory_area_score_white_minus_black(
        &self,
        board: &Board,
    ) -> (i32, Area) {
        let keep_territories = self.rules.tax_rule == TaxRule::None;
        let (mut area, regions) = board.calculate_independent_life_area(
            keep_territories,
            false,
            self.suicide_legal_for_pass_alive(),
        );
        let mut score = 0;
        for loc in board.locs() {
            let l = loc.idx();
            match area.0[l] {
                Color::White => score += 1,
                Color::Black => score -= 1,
                _ => {
                    // Stones count if they were there when phase 2 began
                    // (or if the game ends before phase 2).
                    let c = board.get(loc);
                    if (c == Color::White || c == Color::Black)
                        && (self.encore_phase < 2 || self.second_encore_start_colors[l] == c)
                    {
                        score += if c == Color::White { 1 } else { -1 };
                        area.0[l] = c;
                    }
                }
            }
        }
        if self.rules.tax_rule == TaxRule::All {
            score -= 2 * regions;
        }
        (score, area)
    }

    /// The area map scoring would use now.
    pub fn area_now(&self, board: &Board) -> Area {
        match self.rules.scoring_rule {
            ScoringRule::Area => self.count_area_score_white_minus_black(board).1,
            ScoringRule::Territory => self.count_territory_area_score_white_minus_black(board).1,
        }
    }

    pub(super) fn set_final_score_and_winner(&mut self, score: f32) {
        self.final_white_minus_black_score = score;
        self.winner = if score > 0.0 {
            Some(Player::White)
        } else if score < 0.0 {
            Some(Player::Black)
        } else {
            None
        };
    }

    pub(super) fn take_button_at_end(&mut self) {
        if self.has_button {
            self.has_button = false;
            self.white_bonus_score += if self.presumed_next_pla == Player::White {
                0.5
            } else {
                -0.5
            };
        }
    }

    pub(super) fn finish_scored(&mut self, board_score: i32) {
        self.take_button_at_end();
        self.set_final_score_and_winner(
            board_score as f32
                + self.white_bonus_score
                + self.white_handicap_bonus_score
                + self.rules.komi,
        );
        self.is_scored = true;
        self.is_no_result = false;
        self.is_resignation = false;
        self.is_game_finished = true;
        self.is_past_normal_phase_end = false;
    }

    /// Ends the game and scores the board as it stands; returns the area
    /// map used. Idempotent on a game already scored.
    pub fn end_and_score_game_now(&mut self, board: &Board) -> Area {
        let (score, area) = match self.rules.scoring_rule {
            ScoringRule::Area => self.count_area_score_white_minus_black(board),
            ScoringRule::Territory => self.count_territory_area_score_white_minus_black(board),
        };
        self.finish_scored(score);
        area
    }

    /// Ends and scores the game if every point is a pass-alive stone or
    /// pass-alive territory (KataGo's self-play adjudication); returns
    /// whether it did.
    pub fn end_game_if_all_pass_alive(&mut self, board: &Board) -> bool {
        let area = board.calculate_area(AreaOptions {
            multi_stone_suicide_legal: self.suicide_legal_for_pass_alive(),
            ..AreaOptions::default()
        });
        let mut score = 0;
        for loc in board.locs() {
            match area.get(loc) {
                Color::White => score += 1,
                Color::Black => score -= 1,
                _ => return false,
            }
        }
        if self.rules.tax_rule == TaxRule::All {
            // Rescore normally so the group tax is counted.
            self.end_and_score_game_now(board);
        } else {
            self.finish_scored(score);
        }
        true
    }

    /// Ends the game with `winner` winning by resignation.
    pub fn set_winner_by_resignation(&mut self, winner: Player) {
        self.is_game_finished = true;
        self.is_past_normal_phase_end = false;
        self.is_scored = false;
        self.is_no_result = false;
        self.is_resignation = true;
        self.winner = Some(winner);
        self.final_white_minus_black_score = 0.0;
    }
}

fn handicap_helper(board: &Board, black_non_pass_turns: u32) -> u32 {
    let black = board.num_stones_of(Player::Black) as u32;
    let white = board.num_stones_of(Player::White);
    if white != 0 {
        return 0;
    }
    let advantage = black + black_non_pass_turns;
    if advantage <= 1 {
        0
    } else {
        advantage
    }
}
