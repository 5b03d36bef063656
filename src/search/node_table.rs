//! Graph search's node table (KataGo's `SearchNodeTable`, `useGraphSearch`):
//! every node below the root by its graph hash, so that a move order that
//! transposes into a position already searched reaches the same node. The
//! table holds weak references (a node lives while a parent holds it);
//! [`NodeTable::sweep`] drops what the root no longer reaches, breaking
//! the cycles a graph can have.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use super::tree::Node;
use crate::game::{Hash128, Player};

/// Folded into the key of a node searched past a game-ending pass (KataGo's
/// `FORCE_NON_TERMINAL_HASH`): it must not merge with the finished game.
const FORCE_NON_TERMINAL: Hash128 =
    Hash128::from_katago(0xd4e8_5b13_7a9c_62f0, 0x68b1_f3a2_0c5e_94d7);

/// The nodes of one search graph by graph hash, in shards with a lock each.
pub(crate) struct NodeTable {
    shards: Vec<Mutex<HashMap<Hash128, Weak<Node>>>>,
}

impl NodeTable {
    /// A table of `2^shards_power_of_two` shards (KataGo's
    /// `nodeTableShardsPowerOfTwo`).
    pub(crate) fn new(shards_power_of_two: u32) -> NodeTable {
        NodeTable {
            shards: (0..1usize << shards_power_of_two)
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
        }
    }

    fn shard(&self, key: Hash128) -> &Mutex<HashMap<Hash128, Weak<Node>>> {
        &self.shards[(key.lo() as usize) & (self.shards.len() - 1)]
    }

    /// The node of the position with graph hash `hash` where `next_pla` is
    /// to move: the one in the table, or `make()` stored under it. A node
    /// searched past a game-ending pass (`force_non_terminal`) has a key of
    /// its own. Should a hash ever match a node with the other player to
    /// move (a collision), the new node is made and kept out of the table.
    pub(crate) fn find_or_insert(
        &self,
        hash: Hash128,
        force_non_terminal: bool,
        next_pla: Player,
        make: impl FnOnce() -> Node,
    ) -> Arc<Node> {
        let key = if force_non_terminal {
            hash ^ FORCE_NON_TERMINAL
        } else {
            hash
        };
        let mut shard = self.shard(key).lock();
        if let Some(node) = shard.get(&key).and_then(Weak::upgrade) {
            if node.next_pla == next_pla {
                return node;
            }
            return Arc::new(make());
        }
        let node = Arc::new(make());
        shard.insert(key, Arc::downgrade(&node));
        node
    }

    /// Forgets every node.
    pub(crate) fn clear(&self) {
        for shard in &self.shards {
            shard.lock().clear();
        }
    }

    /// KataGo's mark and sweep after the root moves: drops the entries of
    /// nodes gone and of nodes `root` no longer reaches, whose children
    /// are taken away (a cycle of nodes holding each other would otherwise
    /// live on); `dropped` sees each such node first.
    pub(crate) fn sweep(&self, root: &Arc<Node>, mut dropped: impl FnMut(&Node)) {
        let reached = reachable(root);
        // Every dropped node is held before any is let go: taking one's
        // children could free another before `dropped` has seen it.
        let mut gone = Vec::new();
        for shard in &self.shards {
            shard.lock().retain(|_, weak| match weak.upgrade() {
                Some(node) if reached.contains(&Arc::as_ptr(&node)) => true,
                Some(node) => {
                    gone.push(node);
                    false
                }
                None => false,
            });
        }
        for node in &gone {
            dropped(node);
        }
        for node in &gone {
            drop(node.take_children());
        }
    }

    /// Nodes stored (live or not yet swept).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }
}

/// Every node `root` reaches, itself included, by address.
pub(crate) fn reachable(root: &Arc<Node>) -> HashSet<*const Node> {
    let mut seen = HashSet::new();
    let mut stack = vec![root.clone()];
    seen.insert(Arc::as_ptr(root));
    while let Some(n) = stack.pop() {
        for c in n.children().iter() {
            if seen.insert(Arc::as_ptr(&c.node)) {
                stack.push(c.node.clone());
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Move;
    use crate::search::tree::Child;

    #[test]
    fn transpositions_share_a_node_and_the_sweep_breaks_cycles() {
        let table = NodeTable::new(4);
        let h = Hash128(12345);
        let a = table.find_or_insert(h, false, Player::White, || Node::new(Player::White, false));
        let b = table.find_or_insert(h, false, Player::White, || panic!("made twice"));
        assert!(Arc::ptr_eq(&a, &b));
        // Searched past a game-ending pass: a node of its own.
        let forced =
            table.find_or_insert(h, true, Player::White, || Node::new(Player::White, true));
        assert!(!Arc::ptr_eq(&a, &forced));
        // A collision with the other player to move: not merged, not stored.
        let other =
            table.find_or_insert(h, false, Player::Black, || Node::new(Player::Black, false));
        assert!(!Arc::ptr_eq(&a, &other));
        assert_eq!(table.len(), 2);

        // a -> c -> a: a cycle; the root reaches neither.
        let c = table.find_or_insert(Hash128(7), false, Player::Black, || {
            Node::new(Player::Black, false)
        });
        a.children_mut().push(Child::new(Move::Pass, c.clone()));
        c.children_mut().push(Child::new(Move::Pass, a.clone()));
        let weak_a = Arc::downgrade(&a);
        drop((a, b, c, forced));
        let root = Arc::new(Node::new(Player::Black, true));
        let mut swept = 0;
        table.sweep(&root, |_| swept += 1);
        // Both are seen alive (their bias shares go), then freed.
        assert_eq!(swept, 2);
        assert_eq!(table.len(), 0);
        assert!(weak_a.upgrade().is_none(), "the cycle is freed");
    }
}
