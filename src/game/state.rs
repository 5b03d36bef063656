//! One game position with everything that decides its future: the board,
//! the history (ko/superko, encore, passes, rules, komi), the player to
//! move, and the options that change how moves are applied. GTP, the
//! analysis engine, the search and self-play all use this one type.

use super::{Board, BoardHistory, Move, Player, Rules};

/// Options from the config that change how moves are applied to a game
/// (KataGo's GTP and analysis keys; both default to true as in KataGo).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GameOptions {
    /// `preventCleanupPhase`: under territory scoring, passes that would
    /// start the encore leave the game past its normal end instead.
    /// Applies to moves sent by a controller or a query, not to the search.
    pub prevent_cleanup_phase: bool,
    /// `assumeMultipleStartingBlackMovesAreHandicap`: several black moves in
    /// a row at the start count as handicap stones.
    pub assume_multiple_starting_black_moves_are_handicap: bool,
}

impl Default for GameOptions {
    fn default() -> GameOptions {
        GameOptions {
            prevent_cleanup_phase: true,
            assume_multiple_starting_black_moves_are_handicap: true,
        }
    }
}

/// A position: board, history and the player to move (KataGo keeps the
/// player beside the history because GTP and the analysis protocol may let
/// a player move twice), plus the [`GameOptions`] in force.
#[derive(Debug)]
pub struct GameState {
    /// The stones.
    pub board: Board,
    /// Moves, rules, komi and the state of the game's phases.
    pub hist: BoardHistory,
    /// Who moves next.
    pub next: Player,
    /// How moves from outside (a controller, a query) are applied.
    pub options: GameOptions,
}

impl Clone for GameState {
    fn clone(&self) -> GameState {
        GameState {
            board: self.board.clone(),
            hist: self.hist.clone(),
            next: self.next,
            options: self.options,
        }
    }

    /// Into `self`'s buffers (the derived `clone_from` would allocate a
    /// whole new state): the search resets its per-thread state with this
    /// once per playout.
    fn clone_from(&mut self, source: &GameState) {
        let GameState {
            board,
            hist,
            next,
            options,
        } = source;
        self.board.clone_from(board);
        self.hist.clone_from(hist);
        self.next = *next;
        self.options = *options;
    }
}

impl GameState {
    /// A state from its parts, with default [`GameOptions`].
    pub fn new(board: Board, hist: BoardHistory, next: Player) -> GameState {
        GameState {
            board,
            hist,
            next,
            options: GameOptions::default(),
        }
    }

    /// A new game from `board` with `next` to move, no history, and the
    /// options applied to the history.
    pub fn start(board: Board, next: Player, rules: Rules, options: GameOptions) -> GameState {
        let mut hist = BoardHistory::new(&board, next, rules);
        hist.set_assume_multiple_starting_black_moves_are_handicap(
            options.assume_multiple_starting_black_moves_are_handicap,
        );
        GameState {
            board,
            hist,
            next,
            options,
        }
    }

    /// Board width.
    pub fn x_size(&self) -> usize {
        self.board.x_size()
    }

    /// Board height.
    pub fn y_size(&self) -> usize {
        self.board.y_size()
    }

    /// The rules, komi included.
    pub fn rules(&self) -> &Rules {
        self.hist.rules()
    }

    /// Whether `pla` may play `mv` as KataGo's GTP `play` and analysis
    /// queries allow: the point is empty (or it is a pass-for-ko); suicide
    /// and ko are the sender's business.
    pub fn is_legal_tolerant(&self, mv: Move, pla: Player) -> bool {
        self.hist.is_legal_tolerant(&self.board, mv, pla)
    }

    /// Whether the player to move may play `mv` under the rules (simple
    /// ko, superko, suicide, encore): what a search may choose.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.hist.is_legal(&self.board, mv, self.next)
    }

    /// Makes `pla` the player to move, restarting the history at the
    /// current board (same encore phase) if it was the other player's turn,
    /// as KataGo's `setPlayerIfNew` / `setPlayerAndClearHistory`.
    pub fn set_player_if_new(&mut self, pla: Player) {
        if pla == self.next {
            return;
        }
        self.board.clear_simple_ko_loc();
        let rules = *self.hist.rules();
        let encore = self.hist.encore_phase();
        let mut hist = BoardHistory::new_in_encore(&self.board, pla, rules, encore)
            .unwrap_or_else(|_| BoardHistory::new(&self.board, pla, rules));
        hist.set_assume_multiple_starting_black_moves_are_handicap(
            self.options
                .assume_multiple_starting_black_moves_are_handicap,
        );
        self.hist = hist;
        self.next = pla;
    }

    /// Plays a move sent from outside (GTP `play`, a query's move list) if
    /// [`GameState::is_legal_tolerant`]; returns whether it was played. A
    /// move out of turn first restarts the history
    /// ([`GameState::set_player_if_new`]); `preventCleanupPhase` applies.
    pub fn play_tolerant(&mut self, mv: Move, pla: Player) -> bool {
        if !self.is_legal_tolerant(mv, pla) {
            return false;
        }
        self.set_player_if_new(pla);
        self.hist
            .play_with_options(&mut self.board, mv, pla, self.options.prevent_cleanup_phase);
        self.next = pla.opp();
        true
    }

    /// Plays a legal move for the player to move, as the search does
    /// (KataGo's search never prevents the cleanup phase).
    pub fn play(&mut self, mv: Move) {
        self.hist.play(&mut self.board, mv, self.next);
        self.next = self.next.opp();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(s: &str) -> Move {
        Move::parse(s, 9, 9).unwrap()
    }

    #[test]
    fn out_of_turn_restarts_history_and_options_apply() {
        let rules = Rules::parse_without_komi("japanese", 6.5).unwrap();
        let board = Board::new(9, 9).unwrap();
        let mut g = GameState::start(board.clone(), Player::Black, rules, GameOptions::default());
        assert!(g.play_tolerant(mv("E5"), Player::Black));
        assert!(g.play_tolerant(mv("C3"), Player::Black), "out of turn");
        assert_eq!(g.hist.moves().len(), 1, "history restarted");
        assert_eq!(g.next, Player::White);
        assert!(!g.play_tolerant(mv("C3"), Player::White), "occupied");
        assert!(g.play_tolerant(Move::Pass, Player::White));
        assert!(g.play_tolerant(Move::Pass, Player::Black));
        assert_eq!(g.hist.encore_phase(), 0, "preventCleanupPhase");

        let opts = GameOptions {
            prevent_cleanup_phase: false,
            ..GameOptions::default()
        };
        let mut e = GameState::start(board, Player::Black, rules, opts);
        for (m, p) in [
            ("E5", Player::Black),
            ("pass", Player::White),
            ("pass", Player::Black),
        ] {
            assert!(e.play_tolerant(mv(m), p));
        }
        assert_eq!(e.hist.encore_phase(), 1, "encore allowed");
    }
}
