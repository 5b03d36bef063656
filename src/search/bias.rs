//! KataGo's subtree value bias table: online estimates of the net's error
//! on local tactics, bucketed by (mover, previous move, this move, the 5x5
//! pattern around this move with stones in atari, and the ko ban) on the
//! board before the move.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::eval::SearchState;
use crate::game::{Color, Loc, Move, Player, MAX_ARR_SIZE};

/// One bucket: the weighted sum of observed errors (children's utility
/// minus the net's) and the sum of weights.
#[derive(Debug, Default)]
pub struct BiasEntry {
    sums: Mutex<(f64, f64)>,
}

impl BiasEntry {
    /// Adds to the delta and weight sums; returns the new sums.
    pub fn add(&self, delta: f64, weight: f64) -> (f64, f64) {
        let mut s = self.sums.lock();
        s.0 += delta;
        s.1 += weight;
        *s
    }

    /// The current (delta sum, weight sum).
    pub fn get(&self) -> (f64, f64) {
        *self.sums.lock()
    }

    /// The bias to add to a node's utility: `factor * mean delta`.
    pub fn bias(&self, factor: f64) -> f64 {
        let (d, w) = self.get();
        if w > 0.001 {
            factor * d / w
        } else {
            0.0
        }
    }
}

/// The table, sharded to keep lock contention low.
pub struct BiasTable {
    shards: Vec<Mutex<HashMap<u64, Arc<BiasEntry>>>>,
}

struct Zobrist {
    mv: Vec<[u64; 2]>,
    ko: Vec<u64>,
    pattern: [[u64; 25]; 4],
    atari: [u64; 25],
    pla: [u64; 2],
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn zobrist() -> &'static Zobrist {
    static Z: OnceLock<Zobrist> = OnceLock::new();
    Z.get_or_init(|| {
        let mut s = 0x5EED_B1A5_7AB1_E000u64;
        // One more slot than the board array: index MAX_ARR_SIZE is the pass.
        let mv = (0..=MAX_ARR_SIZE)
            .map(|_| [splitmix(&mut s), splitmix(&mut s)])
            .collect();
        let ko = (0..=MAX_ARR_SIZE).map(|_| splitmix(&mut s)).collect();
        let mut pattern = [[0; 25]; 4];
        for row in pattern.iter_mut() {
            row.iter_mut().for_each(|x| *x = splitmix(&mut s));
        }
        let mut atari = [0; 25];
        atari.iter_mut().for_each(|x| *x = splitmix(&mut s));
        let pla = [splitmix(&mut s), splitmix(&mut s)];
        Zobrist {
            mv,
            ko,
            pattern,
            atari,
            pla,
        }
    })
}

fn move_index(mv: Move) -> usize {
    match mv {
        Move::Pass => MAX_ARR_SIZE,
        Move::Play(loc) => loc.idx().min(MAX_ARR_SIZE - 1),
    }
}

/// The bucket key of playing `mv` in `state` (before the move), or `None`
/// where KataGo applies no bias: a pass, or no previous move.
pub fn bias_key<S: SearchState>(state: &S, mv: Move) -> Option<u64> {
    let (_, prev) = state.last_move()?;
    let loc = mv.loc()?;
    let z = zobrist();
    let pla: Player = state.next_player();
    let mut h = z.mv[move_index(prev)][0] ^ z.mv[move_index(mv)][1] ^ z.pla[pla.index()];
    let (xs, ys) = (state.x_size() as i64, state.y_size() as i64);
    let (x, y) = loc.xy(state.x_size());
    let (x, y) = (x as i64, y as i64);
    for dy in -2..=2i64 {
        for dx in -2..=2i64 {
            let (x2, y2) = (x + dx, y + dy);
            if x2 < 0 || y2 < 0 || x2 >= xs || y2 >= ys {
                continue;
            }
            let l2 = Loc::from_xy(x2 as usize, y2 as usize, state.x_size());
            let cell = ((dy + 2) * 5 + dx + 2) as usize;
            let c = state.color_at(l2);
            h ^= z.pattern[c as usize][cell];
            if matches!(c, Color::Black | Color::White) && state.in_atari(l2) {
                h ^= z.atari[cell];
            }
        }
    }
    if let Some(ko) = state.ko_loc() {
        h ^= z.ko[ko.idx().min(MAX_ARR_SIZE)];
    }
    Some(h)
}

impl BiasTable {
    /// A table with `num_shards` shards (at least 1).
    pub fn new(num_shards: usize) -> BiasTable {
        BiasTable {
            shards: (0..num_shards.max(1))
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
        }
    }

    /// The entry for a key, created empty if new.
    pub fn get(&self, key: u64) -> Arc<BiasEntry> {
        let shard = &self.shards[(key % self.shards.len() as u64) as usize];
        shard.lock().entry(key).or_default().clone()
    }

    /// Drops entries no node refers to any more.
    pub fn clear_unused(&self) {
        for shard in &self.shards {
            shard.lock().retain(|_, e| Arc::strong_count(e) > 1);
        }
    }

    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    /// Whether no bucket exists.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_shared_and_average() {
        let t = BiasTable::new(4);
        let a = t.get(17);
        let b = t.get(17);
        a.add(0.2, 2.0);
        b.add(0.4, 2.0);
        assert!((t.get(17).bias(0.5) - 0.5 * 0.6 / 4.0).abs() < 1e-12);
        assert_eq!(t.len(), 1);
        drop((a, b));
        t.clear_unused();
        assert!(t.is_empty());
        assert_eq!(BiasEntry::default().bias(1.0), 0.0);
    }
}
