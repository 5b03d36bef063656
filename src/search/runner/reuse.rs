//! Tree (or graph) reuse between searches: playing a move at the root,
//! dropping root children a search will not use, and what goes with them
//! (the subtree bias table's shares, graph search's sweep); and the
//! recomputation of every node when the utility changes.

use std::collections::HashSet;
use std::sync::Arc;

use super::super::eval::{PositionEvaluator, SearchState};
use super::super::playout::{Ctx, Scratch};
use super::super::tree::Node;
use super::Search;
use crate::game::Move;

impl<S: SearchState, E: PositionEvaluator<S>> Search<S, E> {
    /// Plays `mv` at the root, keeping the subtree below it. Returns false
    /// (and changes nothing) if the move is illegal.
    pub fn make_move(&mut self, mv: Move) -> bool {
        if !self.root_state.is_legal(mv) {
            return false;
        }
        let old = self.root.clone();
        // The halving was for the old root.
        self.gumbel = None;
        // The old root's children stay alive until the sweep below has
        // seen every node they held (graph search frees bias shares there).
        let children = old.take_children();
        let mut next = None;
        for c in &children {
            if c.mv == mv && next.is_none() {
                next = Some(c.node.clone());
            } else if self.table.is_none() {
                self.free_bias(&c.node);
            }
        }
        let old_visits = old.visits();
        let kept_visits = next.as_ref().map_or(0, |n| n.visits());
        self.root_state.play(mv);
        let pla = self.root_state.next_player();
        self.time_carried_over = if old_visits > 0 && kept_visits > 0 {
            let proportion = (kept_visits as f64 / old_visits as f64).min(1.0);
            self.time_carried_over * proportion * self.params.tree_reuse_carry_over_time_factor
        } else {
            0.0
        };
        self.root = match next {
            // A root must be searchable even if the game is over there.
            Some(n)
                if n.next_pla == pla
                    && (n.force_non_terminal || self.root_state.outcome().is_none()) =>
            {
                // As KataGo's root, a copy of the child made without its
                // subtree bias entry: the child's share leaves the table
                // (as for a deleted node) and the root takes no bias.
                self.free_bias_of(&n);
                n
            }
            Some(n) => {
                if self.table.is_none() {
                    self.free_bias(&n);
                }
                self.time_carried_over = 0.0;
                Arc::new(Node::new(pla, true))
            }
            None => Arc::new(Node::new(pla, true)),
        };
        self.sweep_table();
        drop(children);
        if let Some(b) = &self.bias {
            b.clear_unused();
        }
        true
    }

    /// Drops root children that root symmetry pruning or
    /// `rootPruneUselessMoves` does not search (kept from an earlier search
    /// through tree reuse), as KataGo filters the root's children when a
    /// search begins; the root's values are recomputed from what is left
    /// when the search starts.
    pub(super) fn drop_duplicate_root_children(&mut self) {
        if self.root_symmetry.symmetries().len() <= 1 && self.root_pruned.is_empty() {
            return;
        }
        let (xs, ys) = (self.root_state.x_size(), self.root_state.y_size());
        let pruned = |mv: Move| {
            self.root_pruned
                .get(mv.policy_index(xs, ys))
                .copied()
                .unwrap_or(false)
        };
        let dropped: Vec<Arc<Node>> = {
            let mut children = self.root.children_mut();
            let (kept, dropped): (Vec<_>, Vec<_>) = std::mem::take(&mut *children)
                .into_iter()
                .partition(|c| !self.root_symmetry.is_duplicate_move(c.mv) && !pruned(c.mv));
            *children = kept;
            dropped.into_iter().map(|c| c.node).collect()
        };
        if self.table.is_some() {
            // Held through the sweep, which frees their bias shares.
            self.sweep_table();
            drop(dropped);
            return;
        }
        for node in &dropped {
            self.free_bias(node);
        }
    }

    /// Graph search: forgets the nodes the root no longer reaches (and
    /// takes their share out of the subtree bias table, as
    /// [`Search::free_bias`] does for a tree).
    fn sweep_table(&self) {
        if let Some(table) = &self.table {
            table.sweep(&self.root, |n| self.free_bias_of(n));
        }
    }

    /// Removes the `subtreeValueBiasFreeProp` share of a dropped subtree's
    /// contributions from the bias table.
    fn free_bias(&self, node: &Node) {
        if self.bias.is_none() {
            return;
        }
        let mut stack = vec![];
        self.free_bias_of(node);
        stack.extend(node.children().iter().map(|c| c.node.clone()));
        while let Some(n) = stack.pop() {
            self.free_bias_of(&n);
            stack.extend(n.children().iter().map(|c| c.node.clone()));
        }
    }

    /// Takes one node's `subtreeValueBiasFreeProp` share out of the bias
    /// table.
    fn free_bias_of(&self, n: &Node) {
        let prop = self.params.subtree_value_bias_free_prop;
        let mut b = n.bias.lock();
        if let Some(e) = b.entry.take() {
            e.add(-b.last_delta_sum * prop, -b.last_weight * prop);
        }
    }
}

/// Recomputes every node bottom-up under the current utility (after tree
/// reuse, when the dynamic score centre has moved).
pub(super) fn recompute_tree<S: SearchState, E: PositionEvaluator<S>>(
    ctx: &Ctx<'_, S, E>,
    root: &Node,
    is_root: bool,
) {
    let mut scratch = Scratch::default();
    // Each node once, children first: a graph's shared nodes are reached
    // from several parents, and a cycle would never end.
    fn go<S: SearchState, E: PositionEvaluator<S>>(
        ctx: &Ctx<'_, S, E>,
        n: &Node,
        is_root: bool,
        scratch: &mut Scratch,
        seen: &mut HashSet<*const Node>,
    ) {
        if !seen.insert(n as *const Node) {
            return;
        }
        let kids: Vec<Arc<Node>> = n.children().iter().map(|c| c.node.clone()).collect();
        for k in &kids {
            go(ctx, k, false, scratch, seen);
        }
        if kids.is_empty() {
            ctx.recompute_leaf_utility(n, is_root);
        } else if n.nn().is_some() {
            ctx.recompute(n, is_root, 0, scratch);
        }
    }
    go(ctx, root, is_root, &mut scratch, &mut HashSet::new());
}
