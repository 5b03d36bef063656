//! One playout: descend from the root choosing children by PUCT, evaluate
//! the leaf, and back the result up by recomputing each node on the path
//! from its children (KataGo's `playoutDescend` / `recomputeNodeStats`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::Rng;

use super::anti_mirror::AntiMirror;
use super::bias::{bias_key, BiasTable};
use super::eval::{EvalError, EvalOptions, Outcome, PositionEvaluator, SearchState};
use super::explore::{self, ChildWeight};
use super::gumbel::{GumbelRoot, MoveStats};
use super::node_table::NodeTable;
use super::params::SearchParams;
use super::pattern_bonus::PatternBonusTable;
use super::root_symmetry::RootSymmetry;
use super::tree::eval_cache::{EvalCache, EvalCacheEntry};
mod select;
use super::tree::{Child, Node, NodeValues, STATE_EVALUATING, STATE_UNEVALUATED};
use super::utility::UtilityFn;
use crate::game::{ByPlayer, Hash128, Move, Player};
use crate::nn::NnOutput;
use select::{Choice, EdgeVisit};

/// Everything a playout reads that is fixed for one search.
pub(crate) struct Ctx<'a, S: SearchState, E: PositionEvaluator<S>> {
    pub params: &'a SearchParams,
    pub evaluator: &'a E,
    pub root_state: &'a S,
    pub utility: UtilityFn,
    pub bias: Option<&'a BiasTable>,
    /// The anti-mirror defence, when the opponent is mirroring.
    pub anti_mirror: Option<&'a AntiMirror>,
    /// Per player, per policy index: moves forbidden until this depth below the root.
    pub avoid: &'a ByPlayer<Vec<u32>>,
    /// Root moves not searched because they are symmetric copies.
    pub root_symmetry: &'a RootSymmetry,
    /// The root's ending score bonus per policy index (empty: none).
    pub ending_bonus: &'a [f64],
    /// Root moves `rootPruneUselessMoves` keeps out (empty: none).
    pub root_pruned: &'a [bool],
    pub include_ownership: bool,
    /// Whether the net gives short-term errors (uncertainty weighting).
    pub has_shortterm_error: bool,
    /// The player the playout doubling advantage is for.
    pub pda_player: Player,
    /// The pattern bonus table of this search (`avoidRepeatedPatternUtility`,
    /// `avoidSgfPattern*`), if any.
    pub patterns: Option<&'a PatternBonusTable>,
    /// The player the search is for (KataGo's `plaThatSearchIsFor`): only
    /// their moves get pattern bonuses.
    pub pattern_player: Player,
    /// The human net's output at the root, when a human net runs.
    pub human_root: Option<&'a NnOutput>,
    /// The human net, when the search explores by its policy below the
    /// root too (KataGo's `needsHumanOutputInTree`): every new node gets
    /// its output.
    pub human_in_tree: Option<&'a E>,
    /// The node table of graph search (`useGraphSearch`): `None` searches
    /// a tree.
    pub table: Option<&'a NodeTable>,
    /// The root's graph hash (graph search).
    pub root_graph_hash: Hash128,
    /// The eval cache (`useEvalCache`), with graph search only.
    pub eval_cache: Option<&'a EvalCache>,
    /// Folded into the eval cache's keys: this search's parameters.
    pub eval_cache_key: Hash128,
    /// Whether the root uses and feeds the eval cache (not where its game
    /// is over, KataGo's root `forceNonTerminal`).
    pub root_cached: bool,
    /// Gumbel root search's halving (`gumbelRootSearch`), if this search
    /// runs one: it chooses the root's children in place of PUCT.
    pub gumbel: Option<&'a GumbelRoot>,
}

/// Per-thread scratch state.
pub(crate) struct Worker<S> {
    pub rng: StdRng,
    pub state: S,
    pub scratch: Scratch,
    pub excluded: Vec<Move>,
    /// The moves played below the root in this playout (for the
    /// anti-mirror defence).
    pub path: Vec<Move>,
    /// The most visits the rest of the search can add (limits and time
    /// left), for futile-visits pruning at the root.
    pub visits_left: f64,
    /// Graph search: the graph hash of `state`.
    pub graph_hash: Hash128,
    /// Graph search: the nodes this playout went through, to notice a
    /// cycle (KataGo's `graphPath`).
    pub graph_path: Vec<*const Node>,
}

impl<S: SearchState> Worker<S> {
    /// A worker for one search thread, at the root.
    pub fn new(rng: StdRng, state: S) -> Worker<S> {
        Worker {
            rng,
            state,
            scratch: Scratch::default(),
            excluded: Vec::new(),
            path: Vec::new(),
            visits_left: 1e30,
            graph_hash: Hash128::ZERO,
            graph_path: Vec::new(),
        }
    }

    /// Back at the root for the next playout.
    pub fn reset<E: PositionEvaluator<S>>(&mut self, ctx: &Ctx<'_, S, E>, root: &Node) {
        self.state.clone_from(ctx.root_state);
        self.path.clear();
        self.graph_hash = ctx.root_graph_hash;
        self.graph_path.clear();
        self.graph_path.push(root as *const Node);
    }
}

/// Buffers reused by every recomputation (no allocation per visit).
#[derive(Default)]
pub(crate) struct Scratch {
    pub weights: Vec<ChildWeight>,
    pub values: Vec<NodeValues>,
    /// Gumbel root search: the considered moves' stats.
    pub gumbel: Vec<MoveStats>,
}

/// How a playout ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlayoutEnd {
    /// Finished and counts as a visit.
    Counted,
    /// Finished below a weightless edge (the human-policy exploration):
    /// it counts as a playout, but nothing above that edge was updated.
    Weightless,
    /// Finished below an edge of the passing hacks: neither a playout nor
    /// a visit above that edge (KataGo's `shouldCountPlayout = false`).
    Uncounted,
    /// Collided with another thread; try again.
    Retry,
}

impl<'a, S: SearchState, E: PositionEvaluator<S>> Ctx<'a, S, E> {
    /// Evaluation options for a node whose player to move is `pla`, `depth`
    /// moves below the root.
    pub fn eval_options(
        &self,
        pla: Player,
        is_root: bool,
        depth: u32,
        rng: &mut StdRng,
    ) -> EvalOptions {
        let p = self.params;
        let pda = if pla == self.pda_player {
            p.playout_doubling_advantage
        } else {
            -p.playout_doubling_advantage
        };
        EvalOptions {
            num_symmetries: if is_root {
                p.root_num_symmetries_to_sample
                    .max(p.num_symmetries_to_sample) as u8
            } else {
                p.num_symmetries_to_sample as u8
            },
            symmetry_seed: rng.gen(),
            include_ownership: self.include_ownership || is_root,
            policy_temperature: p.nn_policy_temperature,
            policy_optimism: if is_root {
                p.root_policy_optimism
            } else {
                p.policy_optimism
            },
            conservative_pass: p.conservative_pass && is_root,
            enable_passing_hacks: p.enable_passing_hacks,
            playout_doubling_advantage: pda,
            // KataGo's maxHistory: none with `ignoreAllHistory`; with
            // `ignorePreRootHistory` only the moves played below the root.
            max_history: if p.ignore_all_history {
                Some(0)
            } else if p.ignore_pre_root_history {
                Some(if is_root { 0 } else { depth as usize })
            } else {
                None
            },
            human_profile: p.human_sl_profile.meta,
        }
    }

    fn terminal_weight(&self) -> f64 {
        if self.params.use_uncertainty && self.has_shortterm_error {
            self.params.uncertainty_max_weight
        } else {
            1.0
        }
    }

    /// KataGo's `getPatternBonus`: the bonus to White's utility for the
    /// shape of the move that led to `node`, when the player the search is
    /// for played it; 0 at the root and without a table.
    #[inline]
    fn pattern_bonus(&self, node: &Node, is_root: bool) -> f64 {
        match self.patterns {
            Some(table)
                if !is_root
                    && node.pattern_hash != Hash128::ZERO
                    && node.next_pla.opp() == self.pattern_player =>
            {
                table.get(node.pattern_hash)
            }
            _ => 0.0,
        }
    }

    /// The leaf sample of a finished game, with `bonus` (the node's pattern
    /// bonus) added to its utility.
    fn terminal_sample(&self, outcome: Outcome, bonus: f64) -> NodeValues {
        let (win_loss, no_result, score, score_sq) = match outcome {
            Outcome::NoResult => (0.0, 1.0, 0.0, 0.0),
            Outcome::Scored {
                winner,
                white_minus_black,
            } => {
                let white_wins = match winner {
                    Some(Player::White) => 1.0,
                    Some(Player::Black) => 0.0,
                    None => self.params.draw_equivalent_wins_for_white,
                };
                // KataGo adjusts drawn (integer) scores by the draw value and
                // spreads their square over the half-point grid.
                let is_int = white_minus_black.fract() == 0.0;
                let adj = if is_int && winner.is_none() {
                    white_minus_black + self.params.draw_equivalent_wins_for_white - 0.5
                } else {
                    white_minus_black
                };
                let sq = if is_int {
                    let (lo, hi) = (white_minus_black - 0.5, white_minus_black + 0.5);
                    lo * lo + (hi * hi - lo * lo) * self.params.draw_equivalent_wins_for_white
                } else {
                    white_minus_black * white_minus_black
                };
                (2.0 * white_wins - 1.0, 0.0, adj, sq)
            }
        };
        let utility =
            self.utility.result(win_loss, no_result) + self.utility.score(score, score_sq) + bonus;
        NodeValues {
            visits: 1,
            weight_sum: self.terminal_weight(),
            win_loss,
            no_result,
            score_mean: score,
            score_mean_sq: score_sq,
            lead: score,
            utility,
            utility_sq: utility * utility,
            ..NodeValues::default()
        }
    }

    /// The eval cache's entry for `node` where the search uses one: graph
    /// search with `useEvalCache`, not below a game-ending pass, and at
    /// the root only while its game goes on (KataGo's `forceNonTerminal`).
    pub fn cached<'n>(&self, node: &'n Node, is_root: bool) -> Option<&'n EvalCacheEntry> {
        self.eval_cache?;
        let applies = if is_root {
            self.root_cached
        } else {
            !node.force_non_terminal
        };
        node.eval_cache.as_deref().filter(|_| applies)
    }

    /// [`Ctx::cached`] for a node below the root: the root's own values are
    /// never pulled towards the cache (KataGo's `&node != rootNode`).
    fn cached_below_root<'n>(&self, node: &'n Node, is_root: bool) -> Option<&'n EvalCacheEntry> {
        if is_root {
            None
        } else {
            self.cached(node, false)
        }
    }

    /// The leaf sample of a network evaluation (with the node's subtree
    /// bias and pattern bonus), pulled towards the eval cache's values
    /// for the position below the root (as one visit).
    pub fn nn_sample(&self, node: &Node, is_root: bool, nn: &NnOutput) -> NodeValues {
        let mut extra = self.pattern_bonus(node, is_root);
        if self.params.subtree_value_bias_factor != 0.0 {
            if let Some(e) = &node.bias.lock().entry {
                extra += e.bias(self.params.subtree_value_bias_factor);
            }
        }
        let mut v = NodeValues {
            visits: 1,
            weight_sum: self.nn_weight(nn),
            win_loss: nn.white_win_prob as f64 - nn.white_loss_prob as f64,
            no_result: nn.white_no_result_prob as f64,
            score_mean: nn.white_score_mean as f64,
            score_mean_sq: nn.white_score_mean_sq as f64,
            lead: nn.white_lead as f64,
            ..NodeValues::default()
        };
        if let Some(entry) = self.cached_below_root(node, is_root) {
            entry.adjust(1, self.params.eval_cache_min_visits, &mut v, None);
        }
        let u = &self.utility;
        v.utility =
            u.result(v.win_loss, v.no_result) + u.score(v.score_mean, v.score_mean_sq) + extra;
        v.utility_sq = v.utility * v.utility;
        v
    }

    fn nn_weight(&self, nn: &NnOutput) -> f64 {
        if self.has_shortterm_error {
            self.utility.playout_weight(self.params, nn)
        } else {
            1.0
        }
    }

    /// KataGo's recomputation of a node without children when the tree is
    /// reused: its utility from its values under the current utility
    /// function and pattern bonus, without the subtree bias or the eval
    /// cache (a later visit brings those back).
    pub fn recompute_leaf_utility(&self, node: &Node, is_root: bool) {
        let _guard = node.bias.lock();
        let mut v = node.values();
        if v.weight_sum <= 0.0 {
            return;
        }
        let u = self.utility.result(v.win_loss, v.no_result)
            + self.utility.score(v.score_mean, v.score_mean_sq)
            + self.pattern_bonus(node, is_root);
        v.utility = u;
        v.utility_sq = u * u;
        node.store_values(&v, 0);
    }

    /// Recomputes a node's averages from its own evaluation and its
    /// children (noise pruning, value down-weighting, subtree bias), then
    /// adds `add_visits` visits.
    pub fn recompute(&self, node: &Node, is_root: bool, add_visits: i64, scratch: &mut Scratch) {
        let Some(nn) = node.nn() else {
            return;
        };
        let p = self.params;
        let (xs, ys) = (nn.x_size, nn.y_size);
        let Scratch {
            weights, values, ..
        } = scratch;
        weights.clear();
        values.clear();
        let mut orig_total = 0.0;
        // The node's own evaluation and its counted edges' visits.
        let mut own_visits = 1;
        for c in node.children().iter() {
            let edge_visits = c.edge_visits();
            let v = c.node.values();
            if v.visits <= 0 || v.weight_sum <= 0.0 || edge_visits <= 0 {
                continue;
            }
            own_visits += edge_visits;
            // KataGo's getChildWeight(edgeVisits): a child with playouts
            // that did not come through this edge counts for its edge's.
            let weight = v.weight_sum * edge_visits as f64 / v.visits as f64;
            let self_utility = if node.next_pla == Player::White {
                v.utility
            } else {
                -v.utility
            };
            let policy = nn
                .policy
                .get(c.mv.policy_index(xs, ys))
                .copied()
                .unwrap_or(0.0);
            weights.push(ChildWeight {
                self_utility,
                weight,
                visits: v.visits,
                policy: (policy as f64).max(1e-30),
            });
            values.push(v);
            orig_total += weight;
        }
        let mut total = orig_total;
        // KataGo averages plainly while countering a mirror.
        let mirroring = self.anti_mirror.is_some();
        if p.use_noise_pruning && !mirroring && !weights.is_empty() {
            total = explore::prune_noise_weight(p, weights, total);
        }
        let (mut sub, mut prune) = (0.0, 0.0);
        if is_root && p.root_noise_enabled && !p.use_noise_pruning {
            let max_w = weights.iter().map(|c| c.weight).fold(0.0, f64::max);
            sub = p.chosen_move_subtract.min(max_w / 64.0);
            prune = p.chosen_move_prune.min(max_w / 64.0);
        }
        let value_weight_exponent = if mirroring {
            0.0
        } else {
            p.value_weight_exponent
        };
        explore::downweight_bad_children(weights, value_weight_exponent, total, total, sub, prune);

        let mut sums = NodeValues::default();
        // As KataGo, the children count with their total before the
        // reweighting (which keeps it, up to rounding): weights stay whole
        // numbers where KataGo's do, which its root's rounding up of
        // reduced weights depends on.
        let child_weight = total;
        for (c, v) in weights.iter().zip(values.iter()) {
            let w = c.weight;
            let scale = w / v.weight_sum;
            sums.win_loss += w * v.win_loss;
            sums.no_result += w * v.no_result;
            sums.score_mean += w * v.score_mean;
            sums.score_mean_sq += w * v.score_mean_sq;
            sums.lead += w * v.lead;
            sums.utility += w * v.utility;
            sums.utility_sq += w * v.utility_sq;
            sums.weight_sq_sum += scale * scale * v.weight_sq_sum;
        }

        let mut bias = node.bias.lock();
        let win_loss = nn.white_win_prob as f64 - nn.white_loss_prob as f64;
        let mut utility = self.utility.of_nn(&nn);
        if p.subtree_value_bias_factor != 0.0 {
            if let Some(entry) = bias.entry.clone() {
                let (d, w) = if child_weight > 1e-10 {
                    let weight = orig_total.powf(p.subtree_value_bias_weight_exponent);
                    let delta = (sums.utility / child_weight - utility) * weight;
                    let r = entry.add(delta - bias.last_delta_sum, weight - bias.last_weight);
                    bias.last_delta_sum = delta;
                    bias.last_weight = weight;
                    r
                } else {
                    entry.get()
                };
                if w > 0.001 {
                    utility += p.subtree_value_bias_factor * d / w;
                }
            }
        }
        let w = self.nn_weight(&nn);
        let total_w = child_weight + w;
        // As KataGo, the node's own pattern bonus goes onto the average
        // (its children's values hold theirs), then the eval cache pulls
        // it, and the mean square follows both.
        let plain = (sums.utility + utility * w) / total_w;
        let mut v = NodeValues {
            visits: 0,
            weight_sum: total_w,
            weight_sq_sum: sums.weight_sq_sum + w * w,
            win_loss: (sums.win_loss + win_loss * w) / total_w,
            no_result: (sums.no_result + nn.white_no_result_prob as f64 * w) / total_w,
            score_mean: (sums.score_mean + nn.white_score_mean as f64 * w) / total_w,
            score_mean_sq: (sums.score_mean_sq + nn.white_score_mean_sq as f64 * w) / total_w,
            lead: (sums.lead + nn.white_lead as f64 * w) / total_w,
            utility: plain + self.pattern_bonus(node, is_root),
            utility_sq: (sums.utility_sq + utility * utility * w) / total_w,
        };
        if let Some(entry) = self.cached_below_root(node, is_root) {
            entry.adjust(
                own_visits,
                p.eval_cache_min_visits,
                &mut v,
                Some(&self.utility),
            );
        }
        v.utility_sq += v.utility * v.utility - plain * plain;
        node.store_values(&v, add_visits);
    }

    /// Runs one playout from `node` (the root when `is_root`).
    pub fn descend(
        &self,
        w: &mut Worker<S>,
        node: &Node,
        is_root: bool,
        depth: u32,
    ) -> Result<PlayoutEnd, EvalError> {
        if !node.force_non_terminal && !is_root {
            if let Some(outcome) = w.state.outcome() {
                let bonus = self.pattern_bonus(node, false);
                node.add_leaf_sample(&self.terminal_sample(outcome, bonus));
                return Ok(PlayoutEnd::Counted);
            }
        }
        match node.state() {
            STATE_UNEVALUATED => {
                if !node.try_begin_eval() {
                    return Ok(PlayoutEnd::Retry);
                }
                let mut opts = self.eval_options(w.state.next_player(), is_root, depth, &mut w.rng);
                let mirror_hack = self
                    .anti_mirror
                    .filter(|am| am.hacks_evaluation(&w.state, &w.path));
                if mirror_hack.is_some() {
                    opts.include_ownership = true;
                }
                let mut nn = match self.evaluator.evaluate(&w.state, &opts) {
                    Ok(nn) => nn,
                    Err(e) => {
                        node.abort_eval();
                        return Err(e);
                    }
                };
                if let Some(am) = mirror_hack {
                    // A copy: the evaluator's cache keeps the net's own output.
                    let mut hacked = (*nn).clone();
                    am.hack_nn_output(&mut hacked);
                    nn = Arc::new(hacked);
                }
                if let Some(human) = self.human_in_tree.filter(|_| !is_root) {
                    match human.evaluate(&w.state, &opts) {
                        Ok(h) => node.set_human(h),
                        Err(e) => {
                            node.abort_eval();
                            return Err(e);
                        }
                    }
                }
                let sample = self.nn_sample(node, is_root, &nn);
                node.finish_eval(nn);
                node.add_leaf_sample(&sample);
                return Ok(PlayoutEnd::Counted);
            }
            STATE_EVALUATING => return Ok(PlayoutEnd::Retry),
            _ => {}
        }
        let Some(nn) = node.nn() else {
            return Ok(PlayoutEnd::Retry);
        };
        w.excluded.clear();
        // (the child's index, its node, the move, how the edge counts,
        // whether the move is played on `w.state` already)
        let (index, child, mv, visit, played) = loop {
            let Some(choice) = self.select_child(w, node, &nn, is_root, depth) else {
                // Everything is forbidden: count the node's own evaluation again.
                node.add_leaf_sample(&self.nn_sample(node, is_root, &nn));
                return Ok(PlayoutEnd::Counted);
            };
            let Choice {
                mv,
                existing,
                visit,
            } = choice;
            if let Some((i, c)) = existing {
                break (i, c, mv, visit, false);
            }
            if !w.state.is_legal(mv) {
                w.excluded.push(mv);
                continue;
            }
            let mut children = node.children_mut();
            if let Some(i) = children.iter().position(|c| c.mv == mv) {
                break (i, children[i].node.clone(), mv, visit, false);
            }
            let (child, played) = self.new_child(w, node, is_root, mv);
            children.push(Child::new(mv, child.clone()));
            break (children.len() - 1, child, mv, visit, played);
        };
        // A transposition may have more visits than its edge: count the
        // edge up to them first (KataGo's maybeCatchUpEdgeVisits).
        if self.table.is_some()
            && visit == EdgeVisit::Counted
            && self.catch_up(w, node, index, &child)
        {
            let scratch = &mut w.scratch;
            node.update_after_playout(|n| self.recompute(node, is_root, n, scratch));
            return Ok(PlayoutEnd::Counted);
        }
        if !played {
            w.state.play(mv);
            self.update_graph_hash(w);
        }
        let end = if self.table.is_some() && w.graph_path.contains(&Arc::as_ptr(&child)) {
            // A cycle: count the edge and go no further (KataGo: "just
            // reinforce playing around the cycle"); the child's own visits
            // may then stay below its edge's.
            visit.above(PlayoutEnd::Counted)
        } else {
            w.path.push(mv);
            w.graph_path.push(Arc::as_ptr(&child));
            child.virtual_losses.fetch_add(1, Ordering::AcqRel);
            let r = self.descend(w, &child, false, depth + 1);
            child.virtual_losses.fetch_sub(1, Ordering::AcqRel);
            w.graph_path.pop();
            w.path.pop();
            visit.above(r?)
        };
        if end == PlayoutEnd::Counted {
            // Children are only appended during a search: the index holds.
            if let Some(c) = node.children().get(index) {
                c.add_edge_visit();
            }
            let scratch = &mut w.scratch;
            node.update_after_playout(|n| self.recompute(node, is_root, n, scratch));
        }
        Ok(end)
    }

    /// The node for the new child `mv` of `node`: a new one, or with graph
    /// search the table's node for the position after `mv` (then the move
    /// is played on `w.state` already: the second value).
    fn new_child(
        &self,
        w: &mut Worker<S>,
        node: &Node,
        is_root: bool,
        mv: Move,
    ) -> (Arc<Node>, bool) {
        // A pass that ends the game is searched past (KataGo's
        // forceNonTerminal) at the root with conservative passing, and
        // anywhere under friendly-pass rules. Only then is the state
        // after the move needed (a clone is a few KB).
        let force_non_terminal = mv == Move::Pass
            && ((is_root && self.params.conservative_pass) || w.state.friendly_pass_continues())
            && pass_ends_game(&w.state);
        let pattern_hash = self.patterns.map(|_| w.state.pattern_hash(mv));
        let bias_entry = match self.bias {
            Some(table) if self.params.subtree_value_bias_factor != 0.0 => {
                bias_key(&w.state, mv).map(|key| table.get(key))
            }
            _ => None,
        };
        let pla = node.next_pla.opp();
        let make = move || {
            let mut child = Node::new(pla, force_non_terminal);
            if let Some(h) = pattern_hash {
                child = child.with_pattern_hash(h);
            }
            child.bias.lock().entry = bias_entry;
            child
        };
        match self.table {
            Some(table) => {
                w.state.play(mv);
                self.update_graph_hash(w);
                let hash = w.graph_hash;
                let child = table.find_or_insert(hash, force_non_terminal, pla, || {
                    let cached = self
                        .eval_cache
                        .and_then(|c| c.find(self.eval_cache_key ^ hash));
                    make().with_graph_hash(hash, cached)
                });
                (child, true)
            }
            None => (Arc::new(make()), false),
        }
    }

    /// With graph search, the graph hash after the move just played.
    fn update_graph_hash(&self, w: &mut Worker<S>) {
        if self.table.is_some() {
            let p = self.params;
            if let Some(h) = w.state.graph_hash(
                w.graph_hash,
                p.graph_search_rep_bound as usize,
                p.draw_equivalent_wins_for_white,
            ) {
                w.graph_hash = h;
            }
        }
    }

    /// KataGo's `maybeCatchUpEdgeVisits`: when the child has more visits
    /// than this edge (a transposition searched from elsewhere), one more
    /// edge visit instead of a playout below it, except with probability
    /// `graphSearchCatchUpLeakProb`. True if the edge was counted up.
    fn catch_up(&self, w: &mut Worker<S>, node: &Node, index: usize, child: &Node) -> bool {
        let children = node.children();
        let Some(edge) = children.get(index) else {
            return false;
        };
        let child_visits = child.visits();
        let leak = self.params.graph_search_catch_up_leak_prob;
        if leak > 0.0 && edge.edge_visits() < child_visits && w.rng.gen_bool(leak) {
            return false;
        }
        edge.try_catch_up(child_visits)
    }
}

/// Whether a pass now ends the game. Kept out of line on purpose: the state
/// copy it needs is several KB, and inlined into the recursive
/// [`Ctx::descend`] it made every level of a playout that much deeper on the
/// stack (35 KB a level overflowed a 2 MB thread stack at depth ~55).
#[inline(never)]
fn pass_ends_game<S: SearchState>(state: &S) -> bool {
    let mut after = state.clone();
    after.play(Move::Pass);
    after.outcome().is_some()
}
