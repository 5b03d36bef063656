//! Time management around the clock: KataGo's time parameters, the search
//! factors (play faster after passes or when clearly winning), and the
//! search's time limit for one move (`Search::recomputeSearchTimeLimit`,
//! minus the parts that need the tree, which come in as inputs).

use crate::config::{field_rows, read_fields, Config, ConfigError, Field, Row};
use crate::game::Player;

use super::TimeControls;

/// KataGo's time-management parameters, with its defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeParams {
    /// `lagBuffer`: seconds kept back for network and GUI lag (default 0;
    /// KataGo's example GTP config sets 1.0).
    pub lag_buffer: f64,
    /// `searchFactorAfterOnePass`: search scale after the opponent passes.
    pub search_factor_after_one_pass: f64,
    /// `searchFactorAfterTwoPass`: search scale after two passes in a row
    /// (ours and the opponent's, three plies back).
    pub search_factor_after_two_pass: f64,
    /// `searchFactorWhenWinning`: search scale when winning by far.
    pub search_factor_when_winning: f64,
    /// `searchFactorWhenWinningThreshold`: win-loss value (-1..1) from
    /// which [`TimeParams::search_factor_when_winning`] starts to apply.
    pub search_factor_when_winning_threshold: f64,
    /// `overallocateTimeFactor`: scales every recommended time.
    pub overallocate_time_factor: f64,
    /// `midgameTimeFactor`: extra time at the midgame peak.
    pub midgame_time_factor: f64,
    /// `midgameTurnPeakTime`: turn (on 19x19) where the midgame factor peaks.
    pub midgame_turn_peak_time: f64,
    /// `endgameTurnTimeDecay`: turns (on 19x19) over which it decays after.
    pub endgame_turn_time_decay: f64,
    /// `obviousMovesTimeFactor`: time scale for obvious moves (1 = off).
    pub obvious_moves_time_factor: f64,
    /// `obviousMovesPolicyEntropyTolerance`.
    pub obvious_moves_policy_entropy_tolerance: f64,
    /// `obviousMovesPolicySurpriseTolerance`.
    pub obvious_moves_policy_surprise_tolerance: f64,
}

impl Default for TimeParams {
    fn default() -> Self {
        TimeParams {
            lag_buffer: 0.0,
            search_factor_after_one_pass: 1.0,
            search_factor_after_two_pass: 1.0,
            search_factor_when_winning: 1.0,
            search_factor_when_winning_threshold: 1.0,
            overallocate_time_factor: 1.0,
            midgame_time_factor: 1.0,
            midgame_turn_peak_time: 130.0,
            endgame_turn_time_decay: 100.0,
            obvious_moves_time_factor: 1.0,
            obvious_moves_policy_entropy_tolerance: 0.30,
            obvious_moves_policy_surprise_tolerance: 0.15,
        }
    }
}

/// A field of [`TimeParams`] (named so that its closures' type is known
/// before `.doc` is called on it).
type F = Field<TimeParams>;

/// KataGo's time-management keys, their ranges, and the fields they fill
/// (defaults: [`TimeParams::default`], KataGo's).
const TIME_FIELDS: &[F] = &[
    F::f64("lagBuffer", 0.0, 0.0..=3600.0, |p, v| p.lag_buffer = v)
        .doc("Seconds kept back for network and GUI lag."),
    F::f64("searchFactorAfterOnePass", 1.0, 0.0..=1.0, |p, v| {
        p.search_factor_after_one_pass = v
    })
    .doc("Search scale after the opponent passes."),
    F::f64("searchFactorAfterTwoPass", 1.0, 0.0..=1.0, |p, v| {
        p.search_factor_after_two_pass = v
    })
    .doc("Search scale after two passes in a row."),
    F::f64("searchFactorWhenWinning", 1.0, 0.01..=1.0, |p, v| {
        p.search_factor_when_winning = v
    })
    .doc("Search scale when winning by far."),
    F::f64(
        "searchFactorWhenWinningThreshold",
        1.0,
        0.0..=1.0,
        |p, v| p.search_factor_when_winning_threshold = v,
    )
    .doc("Win-loss value from which searchFactorWhenWinning applies."),
    F::f64("overallocateTimeFactor", 1.0, 0.01..=100.0, |p, v| {
        p.overallocate_time_factor = v
    })
    .doc("Scales every recommended time."),
    F::f64("midgameTimeFactor", 1.0, 0.01..=100.0, |p, v| {
        p.midgame_time_factor = v
    })
    .doc("Extra time at the midgame peak."),
    F::f64("midgameTurnPeakTime", 130.0, 0.0..=1000.0, |p, v| {
        p.midgame_turn_peak_time = v
    })
    .doc("Turn (19x19) where the midgame factor peaks."),
    F::f64("endgameTurnTimeDecay", 100.0, 0.0..=1000.0, |p, v| {
        p.endgame_turn_time_decay = v
    })
    .doc("Turns (19x19) over which the midgame factor decays after its peak."),
    F::f64("obviousMovesTimeFactor", 1.0, 0.01..=1.0, |p, v| {
        p.obvious_moves_time_factor = v
    })
    .doc("Time scale for obvious moves (1: off)."),
    F::f64(
        "obviousMovesPolicyEntropyTolerance",
        0.30,
        0.001..=2.0,
        |p, v| p.obvious_moves_policy_entropy_tolerance = v,
    )
    .doc("Policy entropy below which a move counts as obvious."),
    F::f64(
        "obviousMovesPolicySurpriseTolerance",
        0.15,
        0.001..=2.0,
        |p, v| p.obvious_moves_policy_surprise_tolerance = v,
    )
    .doc("Policy surprise below which a move counts as obvious."),
];

impl TimeParams {
    /// Reads the parameters from a config, with KataGo's ranges and defaults.
    pub fn from_config(cfg: &Config) -> Result<TimeParams, ConfigError> {
        let mut p = TimeParams::default();
        read_fields(cfg, TIME_FIELDS, &mut p)?;
        Ok(p)
    }

    /// The configuration reference's rows of the time keys.
    pub fn config_rows() -> Vec<Row> {
        field_rows(TIME_FIELDS)
    }

    /// The search scale for passes just played (KataGo's search start):
    /// `last_was_pass` is the last move, `third_last_was_pass` the move
    /// three plies back (our own previous move), false when absent.
    pub fn pass_search_factor(&self, last_was_pass: bool, third_last_was_pass: bool) -> f64 {
        match (last_was_pass, third_last_was_pass) {
            (true, true) => self.search_factor_after_two_pass,
            (true, false) => self.search_factor_after_one_pass,
            _ => 1.0,
        }
    }

    /// The search scale when winning (KataGo's `PlayUtils::getSearchFactor`):
    /// if in each of the last three searches `pla` was winning by more
    /// than the threshold (win-loss values from white's view, -1..1, times
    /// `win_loss_utility_factor`), scale towards `searchFactorWhenWinning`.
    pub fn winning_search_factor(
        &self,
        win_loss_utility_factor: f64,
        recent_win_loss_values: &[f64],
        pla: Player,
    ) -> f64 {
        let threshold = self.search_factor_when_winning_threshold;
        if recent_win_loss_values.len() < 3 || win_loss_utility_factor - threshold <= 1e-10 {
            return 1.0;
        }
        let last3 = &recent_win_loss_values[recent_win_loss_values.len() - 3..];
        let excess = match pla {
            Player::Black => {
                let least = last3
                    .iter()
                    .fold(-win_loss_utility_factor, |a, &v| a.max(v));
                -threshold - least
            }
            Player::White => {
                let least = last3.iter().fold(win_loss_utility_factor, |a, &v| a.min(v));
                least - threshold
            }
        };
        if excess <= 0.0 {
            return 1.0;
        }
        let lambda = excess / (win_loss_utility_factor - threshold);
        1.0 + lambda * (self.search_factor_when_winning - 1.0)
    }

    /// The time limit for this move's search so far (KataGo's
    /// `recomputeSearchTimeLimit`), called at the start and again as the
    /// search runs. `stop_if_futile` gets the planned limit and says whether
    /// no other move could overtake the best one in that time (the search's
    /// `futileVisitsThreshold` test); return false to skip that test.
    pub fn search_time_limit(
        &self,
        tc: &TimeControls,
        state: &SearchTimeState,
        stop_if_futile: impl FnOnce(f64) -> bool,
    ) -> f64 {
        let budget = tc.get_time(state.board_area, state.stones_on_board, self.lag_buffer);
        let mut rec = budget.recommended * self.overallocate_time_factor;

        if self.midgame_time_factor != 1.0 {
            let area_scale = state.board_area as f64 / 361.0;
            let turn = (state.turn_number as f64).max(0.0);
            let peak = self.midgame_turn_peak_time * area_scale;
            let weight = if turn < peak {
                turn / peak
            } else {
                (-(turn - peak) / (self.endgame_turn_time_decay * area_scale)).exp()
            };
            rec *= 1.0 + weight.clamp(0.0, 1.0) * (self.midgame_time_factor - 1.0);
        }

        if self.obvious_moves_time_factor < 1.0 {
            if let Some((surprise, policy_entropy)) = state.policy_surprise_and_entropy {
                // A confident policy that the search did not contradict.
                let by_entropy =
                    (-policy_entropy / self.obvious_moves_policy_entropy_tolerance).exp();
                let by_surprise = (-surprise / self.obvious_moves_policy_surprise_tolerance).exp();
                rec *= 1.0 + by_entropy.min(by_surprise) * (self.obvious_moves_time_factor - 1.0);
            }
        }

        if rec > 1e-20 {
            // Time already thought (pondering, tree reuse) counts, through a
            // softplus so that we still search a little rather than insta-move.
            let needed_factor = (rec - state.time_carried_over) / rec;
            rec *= ((1.0 + (needed_factor * 6.0).exp()).ln() / 6.0).min(1.0);
        }

        let lag = self.lag_buffer;
        rec = tc
            .round_up_time_limit_if_needed(lag, state.time_used, rec)
            .min(budget.max);
        if stop_if_futile(rec) {
            // Slightly less than used so far: stop now.
            rec = state.time_used * (1.0 - 1e-10);
        }
        rec = tc
            .round_up_time_limit_if_needed(lag, state.time_used, rec)
            .min(budget.max);

        // The search factor is for friendliness (faster after passes), so it
        // may break the minimum.
        (rec.max(budget.min) * state.search_factor).min(budget.max)
    }
}

/// What [`TimeParams::search_time_limit`] needs to know about the search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchTimeState {
    /// Board width times height.
    pub board_area: usize,
    /// Stones on the board.
    pub stones_on_board: usize,
    /// The turn number of the root position (moves since the start).
    pub turn_number: i64,
    /// Seconds spent on this move so far.
    pub time_used: f64,
    /// Search scale (passes, winning): see the `*_search_factor` methods.
    pub search_factor: f64,
    /// Effective seconds of search carried over from earlier (pondering,
    /// tree reuse).
    pub time_carried_over: f64,
    /// (policy surprise, raw policy entropy) of the root when known, for
    /// the obvious-move rule.
    pub policy_surprise_and_entropy: Option<(f64, f64)>,
}

/// An upper bound on the visits the search can still make in its planned
/// time, from its speed so far (KataGo's
/// `computeUpperBoundVisitsLeftDueToTime`); 1e30 when there is too little
/// to estimate from.
pub fn upper_bound_visits_left(
    root_visits: i64,
    time_used: f64,
    time_carried_over: f64,
    planned_time_limit: f64,
    num_threads: usize,
) -> f64 {
    if root_visits <= 1 {
        return 1e30;
    }
    let thought_so_far = time_carried_over + time_used;
    // Trust a visits-per-second estimate only after a tenth of a second.
    if thought_so_far < 0.1 {
        return 1e30;
    }
    let proportion_left = (planned_time_limit - time_used) / thought_so_far;
    (proportion_left * root_visits as f64 + num_threads as f64 - 1.0).ceil()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(time_used: f64) -> SearchTimeState {
        SearchTimeState {
            board_area: 361,
            stones_on_board: 0,
            turn_number: 0,
            time_used,
            search_factor: 1.0,
            time_carried_over: 0.0,
            policy_surprise_and_entropy: None,
        }
    }

    const SOFTPLUS6: f64 = 1.0; // ln(1+e^6)/6 = 1.00041, capped at 1

    #[test]
    fn table_defaults_are_katagos() {
        let mut p = TimeParams {
            lag_buffer: -1.0,
            search_factor_after_one_pass: -1.0,
            search_factor_after_two_pass: -1.0,
            search_factor_when_winning: -1.0,
            search_factor_when_winning_threshold: -1.0,
            overallocate_time_factor: -1.0,
            midgame_time_factor: -1.0,
            midgame_turn_peak_time: -1.0,
            endgame_turn_time_decay: -1.0,
            obvious_moves_time_factor: -1.0,
            obvious_moves_policy_entropy_tolerance: -1.0,
            obvious_moves_policy_surprise_tolerance: -1.0,
        };
        read_fields(&Config::default(), TIME_FIELDS, &mut p).unwrap();
        assert_eq!(p, TimeParams::default());
    }

    #[test]
    fn defaults_and_config_ranges() {
        let cfg =
            Config::from_toml_str("lagBuffer = 1.0\nsearchFactorAfterOnePass = 0.5", "t.toml")
                .unwrap();
        let p = TimeParams::from_config(&cfg).unwrap();
        assert_eq!(p.lag_buffer, 1.0);
        assert_eq!(p.search_factor_after_one_pass, 0.5);
        assert_eq!(p.midgame_turn_peak_time, 130.0);
        assert!(cfg.unused_keys().is_empty());
        let bad = Config::from_toml_str("searchFactorWhenWinning = 0.0", "t.toml").unwrap();
        assert!(TimeParams::from_config(&bad).is_err());
    }

    #[test]
    fn pass_factors() {
        let p = TimeParams {
            search_factor_after_one_pass: 0.5,
            search_factor_after_two_pass: 0.25,
            ..TimeParams::default()
        };
        assert_eq!(p.pass_search_factor(false, true), 1.0);
        assert_eq!(p.pass_search_factor(true, false), 0.5);
        assert_eq!(p.pass_search_factor(true, true), 0.25);
    }

    #[test]
    fn winning_factor() {
        let p = TimeParams {
            search_factor_when_winning: 0.4,
            search_factor_when_winning_threshold: 0.9,
            ..TimeParams::default()
        };
        // White winning at 0.95, 0.97, 0.99: least winning 0.95, excess 0.05
        // of the 0.1 span: halfway to 0.4.
        let f = p.winning_search_factor(1.0, &[0.0, 0.95, 0.97, 0.99], Player::White);
        assert!((f - 0.7).abs() < 1e-12, "{f}");
        // Black sees the same values as losing.
        assert_eq!(
            p.winning_search_factor(1.0, &[0.95, 0.97, 0.99], Player::Black),
            1.0
        );
        let f = p.winning_search_factor(1.0, &[-0.95, -0.97, -0.99], Player::Black);
        assert!((f - 0.7).abs() < 1e-12, "{f}");
        // Too few values, or one below the threshold.
        assert_eq!(
            p.winning_search_factor(1.0, &[0.99, 0.99], Player::White),
            1.0
        );
        assert_eq!(
            p.winning_search_factor(1.0, &[0.5, 0.99, 0.99], Player::White),
            1.0
        );
    }

    #[test]
    fn search_limit_absolute_and_factors() {
        let p = TimeParams::default();
        let tc = TimeControls::absolute(600.0);
        let rec = 600.0 / 181.475;
        let limit = p.search_time_limit(&tc, &state(0.0), |_| false);
        assert!((limit - rec * SOFTPLUS6).abs() < 1e-9, "{limit}");
        // Search factor scales it; futility stops it.
        let half = SearchTimeState {
            search_factor: 0.5,
            ..state(0.0)
        };
        let limit = p.search_time_limit(&tc, &half, |_| false);
        assert!((limit - rec * 0.5).abs() < 1e-9);
        let limit = p.search_time_limit(&tc, &state(1.0), |planned| planned > 1.0);
        assert!(limit < 1.0 && limit > 0.999);
        // Time carried over from pondering shortens the search:
        // rec * ln(1+e^3)/6 when half of it was already thought.
        let carried = SearchTimeState {
            time_carried_over: rec * 0.5,
            ..state(0.0)
        };
        let limit = p.search_time_limit(&tc, &carried, |_| false);
        let expected = rec * (1.0 + 3.0f64.exp()).ln() / 6.0;
        assert!((limit - expected).abs() < 1e-9, "{limit} {expected}");
    }

    #[test]
    fn search_limit_midgame_and_obvious() {
        let p = TimeParams {
            midgame_time_factor: 2.0,
            obvious_moves_time_factor: 0.5,
            ..TimeParams::default()
        };
        let tc = TimeControls::absolute(600.0);
        let rec = 600.0 / 181.475;
        // Turn 65 on 19x19: halfway to the peak, so 1.5x.
        let s = SearchTimeState {
            turn_number: 65,
            ..state(0.0)
        };
        let limit = p.search_time_limit(&tc, &s, |_| false);
        assert!((limit - rec * 1.5).abs() < 1e-9, "{limit}");
        // A zero-entropy, zero-surprise move is fully obvious: 0.5x.
        let s = SearchTimeState {
            policy_surprise_and_entropy: Some((0.0, 0.0)),
            ..state(0.0)
        };
        let limit = p.search_time_limit(&tc, &s, |_| false);
        assert!((limit - rec * 0.5).abs() < 1e-9, "{limit}");
    }

    #[test]
    fn search_limit_rounds_up_at_end_of_main_time() {
        // Byo-yomi with 10 s main time left: use it all plus the period.
        let mut tc = TimeControls::byo_yomi(600.0, 30.0, 5);
        tc.time_left(10.0, 0).unwrap();
        let limit = TimeParams::default().search_time_limit(&tc, &state(0.0), |_| false);
        let max = tc.get_time(361, 0, 0.0).max;
        assert_eq!(limit, 40.0f64.min(max));
        assert!(limit > 30.0);
    }

    #[test]
    fn visits_left_bound() {
        assert_eq!(upper_bound_visits_left(1, 5.0, 0.0, 10.0, 1), 1e30);
        assert_eq!(upper_bound_visits_left(100, 0.05, 0.0, 10.0, 1), 1e30);
        // 2 s for 100 visits, 3 s left: 150 more, plus threads-1.
        assert_eq!(upper_bound_visits_left(100, 2.0, 0.0, 5.0, 4), 153.0);
    }
}
