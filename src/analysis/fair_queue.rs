//! The analysis engine's queue of positions: weighted fair queueing across
//! keys (deficit round robin, one position costing one unit), then the
//! query's `priority` within a key, then first come first served.
//!
//! With one key (`engine analysis` over stdin) it is exactly the priority
//! queue KataGo keeps: highest priority first, ties in arrival order. With
//! several (`engine serve`'s keys), a key of weight `w` gets `w` positions
//! per round while it has any queued, so a key with hundreds of positions
//! queued delays another key's position by at most one round.

use std::collections::{BinaryHeap, VecDeque};

/// One queued item: highest priority first, then earliest.
struct Entry<T> {
    priority: i64,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.priority, self.seq) == (other.priority, other.seq)
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.priority
            .cmp(&other.priority)
            .then(other.seq.cmp(&self.seq))
    }
}

/// The queue of one key.
struct KeyQueue<T> {
    weight: u32,
    /// Positions this key may still take in its current turn.
    deficit: u64,
    heap: BinaryHeap<Entry<T>>,
}

/// Weighted fair queue over keys numbered `0..` (see the module docs).
pub struct FairQueue<T> {
    keys: Vec<KeyQueue<T>>,
    /// Keys with queued items, in round-robin order; the front one is
    /// being served.
    active: VecDeque<usize>,
    len: usize,
    next_seq: u64,
}

impl<T> Default for FairQueue<T> {
    fn default() -> Self {
        FairQueue {
            keys: Vec::new(),
            active: VecDeque::new(),
            len: 0,
            next_seq: 0,
        }
    }
}

impl<T> FairQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `item` under `key` (whose share is `weight`, at least 1; the
    /// latest weight given for a key counts).
    pub fn push(&mut self, key: usize, weight: u32, priority: i64, item: T) {
        if self.keys.len() <= key {
            self.keys.resize_with(key + 1, || KeyQueue {
                weight: 1,
                deficit: 0,
                heap: BinaryHeap::new(),
            });
        }
        let q = &mut self.keys[key];
        q.weight = weight.max(1);
        if q.heap.is_empty() {
            self.active.push_back(key);
        }
        q.heap.push(Entry {
            priority,
            seq: self.next_seq,
            item,
        });
        self.next_seq += 1;
        self.len += 1;
    }

    /// The next item by deficit round robin; `None` when empty.
    pub fn pop(&mut self) -> Option<T> {
        self.pop_allowed(|_| true)
    }

    /// The next item of the first key in round-robin order that `allowed`
    /// accepts (the key served now if it is allowed, so with every key
    /// allowed this is [`FairQueue::pop`]); `None` when no allowed key has
    /// any.
    pub fn pop_allowed(&mut self, mut allowed: impl FnMut(usize) -> bool) -> Option<T> {
        let at = self.active.iter().position(|&k| allowed(k))?;
        let key = self.active[at];
        let q = &mut self.keys[key];
        if q.deficit == 0 {
            q.deficit = u64::from(q.weight);
        }
        let entry = q.heap.pop()?;
        q.deficit -= 1;
        self.len -= 1;
        if q.heap.is_empty() {
            // An idle key keeps no credit for later.
            q.deficit = 0;
            self.active.remove(at);
        } else if q.deficit == 0 {
            // Its turn is over: to the back, behind every key now waiting.
            self.active.remove(at);
            self.active.push_back(key);
        }
        Some(entry.item)
    }

    /// Items queued in all.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Items queued under `key`.
    pub fn len_of(&self, key: usize) -> usize {
        self.keys.get(key).map_or(0, |q| q.heap.len())
    }

    /// Items queued per key, for keys that have any.
    pub fn depths(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.keys
            .iter()
            .enumerate()
            .filter(|(_, q)| !q.heap.is_empty())
            .map(|(k, q)| (k, q.heap.len()))
    }

    /// Drops every item of `key` for which `drop` says so; returns them.
    pub fn remove_where(&mut self, key: usize, mut drop: impl FnMut(&T) -> bool) -> Vec<T> {
        let Some(q) = self.keys.get_mut(key) else {
            return Vec::new();
        };
        let mut kept = Vec::with_capacity(q.heap.len());
        let mut removed = Vec::new();
        for e in std::mem::take(&mut q.heap).into_vec() {
            if drop(&e.item) {
                removed.push(e.item);
            } else {
                kept.push(e);
            }
        }
        q.heap = BinaryHeap::from(kept);
        self.len -= removed.len();
        if q.heap.is_empty() && !removed.is_empty() {
            q.deficit = 0;
            self.active.retain(|&k| k != key);
        }
        removed
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        for q in &mut self.keys {
            q.heap.clear();
            q.deficit = 0;
        }
        self.active.clear();
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut FairQueue<&'static str>) -> Vec<&'static str> {
        std::iter::from_fn(|| q.pop()).collect()
    }

    #[test]
    fn one_key_is_a_priority_queue_with_ties_in_arrival_order() {
        let mut q = FairQueue::new();
        q.push(0, 1, 0, "a");
        q.push(0, 1, 5, "b");
        q.push(0, 1, 0, "c");
        q.push(0, 1, 5, "d");
        q.push(0, 1, -1, "e");
        assert_eq!(q.len(), 5);
        assert_eq!(drain(&mut q), ["b", "d", "a", "c", "e"]);
        assert!(q.is_empty());
    }

    #[test]
    fn keys_take_turns_by_weight() {
        let mut q = FairQueue::new();
        for item in ["a1", "a2", "a3", "a4", "a5", "a6"] {
            q.push(0, 2, 0, item);
        }
        for item in ["b1", "b2", "b3"] {
            q.push(1, 1, 0, item);
        }
        assert_eq!(
            drain(&mut q),
            ["a1", "a2", "b1", "a3", "a4", "b2", "a5", "a6", "b3"]
        );
    }

    #[test]
    fn a_latecomer_waits_at_most_one_round() {
        let mut q = FairQueue::new();
        for _ in 0..100 {
            q.push(0, 1, 0, "flood");
        }
        assert_eq!(q.pop(), Some("flood"));
        q.push(1, 1, 0, "single");
        // Key 0's turn is over after one position: the newcomer is next
        // but one at worst.
        let first_two = [q.pop().unwrap(), q.pop().unwrap()];
        assert!(first_two.contains(&"single"), "{first_two:?}");
        assert_eq!(q.len_of(0), 98);
        assert_eq!(q.depths().collect::<Vec<_>>(), [(0, 98)]);
    }

    #[test]
    fn priority_orders_within_a_key_only() {
        let mut q = FairQueue::new();
        q.push(0, 1, 0, "a-low");
        q.push(0, 1, 100, "a-high");
        q.push(1, 1, 50, "b");
        // Key 0 came first: its best item, then key 1's turn.
        assert_eq!(drain(&mut q), ["a-high", "b", "a-low"]);
    }

    #[test]
    fn removing_a_keys_items_keeps_the_others_in_order() {
        let mut q = FairQueue::new();
        q.push(0, 1, 0, "a1");
        q.push(1, 1, 0, "b1");
        q.push(0, 1, 0, "a2");
        q.push(1, 1, 0, "b2");
        assert_eq!(q.remove_where(1, |_| true), ["b1", "b2"]);
        assert_eq!(q.len(), 2);
        assert_eq!(q.remove_where(7, |_| true), Vec::<&str>::new());
        assert_eq!(q.remove_where(0, |&i| i == "a2"), ["a2"]);
        assert_eq!(drain(&mut q), ["a1"]);
        q.push(1, 1, 0, "b3");
        q.clear();
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn pop_allowed_skips_keys_that_are_not_allowed_and_keeps_their_turn() {
        let mut q = FairQueue::new();
        for item in ["a1", "a2", "a3"] {
            q.push(0, 1, 0, item);
        }
        q.push(1, 1, 0, "b1");
        q.push(2, 1, 0, "c1");
        assert_eq!(q.pop_allowed(|k| k != 0), Some("b1"));
        assert_eq!(q.pop_allowed(|k| k == 7), None);
        // Key 0 was not passed over for good: it is still served first.
        assert_eq!(drain(&mut q), ["a1", "c1", "a2", "a3"]);
    }
}
