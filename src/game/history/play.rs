//! Playing a move: [`BoardHistory::play`] and the steps of KataGo's
//! `makeBoardMoveAssumeLegal`.

use super::{ko_hash_after_move_non_encore, BoardHistory, EncoreKoCapture, NUM_RECENT_BOARDS};
use crate::game::board::Board;
use crate::game::rules::{KoRule, ScoringRule, WhiteHandicapBonusRule};
use crate::game::types::{Color, Loc, Move, Player};
use crate::game::zobrist::{Hash128, ZOBRIST};

impl BoardHistory {
    /// Plays `mv` for `pla` on `board` and updates the history (KataGo's
    /// `makeBoardMoveAssumeLegal`). The move should be legal; moves that
    /// break superko or come after the end are still handled (they reset
    /// the game-over state and count as not valid).
    pub fn play(&mut self, board: &mut Board, mv: Move, pla: Player) {
        self.play_with_options(board, mv, pla, false);
    }

    /// Plays a move from a game record: tolerates suicide, ko violations
    /// and moves out of turn; returns false (and plays nothing) only if the
    /// point is occupied or off the board.
    pub fn play_tolerant(&mut self, board: &mut Board, mv: Move, pla: Player) -> bool {
        if !self.is_legal_tolerant(board, mv, pla) {
            return false;
        }
        self.play_with_options(board, mv, pla, false);
        true
    }

    /// [`BoardHistory::play`] with `prevent_encore`: under territory
    /// scoring, passes that would start the encore instead leave the game
    /// past the normal phase end.
    pub fn play_with_options(
        &mut self,
        board: &mut Board,
        mv: Move,
        pla: Player,
        prevent_encore: bool,
    ) {
        let pos_hash_before = board.pos_hash();
        if self.is_game_finished || self.is_past_normal_phase_end {
            self.num_approx_valid_turns_this_phase = self.num_approx_valid_turns_this_phase.min(1);
            self.num_consec_valid_turns_this_game = self.num_consec_valid_turns_this_game.min(1);
        }
        let move_is_illegal = !self.is_legal(board, mv, pla);

        self.is_game_finished = false;
        self.is_past_normal_phase_end = false;
        self.winner = None;
        self.final_white_minus_black_score = 0.0;
        self.is_scored = false;
        self.is_no_result = false;
        self.is_resignation = false;

        let is_spightlike_ending_pass = self.record_pass_state(board, mv, pla);
        let was_pass_for_ko = self.encore_pass_for_ko(board, mv, pla);
        if !was_pass_for_ko {
            self.play_on_board(board, mv, pla, pos_hash_before);
        }
        self.record_move(board, mv, pla, prevent_encore, move_is_illegal);
        self.update_bans(board, pla.opp());
        self.update_bonus_scores(mv, pla, was_pass_for_ko);

        // Phase ends and game end.
        if self.consecutive_ending_passes >= 2 || is_spightlike_ending_pass {
            self.end_phase(board, pla, prevent_encore);
        }

        // Break long cycles with no result.
        if mv != Move::Pass && (self.encore_phase > 0 || self.rules.ko_rule == KoRule::Simple) {
            if let Some(&last) = self.ko_hash_history.last() {
                if self.ko_hash_history.iter().filter(|&&h| h == last).count() >= 3 {
                    self.is_no_result = true;
                    self.is_game_finished = true;
                }
            }
        }
    }

    /// Passes, the button and pass bookkeeping; returns whether `mv` is a
    /// pass that ends the phase under a Spight-like ko rule.
    #[inline]
    fn record_pass_state(&mut self, board: &Board, mv: Move, pla: Player) -> bool {
        let mut is_spightlike_ending_pass = false;
        if mv != Move::Pass {
            self.consecutive_ending_passes = 0;
        } else if self.has_button {
            self.has_button = false;
            self.white_bonus_score += if pla == Player::White { 0.5 } else { -0.5 };
            self.consecutive_ending_passes = 0;
            // Taking the button makes a new situation: clear the histories.
            self.hashes_before_black_pass.clear();
            self.hashes_before_white_pass.clear();
            self.ko_hash_history.clear();
            self.first_turn_idx_with_ko_history = self.moves.len() + 1;
        } else {
            if self.phase_has_spightlike_ending_and_pass_history_clearing() {
                self.ko_hash_history.clear();
                self.first_turn_idx_with_ko_history = self.moves.len() + 1;
            }
            let before = self.current_ko_hash(board, pla);
            self.consecutive_ending_passes = self.new_consecutive_ending_passes_after_pass();
            is_spightlike_ending_pass = self.would_be_spightlike_ending_pass(pla, before);
            match pla {
                Player::Black => self.hashes_before_black_pass.push(before),
                Player::White => self.hashes_before_white_pass.push(before),
            }
        }
        is_spightlike_ending_pass
    }

    /// Pass-for-ko in the encore lifts a recapture block and does nothing
    /// else; returns whether `mv` was one.
    #[inline]
    fn encore_pass_for_ko(&mut self, board: &mut Board, mv: Move, pla: Player) -> bool {
        let mut was_pass_for_ko = false;
        if let (Move::Play(loc), true) = (mv, self.encore_phase > 0) {
            let opp = pla.opp().color();
            if board.get(loc) == opp && self.is_ko_recap_blocked(loc) {
                self.set_ko_recap_blocked(loc, false);
                was_pass_for_ko = true;
                board.clear_simple_ko_loc();
            } else if let Some(cap) = board.ko_capture_loc(loc, pla) {
                if self.is_ko_recap_blocked(cap) && board.get(cap) == opp {
                    self.set_ko_recap_blocked(cap, false);
                    was_pass_for_ko = true;
                    board.clear_simple_ko_loc();
                }
            }
        }
        was_pass_for_ko
    }

    /// Plays `mv` on the board; in the encore a ko capture blocks the
    /// recapture instead of setting a simple-ko point, and blocks on points
    /// that emptied are lifted.
    #[inline]
    fn play_on_board(
        &mut self,
        board: &mut Board,
        mv: Move,
        pla: Player,
        pos_hash_before: Hash128,
    ) {
        board.play(mv, pla);
        if self.encore_phase > 0 {
            if board.ko_loc().is_some() {
                if let Move::Play(loc) = mv {
                    self.set_ko_recap_blocked(loc, true);
                    self.ko_captures_in_encore.push(EncoreKoCapture {
                        pos_hash_before,
                        loc,
                        pla,
                    });
                }
                board.clear_simple_ko_loc();
            }
            for loc in board.locs() {
                if board.get(loc) == Color::Empty && self.is_ko_recap_blocked(loc) {
                    self.set_ko_recap_blocked(loc, false);
                }
            }
        }
    }

    /// Appends the move to the recent boards, the ko-hash history and the
    /// move list, and counts the turn.
    #[inline]
    fn record_move(
        &mut self,
        board: &Board,
        mv: Move,
        pla: Player,
        prevent_encore: bool,
        move_is_illegal: bool,
    ) {
        self.current_recent_board_idx = (self.current_recent_board_idx + 1) % NUM_RECENT_BOARDS;
        self.recent_boards[self.current_recent_board_idx].clone_from(board);

        let after = self.current_ko_hash(board, pla.opp());
        self.ko_hash_history.push(after);
        self.moves.push((mv, pla));
        self.prevent_encore_history.push(prevent_encore);
        self.num_turns_this_phase += 1;
        self.num_approx_valid_turns_this_phase += 1;
        self.num_consec_valid_turns_this_game += 1;
        self.presumed_next_pla = pla.opp();
        if move_is_illegal {
            self.num_consec_valid_turns_this_game = 0;
        }
        if let Move::Play(loc) = mv {
            if let Some(w) = self.was_ever_occupied_or_played.get_mut(loc.idx()) {
                *w = true;
            }
        }
    }

    /// Points the next player may not play because of superko (in the
    /// encore: the ko captures that would repeat a position).
    #[inline]
    fn update_bans(&mut self, board: &Board, next: Player) {
        if self.encore_phase == 0 && self.rules.ko_rule != KoRule::Simple {
            self.update_super_ko_bans(board, next);
        } else if self.encore_phase > 0 {
            self.super_ko_banned.fill(false);
            for ekc in &self.ko_captures_in_encore {
                if ekc.pos_hash_before == board.pos_hash() && ekc.pla == next {
                    self.super_ko_banned[ekc.loc.idx()] = true;
                }
            }
        }
    }

    /// The territory-scoring move point and the handicap bonus.
    #[inline]
    fn update_bonus_scores(&mut self, mv: Move, pla: Player, was_pass_for_ko: bool) {
        // Territory scoring: one point per move in the main phase and
        // encore phase 1.
        if self.rules.scoring_rule == ScoringRule::Territory
            && self.encore_phase <= 1
            && mv != Move::Pass
            && !was_pass_for_ko
        {
            self.white_bonus_score += if pla == Player::Black { 1.0 } else { -1.0 };
        }

        if pla == Player::White && mv != Move::Pass {
            self.white_has_moved = true;
        }
        if self.assume_multiple_starting_black_moves_are_handicap
            && !self.white_has_moved
            && pla == Player::Black
            && self.rules.white_handicap_bonus_rule != WhiteHandicapBonusRule::Zero
        {
            self.white_handicap_bonus_score = self.compute_white_handicap_bonus() as f32;
        }
    }

    /// The phase ended with passes: score the game, stop past the normal
    /// end (`prevent_encore`), or start the next encore phase.
    #[inline]
    fn end_phase(&mut self, board: &Board, pla: Player, prevent_encore: bool) {
        match self.rules.scoring_rule {
            ScoringRule::Area => {
                self.end_and_score_game_now(board);
            }
            ScoringRule::Territory if self.encore_phase >= 2 => {
                self.end_and_score_game_now(board);
            }
            ScoringRule::Territory if prevent_encore => {
                self.is_past_normal_phase_end = true;
                self.num_approx_valid_turns_this_phase =
                    self.num_approx_valid_turns_this_phase.min(1);
                self.num_consec_valid_turns_this_game =
                    self.num_consec_valid_turns_this_game.min(1);
            }
            ScoringRule::Territory => {
                self.encore_phase += 1;
                self.num_turns_this_phase = 0;
                self.num_approx_valid_turns_this_phase = 0;
                if self.encore_phase == 2 {
                    self.second_encore_start_colors.clone_from(&board.colors);
                }
                self.super_ko_banned.fill(false);
                self.consecutive_ending_passes = 0;
                self.hashes_before_black_pass.clear();
                self.hashes_before_white_pass.clear();
                self.ko_recap_blocked.fill(false);
                self.ko_recap_block_hash = Hash128::ZERO;
                self.ko_captures_in_encore.clear();
                self.ko_hash_history.clear();
                let h = self.current_ko_hash(board, pla.opp());
                self.ko_hash_history.push(h);
                self.first_turn_idx_with_ko_history = self.moves.len();
            }
        }
    }

    fn update_super_ko_bans(&mut self, board: &Board, next: Player) {
        let multi = self.rules.multi_stone_suicide_legal;
        for loc in board.locs() {
            let l = loc.idx();
            let banned = if board.get(loc) != Color::Empty {
                false
            } else if !self.was_ever_occupied_or_played[l] && !board.is_suicide(loc, next) {
                // A stone where none ever was makes a new position.
                false
            } else if board.is_illegal_suicide(loc, next, multi) || board.is_ko_banned(loc) {
                false
            } else {
                let pos_after = board.pos_hash_after_move(Move::Play(loc), next);
                let ko_after = ko_hash_after_move_non_encore(&self.rules, pos_after, next.opp());
                self.ko_hash_history.contains(&ko_after)
            };
            self.super_ko_banned[l] = banned;
        }
    }

    fn set_ko_recap_blocked(&mut self, loc: Loc, b: bool) {
        let l = loc.idx();
        if self.ko_recap_blocked[l] != b {
            self.ko_recap_blocked[l] = b;
            self.ko_recap_block_hash ^= ZOBRIST.ko_mark[l];
        }
    }
}
