//! The NN cache: a fixed table of `2^k` recent evaluations shared by every
//! search using one evaluator (KataGo's `NNCacheTable`).
//!
//! Each slot holds one `(key, Arc<NnOutput>)`; a new result replaces
//! whatever hashed to its slot. Every slot has its own tiny lock
//! (`parking_lot::Mutex`, one byte), so threads only contend when they touch
//! the same slot, and no lock is held while an output is dropped. A bitmap
//! of the slots ever filled since the last clear lets [`NnCache::clear`]
//! visit only those: the benchmark clears the table before each position,
//! and walking (and locking) all 2^20 default slots took 28 ms a time,
//! 1.4% of a 13x13 benchmark on Zen 1.
//!
//! An evaluation's size grows with the board (a 37x37 one is 3.8 times a
//! 19x19 one), so the table is also bounded in bytes: `2^k` slots hold at
//! most the bytes of `2^k` full 19x19 evaluations ([`slot_bytes`]). On 19x19
//! and smaller boards the slot count is the bound, as in KataGo; on bigger
//! boards fewer entries fit. Memory planning (`maxMemoryMB`) can therefore
//! count a slot at 19x19 size whatever sizes a session plays, instead of
//! shrinking every cache for the largest board.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::output::NnOutput;

/// Largest accepted `size_power_of_two` (2^30 slots is already 32 GiB).
pub const MAX_CACHE_POWER_OF_TWO: u32 = 30;

/// Points of the board whose evaluations size a slot (19x19).
pub const SLOT_SIZING_POINTS: usize = 19 * 19;

/// The table's own bytes per slot (key, pointer, lock) and the `Arc`'s
/// counters: what a filled slot costs besides its output's data.
const SLOT_OVERHEAD_BYTES: u64 = 48;

/// Bytes a full slot may account for: the slot and a 19x19 evaluation. A
/// table of `2^k` slots holds at most `2^k` times this.
pub fn slot_bytes() -> u64 {
    SLOT_OVERHEAD_BYTES + NnOutput::bytes_for(SLOT_SIZING_POINTS)
}

/// The bytes an entry holding `out` accounts for.
fn entry_bytes(out: &NnOutput) -> u64 {
    SLOT_OVERHEAD_BYTES + NnOutput::bytes_for(out.x_size * out.y_size)
}

/// A 128-bit cache key, stored as two words so a slot stays 8-aligned.
type Key = [u64; 2];

fn split(key: u128) -> Key {
    [key as u64, (key >> 64) as u64]
}

/// One slot: the full key and the output, behind the slot's own lock.
type Slot = Mutex<Option<(Key, Arc<NnOutput>)>>;

/// A bounded, thread-safe table from 128-bit keys to evaluations.
pub struct NnCache {
    slots: Box<[Slot]>,
    /// One bit per slot, set by every insert into it: a filled slot always
    /// has its bit set (a bit may outlive its entry, e.g. when a clear
    /// races an insert; a clear then finds the slot empty).
    filled: Box<[AtomicU64]>,
    mask: u64,
    /// Bytes of the entries held ([`entry_bytes`] each).
    held_bytes: AtomicU64,
    /// The most `held_bytes` may reach: slots times [`slot_bytes`].
    max_bytes: u64,
}

impl NnCache {
    /// A table of `2^size_power_of_two` slots (KataGo's
    /// `nnCacheSizePowerOfTwo`), clamped to [`MAX_CACHE_POWER_OF_TWO`].
    pub fn new(size_power_of_two: u32) -> NnCache {
        let len = 1usize << size_power_of_two.min(MAX_CACHE_POWER_OF_TWO);
        let slots = (0..len).map(|_| Mutex::new(None)).collect();
        let filled = (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        NnCache {
            slots,
            filled,
            mask: len as u64 - 1,
            held_bytes: AtomicU64::new(0),
            max_bytes: len as u64 * slot_bytes(),
        }
    }

    /// How many slots the table has (the most entries it can hold).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The slot's index. Indexed by the low word, as KataGo does with
    /// hash0; the full key is compared on lookup.
    fn index(&self, key: &Key) -> usize {
        (key[0] & self.mask) as usize
    }

    fn slot(&self, key: &Key) -> &Slot {
        &self.slots[self.index(key)]
    }

    /// The cached evaluation for `key`, if its slot still holds it.
    pub fn get(&self, key: u128) -> Option<Arc<NnOutput>> {
        let key = split(key);
        let slot = self.slot(&key).lock();
        match &*slot {
            Some((k, out)) if *k == key => Some(Arc::clone(out)),
            _ => None,
        }
    }

    /// Stores `out` under `key`, replacing what was in its slot, unless
    /// the table's byte bound has no room for it (then the slot keeps what
    /// it had: only boards bigger than 19x19 can fill that bound).
    pub fn insert(&self, key: u128, out: Arc<NnOutput>) {
        let key = split(key);
        let new_bytes = entry_bytes(&out);
        let index = self.index(&key);
        let mut slot = self.slots[index].lock();
        let old_bytes = slot.as_ref().map_or(0, |(_, o)| entry_bytes(o));
        if new_bytes > old_bytes {
            let grow = new_bytes - old_bytes;
            let reserved =
                self.held_bytes
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                        (held + grow <= self.max_bytes).then_some(held + grow)
                    });
            if reserved.is_err() {
                drop(slot);
                return;
            }
        } else {
            self.held_bytes
                .fetch_sub(old_bytes - new_bytes, Ordering::Relaxed);
        }
        let old = slot.replace((key, out));
        // Set while the slot is locked: whether a clear swaps this word
        // out before or after, the filled slot keeps its bit or that clear
        // empties it.
        self.filled[index / 64].fetch_or(1 << (index % 64), Ordering::Relaxed);
        drop(slot);
        // `old` is dropped here, after the lock is released.
        drop(old);
    }

    /// Empties the table, visiting only the slots filled since the last
    /// clear.
    pub fn clear(&self) {
        let mut freed = 0;
        for (word, bits) in self.filled.iter().enumerate() {
            let mut bits = bits.swap(0, Ordering::Relaxed);
            while bits != 0 {
                let index = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let old = self.slots[index].lock().take();
                if let Some((_, out)) = &old {
                    freed += entry_bytes(out);
                }
                drop(old);
            }
        }
        self.held_bytes.fetch_sub(freed, Ordering::Relaxed);
    }

    /// Bytes of the entries held (slot and output data, as counted against
    /// the bound).
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes.load(Ordering::Relaxed)
    }

    /// The most bytes the entries may hold: the slot count times
    /// [`slot_bytes`].
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// How many slots are filled (walks the whole table; for tests and
    /// statistics, not for hot paths).
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.lock().is_some()).count()
    }

    /// Whether no slot is filled (walks the whole table).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for NnCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NnCache")
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(tag: f32) -> Arc<NnOutput> {
        sized_output(tag, 1)
    }

    /// An output of a `len` x `len` board.
    fn sized_output(tag: f32, len: usize) -> Arc<NnOutput> {
        Arc::new(NnOutput {
            x_size: len,
            y_size: len,
            policy: vec![0.0; len * len + 1],
            white_win_prob: tag,
            white_loss_prob: 1.0 - tag,
            white_no_result_prob: 0.0,
            white_score_mean: 0.0,
            white_score_mean_sq: 0.0,
            white_lead: 0.0,
            var_time_left: -1.0,
            shortterm_winloss_error: -1.0,
            shortterm_score_error: -1.0,
            white_ownership: None,
        })
    }

    #[test]
    fn hit_returns_the_same_output() {
        let cache = NnCache::new(4);
        let out = output(0.25);
        cache.insert(0xdead_beef, Arc::clone(&out));
        let got = cache.get(0xdead_beef).expect("hit");
        assert!(Arc::ptr_eq(&got, &out));
        assert_eq!(*got, *out);
        assert!(cache.get(0xdead_bef0).is_none());
    }

    #[test]
    fn same_slot_different_key_is_a_miss_and_replaces() {
        let cache = NnCache::new(4);
        let a = 3u128;
        let b = 3u128 | (7u128 << 64); // same low word, other high word
        let c = 3u128 + 16; // same slot index, other low word
        cache.insert(a, output(0.1));
        assert!(cache.get(b).is_none());
        assert!(cache.get(c).is_none());
        cache.insert(c, output(0.2));
        assert!(cache.get(a).is_none(), "replaced on collision");
        assert_eq!(cache.get(c).map(|o| o.white_win_prob), Some(0.2));
    }

    #[test]
    fn capacity_bound_holds_and_clear_works() {
        let cache = NnCache::new(6);
        assert_eq!(cache.capacity(), 64);
        for k in 0..1000u128 {
            cache.insert(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), output(0.5));
        }
        assert!(cache.len() <= 64);
        assert!(cache.len() > 32, "keys should spread over the slots");
        cache.clear();
        assert!(cache.is_empty());
        assert!(cache.get(0).is_none());
        assert_eq!(cache.held_bytes(), 0);
        // Refilled, it empties again (the bitmap follows the new entries).
        for k in 0..10u128 {
            cache.insert(k, output(0.5));
        }
        assert_eq!(cache.len(), 10);
        cache.clear();
        assert!(cache.is_empty());
        assert_eq!(cache.held_bytes(), 0);
    }

    #[test]
    fn concurrent_use_is_consistent() {
        let cache = Arc::new(NnCache::new(8));
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let cache = Arc::clone(&cache);
                s.spawn(move || {
                    for i in 0..2000u32 {
                        let key = u128::from(i % 300) * 0x1_0000_0001;
                        let tag = (i % 300) as f32;
                        if t == 3 && i % 500 == 0 {
                            cache.clear();
                        } else if (i + t) % 3 == 0 {
                            cache.insert(key, output(tag));
                        } else if let Some(o) = cache.get(key) {
                            assert_eq!(o.white_win_prob, tag);
                        }
                    }
                });
            }
        });
        assert!(cache.len() <= 256);
        let counted: u64 = (0..300u128)
            .filter_map(|i| cache.get(i * 0x1_0000_0001))
            .map(|o| entry_bytes(&o))
            .sum();
        assert_eq!(
            cache.held_bytes(),
            counted,
            "the byte count follows the entries"
        );
        // No entry escaped the bitmap during the races with clears.
        cache.clear();
        assert!(cache.is_empty());
        assert_eq!(cache.held_bytes(), 0);
    }

    #[test]
    fn big_board_entries_are_bounded_by_bytes_and_small_ones_by_slots() {
        let cache = NnCache::new(6);
        assert_eq!(cache.max_bytes(), 64 * slot_bytes());
        let keys = |n: u128| (0..n).map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for k in keys(2000) {
            cache.insert(k, sized_output(0.5, 37));
        }
        let big = entry_bytes(&sized_output(0.5, 37));
        assert!(cache.held_bytes() <= cache.max_bytes());
        assert!(
            cache.len() as u64 <= cache.max_bytes() / big,
            "{} entries of 37x37",
            cache.len()
        );
        assert!(
            cache.len() >= 10,
            "the bound leaves room for some: {}",
            cache.len()
        );
        // 19x19 entries fill every slot: the slot count is the bound.
        cache.clear();
        assert_eq!(cache.held_bytes(), 0);
        for k in keys(5000) {
            cache.insert(k, sized_output(0.5, 19));
        }
        assert_eq!(cache.len(), 64);
        assert_eq!(cache.held_bytes(), cache.max_bytes());
        // Replacing entries by smaller ones gives bytes back.
        for k in keys(5000) {
            cache.insert(k, sized_output(0.5, 9));
        }
        assert_eq!(cache.held_bytes(), 64 * entry_bytes(&sized_output(0.5, 9)));
    }
}
