//! The real game as the search sees it: [`GameState`] (in `game`)
//! implementing [`SearchState`].

use crate::game::{Color, GameState, Loc, Move, Player};
use crate::nn::Symmetry;

use super::eval::{Outcome, SearchState};
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

    fn color_at(&self, loc: Loc) -> Color {
        self.board.get(loc)
    }

    fn in_atari(&self, loc: Loc) -> bool {
        self.board.num_liberties(loc) == 1
    }

    fn ko_loc(&self) -> Option<Loc> {
        self.board.ko_loc()
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
