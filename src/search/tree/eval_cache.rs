//! KataGo's eval cache (`useEvalCache`, `search/evalcache.cpp`): after each
//! search with graph search, every node with `evalCacheMinVisits` visits
//! or more leaves its values, and its well-searched children's, under its
//! graph hash. A later search that reaches the same position (another move
//! order, a later turn, an analysis of a variation the user walked down)
//! pulls a new node's values towards the cached ones until its own search
//! outweighs them, and tries the cached children first where they look
//! good ("if you help KataGo solve a blind spot by playing down a
//! variation, it can remember it", KataGo's `gtp_example.cfg`).
//!
//! Entries are replaced whole, never changed in place, so that readers hold
//! an [`Arc`] without locks. The key folds in a hash of all the search
//! parameters ([`params_key`]): values found under other settings (another
//! analysis query's overrides) stay apart.

use std::collections::HashMap;
use std::sync::Arc;

use md5::{Digest, Md5};
use parking_lot::Mutex;

use super::super::params::SearchParams;
use super::super::utility::UtilityFn;
use super::{all_nodes, Child, Node, NodeValues};
use crate::game::{Hash128, Move, Player};

/// A child's values as the cache remembers them, to rank it before its
/// first visit in a later search (KataGo's `FirstExploreEval`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FirstExploreEval {
    /// White's win minus loss.
    pub win_loss: f32,
    /// White's score mean.
    pub score_mean: f32,
    /// The child's visits when recorded.
    pub cache_weight: f32,
}

/// What the cache holds for one position (KataGo's `EvalCacheEntry`);
/// all values white's view, in `f32` as KataGo's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EvalCacheEntry {
    pub win_loss: f32,
    pub no_result: f32,
    pub score_mean: f32,
    pub lead: f32,
    /// The node's visits when its values were recorded; 0 while only
    /// children were.
    pub cache_weight: f32,
    /// The children with `evalCacheMinVisits` visits or more, by move.
    pub first_explore: Vec<(Move, FirstExploreEval)>,
}

impl EvalCacheEntry {
    /// The remembered child for `mv`, made empty if there is none.
    fn first_explore_mut(&mut self, mv: Move) -> &mut FirstExploreEval {
        let i = match self.first_explore.iter().position(|(m, _)| *m == mv) {
            Some(i) => i,
            None => {
                self.first_explore.push((mv, FirstExploreEval::default()));
                self.first_explore.len() - 1
            }
        };
        &mut self.first_explore[i].1
    }

    /// Pulls a node's averages `v` (white's view) towards this entry, by
    /// a share that falls as the node's own visits `node_visits` grow past
    /// the entry's weight (KataGo's `adjustEvalsFromCacheHelper`). With
    /// `utility`, the utility is pulled too (a node's recomputed average);
    /// without, the caller derives it from the pulled values (a leaf).
    pub fn adjust(
        &self,
        node_visits: i64,
        min_visits: i64,
        v: &mut NodeValues,
        utility: Option<&UtilityFn>,
    ) {
        let mut cache_weight = self.cache_weight as f64;
        // KataGo squashes heavy entries: their children have entries of
        // their own, which the node's children apply already.
        if cache_weight > min_visits as f64 {
            cache_weight = (min_visits as f64 * cache_weight).sqrt();
        }
        let ratio = node_visits as f64 / cache_weight;
        let frac = 1.0 / (1.0 + 3.0 * ratio * (1.0 + 2.0 * ratio * ratio));
        let (wl, nr, sm, lead) = (
            self.win_loss as f64,
            self.no_result as f64,
            self.score_mean as f64,
            self.lead as f64,
        );
        v.win_loss += frac * (wl - v.win_loss);
        v.no_result += frac * (nr - v.no_result);
        let old_score_mean = v.score_mean;
        v.score_mean += frac * (sm - v.score_mean);
        v.score_mean_sq = (v.score_mean_sq - old_score_mean * old_score_mean
            + v.score_mean * v.score_mean)
            .max(0.0);
        v.lead += frac * (lead - v.lead);
        if let Some(u) = utility {
            let variance = v.score_mean_sq - v.score_mean * v.score_mean;
            let cached = u.result(wl, nr) + u.score(sm, (variance + sm * sm).max(0.0));
            v.utility += frac * (cached - v.utility);
        }
    }
}

/// The cache: entries by key ([`params_key`] ^ graph hash), in shards
/// with a lock each (KataGo's `EvalCacheTable`). Lives across searches,
/// until `clear_cache`; analysis threads share one.
pub struct EvalCache {
    shards: Vec<Mutex<HashMap<Hash128, Arc<EvalCacheEntry>>>>,
}

impl EvalCache {
    /// An empty cache of `shards` shards (at least one).
    pub fn new(shards: usize) -> EvalCache {
        EvalCache {
            shards: (0..shards.max(1))
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
        }
    }

    /// The cache the parameters ask for: with `useEvalCache` (and graph
    /// search, without which KataGo keeps none), one sharded as KataGo's,
    /// by `subtreeValueBiasTableNumShards`.
    pub fn for_params(params: &SearchParams) -> Option<Arc<EvalCache>> {
        (params.use_eval_cache && params.use_graph_search).then(|| {
            let shards = params.subtree_value_bias_table_num_shards.clamp(1, 1 << 16);
            Arc::new(EvalCache::new(shards as usize))
        })
    }

    fn shard(&self, key: Hash128) -> &Mutex<HashMap<Hash128, Arc<EvalCacheEntry>>> {
        &self.shards[(key.lo() % self.shards.len() as u64) as usize]
    }

    /// The entry under `key`, if any.
    pub fn find(&self, key: Hash128) -> Option<Arc<EvalCacheEntry>> {
        self.shard(key).lock().get(&key).cloned()
    }

    /// Forgets everything (`clear_cache`).
    pub fn clear(&self) {
        for shard in &self.shards {
            shard.lock().clear();
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records `node` under `key` (KataGo's `EvalCacheTable::update`): its
    /// children with `min_visits` visits or more as first-explore values,
    /// kept where they have more visits than what is there; and the node's
    /// own averages, unless an entry with far more visits is there. At the
    /// root, whose passes the search treats apart, the averages are left
    /// out where a pass is near the best move or has an eighth of the
    /// visits.
    pub fn update(&self, key: Hash128, node: &Node, min_visits: i64, is_root: bool) {
        let old = self.find(key);
        let v = node.values();
        let new_weight = v.visits as f32;
        if old
            .as_ref()
            .is_some_and(|o| new_weight < o.cache_weight * 0.75)
        {
            return;
        }
        let mut entry = old.map(|o| (*o).clone()).unwrap_or_default();
        let children = node.children();
        for c in children.iter() {
            let cv = c.node.values();
            if cv.visits >= min_visits {
                let weight = cv.visits as f32;
                let slot = entry.first_explore_mut(c.mv);
                if weight >= slot.cache_weight {
                    *slot = FirstExploreEval {
                        win_loss: cv.win_loss as f32,
                        score_mean: cv.score_mean as f32,
                        cache_weight: weight,
                    };
                }
            }
        }
        if !is_root || !pass_dominates_root(node.next_pla, &children) {
            entry.cache_weight = new_weight;
            entry.win_loss = v.win_loss as f32;
            entry.no_result = v.no_result as f32;
            entry.score_mean = v.score_mean as f32;
            entry.lead = v.lead as f32;
        }
        self.shard(key).lock().insert(key, Arc::new(entry));
    }
}

/// KataGo's test at the root: a pass has an eighth of the edge visits or
/// more, or its utility is within 0.05 of the best child's (true as well
/// when the root has no children).
fn pass_dominates_root(pla: Player, children: &[Child]) -> bool {
    let (mut total, mut pass) = (0i64, 0i64);
    let (mut max_utility, mut pass_utility) = (-1e50f64, -1e50f64);
    for c in children {
        let edge = c.edge_visits();
        let u = c.node.values().utility;
        let own = if pla == Player::White { u } else { -u };
        total += edge;
        max_utility = max_utility.max(own);
        if c.mv == Move::Pass {
            pass += edge;
            pass_utility = own;
        }
    }
    pass * 8 >= total || pass_utility + 0.05 >= max_utility
}

/// The parameters that only say how long to search ([`params_key`] leaves
/// them out).
const LIMIT_KEYS: &[&str] = &[
    "numSearchThreads",
    "minPlayoutsPerThread",
    "maxVisits",
    "maxPlayouts",
    "maxTime",
    "maxVisitsPondering",
    "maxPlayoutsPondering",
    "maxTimePondering",
    "lagBuffer",
    "searchFactorAfterOnePass",
    "searchFactorAfterTwoPass",
    "treeReuseCarryOverTimeFactor",
    "overallocateTimeFactor",
    "midgameTimeFactor",
    "midgameTurnPeakTime",
    "endgameTurnTimeDecay",
    "obviousMovesTimeFactor",
    "obviousMovesPolicyEntropyTolerance",
    "obviousMovesPolicySurpriseTolerance",
];

/// A hash of the search parameters, folded into the cache's keys (KataGo's
/// `evalCacheParamsHash` of `SearchParams::getHash`): values searched under
/// other settings are not reused. Unlike KataGo's, it leaves out the
/// limits and time settings (`LIMIT_KEYS`): how long a search ran is in
/// an entry's weight already, and analysis queries that differ only in
/// `maxVisits` (KaTrain's quick and deep passes) then share what they found.
pub fn params_key(params: &SearchParams) -> Hash128 {
    // The parameters are plain numbers, flags and strings: they serialize,
    // into a map with sorted keys.
    let mut value = serde_json::to_value(params).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        for k in LIMIT_KEYS {
            map.remove(*k);
        }
    }
    let text = value.to_string();
    let digest = Md5::digest(text.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest);
    Hash128(u128::from_le_bytes(bytes))
}

/// Records every node the root reaches with `min_visits` visits or more
/// (KataGo's `recursivelyRecordEvalCache`), each once. A
/// node searched past a game-ending pass is left out (its values are not
/// those of its position), and so is the root where `root_recorded` is
/// false (its game is over).
pub(crate) fn record_graph(
    cache: &EvalCache,
    params_key: Hash128,
    root: &Arc<Node>,
    min_visits: i64,
    root_recorded: bool,
) {
    let root_ptr = Arc::as_ptr(root);
    for node in all_nodes(root) {
        let is_root = Arc::as_ptr(&node) == root_ptr;
        let skip = if is_root {
            !root_recorded
        } else {
            node.force_non_terminal
        };
        if !skip && node.visits() >= min_visits {
            cache.update(params_key ^ node.graph_hash, &node, min_visits, is_root);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node_with(pla: Player, visits: i64, utility: f64, win_loss: f64) -> Arc<Node> {
        let n = Node::new(pla, false);
        let v = NodeValues {
            weight_sum: visits as f64,
            weight_sq_sum: visits as f64,
            win_loss,
            score_mean: 2.0 * win_loss,
            score_mean_sq: 4.0 * win_loss * win_loss + 1.0,
            lead: 1.5 * win_loss,
            utility,
            utility_sq: utility * utility,
            ..NodeValues::default()
        };
        n.store_values(&v, visits);
        Arc::new(n)
    }

    fn root_with(children: Vec<(Move, i64, f64)>) -> Arc<Node> {
        let root = node_with(Player::Black, 1000, 0.1, 0.1);
        let mut cs = root.children_mut();
        for (mv, visits, utility) in children {
            let child = node_with(Player::White, visits, utility, utility);
            cs.push(Child::with_edge_visits(mv, child, visits));
        }
        drop(cs);
        root
    }

    /// KataGo's adjustment: an entry of weight 100 at a node with 1 visit
    /// takes 1/(1 + 3·0.01·(1 + 2·0.0001)) of the way; an entry of weight
    /// 400 with `evalCacheMinVisits` 100 counts as √(100·400) = 200.
    #[test]
    fn adjust_follows_katago_formula() {
        let entry = EvalCacheEntry {
            win_loss: 0.5,
            score_mean: 3.0,
            lead: 2.0,
            cache_weight: 100.0,
            ..EvalCacheEntry::default()
        };
        let mut v = NodeValues {
            score_mean_sq: 1.0,
            ..NodeValues::default()
        };
        entry.adjust(1, 100, &mut v, None);
        let frac = 1.0 / (1.0 + 3.0 * 0.01 * (1.0 + 2.0 * 0.0001));
        assert!((v.win_loss - 0.5 * frac).abs() < 1e-12);
        assert!((v.score_mean - 3.0 * frac).abs() < 1e-9);
        assert!((v.score_mean_sq - (1.0 + v.score_mean * v.score_mean)).abs() < 1e-9);
        assert!((v.lead - 2.0 * frac).abs() < 1e-9);

        let heavy = EvalCacheEntry {
            cache_weight: 400.0,
            win_loss: 1.0,
            ..EvalCacheEntry::default()
        };
        let mut v = NodeValues::default();
        heavy.adjust(200, 100, &mut v, None);
        // ratio 1: frac = 1/(1 + 3·3) = 0.1
        assert!((v.win_loss - 0.1).abs() < 1e-12, "{}", v.win_loss);
    }

    /// With a utility function the node's utility moves the same share
    /// towards the entry's utility.
    #[test]
    fn adjust_pulls_utility() {
        let p = SearchParams::defaults(crate::search::SetupFor::Gtp);
        let u = UtilityFn::new(&p, 9, 9, 0.0);
        let entry = EvalCacheEntry {
            win_loss: 1.0,
            cache_weight: 100.0,
            ..EvalCacheEntry::default()
        };
        let mut v = NodeValues::default();
        entry.adjust(100, 100, &mut v, Some(&u));
        // ratio 1: a tenth of the way to the cached utility.
        let cached = u.result(1.0, 0.0) + u.score(0.0, 0.0);
        assert!((v.utility - 0.1 * cached).abs() < 1e-12);
    }

    #[test]
    fn update_records_node_and_children_and_keeps_heavier_entries() {
        let cache = EvalCache::new(4);
        let key = Hash128(7);
        let root = root_with(vec![
            (Move::Play(crate::game::Loc(30)), 300, 0.2),
            (Move::Play(crate::game::Loc(31)), 50, 0.1),
        ]);
        cache.update(key, &root, 100, false);
        let e = cache.find(key).expect("entry");
        assert_eq!(e.cache_weight, 1000.0);
        assert!((e.win_loss - 0.1).abs() < 1e-6);
        // Only the child with 100 visits or more is remembered.
        assert_eq!(e.first_explore.len(), 1);
        assert_eq!(e.first_explore[0].1.cache_weight, 300.0);

        // A node with fewer than 3/4 of the entry's visits changes nothing.
        let light = root_with(vec![(Move::Pass, 700, 0.9)]);
        let n = node_with(Player::Black, 700, 0.5, 0.5);
        n.children_mut().push(Child::with_edge_visits(
            Move::Pass,
            light.children()[0].node.clone(),
            700,
        ));
        cache.update(key, &n, 100, false);
        assert_eq!(*cache.find(key).unwrap(), *e);
        cache.clear();
        assert!(cache.is_empty());
    }

    /// At the root a pass with an eighth of the visits, or near the best
    /// utility, keeps the root's averages out; its children still go in.
    #[test]
    fn root_with_strong_pass_records_children_only() {
        let cache = EvalCache::new(1);
        let mv = Move::Play(crate::game::Loc(30));
        // Black to move: self utility = -utility; the pass is far worse
        // for Black but has 200 of 1000 edge visits.
        let root = root_with(vec![(mv, 800, -0.5), (Move::Pass, 200, 0.5)]);
        cache.update(Hash128(1), &root, 100, true);
        let e = cache.find(Hash128(1)).unwrap();
        assert_eq!(e.cache_weight, 0.0);
        assert_eq!(e.first_explore.len(), 2);

        // A pass with few visits and a much worse utility: recorded.
        let root = root_with(vec![(mv, 980, -0.5), (Move::Pass, 20, 0.5)]);
        cache.update(Hash128(2), &root, 100, true);
        assert_eq!(cache.find(Hash128(2)).unwrap().cache_weight, 1000.0);
        // The same as a non-root node: recorded whatever the pass.
        let root = root_with(vec![(mv, 800, -0.5), (Move::Pass, 200, 0.5)]);
        cache.update(Hash128(3), &root, 100, false);
        assert_eq!(cache.find(Hash128(3)).unwrap().cache_weight, 1000.0);
    }

    #[test]
    fn params_key_differs_with_any_parameter() {
        let a = SearchParams::defaults(crate::search::SetupFor::Gtp);
        let mut b = a.clone();
        assert_eq!(params_key(&a), params_key(&b));
        b.cpuct_exploration += 0.01;
        assert_ne!(params_key(&a), params_key(&b));
        // Limits are left out.
        let mut c = a.clone();
        c.max_visits = 7;
        c.max_time = 3.0;
        c.num_threads = 5;
        assert_eq!(params_key(&a), params_key(&c));
        for k in LIMIT_KEYS {
            assert!(SearchParams::NAMES.contains(k), "{k}");
        }
    }
}
