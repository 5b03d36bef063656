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
use crate::search::{EvalError, NnSearchEvaluator, RunOptions, Search, SearchError};

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
        let search = if pla == Player::Black {
            &mut sb
        } else {
            &mut sw
        };
        search.run(&RunOptions {
            stop: Some(stop),
            ..RunOptions::default()
        })?;
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
    rec.game_comment = Some(format!(
        "{comment}, openingMoves={}, end={}",
        opening.moves.len(),
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
}
