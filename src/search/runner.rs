//! [`Search`]: owns the tree for one game, runs searches with limits on
//! many threads, and re-roots the tree when moves are played.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::anti_mirror::AntiMirror;
use super::bias::BiasTable;
use super::eval::{EvalError, PositionEvaluator, SearchState};
use super::explore;
use super::gumbel::GumbelRoot;
use super::human::{human_in_tree, human_root_output};
use super::mirror::MirrorStatus;
use super::node_table::NodeTable;
use super::params::SearchParams;
use super::pattern_bonus::PatternBonusTable;
use super::playout::Ctx;
use super::results::SearchView;
use super::root_symmetry::RootSymmetry;
use super::threads::Shared;
use super::tree::eval_cache::EvalCache;
use super::tree::Node;
use super::utility::UtilityFn;

mod cache;
mod reuse;
use crate::game::{ByPlayer, Hash128, Move, Player};
use crate::nn::NnOutput;
use reuse::recompute_tree;

/// Stack of each search thread. A playout recurses once per tree level, so
/// a deep line (a long ladder, a forced-pass chain) needs more than the
/// default 2 MB; the memory is only reserved, not committed.
const SEARCH_THREAD_STACK_BYTES: usize = 64 << 20;

/// Recomputes a search's time limit: see [`RunOptions::time_limit`].
pub type TimeLimitFn<'a> = dyn Fn(&SearchView<'_>, f64) -> f64 + Sync + 'a;

/// Per-search options beyond the parameters.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Use the `*Pondering` limits.
    pub pondering: bool,
    /// The search thinks on the opponent's time: it is for the player who
    /// moved last, or the one the last search was for (KataGo's
    /// `plaThatSearchIsFor` while pondering; pattern bonuses go to that
    /// player's moves). Otherwise it is for the player to move.
    pub for_opponent: bool,
    /// A fixed time limit (seconds); the smaller of this and `maxTime` applies.
    pub max_time: Option<f64>,
    /// Set from outside to stop the search soon.
    pub stop: Option<&'a AtomicBool>,
    /// Called about every `callback_period` with the search (partial results).
    pub callback: Option<&'a (dyn Fn(&SearchView<'_>) + Sync)>,
    /// Period of the callback (default 100 ms).
    pub callback_period: Option<Duration>,
    /// Time from the start to the first callback (default: the period;
    /// KataGo's `firstReportDuringSearchAfter`).
    pub first_callback_after: Option<Duration>,
    /// Time controls' limit (seconds) for this search, recomputed as it
    /// runs (KataGo's `recomputeSearchTimeLimit`): called with the search so
    /// far and the seconds used, at the start and then every 100 ms. The
    /// smaller of this, `max_time` and `maxTime` applies.
    pub time_limit: Option<&'a TimeLimitFn<'a>>,
}

/// What a search did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SearchStats {
    /// Playouts added by this search.
    pub playouts: i64,
    /// Root visits at the end (including reused ones).
    pub root_visits: i64,
    /// Wall time.
    pub seconds: f64,
    /// The search stopped at the tree's visit cap ([`Search::set_max_tree_visits`],
    /// from `maxMemoryMB`) before its own limits.
    pub memory_capped: bool,
}

/// Errors of a search.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    /// The evaluator failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
}

/// The search for one game: the tree, its root position and parameters.
pub struct Search<S: SearchState, E: PositionEvaluator<S>> {
    params: SearchParams,
    evaluator: Arc<E>,
    root_state: S,
    root: Arc<Node>,
    bias: Option<BiasTable>,
    utility: UtilityFn,
    avoid: ByPlayer<Vec<u32>>,
    include_ownership: bool,
    rng: StdRng,
    last_stats: SearchStats,
    /// Seconds of search that the current tree stands for (KataGo's
    /// `effectiveSearchTimeCarriedOver`): time management counts it as
    /// already thought.
    time_carried_over: f64,
    /// The root's symmetries and the moves not searched because of them,
    /// set when a search starts.
    root_symmetry: RootSymmetry,
    /// The most bytes the tree may hold (reused nodes included), from the
    /// memory budget; unlimited by default.
    tree_memory_limit: Option<u64>,
    /// The root's ending score bonus per move (`rootEndingBonusPoints`,
    /// [`SearchState::ending_score_bonuses`]), set when a search starts;
    /// empty: none.
    ending_bonus: Vec<f64>,
    /// Root moves `rootPruneUselessMoves` keeps out of the search, per
    /// policy index ([`SearchState::useless_root_moves`]), set when a
    /// search starts; empty: none.
    root_pruned: Vec<bool>,
    /// Whether `fillDameBeforePass` applies at the root (its rules),
    /// set when a search starts.
    fills_dame: bool,
    /// The anti-mirror defence (`antiMirror`), set when a search starts
    /// and the opponent is found mirroring; `None` otherwise.
    anti_mirror: Option<AntiMirror>,
    /// Shapes to avoid given from outside (`avoidSgfPattern*`).
    external_patterns: Option<Arc<PatternBonusTable>>,
    /// This search's pattern bonus table: the outside one plus, with
    /// `avoidRepeatedPatternUtility`, the game's own moves; rebuilt when a
    /// search starts.
    patterns: Option<PatternBonusTable>,
    /// The player the last search was for (KataGo's
    /// `plaThatSearchIsForLastSearch`).
    pattern_player: Option<Player>,
    /// A human-style net beside the main one (KataGo's `humanEvaluator`,
    /// `-human-model`).
    human: Option<Arc<E>>,
    /// Its output at the root, evaluated as the root is when a search
    /// starts, if the human net can run (a profile is set, or the net
    /// needs none).
    human_root: Option<Arc<NnOutput>>,
    /// Graph search's node table (`useGraphSearch`); `None`: a tree.
    table: Option<NodeTable>,
    /// The root's graph hash, set when a search starts; `None` when the
    /// state has none (then the search is a tree).
    root_graph_hash: Option<Hash128>,
    /// The eval cache (`useEvalCache` with graph search), kept across
    /// searches; shared by analysis threads.
    eval_cache: Option<Arc<EvalCache>>,
    /// The hash of this search's parameters the eval cache's keys fold in
    /// ([`super::tree::eval_cache::params_key`]), set when a search starts.
    eval_cache_key: Hash128,
    /// Gumbel root search's halving for the current search
    /// (`gumbelRootSearch`), set when a search starts.
    gumbel: Option<GumbelRoot>,
}

/// The node table the parameters ask for.
fn node_table(params: &SearchParams) -> Option<NodeTable> {
    params.use_graph_search.then(|| {
        // 2^16 shards at most: each is a lock and an empty map.
        NodeTable::new(params.node_table_shards_power_of_two.clamp(0, 16) as u32)
    })
}

impl<S: SearchState, E: PositionEvaluator<S>> Search<S, E> {
    /// A search from `state` with `seed` for all its randomness (with one
    /// thread and a visit or playout limit, the same seed gives the same result).
    pub fn new(params: SearchParams, evaluator: Arc<E>, state: S, seed: u64) -> Self {
        let root = Arc::new(Node::new(state.next_player(), true));
        let (state_x, state_y) = (state.x_size(), state.y_size());
        let utility = UtilityFn::new(&params, state.x_size(), state.y_size(), 0.0);
        let mut s = Search {
            bias: None,
            params,
            evaluator,
            root_state: state,
            root,
            utility,
            avoid: ByPlayer::default(),
            include_ownership: false,
            rng: StdRng::seed_from_u64(seed),
            last_stats: SearchStats::default(),
            time_carried_over: 0.0,
            root_symmetry: RootSymmetry::none(state_x, state_y),
            tree_memory_limit: None,
            ending_bonus: Vec::new(),
            root_pruned: Vec::new(),
            fills_dame: false,
            anti_mirror: None,
            external_patterns: None,
            patterns: None,
            pattern_player: None,
            human: None,
            human_root: None,
            table: None,
            root_graph_hash: None,
            eval_cache: None,
            eval_cache_key: Hash128::ZERO,
            gumbel: None,
        };
        s.table = node_table(&s.params);
        s.reset_bias_table();
        s
    }

    fn reset_bias_table(&mut self) {
        self.bias = (self.params.subtree_value_bias_factor != 0.0).then(|| {
            BiasTable::new(self.params.subtree_value_bias_table_num_shards.max(1) as usize)
        });
    }

    /// Caps the tree's memory (`maxMemoryMB`'s share of this search): a
    /// search stops when its tree holds as many visits, reused ones
    /// included, as nodes of [`super::tree_node_bytes`] fit in `bytes`, as
    /// at a visit limit, and says so in [`SearchStats::memory_capped`].
    /// Each playout adds at most one node, so the tree has at most that
    /// many nodes plus one per search thread.
    pub fn set_tree_memory_limit(&mut self, bytes: u64) {
        self.tree_memory_limit = Some(bytes);
    }

    /// The number of nodes in the tree (tests of the memory limit).
    #[cfg(test)]
    pub(crate) fn count_nodes(&self) -> usize {
        super::node_table::reachable(&self.root).len()
    }

    /// Graph search: entries in the node table (tests of the sweep).
    #[cfg(test)]
    pub(crate) fn table_len(&self) -> usize {
        self.table.as_ref().map_or(0, NodeTable::len)
    }

    /// The visits the tree may hold under the memory limit.
    pub fn max_tree_visits(&self) -> i64 {
        match self.tree_memory_limit {
            None => i64::MAX,
            Some(bytes) => {
                let node =
                    super::tree_node_bytes(self.root_state.x_size(), self.root_state.y_size());
                let threads = i64::from(self.params.num_threads.max(1));
                ((bytes / node) as i64 - threads).max(1)
            }
        }
    }

    /// The parameters.
    pub fn params(&self) -> &SearchParams {
        &self.params
    }

    /// Replaces the parameters. The tree is kept unless the utility
    /// function's shape or the bias settings changed.
    pub fn set_params(&mut self, params: SearchParams) {
        let keep = params.win_loss_utility_factor == self.params.win_loss_utility_factor
            && params.subtree_value_bias_factor == self.params.subtree_value_bias_factor
            && params.avoid_repeated_pattern_utility == self.params.avoid_repeated_pattern_utility
            && params.root_noise_enabled == self.params.root_noise_enabled
            && params.use_graph_search == self.params.use_graph_search
            && params.graph_search_rep_bound == self.params.graph_search_rep_bound;
        self.params = params;
        if !keep {
            self.table = node_table(&self.params);
            self.clear_tree();
        }
    }

    /// Sets the shapes to avoid that come from outside the game (KataGo's
    /// external pattern bonus table, from `avoidSgfPattern*`), dropping the
    /// tree, whose values were made without them.
    pub fn set_pattern_bonus_table(&mut self, table: Option<Arc<PatternBonusTable>>) {
        self.external_patterns = table;
        self.clear_tree();
    }

    /// Sets the human-style net evaluated beside the main one (KataGo's
    /// `-human-model`): from the next search on, its root output is part
    /// of the search's report.
    pub fn set_human_evaluator(&mut self, human: Option<Arc<E>>) {
        self.human = human;
        self.human_root = None;
    }

    /// The root position.
    pub fn root_state(&self) -> &S {
        &self.root_state
    }

    /// Sets a new root position, dropping the tree.
    pub fn set_position(&mut self, state: S) {
        self.root_state = state;
        self.clear_tree();
    }

    /// Drops the tree (and the subtree bias statistics).
    pub fn clear_tree(&mut self) {
        self.root = Arc::new(Node::new(self.root_state.next_player(), true));
        self.gumbel = None;
        if let Some(t) = &self.table {
            t.clear();
        }
        self.reset_bias_table();
        self.time_carried_over = 0.0;
    }

    /// Seconds of search the current tree stands for: the searches on this
    /// root, plus the `treeReuseCarryOverTimeFactor` share of earlier ones
    /// kept through [`Search::make_move`], in proportion to the visits kept.
    pub fn time_carried_over(&self) -> f64 {
        self.time_carried_over
    }

    /// Ownership is computed at every node (needed for tree-averaged
    /// ownership in analysis); otherwise only at the root.
    pub fn set_include_ownership(&mut self, on: bool) {
        if on && !self.include_ownership {
            self.clear_tree();
        }
        self.include_ownership = on;
    }

    /// Forbids `moves` for `player` until `until_depth` plies below the
    /// root (1 = only at the root), as KataGo's `avoidMoves`.
    pub fn set_avoid_moves(&mut self, player: Player, moves: &[Move], until_depth: u32) {
        let (xs, ys) = (self.root_state.x_size(), self.root_state.y_size());
        let v = &mut self.avoid[player];
        v.resize(xs * ys + 1, 0);
        for &m in moves {
            let i = m.policy_index(xs, ys);
            v[i] = v[i].max(until_depth);
        }
    }

    /// Allows only `moves` for `player` until `until_depth` (KataGo's `allowMoves`).
    pub fn set_allow_moves(&mut self, player: Player, moves: &[Move], until_depth: u32) {
        let (xs, ys) = (self.root_state.x_size(), self.root_state.y_size());
        let allowed: Vec<usize> = moves.iter().map(|&m| m.policy_index(xs, ys)).collect();
        let v = &mut self.avoid[player];
        *v = (0..=xs * ys)
            .map(|i| if allowed.contains(&i) { 0 } else { until_depth })
            .collect();
    }

    /// Clears avoid/allow lists.
    pub fn clear_avoid_moves(&mut self) {
        self.avoid = ByPlayer::default();
    }

    /// A view for reading results.
    pub fn view(&self) -> SearchView<'_> {
        SearchView {
            params: &self.params,
            root: &self.root,
            root_pla: self.root_state.next_player(),
            x_size: self.root_state.x_size(),
            y_size: self.root_state.y_size(),
            turn: self.root_state.turn_number(),
            utility: self.utility,
            root_symmetry: &self.root_symmetry,
            ending_bonus: &self.ending_bonus,
            fills_dame: self.fills_dame,
            human_root: self.human_root.clone(),
            gumbel: self.gumbel.as_ref(),
        }
    }

    /// Stats of the last search.
    pub fn last_stats(&self) -> SearchStats {
        self.last_stats
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &Arc<E> {
        &self.evaluator
    }

    /// Replaces the evaluator (a newer net in the middle of a self-play
    /// game), dropping the tree, whose values came from the old one.
    pub fn set_evaluator(&mut self, evaluator: Arc<E>) {
        self.evaluator = evaluator;
        self.clear_tree();
    }

    fn ctx(&self, has_shortterm_error: bool) -> Ctx<'_, S, E> {
        // While countering a mirror the evaluations depend on the path
        // (`AntiMirror::hacks_evaluation`), so nodes are not shared
        // between paths: the search is a tree then, with no eval cache.
        let table = self
            .table
            .as_ref()
            .filter(|_| self.root_graph_hash.is_some() && self.anti_mirror.is_none());
        let eval_cache = self.eval_cache.as_deref().filter(|_| {
            table.is_some() && self.params.use_eval_cache && self.params.use_graph_search
        });
        Ctx {
            params: &self.params,
            evaluator: &self.evaluator,
            root_state: &self.root_state,
            utility: self.utility,
            // KataGo keeps no subtree value bias while countering a mirror.
            bias: self.bias.as_ref().filter(|_| self.anti_mirror.is_none()),
            anti_mirror: self.anti_mirror.as_ref(),
            avoid: &self.avoid,
            root_symmetry: &self.root_symmetry,
            ending_bonus: &self.ending_bonus,
            root_pruned: &self.root_pruned,
            include_ownership: self.include_ownership,
            has_shortterm_error,
            pda_player: self
                .params
                .playout_doubling_advantage_pla
                .0
                .unwrap_or(self.root_state.next_player()),
            patterns: self.patterns.as_ref(),
            pattern_player: self.pattern_player.unwrap_or(self.root_state.next_player()),
            human_root: self.human_root.as_deref(),
            human_in_tree: human_in_tree(self.human.as_deref(), &self.params),
            table,
            root_graph_hash: self.root_graph_hash.unwrap_or(Hash128::ZERO),
            eval_cache,
            eval_cache_key: self.eval_cache_key,
            root_cached: eval_cache.is_some() && self.root_state.outcome().is_none(),
            gumbel: self.gumbel.as_ref(),
        }
    }

    /// Rebuilds the pattern bonus table for a search for `player` (KataGo's
    /// `beginSearch`): the outside table, plus the game's own moves by
    /// `player` with `avoidRepeatedPatternUtility`. When the player the
    /// search is for changes, the tree goes: its values hold the other
    /// player's bonuses.
    fn prepare_patterns(&mut self, player: Player) {
        let utility = self.params.avoid_repeated_pattern_utility;
        let active = utility != 0.0 || self.external_patterns.is_some();
        if active && self.pattern_player.is_some_and(|p| p != player) {
            self.clear_tree();
        }
        self.pattern_player = Some(player);
        self.patterns = active.then(|| {
            let mut table = self
                .external_patterns
                .as_deref()
                .cloned()
                .unwrap_or_default();
            if utility != 0.0 {
                // A bonus is in White's utility.
                let bonus = if player == Player::White {
                    -utility
                } else {
                    utility
                };
                self.root_state.add_game_patterns(&mut table, bonus, player);
            }
            table
        });
    }

    /// Evaluates the root (always afresh: symmetries, noise and root
    /// policy temperature change it per search), sets the dynamic score
    /// centre, and recomputes a reused tree under the new utility.
    fn prepare_root(&mut self, for_opponent: bool) -> Result<bool, EvalError> {
        // The last search's halving goes; `run` makes this one's.
        self.gumbel = None;
        let (xs, ys) = (self.root_state.x_size(), self.root_state.y_size());
        let pla = self.root_state.next_player();
        // Pondering thinks for the player who moved last, unless a search
        // for someone came before (KataGo's plaThatSearchIsFor).
        let search_for = if for_opponent {
            self.pattern_player.unwrap_or(pla.opp())
        } else {
            pla
        };
        self.prepare_patterns(search_for);
        let mirror = if self.params.anti_mirror {
            self.root_state.mirror_status()
        } else {
            MirrorStatus::NONE
        };
        let was_mirroring = self.anti_mirror.as_ref().and_then(|a| a.status().mirroring);
        if was_mirroring != mirror.mirroring {
            // As KataGo: a tree grown under the other assumption goes.
            self.clear_tree();
        }
        self.anti_mirror = AntiMirror::new(&self.root_state, mirror);
        self.root_symmetry = if self.params.root_symmetry_pruning {
            RootSymmetry::new(
                self.root_state.invariant_symmetries(),
                xs,
                ys,
                pla,
                &self.avoid[pla],
            )
        } else {
            RootSymmetry::none(xs, ys)
        };
        self.fills_dame =
            self.params.fill_dame_before_pass && self.root_state.fills_dame_before_pass();
        self.root_pruned = if self.params.root_prune_useless_moves {
            self.root_state.useless_root_moves()
        } else {
            Vec::new()
        };
        self.drop_duplicate_root_children();
        // From scratch, as KataGo: a root that a repetition could reach
        // again keeps its game in the hash.
        self.root_graph_hash = self.table.as_ref().and_then(|_| {
            self.root_state.graph_hash_from_scratch(
                self.params.graph_search_rep_bound as usize,
                self.params.draw_equivalent_wins_for_white,
            )
        });
        self.prepare_eval_cache();
        let has_err = self.evaluator.supports_shortterm_error();
        let mut rng = StdRng::seed_from_u64(self.rng.gen());
        let human_root;
        let (raw, expected_score) = {
            let ctx = self.ctx(has_err);
            let opts = ctx.eval_options(self.root_state.next_player(), true, 0, &mut rng);
            let mut raw = self.evaluator.evaluate(&self.root_state, &opts)?;
            human_root =
                human_root_output(self.human.as_deref(), &self.params, &self.root_state, &opts)?;
            if let Some(am) = ctx.anti_mirror {
                if am.hacks_evaluation(&self.root_state, &[]) {
                    let mut hacked = (*raw).clone();
                    am.hack_nn_output(&mut hacked);
                    raw = Arc::new(hacked);
                }
            }
            let v = self.root.values();
            let score = if v.visits > 0 && v.weight_sum > 0.0 {
                v.score_mean
            } else {
                raw.white_score_mean as f64
            };
            (raw, score)
        };
        self.human_root = human_root;
        let has_err = has_err && raw.shortterm_winloss_error >= 0.0;
        self.ending_bonus = raw.white_ownership.as_deref().map_or_else(Vec::new, |own| {
            self.root_state
                .ending_score_bonuses(own, self.params.root_ending_bonus_points)
        });
        let center = UtilityFn::dynamic_center(&self.params, xs, ys, expected_score);
        self.utility = UtilityFn::new(&self.params, xs, ys, center);
        let nn = self.root_policy(raw, &mut rng);
        let root = self.root.clone();
        if root.state() == super::tree::STATE_EXPANDED {
            // As KataGo: the reused tree is recomputed under the new
            // utility first, the root with the evaluation it had as a
            // child; the root's new evaluation counts from the first
            // playout's backup on.
            let ctx = self.ctx(has_err);
            recompute_tree(&ctx, &root, true);
            root.replace_nn(nn);
        } else if root.try_begin_eval() {
            let ctx = self.ctx(has_err);
            let sample = ctx.nn_sample(&root, true, &nn);
            root.finish_eval(nn);
            root.add_leaf_sample(&sample);
        }
        Ok(has_err)
    }

    /// Gumbel root search's halving for a search of `budget` playouts
    /// (`gumbelRootSearch`), over the root moves the search may play.
    fn gumbel_root(&mut self, budget: i64) -> Option<GumbelRoot> {
        // Off, it draws nothing from the search's random stream.
        if !self.params.gumbel_root_search {
            return None;
        }
        let nn = self.root.nn()?;
        let pla = self.root_state.next_player();
        let (avoid, symmetry, pruned) = (&self.avoid[pla], &self.root_symmetry, &self.root_pruned);
        let legal = |i: usize| {
            avoid.get(i).is_none_or(|&until| until == 0)
                && !symmetry.is_duplicate(i)
                && !pruned.get(i).copied().unwrap_or(false)
        };
        let mut rng = StdRng::seed_from_u64(self.rng.gen());
        GumbelRoot::new(
            &self.params,
            &self.root,
            &nn.policy,
            (nn.x_size, nn.y_size),
            legal,
            budget,
            &mut rng,
        )
    }

    /// The root's network output with root policy temperature and noise.
    fn root_policy(&self, raw: Arc<NnOutput>, rng: &mut StdRng) -> Arc<NnOutput> {
        let p = &self.params;
        if !p.root_noise_enabled
            && p.root_policy_temperature == 1.0
            && p.root_policy_temperature_early == 1.0
        {
            return raw;
        }
        let mut nn = (*raw).clone();
        if p.root_policy_temperature != 1.0 || p.root_policy_temperature_early != 1.0 {
            let t = explore::interpolate_early(
                p.chosen_move_temperature_halflife,
                p.root_policy_temperature_early,
                p.root_policy_temperature,
                self.root_state.turn_number(),
                nn.x_size,
                nn.y_size,
            );
            explore::apply_policy_temperature(&mut nn.policy, t);
        }
        if p.root_noise_enabled {
            explore::add_dirichlet_noise(p, rng, &mut nn.policy);
        }
        Arc::new(nn)
    }

    /// The visit, playout and time limits of a search (pondering's, or
    /// the normal ones).
    fn limits(&self, pondering: bool) -> (i64, i64, f64) {
        let p = &self.params;
        if pondering {
            (
                p.max_visits_pondering,
                p.max_playouts_pondering,
                p.max_time_pondering,
            )
        } else {
            (p.max_visits, p.max_playouts, p.max_time)
        }
    }

    /// Runs a search until a limit, the stop flag, or an evaluator error.
    pub fn run(&mut self, opts: &RunOptions<'_>) -> Result<SearchStats, SearchError> {
        let start = Instant::now();
        let has_err = self.prepare_root(opts.for_opponent)?;
        let (max_visits, max_playouts, mut max_time) = self.limits(opts.pondering);
        if let Some(t) = opts.max_time {
            max_time = max_time.min(t);
        }
        let start_visits = self.root.visits();
        // Each playout reserves one unit of budget first, so that many
        // threads end at exactly the limit.
        let asked = (max_visits - start_visits).min(max_playouts).max(0);
        let tree_room = (self.max_tree_visits() - start_visits).max(0);
        let budget = asked.min(tree_room);
        self.gumbel = self.gumbel_root(budget);
        let p = &self.params;
        let mut threads = p.num_threads.max(1) as i64;
        if p.min_playouts_per_thread > 0.0 {
            threads =
                threads.min(((budget as f64 / p.min_playouts_per_thread).ceil() as i64).max(1));
        }
        let shared = Shared {
            reserved: AtomicI64::new(0),
            done: AtomicI64::new(0),
            finished: AtomicBool::new(false),
            error: Mutex::new(None),
            visits_left_by_time: AtomicU64::new(1e30f64.to_bits()),
            budget,
            visits_room: max_visits - start_visits,
            max_playouts,
            has_tc: opts.time_limit.is_some(),
        };
        let Shared { done, finished, .. } = &shared;
        let seeds: Vec<u64> = (0..threads).map(|_| self.rng.gen()).collect();
        let ctx = self.ctx(has_err);
        let root = self.root.clone();
        let view = SearchView {
            params: ctx.params,
            root: &root,
            root_pla: ctx.root_state.next_player(),
            x_size: ctx.root_state.x_size(),
            y_size: ctx.root_state.y_size(),
            turn: ctx.root_state.turn_number(),
            utility: ctx.utility,
            root_symmetry: ctx.root_symmetry,
            ending_bonus: ctx.ending_bonus,
            fills_dame: self.fills_dame,
            human_root: self.human_root.clone(),
            gumbel: ctx.gumbel,
        };
        // The planned length of the search, and from it (with time
        // controls, as KataGo) the most visits the rest of it can add, for
        // futile-visits pruning at the root.
        let carried_over = self.time_carried_over;
        let deadline_now = |used: f64| {
            let tc = opts.time_limit.map_or(f64::INFINITY, |f| f(&view, used));
            let limit = max_time.min(tc);
            if shared.has_tc {
                let root_visits = start_visits + done.load(Ordering::Acquire);
                let left = explore::upper_bound_visits_left_by_time(
                    root_visits,
                    used,
                    limit,
                    carried_over,
                    threads,
                );
                shared
                    .visits_left_by_time
                    .store(left.to_bits(), Ordering::Release);
            }
            start + Duration::from_secs_f64(limit.clamp(0.0, 1e9))
        };
        let mut deadline = deadline_now(0.0);
        let stopped = || {
            finished.load(Ordering::Acquire) || opts.stop.is_some_and(|s| s.load(Ordering::Acquire))
        };
        // The watching thread sleeps until a worker ends the search (or the
        // clock, the stop flag or the callback needs it).
        let watcher = std::thread::current();
        std::thread::scope(|scope| {
            for &seed in &seeds {
                let (ctx, root, shared, watcher) = (&ctx, &root, &shared, &watcher);
                let spawned = std::thread::Builder::new()
                    .name("search".into())
                    .stack_size(SEARCH_THREAD_STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        shared.search_thread(ctx, root, seed, opts.stop);
                        watcher.unpark();
                    });
                if let Err(e) = spawned {
                    *shared.error.lock() =
                        Some(EvalError(format!("cannot start a search thread: {e}")));
                    finished.store(true, Ordering::Release);
                }
            }
            // This thread watches the clock and serves the callback.
            let period = opts.callback_period.unwrap_or(Duration::from_millis(100));
            // A time too long to add to a clock reading (an analysis query
            // that asked for its first report only) is never.
            let after = |from: Instant, wait: Duration| {
                from.checked_add(wait)
                    .unwrap_or(from + Duration::from_secs(1_000_000_000))
            };
            let mut next_callback = after(start, opts.first_callback_after.unwrap_or(period));
            let time_check_period = Duration::from_millis(100);
            let mut next_time_check = Instant::now() + time_check_period;
            while !stopped() {
                let now = Instant::now();
                if opts.time_limit.is_some() && now >= next_time_check {
                    deadline = deadline_now((now - start).as_secs_f64());
                    next_time_check = now + time_check_period;
                }
                // As KataGo, a time limit cannot stop a search before it
                // has a tree to answer from (two playouts).
                if now >= deadline && done.load(Ordering::Acquire) >= 2 {
                    finished.store(true, Ordering::Release);
                    break;
                }
                if let Some(cb) = opts.callback {
                    if now >= next_callback {
                        cb(&view);
                        next_callback = after(now, period);
                    }
                }
                // Wake at least every 5 ms to see an outside stop flag (and
                // the playouts a time limit waits for).
                let mut wake = if deadline > now {
                    deadline.min(now + Duration::from_millis(5))
                } else {
                    now + Duration::from_millis(1)
                };
                if opts.callback.is_some() {
                    wake = wake.min(next_callback);
                }
                std::thread::park_timeout(wake.saturating_duration_since(Instant::now()));
            }
        });
        self.record_eval_cache();
        let playouts = shared.done.load(Ordering::Acquire);
        if let Some(e) = shared.error.into_inner() {
            return Err(SearchError::Eval(e));
        }
        self.last_stats = SearchStats {
            playouts,
            root_visits: self.root.visits(),
            seconds: start.elapsed().as_secs_f64(),
            memory_capped: tree_room < asked && playouts >= budget,
        };
        self.time_carried_over += self.last_stats.seconds;
        Ok(self.last_stats)
    }
}
