//! One turn's record: the search limits of a move (KataGo's playout cap
//! randomisation and reduced visits, `getSearchLimitsThisMove`), the
//! targets of the search just run, and the surprise weighting of the rows
//! after the game. Shared by the game loop and the side positions.

use rand::rngs::StdRng;
use rand::Rng;

use super::game_data::{NnRawStats, PolicyTargetMove, QValueTargetMove, TurnRecord, ValueTargets};
use super::settings::PlaySettings;
use crate::search::{NodeValues, SearchView};

/// Win and loss probabilities of a node's values (white's view).
fn win_loss(v: &NodeValues) -> (f32, f32) {
    let nr = v.no_result.clamp(0.0, 1.0);
    let wl = v.win_loss.clamp(-1.0, 1.0);
    (
        ((1.0 - nr + wl) * 0.5) as f32,
        ((1.0 - nr - wl) * 0.5) as f32,
    )
}

/// How hard one move is searched and how much its row counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct MoveLimits {
    /// Visits of the search.
    pub visits: i64,
    /// Weight of the turn's row (0: no row).
    pub target_weight: f64,
    /// A cheap search whose row is dropped searches the root as any node
    /// (no noise, no root temperature).
    pub remove_noise: bool,
}

/// The limits of the next move (KataGo's `getSearchLimitsThisMove`): a
/// cheap search with probability `cheapSearchProb`, else fewer visits when
/// the last `reduceVisitsThresholdLookback` searches were all one-sided.
/// `historical_wl` holds the root win-loss value of every search so far.
pub(super) fn search_limits(
    s: &PlaySettings,
    historical_wl: &[f64],
    rng: &mut StdRng,
) -> MoveLimits {
    let mut limits = MoveLimits {
        visits: s.max_visits,
        target_weight: 1.0,
        remove_noise: false,
    };
    if s.cheap_search_prob > 0.0 && rng.gen_bool(s.cheap_search_prob) {
        limits.visits = limits.visits.min(s.cheap_search_visits);
        limits.target_weight *= s.cheap_search_target_weight;
        limits.remove_noise = s.cheap_search_target_weight <= 0.0;
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
            let visits = limits.visits;
            limits.visits = ((visits as f64)
                + reduction * (s.reduced_visits_min as f64 - visits as f64))
                .round() as i64;
            limits.visits = limits.visits.max(s.reduced_visits_min);
            limits.target_weight += reduction * (s.reduced_visits_weight - limits.target_weight);
        }
    }
    limits
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
pub(super) fn apply_surprise_weights(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_surprise_is_kl_capped() {
        assert_eq!(value_surprise((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)), 0.0);
        let v = value_surprise((1.0, 0.0, 0.0), (0.5, 0.5, 0.0));
        assert!((v - 2f64.ln()).abs() < 1e-12);
        assert_eq!(value_surprise((1.0, 0.0, 0.0), (1e-9, 1.0, 0.0)), 1.0);
    }
}
