//! `kata-raw-nn` and `kata-raw-human-nn`: one net's raw output as
//! KataGo's GTP prints it.

use crate::game::{Loc, Move, Player};
use crate::search::{EvalOptions, NnSearchEvaluator};

use super::position::GtpGame;

/// KataGo's `rawNN` text: `evaluator`'s raw output for `game` with
/// `pla` to move, in one symmetry or all; a human-style net
/// (`human`) prints its score moments instead of the lead and the
/// time left, as KataGo's.
pub(super) fn raw_nn_text(
    evaluator: &NnSearchEvaluator,
    game: &GtpGame,
    pla: Player,
    symmetry: Option<usize>,
    opts: &EvalOptions,
    human: bool,
) -> Result<String, String> {
    let mut g = game.clone();
    g.set_player_if_new(pla);
    let state = g.state().clone();
    let (xs, ys) = (g.x_size(), g.y_size());
    let mut out = String::new();
    for sym in 0..8 {
        if symmetry.is_some_and(|s| s != sym) {
            continue;
        }
        let nn = evaluator
            .evaluate_in_symmetry(&state, sym, opts)
            .map_err(|e| e.to_string())?;
        out += &format!("symmetry {sym}\n");
        out += &format!("whiteWin {:.6}\n", nn.white_win_prob);
        out += &format!("whiteLoss {:.6}\n", nn.white_loss_prob);
        out += &format!("noResult {:.6}\n", nn.white_no_result_prob);
        if human {
            out += &format!("whiteScore {:.3}\n", nn.white_score_mean);
            out += &format!("whiteScoreSq {:.3}\n", nn.white_score_mean_sq);
        } else {
            out += &format!("whiteLead {:.3}\n", nn.white_lead);
            out += &format!("whiteScoreSelfplay {:.3}\n", nn.white_score_mean);
            out += &format!("whiteScoreSelfplaySq {:.3}\n", nn.white_score_mean_sq);
            out += &format!("varTimeLeft {:.3}\n", nn.var_time_left);
        }
        out += &format!("shorttermWinlossError {:.3}\n", nn.shortterm_winloss_error);
        out += &format!("shorttermScoreError {:.3}\n", nn.shortterm_score_error);
        out += "policy\n";
        let prob = |p: f32| {
            if p < 0.0 {
                "    NAN ".to_string()
            } else {
                format!("{p:8.6} ")
            }
        };
        for y in 0..ys {
            for x in 0..xs {
                out += &prob(nn.policy[Move::Play(Loc::from_xy(x, y, xs)).policy_index(xs, ys)]);
            }
            out += "\n";
        }
        out += &format!("policyPass {}\n", prob(nn.policy[nn.pass_index()]));
        out += "whiteOwnership\n";
        let own = nn.white_ownership.as_deref().unwrap_or(&[]);
        for y in 0..ys {
            for x in 0..xs {
                let i = Move::Play(Loc::from_xy(x, y, xs)).policy_index(xs, ys);
                let o = own.get(i).copied().unwrap_or(0.0);
                out += &format!("{o:9.7} ");
            }
            out += "\n";
        }
        out += "\n";
    }
    Ok(out.trim().to_string())
}

/// KataGo's `rawNNBrief` (`debug_moves rawstats`): in each symmetry,
/// `evaluator`'s White win-loss (in centi-units) and lead after `branch`
/// is played tolerantly from `game`'s position, and, when the branch is
/// not empty, the policy of its last move in the position before it.
/// `options` gives the inputs for the player to move.
pub(super) fn raw_nn_brief(
    evaluator: &NnSearchEvaluator,
    game: &GtpGame,
    branch: &[Move],
    options: impl Fn(Player) -> EvalOptions,
) -> Result<String, String> {
    let mut end = game.clone();
    let mut before_last = None;
    for &mv in branch {
        let pla = end.next_pla();
        before_last = Some((end.clone(), mv));
        if !end.play(mv, pla) {
            return Ok("illegal move sequence".to_string());
        }
    }
    let (xs, ys) = (game.x_size(), game.y_size());
    let mut policy = String::from("Policy: ");
    let mut win_loss = String::from("White winloss: ");
    let mut lead = String::from("White lead: ");
    for sym in 0..8 {
        let nn = evaluator
            .evaluate_in_symmetry(end.state(), sym, &options(end.next_pla()))
            .map_err(|e| e.to_string())?;
        win_loss += &format!("{:.2}c ", 100.0 * (nn.white_win_prob - nn.white_loss_prob));
        lead += &format!("{:.2} ", nn.white_lead);
        if let Some((before, mv)) = &before_last {
            let nn = evaluator
                .evaluate_in_symmetry(before.state(), sym, &options(before.next_pla()))
                .map_err(|e| e.to_string())?;
            policy += &format!("{:.2}% ", 100.0 * nn.policy[mv.policy_index(xs, ys)]);
        }
    }
    Ok(format!("{policy}\n{win_loss}\n{lead}").trim().to_string())
}
