//! Komi for self-play games as KataGo sets it (`PlayUtils::
//! chooseExtraBlackAndKomi`, `setKomiWithNoise`, `adjustKomiToEven`,
//! `computeLead`): the per-game noise scaled by the board's size, the
//! komi that makes a position fair for the net, and the lead estimated by
//! searches at several komis (`estimateLeadProb`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::Rng;

use super::game_data::FinishedGame;
use super::handicap::gaussian_truncated;
use super::settings::PlaySettings;
use crate::game::{GameState, Player, ScoringRule};
use crate::search::{
    compute_lead, round_and_clip_komi, OptPlayer, PositionEvaluator, RunOptions, Search,
    SearchError, SearchParams,
};

/// A game's komi noise, drawn once per game (KataGo's
/// `ExtraBlackAndKomi::komiStdev` and `allowInteger`).
#[derive(Debug, Clone, Copy)]
pub(super) struct KomiNoise {
    /// The spread: `komiStdev`, or `komiBigStdev` with `komiBigStdevProb`,
    /// times `sqrt(area) / 19` so small boards do not get 19x19 komis.
    pub stdev: f64,
    /// Whether an integer komi may stay (`komiAllowIntegerProb`).
    pub allow_integer: bool,
}

impl KomiNoise {
    /// Draws the game's noise for a board of `area` points.
    pub fn draw(s: &PlaySettings, area: usize, rng: &mut StdRng) -> KomiNoise {
        let mut stdev = s.komi_stdev.max(0.0);
        if s.komi_big_stdev > 0.0 && rng.gen_bool(s.komi_big_stdev_prob) {
            stdev = s.komi_big_stdev;
        }
        stdev *= (area as f64).sqrt() / 19.0;
        KomiNoise {
            stdev,
            allow_integer: rng.gen_bool(s.komi_allow_integer_prob),
        }
    }

    /// KataGo's `setKomiWithNoise`: `mean` plus truncated normal noise,
    /// rounded to a neighbouring half point with linear probability,
    /// clipped to the board, an integer moved half a point when not allowed.
    pub fn apply(&self, mean: f64, area: usize, rng: &mut StdRng) -> f32 {
        let mut komi = mean;
        if self.stdev > 0.0 {
            komi += self.stdev * gaussian_truncated(rng, 3.0);
        }
        let lower = (komi * 2.0).floor() / 2.0;
        let upper = (komi * 2.0).ceil() / 2.0;
        if upper > lower {
            komi = if rng.gen::<f64>() < (komi - lower) / (upper - lower) {
                upper
            } else {
                lower
            };
        }
        let mut komi = round_and_clip_komi(komi, area);
        if !self.allow_integer && komi == komi.trunc() {
            komi += if rng.gen_bool(0.5) { -0.5 } else { 0.5 };
        }
        komi as f32
    }
}

/// KataGo's `getNoiselessParams`: `visits` per search, no root noise or
/// root-only exploration settings.
fn noiseless(base: &SearchParams, visits: i64) -> SearchParams {
    let mut p = base.clone();
    p.max_visits = visits;
    p.max_playouts = visits;
    p.search_root_as_any_node();
    p.search_factor_after_one_pass = 1.0;
    p.search_factor_after_two_pass = 1.0;
    p
}

/// White's `(lead, win_loss)` from a noiseless search of `state` at each
/// komi asked; the first search error is kept in `failure`. Once `stop`
/// is raised nothing more is searched (the caller drops the result).
fn lead_at<E: PositionEvaluator<GameState>>(
    params: &SearchParams,
    evaluator: &Arc<E>,
    state: &GameState,
    rng: &mut StdRng,
    failure: &mut Option<SearchError>,
    stop: &AtomicBool,
    komi: f64,
) -> (f64, f64) {
    if failure.is_some() || stop.load(Ordering::Relaxed) {
        return (0.0, 0.0);
    }
    let mut hist = state.hist.clone();
    hist.set_komi(komi as f32);
    let mut search = Search::new(
        params.clone(),
        evaluator.clone(),
        GameState::new(state.board.clone(), hist, state.next),
        rng.gen(),
    );
    match search.run(&RunOptions::default()) {
        Ok(_) => {
            let v = search.view().root_values();
            (v.lead, v.win_loss)
        }
        Err(e) => {
            *failure = Some(e);
            (0.0, 0.0)
        }
    }
}

/// KataGo's `adjustKomiToEven` (`komiAuto` on the empty board, or a
/// handicap or asymmetric game's start position): the komi at which the
/// net's searches (`compensateKomiVisits` each, no noise) see the game as
/// even, rounded at random to a neighbouring half point; `None` if `stop`
/// was raised meanwhile.
pub(super) fn fair_komi<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    base_params: &SearchParams,
    evaluator: &Arc<E>,
    state: &GameState,
    stop: &AtomicBool,
    rng: &mut StdRng,
) -> Result<Option<f64>, SearchError> {
    let mut params = base_params.clone();
    params.max_visits = s.compensate_komi_visits;
    params.root_noise_enabled = false;
    let area = state.board.x_size() * state.board.y_size();
    let mut failure = None;
    let start_komi = f64::from(state.hist.rules().komi);
    let lead = compute_lead(start_komi, area, false, |komi| {
        lead_at(&params, evaluator, state, rng, &mut failure, stop, komi)
    });
    if let Some(e) = failure {
        return Err(e);
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let even = start_komi - lead;
    let lower = (even * 2.0).floor() * 0.5;
    let up_prob = ((even - lower) / 0.5).clamp(0.0, 1.0);
    let komi = if rng.gen_bool(up_prob) {
        lower + 0.5
    } else {
        lower
    };
    Ok(Some(round_and_clip_komi(komi, area)))
}

/// KataGo's `computeLead` for one position: White's lead from noiseless
/// searches of `estimateLeadVisits` at several komis, the steps of area
/// scoring smoothed; the game's playout advantage is told to the search.
/// `None` if `stop` was raised meanwhile.
fn estimate_lead<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    base_params: &SearchParams,
    evaluator: &Arc<E>,
    state: &GameState,
    pda: (Option<Player>, f64),
    stop: &AtomicBool,
    rng: &mut StdRng,
) -> Result<Option<f32>, SearchError> {
    let mut params = noiseless(base_params, s.estimate_lead_visits);
    if let (Some(pla), adv) = pda {
        if adv != 0.0 {
            params.playout_doubling_advantage_pla = OptPlayer(Some(pla));
            params.playout_doubling_advantage = adv;
        }
    }
    let rules = state.hist.rules();
    let coarse = rules.scoring_rule == ScoringRule::Area && !rules.has_button;
    let area = state.board.x_size() * state.board.y_size();
    let mut failure = None;
    let lead = compute_lead(f64::from(rules.komi), area, coarse, |komi| {
        lead_at(&params, evaluator, state, rng, &mut failure, stop, komi)
    });
    match failure {
        Some(e) => Err(e),
        None if stop.load(Ordering::Relaxed) => Ok(None),
        None => Ok(Some(lead as f32)),
    }
}

/// KataGo's lead estimation after a game (`estimateLeadProb`): each turn
/// that makes rows, and each side position, whose no-result value is below
/// 0.3 gets, with that probability, White's lead from
/// [`estimate_lead`] (unless the game itself ended without result).
/// Returns the searches run.
pub(super) fn estimate_leads<E: PositionEvaluator<GameState>>(
    s: &PlaySettings,
    base_params: &SearchParams,
    evaluator: &Arc<E>,
    game: &mut FinishedGame,
    stop: &AtomicBool,
    rng: &mut StdRng,
) -> Result<usize, SearchError> {
    if s.estimate_lead_prob <= 0.0
        || (game.end_hist.is_game_finished() && game.end_hist.is_no_result())
    {
        return Ok(0);
    }
    let pda = (
        game.playout_doubling_advantage_pla,
        game.playout_doubling_advantage,
    );
    let mut count = 0;
    let mut state = GameState::new(
        game.start_board.clone(),
        game.start_hist.clone(),
        game.start_pla,
    );
    let moves: Vec<_> = game.end_hist.moves()[game.start_hist.moves().len()..].to_vec();
    for (turn, &(mv, _)) in game.turns.iter_mut().zip(&moves) {
        if turn.target_weight > 0.0
            && turn.white_value_targets.no_result < 0.3
            && rng.gen_bool(s.estimate_lead_prob)
        {
            let Some(lead) = estimate_lead(s, base_params, evaluator, &state, pda, stop, rng)?
            else {
                return Ok(count);
            };
            turn.white_value_targets.lead = Some(lead);
            count += 1;
        }
        state.play(mv);
    }
    for sp in &mut game.side_positions {
        if sp.turn.target_weight > 0.0
            && sp.turn.white_value_targets.no_result < 0.3
            && rng.gen_bool(s.estimate_lead_prob)
        {
            let st = GameState::new(sp.board.clone(), sp.hist.clone(), sp.pla);
            let Some(lead) = estimate_lead(s, base_params, evaluator, &st, pda, stop, rng)? else {
                return Ok(count);
            };
            sp.turn.white_value_targets.lead = Some(lead);
            count += 1;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn settings(stdev: f64, big_prob: f64, allow_int: f64) -> PlaySettings {
        let cfg = crate::config::Config::from_cfg_str(
            &format!(
                "komiMean = 7\nkomiStdev = {stdev}\nkomiBigStdevProb = {big_prob}\nkomiBigStdev = 38\nkomiAllowIntegerProb = {allow_int}\n"
            ),
            "t.cfg",
        )
        .unwrap();
        PlaySettings::from_config(&cfg).unwrap().0
    }

    #[test]
    fn komi_noise_scales_with_board_size_as_katago() {
        let mut rng = StdRng::seed_from_u64(1);
        let s = settings(1.9, 0.0, 1.0);
        assert!((KomiNoise::draw(&s, 361, &mut rng).stdev - 1.9).abs() < 1e-12);
        assert!((KomiNoise::draw(&s, 81, &mut rng).stdev - 0.9).abs() < 1e-12);
        let s = settings(1.0, 1.0, 1.0);
        assert!((KomiNoise::draw(&s, 81, &mut rng).stdev - 18.0).abs() < 1e-12);
        // The spread seen on 9x9 is the scaled one, and komis are half points.
        let noise = KomiNoise {
            stdev: 0.9,
            allow_integer: true,
        };
        let draws: Vec<f64> = (0..4000)
            .map(|_| f64::from(noise.apply(7.0, 81, &mut rng)))
            .collect();
        assert!(draws.iter().all(|k| (k * 2.0).fract() == 0.0));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd =
            (draws.iter().map(|k| (k - mean).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        assert!((mean - 7.0).abs() < 0.1, "mean {mean}");
        // Rounding to half points adds about 0.2 of spread on top of 0.9.
        assert!(sd > 0.8 && sd < 1.15, "sd {sd}");
    }

    #[test]
    fn integer_komi_moves_when_not_allowed() {
        let mut rng = StdRng::seed_from_u64(2);
        let noise = KomiNoise {
            stdev: 0.0,
            allow_integer: false,
        };
        for _ in 0..50 {
            let k = noise.apply(7.0, 81, &mut rng);
            assert!(k == 6.5 || k == 7.5, "{k}");
        }
        let noise = KomiNoise {
            stdev: 0.0,
            allow_integer: true,
        };
        assert_eq!(noise.apply(7.0, 81, &mut rng), 7.0);
    }
}
