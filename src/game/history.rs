//! Move history and everything that depends on it: superko, passes and the
//! end of the game, the button, KataGo's territory-scoring encore, handicap
//! bonus and the final score. Mirrors KataGo's `BoardHistory`
//! (`cpp/game/boardhistory.{h,cpp}`), field for field where it matters.
//!
//! As in KataGo, the history does not own the current board: callers keep a
//! [`Board`] and pass it to [`BoardHistory::play`] and friends, so a search
//! can copy the two separately. [`BoardHistory::recent_board`]`(0)` is
//! always a copy of the current board.

use super::board::Board;
use super::rules::{KoRule, Rules, ScoringRule};
use super::types::{arr_size, Color, Loc, Move, Player};
use super::zobrist::{Hash128, ZOBRIST};

mod hashes;
mod legality;
mod play;
mod scoring;

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
///
/// The per-point tables are sized by the game's board, like [`Board`]'s.
/// Not `Copy`; [`Clone::clone_from`] reuses every buffer of `self` (the
/// search resets its per-thread state so once per playout).
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

    was_ever_occupied_or_played: Box<[bool]>,
    super_ko_banned: Box<[bool]>,

    consecutive_ending_passes: u32,
    hashes_before_black_pass: Vec<Hash128>,
    hashes_before_white_pass: Vec<Hash128>,

    encore_phase: u8,
    num_turns_this_phase: usize,
    num_approx_valid_turns_this_phase: usize,
    num_consec_valid_turns_this_game: usize,

    ko_recap_blocked: Box<[bool]>,
    ko_recap_block_hash: Hash128,
    ko_captures_in_encore: Vec<EncoreKoCapture>,
    second_encore_start_colors: Box<[Color]>,

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

// Written out because `#[derive(Clone)]` cannot be combined with the
// hand-written `clone_from` below (the one that matters: the per-playout
// reset); both destructure every field so that a new one is not forgotten.
impl Clone for BoardHistory {
    fn clone(&self) -> BoardHistory {
        let BoardHistory {
            rules,
            moves,
            prevent_encore_history,
            ko_hash_history,
            first_turn_idx_with_ko_history,
            initial_board,
            initial_pla,
            initial_encore_phase,
            initial_turn_number,
            assume_multiple_starting_black_moves_are_handicap,
            white_has_moved,
            override_num_handicap_stones,
            always_compute_pass_alive_under_suicide_rules,
            recent_boards,
            current_recent_board_idx,
            presumed_next_pla,
            was_ever_occupied_or_played,
            super_ko_banned,
            consecutive_ending_passes,
            hashes_before_black_pass,
            hashes_before_white_pass,
            encore_phase,
            num_turns_this_phase,
            num_approx_valid_turns_this_phase,
            num_consec_valid_turns_this_game,
            ko_recap_blocked,
            ko_recap_block_hash,
            ko_captures_in_encore,
            second_encore_start_colors,
            white_bonus_score,
            white_handicap_bonus_score,
            has_button,
            is_past_normal_phase_end,
            is_game_finished,
            winner,
            final_white_minus_black_score,
            is_scored,
            is_no_result,
            is_resignation,
        } = self;
        BoardHistory {
            rules: *rules,
            moves: moves.clone(),
            prevent_encore_history: prevent_encore_history.clone(),
            ko_hash_history: ko_hash_history.clone(),
            first_turn_idx_with_ko_history: *first_turn_idx_with_ko_history,
            initial_board: initial_board.clone(),
            initial_pla: *initial_pla,
            initial_encore_phase: *initial_encore_phase,
            initial_turn_number: *initial_turn_number,
            assume_multiple_starting_black_moves_are_handicap:
                *assume_multiple_starting_black_moves_are_handicap,
            white_has_moved: *white_has_moved,
            override_num_handicap_stones: *override_num_handicap_stones,
            always_compute_pass_alive_under_suicide_rules:
                *always_compute_pass_alive_under_suicide_rules,
            recent_boards: recent_boards.clone(),
            current_recent_board_idx: *current_recent_board_idx,
            presumed_next_pla: *presumed_next_pla,
            was_ever_occupied_or_played: was_ever_occupied_or_played.clone(),
            super_ko_banned: super_ko_banned.clone(),
            consecutive_ending_passes: *consecutive_ending_passes,
            hashes_before_black_pass: hashes_before_black_pass.clone(),
            hashes_before_white_pass: hashes_before_white_pass.clone(),
            encore_phase: *encore_phase,
            num_turns_this_phase: *num_turns_this_phase,
            num_approx_valid_turns_this_phase: *num_approx_valid_turns_this_phase,
            num_consec_valid_turns_this_game: *num_consec_valid_turns_this_game,
            ko_recap_blocked: ko_recap_blocked.clone(),
            ko_recap_block_hash: *ko_recap_block_hash,
            ko_captures_in_encore: ko_captures_in_encore.clone(),
            second_encore_start_colors: second_encore_start_colors.clone(),
            white_bonus_score: *white_bonus_score,
            white_handicap_bonus_score: *white_handicap_bonus_score,
            has_button: *has_button,
            is_past_normal_phase_end: *is_past_normal_phase_end,
            is_game_finished: *is_game_finished,
            winner: *winner,
            final_white_minus_black_score: *final_white_minus_black_score,
            is_scored: *is_scored,
            is_no_result: *is_no_result,
            is_resignation: *is_resignation,
        }
    }

    /// Field by field into `self`'s buffers: no allocation when the board
    /// size is the same and the move lists fit (the per-playout reset).
    fn clone_from(&mut self, source: &BoardHistory) {
        // Destructured so that a new field cannot be forgotten here.
        let BoardHistory {
            rules,
            moves,
            prevent_encore_history,
            ko_hash_history,
            first_turn_idx_with_ko_history,
            initial_board,
            initial_pla,
            initial_encore_phase,
            initial_turn_number,
            assume_multiple_starting_black_moves_are_handicap,
            white_has_moved,
            override_num_handicap_stones,
            always_compute_pass_alive_under_suicide_rules,
            recent_boards,
            current_recent_board_idx,
            presumed_next_pla,
            was_ever_occupied_or_played,
            super_ko_banned,
            consecutive_ending_passes,
            hashes_before_black_pass,
            hashes_before_white_pass,
            encore_phase,
            num_turns_this_phase,
            num_approx_valid_turns_this_phase,
            num_consec_valid_turns_this_game,
            ko_recap_blocked,
            ko_recap_block_hash,
            ko_captures_in_encore,
            second_encore_start_colors,
            white_bonus_score,
            white_handicap_bonus_score,
            has_button,
            is_past_normal_phase_end,
            is_game_finished,
            winner,
            final_white_minus_black_score,
            is_scored,
            is_no_result,
            is_resignation,
        } = source;
        self.rules = *rules;
        self.moves.clone_from(moves);
        self.prevent_encore_history
            .clone_from(prevent_encore_history);
        self.ko_hash_history.clone_from(ko_hash_history);
        self.first_turn_idx_with_ko_history = *first_turn_idx_with_ko_history;
        self.initial_board.clone_from(initial_board);
        self.initial_pla = *initial_pla;
        self.initial_encore_phase = *initial_encore_phase;
        self.initial_turn_number = *initial_turn_number;
        self.assume_multiple_starting_black_moves_are_handicap =
            *assume_multiple_starting_black_moves_are_handicap;
        self.white_has_moved = *white_has_moved;
        self.override_num_handicap_stones = *override_num_handicap_stones;
        self.always_compute_pass_alive_under_suicide_rules =
            *always_compute_pass_alive_under_suicide_rules;
        for (dst, src) in self.recent_boards.iter_mut().zip(recent_boards) {
            dst.clone_from(src);
        }
        self.current_recent_board_idx = *current_recent_board_idx;
        self.presumed_next_pla = *presumed_next_pla;
        copy_into(
            &mut self.was_ever_occupied_or_played,
            was_ever_occupied_or_played,
        );
        copy_into(&mut self.super_ko_banned, super_ko_banned);
        self.consecutive_ending_passes = *consecutive_ending_passes;
        self.hashes_before_black_pass
            .clone_from(hashes_before_black_pass);
        self.hashes_before_white_pass
            .clone_from(hashes_before_white_pass);
        self.encore_phase = *encore_phase;
        self.num_turns_this_phase = *num_turns_this_phase;
        self.num_approx_valid_turns_this_phase = *num_approx_valid_turns_this_phase;
        self.num_consec_valid_turns_this_game = *num_consec_valid_turns_this_game;
        copy_into(&mut self.ko_recap_blocked, ko_recap_blocked);
        self.ko_recap_block_hash = *ko_recap_block_hash;
        self.ko_captures_in_encore.clone_from(ko_captures_in_encore);
        copy_into(
            &mut self.second_encore_start_colors,
            second_encore_start_colors,
        );
        self.white_bonus_score = *white_bonus_score;
        self.white_handicap_bonus_score = *white_handicap_bonus_score;
        self.has_button = *has_button;
        self.is_past_normal_phase_end = *is_past_normal_phase_end;
        self.is_game_finished = *is_game_finished;
        self.winner = *winner;
        self.final_white_minus_black_score = *final_white_minus_black_score;
        self.is_scored = *is_scored;
        self.is_no_result = *is_no_result;
        self.is_resignation = *is_resignation;
    }
}

/// Copies `src` into `dst`'s buffer when the lengths match (no allocation),
/// else replaces it.
fn copy_into<T: Copy>(dst: &mut Box<[T]>, src: &[T]) {
    if dst.len() == src.len() {
        dst.copy_from_slice(src);
    } else {
        *dst = src.into();
    }
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
        BoardHistory::started_at(board, pla, rules, 0, false)
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
        Ok(BoardHistory::started_at(
            board,
            pla,
            rules,
            encore_phase,
            false,
        ))
    }

    /// KataGo's `clear`: forgets all moves, results and handicap settings
    /// and starts again at `board`; keeps only the pass-alive-under-suicide
    /// mode, as KataGo does.
    fn reset(&mut self, board: &Board, pla: Player, rules: Rules, encore_phase: u8) {
        let always = self.always_compute_pass_alive_under_suicide_rules;
        *self = BoardHistory::started_at(board, pla, rules, encore_phase, always);
    }

    /// A fresh history at `board` with no moves, results or handicap
    /// settings: what both [`BoardHistory::new`] and a reset start from.
    fn started_at(
        board: &Board,
        pla: Player,
        rules: Rules,
        encore_phase: u8,
        always_compute_pass_alive_under_suicide_rules: bool,
    ) -> BoardHistory {
        let n = arr_size(board.x_size(), board.y_size());
        let mut h = BoardHistory {
            rules,
            moves: Vec::new(),
            prevent_encore_history: Vec::new(),
            ko_hash_history: Vec::new(),
            first_turn_idx_with_ko_history: 0,
            initial_board: board.clone(),
            initial_pla: pla,
            initial_encore_phase: encore_phase,
            initial_turn_number: 0,
            assume_multiple_starting_black_moves_are_handicap: false,
            white_has_moved: false,
            override_num_handicap_stones: None,
            always_compute_pass_alive_under_suicide_rules,
            recent_boards: std::array::from_fn(|_| board.clone()),
            current_recent_board_idx: 0,
            presumed_next_pla: pla,
            was_ever_occupied_or_played: vec![false; n].into_boxed_slice(),
            super_ko_banned: vec![false; n].into_boxed_slice(),
            consecutive_ending_passes: 0,
            hashes_before_black_pass: Vec::new(),
            hashes_before_white_pass: Vec::new(),
            encore_phase,
            num_turns_this_phase: 0,
            num_approx_valid_turns_this_phase: 0,
            num_consec_valid_turns_this_game: 0,
            ko_recap_blocked: vec![false; n].into_boxed_slice(),
            ko_recap_block_hash: Hash128::ZERO,
            ko_captures_in_encore: Vec::new(),
            second_encore_start_colors: vec![Color::Empty; n].into_boxed_slice(),
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
            h.was_ever_occupied_or_played[loc.idx()] = board.get(loc) != Color::Empty;
        }
        if encore_phase == 2 {
            h.second_encore_start_colors.clone_from(&board.colors);
        }
        h.ko_hash_history.push(ko_hash(
            &rules,
            board,
            pla,
            encore_phase,
            h.ko_recap_block_hash,
        ));
        if rules.scoring_rule == ScoringRule::Territory {
            // Territory scoring "chills" one point per stone played: count
            // the stones already on the board and those captured.
            for loc in board.locs() {
                match board.get(loc) {
                    Color::Black => h.white_bonus_score += 1.0,
                    Color::White => h.white_bonus_score -= 1.0,
                    _ => {}
                }
            }
            let net_white_captures =
                board.num_white_captures() as f32 - board.num_black_captures() as f32;
            h.white_bonus_score -= net_white_captures;
        }
        h.white_handicap_bonus_score = h.compute_white_handicap_bonus() as f32;
        h
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
        let mut b = self.initial_board.clone();
        for ((mv, pla), pe) in moves.into_iter().zip(prevent) {
            h.play_with_options(&mut b, mv, pla, pe);
        }
        *self = h;
        *board = b;
        true
    }

    /// Replays the game from its initial position, calling `before_move`
    /// with the board and history before each move and the player of that
    /// move (KataGo's `getGraphHashFromScratch` walks the game so).
    pub fn replay(&self, mut before_move: impl FnMut(&Board, &BoardHistory, Player)) {
        let mut h = self.copy_to_initial();
        let mut b = self.initial_board.clone();
        for (&(mv, pla), &pe) in self.moves.iter().zip(&self.prevent_encore_history) {
            before_move(&b, &h, pla);
            h.play_with_options(&mut b, mv, pla, pe);
        }
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

    /// Whether pass-alive areas are computed as if multi-stone suicide were
    /// legal whatever the rules (training rows record it, C68).
    pub fn always_compute_pass_alive_under_suicide_rules(&self) -> bool {
        self.always_compute_pass_alive_under_suicide_rules
    }

    /// The suicide rule pass-alive computations use.
    pub fn suicide_legal_for_pass_alive(&self) -> bool {
        self.rules.multi_stone_suicide_legal || self.always_compute_pass_alive_under_suicide_rules
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
