//! The game as GTP sees it, kept exactly as KataGo's GTP engine keeps its
//! bot's root: an initial position (empty, handicap stones or
//! `set_position` stones) with its player to move, the moves the controller
//! sent since (for `undo`, which replays them), and the live board with its
//! [`BoardHistory`] (ko/superko, encore, passes, handicap bonus) and the
//! player to move.
//!
//! `play` is tolerant like KataGo's (`Search::makeMove`): the point must be
//! empty, but suicide and ko or superko violations sent by a controller are
//! accepted so that a game a GUI records is never refused half-way; a move
//! out of turn restarts the history from the current board with that
//! player to move, as KataGo does.

use crate::game::{Board, BoardHistory, Color, GameOptions, GameState, Loc, Move, Player, Rules};

/// The current game: the initial position, the moves sent since, and the
/// live [`GameState`] (which carries the config's [`GameOptions`], so they
/// survive every command that starts a new game).
#[derive(Clone)]
pub struct GtpGame {
    rules: Rules,
    initial_board: Board,
    initial_pla: Player,
    moves: Vec<(Move, Player)>,
    state: GameState,
}

impl GtpGame {
    /// An empty board of the given size (already checked by the caller),
    /// Black to move, with `options`.
    pub fn new(board: Board, rules: Rules, options: GameOptions) -> GtpGame {
        GtpGame {
            rules,
            initial_board: board.clone(),
            initial_pla: Player::Black,
            moves: Vec::new(),
            state: GameState::start(board, Player::Black, rules, options),
        }
    }

    /// The options in force (`preventCleanupPhase`, ...).
    pub fn options(&self) -> GameOptions {
        self.state.options
    }

    /// Sets the options, replaying the game under them.
    pub fn set_options(&mut self, options: GameOptions) {
        self.state.options = options;
        let moves = std::mem::take(&mut self.moves);
        self.replay(moves);
    }

    /// Current board.
    pub fn board(&self) -> &Board {
        &self.state.board
    }

    /// The history of the current position (rules, ko, encore, result).
    pub fn history(&self) -> &BoardHistory {
        &self.state.hist
    }

    /// The current position (what the search starts from).
    pub fn state(&self) -> &GameState {
        &self.state
    }

    /// Rules, komi included.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The position before the first move (handicap / setup stones).
    pub fn initial_board(&self) -> &Board {
        &self.initial_board
    }

    /// The player to move in the initial position.
    pub fn initial_pla(&self) -> Player {
        self.initial_pla
    }

    /// Moves played since the initial position.
    pub fn moves(&self) -> &[(Move, Player)] {
        &self.moves
    }

    /// The player to move now.
    pub fn next_pla(&self) -> Player {
        self.state.next
    }

    /// Board width.
    pub fn x_size(&self) -> usize {
        self.state.x_size()
    }

    /// Board height.
    pub fn y_size(&self) -> usize {
        self.state.y_size()
    }

    /// Whether the rules say the game is over (passes, or the encore).
    pub fn is_finished(&self) -> bool {
        self.state.hist.is_game_finished()
    }

    /// See [`GameState::is_legal_tolerant`].
    pub fn is_legal_tolerant(&self, mv: Move, pla: Player) -> bool {
        self.state.is_legal_tolerant(mv, pla)
    }

    /// Plays `mv` for `pla` as [`GameState::play_tolerant`] and records it;
    /// returns whether it was played.
    pub fn play(&mut self, mv: Move, pla: Player) -> bool {
        if !self.state.play_tolerant(mv, pla) {
            return false;
        }
        self.moves.push((mv, pla));
        true
    }

    /// See [`GameState::set_player_if_new`] (a controller asking `genmove`
    /// out of turn).
    pub fn set_player_if_new(&mut self, pla: Player) {
        self.state.set_player_if_new(pla);
    }

    /// Whether `pla` may play `mv` now under the rules (simple ko, superko,
    /// suicide, encore): what a search may choose.
    pub fn is_legal_strict(&self, mv: Move, pla: Player) -> bool {
        pla == self.state.next && self.state.is_legal(mv)
    }

    /// Takes back the last move; false when there is none.
    pub fn undo(&mut self) -> bool {
        let Some(_) = self.moves.pop() else {
            return false;
        };
        let moves = std::mem::take(&mut self.moves);
        self.replay(moves);
        true
    }

    /// Rebuilds the state from the initial position and `moves`.
    fn replay(&mut self, moves: Vec<(Move, Player)>) {
        self.state = GameState::start(
            self.initial_board.clone(),
            self.initial_pla,
            self.rules,
            self.state.options,
        );
        self.moves.clear();
        for (mv, pla) in moves {
            // Moves once accepted stay acceptable: tolerant legality depends
            // on the board only, and the board replays identically.
            if !self.play(mv, pla) {
                break;
            }
        }
    }

    /// Restarts from an empty board of the same size.
    pub fn clear(&mut self) {
        self.set_initial(
            Board::new(self.x_size(), self.y_size()).unwrap_or_else(|_| self.state.board.clone()),
            Player::Black,
        );
    }

    /// Replaces everything with a new initial position (options kept).
    pub fn set_initial(&mut self, board: Board, pla: Player) {
        self.initial_board = board;
        self.initial_pla = pla;
        self.replay(Vec::new());
    }

    /// Starts a new game on `board` with `pla` to move under `rules`,
    /// keeping the options (`boardsize`, `loadsgf`).
    pub fn restart(&mut self, board: Board, pla: Player, rules: Rules) {
        self.rules = rules;
        self.set_initial(board, pla);
    }

    /// Changes the komi only.
    pub fn set_komi(&mut self, komi: f32) {
        self.rules.komi = komi;
        self.state.hist.set_komi(komi);
    }

    /// Changes the rules (komi kept), replaying the game under them.
    pub fn set_rules_keep_komi(&mut self, rules: Rules) {
        self.rules = Rules {
            komi: self.rules.komi,
            ..rules
        };
        let moves = std::mem::take(&mut self.moves);
        self.replay(moves);
    }

    /// Sets up `stones` on an empty board (Black to move, no history); fails
    /// without changing anything if a point repeats or a chain would have
    /// no liberties.
    pub fn set_position(&mut self, stones: &[(Loc, Color)]) -> bool {
        let Ok(mut board) = Board::new(self.x_size(), self.y_size()) else {
            return false;
        };
        if !board.set_stones_fail_if_no_libs(stones) {
            return false;
        }
        if stones.iter().any(|&(loc, c)| board.get(loc) != c) {
            return false;
        }
        self.set_initial(board, Player::Black);
        true
    }

    /// Sets up black handicap stones on an empty board, White to move.
    pub fn set_handicap(&mut self, locs: &[Loc]) -> bool {
        let Ok(mut board) = Board::new(self.x_size(), self.y_size()) else {
            return false;
        };
        let stones: Vec<(Loc, Color)> = locs.iter().map(|&l| (l, Color::Black)).collect();
        if !board.set_stones_fail_if_no_libs(&stones) {
            return false;
        }
        self.set_initial(board, Player::White);
        true
    }

    /// The stones on the board in KataGo's scan order (top row first, left
    /// to right), as GTP vertices.
    pub fn stone_vertices(&self, filter: impl Fn(Loc) -> bool) -> Vec<String> {
        let b = &self.state.board;
        b.locs()
            .filter(|&l| b.get(l) != Color::Empty && filter(l))
            .map(|l| Move::Play(l).to_gtp(self.x_size(), self.y_size()))
            .collect()
    }

    /// `showboard`, in KataGo's layout (`printBasicInfo`): move number and
    /// hash, the board with the last three moves numbered, next player,
    /// rules as JSON and captures.
    pub fn showboard(&self) -> String {
        let b = &self.state.board;
        let mut s = self.board_text();
        s.push('\n');
        s.push_str(&format!("Next player: {}\n", self.state.next));
        s.push_str(&format!("Rules: {}\n", self.rules.to_json(true)));
        s.push_str(&format!("B stones captured: {}\n", b.num_black_captures()));
        s.push_str(&format!("W stones captured: {}\n", b.num_white_captures()));
        s
    }

    /// KataGo's `Board::printBoard` with the move history: the move
    /// number, the position hash and the grid, the last three moves
    /// numbered (`showboard` and `debug_moves` begin with it).
    pub fn board_text(&self) -> String {
        let b = &self.state.board;
        let (xs, ys) = (b.x_size(), b.y_size());
        let mut s = format!("MoveNum: {} HASH: {}\n", self.moves.len(), b.pos_hash());
        const COLS: &[u8; 25] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";
        s.push_str("  ");
        for x in 0..xs {
            if x <= 24 {
                s.push(' ');
                s.push(COLS[x] as char);
            } else {
                s.push('A');
                s.push(COLS[x - 25] as char);
            }
        }
        s.push('\n');
        let recent_start = self.moves.len().saturating_sub(3);
        for y in 0..ys {
            s.push_str(&format!("{:2} ", ys - y));
            for x in 0..xs {
                let loc = Loc::from_xy(x, y, xs);
                s.push(b.get(loc).symbol());
                let mark = self.moves[recent_start..]
                    .iter()
                    .position(|&(m, _)| m == Move::Play(loc));
                match mark {
                    Some(i) => s.push_str(&(i + 1).to_string()),
                    None if x + 1 < xs => s.push(' '),
                    None => {}
                }
            }
            s.push('\n');
        }
        s
    }
}

/// KataGo's fixed handicap points (`PlayUtils::placeFixedHandicap`) for
/// `n` stones, in KataGo's scan order (top row first), or its error text.
pub fn fixed_handicap_points(x_size: usize, y_size: usize, n: usize) -> Result<Vec<Loc>, String> {
    if x_size < 7 || y_size < 7 {
        return Err("Board is too small for fixed handicap".to_string());
    }
    if (x_size.is_multiple_of(2) || y_size.is_multiple_of(2)) && n > 4 {
        return Err("Fixed handicap > 4 is not allowed on boards with even dimensions".to_string());
    }
    if (x_size <= 7 || y_size <= 7) && n > 4 {
        return Err("Fixed handicap > 4 is not allowed on boards with size 7".to_string());
    }
    if n < 2 {
        return Err("Fixed handicap < 2 is not allowed".to_string());
    }
    if n > 9 {
        return Err("Fixed handicap > 9 is not allowed".to_string());
    }
    // Corner, other corner, side middle.
    let coords = |size: usize| {
        let edge = if size <= 12 { 2 } else { 3 };
        [edge, size - 1 - edge, size / 2]
    };
    let (xc, yc) = (coords(x_size), coords(y_size));
    const ORDER: [(usize, usize); 9] = [
        (0, 1),
        (1, 0),
        (0, 0),
        (1, 1),
        (0, 2),
        (1, 2),
        (2, 0),
        (2, 1),
        (2, 2),
    ];
    let picks: &[(usize, usize)] = match n {
        5 => &[(0, 1), (1, 0), (0, 0), (1, 1), (2, 2)],
        7 => &[(0, 1), (1, 0), (0, 0), (1, 1), (0, 2), (1, 2), (2, 2)],
        _ => &ORDER[..n],
    };
    let mut locs: Vec<Loc> = picks
        .iter()
        .map(|&(xi, yi)| Loc::from_xy(xc[xi], yc[yi], x_size))
        .collect();
    locs.sort_by_key(|l| {
        let (x, y) = l.xy(x_size);
        (y, x)
    });
    Ok(locs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gtp(locs: &[Loc], size: usize) -> Vec<String> {
        locs.iter()
            .map(|&l| Move::Play(l).to_gtp(size, size))
            .collect()
    }

    #[test]
    fn fixed_handicap_matches_katago() {
        assert_eq!(
            gtp(&fixed_handicap_points(19, 19, 2).unwrap(), 19),
            ["Q16", "D4"]
        );
        assert_eq!(
            gtp(&fixed_handicap_points(19, 19, 3).unwrap(), 19),
            ["D16", "Q16", "D4"]
        );
        assert_eq!(
            gtp(&fixed_handicap_points(19, 19, 4).unwrap(), 19),
            ["D16", "Q16", "D4", "Q4"]
        );
        assert_eq!(
            gtp(&fixed_handicap_points(19, 19, 9).unwrap(), 19),
            ["D16", "K16", "Q16", "D10", "K10", "Q10", "D4", "K4", "Q4"]
        );
        assert_eq!(
            gtp(&fixed_handicap_points(9, 9, 3).unwrap(), 9),
            ["C7", "G7", "C3"]
        );
        assert!(fixed_handicap_points(5, 5, 2).is_err());
        assert!(fixed_handicap_points(19, 19, 10).is_err());
        assert!(fixed_handicap_points(19, 19, 1).is_err());
        assert!(fixed_handicap_points(10, 10, 5).is_err());
    }

    fn game9() -> GtpGame {
        GtpGame::new(
            Board::new(9, 9).unwrap(),
            Rules::tromp_taylor(),
            GameOptions::default(),
        )
    }

    fn p(s: &str) -> Move {
        Move::parse(s, 9, 9).unwrap()
    }

    #[test]
    fn play_undo_and_capture() {
        let mut g = game9();
        for (m, pla) in [
            ("E5", Player::White),
            ("E4", Player::Black),
            ("E6", Player::Black),
            ("D5", Player::Black),
        ] {
            assert!(g.play(p(m), pla));
        }
        assert!(g.play(p("F5"), Player::Black));
        assert_eq!(g.board().get(p("E5").loc().unwrap()), Color::Empty);
        assert!(!g.play(p("F5"), Player::White), "occupied");
        assert!(g.undo());
        assert_eq!(g.board().get(p("E5").loc().unwrap()), Color::White);
        assert_eq!(g.moves().len(), 4);
        assert_eq!(g.next_pla(), Player::White);
        while g.undo() {}
        assert!(g.board().is_empty());
    }

    #[test]
    fn showboard_layout() {
        let mut g = game9();
        g.play(p("C3"), Player::Black);
        let s = g.showboard();
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[0].starts_with("MoveNum: 1 HASH: "));
        assert_eq!(lines[1], "   A B C D E F G H J");
        assert_eq!(lines[2], " 9 . . . . . . . . .");
        assert_eq!(lines[8], " 3 . . X1. . . . . .");
        assert!(s.contains("Next player: White\n"));
        assert!(s.contains("B stones captured: 0\n"));
    }

    #[test]
    fn set_position_refuses_overlaps_and_dead_stones() {
        let mut g = game9();
        let l = |s: &str| p(s).loc().unwrap();
        assert!(!g.set_position(&[(l("A1"), Color::Black), (l("A1"), Color::White)]));
        assert!(!g.set_position(&[
            (l("A1"), Color::Black),
            (l("A2"), Color::White),
            (l("B1"), Color::White)
        ]));
        assert!(g.set_position(&[(l("A1"), Color::Black), (l("B2"), Color::White)]));
        assert_eq!(g.next_pla(), Player::Black);
        assert!(g.moves().is_empty());
    }

    fn play_all(g: &mut GtpGame, moves: &[(&str, Player)]) {
        for &(m, pla) in moves {
            assert!(g.play(p(m), pla), "{m}");
        }
    }

    /// A ko at D5/E5 where Black has just captured at E5.
    fn ko_game() -> GtpGame {
        let mut g = game9();
        use Player::{Black as B, White as W};
        play_all(
            &mut g,
            &[
                ("C5", B),
                ("F5", W),
                ("D4", B),
                ("E4", W),
                ("D6", B),
                ("E6", W),
                ("A1", B),
                ("D5", W),
                ("E5", B),
            ],
        );
        g
    }

    #[test]
    fn ko_recapture_is_illegal_for_search_but_tolerated_from_controller() {
        let mut g = ko_game();
        assert_eq!(g.board().get(p("D5").loc().unwrap()), Color::Empty);
        assert!(!g.is_legal_strict(p("D5"), Player::White), "simple ko");
        assert!(g.is_legal_strict(p("A9"), Player::White));
        assert!(
            !g.is_legal_strict(p("A9"), Player::Black),
            "not Black's turn"
        );
        assert!(g.play(p("D5"), Player::White), "KataGo's play tolerates ko");
        assert_eq!(g.board().get(p("E5").loc().unwrap()), Color::Empty);
        assert!(!g.play(p("D5"), Player::Black), "occupied");
    }

    #[test]
    fn rule_changes_replay_the_game_and_keep_ko_bans() {
        let mut g = ko_game();
        let rules = Rules::parse_without_komi("chinese", 7.5).unwrap();
        g.set_rules_keep_komi(rules);
        assert_eq!(g.moves().len(), 9, "replayed under the new rules");
        // The immediate retake stays banned; after White's tolerated retake,
        // Black's recapture is banned in turn.
        assert!(!g.is_legal_strict(p("D5"), Player::White));
        assert!(g.play(p("D5"), Player::White));
        assert!(!g.is_legal_strict(p("E5"), Player::Black));
    }

    #[test]
    fn out_of_turn_moves_restart_history_and_undo_replays_them() {
        let mut g = game9();
        assert!(g.play(p("E5"), Player::Black));
        assert!(g.play(p("C3"), Player::Black), "out of turn accepted");
        assert_eq!(g.next_pla(), Player::White);
        assert_eq!(g.history().moves().len(), 1, "history restarted");
        assert_eq!(g.moves().len(), 2, "GTP move list kept");
        assert!(g.undo());
        assert_eq!(g.next_pla(), Player::White);
        assert_eq!(g.board().get(p("C3").loc().unwrap()), Color::Empty);
        assert_eq!(g.board().get(p("E5").loc().unwrap()), Color::Black);
        g.set_player_if_new(Player::Black);
        assert_eq!(g.next_pla(), Player::Black);
        assert!(g.is_legal_strict(p("C3"), Player::Black));
    }

    #[test]
    fn passes_end_area_games_and_prevent_the_encore_under_territory_rules() {
        let mut g = game9();
        play_all(&mut g, &[("E5", Player::Black), ("pass", Player::White)]);
        assert!(!g.is_finished());
        assert!(g.play(Move::Pass, Player::Black));
        assert!(g.is_finished());
        assert_eq!(g.history().final_white_minus_black_score(), -73.5);
        assert!(g.undo());
        assert!(!g.is_finished());

        let mut j = game9();
        j.set_rules_keep_komi(Rules::parse_without_komi("japanese", 6.5).unwrap());
        play_all(
            &mut j,
            &[
                ("E5", Player::Black),
                ("pass", Player::White),
                ("pass", Player::Black),
            ],
        );
        assert!(
            !j.is_finished(),
            "preventCleanupPhase: no encore, not scored"
        );
        assert_eq!(j.history().encore_phase(), 0);
        j.set_options(GameOptions {
            prevent_cleanup_phase: false,
            ..GameOptions::default()
        });
        assert_eq!(j.history().encore_phase(), 1, "encore once allowed");
    }

    #[test]
    fn handicap_stones_give_white_the_rules_bonus() {
        let mut g = game9();
        g.set_rules_keep_komi(Rules::parse_without_komi("chinese", 7.5).unwrap());
        let locs = fixed_handicap_points(9, 9, 3).unwrap();
        assert!(g.set_handicap(&locs));
        assert_eq!(g.next_pla(), Player::White);
        assert_eq!(g.history().white_handicap_bonus_score(), 3.0);
        assert_eq!(g.state().next, Player::White);
    }
}
