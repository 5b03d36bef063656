//! Gumbel root search (the engine's own `gumbelRootSearch`; KataGo has
//! none): the root's visits go by sequential halving over a few
//! considered moves instead of by PUCT, and the move played is the best
//! of the last ones left by prior plus a transformed completed Q value.
//! This is the root rule of Gumbel MuZero (Danihelka, Guez, Schrittwieser
//! and Silver, "Policy improvement by planning with Gumbel", ICLR 2022),
//! with the schedule and the value transform of DeepMind's `mctx`
//! (`get_sequence_of_considered_visits`, `qtransform_completed_by_mix_value`,
//! `score_considered`). Below the root the search stays KataGo's PUCT.
//!
//! It needs a visit budget known when the search starts (`maxVisits` or
//! `maxPlayouts`): a search limited by time only keeps PUCT at the root.
//! With `gumbelNoiseScale` 0 (the default, for play) the considered moves
//! are the top of the policy and the choice is deterministic; 1 gives the
//! paper's Gumbel-top-k sampling (self-play's exploration).

use rand::Rng;

use super::params::SearchParams;
use super::tree::{Child, Node, NodeValues};
use crate::game::{Move, Player};

/// A visit budget above this is no budget: the search is limited by time
/// (the first halving phase would never end).
const MAX_BUDGET: i64 = 100_000_000;

/// mctx's `get_sequence_of_considered_visits(m, n)[k]`: the visit count
/// (in this search) a considered move must have for the `k`-th playout
/// of `n` to go to it, with `m` moves considered. Each of the
/// `ceil(log2 m)` phases gives every move left `n / (phases * left)`
/// visits (at least one), then keeps the better half (at least two).
pub(crate) fn considered_visits(m: usize, n: i64, k: i64) -> i64 {
    if m <= 1 {
        return k;
    }
    let phases = (m as f64).log2().ceil() as i64;
    let (mut k, mut visits, mut left) = (k, 0i64, m as i64);
    loop {
        let extra = (n / (phases * left)).max(1);
        let block = extra * left;
        if k < block {
            return visits + k / left;
        }
        k -= block;
        visits += extra;
        left = (left / 2).max(2);
    }
}

/// One move the root considers.
#[derive(Debug, Clone, Copy)]
struct Considered {
    mv: Move,
    /// Its policy at the root.
    prior: f64,
    /// Gumbel noise (times `gumbelNoiseScale`) plus the log of its prior.
    base: f64,
    /// Its edge visits when the search started (a reused tree's).
    start_visits: i64,
}

/// What the search knows of one considered move now.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct MoveStats {
    /// Its edge visits in all (a reused tree's included).
    pub visits: i64,
    /// Playouts below it now (other threads').
    pub in_flight: i64,
    /// Its utility for the root player, if it has been visited.
    pub utility: Option<f64>,
}

/// The root's sequential halving for one search.
#[derive(Debug, Clone)]
pub(crate) struct GumbelRoot {
    /// The root node this search's halving is for (its address): a view
    /// of a later root does not use it.
    root: usize,
    /// The playouts this search may do.
    budget: i64,
    moves: Vec<Considered>,
    /// mctx's `maxvisit_init` (50) and `value_scale` (0.1).
    c_visit: f64,
    c_scale: f64,
    /// How many visits a race between search threads can add to one move
    /// beyond the schedule (threads - 1): the move played is chosen among
    /// the moves within this many visits of the most visited, so that a
    /// race in the last phase does not drop the better of its moves.
    race_slack: i64,
}

impl GumbelRoot {
    /// The halving for a search of `budget` playouts from `root`, whose
    /// (noised) policy is `policy`, considering the `gumbelConsideredMoves`
    /// legal moves (`legal(policy index)`) with the highest Gumbel noise
    /// plus log prior. `None` when the parameters leave it off, the budget
    /// is not a visit budget, or no move is legal.
    pub(crate) fn new<R: Rng>(
        params: &SearchParams,
        root: &Node,
        policy: &[f32],
        (x_size, y_size): (usize, usize),
        legal: impl Fn(usize) -> bool,
        budget: i64,
        rng: &mut R,
    ) -> Option<GumbelRoot> {
        if !params.gumbel_root_search || budget > MAX_BUDGET {
            return None;
        }
        let children = root.children();
        let start_visits = |mv: Move| {
            children
                .iter()
                .find(|c| c.mv == mv)
                .map_or(0, Child::edge_visits)
        };
        let mut moves: Vec<Considered> = policy
            .iter()
            .enumerate()
            .filter(|&(i, &p)| p >= 0.0 && legal(i))
            .map(|(i, &p)| {
                let mv = Move::from_policy_index(i, x_size, y_size);
                let noise = if params.gumbel_noise_scale > 0.0 {
                    // Gumbel(0, 1) by inversion; `gen` is in [0, 1).
                    let u: f64 = rng.gen::<f64>().max(1e-300);
                    -(-u.ln()).ln() * params.gumbel_noise_scale
                } else {
                    0.0
                };
                let prior = f64::from(p);
                Considered {
                    mv,
                    prior,
                    base: noise + prior.max(1e-30).ln(),
                    start_visits: start_visits(mv),
                }
            })
            .collect();
        moves.sort_by(|a, b| b.base.total_cmp(&a.base));
        moves.truncate(params.gumbel_considered_moves.max(1) as usize);
        (!moves.is_empty()).then_some(GumbelRoot {
            root: root as *const Node as usize,
            budget,
            moves,
            c_visit: params.gumbel_c_visit,
            c_scale: params.gumbel_c_scale,
            race_slack: i64::from(params.num_threads.max(1) - 1),
        })
    }

    /// Whether this halving is for `root`.
    pub(crate) fn is_for(&self, root: &Node) -> bool {
        self.root == root as *const Node as usize
    }

    /// The considered moves' stats into `out` (in their order) from the
    /// root's `children`; `utility` is a child's utility for White (with
    /// the root's ending bonus).
    pub(crate) fn stats(
        &self,
        children: &[Child],
        root_pla: Player,
        utility: impl Fn(Move, &NodeValues) -> f64,
        out: &mut Vec<MoveStats>,
    ) {
        let sign = if root_pla == Player::White { 1.0 } else { -1.0 };
        out.clear();
        out.extend(self.moves.iter().map(|m| {
            children
                .iter()
                .find(|c| c.mv == m.mv)
                .map_or_else(MoveStats::default, |c| {
                    let v = c.node.values();
                    let visits = c.edge_visits();
                    MoveStats {
                        visits,
                        in_flight: i64::from(
                            c.node
                                .virtual_losses
                                .load(std::sync::atomic::Ordering::Acquire),
                        ),
                        utility: (v.visits > 0 && v.weight_sum > 0.0)
                            .then(|| sign * utility(c.mv, &v)),
                    }
                })
        }));
    }

    /// The move the next playout takes: of the moves whose visits in this
    /// search (in flight included) equal the schedule's count for this
    /// playout, the best by score. When races between threads leave none
    /// there, the moves closest below that count (the phase's survivors
    /// that a race left behind, not the moves halved away long before);
    /// when every move is above it, the best of the least visited.
    pub(crate) fn select(&self, stats: &[MoveStats], root_utility: f64) -> Move {
        let count =
            |i: usize| (stats[i].visits - self.moves[i].start_visits).max(0) + stats[i].in_flight;
        let playout: i64 = (0..self.moves.len()).map(count).sum();
        let target = considered_visits(self.moves.len(), self.budget, playout);
        let closest_below = (0..self.moves.len())
            .map(count)
            .filter(|&c| c <= target)
            .max();
        let fewest = (0..self.moves.len()).map(count).min().unwrap_or(0);
        let wanted = closest_below.unwrap_or(fewest);
        let i = self.best_by_score(stats, root_utility, |i| count(i) == wanted);
        self.moves[i].mv
    }

    /// The move to play: the best by score of the most visited in this
    /// search (the last phase's). With several threads "most visited"
    /// allows `race_slack` visits: a thread that raced into the last phase's
    /// other move must not exclude the better one (mctx has one thread).
    pub(crate) fn final_choice(&self, stats: &[MoveStats], root_utility: f64) -> Move {
        let count = |i: usize| (stats[i].visits - self.moves[i].start_visits).max(0);
        let most = (0..self.moves.len()).map(count).max().unwrap_or(0);
        let i = self.best_by_score(stats, root_utility, |i| count(i) >= most - self.race_slack);
        self.moves[i].mv
    }

    /// The index (into `moves`, never empty) with the highest `base +
    /// sigma(completed Q)` among those `eligible` (the first on ties; 0 if
    /// none is).
    fn best_by_score(
        &self,
        stats: &[MoveStats],
        root_utility: f64,
        eligible: impl Fn(usize) -> bool,
    ) -> usize {
        let q = Completed::of(&self.moves, stats, root_utility);
        let max_visits = stats.iter().map(|s| s.visits).max().unwrap_or(0);
        let sigma = (self.c_visit + max_visits as f64) * self.c_scale;
        let mut best = (0, f64::NEG_INFINITY);
        for i in (0..self.moves.len()).filter(|&i| eligible(i)) {
            let score = self.moves[i].base + sigma * q.rescaled(stats[i].utility);
            if score > best.1 {
                best = (i, score);
            }
        }
        best.0
    }
}

/// mctx's completed Q values, min-max rescaled: a visited move's own
/// utility, an unvisited one's the mix of the root's net utility with the
/// prior-weighted mean of the visited ones (`_compute_mixed_value`).
struct Completed {
    mixed: f64,
    min: f64,
    max: f64,
}

impl Completed {
    fn of(moves: &[Considered], stats: &[MoveStats], root_utility: f64) -> Completed {
        let (mut visits, mut prior, mut weighted) = (0i64, 0.0, 0.0);
        for (m, s) in moves.iter().zip(stats) {
            if let Some(u) = s.utility {
                visits += s.visits;
                prior += m.prior.max(f64::MIN_POSITIVE);
                weighted += m.prior.max(f64::MIN_POSITIVE) * u;
            }
        }
        let mixed = if prior > 0.0 {
            (root_utility + visits as f64 * weighted / prior) / (visits as f64 + 1.0)
        } else {
            root_utility
        };
        let (mut min, mut max) = (mixed, mixed);
        for u in stats.iter().filter_map(|s| s.utility) {
            (min, max) = (min.min(u), max.max(u));
        }
        Completed { mixed, min, max }
    }

    /// A move's completed Q in [0, 1].
    fn rescaled(&self, utility: Option<f64>) -> f64 {
        (utility.unwrap_or(self.mixed) - self.min) / (self.max - self.min).max(1e-8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Loc;

    /// mctx's sequence, written out as its Python does it.
    fn mctx_sequence(m: usize, n: i64) -> Vec<i64> {
        if m <= 1 {
            return (0..n).collect();
        }
        let log2max = (m as f64).log2().ceil() as i64;
        let mut seq = Vec::new();
        let mut visits = vec![0i64; m];
        let mut considered = m;
        while (seq.len() as i64) < n {
            let extra = (n / (log2max * considered as i64)).max(1);
            for _ in 0..extra {
                seq.extend_from_slice(&visits[..considered]);
                visits[..considered].iter_mut().for_each(|v| *v += 1);
            }
            considered = (considered / 2).max(2);
        }
        seq.truncate(n as usize);
        seq
    }

    #[test]
    fn the_schedule_is_mctxs() {
        for m in [1, 2, 3, 4, 7, 16, 32] {
            for n in [1, 2, 5, 16, 50, 100, 400] {
                let ours: Vec<i64> = (0..n).map(|k| considered_visits(m, n, k)).collect();
                assert_eq!(ours, mctx_sequence(m, n), "m {m}, n {n}");
            }
        }
        // 16 moves, 100 playouts: 1 each, then 8 get 3 more, 4 get 6, 2 get 12.
        let s: Vec<i64> = (0..100).map(|k| considered_visits(16, 100, k)).collect();
        assert_eq!(&s[..16], &[0; 16]);
        assert_eq!(&s[16..24], &[1; 8]);
        assert_eq!(&s[40..44], &[4; 4]);
        assert_eq!(&s[64..66], &[10, 10]);
    }

    fn root(priors: &[f64]) -> GumbelRoot {
        GumbelRoot {
            root: 0,
            budget: 12,
            moves: priors
                .iter()
                .enumerate()
                .map(|(i, &p)| Considered {
                    mv: at(i),
                    prior: p,
                    base: p.ln(),
                    start_visits: 0,
                })
                .collect(),
            c_visit: 50.0,
            c_scale: 0.1,
            race_slack: 0,
        }
    }

    /// The i-th considered move of [`root`].
    fn at(i: usize) -> Move {
        Move::Play(Loc::from_xy(i, 0, 9))
    }

    fn visited(visits: i64, utility: f64) -> MoveStats {
        MoveStats {
            visits,
            in_flight: 0,
            utility: Some(utility),
        }
    }

    #[test]
    fn halving_visits_each_move_then_keeps_the_better_half() {
        let g = root(&[0.4, 0.3, 0.2, 0.1]);
        let none = MoveStats::default();
        // First playout: every move is at 0 visits, the highest prior goes.
        assert_eq!(g.select(&[none; 4], 0.0), at(0));
        // The first is done: the next unvisited by prior.
        assert_eq!(g.select(&[visited(1, 0.0), none, none, none], 0.0), at(1));
        // All visited once (4 of 12; phase 2 gives the better 2 of them 4
        // each): the low-prior move with a far better value goes first.
        let stats = [
            visited(1, -0.5),
            visited(1, -0.5),
            visited(1, -0.5),
            visited(1, 0.9),
        ];
        assert_eq!(g.select(&stats, 0.0), at(3));
        // It has 2 now: the best of the others at 1 is next.
        let stats = [
            visited(1, -0.5),
            visited(1, -0.6),
            visited(1, -0.5),
            visited(2, 0.9),
        ];
        assert_eq!(g.select(&stats, 0.0), at(0));
    }

    #[test]
    fn in_flight_playouts_count_towards_the_schedule() {
        let g = root(&[0.4, 0.3, 0.2, 0.1]);
        let busy = MoveStats {
            visits: 0,
            in_flight: 1,
            utility: None,
        };
        let none = MoveStats::default();
        // Another thread is below the first move: the second goes.
        assert_eq!(g.select(&[busy, none, none, none], 0.0), at(1));
    }

    #[test]
    fn a_survivor_behind_the_schedule_goes_before_the_moves_halved_away() {
        // Budget 12 over 4 moves: phase 1 gives each 1 visit, phase 2
        // gives the 2 left 3 more (4 in all). A race left the second
        // survivor one behind while the first ran ahead: the playout goes
        // to the survivor behind, not to the moves halved away at 1 visit.
        let g = root(&[0.1, 0.2, 0.3, 0.4]);
        let stats = [
            visited(4, 0.9),
            visited(2, 0.8),
            visited(1, 1.0),
            visited(1, 1.0),
        ];
        assert_eq!(g.select(&stats, 0.0), at(1));
    }

    #[test]
    fn a_reused_trees_visits_do_not_count_as_this_searchs() {
        let mut g = root(&[0.5, 0.5]);
        g.moves[0].start_visits = 30;
        // 30 old visits on the first, none in this search: the schedule's
        // first playout is either's; by score the better value goes.
        let stats = [visited(30, -0.2), MoveStats::default()];
        assert_eq!(g.select(&stats, 0.5), at(1));
    }

    #[test]
    fn the_move_played_is_the_best_scored_of_the_most_visited() {
        let g = root(&[0.6, 0.3, 0.1]);
        // The two most visited: the second's value beats the first's prior.
        let stats = [visited(5, 0.1), visited(5, 0.4), visited(2, 0.9)];
        assert_eq!(g.final_choice(&stats, 0.0), at(1));
        // With a tiny value scale the prior decides.
        let mut prior_only = g.clone();
        prior_only.c_scale = 1e-9;
        assert_eq!(prior_only.final_choice(&stats, 0.0), at(0));
    }

    #[test]
    fn a_race_between_threads_does_not_drop_the_better_of_the_last_moves() {
        // Two threads: a race gave the first move one visit more than the
        // second, whose value is better (seen with 4 threads in a search
        // test, 112 against 113 visits).
        let mut g = root(&[0.5, 0.4, 0.1]);
        let stats = [visited(113, 0.1), visited(112, 0.9), visited(20, 1.0)];
        assert_eq!(g.final_choice(&stats, 0.0), at(0));
        g.race_slack = 1;
        assert_eq!(g.final_choice(&stats, 0.0), at(1));
    }

    #[test]
    fn completed_q_mixes_the_net_value_with_the_visited_moves() {
        let moves = root(&[0.5, 0.25, 0.25]).moves;
        let stats = [visited(3, 1.0), visited(1, 0.0), MoveStats::default()];
        let q = Completed::of(&moves, &stats, 0.2);
        // Prior-weighted mean of the visited: (0.5 * 1 + 0.25 * 0) / 0.75;
        // mixed with the net's 0.2 over 4 visits + 1.
        let expected = (0.2 + 4.0 * (0.5 / 0.75)) / 5.0;
        assert!((q.mixed - expected).abs() < 1e-12, "{}", q.mixed);
        assert_eq!(q.rescaled(Some(1.0)), 1.0);
        assert_eq!(q.rescaled(Some(0.0)), 0.0);
        assert!((q.rescaled(None) - expected).abs() < 1e-12);
    }
}
