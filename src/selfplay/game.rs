//! One self-play game: KataGo's `GameInitializer` (board size, rules,
//! komi, opening moves from the policy) and `Play::runGame` (full and
//! cheap searches, reduced visits, tree reuse, game end, per-turn targets,
//! surprise weighting), producing a [`FinishedGame`] and its SGF line.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::StdRng;
use rand::Rng;

use super::game_data::{FinalOutcome, FinishedGame, GameMode, TurnRecord, ValueTargets};
use super::handicap::{
    asymmetric_visits, choose_setup, gaussian_truncated, randomize_game_params, GameSetup,
};
use super::komi::{estimate_leads, fair_komi, KomiNoise};
use super::settings::PlaySettings;
use super::sgf_line::write_sgf_line;
use super::side::{choose_forking_move, fork, search_side_positions};
use super::turn::{apply_surprise_weights, record_turn, search_limits, MoveLimits};
use crate::game::{Board, BoardHistory, GameState, Hash128, Move, Player, Rules};
use crate::play::play_extra_black;
use crate::play::play_policy_moves;
use crate::search::{PositionEvaluator, RunOptions, Search, SearchError, SearchParams};

/// A finished game and its SGF (one line, KataGo's root and move comments).
pub struct PlayedGame {
    /// Everything the row writer needs.
    pub game: FinishedGame,
    /// The game as one SGF line.
    pub sgf: String,
    /// Searches run (full and cheap) and root visits summed.
    pub num_searches: usize,
}

/// A newer net for a game in progress (`switchNetsMidGame`): called now
/// and then during the game; `Some` switches the game's searches to it.
pub type NewNetCheck<'a, E> = &'a mut dyn FnMut() -> Option<Arc<E>>;

/// Plays one game from `fork` (a fork game, KataGo's game type 2: its
/// rules, komi with noise, no handicap, asymmetry or opening moves) or,
/// without one, from the empty board; `None` if `stop` was raised first.
/// With `switchNetsMidGame` on, `new_net` is asked for a newer net with
/// probability 0.1 after each move (KataGo's `maybeCheckForNewNNEval`;
/// `&mut || None` for none); the turns at which the net changed are in
/// [`FinishedGame::changed_nets_turns`].
///
/// The steps are those of KataGo's `Play::runGame`: the start position
/// (`start_position`, `prepare_start`), the moves (`play_turns`) and
/// the game's records (`finish_game`). Every random draw comes in
/// KataGo's order, so a seed gives the same game.
#[allow(clippy::too_many_arguments)]
pub fn play_game<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    base_params: &SearchParams,
    evaluator: Arc<E>,
    model_name: &str,
    fork: Option<GameState>,
    rng: &mut StdRng,
    stop: &AtomicBool,
    new_net: NewNetCheck<'_, E>,
) -> Result<Option<PlayedGame>, SearchError> {
    // The game's own draw value and no-result utility.
    let mut game_params = base_params.clone();
    randomize_game_params(s, &mut game_params, rng);
    let is_fork = fork.is_some();
    let Some((start_state, setup, komi_noise)) =
        start_position(s, &game_params, &evaluator, fork, rng, stop)?
    else {
        return Ok(None);
    };
    let game_hash = Hash128(rng.gen());
    let mut search = Search::new(
        game_params.clone(),
        evaluator.clone(),
        start_state,
        rng.gen(),
    );
    if let Some(bytes) = s.tree_memory_limit {
        search.set_tree_memory_limit(bytes);
    }
    let mut game = GameInProgress {
        s,
        params: &game_params,
        evaluator,
        search,
        setup,
        komi_noise,
        is_fork,
        num_searches: 0,
        num_extra_black: 0,
    };
    if !game.prepare_start(rng, stop)? {
        return Ok(None);
    }
    let start = game.search.root_state().clone();
    let Some(turns) = game.play_turns(rng, stop, new_net)? else {
        return Ok(None);
    };
    game.finish_game(model_name, start, game_hash, turns, rng, stop)
        .map(Some)
}

/// The board, rules and komi a game starts from (before handicap stones
/// and opening moves), its setup and its komi noise; `None` if `stop` was
/// raised while the fair komi was searched for.
fn start_position<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    params: &SearchParams,
    evaluator: &Arc<E>,
    fork: Option<GameState>,
    rng: &mut StdRng,
    stop: &AtomicBool,
) -> Result<Option<(GameState, GameSetup, KomiNoise)>, SearchError> {
    let is_fork = fork.is_some();
    let (board, mut rules) = match &fork {
        Some(f) => (f.board.clone(), *f.hist.rules()),
        None => {
            let size_idx = WeightedIndex::new(&s.board_size_rel_probs)
                .map(|d| d.sample(rng))
                .unwrap_or(0);
            let (xs, ys) = s.board_sizes[size_idx];
            let board = Board::new(xs, ys).map_err(|e| {
                SearchError::Eval(crate::search::EvalError(format!(
                    "board size {xs}x{ys}: {e}"
                )))
            })?;
            (board, s.rules.draw(rng))
        }
    };
    let area = board.x_size() * board.y_size();
    let komi_noise = KomiNoise::draw(s, area, rng);
    // Handicap, playout advantage and whether komi is made fair for the
    // actual start position (then the empty board's fair komi is skipped).
    let setup = if is_fork {
        GameSetup {
            extra_black: 0,
            pda_pla: None,
            pda: 0.0,
            make_game_fair: s.fork_compensate_komi_prob > 0.0
                && rng.gen_bool(s.fork_compensate_komi_prob),
        }
    } else {
        choose_setup(s, area, rng)
    };
    let mean = if is_fork {
        f64::from(rules.komi)
    } else if s.komi_auto && !setup.make_game_fair {
        match fair_komi(
            s,
            params,
            evaluator,
            &empty_state(board.clone(), rules),
            stop,
            rng,
        )? {
            Some(k) => k,
            None => return Ok(None),
        }
    } else {
        s.komi_mean
    };
    rules.komi = komi_noise.apply(mean, area, rng);
    let state = match fork {
        Some(mut f) => {
            f.hist.set_komi(rules.komi);
            f
        }
        None => empty_state(board, rules),
    };
    Ok(Some((state, setup, komi_noise)))
}

/// What the moves of a game leave behind for its records.
struct PlayedTurns {
    /// One record per searched turn.
    turns: Vec<TurnRecord>,
    /// The raw net's (win, loss, no-result) for white at each turn.
    raw_values: Vec<(f64, f64, f64)>,
    /// KataGo's per-move SGF comments.
    move_comments: Vec<String>,
    /// Whether the game stopped at `maxMovesPerGame`.
    hit_turn_limit: bool,
    /// Turns at which a newer net took over.
    changed_nets_turns: Vec<usize>,
    /// Positions one odd move away, searched after the game.
    side_queue: Vec<GameState>,
}

/// A self-play game being played: its settings, search and start.
struct GameInProgress<'a, E: PositionEvaluator<GameState>> {
    s: &'a PlaySettings,
    /// The game's search parameters (with its own draw value).
    params: &'a SearchParams,
    /// The net of the game's searches (a newer one after a switch).
    evaluator: Arc<E>,
    search: Search<GameState, E>,
    setup: GameSetup,
    komi_noise: KomiNoise,
    is_fork: bool,
    /// Searches run so far (full, cheap, one-visit and komi searches).
    num_searches: usize,
    /// Handicap stones placed.
    num_extra_black: u32,
}

impl<E: PositionEvaluator<GameState>> GameInProgress<'_, E> {
    fn area(&self) -> usize {
        let b = &self.search.root_state().board;
        b.x_size() * b.y_size()
    }

    /// Sets the root position's komi to the fair komi for it (found by
    /// searches) plus `extra` and the game's noise; false if stopped.
    fn make_komi_fair(
        &mut self,
        rng: &mut StdRng,
        stop: &AtomicBool,
        between_with: Option<f64>,
    ) -> Result<bool, SearchError> {
        let mut st = self.search.root_state().clone();
        let Some(fair) = fair_komi(self.s, self.params, &self.evaluator, &st, stop, rng)? else {
            return Ok(false);
        };
        let area = self.area();
        let komi = match between_with {
            // KataGo's fancyKomiVarying: a komi between the drawn one and
            // the fair one for the handicap position, plus wide noise.
            Some(orig) => {
                let (lo, hi) = (orig.min(fair), orig.max(fair));
                let mut komi = lo + rng.gen::<f64>() * (hi - lo);
                komi += 0.75 * (area as f64).sqrt() * gaussian_truncated(rng, 2.5);
                komi
            }
            None => fair,
        };
        st.hist.set_komi(self.komi_noise.apply(komi, area, rng));
        self.search.set_position(st);
        Ok(true)
    }

    /// Handicap stones, a fair or varied komi for them, and the opening
    /// moves from the raw policy; false if stopped.
    fn prepare_start(&mut self, rng: &mut StdRng, stop: &AtomicBool) -> Result<bool, SearchError> {
        let (s, setup) = (self.s, self.setup);
        if setup.extra_black > 0 {
            let mut params = self.params.clone();
            params.max_visits = 1;
            params.root_noise_enabled = false;
            self.search.set_params(params);
            self.num_extra_black = play_extra_black(
                &mut self.search,
                setup.extra_black,
                s.handicap_temperature,
                rng,
            )?;
            self.num_searches += self.num_extra_black as usize;
            self.search.clear_tree();
        }
        let extra = self.num_extra_black > 0;
        if setup.make_game_fair {
            if !self.make_komi_fair(rng, stop, None)? {
                return Ok(false);
            }
        } else if (extra || self.is_fork)
            && s.fancy_komi_varying
            && rng.gen_bool(if extra { 0.5 } else { 0.25 })
        {
            let orig = f64::from(self.search.root_state().hist.rules().komi);
            if !self.make_komi_fair(rng, stop, Some(orig))? {
                return Ok(false);
            }
        }
        // Opening moves from the raw policy at temperature 1 (KataGo's
        // initGamesWithPolicy); they belong to the start position.
        if !self.is_fork && s.init_games_with_policy && s.policy_init_area_prop > 0.0 {
            let mean = s.policy_init_area_prop * self.area() as f64;
            let u: f64 = rng.gen::<f64>().max(1e-12);
            let num = (-u.ln() * mean).floor() as usize;
            self.num_searches +=
                play_policy_moves(&mut self.search, self.params, num, 1.0, rng, stop)?;
            // KataGo's compensateAfterPolicyInitProb: the opening moves may
            // have unbalanced an even game, so its komi is sometimes made fair
            // again; handicap and asymmetric games follow their own choice.
            let non_normal = setup.extra_black > 0 || setup.pda_pla.is_some();
            let compensate = if non_normal {
                setup.make_game_fair
            } else {
                s.compensate_after_policy_init_prob > 0.0
                    && rng.gen_bool(s.compensate_after_policy_init_prob)
            };
            if compensate
                && !self.search.root_state().hist.is_game_finished()
                && !self.make_komi_fair(rng, stop, None)?
            {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The search parameters of one move with `limits`, and those the move
    /// is chosen with (without LCB: KataGo's runBotWithLimits "HACK", which
    /// still shapes the policy target).
    fn move_params(
        &mut self,
        mut limits: MoveLimits,
        warned_asym_clamp: &mut bool,
    ) -> (SearchParams, SearchParams) {
        let mut params = self.params.clone();
        let setup = self.setup;
        if setup.pda_pla.is_some() {
            // Each side searches with its own visits and its own view of
            // the advantage, so no tree is shared between the sides.
            let (v, clamped) =
                asymmetric_visits(limits.visits, self.search.root_state().next, &setup);
            if clamped && !*warned_asym_clamp {
                *warned_asym_clamp = true;
                eprintln!(
                    "warning: asymmetric playouts would leave fewer than 5 visits ({} visits, advantage {:.2} doublings); using 5",
                    limits.visits, setup.pda
                );
            }
            limits.visits = v;
            params.playout_doubling_advantage = setup.pda;
            params.playout_doubling_advantage_pla = crate::search::OptPlayer(setup.pda_pla);
            self.search.clear_tree();
        }
        params.max_visits = limits.visits;
        if limits.remove_noise {
            params.search_root_as_any_node();
        }
        let mut move_params = params.clone();
        move_params.use_lcb_for_selection = false;
        (params, move_params)
    }

    /// Plays the game to its end or `maxMovesPerGame`, recording each
    /// turn; `None` if `stop` was raised.
    fn play_turns(
        &mut self,
        rng: &mut StdRng,
        stop: &AtomicBool,
        new_net: NewNetCheck<'_, E>,
    ) -> Result<Option<PlayedTurns>, SearchError> {
        let s = self.s;
        let mut out = PlayedTurns {
            turns: Vec::new(),
            raw_values: Vec::new(),
            move_comments: Vec::new(),
            hit_turn_limit: true,
            changed_nets_turns: Vec::new(),
            side_queue: Vec::new(),
        };
        let mut historical_wl: Vec<f64> = Vec::new();
        let mut warned_asym_clamp = false;
        for _ in 0..s.max_moves_per_game {
            if self.end_if_all_pass_alive() {
                out.hit_turn_limit = false;
                break;
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let limits = search_limits(s, &historical_wl, rng);
            let (params, move_params) = self.move_params(limits, &mut warned_asym_clamp);
            self.search.set_params(params);
            // Tree reuse: the subtree of the move played last is kept
            // (`Search::make_move`), as KataGo's self-play keeps its tree.
            self.search.run(&RunOptions::default())?;
            self.num_searches += 1;
            let (chosen, root_wl) = self.record(limits.target_weight, &move_params, &mut out, rng);
            historical_wl.push(root_wl);
            if !self.search.make_move(chosen) {
                // The search only proposes legal moves; a failure here is a bug.
                let b = &self.search.root_state().board;
                return Err(SearchError::Eval(crate::search::EvalError(format!(
                    "self-play chose illegal move {}",
                    chosen.to_gtp(b.x_size(), b.y_size())
                ))));
            }
            if self.search.root_state().hist.is_game_finished() {
                out.hit_turn_limit = false;
                break;
            }
            if s.switch_nets_mid_game && rng.gen_bool(0.1) {
                if let Some(newer) = new_net() {
                    self.search.set_evaluator(newer.clone());
                    self.evaluator = newer;
                    out.changed_nets_turns
                        .push(self.search.root_state().hist.moves().len());
                }
            }
        }
        Ok(Some(out))
    }

    /// Ends the game at the root if every point is settled (pass-alive);
    /// true if it is over.
    fn end_if_all_pass_alive(&mut self) -> bool {
        let st = self.search.root_state();
        let mut hist = st.hist.clone();
        hist.end_game_if_all_pass_alive(&st.board);
        if !hist.is_game_finished() {
            return false;
        }
        let (board, next) = (st.board.clone(), st.next);
        self.search.set_position(GameState::new(board, hist, next));
        true
    }

    /// Records the search just run as a turn of `out`, maybe queues a side
    /// position, and returns the move to play and the root's win-loss value.
    fn record(
        &self,
        target_weight: f64,
        move_params: &SearchParams,
        out: &mut PlayedTurns,
        rng: &mut StdRng,
    ) -> (Move, f64) {
        let view = self.search.view();
        let (turn, root, raw) = record_turn(&view, target_weight);
        out.raw_values.push(raw);
        let chosen = view
            .with_params(move_params)
            .chosen_move(rng)
            .unwrap_or(Move::Pass);
        out.move_comments.push(format!(
            "{:.2} {:.2} {:.2} {:.1} v={}",
            turn.white_value_targets.win,
            turn.white_value_targets.loss,
            root.no_result,
            root.score_mean,
            root.visits
        ));
        out.turns.push(turn);
        // Occasionally fork off a position one odd move away, searched
        // after the game (KataGo's side positions: after any search, cheap
        // ones included, as `Play::runGame` does).
        if self.s.side_position_prob > 0.0 && rng.gen_bool(self.s.side_position_prob) {
            if let Some(nn) = view.root_nn_output() {
                let st = self.search.root_state();
                if let Some(side) = choose_forking_move(&nn.policy, st, Some(chosen), rng)
                    .and_then(|mv| fork(st, mv))
                {
                    out.side_queue.push(side);
                }
            }
        }
        (chosen, root.win_loss)
    }

    /// The game's records: side positions searched with the last net, the
    /// final outcome, surprise-weighted rows, the SGF line and the lead
    /// estimates.
    fn finish_game(
        self,
        model_name: &str,
        start: GameState,
        game_hash: Hash128,
        played: PlayedTurns,
        rng: &mut StdRng,
        stop: &AtomicBool,
    ) -> Result<PlayedGame, SearchError> {
        let (s, params, setup) = (self.s, self.params, self.setup);
        let end = self.search.root_state().clone();
        let area = end.board.x_size() * end.board.y_size();
        let (evaluator, mut num_searches) = (self.evaluator, self.num_searches);
        // The tree's memory goes before the side positions are searched.
        drop(self.search);
        let mut side_params = params.clone();
        side_params.max_visits = s.max_visits;
        let (mut side_positions, side_searches) =
            search_side_positions(played.side_queue, &side_params, &evaluator, stop, rng)?;
        // Side positions are searched after the game, with the last net.
        for sp in &mut side_positions {
            sp.num_nn_changes_so_far = played.changed_nets_turns.len();
        }
        num_searches += side_searches;
        let draw_value = params.draw_equivalent_wins_for_white;
        let outcome = FinalOutcome::compute(&end.board, &end.hist, draw_value);
        let mut turns = played.turns;
        let mut all_targets: Vec<ValueTargets> =
            turns.iter().map(|t| t.white_value_targets).collect();
        all_targets.push(outcome.white_value_targets);
        apply_surprise_weights(s, &mut turns, &all_targets, &played.raw_values, area);
        // KataGo's move comments show the final row weight.
        let mut move_comments = played.move_comments;
        for (c, t) in move_comments.iter_mut().zip(&turns) {
            c.push_str(&format!(" weight={:.2}", t.target_weight));
        }
        let mut scored = end.hist.clone();
        if !(scored.is_game_finished() && scored.is_no_result()) {
            scored.end_and_score_game_now(&end.board);
        }
        let num_extra_black = self.num_extra_black;
        // KataGo's game type: asymmetric over handicap over normal.
        let mode = if self.is_fork {
            GameMode::Fork
        } else if setup.pda_pla.is_some() && setup.pda != 0.0 {
            GameMode::Asym
        } else if num_extra_black > 0 {
            GameMode::Handicap
        } else {
            GameMode::Normal
        };
        let mut game = FinishedGame {
            start_board: start.board,
            start_hist: start.hist,
            start_pla: start.next,
            end_hist: end.hist,
            game_hash,
            hit_turn_limit: played.hit_turn_limit,
            num_extra_black,
            mode,
            draw_equivalent_wins_for_white: draw_value,
            playout_doubling_advantage_pla: setup.pda_pla,
            playout_doubling_advantage: if setup.pda_pla.is_some() {
                setup.pda
            } else {
                0.0
            },
            training_weight: 1.0,
            turns,
            outcome,
            side_positions,
            changed_nets_turns: played.changed_nets_turns,
        };
        let sgf = write_sgf_line(model_name, &game, &scored, &move_comments);
        num_searches += estimate_leads(s, params, &evaluator, &mut game, stop, rng)?;
        Ok(PlayedGame {
            game,
            sgf,
            num_searches,
        })
    }
}

/// The empty board with `rules`, Black to play.
fn empty_state(board: Board, rules: Rules) -> GameState {
    let hist = BoardHistory::new(&board, Player::Black, rules);
    GameState::new(board, hist, Player::Black)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cheap_searches_without_rows_search_the_root_as_any_node() {
        let mut p = SearchParams::defaults(crate::search::SetupFor::Other);
        p.root_noise_enabled = true;
        p.root_policy_temperature = 1.1;
        p.root_policy_temperature_early = 1.25;
        p.root_fpu_reduction_max = 0.0;
        p.fpu_reduction_max = 0.2;
        p.root_fpu_loss_prop = 0.3;
        p.fpu_loss_prop = 0.0;
        p.root_desired_per_child_visits_coeff = 2.0;
        p.root_num_symmetries_to_sample = 4;
        p.search_root_as_any_node();
        assert!(!p.root_noise_enabled);
        assert_eq!(
            (p.root_policy_temperature, p.root_policy_temperature_early),
            (1.0, 1.0)
        );
        assert_eq!((p.root_fpu_reduction_max, p.root_fpu_loss_prop), (0.2, 0.0));
        assert_eq!(p.root_desired_per_child_visits_coeff, 0.0);
        assert_eq!(p.root_num_symmetries_to_sample, 1);
    }
}
