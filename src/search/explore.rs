//! The pure formulas of KataGo's search: PUCT selection, first-play
//! urgency, variance-scaled cPUCT, virtual loss, the child-weight
//! adjustments used when averaging (value down-weighting, noise pruning),
//! LCB, root policy temperature and shaped Dirichlet noise, and move choice
//! with temperature. Utilities are white-perspective unless named `self_`.

use rand::Rng;
use rand_distr::{Distribution, Gamma, StandardNormal};

use super::params::SearchParams;
use super::utility::t3_cdf;
use crate::game::Player;

/// Selection value of an illegal move (never chosen).
pub const ILLEGAL_SELECTION_VALUE: f64 = -1e50;
/// Keeps the PUCT numerator positive with no visits at all.
const TOTAL_CHILD_WEIGHT_PUCT_OFFSET: f64 = 0.01;

/// cPUCT growing with log of the parent's total child weight.
pub fn cpuct(params: &SearchParams, total_child_weight: f64) -> f64 {
    params.cpuct_exploration
        + params.cpuct_exploration_log
            * ((total_child_weight + params.cpuct_exploration_base) / params.cpuct_exploration_base)
                .ln()
}

/// The factor multiplying `policy / (1 + childWeight)` in PUCT.
pub fn explore_scaling(params: &SearchParams, total_child_weight: f64, stdev_factor: f64) -> f64 {
    cpuct(params, total_child_weight)
        * (total_child_weight + TOTAL_CHILD_WEIGHT_PUCT_OFFSET).sqrt()
        * stdev_factor
}

/// The exploration scaling of a playout that explores by the human net's
/// policy (KataGo's `getExploreScalingHuman`): `humanSLCpuctExploration`
/// plus `humanSLCpuctPermanent` times the square root of the children's
/// weight, with no utility-stdev factor.
pub fn explore_scaling_human(params: &SearchParams, total_child_weight: f64) -> f64 {
    (params.human_sl_cpuct_exploration
        + params.human_sl_cpuct_permanent * total_child_weight.sqrt())
        * (total_child_weight + TOTAL_CHILD_WEIGHT_PUCT_OFFSET).sqrt()
}

/// PUCT value of a child for the player `pla` to move.
#[inline]
pub fn selection_value(
    scaling: f64,
    policy: f64,
    child_weight: f64,
    child_utility: f64,
    pla: Player,
) -> f64 {
    if policy < 0.0 {
        return ILLEGAL_SELECTION_VALUE;
    }
    let explore = scaling * policy / (1.0 + child_weight);
    let value = if pla == Player::White {
        child_utility
    } else {
        -child_utility
    };
    explore + value
}

/// The child weight at which [`selection_value`] would equal `target`
/// (0 if negative): how many visits the search "wanted" in hindsight.
pub fn selection_value_inverse(
    target: f64,
    scaling: f64,
    policy: f64,
    child_utility: f64,
    pla: Player,
) -> f64 {
    if policy < 0.0 {
        return 0.0;
    }
    let value = if pla == Player::White {
        child_utility
    } else {
        -child_utility
    };
    let explore = target - value;
    if explore <= 0.0 {
        return 1e100;
    }
    (scaling * policy / explore - 1.0).max(0.0)
}

/// A node's aggregate statistics as the formulas need them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatsView {
    pub visits: i64,
    pub weight_sum: f64,
    pub weight_sq_sum: f64,
    pub utility_avg: f64,
    pub utility_sq_avg: f64,
    pub score_mean_avg: f64,
    pub score_mean_sq_avg: f64,
}

/// Variance-scaled cPUCT: `1 + scale * (stdev / prior - 1)` where `stdev` is
/// the parent's utility stdev mixed with a prior of `cpuctUtilityStdevPriorWeight` visits.
pub fn utility_stdev_factor(params: &SearchParams, parent: &StatsView) -> f64 {
    let prior = params.cpuct_utility_stdev_prior;
    let stdev = if parent.visits <= 0 || parent.weight_sum <= 1.0 {
        prior
    } else {
        let u2 = parent.utility_avg * parent.utility_avg;
        let sq = parent.utility_sq_avg.max(u2);
        let w = params.cpuct_utility_stdev_prior_weight;
        (((u2 + prior * prior) * w + sq * parent.weight_sum) / (w + parent.weight_sum - 1.0) - u2)
            .max(0.0)
            .sqrt()
    };
    1.0 + params.cpuct_utility_stdev_scale * (stdev / prior - 1.0)
}

/// First-play urgency: the utility assumed for unvisited children of a node
/// whose player to move is `pla`. `parent_nn_utility` is the node's raw net
/// utility; `visited_policy` the policy mass of children with visits.
pub fn fpu_value(
    params: &SearchParams,
    pla: Player,
    is_root: bool,
    parent_utility: f64,
    parent_nn_utility: f64,
    visited_policy: f64,
) -> f64 {
    let parent_for_fpu = if params.fpu_parent_weight_by_visited_policy {
        let w = visited_policy
            .powf(params.fpu_parent_weight_by_visited_policy_pow)
            .min(1.0);
        w * parent_utility + (1.0 - w) * parent_nn_utility
    } else if params.fpu_parent_weight > 0.0 {
        params.fpu_parent_weight * parent_nn_utility
            + (1.0 - params.fpu_parent_weight) * parent_utility
    } else {
        parent_utility
    };
    let (reduction_max, loss_prop) = if is_root {
        (params.root_fpu_reduction_max, params.root_fpu_loss_prop)
    } else {
        (params.fpu_reduction_max, params.fpu_loss_prop)
    };
    let reduction = reduction_max * visited_policy.max(0.0).sqrt();
    let radius = params.utility_radius();
    let (fpu, loss) = if pla == Player::White {
        (parent_for_fpu - reduction, -radius)
    } else {
        (parent_for_fpu + reduction, radius)
    };
    fpu + (loss - fpu) * loss_prop
}

/// Applies `virtual_losses` in-flight visits to a child's utility and weight,
/// as losses for `pla` (the player choosing among the children).
pub fn apply_virtual_loss(
    params: &SearchParams,
    pla: Player,
    virtual_losses: i32,
    utility: f64,
    weight: f64,
) -> (f64, f64) {
    if virtual_losses <= 0 {
        return (utility, weight);
    }
    let vl_weight = virtual_losses as f64 * params.num_virtual_losses_per_thread;
    let radius = params.utility_radius();
    let vl_utility = if pla == Player::White {
        -radius
    } else {
        radius
    };
    let frac = vl_weight / (vl_weight + weight.max(0.25));
    (utility + (vl_utility - utility) * frac, weight + vl_weight)
}

/// Selection value of a root child pruned as futile: below every legal
/// move, above illegal ones (KataGo's `FUTILE_VISITS_PRUNE_VALUE`).
pub const FUTILE_SELECTION_VALUE: f64 = -1e40;

/// KataGo's futile-visits pruning of a root child during the search
/// (`futileVisitsThreshold`): true when the child, at the visits per
/// weight it has had (with a prior of the parent's weight per visit),
/// cannot reach `threshold` times the heaviest child's weight within the
/// `visits_left` the search has at most. `child_weight` (the edge's weight)
/// includes virtual losses; the visits per weight are the edge's, and the
/// child's own visits count as reached (a child can have more than its
/// edge, and catching up to them is free).
pub fn is_futile_child(
    threshold: f64,
    max_child_weight: f64,
    child_edge_visits: i64,
    child_visits: i64,
    child_weight: f64,
    parent_weight_per_visit: f64,
    visits_left: f64,
) -> bool {
    if threshold <= 0.0 {
        return false;
    }
    let required_weight = threshold * max_child_weight;
    let visits_per_weight =
        (child_edge_visits as f64 + 1.0) / (child_weight + parent_weight_per_visit);
    child_visits as f64 + visits_left < required_weight * visits_per_weight
}

/// [`is_futile_child`] for a move not searched yet: it would need the
/// required weight at the parent's visits per weight.
pub fn is_futile_new_child(
    threshold: f64,
    max_child_weight: f64,
    parent_weight_per_visit: f64,
    visits_left: f64,
) -> bool {
    threshold > 0.0 && visits_left < threshold * max_child_weight / parent_weight_per_visit
}

/// KataGo's `computeUpperBoundVisitsLeftDueToTime`: the most visits the
/// rest of a search can add if it goes on at the speed it had so far
/// (counting `carried_over` seconds of earlier searches on this tree);
/// unbounded (1e30) before 0.1 s of thought or with a single visit.
pub fn upper_bound_visits_left_by_time(
    root_visits: i64,
    time_used: f64,
    planned_limit: f64,
    carried_over: f64,
    threads: i64,
) -> f64 {
    let thought = carried_over + time_used;
    if root_visits <= 1 || thought < 0.1 {
        return 1e30;
    }
    ((planned_limit - time_used) / thought * root_visits as f64 + (threads - 1) as f64).ceil()
}

/// Forced playouts at the root (KataGo's `rootDesiredPerChildVisitsCoeff`):
/// whether a child with this weight must be searched now.
pub fn is_forced_playout(
    params: &SearchParams,
    policy: f64,
    child_weight: f64,
    total_child_weight: f64,
) -> bool {
    params.root_desired_per_child_visits_coeff > 0.0
        && policy > 0.0
        && child_weight
            < (policy * total_child_weight * params.root_desired_per_child_visits_coeff).sqrt()
}

/// Wide root noise: flattens the policy and, half the time, adds a
/// half-normal utility bonus for the player to move.
pub fn wide_root_noise<R: Rng>(
    params: &SearchParams,
    pla: Player,
    rng: &mut R,
    policy: &mut f64,
    utility: &mut f64,
) {
    *policy = policy.powf(1.0 / (4.0 * params.wide_root_noise + 1.0));
    if rng.gen_bool(0.5) {
        let g: f64 = StandardNormal.sample(rng);
        let bonus = params.wide_root_noise * g.abs();
        if pla == Player::White {
            *utility += bonus;
        } else {
            *utility -= bonus;
        }
    }
}

/// One child's statistics during averaging: utility for the parent's
/// player to move, and the weight it contributes.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChildWeight {
    pub self_utility: f64,
    pub weight: f64,
    pub visits: i64,
    /// Raw policy of the move (only for noise pruning).
    pub policy: f64,
}

/// KataGo's noise pruning: walking children in policy order, a child worse
/// than the average before it loses weight beyond twice its policy share.
/// Returns the new total weight.
pub fn prune_noise_weight(params: &SearchParams, children: &mut [ChildWeight], total: f64) -> f64 {
    if children.len() <= 1 || total <= 0.00001 {
        return total;
    }
    let (mut u_sum, mut w_sum, mut p_sum) = (0.0, 0.0, 0.0);
    for c in children.iter_mut() {
        let old = c.weight;
        let mut new = old;
        if w_sum > 0.0 && p_sum > 0.0 {
            let gap = u_sum / w_sum - c.self_utility;
            if gap > 0.0 {
                // KataGo's order of operations, to the last bit.
                let lenient_share = 2.0 * (w_sum * c.policy / p_sum);
                if old > lenient_share {
                    let sub = ((old - lenient_share)
                        * (1.0 - (-gap / params.noise_prune_utility_scale).exp()))
                    .min(params.noise_pruning_cap);
                    new = old - sub;
                    c.weight = new;
                }
            }
        }
        u_sum += c.self_utility * new;
        w_sum += new;
        p_sum += c.policy;
    }
    w_sum
}

/// Subtracts/prunes weight and down-weights children whose value is
/// unlikely to be the best (`value_weight_exponent`, KataGo's
/// `valueWeightExponent`; 0 turns that off), then rescales the weights to
/// sum to `desired_total`.
pub fn downweight_bad_children(
    children: &mut [ChildWeight],
    value_weight_exponent: f64,
    mut current_total: f64,
    desired_total: f64,
    amount_to_subtract: f64,
    amount_to_prune: f64,
) {
    if children.is_empty() || current_total <= 0.0 {
        return;
    }
    let subtract_or_prune = |c: &mut ChildWeight, total: &mut f64| {
        if c.weight < amount_to_prune {
            *total -= c.weight;
            c.weight = 0.0;
            return;
        }
        let new = c.weight - amount_to_subtract;
        if new <= 0.0 {
            *total -= c.weight;
            c.weight = 0.0;
        } else {
            *total -= amount_to_subtract;
            c.weight = new;
        }
    };
    if value_weight_exponent == 0.0 {
        for c in children.iter_mut() {
            subtract_or_prune(c, &mut current_total);
        }
        if current_total != desired_total && current_total > 0.0 {
            let f = desired_total / current_total;
            children.iter_mut().for_each(|c| c.weight *= f);
        }
        return;
    }
    let simple_value = children
        .iter()
        .filter(|c| c.visits > 0)
        .map(|c| c.self_utility * c.weight)
        .sum::<f64>()
        / current_total;
    let mut total_new = 0.0;
    for c in children.iter_mut() {
        if c.visits == 0 {
            continue;
        }
        let precision = 1.5 * c.weight.sqrt();
        let stdev = (1e-8 + 1.0 / precision).sqrt();
        subtract_or_prune(c, &mut current_total);
        let z = (c.self_utility - simple_value) / stdev;
        let p = t3_cdf(z) + 0.0001;
        c.weight *= p.powf(value_weight_exponent);
        total_new += c.weight;
    }
    if total_new > 0.0 {
        let f = desired_total / total_new;
        children.iter_mut().for_each(|c| c.weight *= f);
    }
}

/// Lower confidence bound of a child's utility for the parent's player to
/// move, and its radius. `self_utility` already includes any ending bonus.
pub fn lcb_and_radius(params: &SearchParams, child: &StatsView, self_utility: f64) -> (f64, f64) {
    let range = params.utility_radius();
    let max_radius = 2.0 * range * params.lcb_stdevs;
    let (mut w, mut w2) = (child.weight_sum, child.weight_sq_sum);
    if child.visits <= 0 || w <= 0.0 || w2 <= 0.0 {
        return (-max_radius, max_radius);
    }
    let ess = w * w / w2;
    // A small prior that the variance is as large as it can be keeps the
    // bound sensible for tiny samples without a t-distribution.
    let prior_weight = w / (ess * ess * ess);
    let mut sq = child
        .utility_sq_avg
        .max(child.utility_avg * child.utility_avg + 1e-8);
    sq = (sq * w + (sq + range * range) * prior_weight) / (w + prior_weight);
    w += prior_weight;
    w2 += prior_weight * prior_weight;
    let ess = w * w / w2;
    let var = sq - child.utility_avg * child.utility_avg;
    let radius = (var / ess).sqrt() * params.lcb_stdevs;
    (self_utility - radius, radius)
}

/// KataGo's early-game interpolation: `late + (early - late) * 0.5^(halflives)`
/// with half-lives counted in 19x19-equivalent turns.
pub fn interpolate_early(
    halflife: f64,
    early: f64,
    late: f64,
    turn: usize,
    x_size: usize,
    y_size: usize,
) -> f64 {
    let halflives = turn as f64 / halflife * 19.0 / ((x_size * y_size) as f64).sqrt();
    late + (early - late) * 0.5f64.powf(halflives)
}

/// Picks an index with probability ~ `rel[i]^(1/temperature)`, dampening
/// only moves below `only_below_prob` of the total; the maximum when the
/// temperature is ~0. Returns `None` if nothing has positive weight.
pub fn choose_index_with_temperature<R: Rng>(
    rng: &mut R,
    rel: &[f64],
    temperature: f64,
    only_below_prob: f64,
) -> Option<usize> {
    let max = rel.iter().cloned().fold(0.0, f64::max);
    let sum: f64 = rel.iter().map(|&x| x.max(0.0)).sum();
    if max <= 0.0 || sum <= 0.0 {
        return None;
    }
    if temperature <= 1e-4 && only_below_prob >= 1.0 {
        let mut best = 0;
        for i in 1..rel.len() {
            if rel[i] > rel[best] {
                best = i;
            }
        }
        return Some(best);
    }
    let log_max = max.ln();
    let threshold = (only_below_prob.max(1e-50).ln() + sum.ln() - log_max).min(0.0);
    let processed: Vec<f64> = rel
        .iter()
        .map(|&r| {
            if r <= 0.0 {
                return 0.0;
            }
            let lr = r.ln() - log_max;
            let nl = if lr > threshold {
                lr
            } else {
                (lr - threshold) / temperature + threshold
            };
            nl.exp()
        })
        .collect();
    let total: f64 = processed.iter().sum();
    let mut x = rng.gen::<f64>() * total;
    for (i, p) in processed.iter().enumerate() {
        if x < *p {
            return Some(i);
        }
        x -= p;
    }
    processed.iter().rposition(|&p| p > 0.0)
}

/// Raises a policy (illegal = negative) to the power `1/temperature` and renormalises.
pub fn apply_policy_temperature(policy: &mut [f32], temperature: f64) {
    let max = policy.iter().cloned().fold(0.0f32, f32::max) as f64;
    if max <= 0.0 {
        return;
    }
    let (log_max, inv) = (max.ln(), 1.0 / temperature);
    let mut sum = 0.0;
    for p in policy.iter_mut().filter(|p| **p > 0.0) {
        *p = (((*p as f64).ln() - log_max) * inv).exp() as f32;
        sum += *p as f64;
    }
    if sum > 0.0 {
        for p in policy.iter_mut().filter(|p| **p >= 0.0) {
            *p = (*p as f64 / sum) as f32;
        }
    }
}

/// KataGo's shaped Dirichlet alphas (summing to 1 over legal moves): half
/// uniform, half on moves whose log-policy (capped at 1%) is above the mean.
pub fn dirichlet_alpha_distribution(policy: &[f32]) -> Vec<f64> {
    let legal = policy.iter().filter(|&&p| p >= 0.0).count();
    let mut alpha = vec![0.0; policy.len()];
    if legal == 0 {
        return alpha;
    }
    let mut log_sum = 0.0;
    for (a, &p) in alpha.iter_mut().zip(policy) {
        if p >= 0.0 {
            *a = ((p as f64).min(0.01) + 1e-20).ln();
            log_sum += *a;
        }
    }
    let log_mean = log_sum / legal as f64;
    let mut prop_sum = 0.0;
    for (a, &p) in alpha.iter_mut().zip(policy) {
        if p >= 0.0 {
            *a = (*a - log_mean).max(0.0);
            prop_sum += *a;
        }
    }
    let uniform = 1.0 / legal as f64;
    for (a, &p) in alpha.iter_mut().zip(policy) {
        if p >= 0.0 {
            *a = if prop_sum <= 0.0 {
                uniform
            } else {
                0.5 * (*a / prop_sum + uniform)
            };
        }
    }
    alpha
}

/// Mixes shaped Dirichlet noise into a root policy (illegal moves stay negative).
pub fn add_dirichlet_noise<R: Rng>(params: &SearchParams, rng: &mut R, policy: &mut [f32]) {
    let alpha = dirichlet_alpha_distribution(policy);
    let mut r = vec![0.0; policy.len()];
    let mut r_sum = 0.0;
    for i in 0..policy.len() {
        if policy[i] >= 0.0 {
            let a = alpha[i] * params.root_dirichlet_noise_total_concentration;
            r[i] = Gamma::new(a.max(1e-300), 1.0)
                .map(|g| g.sample(rng))
                .unwrap_or(0.0);
            r_sum += r[i];
        }
    }
    if r_sum <= 0.0 {
        return;
    }
    let w = params.root_dirichlet_noise_weight;
    for i in 0..policy.len() {
        if policy[i] >= 0.0 {
            policy[i] = (r[i] / r_sum * w + policy[i] as f64 * (1.0 - w)) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::params::SetupFor;
    use rand::SeedableRng;

    fn params() -> SearchParams {
        SearchParams::defaults(SetupFor::Gtp)
    }

    #[test]
    fn puct_prefers_policy_then_value_and_inverse_round_trips() {
        let p = params();
        let s = explore_scaling(&p, 100.0, 1.0);
        let a = selection_value(s, 0.5, 10.0, 0.0, Player::Black);
        let b = selection_value(s, 0.1, 10.0, 0.0, Player::Black);
        assert!(a > b);
        // Black prefers low (white-perspective) utility.
        assert!(
            selection_value(s, 0.1, 10.0, -0.3, Player::Black)
                > selection_value(s, 0.1, 10.0, 0.3, Player::Black)
        );
        assert_eq!(
            selection_value(s, -1.0, 0.0, 0.0, Player::White),
            ILLEGAL_SELECTION_VALUE
        );
        let v = selection_value(s, 0.2, 7.0, 0.1, Player::White);
        let w = selection_value_inverse(v, s, 0.2, 0.1, Player::White);
        assert!((w - 7.0).abs() < 1e-9);
        // cPUCT grows with visits only through the log term.
        assert!((cpuct(&p, 0.0) - p.cpuct_exploration).abs() < 1e-12);
        assert!(cpuct(&p, 1e5) > cpuct(&p, 1e3));
    }

    #[test]
    fn stdev_factor_scales_with_observed_variance() {
        let p = params();
        let calm = StatsView {
            visits: 100,
            weight_sum: 100.0,
            utility_avg: 0.1,
            utility_sq_avg: 0.01 + 0.0001,
            ..Default::default()
        };
        let wild = StatsView {
            utility_sq_avg: 0.01 + 0.5,
            ..calm
        };
        assert!(utility_stdev_factor(&p, &calm) < 1.0);
        assert!(utility_stdev_factor(&p, &wild) > 1.0);
        let fresh = StatsView {
            visits: 1,
            weight_sum: 1.0,
            ..Default::default()
        };
        assert!((utility_stdev_factor(&p, &fresh) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn fpu_reduces_towards_the_player_loss() {
        let mut p = params();
        p.fpu_parent_weight_by_visited_policy = false;
        let w = fpu_value(&p, Player::White, false, 0.2, 0.0, 0.25);
        assert!((w - (0.2 - 0.2 * 0.5)).abs() < 1e-12);
        let b = fpu_value(&p, Player::Black, true, 0.2, 0.0, 0.25);
        assert!((b - (0.2 + 0.1 * 0.5)).abs() < 1e-12);
        p.fpu_loss_prop = 1.0;
        assert!(
            (fpu_value(&p, Player::White, false, 0.2, 0.0, 0.25) + p.utility_radius()).abs()
                < 1e-12
        );
        // By visited policy: no mass visited -> use the raw NN utility.
        let p = params();
        let v = fpu_value(&p, Player::White, false, 0.5, -0.5, 0.0);
        assert!((v + 0.5).abs() < 1e-12);
    }

    #[test]
    fn virtual_loss_pushes_towards_loss() {
        let p = params();
        let (u, w) = apply_virtual_loss(&p, Player::White, 1, 0.5, 3.0);
        assert!(u < 0.5 && w > 3.0);
        let (u, _) = apply_virtual_loss(&p, Player::Black, 2, 0.0, 3.0);
        assert!(u > 0.0);
    }

    #[test]
    fn noise_pruning_cuts_overweighted_bad_children() {
        let p = params();
        let mut c = [
            ChildWeight {
                self_utility: 0.3,
                weight: 50.0,
                visits: 50,
                policy: 0.5,
            },
            ChildWeight {
                self_utility: -0.5,
                weight: 40.0,
                visits: 40,
                policy: 0.05,
            },
        ];
        let total = prune_noise_weight(&p, &mut c, 90.0);
        assert!(c[1].weight < 40.0 && c[1].weight >= 10.0, "{}", c[1].weight);
        assert!((total - 50.0 - c[1].weight).abs() < 1e-9);
    }

    #[test]
    fn downweighting_keeps_total_and_favours_good_children() {
        let p = params();
        let mut c = [
            ChildWeight {
                self_utility: 0.3,
                weight: 10.0,
                visits: 10,
                policy: 0.5,
            },
            ChildWeight {
                self_utility: -0.3,
                weight: 10.0,
                visits: 10,
                policy: 0.5,
            },
        ];
        downweight_bad_children(&mut c, p.value_weight_exponent, 20.0, 20.0, 0.0, 0.0);
        assert!((c[0].weight + c[1].weight - 20.0).abs() < 1e-9);
        assert!(c[0].weight > c[1].weight);
    }

    #[test]
    fn lcb_widens_with_few_visits() {
        let p = params();
        let few = StatsView {
            visits: 4,
            weight_sum: 4.0,
            weight_sq_sum: 4.0,
            utility_avg: 0.2,
            utility_sq_avg: 0.05,
            ..Default::default()
        };
        let many = StatsView {
            visits: 400,
            weight_sum: 400.0,
            weight_sq_sum: 400.0,
            ..few
        };
        let (l1, r1) = lcb_and_radius(&p, &few, 0.2);
        let (l2, r2) = lcb_and_radius(&p, &many, 0.2);
        assert!(r1 > r2 && l1 < l2);
        let (l0, r0) = lcb_and_radius(&p, &StatsView::default(), 0.0);
        assert_eq!(l0, -r0);
    }

    #[test]
    fn temperature_choice() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        assert_eq!(
            choose_index_with_temperature(&mut rng, &[1.0, 5.0, 2.0], 0.0, 1.0),
            Some(1)
        );
        assert_eq!(
            choose_index_with_temperature(&mut rng, &[0.0, 0.0], 1.0, 1.0),
            None
        );
        let mut counts = [0; 3];
        for _ in 0..3000 {
            counts[choose_index_with_temperature(&mut rng, &[1.0, 2.0, 0.0], 1.0, 1.0).unwrap()] +=
                1;
        }
        assert_eq!(counts[2], 0);
        assert!(
            counts[1] > counts[0] * 3 / 2 && counts[1] < counts[0] * 5 / 2,
            "{counts:?}"
        );
        assert!((interpolate_early(19.0, 0.5, 0.1, 0, 19, 19) - 0.5).abs() < 1e-12);
        assert!((interpolate_early(19.0, 0.5, 0.1, 19, 19, 19) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn policy_temperature_and_noise_keep_a_distribution() {
        let mut pol = vec![0.7f32, 0.2, 0.1, -1.0];
        apply_policy_temperature(&mut pol, 2.0);
        let s: f32 = pol[..3].iter().sum();
        assert!((s - 1.0).abs() < 1e-5 && pol[3] == -1.0);
        assert!(pol[0] < 0.7 && pol[2] > 0.1);
        let alpha = dirichlet_alpha_distribution(&pol);
        assert!((alpha.iter().sum::<f64>() - 1.0).abs() < 1e-9 && alpha[3] == 0.0);
        let mut p = params();
        p.root_noise_enabled = true;
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        add_dirichlet_noise(&p, &mut rng, &mut pol);
        let s: f32 = pol[..3].iter().sum();
        assert!((s - 1.0).abs() < 1e-4 && pol[3] == -1.0);
        assert!(is_forced_playout(
            &SearchParams {
                root_desired_per_child_visits_coeff: 2.0,
                ..p.clone()
            },
            0.1,
            1.0,
            100.0
        ));
        assert!(!is_forced_playout(&p, 0.1, 1.0, 100.0));
    }

    #[test]
    fn futile_visits_as_katago() {
        // Needs 0.5 x 100 weight at 11 visits per 11 weight: 50 visits;
        // it has 10 and 20 are left.
        assert!(is_futile_child(0.5, 100.0, 10, 10, 10.0, 1.0, 20.0));
        assert!(!is_futile_child(0.5, 100.0, 10, 10, 10.0, 1.0, 40.0));
        assert!(!is_futile_child(0.0, 100.0, 10, 10, 10.0, 1.0, 0.0));
        // 30 visits below the child but 10 through the edge: the estimate
        // is the edge's (50 needed), the child's own 30 count as reached.
        assert!(!is_futile_child(0.5, 100.0, 10, 30, 10.0, 1.0, 20.0));
        assert!(is_futile_child(0.5, 100.0, 10, 29, 10.0, 1.0, 20.0));
        assert!(is_futile_new_child(0.5, 100.0, 1.0, 49.0));
        assert!(!is_futile_new_child(0.5, 100.0, 1.0, 50.0));
        assert!(!is_futile_new_child(0.0, 100.0, 1.0, 0.0));
        // 2 s planned of which 1 s used, 2 s thought with the carried-over
        // one: half again of the 100 visits, plus one per extra thread.
        assert_eq!(
            upper_bound_visits_left_by_time(100, 1.0, 3.0, 1.0, 2),
            101.0
        );
        assert_eq!(
            upper_bound_visits_left_by_time(100, 0.05, 3.0, 0.0, 1),
            1e30
        );
        assert_eq!(upper_bound_visits_left_by_time(1, 1.0, 3.0, 0.0, 1), 1e30);
    }
}
