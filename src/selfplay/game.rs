//! One self-play game: KataGo's `GameInitializer` (board size, rules,
//! komi, opening moves from the policy) and `Play::runGame` (full and
//! cheap searches, reduced visits, tree reuse, game end, per-turn targets,
//! surprise weighting), producing a [`FinishedGame`] and its SGF line.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::StdRng;
use rand::Rng;

use super::game_data::{
    FinalOutcome, FinishedGame, GameMode, NnRawStats, PolicyTargetMove, QValueTargetMove,
    TurnRecord, ValueTargets,
};
use super::handicap::{
    asymmetric_visits, choose_setup, gaussian_truncated, play_extra_black, randomize_game_params,
    GameSetup,
};
use super::komi::{estimate_leads, fair_komi, KomiNoise};
use super::settings::PlaySettings;
use super::side::{choose_forking_move, search_side_positions};
use crate::game::sgf::{GameRecord, NodeId, SgfNode};
use crate::game::{Board, BoardHistory, GameState, Hash128, Move, Player};
use crate::search::{
    NodeValues, PositionEvaluator, RunOptions, Search, SearchError, SearchParams, SearchView,
};

/// A finished game and its SGF (one line, KataGo's root and move comments).
pub struct PlayedGame {
    /// Everything the row writer needs.
    pub game: FinishedGame,
    /// The game as one SGF line.
    pub sgf: String,
    /// Searches run (full and cheap) and root visits summed.
    pub num_searches: usize,
}

/// Win and loss probabilities of a node's values (white's view).
fn win_loss(v: &NodeValues) -> (f32, f32) {
    let nr = v.no_result.clamp(0.0, 1.0);
    let wl = v.win_loss.clamp(-1.0, 1.0);
    (
        ((1.0 - nr + wl) * 0.5) as f32,
        ((1.0 - nr - wl) * 0.5) as f32,
    )
}

/// Plays one game with `evaluator` from the empty board; `None` if `stop`
/// was raised first.
pub fn play_game<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    base_params: &SearchParams,
    evaluator: Arc<E>,
    model_name: &str,
    rng: &mut StdRng,
    stop: &AtomicBool,
) -> Result<Option<PlayedGame>, SearchError> {
    play_game_from(s, base_params, evaluator, model_name, None, rng, stop)
}

/// A newer net for a game in progress (`switchNetsMidGame`): called now
/// and then during the game; `Some` switches the game's searches to it.
pub type NewNetCheck<'a, E> = &'a mut dyn FnMut() -> Option<Arc<E>>;

/// Plays one game from `fork` (a fork game, KataGo's game type 2: its
/// rules, komi with noise, no handicap, asymmetry or opening moves) or,
/// without one, from the empty board.
pub fn play_game_from<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    base_params: &SearchParams,
    evaluator: Arc<E>,
    model_name: &str,
    fork: Option<GameState>,
    rng: &mut StdRng,
    stop: &AtomicBool,
) -> Result<Option<PlayedGame>, SearchError> {
    play_game_switching(
        s,
        base_params,
        evaluator,
        model_name,
        fork,
        rng,
        stop,
        &mut || None,
    )
}

/// [`play_game_from`], asking `new_net` for a newer net with probability
/// 0.1 after each move when `switchNetsMidGame` is on (KataGo's
/// `maybeCheckForNewNNEval`); the turns at which the net changed are in
/// [`FinishedGame::changed_nets_turns`].
#[allow(clippy::too_many_arguments)]
pub fn play_game_switching<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    base_params: &SearchParams,
    mut evaluator: Arc<E>,
    model_name: &str,
    fork: Option<GameState>,
    rng: &mut StdRng,
    stop: &AtomicBool,
    new_net: NewNetCheck<'_, E>,
) -> Result<Option<PlayedGame>, SearchError> {
    // The game's own draw value and no-result utility.
    let mut game_params = base_params.clone();
    randomize_game_params(s, &mut game_params, rng);
    let base_params = &game_params;
    // Board size and rules.
    let is_fork = fork.is_some();
    let (board, mut rules) = match &fork {
        Some(f) => (f.board, *f.hist.rules()),
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
    let (xs, ys) = (board.x_size(), board.y_size());
    let area = xs * ys;
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
        let empty = GameState::new(
            board,
            BoardHistory::new(&board, Player::Black, rules),
            Player::Black,
        );
        match fair_komi(s, base_params, &evaluator, &empty, stop, rng)? {
            Some(k) => k,
            None => return Ok(None),
        }
    } else {
        s.komi_mean
    };
    rules.komi = komi_noise.apply(mean, area, rng);
    let start_state = match fork {
        Some(mut f) => {
            f.hist.set_komi(rules.komi);
            f
        }
        None => GameState::new(
            board,
            BoardHistory::new(&board, Player::Black, rules),
            Player::Black,
        ),
    };
    let game_hash = Hash128(rng.gen());
    let draw_value = base_params.draw_equivalent_wins_for_white;

    let mut search = Search::new(
        base_params.clone(),
        evaluator.clone(),
        start_state,
        rng.gen(),
    );
    let mut num_searches = 0usize;

    let mut num_extra_black = 0;
    if setup.extra_black > 0 {
        let mut params = base_params.clone();
        params.max_visits = 1;
        params.root_noise_enabled = false;
        search.set_params(params);
        num_extra_black =
            play_extra_black(&mut search, setup.extra_black, s.handicap_temperature, rng)?;
        num_searches += num_extra_black as usize;
        search.clear_tree();
    }
    if setup.make_game_fair {
        let mut st = search.root_state().clone();
        let Some(fair) = fair_komi(s, base_params, &evaluator, &st, stop, rng)? else {
            return Ok(None);
        };
        st.hist.set_komi(komi_noise.apply(fair, area, rng));
        search.set_position(st);
    } else if (num_extra_black > 0 || is_fork)
        && s.fancy_komi_varying
        && rng.gen_bool(if num_extra_black > 0 { 0.5 } else { 0.25 })
    {
        // KataGo's fancyKomiVarying: a komi between the drawn one and the
        // fair one for the handicap position, plus wide noise.
        let mut st = search.root_state().clone();
        let orig = f64::from(st.hist.rules().komi);
        let Some(fair) = fair_komi(s, base_params, &evaluator, &st, stop, rng)? else {
            return Ok(None);
        };
        let (lo, hi) = (orig.min(fair), orig.max(fair));
        let mut komi = lo + rng.gen::<f64>() * (hi - lo);
        komi += 0.75 * (area as f64).sqrt() * gaussian_truncated(rng, 2.5);
        st.hist.set_komi(komi_noise.apply(komi, area, rng));
        search.set_position(st);
    }
    let mut warned_asym_clamp = false;
    let mut side_queue: Vec<GameState> = Vec::new();

    // Opening moves from the raw policy at temperature 1 (KataGo's
    // initGamesWithPolicy); they belong to the start position.
    if !is_fork && s.init_games_with_policy && s.policy_init_area_prop > 0.0 {
        let mean = s.policy_init_area_prop * area as f64;
        let u: f64 = rng.gen::<f64>().max(1e-12);
        let num = (-u.ln() * mean).floor() as usize;
        num_searches += play_policy_moves(&mut search, base_params, num, 1.0, rng, stop)?;
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
        if compensate && !search.root_state().hist.is_game_finished() {
            let mut st = search.root_state().clone();
            let Some(fair) = fair_komi(s, base_params, &evaluator, &st, stop, rng)? else {
                return Ok(None);
            };
            st.hist.set_komi(komi_noise.apply(fair, area, rng));
            search.set_position(st);
        }
    }
    let start = search.root_state().clone();
    let (start_board, start_hist, start_pla) = (start.board, start.hist.clone(), start.next);

    let mut turns: Vec<TurnRecord> = Vec::new();
    let mut raw_values: Vec<(f64, f64, f64)> = Vec::new();
    let mut historical_wl: Vec<f64> = Vec::new();
    let mut move_comments: Vec<String> = Vec::new();
    let mut hit_turn_limit = true;
    let mut changed_nets_turns: Vec<usize> = Vec::new();
    for _ in 0..s.max_moves_per_game {
        {
            let st = search.root_state();
            let mut hist = st.hist.clone();
            hist.end_game_if_all_pass_alive(&st.board);
            if hist.is_game_finished() {
                let board = st.board;
                let next = st.next;
                search.set_position(GameState::new(board, hist, next));
                hit_turn_limit = false;
                break;
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        // Playout cap randomisation and reduced visits (getSearchLimitsThisMove).
        let mut visits = s.max_visits;
        let mut target_weight = 1.0f64;
        let mut remove_noise = false;
        if s.cheap_search_prob > 0.0 && rng.gen_bool(s.cheap_search_prob) {
            visits = visits.min(s.cheap_search_visits);
            target_weight *= s.cheap_search_target_weight;
            remove_noise = s.cheap_search_target_weight <= 0.0;
        } else if s.reduce_visits
            && s.reduce_visits_threshold_lookback > 0
            && historical_wl.len() >= s.reduce_visits_threshold_lookback
        {
            let recent = &historical_wl[historical_wl.len() - s.reduce_visits_threshold_lookback..];
            let min = recent.iter().copied().fold(f64::MAX, f64::min);
            let max = recent.iter().copied().fold(f64::MIN, f64::max);
            let extreme = min.max(-max).min(1.0);
            let through = extreme - s.reduce_visits_threshold;
            if through > 0.0 {
                let prop = through / (1.0 - s.reduce_visits_threshold);
                let reduction = prop * prop;
                visits = ((visits as f64)
                    + reduction * (s.reduced_visits_min as f64 - visits as f64))
                    .round() as i64;
                visits = visits.max(s.reduced_visits_min);
                target_weight += reduction * (s.reduced_visits_weight - target_weight);
            }
        }
        let mut params = base_params.clone();
        if setup.pda_pla.is_some() {
            // Each side searches with its own visits and its own view of
            // the advantage, so no tree is shared between the sides.
            let (v, clamped) = asymmetric_visits(visits, search.root_state().next, &setup);
            if clamped && !warned_asym_clamp {
                warned_asym_clamp = true;
                eprintln!(
                    "warning: asymmetric playouts would leave fewer than 5 visits ({visits} visits, advantage {:.2} doublings); using 5",
                    setup.pda
                );
            }
            visits = v;
            params.playout_doubling_advantage = setup.pda;
            params.playout_doubling_advantage_pla = crate::search::OptPlayer(setup.pda_pla);
            search.clear_tree();
        }
        params.max_visits = visits;
        if remove_noise {
            params.search_root_as_any_node();
        }
        // The move is chosen without LCB (KataGo's runBotWithLimits "HACK"),
        // which still shapes the policy target.
        let mut move_params = params.clone();
        move_params.use_lcb_for_selection = false;
        search.set_params(params);
        // Tree reuse: the subtree of the move played last is kept
        // (`Search::make_move`), as KataGo's self-play keeps its tree.
        search.run(&RunOptions::default())?;
        num_searches += 1;

        let view = search.view();
        let (turn, root, raw) = record_turn(&view, target_weight);
        raw_values.push(raw);
        let chosen = view
            .with_params(&move_params)
            .chosen_move(rng)
            .unwrap_or(Move::Pass);
        historical_wl.push(root.win_loss);
        move_comments.push(format!(
            "{:.2} {:.2} {:.2} {:.1} v={}",
            turn.white_value_targets.win,
            turn.white_value_targets.loss,
            root.no_result,
            root.score_mean,
            root.visits
        ));
        turns.push(turn);
        // Occasionally fork off a position one odd move away, searched
        // after the game (KataGo's side positions: after any search, cheap
        // ones included, as `Play::runGame` does).
        if s.side_position_prob > 0.0 && rng.gen_bool(s.side_position_prob) {
            if let Some(nn) = view.root_nn_output() {
                let st = search.root_state();
                if let Some(side) = choose_forking_move(&nn.policy, st, Some(chosen), rng)
                    .and_then(|mv| super::side::fork(st, mv))
                {
                    side_queue.push(side);
                }
            }
        }
        if !search.make_move(chosen) {
            // The search only proposes legal moves; a failure here is a bug.
            return Err(SearchError::Eval(crate::search::EvalError(format!(
                "self-play chose illegal move {}",
                chosen.to_gtp(xs, ys)
            ))));
        }
        if search.root_state().hist.is_game_finished() {
            hit_turn_limit = false;
            break;
        }
        if s.switch_nets_mid_game && rng.gen_bool(0.1) {
            if let Some(newer) = new_net() {
                search.set_evaluator(newer.clone());
                evaluator = newer;
                changed_nets_turns.push(search.root_state().hist.moves().len());
            }
        }
    }

    let end = search.root_state().clone();
    drop(search);
    let mut side_params = base_params.clone();
    side_params.max_visits = s.max_visits;
    let (mut side_positions, side_searches) =
        search_side_positions(side_queue, &side_params, &evaluator, stop, rng)?;
    // Side positions are searched after the game, with the last net.
    for sp in &mut side_positions {
        sp.num_nn_changes_so_far = changed_nets_turns.len();
    }
    num_searches += side_searches;
    let outcome = FinalOutcome::compute(&end.board, &end.hist, draw_value);
    let mut all_targets: Vec<ValueTargets> = turns.iter().map(|t| t.white_value_targets).collect();
    all_targets.push(outcome.white_value_targets);
    apply_surprise_weights(s, &mut turns, &all_targets, &raw_values, area);
    // KataGo's move comments show the final row weight.
    for (c, t) in move_comments.iter_mut().zip(&turns) {
        c.push_str(&format!(" weight={:.2}", t.target_weight));
    }

    let mut scored = end.hist.clone();
    if !(scored.is_game_finished() && scored.is_no_result()) {
        scored.end_and_score_game_now(&end.board);
    }
    // KataGo's game type: asymmetric over handicap over normal.
    let mode = if is_fork {
        GameMode::Fork
    } else if setup.pda_pla.is_some() && setup.pda != 0.0 {
        GameMode::Asym
    } else if num_extra_black > 0 {
        GameMode::Handicap
    } else {
        GameMode::Normal
    };
    let sgf = write_sgf_line(
        model_name,
        end.hist.initial_board(),
        num_extra_black,
        mode,
        &start_hist,
        &end.hist,
        &scored,
        game_hash,
        &move_comments,
        xs,
        ys,
    );
    let mut game = FinishedGame {
        start_board,
        start_hist,
        start_pla,
        end_hist: end.hist,
        game_hash,
        hit_turn_limit,
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
        changed_nets_turns,
    };
    num_searches += estimate_leads(s, base_params, &evaluator, &mut game, stop, rng)?;
    Ok(Some(PlayedGame {
        game,
        sgf,
        num_searches,
    }))
}

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

/// The targets of the search just run as one turn's record (weight
/// `target_weight`), with the root's values and the raw net's (win, loss,
/// no-result) for white.
pub(super) fn record_turn(
    view: &SearchView<'_>,
    target_weight: f64,
) -> (TurnRecord, NodeValues, (f64, f64, f64)) {
    let root = view.root_values();
    let (win, loss) = win_loss(&root);
    let white_value_targets = ValueTargets {
        win,
        loss,
        no_result: root.no_result as f32,
        score: root.score_mean as f32,
        lead: None,
    };
    let policy_target: Vec<PolicyTargetMove> = view
        .policy_target()
        .into_iter()
        .map(|(mv, target)| PolicyTargetMove { mv, target })
        .collect();
    let q_value_targets = view
        .child_values()
        .into_iter()
        .map(|(mv, v)| QValueTargetMove {
            mv,
            win_loss: v.win_loss as f32,
            score: v.score_mean as f32,
            visits: v.visits,
        })
        .collect();
    let (policy_surprise, search_entropy, policy_entropy) = view
        .policy_surprise_and_entropy()
        .unwrap_or((0.0, 0.0, 0.0));
    let nn = view.root_nn_output();
    let nn_raw_stats = nn.as_ref().map_or(NnRawStats::default(), |o| NnRawStats {
        white_win_loss: f64::from(o.white_win_prob - o.white_loss_prob),
        white_score_mean: f64::from(o.white_score_mean),
        policy_entropy,
    });
    let raw = nn.as_ref().map_or((0.5, 0.5, 0.0), |o| {
        (
            f64::from(o.white_win_prob),
            f64::from(o.white_loss_prob),
            f64::from(o.white_no_result_prob),
        )
    });
    let turn = TurnRecord {
        target_weight,
        unreduced_num_visits: root.visits,
        policy_target: Some(policy_target),
        policy_surprise,
        policy_entropy,
        search_entropy,
        white_value_targets,
        q_value_targets,
        nn_raw_stats,
    };
    (turn, root, raw)
}

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

/// KL divergence of a result from the raw net's value, capped at 1
/// (KataGo's `valueSurpriseKL`).
fn value_surprise(target: (f64, f64, f64), raw: (f64, f64, f64)) -> f64 {
    let term = |t: f64, r: f64| {
        if t > 1e-100 {
            t * (t.ln() - r.max(1e-100).ln())
        } else {
            0.0
        }
    };
    (term(target.0, raw.0) + term(target.1, raw.1) + term(target.2, raw.2)).clamp(0.0, 1.0)
}

/// Policy and value surprise weighting of the row weights, as
/// `Play::runGame` does after the game.
fn apply_surprise_weights(
    s: &PlaySettings,
    turns: &mut [TurnRecord],
    targets: &[ValueTargets],
    raw: &[(f64, f64, f64)],
    area: usize,
) {
    if s.policy_surprise_data_weight <= 0.0 && s.value_surprise_data_weight <= 0.0 {
        return;
    }
    // Value surprise against the smoothed forward-looking result.
    let now_factor = 1.0 / (1.0 + area as f64 * 0.016);
    let last = targets[targets.len() - 1];
    let (mut w, mut l, mut n) = (
        f64::from(last.win),
        f64::from(last.loss),
        f64::from(last.no_result),
    );
    let mut value_surprise_by_turn = vec![0.0; turns.len()];
    for i in (0..turns.len()).rev() {
        w += now_factor * (f64::from(targets[i].win) - w);
        l += now_factor * (f64::from(targets[i].loss) - l);
        n += now_factor * (f64::from(targets[i].no_result) - n);
        value_surprise_by_turn[i] = value_surprise((w, l, n), raw[i]);
    }
    let sum_weights: f64 = turns.iter().map(|t| t.target_weight).sum();
    if sum_weights < 1.0 {
        return;
    }
    let avg_policy: f64 = turns
        .iter()
        .map(|t| t.policy_surprise * t.target_weight)
        .sum::<f64>()
        / sum_weights;
    let avg_value: f64 = turns
        .iter()
        .zip(&value_surprise_by_turn)
        .map(|(t, v)| v * t.target_weight)
        .sum::<f64>()
        / sum_weights;
    let mut value_weight = s.value_surprise_data_weight;
    if avg_value < 0.010 {
        value_weight *= avg_value / 0.010;
    }
    let threshold = avg_policy * 1.5;
    let policy_prop = |t: &TurnRecord| {
        t.target_weight * t.policy_surprise
            + (1.0 - t.target_weight) * (t.policy_surprise - threshold).max(0.0)
    };
    let sum_policy: f64 = turns.iter().map(policy_prop).sum::<f64>().max(1e-10);
    let sum_value: f64 = turns
        .iter()
        .zip(&value_surprise_by_turn)
        .map(|(t, v)| t.target_weight * v)
        .sum::<f64>()
        .max(1e-10);
    for (t, v) in turns.iter_mut().zip(&value_surprise_by_turn) {
        let pp = policy_prop(t);
        let vp = t.target_weight * v;
        t.target_weight = (1.0 - s.policy_surprise_data_weight - value_weight) * t.target_weight
            + s.policy_surprise_data_weight * pp * sum_weights / sum_policy
            + value_weight * vp * sum_weights / sum_value;
    }
}

/// The game as one SGF line with KataGo's root comment
/// (`startTurnIdx,initTurnNum,gameHash,gtype`) and per-move comments.
#[allow(clippy::too_many_arguments)]
fn write_sgf_line(
    model_name: &str,
    start_board: &Board,
    num_extra_black: u32,
    mode: GameMode,
    start_hist: &BoardHistory,
    end_hist: &BoardHistory,
    scored: &BoardHistory,
    game_hash: Hash128,
    move_comments: &[String],
    xs: usize,
    ys: usize,
) -> String {
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
                let c = |v: usize| (b'a' + v as u8) as char;
                format!("{}{}", c(x), c(y))
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

    #[test]
    fn value_surprise_is_kl_capped() {
        assert_eq!(value_surprise((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)), 0.0);
        let v = value_surprise((1.0, 0.0, 0.0), (0.5, 0.5, 0.0));
        assert!((v - 2f64.ln()).abs() < 1e-12);
        assert_eq!(value_surprise((1.0, 0.0, 0.0), (1e-9, 1.0, 0.0)), 1.0);
    }
}
