//! Search tree nodes: statistics in atomics (read without locks while other
//! threads descend), children appended under a per-node lock, virtual
//! losses, and the KataGo-style "recompute from children" backup.

use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

use super::bias::BiasEntry;
pub mod eval_cache;

use super::explore::StatsView;
use crate::game::{Hash128, Move, Player};
use crate::nn::NnOutput;
use eval_cache::EvalCacheEntry;

/// An `f64` stored in an `AtomicU64`.
#[derive(Debug, Default)]
pub struct AtomicF64(AtomicU64);

impl AtomicF64 {
    /// Loads with acquire ordering.
    #[inline]
    pub fn load(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Acquire))
    }
    /// Stores with release ordering.
    #[inline]
    pub fn store(&self, v: f64) {
        self.0.store(v.to_bits(), Ordering::Release)
    }
}

/// A node's averages, each weighted by playout weight; all white-perspective.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NodeValues {
    pub visits: i64,
    pub weight_sum: f64,
    pub weight_sq_sum: f64,
    pub win_loss: f64,
    pub no_result: f64,
    pub score_mean: f64,
    pub score_mean_sq: f64,
    pub lead: f64,
    pub utility: f64,
    pub utility_sq: f64,
}

impl NodeValues {
    /// The view the explore formulas take.
    pub fn view(&self) -> StatsView {
        StatsView {
            visits: self.visits,
            weight_sum: self.weight_sum,
            weight_sq_sum: self.weight_sq_sum,
            utility_avg: self.utility,
            utility_sq_avg: self.utility_sq,
            score_mean_avg: self.score_mean,
            score_mean_sq_avg: self.score_mean_sq,
        }
    }
}

#[derive(Debug, Default)]
struct AtomicStats {
    visits: AtomicI64,
    weight_sum: AtomicF64,
    weight_sq_sum: AtomicF64,
    win_loss: AtomicF64,
    no_result: AtomicF64,
    score_mean: AtomicF64,
    score_mean_sq: AtomicF64,
    lead: AtomicF64,
    utility: AtomicF64,
    utility_sq: AtomicF64,
}

/// The node was never evaluated.
pub const STATE_UNEVALUATED: u8 = 0;
/// A thread is evaluating it.
pub const STATE_EVALUATING: u8 = 1;
/// It has a network output and may have children.
pub const STATE_EXPANDED: u8 = 2;

/// What a node remembers of its contribution to its subtree-bias bucket,
/// so that updates replace rather than accumulate.
#[derive(Debug, Default)]
pub struct BiasState {
    pub entry: Option<Arc<BiasEntry>>,
    pub last_delta_sum: f64,
    pub last_weight: f64,
}

/// One child edge: the move, the node it leads to, and the playouts that
/// went down this edge (KataGo's `SearchChildPointer` edge visits).
///
/// A child's own visits can exceed its edge visits: a weightless playout
/// (KataGo's `countEdgeVisit = false`: the human-policy exploration and the
/// passing hacks) adds to the child's subtree without counting for the
/// parent. The parent weighs each child by [`Child::weight`], the child's
/// weight scaled down to its edge visits, as KataGo's `getChildWeight`.
#[derive(Debug)]
pub struct Child {
    pub mv: Move,
    pub node: Arc<Node>,
    edge_visits: AtomicI64,
}

impl Child {
    /// A new edge with no playouts through it yet.
    pub fn new(mv: Move, node: Arc<Node>) -> Child {
        Child::with_edge_visits(mv, node, 0)
    }

    /// An edge with `edge_visits` playouts through it (tests, fixtures).
    pub fn with_edge_visits(mv: Move, node: Arc<Node>, edge_visits: i64) -> Child {
        Child {
            mv,
            node,
            edge_visits: AtomicI64::new(edge_visits),
        }
    }

    /// Playouts through this edge.
    #[inline]
    pub fn edge_visits(&self) -> i64 {
        self.edge_visits.load(Ordering::Acquire)
    }

    /// Counts one more playout through this edge.
    #[inline]
    pub fn add_edge_visit(&self) {
        self.edge_visits.fetch_add(1, Ordering::AcqRel);
    }

    /// One more edge visit if the edge has fewer than `child_visits`
    /// (graph search's catch-up); false if it has as many.
    pub fn try_catch_up(&self, child_visits: i64) -> bool {
        let mut edge = self.edge_visits();
        while edge < child_visits {
            match self.edge_visits.compare_exchange_weak(
                edge,
                edge + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => edge = now,
            }
        }
        false
    }

    /// The child's weight as its parent counts it: its weight scaled by
    /// edge visits / child visits (KataGo's `getChildWeight(edgeVisits)`).
    #[inline]
    pub fn weight(&self) -> f64 {
        let visits = self.node.visits();
        self.node.weight() * edge_share(self.edge_visits(), visits)
    }

    /// The child's values with its weight sums scaled to the edge (KataGo's
    /// `getChildWeight`/`getChildWeightSq` of `edgeVisits`); visits and
    /// averages are the child's own.
    pub fn edge_values(&self) -> NodeValues {
        let mut v = self.node.values();
        let share = edge_share(self.edge_visits(), v.visits);
        v.weight_sum *= share;
        v.weight_sq_sum *= share;
        v
    }
}

/// Edge visits as a share of the child's visits (KataGo's `childWeight`).
#[inline]
fn edge_share(edge_visits: i64, child_visits: i64) -> f64 {
    edge_visits as f64 / child_visits.max(1) as f64
}

/// A search tree node.
#[derive(Debug)]
pub struct Node {
    /// The player to move at this node.
    pub next_pla: Player,
    /// Evaluated as a normal position even though the game is over there
    /// (the root, and a conservative pass from the root).
    pub force_non_terminal: bool,
    /// The shape of the move that led here, for the pattern bonus table
    /// ([`super::PatternBonusTable`]); zero when there is no table or the
    /// move has no shape (a pass, a ko capture).
    pub pattern_hash: Hash128,
    /// Graph search: the position's graph hash (the eval cache's key).
    pub graph_hash: Hash128,
    /// Graph search with `useEvalCache`: what the cache held for this
    /// position when the node was made.
    pub eval_cache: Option<Arc<EvalCacheEntry>>,
    state: AtomicU8,
    nn: RwLock<Option<Arc<NnOutput>>>,
    /// The human net's output here, when the search explores by the human
    /// policy below the root (KataGo's `humanOutput`; the root's is kept
    /// by the search).
    human: OnceLock<Arc<NnOutput>>,
    children: RwLock<Vec<Child>>,
    stats: AtomicStats,
    /// Threads currently below this node.
    pub virtual_losses: AtomicI32,
    dirty: AtomicI32,
    /// Serialises stats writers; also holds the subtree-bias bookkeeping.
    pub bias: Mutex<BiasState>,
}

impl Node {
    /// A fresh, unevaluated node.
    pub fn new(next_pla: Player, force_non_terminal: bool) -> Node {
        Node {
            next_pla,
            force_non_terminal,
            pattern_hash: Hash128::ZERO,
            graph_hash: Hash128::ZERO,
            eval_cache: None,
            state: AtomicU8::new(STATE_UNEVALUATED),
            nn: RwLock::new(None),
            human: OnceLock::new(),
            children: RwLock::new(Vec::new()),
            stats: AtomicStats::default(),
            virtual_losses: AtomicI32::new(0),
            dirty: AtomicI32::new(0),
            bias: Mutex::new(BiasState::default()),
        }
    }

    /// The node with the shape hash of the move that led to it.
    pub fn with_pattern_hash(mut self, hash: Hash128) -> Node {
        self.pattern_hash = hash;
        self
    }

    /// The node of the position with graph hash `hash`, and the eval
    /// cache's entry for it, if any.
    pub fn with_graph_hash(mut self, hash: Hash128, cached: Option<Arc<EvalCacheEntry>>) -> Node {
        self.graph_hash = hash;
        self.eval_cache = cached;
        self
    }

    /// The evaluation state (`STATE_*`).
    #[inline]
    pub fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    /// Claims the node for evaluation; false if another thread has it.
    pub fn try_begin_eval(&self) -> bool {
        self.state
            .compare_exchange(
                STATE_UNEVALUATED,
                STATE_EVALUATING,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// Gives up a claimed evaluation (after an evaluator error).
    pub fn abort_eval(&self) {
        self.state.store(STATE_UNEVALUATED, Ordering::Release);
    }

    /// Publishes the evaluation and marks the node expanded.
    pub fn finish_eval(&self, nn: Arc<NnOutput>) {
        *self.nn.write() = Some(nn);
        self.state.store(STATE_EXPANDED, Ordering::Release);
    }

    /// Replaces the network output (root re-evaluation with noise or symmetries).
    pub fn replace_nn(&self, nn: Arc<NnOutput>) {
        *self.nn.write() = Some(nn);
    }

    /// The network output, if evaluated.
    #[inline]
    pub fn nn(&self) -> Option<Arc<NnOutput>> {
        self.nn.read().clone()
    }

    /// Stores the human net's output (before [`Node::finish_eval`]; the
    /// first one stays).
    pub fn set_human(&self, human: Arc<NnOutput>) {
        let _ = self.human.set(human);
    }

    /// The human net's output, if it was evaluated here.
    #[inline]
    pub fn human(&self) -> Option<&Arc<NnOutput>> {
        self.human.get()
    }

    /// Read access to the children.
    #[inline]
    pub fn children(&self) -> parking_lot::RwLockReadGuard<'_, Vec<Child>> {
        self.children.read()
    }

    /// Write access to the children (expansion).
    #[inline]
    pub fn children_mut(&self) -> parking_lot::RwLockWriteGuard<'_, Vec<Child>> {
        self.children.write()
    }

    /// Takes the children out (tree reuse).
    pub fn take_children(&self) -> Vec<Child> {
        std::mem::take(&mut *self.children.write())
    }

    /// A snapshot of the statistics (fields may be from slightly different
    /// moments while other threads write, as in KataGo).
    pub fn values(&self) -> NodeValues {
        let s = &self.stats;
        NodeValues {
            visits: s.visits.load(Ordering::Acquire),
            weight_sum: s.weight_sum.load(),
            weight_sq_sum: s.weight_sq_sum.load(),
            win_loss: s.win_loss.load(),
            no_result: s.no_result.load(),
            score_mean: s.score_mean.load(),
            score_mean_sq: s.score_mean_sq.load(),
            lead: s.lead.load(),
            utility: s.utility.load(),
            utility_sq: s.utility_sq.load(),
        }
    }

    /// Visits so far.
    #[inline]
    pub fn visits(&self) -> i64 {
        self.stats.visits.load(Ordering::Acquire)
    }

    /// Weight so far.
    #[inline]
    pub fn weight(&self) -> f64 {
        self.stats.weight_sum.load()
    }

    /// Writes new averages and adds `add_visits` visits. Callers hold `bias`.
    pub fn store_values(&self, v: &NodeValues, add_visits: i64) {
        let s = &self.stats;
        s.win_loss.store(v.win_loss);
        s.no_result.store(v.no_result);
        s.score_mean.store(v.score_mean);
        s.score_mean_sq.store(v.score_mean_sq);
        s.lead.store(v.lead);
        s.utility.store(v.utility);
        s.utility_sq.store(v.utility_sq);
        s.weight_sq_sum.store(v.weight_sq_sum);
        s.weight_sum.store(v.weight_sum);
        s.visits.fetch_add(add_visits, Ordering::AcqRel);
    }

    /// Adds one leaf sample (a terminal result or a bare evaluation),
    /// averaging it into what is there.
    pub fn add_leaf_sample(&self, sample: &NodeValues) {
        let _guard = self.bias.lock();
        let old = self.values();
        let w = sample.weight_sum;
        let nw = old.weight_sum + w;
        let mix = |a: f64, b: f64| (a * old.weight_sum + b * w) / nw;
        let v = NodeValues {
            visits: 0,
            weight_sum: nw,
            weight_sq_sum: old.weight_sq_sum + w * w,
            win_loss: mix(old.win_loss, sample.win_loss),
            no_result: mix(old.no_result, sample.no_result),
            score_mean: mix(old.score_mean, sample.score_mean),
            score_mean_sq: mix(old.score_mean_sq, sample.score_mean_sq),
            lead: mix(old.lead, sample.lead),
            utility: mix(old.utility, sample.utility),
            utility_sq: mix(old.utility_sq, sample.utility_sq),
        };
        self.store_values(&v, 1);
    }

    /// KataGo's dirty counter: the first thread to finish a playout through
    /// this node recomputes its stats, folding in visits that other threads
    /// finish meanwhile. `recompute(n)` must recompute and add `n` visits.
    pub fn update_after_playout(&self, mut recompute: impl FnMut(i64)) {
        if self.dirty.fetch_add(1, Ordering::AcqRel) > 0 {
            return;
        }
        let mut n = 1;
        loop {
            recompute(n as i64);
            let old = self.dirty.fetch_sub(n, Ordering::AcqRel);
            let left = old - n;
            if left <= 0 {
                break;
            }
            n = left;
        }
    }
}

/// Every node `root` reaches, itself included, each once (a graph's
/// shared nodes too).
pub(crate) fn all_nodes(root: &Arc<Node>) -> Vec<Arc<Node>> {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root.clone()];
    let mut out = Vec::new();
    seen.insert(Arc::as_ptr(root));
    while let Some(n) = stack.pop() {
        for c in n.children().iter() {
            if seen.insert(Arc::as_ptr(&c.node)) {
                stack.push(c.node.clone());
            }
        }
        out.push(n);
    }
    out
}
