//! Reading a search: per-move infos (as KataGo's `AnalysisData`), root
//! values, tree-averaged ownership, and the move to play (LCB, pruning of
//! visits the search would not have spent in hindsight, temperature).

use std::sync::Arc;

use super::explore;
use super::gumbel::GumbelRoot;
use super::params::SearchParams;
use super::root_symmetry::RootSymmetry;
use super::tree::{Node, NodeValues};
use super::utility::{score_stdev, UtilityFn};
use crate::game::{Move, Player};
use crate::nn::NnOutput;

mod print_tree;
mod pruned;
mod symmetric;
pub use print_tree::PrintTreeOptions;
#[cfg(test)]
pub(crate) use symmetric::symmetric_copies;

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
    /// KataGo's `lcb`: the winrate less the utility LCB radius scaled to
    /// the winrate's share of the utility.
    pub lcb: f64,
    /// The utility's lower confidence bound.
    pub utility_lcb: f64,
    /// Rank by play selection value (0 = the move the search prefers).
    pub order: usize,
    /// Value the move is chosen by (weight after LCB and pruning).
    pub play_selection_value: f64,
    pub pv: Vec<Move>,
    /// Visits of each node along the PV.
    pub pv_visits: Vec<i64>,
    /// Edge visits along the PV (KataGo's `pvEdgeVisits`; the same as
    /// `pv_visits` in a tree search).
    pub pv_edge_visits: Vec<i64>,
    /// Ownership after this move averaged over its subtree, +1 = root
    /// player, if computed.
    pub ownership: Option<Vec<f64>>,
    /// The standard deviation of that ownership over the subtree.
    pub ownership_stdev: Option<Vec<f64>>,
    /// With root symmetry pruning: the searched move this one is a
    /// symmetric copy of (KataGo's `isSymmetryOf`).
    pub is_symmetry_of: Option<Move>,
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

/// A read-only view of a running or finished search, for results.
pub struct SearchView<'a> {
    pub(crate) params: &'a SearchParams,
    pub(crate) root: &'a Node,
    pub(crate) root_pla: Player,
    pub(crate) x_size: usize,
    pub(crate) y_size: usize,
    pub(crate) turn: usize,
    /// The utility in force (for the playout weight of an evaluation).
    pub(crate) utility: UtilityFn,
    /// The root's symmetries (root symmetry pruning).
    pub(crate) root_symmetry: &'a RootSymmetry,
    /// The root's ending score bonus per policy index (empty: none).
    pub(crate) ending_bonus: &'a [f64],
    /// `fillDameBeforePass` applies at the root.
    pub(crate) fills_dame: bool,
    /// The human-style net's output at the root, if one ran.
    pub(crate) human_root: Option<std::sync::Arc<NnOutput>>,
    /// Gumbel root search's halving of the search, if it ran one.
    pub(crate) gumbel: Option<&'a GumbelRoot>,
}

/// Sign making white-perspective values root-player perspective.
pub(super) fn sign(p: Player) -> f64 {
    if p == Player::White {
        1.0
    } else {
        -1.0
    }
}

impl<'a> SearchView<'a> {
    /// The same search seen with other parameters for the choices made
    /// from it (self-play chooses its move without LCB but builds its
    /// policy target with it, as KataGo does).
    pub fn with_params<'b>(&self, params: &'b SearchParams) -> SearchView<'b>
    where
        'a: 'b,
    {
        SearchView {
            params,
            root: self.root,
            root_pla: self.root_pla,
            x_size: self.x_size,
            y_size: self.y_size,
            turn: self.turn,
            utility: self.utility,
            root_symmetry: self.root_symmetry,
            ending_bonus: self.ending_bonus,
            fills_dame: self.fills_dame,
            human_root: self.human_root.clone(),
            gumbel: self.gumbel,
        }
    }

    /// A root child's utility (white's view) with its ending score bonus,
    /// as KataGo weighs root children for the move choice and LCB.
    pub(super) fn root_child_utility(&self, mv: Move, v: &NodeValues) -> f64 {
        match self
            .ending_bonus
            .get(mv.policy_index(self.x_size, self.y_size))
        {
            Some(&bonus) if bonus != 0.0 && v.visits > 0 && v.weight_sum > 0.0 => {
                v.utility
                    + self
                        .utility
                        .score_diff(v.score_mean, v.score_mean_sq, bonus)
            }
            _ => v.utility,
        }
    }

    /// Root values as KataGo reports them (its pruned root values: the
    /// children weighed by what the search would play, see
    /// [`SearchView::pruned_root_values`]), `None` before the root is
    /// evaluated.
    pub fn root_info(&self) -> Option<RootInfo> {
        let nn = self.root.nn()?;
        if self.root.values().weight_sum <= 0.0 {
            return None;
        }
        let v = self
            .pruned_root_values(&nn)
            .unwrap_or_else(|| self.root.values());
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

    /// The children of `node` with their play selection values, KataGo's
    /// `getPlaySelectionValues`: weights, at the root reduced to what the
    /// search would have wanted in hindsight (policy target pruning), then
    /// LCB (with `useLcbForSelection`, unless `use_lcb` is false: KataGo's
    /// `neverUseLcb`), then `chosenMovePrune`/`chosenMoveSubtract`. LCBs and
    /// radii are from the perspective of the player to move at `node`.
    fn selection_of(&self, node: &Node, is_root: bool, use_lcb: bool) -> Vec<Selected> {
        let p = self.params;
        let Some(nn) = node.nn() else {
            return Vec::new();
        };
        let (xs, ys) = (self.x_size, self.y_size);
        let pla = node.next_pla;
        let prior = |mv: Move| nn.policy[mv.policy_index(xs, ys)] as f64;
        let suppress_pass = is_root && self.fills_dame && self.should_suppress_pass(node, &nn);
        let mut out: Vec<Selected> = Vec::new();
        let mut total = 0.0;
        for c in node.children().iter() {
            let edge = c.edge_values();
            let w = edge.weight_sum;
            total += w;
            let value = if prior(c.mv) < 0.0 || (suppress_pass && c.mv == Move::Pass) {
                0.0
            } else {
                w
            };
            out.push(Selected {
                mv: c.mv,
                node: c.node.clone(),
                edge,
                edge_visits: c.edge_visits(),
                value,
                lcb: 0.0,
                radius: 0.0,
            });
        }
        if out.is_empty() {
            return out;
        }
        // The most stably explored child.
        let mut best = 0;
        let mut best_g = f64::MIN;
        for (i, c) in out.iter().enumerate() {
            let ev = c.edge_visits as f64;
            let g = c.value * (ev - 1.0).max(0.0) / ev.max(1.0) + 2.0 * prior(c.mv);
            if g > best_g {
                best_g = g;
                best = i;
            }
        }
        let best_weight = out[best].value;
        if is_root {
            let parent = node.values();
            let stdev_factor = explore::utility_stdev_factor(p, &parent.view());
            let scaling = explore::explore_scaling(p, total, stdev_factor);
            let best_value = {
                let b = &out[best];
                explore::selection_value(
                    scaling,
                    prior(b.mv),
                    b.edge.weight_sum,
                    self.root_child_utility(b.mv, &b.edge),
                    pla,
                )
            };
            for (i, c) in out.iter_mut().enumerate() {
                if suppress_pass && c.mv == Move::Pass {
                    c.value = 0.0;
                    continue;
                }
                if i == best {
                    continue;
                }
                // KataGo's `getReducedPlaySelectionWeight`, rounded up: the
                // child's weight, or less if in hindsight the search wanted
                // less of it (a weight of 3.4 that was wanted becomes 4).
                let reduced = if c.edge.visits <= 0 || c.edge.weight_sum <= 0.0 {
                    0.0
                } else {
                    let wanted = explore::selection_value_inverse(
                        best_value,
                        scaling,
                        prior(c.mv),
                        self.root_child_utility(c.mv, &c.edge),
                        pla,
                    );
                    c.edge.weight_sum.min(wanted)
                };
                c.value = reduced.ceil();
            }
        }
        let mut best_lcb = -1e10;
        let mut best_idx = None;
        for (i, c) in out.iter_mut().enumerate() {
            // Weights as the parent counts them, for the bound's sample size.
            let v = c.edge;
            let utility = if is_root {
                self.root_child_utility(c.mv, &v)
            } else {
                v.utility
            };
            let (l, r) = explore::lcb_and_radius(p, &v.view(), sign(pla) * utility);
            c.lcb = l;
            c.radius = r;
            if c.value > 0.0 && c.value >= p.min_visit_prop_for_lcb * best_weight && l > best_lcb {
                best_lcb = l;
                best_idx = Some(i);
            }
        }
        if p.use_lcb_for_selection && use_lcb {
            if let Some(bi) = best_idx.filter(|&i| p.use_non_buggy_lcb || i > 0) {
                let mut adjusted = out[bi].value;
                for (i, c) in out.iter().enumerate() {
                    let excess = best_lcb - c.lcb;
                    if i == bi || excess < 0.0 {
                        continue;
                    }
                    let f = (c.radius + excess) / (c.radius + 0.2 * excess);
                    adjusted = adjusted.max(f * f * c.value);
                }
                out[bi].value = adjusted;
            }
        }
        let mut max = out.iter().map(|c| c.value).fold(0.0, f64::max);
        if max <= 1e-50 {
            // All weightless: weigh by policy.
            for c in out.iter_mut() {
                c.value = prior(c.mv).max(0.0);
            }
            max = out.iter().map(|c| c.value).fold(0.0, f64::max);
        }
        let sub = p.chosen_move_subtract.min(max / 64.0);
        let prune = p.chosen_move_prune.min(max / 64.0);
        for c in out.iter_mut() {
            c.value = if c.value < prune {
                0.0
            } else {
                (c.value - sub).max(0.0)
            };
        }
        out
    }

    /// Root children with their play selection values.
    pub(super) fn selection(&self) -> Vec<Selected> {
        self.selection_of(self.root, true, true)
    }

    /// How far the search's choice at the root departs from the raw policy
    /// (KataGo's `getPolicySurpriseAndEntropy`): the KL divergence of the
    /// play selection distribution from the policy, and the entropies of
    /// both, as `(surprise, search_entropy, policy_entropy)`. Time
    /// management spends less time on "obvious" moves with it. `None`
    /// before the root is evaluated.
    pub fn policy_surprise_and_entropy(&self) -> Option<(f64, f64, f64)> {
        let nn = self.root.nn()?;
        let policy_of = |mv: Move| {
            let p = nn.policy[mv.policy_index(self.x_size, self.y_size)] as f64;
            p.max(1e-100)
        };
        let sel = self.selection();
        // No searched children: the choice would be the policy itself.
        let targets: Vec<(f64, f64)> = if sel.iter().any(|c| c.value > 0.0) {
            let total: f64 = sel.iter().map(|c| c.value).sum();
            sel.iter()
                .map(|c| (c.value / total, policy_of(c.mv)))
                .collect()
        } else {
            let total: f64 = nn.policy.iter().map(|&p| (p as f64).max(0.0)).sum();
            nn.policy
                .iter()
                .filter(|&&p| p > 0.0)
                .map(|&p| (p as f64 / total, p as f64))
                .collect()
        };
        let (mut surprise, mut search_entropy) = (0.0, 0.0);
        for (target, policy) in targets {
            if target > 1e-100 {
                surprise += target * (target.ln() - policy.ln());
                search_entropy -= target * target.ln();
            }
        }
        let policy_entropy: f64 = nn
            .policy
            .iter()
            .map(|&p| p as f64)
            .filter(|&p| p > 1e-100)
            .map(|p| -p * p.ln())
            .sum();
        Some((surprise, search_entropy, policy_entropy))
    }

    /// KataGo's futile-visits test for stopping early: true if, with at
    /// most `visits_left` more visits, no root move other than the one the
    /// search would play (when that is also the most visited) could reach
    /// `futileVisitsThreshold` of its visits (or, when choosing with a
    /// temperature, 1:100 odds of being played).
    pub fn is_rest_of_search_futile(&self, visits_left: f64) -> bool {
        let p = self.params;
        if p.futile_visits_threshold <= 0.0 {
            return false;
        }
        let sel = self.selection();
        let Some(best) = (0..sel.len()).max_by(|&a, &b| sel[a].value.total_cmp(&sel[b].value))
        else {
            return false;
        };
        let visits = |i: usize| sel[i].edge_visits as f64;
        let most_visited = (0..sel.len())
            .max_by(|&a, &b| visits(a).total_cmp(&visits(b)))
            .unwrap_or(best);
        if visits(most_visited) > visits(best) {
            return false;
        }
        let max_visits = visits(best);
        let temperature = self.chosen_move_temperature();
        let mut required = p.futile_visits_threshold * max_visits;
        if temperature >= 1e-3 {
            required = required.min(max_visits * 0.01f64.powf(temperature));
        }
        (0..sel.len()).all(|i| i == best || visits(i) + visits_left < required)
    }

    /// `infos` padded to at least `min_moves` entries with the root moves of
    /// highest policy that have no visits (KataGo's `minMovesToTryToGet`,
    /// GTP's `minmoves`), valued as KataGo values an unvisited child: the
    /// first-play-urgency utility, the root's score and lead, and (when
    /// only winning counts, `winLossUtilityFactor` 1) the root's winrate
    /// moved by the FPU's utility difference.
    pub fn pad_with_unvisited(&self, mut infos: Vec<MoveInfo>, min_moves: usize) -> Vec<MoveInfo> {
        let p = self.params;
        let Some(nn) = self.root.nn() else {
            return infos;
        };
        let (xs, ys) = (self.x_size, self.y_size);
        let pla = self.root_pla;
        let s = sign(pla);
        let root = self.root.values();
        if infos.len() >= min_moves || root.visits <= 0 || root.weight_sum <= 0.0 {
            return infos;
        }
        let visited_policy: f64 = self
            .root
            .children()
            .iter()
            .map(|c| (nn.policy[c.mv.policy_index(xs, ys)] as f64).max(0.0))
            .sum();
        let fpu = explore::fpu_value(
            p,
            pla,
            true,
            root.utility,
            self.utility.of_nn(&nn),
            visited_policy,
        );
        let win_loss = if p.win_loss_utility_factor == 1.0 {
            (root.win_loss + (fpu - root.utility)).clamp(-1.0, 1.0)
        } else {
            0.0
        };
        let winrate = 0.5 * (1.0 + s * win_loss);
        let score_stdev = score_stdev(root.score_mean, root.score_mean_sq);
        let mut candidates: Vec<usize> = (0..nn.policy.len())
            .filter(|&i| nn.policy[i] >= 0.0)
            .filter(|&i| {
                let mv = Move::from_policy_index(i, xs, ys);
                infos.iter().all(|m| m.mv != mv)
            })
            .collect();
        // Highest policy first; ties in board order, as KataGo's scan.
        candidates.sort_by(|&a, &b| nn.policy[b].total_cmp(&nn.policy[a]).then(a.cmp(&b)));
        for i in candidates.into_iter().take(min_moves - infos.len()) {
            let mv = Move::from_policy_index(i, xs, ys);
            infos.push(MoveInfo {
                mv,
                visits: 0,
                edge_visits: 0,
                weight: 0.0,
                winrate,
                score_mean: s * root.score_mean,
                score_lead: s * root.lead,
                score_selfplay: s * root.score_mean,
                score_stdev,
                prior: nn.policy[i] as f64,
                utility: s * fpu,
                lcb: winrate,
                utility_lcb: s * fpu,
                order: infos.len(),
                play_selection_value: 0.0,
                pv: vec![mv],
                pv_visits: vec![0],
                pv_edge_visits: vec![0],
                ownership: None,
                ownership_stdev: None,
                is_symmetry_of: None,
            });
        }
        infos
    }

    /// Per-move infos for the root's children with visits, ordered as
    /// KataGo orders them (play selection value, then visits, then prior),
    /// with PVs up to `max_pv_len` moves that follow KataGo's play selection
    /// rule at every node, and per-move tree ownership (with its standard
    /// deviation) if `ownership` is set.
    pub fn move_infos(&self, max_pv_len: usize, ownership: bool) -> Vec<MoveInfo> {
        let p = self.params;
        let Some(nn) = self.root.nn() else {
            return Vec::new();
        };
        let s = sign(self.root_pla);
        // KataGo's lcb hack: the utility radius shown on the winrate scale,
        // in proportion to how much winning matters in the utility.
        let wl_share = 0.5 * p.win_loss_utility_factor
            / (p.win_loss_utility_factor
                + p.static_score_utility_factor
                + p.dynamic_score_utility_factor
                + 1e-20);
        let mut infos: Vec<MoveInfo> = self
            .selection()
            .into_iter()
            .filter(|c| c.node.visits() > 0)
            .map(|c| {
                let v = c.node.values();
                let (pv, pv_visits, pv_edge_visits) =
                    self.pv_of(c.mv, &c.node, c.edge_visits, max_pv_len);
                let winrate = 0.5 * (1.0 + s * v.win_loss.clamp(-1.0, 1.0));
                let utility = s * v.utility;
                let own = if ownership {
                    self.tree_ownership(&c.node)
                } else {
                    None
                };
                let (ownership, ownership_stdev) = match own {
                    Some((mean, stdev)) => (Some(mean), Some(stdev)),
                    None => (None, None),
                };
                MoveInfo {
                    mv: c.mv,
                    visits: v.visits,
                    edge_visits: c.edge_visits,
                    weight: c.edge.weight_sum,
                    winrate,
                    score_mean: s * v.score_mean,
                    score_lead: s * v.lead,
                    score_selfplay: s * v.score_mean,
                    score_stdev: score_stdev(v.score_mean, v.score_mean_sq),
                    prior: nn.policy[c.mv.policy_index(self.x_size, self.y_size)] as f64,
                    utility,
                    lcb: winrate - c.radius * wl_share,
                    utility_lcb: c.lcb,
                    order: 0,
                    play_selection_value: c.value,
                    pv_edge_visits,
                    pv,
                    pv_visits,
                    ownership,
                    ownership_stdev,
                    is_symmetry_of: None,
                }
            })
            .collect();
        infos.sort_by(|a, b| {
            (b.visits > 0)
                .cmp(&(a.visits > 0))
                .then(b.play_selection_value.total_cmp(&a.play_selection_value))
                .then(b.visits.cmp(&a.visits))
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
        self.tree_ownership(self.root)
    }

    /// KataGo's `appendPV` from a root child: at each node the child with
    /// the highest play selection value (LCB included).
    /// Returns the moves, each one's child visits and its edge visits.
    fn pv_of(
        &self,
        mv: Move,
        node: &Arc<Node>,
        edge_visits: i64,
        max_len: usize,
    ) -> (Vec<Move>, Vec<i64>, Vec<i64>) {
        let mut pv = vec![mv];
        let mut visits = vec![node.visits()];
        let mut edges = vec![edge_visits];
        let mut cur = node.clone();
        while pv.len() < max_len {
            let mut best: Option<Selected> = None;
            for c in self.selection_of(&cur, false, true) {
                if best.as_ref().is_none_or(|b| c.value > b.value) {
                    best = Some(c);
                }
            }
            let Some(b) = best else { break };
            pv.push(b.mv);
            visits.push(b.node.visits());
            edges.push(b.edge_visits);
            cur = b.node;
        }
        (pv, visits, edges)
    }

    /// KataGo's `getAverageAndStandardDeviationTreeOwnership` below `node`,
    /// +1 = the root player.
    fn tree_ownership(&self, node: &Node) -> Option<(Vec<f64>, Vec<f64>)> {
        let nn = node.nn()?;
        nn.white_ownership.as_ref()?;
        let n = self.x_size * self.y_size;
        let mut acc = OwnershipSums {
            sum: vec![0.0; n],
            sq: vec![0.0; n],
        };
        // Stop deepening at nodes whose share would be below `min_prop`
        // (sublinear in visits, so the cost grows slower than the tree);
        // drop children below `prune_prop` into their parent.
        let min_prop = 0.5 / (node.visits().max(1) as f64).powf(0.75);
        let prune_prop = min_prop * 0.01;
        if !self.traverse_ownership(node, 1.0, min_prop, prune_prop, &mut acc) {
            return None;
        }
        let s = sign(self.root_pla);
        let stdev = acc
            .sq
            .iter()
            .zip(&acc.sum)
            .map(|(q, m)| (q - m * m).max(0.0).sqrt())
            .collect();
        let mean = acc.sum.iter().map(|m| s * m).collect();
        Some((mean, stdev))
    }

    /// Adds `prop` of the subtree's ownership; false if `node` has no
    /// ownership to give.
    fn traverse_ownership(
        &self,
        node: &Node,
        prop: f64,
        min_prop: f64,
        prune_prop: f64,
        acc: &mut OwnershipSums,
    ) -> bool {
        let Some(nn) = node.nn() else { return false };
        let Some(own) = nn.white_ownership.as_ref() else {
            return false;
        };
        let children: Vec<(f64, Arc<Node>)> = if prop < min_prop {
            Vec::new()
        } else {
            node.children()
                .iter()
                .map(|c| (c.weight(), c.node.clone()))
                .collect()
        };
        let mut self_prop = prop;
        if !children.is_empty() {
            // Children count by their weight squared: sharper than the
            // search's own average, as KataGo.
            let rel_sum: f64 = children.iter().map(|(w, _)| w * w).sum();
            let child_sum: f64 = children.iter().map(|(w, _)| w).sum();
            let parent_w = if self.params.use_uncertainty {
                self.utility.playout_weight(self.params, &nn)
            } else {
                1.0
            }
            .max(1e-10);
            let from_children = prop * child_sum / (child_sum + parent_w);
            self_prop = prop * parent_w / (child_sum + parent_w);
            if from_children <= 0.0 || rel_sum <= 0.0 {
                self_prop += from_children;
            } else {
                for (w, c) in &children {
                    let share = w * w / rel_sum * from_children;
                    if share < prune_prop
                        || !self.traverse_ownership(c, share, min_prop, prune_prop, acc)
                    {
                        self_prop += share;
                    }
                }
            }
        }
        for (i, &o) in own.iter().enumerate().take(acc.sum.len()) {
            let o = o as f64;
            acc.sum[i] += self_prop * o;
            acc.sq[i] += self_prop * o * o;
        }
        true
    }

    /// The recorded policy target of self-play (KataGo's
    /// `Play::extractPolicyTarget`): each root child's play selection
    /// value (visits after forced-playout pruning), scaled up so the largest
    /// is at least 10 and down so it is at most 30000, rounded.
    pub fn policy_target(&self) -> Vec<(Move, i16)> {
        let sel = self.selection();
        let max = sel.iter().map(|c| c.value).fold(0.0f64, f64::max);
        if max <= 0.0 {
            return Vec::new();
        }
        let mut factor = if max < 10.0 { 10.0 / max } else { 1.0 };
        if max * factor > 30000.0 {
            factor = 30000.0 / max;
        }
        sel.iter()
            .map(|c| (c.mv, (c.value * factor).round() as i16))
            .collect()
    }

    /// Every visited root child with its values (white's perspective), for
    /// self-play's per-move value targets (KataGo's `extractQValueTargets`).
    pub fn child_values(&self) -> Vec<(Move, NodeValues)> {
        self.root
            .children()
            .iter()
            .map(|c| (c.mv, c.node.values()))
            .filter(|(_, v)| v.visits > 0)
            .collect()
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

/// A child with its play selection value and LCB (KataGo's buffers).
pub(super) struct Selected {
    pub(super) mv: Move,
    node: Arc<Node>,
    /// The child's values with its weights as the parent counts them
    /// ([`super::tree::Child::edge_values`]).
    edge: NodeValues,
    edge_visits: i64,
    pub(super) value: f64,
    lcb: f64,
    radius: f64,
}

/// Running sums of a tree ownership average.
struct OwnershipSums {
    sum: Vec<f64>,
    sq: Vec<f64>,
}
