//! Early and late forks (`earlyForkGameProb`, `forkGameProb`): after a
//! game, KataGo's `Play::maybeForkGame` sometimes replays it to an early
//! (or any) move, plays the move the net likes best among a few random
//! legal ones, and queues that position as the start of a later game
//! (game type 2), shared between the game threads.

use std::sync::{Arc, Mutex};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;

use super::game_data::FinishedGame;
use super::settings::PlaySettings;
use crate::game::{BoardHistory, GameState, Move, Player};
use crate::search::{PositionEvaluator, RunOptions, Search, SearchError, SearchParams};

/// Most positions kept waiting; older ones are replaced at random beyond.
const MAX_QUEUED_FORKS: usize = 2000;

/// Most seki fork positions kept (KataGo keeps 1000).
const MAX_QUEUED_SEKI_FORKS: usize = 1000;

/// Fork positions waiting for a game, shared by the game threads
/// (KataGo's `ForkData`).
#[derive(Default)]
pub struct ForkQueue {
    forks: Mutex<Vec<GameState>>,
    /// Positions near the end of games with unowned points, for the seki
    /// fork hack (`sekiForkHackProb`).
    seki: Mutex<Vec<GameState>>,
}

impl ForkQueue {
    /// An empty queue.
    pub fn new() -> ForkQueue {
        ForkQueue::default()
    }

    /// Queues a position.
    pub fn push(&self, st: GameState, rng: &mut StdRng) {
        let mut forks = self.forks.lock().unwrap_or_else(|e| e.into_inner());
        if forks.len() >= MAX_QUEUED_FORKS {
            let i = rng.gen_range(0..forks.len());
            forks[i] = st;
        } else {
            forks.push(st);
        }
    }

    /// Takes a random queued position, if any.
    pub fn pop(&self, rng: &mut StdRng) -> Option<GameState> {
        let mut forks = self.forks.lock().unwrap_or_else(|e| e.into_inner());
        if forks.is_empty() {
            return None;
        }
        let i = rng.gen_range(0..forks.len());
        Some(forks.swap_remove(i))
    }

    /// Queues a seki fork position (KataGo's `ForkData::addSeki`).
    pub fn push_seki(&self, st: GameState, rng: &mut StdRng) {
        let mut seki = self.seki.lock().unwrap_or_else(|e| e.into_inner());
        if seki.len() >= MAX_QUEUED_SEKI_FORKS {
            let i = rng.gen_range(0..seki.len());
            seki[i] = st;
        } else {
            seki.push(st);
        }
    }

    /// Takes a random seki fork position, if any.
    pub fn pop_seki(&self, rng: &mut StdRng) -> Option<GameState> {
        let mut seki = self.seki.lock().unwrap_or_else(|e| e.into_inner());
        if seki.is_empty() {
            return None;
        }
        let i = rng.gen_range(0..seki.len());
        Some(seki.swap_remove(i))
    }

    /// The start of the next game (KataGo's `runGame`): a queued fork if
    /// any, else with `sekiForkHackProb` a seki fork. The flag says a seki
    /// fork was used (such a game is not seki-forked again).
    pub fn next_start(&self, s: &PlaySettings, rng: &mut StdRng) -> (Option<GameState>, bool) {
        if let Some(f) = self.pop(rng) {
            return (Some(f), false);
        }
        if s.seki_fork_hack_prob > 0.0 && rng.gen_bool(s.seki_fork_hack_prob) {
            if let Some(f) = self.pop_seki(rng) {
                return (Some(f), true);
            }
        }
        (None, false)
    }

    /// How many seki fork positions wait.
    pub fn seki_len(&self) -> usize {
        self.seki.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// How many positions wait.
    pub fn len(&self) -> usize {
        self.forks.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// KataGo's `maybeForkGame`: with `earlyForkGameProb` a position near the
/// start (exponentially distributed, mean `earlyForkGameExpectedMoveProp`
/// of the area), else with `forkGameProb` any position of the game; then
/// the best (for the player to move, by the net's score) of
/// `forkGameMinChoices..=max` random legal moves is played there.
pub fn maybe_fork<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    game: &FinishedGame,
    params: &SearchParams,
    evaluator: &Arc<E>,
    rng: &mut StdRng,
) -> Result<Option<GameState>, SearchError> {
    if game.start_hist.encore_phase() != 0 {
        return Ok(None);
    }
    let early = s.early_fork_game_prob > 0.0 && rng.gen_bool(s.early_fork_game_prob);
    let late = !early && s.fork_game_prob > 0.0 && rng.gen_bool(s.fork_game_prob);
    if !early && !late {
        return Ok(None);
    }
    let moves = game.game_moves();
    let area = (game.start_board.x_size() * game.start_board.y_size()) as f64;
    let idx = if early {
        let u: f64 = rng.gen::<f64>().max(1e-300);
        (-u.ln() * s.early_fork_game_expected_move_prop * area).floor() as usize
    } else if moves.is_empty() {
        0
    } else {
        rng.gen_range(0..moves.len())
    };
    let mut st = GameState::new(
        game.start_board.clone(),
        game.start_hist.clone(),
        game.start_pla,
    );
    for &(mv, pla) in moves.iter().take(idx) {
        if st.next != pla || !st.is_legal(mv) {
            return Ok(None);
        }
        st.play(mv);
        if st.hist.is_game_finished() {
            return Ok(None);
        }
    }
    let max_choices = if early {
        s.early_fork_game_max_choices
    } else {
        s.fork_game_max_choices
    }
    .max(s.fork_game_min_choices);
    let num_choices = rng.gen_range(s.fork_game_min_choices..=max_choices);
    let xs = st.board.x_size();
    let mut legal: Vec<Move> = (0..xs * st.board.y_size())
        .map(|i| Move::Play(st.board.loc(i % xs, i / xs)))
        .filter(|&mv| st.is_legal(mv))
        .collect();
    legal.shuffle(rng);
    legal.truncate(num_choices);
    let mut one = params.clone();
    one.max_visits = 1;
    one.root_noise_enabled = false;
    one.playout_doubling_advantage = 0.0;
    one.playout_doubling_advantage_pla = crate::search::OptPlayer(None);
    let pla = st.next;
    let mut best: Option<(GameState, f32)> = None;
    for mv in legal {
        let mut child = st.clone();
        child.play(mv);
        let mut probe = Search::new(one.clone(), evaluator.clone(), child.clone(), rng.gen());
        probe.run(&RunOptions::default())?;
        let Some(nn) = probe.view().root_nn_output() else {
            continue;
        };
        let score = nn.white_score_mean;
        let better = match &best {
            None => true,
            Some((_, b)) => {
                (pla == Player::White && score > *b) || (pla == Player::Black && score < *b)
            }
        };
        if better {
            best = Some((child, score));
        }
    }
    Ok(best
        .map(|(child, _)| child)
        .filter(|c| !c.hist.is_game_finished()))
}

/// KataGo's `maybeSekiForkGame` (`sekiForkHackProb`): a scored game whose
/// final ownership leaves a point unowned (a seki, or dame) is replayed,
/// twice, to a move near its end (`len * (1 - 0.1 * Exp(1)) - 1`) under
/// freshly drawn scoring and tax rules, and each position is queued as a
/// seki fork, so seki endings are seen under every rule set. Games that
/// started in the encore are not forked (KataGo forks those in the first
/// encore phase too; the engine's histories start at phase 0).
pub fn maybe_seki_fork(
    s: &PlaySettings,
    game: &FinishedGame,
    queue: &ForkQueue,
    rng: &mut StdRng,
) -> usize {
    let end = &game.end_hist;
    if s.seki_fork_hack_prob <= 0.0
        || !(end.is_game_finished() && end.is_scored())
        || game.start_hist.encore_phase() != 0
    {
        return 0;
    }
    let board = &game.start_board;
    let unowned = board
        .locs()
        .any(|loc| game.outcome.ownership.get(loc) == crate::game::Color::Empty);
    if !unowned {
        return 0;
    }
    let moves = end.moves();
    if moves.is_empty() {
        return 0;
    }
    let mut queued = 0;
    for _ in 0..2 {
        let u: f64 = rng.gen::<f64>().max(1e-300);
        let idx = (moves.len() as f64 * (1.0 - 0.10 * -u.ln()) - 1.0).floor();
        let idx = (idx.max(0.0) as usize).min(moves.len() - 1);
        let mut rules = *game.start_hist.rules();
        s.rules.redraw_scoring(&mut rules, rng);
        let initial = end.initial_board();
        let pla = end.initial_pla();
        let hist = BoardHistory::new(initial, pla, rules);
        let mut st = GameState::new(initial.clone(), hist, pla);
        let mut finished = false;
        for &(mv, mpla) in &moves[..idx] {
            // Other rules may make a move illegal: stop the replay there.
            if st.next != mpla || !st.is_legal(mv) {
                break;
            }
            st.play(mv);
            if st.hist.is_game_finished() {
                finished = true;
                break;
            }
        }
        if !finished {
            queue.push_seki(st, rng);
            queued += 1;
        }
    }
    queued
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Board, BoardHistory, Rules};
    use rand::SeedableRng;

    #[test]
    fn queue_pops_what_was_pushed() {
        let q = ForkQueue::new();
        let mut rng = StdRng::seed_from_u64(2);
        assert!(q.pop(&mut rng).is_none());
        let board = Board::new(7, 7).unwrap();
        let hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
        q.push(GameState::new(board, hist, Player::White), &mut rng);
        assert_eq!(q.len(), 1);
        let st = q.pop(&mut rng).expect("one queued");
        assert_eq!(st.next, Player::White);
        assert!(q.is_empty());
    }
}
