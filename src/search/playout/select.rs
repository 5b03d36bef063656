//! The child a playout descends to (KataGo's `selectBestChildToDescend`):
//! PUCT over the node's children and its best new move, by the human net's
//! policy when the playout explores by it, with the root's hacks (forced
//! playouts, futile visits, wide root noise, anti-mirror) and KataGo's
//! passing hacks; and how the chosen edge counts.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::Rng;

use super::super::anti_mirror::{AntiMirror, MirrorAt};
use super::super::eval::{PositionEvaluator, SearchState};
use super::super::explore;
use super::super::gumbel::GumbelRoot;
use super::super::results::sign;
use super::super::tree::eval_cache::EvalCacheEntry;
use super::super::tree::{Child, Node, NodeValues};
use super::{Ctx, PlayoutEnd, Worker};
use crate::game::{Move, Player};
use crate::nn::NnOutput;

/// How a playout counts for the edge it takes (KataGo's `countEdgeVisit`
/// and `shouldCountPlayout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EdgeVisit {
    /// A normal playout: the edge and everything above it count it.
    Counted,
    /// The human-policy exploration's weightless playout: the child's
    /// subtree grows, the edge and the nodes above do not; it still
    /// counts towards the playout limits.
    Weightless,
    /// The passing hacks' playout: weightless, and not counted towards
    /// the limits either.
    Uncounted,
}

impl EdgeVisit {
    /// What a playout that ended with `below` under an edge of this kind
    /// means for the nodes above the edge.
    pub(super) fn above(self, below: PlayoutEnd) -> PlayoutEnd {
        use PlayoutEnd as E;
        match (self, below) {
            (_, E::Retry) => E::Retry,
            (EdgeVisit::Counted, b) => b,
            (EdgeVisit::Weightless, E::Counted | E::Weightless) => E::Weightless,
            (EdgeVisit::Weightless, E::Uncounted) | (EdgeVisit::Uncounted, _) => E::Uncounted,
        }
    }
}

/// The child a playout descends to.
pub(super) struct Choice {
    pub(super) mv: Move,
    /// Its index among the node's children and its node, if it exists.
    pub(super) existing: Option<(usize, Arc<Node>)>,
    pub(super) visit: EdgeVisit,
}

/// What PUCT needs of a node's children as a whole.
struct Totals {
    /// Their weights (by edge when the playout counts, else their own).
    weight: f64,
    /// The heaviest one's weight.
    max_weight: f64,
    /// Their edge visits.
    edge_visits: i64,
}

impl Totals {
    /// KataGo's sums over the children the net finds legal, weighed by
    /// edge; a weightless playout weighs every child by its own weight.
    fn of(children: &[Child], policy: &[f32], xs: usize, ys: usize, counted: bool) -> Totals {
        let mut t = Totals {
            weight: 0.0,
            max_weight: 0.0,
            edge_visits: 0,
        };
        for c in children {
            if policy[c.mv.policy_index(xs, ys)] < 0.0 {
                continue;
            }
            let cw = c.weight();
            t.weight += cw;
            t.max_weight = t.max_weight.max(cw);
            t.edge_visits += c.edge_visits();
        }
        if !counted {
            t.weight = children.iter().map(|c| c.node.weight()).sum();
            t.max_weight = children.iter().map(|c| c.node.weight()).fold(0.0, f64::max);
        }
        t
    }
}

impl<'a, S: SearchState, E: PositionEvaluator<S>> Ctx<'a, S, E> {
    /// The utility (white's view) a root child's ending score bonus adds,
    /// KataGo's `getScoreUtilityDiff` of `getEndingWhiteScoreBonus`.
    fn ending_bonus_utility(&self, mv: Move, v: &NodeValues, xs: usize, ys: usize) -> f64 {
        match self.ending_bonus.get(mv.policy_index(xs, ys)) {
            Some(&bonus) if bonus != 0.0 => {
                self.utility
                    .score_diff(v.score_mean, v.score_mean_sq, bonus)
            }
            _ => 0.0,
        }
    }

    /// Whether this playout explores `node` by the human net's policy
    /// (KataGo's `humanSLRootExploreProb*` at the root,
    /// `humanSLPlaExploreProb*` at the root player's other nodes,
    /// `humanSLOppExploreProb*` at the opponent's), and if so with which
    /// output and whether the edge it takes counts.
    fn human_exploration<'n>(
        &self,
        w: &mut Worker<S>,
        node: &'n Node,
        is_root: bool,
    ) -> Option<(&'n NnOutput, EdgeVisit)>
    where
        'a: 'n,
    {
        let p = self.params;
        let human: &NnOutput = if is_root {
            self.human_root?
        } else {
            node.human()?
        };
        let (weightless, weightful) = if is_root {
            (
                p.human_sl_root_explore_prob_weightless,
                p.human_sl_root_explore_prob_weightful,
            )
        } else if node.next_pla == self.root_state.next_player() {
            (
                p.human_sl_pla_explore_prob_weightless,
                p.human_sl_pla_explore_prob_weightful,
            )
        } else {
            (
                p.human_sl_opp_explore_prob_weightless,
                p.human_sl_opp_explore_prob_weightful,
            )
        };
        if weightless + weightful <= 0.0 {
            return None;
        }
        let r: f64 = w.rng.gen();
        if r < weightless {
            Some((human, EdgeVisit::Weightless))
        } else if r < weightless + weightful {
            Some((human, EdgeVisit::Counted))
        } else {
            None
        }
    }

    /// KataGo's first-play utility at a node: the parent's utility less a
    /// reduction that grows with the `policy` of the children visited.
    fn first_play_utility(
        &self,
        children: &[Child],
        policy: &[f32],
        nn: &NnOutput,
        parent: &NodeValues,
        pla: Player,
        is_root: bool,
    ) -> f64 {
        let visited_policy: f64 = children
            .iter()
            .map(|c| policy[c.mv.policy_index(nn.x_size, nn.y_size)] as f64)
            .filter(|&pol| pol >= 0.0)
            .sum();
        let nn_utility = self.utility.of_nn(nn);
        explore::fpu_value(
            self.params,
            pla,
            is_root,
            parent.utility,
            nn_utility,
            visited_policy,
        )
    }

    /// The exploration scaling of PUCT at a node with these values and
    /// children's weight: KataGo's, or its human one when the playout
    /// explores by the human policy.
    fn explore_scaling(&self, parent: &NodeValues, total_weight: f64, human: bool) -> f64 {
        if human {
            explore::explore_scaling_human(self.params, total_weight)
        } else {
            let stdev_factor = explore::utility_stdev_factor(self.params, &parent.view());
            explore::explore_scaling(self.params, total_weight, stdev_factor)
        }
    }

    /// PUCT choice among the existing children and the best-policy new move
    /// (KataGo's `selectBestChildToDescend`), by the human net's policy when
    /// this playout explores by it, and with KataGo's passing hacks
    /// (`enableMorePassingHacks`). `None` when every move is forbidden.
    pub(super) fn select_child(
        &self,
        w: &mut Worker<S>,
        node: &Node,
        nn: &NnOutput,
        is_root: bool,
        depth: u32,
    ) -> Option<Choice> {
        let p = self.params;
        let (xs, ys) = (nn.x_size, nn.y_size);
        let pla = node.next_pla;
        let children = node.children();
        let human = self.human_exploration(w, node, is_root);
        let mut visit = human.map_or(EdgeVisit::Counted, |(_, v)| v);
        let counted = visit == EdgeVisit::Counted;
        if let Some(g) = self.gumbel.filter(|g| is_root && counted && g.is_for(node)) {
            return Some(self.gumbel_child(w, g, &children, nn));
        }
        let Totals {
            weight: total_w,
            max_weight: max_w,
            edge_visits: total_edge_visits,
        } = Totals::of(&children, &nn.policy, xs, ys, counted);
        let policy: &[f32] = human.map_or(&nn.policy, |(h, _)| &h.policy);
        let parent = node.values();
        let fpu = self.first_play_utility(&children, policy, nn, &parent, pla, is_root);
        let scaling = self.explore_scaling(&parent, total_w, human.is_some());
        let anti_mirror = self.anti_mirror.filter(|am| am.applies(&w.path, 0));
        let root_hacks = is_root && counted;
        // Futile-visits pruning (root only).
        let futile = (root_hacks && p.futile_visits_threshold > 0.0).then(|| {
            let weight_per_visit = parent.weight_sum / parent.visits.max(1) as f64;
            (p.futile_visits_threshold, weight_per_visit, w.visits_left)
        });
        let at = MirrorAt {
            state: &w.state,
            path: &w.path,
            is_root,
        };

        let mut best_value = explore::ILLEGAL_SELECTION_VALUE;
        let mut best: Option<(usize, Move)> = None;
        for (i, c) in children.iter().enumerate() {
            let mut pol = policy[c.mv.policy_index(xs, ys)] as f64;
            if pol < 0.0 {
                continue;
            }
            let v = c.node.values();
            let edge_visits = c.edge_visits();
            let weight = if counted {
                v.weight_sum * edge_visits as f64 / v.visits.max(1) as f64
            } else {
                v.weight_sum
            };
            let mut util = if v.visits <= 0 || weight <= 0.0 {
                fpu
            } else if is_root {
                v.utility + self.ending_bonus_utility(c.mv, &v, xs, ys)
            } else {
                v.utility
            };
            let (u, cw) = explore::apply_virtual_loss(
                p,
                pla,
                c.node.virtual_losses.load(Ordering::Acquire),
                util,
                weight,
            );
            util = u;
            let value = if futile.is_some_and(|(t, wpv, left)| {
                explore::is_futile_child(t, max_w, edge_visits, v.visits, cw, wpv, left)
            }) {
                explore::FUTILE_SELECTION_VALUE
            } else if root_hacks && explore::is_forced_playout(p, pol, cw, total_w) {
                1e20
            } else {
                if root_hacks && p.wide_root_noise > 0.0 {
                    explore::wide_root_noise(p, pla, &mut w.rng, &mut pol, &mut util);
                }
                if let Some(am) = anti_mirror.filter(|_| counted) {
                    pol = am.adjust_policy(&at, pla, c.mv, policy, pol);
                    util = am.forced_explore(
                        &at,
                        pla,
                        c.mv,
                        policy,
                        util,
                        parent.utility,
                        cw,
                        total_w,
                    );
                }
                explore::selection_value(scaling, pol, cw, util, pla)
            };
            if value > best_value {
                best_value = value;
                best = Some((i, c.mv));
            }
        }
        let new_move = NewMove {
            futile,
            max_weight: max_w,
            is_root,
            depth,
            root_hacks,
            scaling,
            pla,
        };
        let mut chosen: Option<Move> = best.map(|(_, mv)| mv);
        let mut chosen_is_new = false;
        // Moves the eval cache remembers, not searched here yet, with the
        // cache's utility in place of the FPU: they may come before moves
        // of higher policy.
        if let Some(entry) = self.cached(node, is_root) {
            let (mv, value) =
                self.best_cached_move(&mut w.rng, &w.excluded, entry, &children, policy, &new_move);
            if value > best_value {
                best_value = value;
                chosen = mv;
                chosen_is_new = true;
            }
        }
        let best_new = self.best_new_move(w, &children, policy, anti_mirror, &at, pla, depth);
        let best_new_move = best_new.map(|(i, _)| Move::from_policy_index(i, xs, ys));
        if let Some((i, pol)) = best_new {
            let value = self.new_move_value(&mut w.rng, &new_move, pol, fpu);
            if value > best_value || chosen.is_none() {
                chosen = Some(Move::from_policy_index(i, xs, ys));
                chosen_is_new = true;
            }
        }
        if total_edge_visits >= 2 {
            if let Some(mv) = self.passing_hack(w, &children, pla, chosen, best_new_move) {
                chosen = Some(mv);
                chosen_is_new = true;
                visit = EdgeVisit::Uncounted;
            }
        }
        let mv = chosen?;
        let existing = if chosen_is_new {
            None
        } else {
            best.map(|(i, _)| (i, children[i].node.clone()))
        };
        Some(Choice {
            mv,
            existing,
            visit,
        })
    }
}

impl<'a, S: SearchState, E: PositionEvaluator<S>> Ctx<'a, S, E> {
    /// Gumbel root search's choice at the root: the considered move the
    /// sequential halving's schedule gives this playout.
    fn gumbel_child(
        &self,
        w: &mut Worker<S>,
        g: &GumbelRoot,
        children: &[Child],
        nn: &NnOutput,
    ) -> Choice {
        let (xs, ys) = (nn.x_size, nn.y_size);
        let stats = &mut w.scratch.gumbel;
        g.stats(
            children,
            self.root_state.next_player(),
            |mv, v| v.utility + self.ending_bonus_utility(mv, v, xs, ys),
            stats,
        );
        let root_sign = sign(self.root_state.next_player());
        let mv = g.select(stats, root_sign * self.utility.of_nn(nn));
        let existing = children
            .iter()
            .position(|c| c.mv == mv)
            .map(|i| (i, children[i].node.clone()));
        Choice {
            mv,
            existing,
            visit: EdgeVisit::Counted,
        }
    }
}

/// What the PUCT value of a move not searched yet at a node depends on
/// besides the move.
struct NewMove {
    /// Futile-visits pruning at the root: (threshold, weight per visit,
    /// visits left).
    futile: Option<(f64, f64, f64)>,
    /// The heaviest child's weight.
    max_weight: f64,
    /// Whether the node is the root, and its depth below it.
    is_root: bool,
    depth: u32,
    /// Whether the root's hacks (wide root noise) apply.
    root_hacks: bool,
    /// PUCT's exploration scaling.
    scaling: f64,
    pla: Player,
}

impl<'a, S: SearchState, E: PositionEvaluator<S>> Ctx<'a, S, E> {
    /// KataGo's `getNewExploreSelectionValue`: the PUCT value of a move not
    /// searched yet with `policy` and utility `util` (the FPU, or the eval
    /// cache's), futile or with wide root noise at the root.
    fn new_move_value(&self, rng: &mut StdRng, m: &NewMove, policy: f64, util: f64) -> f64 {
        let (mut pol, mut util) = (policy, util);
        if m.futile
            .is_some_and(|(t, wpv, left)| explore::is_futile_new_child(t, m.max_weight, wpv, left))
        {
            return explore::FUTILE_SELECTION_VALUE;
        }
        if m.root_hacks && self.params.wide_root_noise > 0.0 {
            explore::wide_root_noise(self.params, m.pla, rng, &mut pol, &mut util);
        }
        explore::selection_value(m.scaling, pol, 0.0, util, m.pla)
    }

    /// Of the moves the eval cache remembers at this node that are not
    /// children yet and may be searched here, the one with the highest
    /// PUCT value with its cached utility (KataGo's loop over
    /// `firstExploreEvals`), and that value.
    fn best_cached_move(
        &self,
        rng: &mut StdRng,
        excluded: &[Move],
        entry: &EvalCacheEntry,
        children: &[Child],
        policy: &[f32],
        m: &NewMove,
    ) -> (Option<Move>, f64) {
        let (xs, ys) = (self.root_state.x_size(), self.root_state.y_size());
        let (is_root, depth) = (m.is_root, m.depth);
        let mut best = (None, explore::ILLEGAL_SELECTION_VALUE);
        for &(mv, eval) in &entry.first_explore {
            let i = mv.policy_index(xs, ys);
            let pol = policy.get(i).copied().unwrap_or(-1.0) as f64;
            if pol < 0.0
                || children.iter().any(|c| c.mv == mv)
                || excluded.contains(&mv)
                || self.avoid[m.pla].get(i).is_some_and(|&until| depth < until)
                || (is_root
                    && (self.root_symmetry.is_duplicate(i)
                        || self.root_pruned.get(i).copied().unwrap_or(false)))
            {
                continue;
            }
            let (wl, score) = (eval.win_loss as f64, eval.score_mean as f64);
            let util = self.utility.result(wl, 0.0) + self.utility.score(score, score * score);
            let value = self.new_move_value(rng, m, pol, util);
            if value > best.1 {
                best = (Some(mv), value);
            }
        }
        best
    }

    /// The move not searched yet at this node with the highest `policy`
    /// (anti-mirror adjusted), leaving out moves avoided at this depth,
    /// root moves pruned as symmetric copies or useless, and moves found
    /// illegal in this playout. Its policy index and policy.
    #[allow(clippy::too_many_arguments)]
    fn best_new_move(
        &self,
        w: &Worker<S>,
        children: &[Child],
        policy: &[f32],
        anti_mirror: Option<&AntiMirror>,
        at: &MirrorAt<'_, S>,
        pla: Player,
        depth: u32,
    ) -> Option<(usize, f64)> {
        let (xs, ys) = (w.state.x_size(), w.state.y_size());
        let is_root = at.is_root;
        let avoid = &self.avoid[pla];
        let mut best_new: Option<(usize, f64)> = None;
        for (i, &pol) in policy.iter().enumerate() {
            let mut pol = pol as f64;
            if pol < 0.0 {
                continue;
            }
            if let Some(am) = anti_mirror {
                let mv = Move::from_policy_index(i, xs, ys);
                pol = am.adjust_policy(at, pla, mv, policy, pol);
            }
            if best_new.is_some_and(|(_, b)| pol <= b) {
                continue;
            }
            if avoid.get(i).is_some_and(|&until| depth < until) {
                continue;
            }
            if is_root
                && (self.root_symmetry.is_duplicate(i)
                    || self.root_pruned.get(i).copied().unwrap_or(false))
            {
                continue;
            }
            let mv = Move::from_policy_index(i, xs, ys);
            if children.iter().any(|c| c.mv == mv) || w.excluded.contains(&mv) {
                continue;
            }
            best_new = Some((i, pol));
        }
        best_new
    }

    /// KataGo's `enableMorePassingHacks`, at a node with two visits or
    /// more where a pass would end the phase: when the choice is a move
    /// other than pass and the pass was never searched, the pass instead;
    /// when the choice is the pass and nothing else was searched, the best
    /// new move instead. That playout counts for nothing (KataGo leaves
    /// this out where any move is avoided).
    fn passing_hack(
        &self,
        w: &Worker<S>,
        children: &[Child],
        pla: Player,
        chosen: Option<Move>,
        best_new_move: Option<Move>,
    ) -> Option<Move> {
        if !self.params.enable_more_passing_hacks
            || !self.avoid[pla].is_empty()
            || !w.state.pass_would_end_phase()
        {
            return None;
        }
        let has_pass = children.iter().any(|c| c.mv == Move::Pass);
        let has_other = children.iter().any(|c| c.mv != Move::Pass);
        match chosen {
            Some(mv) if !has_pass && mv != Move::Pass => Some(Move::Pass),
            Some(Move::Pass) if !has_other => best_new_move.filter(|&m| m != Move::Pass),
            _ => None,
        }
    }
}
