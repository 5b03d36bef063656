//! A finished self-play game as KataGo's one-line SGF.

use super::game_data::{FinishedGame, GameMode};
use crate::game::sgf::{GameRecord, NodeId, SgfNode};
use crate::game::BoardHistory;

/// KataGo's SGF name of a game type (`gtype=` in the root comment).
fn gtype_name(mode: GameMode) -> &'static str {
    match mode {
        GameMode::Normal => "normal",
        GameMode::CleanupTraining => "cleanuptraining",
        GameMode::Fork => "fork",
        GameMode::Handicap => "handicap",
        GameMode::SgfPos => "sgfpos",
        GameMode::HintPos => "hintpos",
        GameMode::HintFork => "hintfork",
        GameMode::Asym => "asym",
    }
}

/// The game as one SGF line with KataGo's root comment
/// (`startTurnIdx,initTurnNum,gameHash,gtype`) and per-move comments;
/// `scored` is the game's history scored as it ended.
pub(super) fn write_sgf_line(
    model_name: &str,
    game: &FinishedGame,
    scored: &BoardHistory,
    move_comments: &[String],
) -> String {
    let (start_hist, end_hist) = (&game.start_hist, &game.end_hist);
    let start_board = end_hist.initial_board();
    let (xs, ys) = (game.start_board.x_size(), game.start_board.y_size());
    let (num_extra_black, mode, game_hash) = (game.num_extra_black, game.mode, game.game_hash);
    let mut rec = GameRecord::new(xs, ys);
    rec.komi = Some(end_hist.rules().komi);
    rec.handicap = Some(num_extra_black);
    // The handicap stones (and any other start stones) as setup.
    for loc in start_board.locs() {
        let c = start_board.get(loc);
        if c != crate::game::Color::Empty {
            rec.setup.push((c, loc.xy(xs)));
        }
    }
    rec.rules = Some(end_hist.rules().to_compact_string());
    rec.player_black = Some(model_name.to_string());
    rec.player_white = Some(model_name.to_string());
    rec.result = Some(if scored.is_no_result() {
        "Void".to_string()
    } else {
        match scored.winner() {
            Some(p) => format!(
                "{}+{}",
                p.letter(),
                scored.final_white_minus_black_score().abs()
            ),
            None => "0".to_string(),
        }
    });
    let start = start_hist.moves().len();
    rec.game_comment = Some(format!(
        "startTurnIdx={start},initTurnNum={},gameHash={:032X},gtype={}",
        start_hist.initial_turn_number(),
        game_hash.0,
        gtype_name(mode)
    ));
    let mut tree = rec.to_tree();
    let mut parent = NodeId::ROOT;
    for (i, &(mv, pla)) in end_hist.moves().iter().enumerate() {
        let mut node = SgfNode::new();
        let text = match mv.loc() {
            Some(loc) => {
                let (x, y) = loc.xy(xs);
                crate::game::sgf::point(x, y)
            }
            None => String::new(),
        };
        node.push(&pla.letter().to_string(), text);
        if i >= start {
            if let Some(c) = move_comments.get(i - start) {
                node.push("C", c.as_str());
            }
        }
        match tree.add_child(parent, node) {
            Some(id) => parent = id,
            None => break,
        }
    }
    tree.to_sgf().replace('\n', " ")
}
