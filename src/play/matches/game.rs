//! One match game between two bots (KataGo's `Play::runGame` with a black
//! and a white bot): each bot searches with its own tree and parameters,
//! both trees follow every move, the game ends by two passes (scored with
//! the rules' scoring, as self-play scores), by resignation (KataGo's
//! rule) or at `maxMovesPerGame` (scored as it stands).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::Rng;

use super::settings::{BotSpec, MatchSettings};
use crate::game::sgf::{write_sgf, GameRecord};
use crate::game::{Board, BoardHistory, GameState, Move, Player, Rules};
use crate::search::{EvalError, NnSearchEvaluator, RunOptions, Search, SearchError, SearchStats};

/// The shared start of a pair of games: board, rules (with komi) and the
/// opening moves both games begin with.
#[derive(Debug, Clone)]
pub struct Opening {
    /// The empty board of the game's size.
    pub board: Board,
    /// Rules and komi.
    pub rules: Rules,
    /// Moves played before the bots take over, black first.
    pub moves: Vec<Move>,
}

impl Opening {
    /// The position after the opening moves.
    pub fn start_state(&self) -> Result<GameState, SearchError> {
        let mut st = GameState::new(
            self.board.clone(),
            BoardHistory::new(&self.board, Player::Black, self.rules),
            Player::Black,
        );
        for &mv in &self.moves {
            let pla = st.next;
            if !st.play_tolerant(mv, pla) {
                return Err(bug("opening move is illegal"));
            }
        }
        Ok(st)
    }
}

/// How a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameEnd {
    /// Both passed (or everything was pass-alive); scored.
    Scored,
    /// A side resigned.
    Resignation,
    /// `maxMovesPerGame` reached; scored as it stands.
    MoveLimit,
}

impl GameEnd {
    /// Every way a game ends.
    pub const ALL: [GameEnd; 3] = [GameEnd::Scored, GameEnd::Resignation, GameEnd::MoveLimit];

    /// Its name in the SGF's game comment (`end=...`), read back by
    /// `engine match -resume`.
    pub fn comment_name(self) -> &'static str {
        match self {
            GameEnd::Scored => "scored",
            GameEnd::Resignation => "resignation",
            GameEnd::MoveLimit => "maxMovesPerGame",
        }
    }
}

/// The start of match game `g`'s SGF comment (on opening `k`), read back by
/// `engine match -resume`.
pub fn game_comment(g: u64, k: u64) -> String {
    format!("match game {g}, opening {k}")
}

/// The searches one side of a game (or one bot over several games) made:
/// how many, their new playouts and their wall time, so a match shows
/// each bot's speed beside its results (equal visits or equal time?).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Thinking {
    /// Searches, one per move chosen.
    pub searches: u64,
    /// Playouts they added (reused visits not counted).
    pub playouts: u64,
    /// Their wall time in seconds.
    pub seconds: f64,
}

impl Thinking {
    /// Counts one search.
    pub fn add_search(&mut self, stats: &SearchStats) {
        self.searches += 1;
        self.playouts += stats.playouts.max(0) as u64;
        self.seconds += stats.seconds;
    }

    /// Adds `other`'s searches to these.
    pub fn merge(&mut self, other: &Thinking) {
        self.searches += other.searches;
        self.playouts += other.playouts;
        self.seconds += other.seconds;
    }

    /// Mean seconds per search; `None` without searches.
    pub fn seconds_per_move(&self) -> Option<f64> {
        (self.searches > 0).then(|| self.seconds / self.searches as f64)
    }

    /// Playouts per second of search; `None` without search time.
    pub fn playouts_per_second(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.playouts as f64 / self.seconds)
    }

    /// The game comment's key for `side`'s searches.
    fn comment_key(side: Player) -> &'static str {
        match side {
            Player::Black => "blackSearch=",
            Player::White => "whiteSearch=",
        }
    }

    /// `side`'s searches as a field of the SGF's game comment, read back by
    /// [`Thinking::from_comment`]: `blackSearch=120 moves 12000 playouts 40.512s`.
    pub fn comment_field(&self, side: Player) -> String {
        format!(
            "{}{} moves {} playouts {:.3}s",
            Self::comment_key(side),
            self.searches,
            self.playouts,
            self.seconds
        )
    }

    /// `side`'s searches in a game comment written by [`play_match_game`];
    /// `None` where it has none (games of older versions) or they do not
    /// parse.
    pub fn from_comment(comment: &str, side: Player) -> Option<Thinking> {
        let key = Self::comment_key(side);
        let text = comment
            .split(", ")
            .find_map(|field| field.strip_prefix(key))?;
        match text.split_whitespace().collect::<Vec<_>>()[..] {
            [searches, "moves", playouts, "playouts", seconds] => Some(Thinking {
                searches: searches.parse().ok()?,
                playouts: playouts.parse().ok()?,
                seconds: seconds
                    .strip_suffix('s')?
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)?,
            }),
            _ => None,
        }
    }
}

/// A finished match game.
#[derive(Debug, Clone)]
pub struct GameOutcome {
    /// Bot index playing black.
    pub black: usize,
    /// Bot index playing white.
    pub white: usize,
    /// The winner; `None` for a draw or no result.
    pub winner: Option<Player>,
    /// No result (e.g. an endless cycle under some rules): counted as a draw.
    pub no_result: bool,
    /// How the game ended.
    pub end: GameEnd,
    /// Final score, white minus black (0 after a resignation).
    pub white_minus_black: f32,
    /// Moves in the game, opening included.
    pub num_moves: usize,
    /// SGF's `RE` text: `B+3.5`, `W+R`, `0` (draw), `Void`.
    pub result_text: String,
    /// The game as SGF.
    pub sgf: String,
    /// Black's searches (none for a game read back by `-resume`).
    pub black_thinking: Thinking,
    /// White's searches (as black's).
    pub white_thinking: Thinking,
}

fn bug(msg: &str) -> SearchError {
    SearchError::Eval(EvalError(format!("match game: {msg}")))
}

/// KataGo's resignation rule: after at least `1 + area / 5` moves of the
/// game, `pla` (who just moved) resigns when each of the last
/// `resignConsecTurns` searches (both bots') valued the game below
/// `resignThreshold` for `pla` (win-loss for white in `white_values`).
fn should_resign(
    s: &MatchSettings,
    white_values: &[f64],
    turn: usize,
    area: usize,
    pla: Player,
) -> bool {
    if !s.allow_resignation || white_values.len() < s.resign_consec_turns {
        return false;
    }
    if turn < 1 + area / 5 {
        return false;
    }
    white_values[white_values.len() - s.resign_consec_turns..]
        .iter()
        .all(|&v| {
            let loser = if v < s.resign_threshold {
                Some(Player::White)
            } else if v > -s.resign_threshold {
                Some(Player::Black)
            } else {
                None
            };
            loser == Some(pla)
        })
}

/// Plays one game from `opening`: `black` and `white` are (bot index,
/// spec, evaluator). `None` when `stop` was raised first.
#[allow(clippy::too_many_arguments)]
pub fn play_match_game(
    s: &MatchSettings,
    black: (usize, &BotSpec, &Arc<NnSearchEvaluator>),
    white: (usize, &BotSpec, &Arc<NnSearchEvaluator>),
    opening: &Opening,
    comment: &str,
    rng: &mut StdRng,
    stop: &AtomicBool,
) -> Result<Option<GameOutcome>, SearchError> {
    let start = opening.start_state()?;
    let (xs, ys) = (start.board.x_size(), start.board.y_size());
    let area = xs * ys;
    let mut sb = Search::new(
        black.1.params.clone(),
        black.2.clone(),
        start.clone(),
        rng.gen(),
    );
    let mut sw = Search::new(white.1.params.clone(), white.2.clone(), start, rng.gen());
    sb.set_pattern_bonus_table(black.1.patterns.clone());
    sw.set_pattern_bonus_table(white.1.patterns.clone());
    sb.set_human_evaluator(black.1.human.clone());
    sw.set_human_evaluator(white.1.human.clone());
    if let Some(bytes) = s.tree_memory_limit {
        sb.set_tree_memory_limit(bytes);
        sw.set_tree_memory_limit(bytes);
    }
    let mut white_values: Vec<f64> = Vec::new();
    let (mut black_thinking, mut white_thinking) = (Thinking::default(), Thinking::default());
    let mut end = GameEnd::MoveLimit;
    let mut resigned: Option<Player> = None;
    let mut turn = 0usize;
    while sb.root_state().hist.moves().len() < s.max_moves_per_game {
        // Everything pass-alive: the game is over (as self-play ends it).
        {
            let st = sb.root_state();
            let mut hist = st.hist.clone();
            hist.end_game_if_all_pass_alive(&st.board);
            if hist.is_game_finished() {
                let done = GameState::new(st.board.clone(), hist, st.next);
                sb.set_position(done.clone());
                sw.set_position(done);
                end = GameEnd::Scored;
                break;
            }
        }
        let pla = sb.root_state().next;
        let (search, thinking) = if pla == Player::Black {
            (&mut sb, &mut black_thinking)
        } else {
            (&mut sw, &mut white_thinking)
        };
        let stats = search.run(&RunOptions {
            stop: Some(stop),
            ..RunOptions::default()
        })?;
        thinking.add_search(&stats);
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(None);
        }
        let view = search.view();
        white_values.push(view.root_values().win_loss);
        let mv = view.chosen_move(rng).unwrap_or(Move::Pass);
        if !sb.make_move(mv) || !sw.make_move(mv) {
            return Err(bug(&format!(
                "chosen move {} is illegal",
                mv.to_gtp(xs, ys)
            )));
        }
        turn += 1;
        if sb.root_state().hist.is_game_finished() {
            end = GameEnd::Scored;
            break;
        }
        if should_resign(s, &white_values, turn, area, pla) {
            resigned = Some(pla);
            end = GameEnd::Resignation;
            break;
        }
    }
    let st = sb.root_state().clone();
    drop((sb, sw));
    let (winner, no_result, white_minus_black, result_text) = match resigned {
        Some(loser) => (
            Some(loser.opp()),
            false,
            0.0,
            format!("{}+R", loser.opp().letter()),
        ),
        None => {
            let mut scored = st.hist.clone();
            if !(scored.is_game_finished() && scored.is_no_result()) {
                scored.end_and_score_game_now(&st.board);
            }
            let score = scored.final_white_minus_black_score();
            let text = if scored.is_no_result() {
                "Void".to_string()
            } else {
                match scored.winner() {
                    Some(p) => format!("{}+{}", p.letter(), score.abs()),
                    None => "0".to_string(),
                }
            };
            (scored.winner(), scored.is_no_result(), score, text)
        }
    };
    let mut rec = GameRecord::new(xs, ys);
    rec.komi = Some(st.hist.rules().komi);
    rec.rules = Some(st.hist.rules().to_compact_string());
    rec.player_black = Some(black.1.name.clone());
    rec.player_white = Some(white.1.name.clone());
    rec.result = Some(result_text.clone());
    // `end=` stays last: `-resume` reads what follows it.
    rec.game_comment = Some(format!(
        "{comment}, openingMoves={}, {}, {}, end={}",
        opening.moves.len(),
        black_thinking.comment_field(Player::Black),
        white_thinking.comment_field(Player::White),
        end.comment_name()
    ));
    rec.moves = st
        .hist
        .moves()
        .iter()
        .map(|&(mv, pla)| (pla, mv.loc().map(|l| l.xy(xs))))
        .collect();
    Ok(Some(GameOutcome {
        black: black.0,
        white: white.0,
        winner,
        no_result,
        end,
        white_minus_black,
        num_moves: st.hist.moves().len(),
        result_text,
        sgf: write_sgf(&rec),
        black_thinking,
        white_thinking,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn settings(text: &str) -> MatchSettings {
        let cfg = Config::from_cfg_str(text, "t.cfg").unwrap();
        MatchSettings::from_config(&cfg, "numGamesTotal", false).unwrap()
    }

    #[test]
    fn resignation_needs_both_bots_to_agree_for_long_enough() {
        let s = settings("resignThreshold = -0.9\nresignConsecTurns = 3\n");
        let area = 81;
        // White (just moved) hopeless in the last 3 searches, late enough.
        let v = [0.0, -0.95, -0.99, -0.97];
        assert!(should_resign(&s, &v, 20, area, Player::White));
        // Black is not the one losing.
        assert!(!should_resign(&s, &v, 20, area, Player::Black));
        // Too early in the game: 1 + 81/5 = 17 moves first.
        assert!(!should_resign(&s, &v, 16, area, Player::White));
        // One search disagrees.
        assert!(!should_resign(
            &s,
            &[-0.95, -0.5, -0.99],
            20,
            area,
            Player::White
        ));
        // Black hopeless: values above +0.9 for white.
        assert!(should_resign(
            &s,
            &[0.95, 0.99, 0.91],
            20,
            area,
            Player::Black
        ));
        let off = settings("allowResignation = false\n");
        assert!(!should_resign(&off, &[-1.0; 10], 50, area, Player::White));
    }

    #[test]
    fn thinking_survives_the_game_comment() {
        let black = Thinking {
            searches: 120,
            playouts: 11_873,
            seconds: 40.5123,
        };
        let white = Thinking {
            searches: 119,
            playouts: 8_000,
            seconds: 61.0,
        };
        let comment = format!(
            "{}, openingMoves=4, {}, {}, end=scored",
            game_comment(6, 3),
            black.comment_field(Player::Black),
            white.comment_field(Player::White)
        );
        let back = Thinking::from_comment(&comment, Player::Black).unwrap();
        assert_eq!((back.searches, back.playouts), (120, 11_873));
        assert!((back.seconds - 40.512).abs() < 1e-9);
        assert_eq!(Thinking::from_comment(&comment, Player::White), Some(white));
        // Older games say nothing of their searches; garbage is not read.
        assert_eq!(
            Thinking::from_comment(
                "match game 6, opening 3, openingMoves=4, end=scored",
                Player::Black
            ),
            None
        );
        for bad in [
            "x moves 1 playouts 2s",
            "1 moves 1 playouts -2s",
            "1 moves 1 playouts 2",
            "1 2 3",
        ] {
            let c = format!("match game 0, opening 0, blackSearch={bad}, end=scored");
            assert_eq!(Thinking::from_comment(&c, Player::Black), None, "{bad}");
        }
        // Speeds.
        assert_eq!(Thinking::default().seconds_per_move(), None);
        assert_eq!(Thinking::default().playouts_per_second(), None);
        assert_eq!(white.seconds_per_move(), Some(61.0 / 119.0));
        assert_eq!(white.playouts_per_second(), Some(8_000.0 / 61.0));
        let mut sum = black;
        sum.merge(&white);
        assert_eq!((sum.searches, sum.playouts), (239, 19_873));
    }
}
