//! Move history and everything that depends on it: superko, passes and the
//! end of the game, the button, KataGo's territory-scoring encore, handicap
//! bonus and the final score. Mirrors KataGo's `BoardHistory`
//! (`cpp/game/boardhistory.{h,cpp}`), field for field where it matters.
//!
//! As in KataGo, the history does not own the current board: callers keep a
//! [`Board`] and pass it to [`BoardHistory::play`] and friends, so a search
//! can copy the two separately. [`BoardHistory::recent_board`]`(0)` is
//! always a copy of the current board.

use super::area::AreaOptions;
use super::board::{Area, Board};
use super::rules::{KoRule, Rules, ScoringRule, TaxRule, WhiteHandicapBonusRule};
use super::types::{Color, Loc, Move, Player, MAX_ARR_SIZE};
use super::zobrist::{mix64, Hash128, ZOBRIST};

/// How many recent boards are kept (the current one and the two before it:
/// what the neural-network features and the search look at).
pub const NUM_RECENT_BOARDS: usize = 3;

/// A history that cannot be set up as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// Encore phases are 0, 1, 2, and only exist under territory scoring.
    #[error("encore phase {0} is not valid for these rules")]
    BadEncorePhase(u8),
}

/// A ko capture made during the encore (each may be made only once per
/// position and player).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EncoreKoCapture {
    pos_hash_before: Hash128,
    loc: Loc,
    pla: Player,
}

/// The history of a game: see the module docs.
#[derive(Clone)]
pub struct BoardHistory {
    rules: Rules,
    moves: Vec<(Move, Player)>,
    prevent_encore_history: Vec<bool>,
    /// Ko hashes of the positions since `first_turn_idx_with_ko_history`
    /// (the latest included); passes may clear it, depending on the rules.
    ko_hash_history: Vec<Hash128>,
    first_turn_idx_with_ko_history: usize,

    initial_board: Board,
    initial_pla: Player,
    initial_encore_phase: u8,
    initial_turn_number: i64,
    assume_multiple_starting_black_moves_are_handicap: bool,
    white_has_moved: bool,
    override_num_handicap_stones: Option<u32>,
    always_compute_pass_alive_under_suicide_rules: bool,

    recent_boards: [Board; NUM_RECENT_BOARDS],
    current_recent_board_idx: usize,
    presumed_next_pla: Player,

    was_ever_occupied_or_played: [bool; MAX_ARR_SIZE],
    super_ko_banned: [bool; MAX_ARR_SIZE],

    consecutive_ending_passes: u32,
    hashes_before_black_pass: Vec<Hash128>,
    hashes_before_white_pass: Vec<Hash128>,

    encore_phase: u8,
    num_turns_this_phase: usize,
    num_approx_valid_turns_this_phase: usize,
    num_consec_valid_turns_this_game: usize,

    ko_recap_blocked: [bool; MAX_ARR_SIZE],
    ko_recap_block_hash: Hash128,
    ko_captures_in_encore: Vec<EncoreKoCapture>,
    second_encore_start_colors: [Color; MAX_ARR_SIZE],

    white_bonus_score: f32,
    white_handicap_bonus_score: f32,
    has_button: bool,

    is_past_normal_phase_end: bool,
    is_game_finished: bool,
    winner: Option<Player>,
    final_white_minus_black_score: f32,
    is_scored: bool,
    is_no_result: bool,
    is_resignation: bool,
}

/// The hash that decides whether two positions are "the same" for ko
/// purposes under these rules.
fn ko_hash(
    rules: &Rules,
    board: &Board,
    pla: Player,
    encore_phase: u8,
    recap_hash: Hash128,
) -> Hash128 {
    if matches!(rules.ko_rule, KoRule::Situational | KoRule::Simple) || encore_phase > 0 {
        board.pos_hash() ^ ZOBRIST.player[pla.index()] ^ recap_hash
    } else {
        board.pos_hash() ^ recap_hash
    }
}

fn ko_hash_after_move_non_encore(rules: &Rules, pos_hash_after: Hash128, pla: Player) -> Hash128 {
    if matches!(rules.ko_rule, KoRule::Situational | KoRule::Simple) {
        pos_hash_after ^ ZOBRIST.player[pla.index()]
    } else {
        pos_hash_after
    }
}

impl BoardHistory {
    /// A history starting at `board` with `pla` to move, in the main phase.
    pub fn new(board: &Board, pla: Player, rules: Rules) -> BoardHistory {
        let mut h = BoardHistory {
            rules,
            moves: Vec::new(),
            prevent_encore_history: Vec::new(),
            ko_hash_history: Vec::new(),
            first_turn_idx_with_ko_history: 0,
            initial_board: *board,
            initial_pla: pla,
            initial_encore_phase: 0,
            initial_turn_number: 0,
            assume_multiple_starting_black_moves_are_handicap: false,
            white_has_moved: false,
            override_num_handicap_stones: None,
            always_compute_pass_alive_under_suicide_rules: false,
            recent_boards: [*board; NUM_RECENT_BOARDS],
            current_recent_board_idx: 0,
            presumed_next_pla: pla,
            was_ever_occupied_or_played: [false; MAX_ARR_SIZE],
            super_ko_banned: [false; MAX_ARR_SIZE],
            consecutive_ending_passes: 0,
            hashes_before_black_pass: Vec::new(),
            hashes_before_white_pass: Vec::new(),
            encore_phase: 0,
            num_turns_this_phase: 0,
            num_approx_valid_turns_this_phase: 0,
            num_consec_valid_turns_this_game: 0,
            ko_recap_blocked: [false; MAX_ARR_SIZE],
            ko_recap_block_hash: Hash128::ZERO,
            ko_captures_in_encore: Vec::new(),
            second_encore_start_colors: [Color::Empty; MAX_ARR_SIZE],
            white_bonus_score: 0.0,
            white_handicap_bonus_score: 0.0,
            has_button: false,
            is_past_normal_phase_end: false,
            is_game_finished: false,
            winner: None,
            final_white_minus_black_score: 0.0,
            is_scored: false,
            is_no_result: false,
            is_resignation: false,
        };
        h.reset(board, pla, rules, 0);
        h
    }

    /// A history starting in encore phase `encore_phase` (0, 1 or 2; the
    /// encore exists only under territory scoring).
    pub fn new_in_encore(
        board: &Board,
        pla: Player,
        rules: Rules,
        encore_phase: u8,
    ) -> Result<BoardHistory, HistoryError> {
        if encore_phase > 2 || (encore_phase > 0 && rules.scoring_rule != ScoringRule::Territory) {
            return Err(HistoryError::BadEncorePhase(encore_phase));
        }
        let mut h = BoardHistory::new(board, pla, rules);
        h.reset(board, pla, rules, encore_phase);
        Ok(h)
    }

    /// KataGo's `clear`: forgets all moves, results and handicap settings
    /// and starts again at `board`; keeps only the pass-alive-under-suicide
    /// mode, as KataGo does.
    fn reset(&mut self, board: &Board, pla: Player, rules: Rules, encore_phase: u8) {
        let always = self.always_compute_pass_alive_under_suicide_rules;
        *self = BoardHistory {
            rules,
            moves: Vec::new(),
            prevent_encore_history: Vec::new(),
            ko_hash_history: Vec::new(),
            first_turn_idx_with_ko_history: 0,
            initial_board: *board,
            initial_pla: pla,
            initial_encore_phase: encore_phase,
            initial_turn_number: 0,
            assume_multiple_starting_black_moves_are_handicap: false,
            white_has_moved: false,
            override_num_handicap_stones: None,
            always_compute_pass_alive_under_suicide_rules: always,
            recent_boards: [*board; NUM_RECENT_BOARDS],
            current_recent_board_idx: 0,
            presumed_next_pla: pla,
            was_ever_occupied_or_played: [false; MAX_ARR_SIZE],
            super_ko_banned: [false; MAX_ARR_SIZE],
            consecutive_ending_passes: 0,
            hashes_before_black_pass: Vec::new(),
            hashes_before_white_pass: Vec::new(),
            encore_phase,
            num_turns_this_phase: 0,
            num_approx_valid_turns_this_phase: 0,
            num_consec_valid_turns_this_game: 0,
            ko_recap_blocked: [false; MAX_ARR_SIZE],
            ko_recap_block_hash: Hash128::ZERO,
            ko_captures_in_encore: Vec::new(),
            second_encore_start_colors: [Color::Empty; MAX_ARR_SIZE],
            white_bonus_score: 0.0,
            white_handicap_bonus_score: 0.0,
            // KataGo tests the encore phase before setting it, i.e. phase 0.
            has_button: rules.has_button,
            is_past_normal_phase_end: false,
            is_game_finished: false,
            winner: None,
            final_white_minus_black_score: 0.0,
            is_scored: false,
            is_no_result: false,
            is_resignation: false,
        };
        for loc in board.locs() {
            self.was_ever_occupied_or_played[loc.idx()] = board.get(loc) != Color::Empty;
        }
        if encore_phase == 2 {
            self.second_encore_start_colors = board.colors;
        }
        self.ko_hash_history.push(ko_hash(
            &rules,
            board,
            pla,
            encore_phase,
            self.ko_recap_block_hash,
        ));
        if rules.scoring_rule == ScoringRule::Territory {
            // Territory scoring "chills" one point per stone played: count
            // the stones already on the board and those captured.
            for loc in board.locs() {
                match board.get(loc) {
                    Color::Black => self.white_bonus_score += 1.0,
                    Color::White => self.white_bonus_score -= 1.0,
                    _ => {}
                }
            }
            let net_white_captures =
                board.num_white_captures() as f32 - board.num_black_captures() as f32;
            self.white_bonus_score -= net_white_captures;
        }
        self.white_handicap_bonus_score = self.compute_white_handicap_bonus() as f32;
    }

    /// A fresh history at this one's initial position, with the same
    /// settings (turn number, handicap assumptions).
    pub fn copy_to_initial(&self) -> BoardHistory {
        let mut h = BoardHistory::new(&self.initial_board, self.initial_pla, self.rules);
        h.always_compute_pass_alive_under_suicide_rules =
            self.always_compute_pass_alive_under_suicide_rules;
        h.reset(
            &self.initial_board,
            self.initial_pla,
            self.rules,
            self.initial_encore_phase,
        );
        h.initial_turn_number = self.initial_turn_number;
        h.set_assume_multiple_starting_black_moves_are_handicap(
            self.assume_multiple_starting_black_moves_are_handicap,
        );
        h.set_override_num_handicap_stones(self.override_num_handicap_stones);
        h
    }

    /// Takes back the last move by replaying all others from the initial
    /// position (as KataGo's GTP `undo` does); `board` becomes the board
    /// before that move. Returns false if there is no move to undo.
    pub fn undo(&mut self, board: &mut Board) -> bool {
        if self.moves.is_empty() {
            return false;
        }
        let n = self.moves.len() - 1;
        let moves: Vec<_> = self.moves[..n].to_vec();
        let prevent: Vec<_> = self.prevent_encore_history[..n].to_vec();
        let mut h = self.copy_to_initial();
        let mut b = self.initial_board;
        for ((mv, pla), pe) in moves.into_iter().zip(prevent) {
            h.play_with_options(&mut b, mv, pla, pe);
        }
        *self = h;
        *board = b;
        true
    }

    // ---------------------------------------------------------------
    // Accessors

    /// The rules (komi included).
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Changes komi; rescores a game that has already been scored.
    pub fn set_komi(&mut self, komi: f32) {
        let old = self.rules.komi;
        self.rules.komi = komi;
        if self.is_game_finished && self.is_scored {
            self.set_final_score_and_winner(self.final_white_minus_black_score - old + komi);
        }
    }

    /// Every move so far with its player, oldest first.
    pub fn moves(&self) -> &[(Move, Player)] {
        &self.moves
    }

    /// The board before the first move.
    pub fn initial_board(&self) -> &Board {
        &self.initial_board
    }

    /// The player to move at the start.
    pub fn initial_pla(&self) -> Player {
        self.initial_pla
    }

    /// The encore phase at the start.
    pub fn initial_encore_phase(&self) -> u8 {
        self.initial_encore_phase
    }

    /// Turn number of the initial board (informational).
    pub fn initial_turn_number(&self) -> i64 {
        self.initial_turn_number
    }

    /// Sets the turn number of the initial board (informational).
    pub fn set_initial_turn_number(&mut self, n: i64) {
        self.initial_turn_number = n;
    }

    /// Initial turn number plus moves played.
    pub fn current_turn_number(&self) -> i64 {
        (self.initial_turn_number + self.moves.len() as i64).max(0)
    }

    /// The player expected to move next (the opponent of the last mover).
    pub fn next_player(&self) -> Player {
        self.presumed_next_pla
    }

    /// The board `n_moves_ago` moves ago (0 = now); before the first move
    /// the initial board. `n_moves_ago` must be below [`NUM_RECENT_BOARDS`].
    pub fn recent_board(&self, n_moves_ago: usize) -> &Board {
        assert!(
            n_moves_ago < NUM_RECENT_BOARDS,
            "only {NUM_RECENT_BOARDS} recent boards are kept"
        );
        let idx =
            (self.current_recent_board_idx + NUM_RECENT_BOARDS - n_moves_ago) % NUM_RECENT_BOARDS;
        &self.recent_boards[idx]
    }

    /// Encore phase: 0 main phase, 1 and 2 the territory-scoring encore.
    pub fn encore_phase(&self) -> u8 {
        self.encore_phase
    }

    /// Moves made in the current phase.
    pub fn num_turns_this_phase(&self) -> usize {
        self.num_turns_this_phase
    }

    /// How many recent moves still plausibly follow the rules of this phase
    /// (what the network's history features may use).
    pub fn num_approx_valid_turns_this_phase(&self) -> usize {
        self.num_approx_valid_turns_this_phase
    }

    /// Consecutive legal moves up to now.
    pub fn num_consec_valid_turns_this_game(&self) -> usize {
        self.num_consec_valid_turns_this_game
    }

    /// Consecutive passes that count towards ending the phase.
    pub fn consecutive_ending_passes(&self) -> u32 {
        self.consecutive_ending_passes
    }

    /// Whether the next player may not play `loc` because of superko (main
    /// phase) or the encore once-only ko-capture rule.
    pub fn is_super_ko_banned(&self, loc: Loc) -> bool {
        self.super_ko_banned
            .get(loc.idx())
            .copied()
            .unwrap_or(false)
    }

    /// Whether the stone on `loc` just captured a ko in the encore, so the
    /// opponent may not retake it at once (but may "pass for ko").
    pub fn is_ko_recap_blocked(&self, loc: Loc) -> bool {
        self.ko_recap_blocked
            .get(loc.idx())
            .copied()
            .unwrap_or(false)
    }

    /// The stone on `loc` at the start of encore phase 2 (`Empty` before).
    pub fn second_encore_start_color(&self, loc: Loc) -> Color {
        self.second_encore_start_colors
            .get(loc.idx())
            .copied()
            .unwrap_or(Color::Empty)
    }

    /// Points for white from captures/moves (territory), the button, ...
    pub fn white_bonus_score(&self) -> f32 {
        self.white_bonus_score
    }

    /// Points for white from black's handicap.
    pub fn white_handicap_bonus_score(&self) -> f32 {
        self.white_handicap_bonus_score
    }

    /// Whether the button is still there to take.
    pub fn has_button(&self) -> bool {
        self.has_button
    }

    /// Whether the game is over (by score, no result or resignation).
    pub fn is_game_finished(&self) -> bool {
        self.is_game_finished
    }

    /// Whether play went on past the end of a phase with `prevent_encore`.
    pub fn is_past_normal_phase_end(&self) -> bool {
        self.is_past_normal_phase_end
    }

    /// The winner of a finished game (`None` for a draw, no result, or a
    /// game still going).
    pub fn winner(&self) -> Option<Player> {
        self.winner
    }

    /// White minus black score of a finished, scored game (0 otherwise).
    pub fn final_white_minus_black_score(&self) -> f32 {
        self.final_white_minus_black_score
    }

    /// Whether the game ended with a score.
    pub fn is_scored(&self) -> bool {
        self.is_scored
    }

    /// Whether the game ended without a result (long cycle).
    pub fn is_no_result(&self) -> bool {
        self.is_no_result
    }

    /// Whether the game ended by resignation.
    pub fn is_resignation(&self) -> bool {
        self.is_resignation
    }

    /// Ko hashes since the last clearing, the current position last.
    pub fn ko_hash_history(&self) -> &[Hash128] {
        &self.ko_hash_history
    }

    /// Whether several black moves at the start count as handicap stones.
    pub fn set_assume_multiple_starting_black_moves_are_handicap(&mut self, b: bool) {
        self.assume_multiple_starting_black_moves_are_handicap = b;
        self.white_handicap_bonus_score = self.compute_white_handicap_bonus() as f32;
    }

    /// Fixes the number of handicap stones (`None`: detect).
    pub fn set_override_num_handicap_stones(&mut self, n: Option<u32>) {
        self.override_num_handicap_stones = n;
        self.white_handicap_bonus_score = self.compute_white_handicap_bonus() as f32;
    }

    /// Computes pass-alive areas as if multi-stone suicide were legal,
    /// whatever the rules (KataGo's `alwaysComputePassAliveUnderSuicideRules`).
    pub fn set_always_compute_pass_alive_under_suicide_rules(&mut self, b: bool) {
        self.always_compute_pass_alive_under_suicide_rules = b;
    }

    /// The suicide rule pass-alive computations use.
    pub fn suicide_legal_for_pass_alive(&self) -> bool {
        self.rules.multi_stone_suicide_legal || self.always_compute_pass_alive_under_suicide_rules
    }

    // ---------------------------------------------------------------
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

    fn new_consecutive_ending_passes_after_pass(&self) -> u32 {
        if self.encore_phase == 0 && self.rules.ko_rule == KoRule::Spight {
            0
        } else {
            self.consecutive_ending_passes + 1
        }
    }

    /// Passes clear ko history and end the phase on a repeated pass
    /// position (spight-like) in the encore and under simple/spight ko.
    fn phase_has_spightlike_ending_and_pass_history_clearing(&self) -> bool {
        self.encore_phase > 0 || matches!(self.rules.ko_rule, KoRule::Simple | KoRule::Spight)
    }

    fn would_be_spightlike_ending_pass(&self, pla: Player, ko_hash_before: Hash128) -> bool {
        self.phase_has_spightlike_ending_and_pass_history_clearing()
            && match pla {
                Player::Black => self.hashes_before_black_pass.contains(&ko_hash_before),
                Player::White => self.hashes_before_white_pass.contains(&ko_hash_before),
            }
    }

    fn current_ko_hash(&self, board: &Board, pla: Player) -> Hash128 {
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

    // ---------------------------------------------------------------
    // Playing

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

        // Passes, the button and pass bookkeeping.
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

        // Pass-for-ko in the encore lifts a recapture block and does
        // nothing else.
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
        if !was_pass_for_ko {
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

        self.current_recent_board_idx = (self.current_recent_board_idx + 1) % NUM_RECENT_BOARDS;
        self.recent_boards[self.current_recent_board_idx] = *board;

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

        // Points the next player may not play because of superko.
        let next = pla.opp();
        if self.encore_phase == 0 && self.rules.ko_rule != KoRule::Simple {
            self.update_super_ko_bans(board, next);
        } else if self.encore_phase > 0 {
            self.super_ko_banned = [false; MAX_ARR_SIZE];
            for ekc in &self.ko_captures_in_encore {
                if ekc.pos_hash_before == board.pos_hash() && ekc.pla == next {
                    self.super_ko_banned[ekc.loc.idx()] = true;
                }
            }
        }

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

        // Phase ends and game end.
        if self.consecutive_ending_passes >= 2 || is_spightlike_ending_pass {
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
                        self.second_encore_start_colors = board.colors;
                    }
                    self.super_ko_banned = [false; MAX_ARR_SIZE];
                    self.consecutive_ending_passes = 0;
                    self.hashes_before_black_pass.clear();
                    self.hashes_before_white_pass.clear();
                    self.ko_recap_blocked = [false; MAX_ARR_SIZE];
                    self.ko_recap_block_hash = Hash128::ZERO;
                    self.ko_captures_in_encore.clear();
                    self.ko_hash_history.clear();
                    let h = self.current_ko_hash(board, pla.opp());
                    self.ko_hash_history.push(h);
                    self.first_turn_idx_with_ko_history = self.moves.len();
                }
            }
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

    // ---------------------------------------------------------------
    // Scoring

    fn count_area_score_white_minus_black(&self, board: &Board) -> (i32, Area) {
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

    fn count_territory_area_score_white_minus_black(&self, board: &Board) -> (i32, Area) {
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

    fn set_final_score_and_winner(&mut self, score: f32) {
        self.final_white_minus_black_score = score;
        self.winner = if score > 0.0 {
            Some(Player::White)
        } else if score < 0.0 {
            Some(Player::Black)
        } else {
            None
        };
    }

    fn take_button_at_end(&mut self) {
        if self.has_button {
            self.has_button = false;
            self.white_bonus_score += if self.presumed_next_pla == Player::White {
                0.5
            } else {
                -0.5
            };
        }
    }

    fn finish_scored(&mut self, board_score: i32) {
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

    // ---------------------------------------------------------------
    // Hashes

    /// Position, player to move and simple-ko ban (no rules, no history).
    pub fn situation_and_simple_ko_hash(board: &Board, next: Player) -> Hash128 {
        board.sit_hash_with_simple_ko(next)
    }

    /// Everything that decides the game from here: position, player, encore
    /// phase and its marks, ko and superko bans, komi from `next`'s view
    /// (with bonuses, discretised to 1/256) and the rules. What a search or
    /// network cache keys on.
    pub fn situation_rules_and_ko_hash(
        &self,
        board: &Board,
        next: Player,
        draw_equivalent_wins_for_white: f64,
    ) -> Hash128 {
        let z = &ZOBRIST;
        let mut h =
            board.pos_hash() ^ z.player[next.index()] ^ z.encore[self.encore_phase as usize];
        let ko = board.ko_loc();
        if self.encore_phase == 0 {
            if let Some(k) = ko {
                h ^= z.ko_loc[k.idx()];
            }
            for loc in board.locs() {
                if self.super_ko_banned[loc.idx()] && Some(loc) != ko {
                    h ^= z.ko_loc[loc.idx()];
                }
            }
        } else {
            for loc in board.locs() {
                let l = loc.idx();
                if self.super_ko_banned[l] {
                    h ^= z.ko_loc[l];
                }
                if self.ko_recap_blocked[l] {
                    h ^= z.ko_mark[l];
                }
                if self.encore_phase == 2 {
                    if let Some(p) = self.second_encore_start_colors[l].player() {
                        h ^= z.second_encore_start[l][p.index()];
                    }
                }
            }
        }
        let self_komi = self.current_self_komi(next, draw_equivalent_wins_for_white);
        let komi_disc = (self_komi * 256.0) as i64 as u64;
        let k = mix64(komi_disc ^ 0x6b6f_6d69);
        h ^= Hash128(((k as u128) << 64) | mix64(k) as u128);
        let r = &self.rules;
        h ^= z.ko_rule[r.ko_rule as usize];
        h ^= z.scoring_rule[r.scoring_rule as usize];
        h ^= z.tax_rule[r.tax_rule as usize];
        if r.multi_stone_suicide_legal {
            h ^= z.multi_stone_suicide;
        }
        if self.has_button {
            h ^= z.button;
        }
        if r.friendly_pass_ok {
            h ^= z.friendly_pass_ok;
        }
        if self.always_compute_pass_alive_under_suicide_rules && !r.multi_stone_suicide_legal {
            h ^= z.pass_alive_under_suicide;
        }
        h
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

impl std::fmt::Debug for BoardHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoardHistory")
            .field("rules", &self.rules)
            .field("moves", &self.moves.len())
            .field("next", &self.presumed_next_pla)
            .field("encore_phase", &self.encore_phase)
            .field("finished", &self.is_game_finished)
            .field("score", &self.final_white_minus_black_score)
            .finish()
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
