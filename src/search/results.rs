//! Reading a search: per-move infos (as KataGo's `AnalysisData`), root
//! values, tree-averaged ownership, and the move to play (LCB, pruning of
//! visits the search would not have spent in hindsight, temperature).

use rand::Rng;

use super::explore;
use super::playout::policy_index;
use super::runner::SearchView;
use super::tree::{Node, NodeValues};
use super::utility::score_stdev;
use crate::game::{Move, Player};
use crate::nn::NnOutput;

/// One root move, as KataGo reports it. Values are from the perspective of
/// the player to move at the root unless named `white_`.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveInfo {
    pub mv: Move,
    pub visits: i64,
    /// Same as `visits` in a tree search (KataGo's graph search differs).
    pub edge_visits: i64,
    pub weight: f64,
    pub winrate: f64,
    pub score_mean: f64,
    pub score_lead: f64,
    /// KataGo's `scoreSelfplay`: the expected score (mean).
    pub score_selfplay: f64,
    pub score_stdev: f64,
    pub prior: f64,
    pub utility: f64,
    pub lcb: f64,
    pub utility_lcb: f64,
    /// Rank by play selection value (0 = the move the search prefers).
    pub order: usize,
    /// Value the move is chosen by (weight after LCB and pruning).
    pub play_selection_value: f64,
    pub pv: Vec<Move>,
    pub pv_visits: Vec<i64>,
    /// Ownership after this move, +1 = root player, if computed.
    pub ownership: Option<Vec<f64>>,
}

/// The root as a whole.
#[derive(Debug, Clone, PartialEq)]
pub struct RootInfo {
    pub visits: i64,
    pub weight: f64,
    /// Root player's winrate.
    pub winrate: f64,
    pub score_mean: f64,
    pub score_lead: f64,
    pub score_stdev: f64,
    pub utility: f64,
    /// Raw network values at the root (root player's perspective).
    pub raw_winrate: f64,
    pub raw_score_mean: f64,
    pub raw_lead: f64,
    pub raw_no_result: f64,
    pub raw_shortterm_winloss_error: f64,
    pub raw_shortterm_score_error: f64,
    pub raw_var_time_left: f64,
    pub current_player: Player,
}

/// Sign making white-perspective values root-player perspective.
fn sign(p: Player) -> f64 {
    if p == Player::White {
        1.0
    } else {
        -1.0
    }
}

impl SearchView<'_> {
    /// Root values, `None` before the root is evaluated.
    pub fn root_info(&self) -> Option<RootInfo> {
        let v = self.root.values();
        let nn = self.root.nn()?;
        if v.weight_sum <= 0.0 {
            return None;
        }
        let s = sign(self.root_pla);
        Some(RootInfo {
            visits: v.visits,
            weight: v.weight_sum,
            winrate: 0.5 * (1.0 + s * v.win_loss.clamp(-1.0, 1.0)),
            score_mean: s * v.score_mean,
            score_lead: s * v.lead,
            score_stdev: score_stdev(v.score_mean, v.score_mean_sq),
            utility: s * v.utility,
            raw_winrate: if s > 0.0 {
                nn.white_win_prob as f64
            } else {
                nn.white_loss_prob as f64
            },
            raw_score_mean: s * nn.white_score_mean as f64,
            raw_lead: s * nn.white_lead as f64,
            raw_no_result: nn.white_no_result_prob as f64,
            raw_shortterm_winloss_error: nn.shortterm_winloss_error as f64,
            raw_shortterm_score_error: nn.shortterm_score_error as f64,
            raw_var_time_left: nn.var_time_left as f64,
            current_player: self.root_pla,
        })
    }

    /// Root children with their play selection values, KataGo's
    /// `getPlaySelectionValues`: weights, reduced to what the search would
    /// have wanted in hindsight (policy target pruning), then LCB.
    /// Returns (move, child, selection value, lcb, radius).
    fn selection(&self) -> Vec<(Move, std::sync::Arc<Node>, f64, f64, f64)> {
        let p = self.params;
        let Some(nn) = self.root.nn() else {
            return Vec::new();
        };
        let (xs, ys) = (self.x_size, self.y_size);
        let pla = self.root_pla;
        let mut out: Vec<(Move, std::sync::Arc<Node>, f64, f64, f64)> = Vec::new();
        let mut total = 0.0;
        for c in self.root.children().iter() {
            let w = c.node.weight();
            total += w;
            let pol = nn.policy[policy_index(c.mv, xs, ys)];
            let v = if pol < 0.0 { 0.0 } else { w };
            out.push((c.mv, c.node.clone(), v, 0.0, 0.0));
        }
        if out.is_empty() {
            return out;
        }
        // The most stably explored child.
        let mut best = 0;
        let mut best_g = f64::MIN;
        for (i, (mv, n, w, _, _)) in out.iter().enumerate() {
            let ev = n.visits() as f64;
            let g = w * (ev - 1.0).max(0.0) / ev.max(1.0)
                + 2.0 * nn.policy[policy_index(*mv, xs, ys)] as f64;
            if g > best_g {
                best_g = g;
                best = i;
            }
        }
        let best_weight = out[best].2;
        let parent = self.root.values();
        let stdev_factor = explore::utility_stdev_factor(p, &parent.view());
        let scaling = explore::explore_scaling(p, total, stdev_factor);
        let util_of = |n: &Node| n.values().utility;
        let best_value = {
            let (mv, n, _, _, _) = &out[best];
            explore::selection_value(
                scaling,
                nn.policy[policy_index(*mv, xs, ys)] as f64,
                n.weight(),
                util_of(n),
                pla,
            )
        };
        for (i, (mv, n, w, _, _)) in out.iter_mut().enumerate() {
            if i == best || n.visits() <= 0 {
                continue;
            }
            let pol = nn.policy[policy_index(*mv, xs, ys)] as f64;
            let wanted =
                explore::selection_value_inverse(best_value, scaling, pol, util_of(n), pla);
            *w = w.min(wanted).ceil().min(*w);
        }
        if p.use_lcb_for_selection {
            let mut best_lcb = -1e10;
            let mut best_idx = None;
            for (i, (_, n, w, lcb, radius)) in out.iter_mut().enumerate() {
                let v = n.values();
                let self_u = sign(pla) * v.utility;
                let (l, r) = explore::lcb_and_radius(p, &v.view(), self_u);
                *lcb = l;
                *radius = r;
                if *w > 0.0 && *w >= p.min_visit_prop_for_lcb * best_weight && l > best_lcb {
                    best_lcb = l;
                    best_idx = Some(i);
                }
            }
            if let Some(bi) = best_idx.filter(|&i| p.use_non_buggy_lcb || i > 0) {
                let mut adjusted = out[bi].2;
                for (i, (_, _, w, lcb, radius)) in out.iter().enumerate() {
                    let excess = best_lcb - lcb;
                    if i == bi || excess < 0.0 {
                        continue;
                    }
                    let f = (radius + excess) / (radius + 0.2 * excess);
                    adjusted = adjusted.max(f * f * w);
                }
                out[bi].2 = adjusted;
            }
        }
        let max = out.iter().map(|x| x.2).fold(0.0, f64::max);
        let sub = p.chosen_move_subtract.min(max / 64.0);
        let prune = p.chosen_move_prune.min(max / 64.0);
        for x in out.iter_mut() {
            x.2 = if x.2 < prune {
                0.0
            } else {
                (x.2 - sub).max(0.0)
            };
        }
        out
    }

    /// The move to play: by play selection value with KataGo's chosen-move
    /// temperature; from the raw policy if the root has no children.
    pub fn chosen_move<R: Rng>(&self, rng: &mut R) -> Option<Move> {
        let p = self.params;
        let sel = self.selection();
        let temp = explore::interpolate_early(
            p.chosen_move_temperature_halflife,
            p.chosen_move_temperature_early,
            p.chosen_move_temperature,
            self.turn,
            self.x_size,
            self.y_size,
        );
        if sel.iter().any(|x| x.2 > 0.0) {
            let vals: Vec<f64> = sel.iter().map(|x| x.2).collect();
            let i = explore::choose_index_with_temperature(
                rng,
                &vals,
                temp,
                p.chosen_move_temperature_only_below_prob,
            )?;
            return Some(sel[i].0);
        }
        let nn = self.root.nn()?;
        let vals: Vec<f64> = nn.policy.iter().map(|&x| (x as f64).max(0.0)).collect();
        let i = explore::choose_index_with_temperature(rng, &vals, temp, 1.0)?;
        Some(super::playout::move_of_index(i, self.x_size, self.y_size))
    }

    /// Per-move infos for the root's children with visits, best first, with
    /// PVs up to `max_pv_len` and per-move ownership if `ownership` is set.
    pub fn move_infos(&self, max_pv_len: usize, ownership: bool) -> Vec<MoveInfo> {
        let p = self.params;
        let Some(nn) = self.root.nn() else {
            return Vec::new();
        };
        let s = sign(self.root_pla);
        let mut infos: Vec<MoveInfo> = self
            .selection()
            .into_iter()
            .filter(|x| x.1.visits() > 0)
            .map(|(mv, n, psv, lcb, radius)| {
                let v = n.values();
                let (pv, pv_visits) = pv_of(mv, &n, max_pv_len);
                let winrate = 0.5 * (1.0 + s * v.win_loss.clamp(-1.0, 1.0));
                let utility = s * v.utility;
                // KataGo's lcb field is in winrate units: utility radius over the win/loss factor, halved.
                let wl_radius = radius / p.win_loss_utility_factor.max(1e-9) * 0.5;
                let _ = lcb;
                MoveInfo {
                    mv,
                    visits: v.visits,
                    edge_visits: v.visits,
                    weight: v.weight_sum,
                    winrate,
                    score_mean: s * v.score_mean,
                    score_lead: s * v.lead,
                    score_selfplay: s * v.score_mean,
                    score_stdev: score_stdev(v.score_mean, v.score_mean_sq),
                    prior: nn.policy[policy_index(mv, self.x_size, self.y_size)] as f64,
                    utility,
                    lcb: winrate - wl_radius,
                    utility_lcb: utility - radius,
                    order: 0,
                    play_selection_value: psv,
                    pv,
                    pv_visits,
                    ownership: ownership.then(|| tree_ownership(&n, s)).flatten(),
                }
            })
            .collect();
        infos.sort_by(|a, b| {
            b.play_selection_value
                .total_cmp(&a.play_selection_value)
                .then(b.weight.total_cmp(&a.weight))
                .then(b.prior.total_cmp(&a.prior))
        });
        for (i, m) in infos.iter_mut().enumerate() {
            m.order = i;
        }
        infos
    }

    /// Ownership averaged over the tree, +1 = the root player, and its
    /// standard deviation; `None` if the root has no ownership.
    pub fn ownership(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        let s = sign(self.root_pla);
        let n = self.x_size * self.y_size;
        let mut sum = vec![0.0; n];
        let mut sq = vec![0.0; n];
        let w = accumulate_ownership(self.root, 1.0, &mut sum, &mut sq);
        if w <= 0.0 {
            return None;
        }
        let mean: Vec<f64> = sum.iter().map(|x| s * x / w).collect();
        let stdev: Vec<f64> = sq
            .iter()
            .zip(&mean)
            .map(|(q, m)| (q / w - m * m).max(0.0).sqrt())
            .collect();
        Some((mean, stdev))
    }

    /// The root values as the search sees them.
    pub fn root_values(&self) -> NodeValues {
        self.root.values()
    }

    /// The network output the root was expanded with (its raw values and
    /// policy, before any search), `None` before the root is evaluated.
    pub fn root_nn_output(&self) -> Option<std::sync::Arc<NnOutput>> {
        self.root.nn()
    }
}

/// The principal variation from a root child: the heaviest child at each step.
fn pv_of(mv: Move, node: &std::sync::Arc<Node>, max_len: usize) -> (Vec<Move>, Vec<i64>) {
    let mut pv = vec![mv];
    let mut visits = vec![node.visits()];
    let mut cur = node.clone();
    while pv.len() < max_len {
        let next = cur
            .children()
            .iter()
            .filter(|c| c.node.visits() > 0)
            .max_by(|a, b| a.node.weight().total_cmp(&b.node.weight()))
            .map(|c| (c.mv, c.node.clone()));
        let Some((m, n)) = next else { break };
        pv.push(m);
        visits.push(n.visits());
        cur = n;
    }
    (pv, visits)
}

/// Adds `scale` times a subtree's ownership (weighted like KataGo: each
/// node's own evaluation by its own weight share, the rest split among
/// children by weight). Returns the weight covered.
fn accumulate_ownership(node: &Node, scale: f64, sum: &mut [f64], sq: &mut [f64]) -> f64 {
    let Some(nn) = node.nn() else { return 0.0 };
    let Some(own) = nn.white_ownership.as_ref() else {
        return 0.0;
    };
    let total = node.weight();
    if total <= 0.0 {
        return 0.0;
    }
    let children: Vec<(f64, std::sync::Arc<Node>)> = node
        .children()
        .iter()
        .filter(|c| {
            c.node.visits() > 0
                && c.node
                    .nn()
                    .and_then(|n| n.white_ownership.clone())
                    .is_some()
        })
        .map(|c| (c.node.weight(), c.node.clone()))
        .collect();
    let child_w: f64 = children.iter().map(|c| c.0).sum();
    let self_share = ((total - child_w) / total).clamp(0.0, 1.0);
    let self_share = if children.is_empty() { 1.0 } else { self_share };
    for (i, &o) in own.iter().enumerate().take(sum.len()) {
        sum[i] += scale * self_share * o as f64;
        sq[i] += scale * self_share * (o as f64) * (o as f64);
    }
    if child_w > 0.0 {
        for (w, c) in &children {
            let share = (1.0 - self_share) * w / child_w;
            if share * scale > 1e-4 {
                accumulate_ownership(c, scale * share, sum, sq);
            } else {
                // Too small to recurse: count it at this node's own value.
                for (i, &o) in own.iter().enumerate().take(sum.len()) {
                    sum[i] += scale * share * o as f64;
                    sq[i] += scale * share * (o as f64) * (o as f64);
                }
            }
        }
    }
    scale
}

fn tree_ownership(node: &std::sync::Arc<Node>, s: f64) -> Option<Vec<f64>> {
    let nn = node.nn()?;
    let n = nn.x_size * nn.y_size;
    let mut sum = vec![0.0; n];
    let mut sq = vec![0.0; n];
    let w = accumulate_ownership(node, 1.0, &mut sum, &mut sq);
    (w > 0.0).then(|| sum.iter().map(|x| s * x / w).collect())
}
