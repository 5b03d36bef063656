//! The NN cache: a fixed table of `2^k` recent evaluations shared by every
//! search using one evaluator (KataGo's `NNCacheTable`).
//!
//! Each slot holds one `(key, Arc<NnOutput>)`; a new result replaces
//! whatever hashed to its slot. Every slot has its own tiny lock
//! (`parking_lot::Mutex`, one byte), so threads only contend when they touch
//! the same slot, and no lock is held while an output is dropped.

use std::sync::Arc;

use parking_lot::Mutex;

use super::output::NnOutput;

/// Largest accepted `size_power_of_two` (2^30 slots is already 32 GiB).
pub const MAX_CACHE_POWER_OF_TWO: u32 = 30;

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
    mask: u64,
}

impl NnCache {
    /// A table of `2^size_power_of_two` slots (KataGo's
    /// `nnCacheSizePowerOfTwo`), clamped to [`MAX_CACHE_POWER_OF_TWO`].
    pub fn new(size_power_of_two: u32) -> NnCache {
        let len = 1usize << size_power_of_two.min(MAX_CACHE_POWER_OF_TWO);
        let slots = (0..len).map(|_| Mutex::new(None)).collect();
        NnCache {
            slots,
            mask: len as u64 - 1,
        }
    }

    /// How many slots the table has (the most entries it can hold).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn slot(&self, key: &Key) -> &Slot {
        // Index by the low word, as KataGo does with hash0; the full key is
        // compared on lookup.
        &self.slots[(key[0] & self.mask) as usize]
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

    /// Stores `out` under `key`, replacing what was in its slot.
    pub fn insert(&self, key: u128, out: Arc<NnOutput>) {
        let key = split(key);
        let old = self.slot(&key).lock().replace((key, out));
        // `old` is dropped here, after the lock is released.
        drop(old);
    }

    /// Empties the table.
    pub fn clear(&self) {
        for slot in self.slots.iter() {
            let old = slot.lock().take();
            drop(old);
        }
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
        Arc::new(NnOutput {
            x_size: 1,
            y_size: 1,
            policy: vec![0.5, 0.5],
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
                        if (i + t) % 3 == 0 {
                            cache.insert(key, output(tag));
                        } else if let Some(o) = cache.get(key) {
                            assert_eq!(o.white_win_prob, tag);
                        }
                    }
                });
            }
        });
        assert!(cache.len() <= 256);
    }
}
