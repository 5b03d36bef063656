//! Opening moves drawn from the raw policy: self-play's openings (KataGo's
//! `initGamesWithPolicy`), `engine match`'s paired openings, and extra
//! black stones for handicap games (KataGo's `playExtraBlack`: self-play
//! and GTP's `place_free_handicap`).

use std::sync::atomic::{AtomicBool, Ordering};

use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::StdRng;

use crate::game::{BoardHistory, GameState, Move, Player};
use crate::search::{PositionEvaluator, RunOptions, Search, SearchError, SearchParams};

/// Plays up to `num` moves on `search`'s position, each drawn from the raw
/// policy (one-visit searches, no noise) at `temperature` (1: the policy as
/// it is), no passes; stops early at a pass draw, a finished game or
/// `stop`. The tree is cleared after each move and the search's parameters
/// are left at the one-visit ones (callers set theirs after). Returns the
/// searches run. Self-play's openings (KataGo's `initGamesWithPolicy`) and
/// `engine match`'s paired openings.
pub fn play_policy_moves<E: PositionEvaluator<GameState>>(
    search: &mut Search<GameState, E>,
    base_params: &SearchParams,
    num: usize,
    temperature: f64,
    rng: &mut StdRng,
    stop: &AtomicBool,
) -> Result<usize, SearchError> {
    let mut params = base_params.clone();
    params.max_visits = 1;
    params.root_noise_enabled = false;
    search.set_params(params);
    let mut num_searches = 0;
    let (xs, ys) = (
        search.root_state().board.x_size(),
        search.root_state().board.y_size(),
    );
    let area = xs * ys;
    let inv_temp = 1.0 / temperature.max(1e-3);
    for _ in 0..num {
        if search.root_state().hist.is_game_finished() || stop.load(Ordering::Relaxed) {
            break;
        }
        search.run(&RunOptions::default())?;
        num_searches += 1;
        let Some(nn) = search.view().root_nn_output() else {
            break;
        };
        let weights: Vec<f64> = nn
            .policy
            .iter()
            .map(|&p| {
                let p = f64::from(p.max(0.0));
                if inv_temp == 1.0 {
                    p
                } else {
                    p.powf(inv_temp)
                }
            })
            .collect();
        let Ok(dist) = WeightedIndex::new(&weights) else {
            break;
        };
        let i = dist.sample(rng);
        let mv = if i >= area {
            Move::Pass
        } else {
            Move::Play(search.root_state().board.loc(i % xs, i / xs))
        };
        // A pass would end the opening early; KataGo's policy init
        // plays no passes.
        if mv == Move::Pass || !search.make_move(mv) {
            break;
        }
        search.clear_tree();
    }
    Ok(num_searches)
}

/// Places `n` extra black stones, each drawn from the raw policy at
/// `temperature` (no passes), clearing the history after each as KataGo's
/// `playExtraBlack` does, so the stones are part of the start position and
/// black moves next. Returns how many stones were placed. Self-play's
/// handicap games and GTP's `place_free_handicap`; the caller sets the
/// one-visit parameters.
pub fn play_extra_black<E: PositionEvaluator<GameState>>(
    search: &mut Search<GameState, E>,
    n: u32,
    temperature: f64,
    rng: &mut StdRng,
) -> Result<u32, SearchError> {
    let mut placed = 0;
    for _ in 0..n {
        let st = search.root_state().clone();
        if st.hist.is_game_finished() {
            break;
        }
        let mut state = st.clone();
        state.next = Player::Black;
        search.set_position(state);
        search.run(&RunOptions::default())?;
        let Some(nn) = search.view().root_nn_output() else {
            break;
        };
        let xs = st.board.x_size();
        let area = xs * st.board.y_size();
        let inv_t = 1.0 / temperature.max(1e-3);
        let rules = *st.hist.rules();
        let weights: Vec<f64> = (0..area)
            .map(|i| {
                let loc = st.board.loc(i % xs, i / xs);
                let p = f64::from(nn.policy.get(i).copied().unwrap_or(0.0).max(0.0));
                if p > 0.0
                    && st.board.is_legal(
                        Move::Play(loc),
                        Player::Black,
                        rules.multi_stone_suicide_legal,
                    )
                {
                    p.powf(inv_t)
                } else {
                    0.0
                }
            })
            .collect();
        let Ok(dist) = WeightedIndex::new(&weights) else {
            break;
        };
        let i = dist.sample(rng);
        let mut board = st.board;
        board.play(Move::Play(board.loc(i % xs, i / xs)), Player::Black);
        let hist = BoardHistory::new(&board, Player::Black, rules);
        search.set_position(GameState::new(board, hist, Player::Black));
        placed += 1;
    }
    Ok(placed)
}
