//! Move legality under the history's rules (simple ko, superko, the
//! encore's pass-for-ko) and when a pass ends a phase or the game.

use super::{ko_hash, BoardHistory};
use crate::game::board::Board;
use crate::game::rules::{KoRule, ScoringRule};
use crate::game::types::{Move, Player};
use crate::game::zobrist::Hash128;

impl BoardHistory {
    // Legality and phase ends

    /// Whether `pla` may play `mv` now: it must be `pla`'s turn; simple ko
    /// (main phase), superko, suicide rule and the encore ko rules apply.
    /// In the encore, a move onto a recapture-blocked ko is legal: it is a
    /// pass-for-ko.
    pub fn is_legal(&self, board: &Board, mv: Move, pla: Player) -> bool {
        if pla != self.presumed_next_pla {
            return false;
        }
        if let Move::Play(loc) = mv {
            if self.encore_phase > 0 {
                if self.is_pass_for_ko(board, mv, pla) {
                    return true;
                }
            } else if board.is_ko_banned(loc) {
                return false;
            }
        }
        if !board.is_legal_ignoring_ko(mv, pla, self.rules.multi_stone_suicide_legal) {
            return false;
        }
        !matches!(mv, Move::Play(loc) if self.is_super_ko_banned(loc))
    }

    /// Whether `mv` is a pass-for-ko in the encore: playing on (or into the
    /// ko mouth of) a recapture-blocked opponent stone.
    pub fn is_pass_for_ko(&self, board: &Board, mv: Move, pla: Player) -> bool {
        let Move::Play(loc) = mv else { return false };
        if self.encore_phase == 0 || !board.is_on_board(loc) {
            return false;
        }
        let opp = pla.opp().color();
        if board.get(loc) == opp
            && self.is_ko_recap_blocked(loc)
            && board.chain_size(loc) == 1
            && board.num_liberties(loc) == 1
        {
            return true;
        }
        matches!(board.ko_capture_loc(loc, pla),
            Some(cap) if self.is_ko_recap_blocked(cap) && board.get(cap) == opp)
    }

    /// Like [`BoardHistory::is_legal`] but lenient as for game records:
    /// either player may move, suicide is tolerated, ko bans are ignored.
    pub fn is_legal_tolerant(&self, board: &Board, mv: Move, pla: Player) -> bool {
        self.is_pass_for_ko(board, mv, pla) || board.is_legal_ignoring_ko(mv, pla, true)
    }

    pub(super) fn new_consecutive_ending_passes_after_pass(&self) -> u32 {
        if self.encore_phase == 0 && self.rules.ko_rule == KoRule::Spight {
            0
        } else {
            self.consecutive_ending_passes + 1
        }
    }

    /// Passes clear ko history and end the phase on a repeated pass
    /// position (spight-like) in the encore and under simple/spight ko.
    pub(super) fn phase_has_spightlike_ending_and_pass_history_clearing(&self) -> bool {
        self.encore_phase > 0 || matches!(self.rules.ko_rule, KoRule::Simple | KoRule::Spight)
    }

    pub(super) fn would_be_spightlike_ending_pass(
        &self,
        pla: Player,
        ko_hash_before: Hash128,
    ) -> bool {
        self.phase_has_spightlike_ending_and_pass_history_clearing()
            && match pla {
                Player::Black => self.hashes_before_black_pass.contains(&ko_hash_before),
                Player::White => self.hashes_before_white_pass.contains(&ko_hash_before),
            }
    }

    pub(super) fn current_ko_hash(&self, board: &Board, pla: Player) -> Hash128 {
        ko_hash(
            &self.rules,
            board,
            pla,
            self.encore_phase,
            self.ko_recap_block_hash,
        )
    }

    /// Whether a pass by `pla` now would end the current phase.
    pub fn pass_would_end_phase(&self, board: &Board, pla: Player) -> bool {
        self.new_consecutive_ending_passes_after_pass() >= 2
            || self.would_be_spightlike_ending_pass(pla, self.current_ko_hash(board, pla))
    }

    /// Whether a pass by `pla` now would end the game.
    pub fn pass_would_end_game(&self, board: &Board, pla: Player) -> bool {
        self.pass_would_end_phase(board, pla) && self.is_final_phase()
    }

    /// With `friendly_pass_ok` under area scoring a search wants a third
    /// pass: true when a pass would end the game only as a second pass.
    pub fn should_suppress_end_game_from_friendly_pass(&self, board: &Board, pla: Player) -> bool {
        self.rules.friendly_pass_ok
            && self.rules.scoring_rule == ScoringRule::Area
            && self.new_consecutive_ending_passes_after_pass() == 2
            && !self.would_be_spightlike_ending_pass(pla, self.current_ko_hash(board, pla))
    }

    /// Whether ending this phase ends the game.
    pub fn is_final_phase(&self) -> bool {
        self.rules.scoring_rule == ScoringRule::Area || self.encore_phase >= 2
    }
}
