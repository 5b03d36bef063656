//! The real game as the search sees it: [`GameState`] (in `game`)
//! implementing [`SearchState`].

use crate::game::graph_hash;
use crate::game::{
    pattern_hash, AreaOptions, Color, GameState, Hash128, Loc, Move, Player, ScoringRule,
};
use crate::nn::Symmetry;

use super::eval::{Outcome, SearchState};
use super::mirror::{MirrorGame, MirrorStatus};
use super::pattern_bonus::PatternBonusTable;
use crate::nn::invariant_symmetries;

impl SearchState for GameState {
    fn x_size(&self) -> usize {
        self.board.x_size()
    }

    fn y_size(&self) -> usize {
        self.board.y_size()
    }

    fn next_player(&self) -> Player {
        self.next
    }

    fn is_legal(&self, mv: Move) -> bool {
        GameState::is_legal(self, mv)
    }

    fn play(&mut self, mv: Move) {
        GameState::play(self, mv);
    }

    fn outcome(&self) -> Option<Outcome> {
        if !self.hist.is_game_finished() {
            return None;
        }
        if self.hist.is_no_result() {
            return Some(Outcome::NoResult);
        }
        Some(Outcome::Scored {
            winner: self.hist.winner(),
            white_minus_black: f64::from(self.hist.final_white_minus_black_score()),
        })
    }

    fn turn_number(&self) -> usize {
        self.hist.moves().len()
    }

    fn last_move(&self) -> Option<(Player, Move)> {
        self.hist.moves().last().map(|&(mv, pla)| (pla, mv))
    }

    fn pass_would_end_game(&self) -> bool {
        self.hist.pass_would_end_game(&self.board, self.next)
    }

    fn pass_would_end_phase(&self) -> bool {
        self.hist.pass_would_end_phase(&self.board, self.next)
    }

    fn graph_hash(
        &self,
        prev: Hash128,
        rep_bound: usize,
        draw_equivalent_wins_for_white: f64,
    ) -> Option<Hash128> {
        Some(graph_hash::graph_hash(
            prev,
            &self.board,
            &self.hist,
            self.next,
            rep_bound,
            draw_equivalent_wins_for_white,
        ))
    }

    fn graph_hash_from_scratch(
        &self,
        rep_bound: usize,
        draw_equivalent_wins_for_white: f64,
    ) -> Option<Hash128> {
        Some(graph_hash::graph_hash_from_scratch(
            &self.board,
            &self.hist,
            self.next,
            rep_bound,
            draw_equivalent_wins_for_white,
        ))
    }

    fn color_at(&self, loc: Loc) -> Color {
        self.board.get(loc)
    }

    fn in_atari(&self, loc: Loc) -> bool {
        self.board.num_liberties(loc) == 1
    }

    fn ko_loc(&self) -> Option<Loc> {
        self.board.ko_loc()
    }

    fn chain_liberties(&self, loc: Loc) -> usize {
        match self.board.get(loc) {
            Color::Black | Color::White => self.board.num_liberties(loc),
            Color::Empty | Color::Wall => 0,
        }
    }

    fn adjacent_to_chain(&self, loc: Loc, chain: Loc) -> bool {
        self.board.is_adjacent_to_chain(loc, chain)
    }

    fn pattern_hash(&self, mv: Move) -> Hash128 {
        pattern_hash(&self.board, self.next, mv).unwrap_or(Hash128::ZERO)
    }

    fn add_game_patterns(&self, table: &mut PatternBonusTable, bonus: f64, only: Player) {
        table.add_game_moves(
            self.hist.initial_board(),
            self.hist.moves(),
            bonus,
            Some(only),
        );
    }

    fn mirror_status(&self) -> MirrorStatus {
        let rules = self.hist.rules();
        MirrorStatus::detect(&MirrorGame {
            moves: self.hist.moves(),
            root_pla: self.next,
            x_size: self.board.x_size(),
            y_size: self.board.y_size(),
            area_scoring: rules.scoring_rule == ScoringRule::Area,
            handicap_stones: self.hist.compute_num_handicap_stones(),
            white_handicap_bonus: rules.white_handicap_bonus_rule,
            komi: f64::from(rules.komi),
            color_at: |loc| self.board.get(loc),
        })
    }

    /// As KataGo's `markDuplicateMoveLocs`: no symmetry while a simple ko
    /// or superko bans a point; in the encore, ko-recapture blocks (and in
    /// the second encore phase the starting colours) must map too.
    fn invariant_symmetries(&self) -> Vec<Symmetry> {
        let (xs, ys) = (self.board.x_size(), self.board.y_size());
        let banned =
            (0..ys).any(|y| (0..xs).any(|x| self.hist.is_super_ko_banned(Loc::from_xy(x, y, xs))));
        if self.board.ko_loc().is_some() || banned {
            return vec![Symmetry::IDENTITY];
        }
        let encore = self.hist.encore_phase();
        invariant_symmetries(xs, ys, |a, b| {
            self.board.get(a) == self.board.get(b)
                && (encore == 0
                    || self.hist.is_ko_recap_blocked(a) == self.hist.is_ko_recap_blocked(b))
                && (encore != 2
                    || self.hist.second_encore_start_color(a)
                        == self.hist.second_encore_start_color(b))
        })
    }

    /// Under area-like scoring (area, or territory's second encore phase)
    /// a move loses bonus on a point the opponent surely owns (unless it
    /// captures) or on one the mover surely owns where it touches no enemy
    /// stone and connects no groups that are not pass-alive, so the game
    /// is not prolonged; a pass loses half a bonus with a button. Under
    /// territory scoring a pass loses two thirds of a bonus (dame get
    /// filled first) and moves on surely owned points lose as above, a
    /// capture in the opponent's area included. With a simple ko on the
    /// board only the pass is touched. "Surely" is ownership beyond 0.95,
    /// the loss growing to the full bonus at 1.
    fn ending_score_bonuses(&self, white_ownership: &[f32], points: f64) -> Vec<f64> {
        const EXTREME: f64 = 0.95;
        const TAIL: f64 = 0.05;
        let board = &self.board;
        let (xs, ys) = (board.x_size(), board.y_size());
        if points == 0.0 || white_ownership.len() != xs * ys {
            return Vec::new();
        }
        let hist = &self.hist;
        let pla = self.next;
        let opp = pla.opp();
        let area_ish = hist.rules().scoring_rule == ScoringRule::Area || hist.encore_phase() >= 2;
        let safe = board.calculate_area(AreaOptions {
            multi_stone_suicide_legal: hist.suicide_legal_for_pass_alive(),
            ..AreaOptions::default()
        });
        let no_ko = board.ko_loc().is_none();
        let mut bonus = vec![0.0; xs * ys + 1];
        for (i, b) in bonus.iter_mut().take(xs * ys).enumerate() {
            if !no_ko {
                break;
            }
            let loc = Loc::from_xy(i % xs, i / xs, xs);
            let own = f64::from(white_ownership[i]) * if pla == Player::White { 1.0 } else { -1.0 };
            let extra = if own <= -EXTREME {
                if area_ish && board.would_be_capture(loc, pla) {
                    0.0
                } else {
                    -points * ((-EXTREME - own) / TAIL)
                }
            } else if own >= EXTREME
                && !board.is_adjacent_to_pla(loc, opp)
                && !board.is_non_pass_alive_self_connection(loc, pla, &safe)
            {
                -points * ((own - EXTREME) / TAIL)
            } else {
                0.0
            };
            *b = extra;
        }
        bonus[xs * ys] = if !area_ish {
            -points * (2.0 / 3.0)
        } else if hist.has_button() {
            -points * 0.5
        } else {
            0.0
        };
        if pla == Player::Black {
            for b in &mut bonus {
                *b = -*b;
            }
        }
        bonus
    }

    fn fills_dame_before_pass(&self) -> bool {
        self.hist.rules().scoring_rule == ScoringRule::Territory && self.hist.encore_phase() == 0
    }

    fn useless_root_moves(&self) -> Vec<bool> {
        let moves = self.hist.moves();
        let opp = self.next.opp();
        let opp_passed_four =
            moves.len() >= 7 && (0..4).all(|k| moves[moves.len() - 1 - 2 * k] == (Move::Pass, opp));
        if !opp_passed_four {
            return Vec::new();
        }
        let board = &self.board;
        let (xs, ys) = (board.x_size(), board.y_size());
        let safe = board.calculate_area(AreaOptions {
            multi_stone_suicide_legal: self.hist.suicide_legal_for_pass_alive(),
            ..AreaOptions::default()
        });
        let mut pruned = vec![false; xs * ys + 1];
        for (i, p) in pruned.iter_mut().take(xs * ys).enumerate() {
            *p = safe.get(Loc::from_xy(i % xs, i / xs, xs)) != Color::Empty;
        }
        pruned
    }

    fn friendly_pass_continues(&self) -> bool {
        self.hist
            .should_suppress_end_game_from_friendly_pass(&self.board, self.next)
    }

    fn position_hash(&self) -> u64 {
        self.hist
            .situation_rules_and_ko_hash(&self.board, self.next, 0.0)
            .0 as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Board, BoardHistory, Rules};

    /// 9x9: a pass-alive black wall on the B column with A5 (its two eyes
    /// A1-A4 and A6-A9), a white stone at E5; Black to move after the given
    /// `moves` (black moves alternating with white passes).
    fn walled(black_moves: &[&str]) -> GameState {
        let mut board = Board::new(9, 9).unwrap();
        for y in 0..9 {
            board.set_stone(Loc::from_xy(1, y, 9), Color::Black);
        }
        board.set_stone(Loc::from_xy(0, 4, 9), Color::Black);
        board.set_stone(Loc::from_xy(4, 4, 9), Color::White);
        let hist = BoardHistory::new(&board, Player::Black, Rules::chinese());
        let mut st = GameState::new(board, hist, Player::Black);
        for v in black_moves {
            st.play(Move::parse(v, 9, 9).unwrap());
            st.play(Move::Pass);
        }
        st
    }

    #[test]
    fn useless_root_moves_are_the_pass_alive_area_after_four_passes() {
        let st = walled(&["H1", "H2", "H3", "H4"]);
        let pruned = st.useless_root_moves();
        assert_eq!(pruned.len(), 82);
        let is_pruned = |v: &str| pruned[Move::parse(v, 9, 9).unwrap().policy_index(9, 9)];
        for v in ["A1", "A4", "A6", "A9", "B3"] {
            assert!(is_pruned(v), "{v} is in Black's pass-alive area");
        }
        for v in ["C3", "E4", "J9", "pass"] {
            assert!(!is_pruned(v), "{v} is not");
        }
        // Three white passes are not enough.
        assert!(walled(&["H1", "H2", "H3"]).useless_root_moves().is_empty());
    }
}
