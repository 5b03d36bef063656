//! Side positions (`sidePositionProb`): positions one odd move away from
//! the game, searched after it and written as rows without game-outcome
//! targets, as KataGo's `Play::runGame` does to teach the net positions its
//! own play never reaches.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::StdRng;
use rand::Rng;

use super::game_data::SidePosition;
use super::turn::record_turn;
use crate::game::{GameState, Move};
use crate::search::{PositionEvaluator, RunOptions, Search, SearchError, SearchParams};

/// A move drawn from `policy` at `temperature` among the legal moves of
/// `st` (pass included), never `ban`.
fn random_policy_move(
    policy: &[f32],
    st: &GameState,
    temperature: f64,
    ban: Option<Move>,
    rng: &mut StdRng,
) -> Option<Move> {
    let xs = st.board.x_size();
    let area = xs * st.board.y_size();
    let inv_t = 1.0 / temperature;
    let moves: Vec<Move> = (0..=area)
        .map(|i| {
            if i == area {
                Move::Pass
            } else {
                Move::Play(st.board.loc(i % xs, i / xs))
            }
        })
        .collect();
    let weights: Vec<f64> = moves
        .iter()
        .enumerate()
        .map(|(i, &mv)| {
            let p = f64::from(policy.get(i).copied().unwrap_or(0.0).max(0.0));
            if p > 0.0 && Some(mv) != ban && st.is_legal(mv) {
                p.powf(inv_t)
            } else {
                0.0
            }
        })
        .collect();
    let dist = WeightedIndex::new(&weights).ok()?;
    Some(moves[dist.sample(rng)])
}

/// A uniformly random legal move other than `ban` (pass only if nothing
/// else is legal).
fn random_legal_move(st: &GameState, ban: Option<Move>, rng: &mut StdRng) -> Option<Move> {
    let xs = st.board.x_size();
    let area = xs * st.board.y_size();
    let legal: Vec<Move> = (0..area)
        .map(|i| Move::Play(st.board.loc(i % xs, i / xs)))
        .filter(|&mv| Some(mv) != ban && st.is_legal(mv))
        .collect();
    if legal.is_empty() {
        return (Some(Move::Pass) != ban && st.is_legal(Move::Pass)).then_some(Move::Pass);
    }
    Some(legal[rng.gen_range(0..legal.len())])
}

/// KataGo's `chooseRandomForkingMove`: 70% a policy move at temperature 1,
/// 25% at temperature 2, 5% any legal move.
pub(super) fn choose_forking_move(
    policy: &[f32],
    st: &GameState,
    ban: Option<Move>,
    rng: &mut StdRng,
) -> Option<Move> {
    let r: f64 = rng.gen();
    if r < 0.70 {
        random_policy_move(policy, st, 1.0, ban, rng)
    } else if r < 0.95 {
        random_policy_move(policy, st, 2.0, ban, rng)
    } else {
        random_legal_move(st, ban, rng)
    }
}

/// The position after `mv`, unless the move ends the game.
pub(super) fn fork(st: &GameState, mv: Move) -> Option<GameState> {
    if !st.is_legal(mv) {
        return None;
    }
    let mut next = st.clone();
    next.play(mv);
    (!next.hist.is_game_finished()).then_some(next)
}

/// Searches the queued side positions with full visits and no playout
/// advantage (as KataGo, whose rows for them carry none), each with weight
/// 1; a quarter of them continue one more move pair (the search's reply,
/// then another forking move). Returns the positions and the searches run.
pub(super) fn search_side_positions<E: PositionEvaluator<GameState>>(
    mut queue: Vec<GameState>,
    params: &SearchParams,
    evaluator: &Arc<E>,
    stop: &AtomicBool,
    rng: &mut StdRng,
) -> Result<(Vec<SidePosition>, usize), SearchError> {
    let mut out = Vec::new();
    let mut num_searches = 0;
    let mut params = params.clone();
    params.playout_doubling_advantage = 0.0;
    params.playout_doubling_advantage_pla = crate::search::OptPlayer(None);
    let mut i = 0;
    while i < queue.len() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let st = queue[i].clone();
        i += 1;
        let mut search = Search::new(params.clone(), evaluator.clone(), st.clone(), rng.gen());
        search.run(&RunOptions::default())?;
        num_searches += 1;
        let view = search.view();
        let (turn, _, _) = record_turn(&view, 1.0);
        let reply = view.chosen_move(rng);
        out.push(SidePosition {
            board: st.board.clone(),
            hist: st.hist.clone(),
            pla: st.next,
            turn,
            num_nn_changes_so_far: 0,
        });
        if !rng.gen_bool(0.25) {
            continue;
        }
        let Some(after_reply) = reply.and_then(|mv| fork(&st, mv)) else {
            continue;
        };
        // The raw policy of the position after the reply.
        let mut one = params.clone();
        one.max_visits = 1;
        one.root_noise_enabled = false;
        let mut probe = Search::new(one, evaluator.clone(), after_reply.clone(), rng.gen());
        probe.run(&RunOptions::default())?;
        num_searches += 1;
        let Some(nn) = probe.view().root_nn_output() else {
            continue;
        };
        if let Some(next) = choose_forking_move(&nn.policy, &after_reply, None, rng)
            .and_then(|mv| fork(&after_reply, mv))
        {
            queue.push(next);
        }
    }
    Ok((out, num_searches))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Board, BoardHistory, Player, Rules};
    use rand::SeedableRng;

    #[test]
    fn forking_moves_are_legal_and_never_the_banned_one() {
        let board = Board::new(5, 5).unwrap();
        let hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
        let st = GameState::new(board, hist, Player::Black);
        // All policy mass on the centre, which is banned.
        let centre = Move::Play(st.board.loc(2, 2));
        let mut policy = vec![0.0f32; 26];
        policy[12] = 1.0;
        policy[0] = 1e-6;
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..100 {
            if let Some(mv) = choose_forking_move(&policy, &st, Some(centre), &mut rng) {
                assert_ne!(mv, centre);
                assert!(st.is_legal(mv));
            }
        }
    }
}
