//! Utilities: how win/loss, no-result and score turn into the one number
//! the search maximises, as KataGo computes them (all from **white's**
//! perspective), plus the per-playout uncertainty weight.

use std::sync::OnceLock;

use super::params::SearchParams;
use crate::nn::NnOutput;

const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;

/// KataGo's score value of a final score: `2/pi * atan((score - center) / (scale * sqrt(area)))`.
pub fn score_value_of_score(score: f64, center: f64, scale: f64, sqrt_board_area: f64) -> f64 {
    ((score - center) / (scale * sqrt_board_area)).atan() * TWO_OVER_PI
}

/// Derivative of [`score_value_of_score`] with respect to the score.
pub fn d_score_value_d_score(score: f64, center: f64, scale: f64, sqrt_board_area: f64) -> f64 {
    let s = scale * sqrt_board_area;
    let d = score - center;
    s / (s * s + d * d) * TWO_OVER_PI
}

/// Board size the expected-score-value table is laid out for (KataGo's
/// default `MAX_BOARD_LEN`); other sizes are handled by rescaling.
const SV_TABLE_BSIZE: i64 = 19;
const EXTRA_SCORE_DISTR_RADIUS: i64 = 60;
const SV_MEAN_RADIUS: i64 = SV_TABLE_BSIZE * SV_TABLE_BSIZE + EXTRA_SCORE_DISTR_RADIUS;
const SV_MEAN_LEN: i64 = SV_MEAN_RADIUS * 2;
const SV_STDEV_LEN: i64 = SV_TABLE_BSIZE * SV_TABLE_BSIZE + EXTRA_SCORE_DISTR_RADIUS;

/// Table of E[score value] for a normal score distribution, by (mean, stdev),
/// integrated numerically exactly as KataGo's `ScoreValue::initTables`.
fn expected_sv_table() -> &'static [f64] {
    static TABLE: OnceLock<Vec<f64>> = OnceLock::new();
    TABLE.get_or_init(|| {
        const STEPS: i64 = 10;
        const BOUND_STDEVS: i64 = 5;
        let min_stdev_steps = -BOUND_STDEVS * STEPS;
        let max_stdev_steps = BOUND_STDEVS * STEPS;
        let normal: Vec<f64> = (min_stdev_steps..=max_stdev_steps)
            .map(|i| {
                let x = i as f64 / STEPS as f64;
                (-0.5 * x * x).exp()
            })
            .collect();
        let min_sv = -(SV_MEAN_RADIUS * STEPS + STEPS / 2 + BOUND_STDEVS * SV_STDEV_LEN * STEPS);
        let max_sv = -min_sv;
        let sv: Vec<f64> = (min_sv..=max_sv)
            .map(|i| score_value_of_score(i as f64 / STEPS as f64, 0.0, 1.0, SV_TABLE_BSIZE as f64))
            .collect();
        let w_sum: f64 = normal.iter().sum();
        let mut table = vec![0.0; (SV_MEAN_LEN * SV_STDEV_LEN) as usize];
        for mean_idx in 0..SV_MEAN_LEN {
            let mean_steps = (mean_idx - SV_MEAN_RADIUS) * STEPS - STEPS / 2;
            for stdev_idx in 0..SV_STDEV_LEN {
                let mut wsv = 0.0;
                for (k, w) in normal.iter().enumerate() {
                    let i = min_stdev_steps + k as i64;
                    let x = mean_steps + stdev_idx * i;
                    wsv += w * sv[(x - min_sv) as usize];
                }
                table[(mean_idx * SV_STDEV_LEN + stdev_idx) as usize] = wsv / w_sum;
            }
        }
        table
    })
}

/// E[score value] of a normal score distribution with this mean and stdev
/// (KataGo's `ScoreValue::expectedWhiteScoreValue`, bilinear in its table).
pub fn expected_score_value(
    mean: f64,
    stdev: f64,
    center: f64,
    scale: f64,
    sqrt_board_area: f64,
) -> f64 {
    let table = expected_sv_table();
    let scale_factor = SV_TABLE_BSIZE as f64 / (scale * sqrt_board_area);
    let mean_scaled = (mean - center) * scale_factor;
    let stdev_scaled = stdev.max(0.0) * scale_factor;
    let mean_rounded = mean_scaled.round();
    let stdev_floored = stdev_scaled.floor();
    let mut m0 = mean_rounded as i64 + SV_MEAN_RADIUS;
    let mut s0 = stdev_floored as i64;
    let mut m1 = m0 + 1;
    let mut s1 = s0 + 1;
    if m0 < 0 {
        m0 = 0;
        m1 = 0;
    }
    if m1 >= SV_MEAN_LEN {
        m0 = SV_MEAN_LEN - 1;
        m1 = SV_MEAN_LEN - 1;
    }
    if s1 >= SV_STDEV_LEN {
        s0 = SV_STDEV_LEN - 1;
        s1 = SV_STDEV_LEN - 1;
    }
    let lm = mean_scaled - mean_rounded + 0.5;
    let ls = stdev_scaled - stdev_floored;
    let at = |m: i64, s: i64| table[(m * SV_STDEV_LEN + s) as usize];
    let b0 = at(m0, s0) + ls * (at(m0, s1) - at(m0, s0));
    let b1 = at(m1, s0) + ls * (at(m1, s1) - at(m1, s0));
    b0 + lm * (b1 - b0)
}

/// Score stdev from the first two moments (0 when they are inconsistent).
pub fn score_stdev(mean: f64, mean_sq: f64) -> f64 {
    let var = mean_sq - mean * mean;
    if var <= 0.0 {
        0.0
    } else {
        var.sqrt()
    }
}

/// The utility function of one search: the parameters plus the board size
/// and the dynamic score centre chosen at the start of the search.
#[derive(Debug, Clone, Copy)]
pub struct UtilityFn {
    pub win_loss_factor: f64,
    pub no_result_for_white: f64,
    pub static_score_factor: f64,
    pub dynamic_score_factor: f64,
    pub dynamic_score_scale: f64,
    /// Centre of the dynamic score utility (white's score).
    pub score_center: f64,
    pub sqrt_board_area: f64,
}

impl UtilityFn {
    /// The utility of a search with `params` on a board of this size and
    /// dynamic score centre.
    pub fn new(
        params: &SearchParams,
        x_size: usize,
        y_size: usize,
        score_center: f64,
    ) -> UtilityFn {
        UtilityFn {
            win_loss_factor: params.win_loss_utility_factor,
            no_result_for_white: params.no_result_utility_for_white,
            static_score_factor: params.static_score_utility_factor,
            dynamic_score_factor: params.dynamic_score_utility_factor,
            dynamic_score_scale: params.dynamic_score_center_scale,
            score_center,
            sqrt_board_area: ((x_size * y_size) as f64).sqrt(),
        }
    }

    /// KataGo's `recentScoreCenter`: the expected score pulled towards 0 by
    /// `dynamicScoreCenterZeroWeight`, by at most `sqrt(area) * scale`.
    pub fn dynamic_center(
        params: &SearchParams,
        x_size: usize,
        y_size: usize,
        expected_score: f64,
    ) -> f64 {
        let c = expected_score * (1.0 - params.dynamic_score_center_zero_weight);
        let cap = ((x_size * y_size) as f64).sqrt() * params.dynamic_score_center_scale;
        c.clamp(expected_score - cap, expected_score + cap)
    }

    /// Utility of the game result (`win_loss` in [-1,1], no-result probability).
    #[inline]
    pub fn result(&self, win_loss: f64, no_result: f64) -> f64 {
        win_loss * self.win_loss_factor + no_result * self.no_result_for_white
    }

    /// Static + dynamic score utility of a score distribution.
    pub fn score(&self, score_mean: f64, score_mean_sq: f64) -> f64 {
        if self.static_score_factor == 0.0 && self.dynamic_score_factor == 0.0 {
            return 0.0;
        }
        let stdev = score_stdev(score_mean, score_mean_sq);
        let s = expected_score_value(score_mean, stdev, 0.0, 2.0, self.sqrt_board_area);
        let d = expected_score_value(
            score_mean,
            stdev,
            self.score_center,
            self.dynamic_score_scale,
            self.sqrt_board_area,
        );
        s * self.static_score_factor + d * self.dynamic_score_factor
    }

    /// Change in score utility if the score moved by `delta`.
    pub fn score_diff(&self, score_mean: f64, score_mean_sq: f64, delta: f64) -> f64 {
        if delta == 0.0 {
            return 0.0;
        }
        let stdev = score_stdev(score_mean, score_mean_sq);
        let a = self.sqrt_board_area;
        let s = expected_score_value(score_mean + delta, stdev, 0.0, 2.0, a)
            - expected_score_value(score_mean, stdev, 0.0, 2.0, a);
        let c = self.score_center;
        let k = self.dynamic_score_scale;
        let d = expected_score_value(score_mean + delta, stdev, c, k, a)
            - expected_score_value(score_mean, stdev, c, k, a);
        s * self.static_score_factor + d * self.dynamic_score_factor
    }

    /// d(score utility)/d(score), ignoring the stdev.
    pub fn approx_score_derivative(&self, score_mean: f64) -> f64 {
        let a = self.sqrt_board_area;
        d_score_value_d_score(score_mean, 0.0, 2.0, a) * self.static_score_factor
            + d_score_value_d_score(score_mean, self.score_center, self.dynamic_score_scale, a)
                * self.dynamic_score_factor
    }

    /// Utility of a raw network output.
    pub fn of_nn(&self, nn: &NnOutput) -> f64 {
        self.result(
            nn.white_win_prob as f64 - nn.white_loss_prob as f64,
            nn.white_no_result_prob as f64,
        ) + self.score(nn.white_score_mean as f64, nn.white_score_mean_sq as f64)
    }

    /// KataGo's uncertainty weight of a playout: `coeff / (u^exp + coeff/maxWeight)`
    /// where `u` is the net's short-term error in utility units; 1 when
    /// uncertainty weighting is off or the net has no error heads.
    pub fn playout_weight(&self, params: &SearchParams, nn: &NnOutput) -> f64 {
        if !params.use_uncertainty
            || nn.shortterm_winloss_error < 0.0
            || nn.shortterm_score_error < 0.0
        {
            return 1.0;
        }
        let u = self.win_loss_factor * nn.shortterm_winloss_error as f64
            + self.approx_score_derivative(nn.white_score_mean as f64)
                * nn.shortterm_score_error as f64;
        let powered = if params.uncertainty_exponent == 1.0 {
            u
        } else if params.uncertainty_exponent == 0.5 {
            u.sqrt()
        } else {
            u.powf(params.uncertainty_exponent)
        };
        let baseline = params.uncertainty_coeff / params.uncertainty_max_weight;
        params.uncertainty_coeff / (powered + baseline)
    }
}

/// CDF of Student's t distribution with 3 degrees of freedom (closed form),
/// which KataGo uses to down-weight children with bad values.
pub fn t3_cdf(z: f64) -> f64 {
    let s3 = 3f64.sqrt();
    0.5 + (z / (s3 * (1.0 + z * z / 3.0)) + (z / s3).atan()) / std::f64::consts::PI
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::params::SetupFor;

    #[test]
    fn expected_score_value_matches_point_value_for_tiny_stdev() {
        for &m in &[-30.0, -5.0, 0.0, 3.5, 12.0] {
            let e = expected_score_value(m, 0.0, 0.0, 1.0, 19.0);
            let p = score_value_of_score(m, 0.0, 1.0, 19.0);
            assert!((e - p).abs() < 0.01, "{m}: {e} vs {p}");
        }
        // Spread pulls the value towards 0 and keeps the sign.
        let wide = expected_score_value(10.0, 30.0, 0.0, 1.0, 9.0);
        let sharp = expected_score_value(10.0, 0.0, 0.0, 1.0, 9.0);
        assert!(wide > 0.0 && wide < sharp);
        // Odd symmetry.
        let a = expected_score_value(7.0, 5.0, 0.0, 1.0, 19.0);
        let b = expected_score_value(-7.0, 5.0, 0.0, 1.0, 19.0);
        assert!((a + b).abs() < 1e-3);
    }

    #[test]
    fn dynamic_center_is_pulled_to_zero_and_capped() {
        let p = SearchParams::defaults(SetupFor::Gtp);
        let c = UtilityFn::dynamic_center(&p, 19, 19, 10.0);
        assert!((c - 8.0).abs() < 1e-12);
        // A huge expected score can move at most sqrt(area)*scale.
        let c = UtilityFn::dynamic_center(&p, 9, 9, 100.0);
        assert!((c - (100.0 - 9.0 * 0.75)).abs() < 1e-9);
    }

    #[test]
    fn utility_combines_result_and_score() {
        let p = SearchParams::defaults(SetupFor::Gtp);
        let u = UtilityFn::new(&p, 19, 19, 0.0);
        assert_eq!(u.result(0.5, 0.0), 0.5);
        let up = u.score(5.0, 25.0 + 16.0);
        let down = u.score(-5.0, 25.0 + 16.0);
        assert!(up > 0.0 && (up + down).abs() < 1e-3);
        assert!(up < p.static_score_utility_factor + p.dynamic_score_utility_factor);
        // The derivative agrees with a finite difference of the point values.
        let h = 1e-4;
        let fd = (u.score(2.0 + h, (2.0 + h) * (2.0f64 + h))
            - u.score(2.0 - h, (2.0 - h) * (2.0f64 - h)))
            / (2.0 * h);
        assert!(
            (fd - u.approx_score_derivative(2.0)).abs() < 0.02 * fd.abs().max(1e-3),
            "{fd}"
        );
    }

    #[test]
    fn uncertainty_weight_is_bounded() {
        let p = SearchParams::defaults(SetupFor::Gtp);
        let u = UtilityFn::new(&p, 19, 19, 0.0);
        let mut nn = NnOutput {
            x_size: 19,
            y_size: 19,
            policy: vec![],
            white_win_prob: 0.5,
            white_loss_prob: 0.5,
            white_no_result_prob: 0.0,
            white_score_mean: 0.0,
            white_score_mean_sq: 1.0,
            white_lead: 0.0,
            var_time_left: -1.0,
            shortterm_winloss_error: 0.0,
            shortterm_score_error: 0.0,
            white_ownership: None,
        };
        assert!((u.playout_weight(&p, &nn) - p.uncertainty_max_weight).abs() < 1e-9);
        nn.shortterm_winloss_error = 0.5;
        let w = u.playout_weight(&p, &nn);
        assert!(w < 1.0 && w > 0.0);
        nn.shortterm_winloss_error = -1.0;
        assert_eq!(u.playout_weight(&p, &nn), 1.0);
    }

    #[test]
    fn t3_cdf_is_a_cdf() {
        assert!((t3_cdf(0.0) - 0.5).abs() < 1e-12);
        assert!((t3_cdf(2.0) + t3_cdf(-2.0) - 1.0).abs() < 1e-12);
        // Known value: P(T3 <= 1) = 0.8044988905221148.
        assert!((t3_cdf(1.0) - 0.804_498_890_522_114_8).abs() < 1e-9);
        assert!(t3_cdf(-50.0) < 1e-4 && t3_cdf(50.0) > 1.0 - 1e-4);
    }
}
