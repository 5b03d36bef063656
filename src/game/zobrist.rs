//! 128-bit Zobrist hashing.
//!
//! The tables are generated at compile time from a fixed-seed SplitMix64
//! stream, so every build on every platform hashes identically. The values
//! are our own (KataGo seeds its tables from a string through its own PRNG);
//! nothing outside this crate needs to agree with them.

use std::fmt;
use std::ops::{BitXor, BitXorAssign};

use super::types::{MAX_ARR_SIZE, MAX_LEN};

/// A 128-bit hash (Zobrist hashes of positions and situations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Hash128(pub u128);

impl Hash128 {
    /// The empty hash.
    pub const ZERO: Hash128 = Hash128(0);

    /// The high 64 bits (KataGo's `hash0` in printed form).
    #[inline]
    pub fn hi(self) -> u64 {
        (self.0 >> 64) as u64
    }

    /// The low 64 bits.
    #[inline]
    pub fn lo(self) -> u64 {
        self.0 as u64
    }
}

impl BitXor for Hash128 {
    type Output = Hash128;
    #[inline]
    fn bitxor(self, rhs: Hash128) -> Hash128 {
        Hash128(self.0 ^ rhs.0)
    }
}

impl BitXorAssign for Hash128 {
    #[inline]
    fn bitxor_assign(&mut self, rhs: Hash128) {
        self.0 ^= rhs.0;
    }
}

impl fmt::Display for Hash128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032X}", self.0)
    }
}

/// SplitMix64 finaliser: a good 64-bit mixer, also used for komi hashing.
#[inline]
pub(crate) const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// Every Zobrist key the game core uses.
pub(crate) struct Zobrist {
    /// Stone of player `p` (index 0 black, 1 white) on a location.
    pub stone: [[Hash128; 2]; MAX_ARR_SIZE],
    /// Player to move.
    pub player: [Hash128; 2],
    /// A ko-ban (simple ko or superko) on a location.
    pub ko_loc: [Hash128; MAX_ARR_SIZE],
    /// An encore ko-recapture block on a location.
    pub ko_mark: [Hash128; MAX_ARR_SIZE],
    /// Encore phase 0, 1, 2.
    pub encore: [Hash128; 3],
    /// Stone colours at the start of encore phase 2.
    pub second_encore_start: [[Hash128; 2]; MAX_ARR_SIZE],
    /// Board width and height (so boards of different sizes never collide).
    pub size_x: [Hash128; MAX_LEN + 1],
    pub size_y: [Hash128; MAX_LEN + 1],
    /// Rule components of the situation hash.
    pub ko_rule: [Hash128; 4],
    pub scoring_rule: [Hash128; 2],
    pub tax_rule: [Hash128; 3],
    pub multi_stone_suicide: Hash128,
    pub button: Hash128,
    pub friendly_pass_ok: Hash128,
    /// Pass-alive areas computed as if suicide were legal.
    pub pass_alive_under_suicide: Hash128,
}

struct Gen {
    state: u64,
}

impl Gen {
    const fn next(&mut self) -> Hash128 {
        self.state = self.state.wrapping_add(0x9e3779b97f4a7c15);
        let hi = mix64(self.state);
        self.state = self.state.wrapping_add(0x9e3779b97f4a7c15);
        let lo = mix64(self.state);
        Hash128(((hi as u128) << 64) | lo as u128)
    }
}

impl Zobrist {
    const fn generate() -> Zobrist {
        let mut g = Gen {
            state: 0x656e_6769_6e65_2d47, // "engine-G"
        };
        let z = Hash128(0);
        let mut t = Zobrist {
            stone: [[z; 2]; MAX_ARR_SIZE],
            player: [z; 2],
            ko_loc: [z; MAX_ARR_SIZE],
            ko_mark: [z; MAX_ARR_SIZE],
            encore: [z; 3],
            second_encore_start: [[z; 2]; MAX_ARR_SIZE],
            size_x: [z; MAX_LEN + 1],
            size_y: [z; MAX_LEN + 1],
            ko_rule: [z; 4],
            scoring_rule: [z; 2],
            tax_rule: [z; 3],
            multi_stone_suicide: z,
            button: z,
            friendly_pass_ok: z,
            pass_alive_under_suicide: z,
        };
        t.player[0] = g.next();
        t.player[1] = g.next();
        let mut i = 0;
        while i < 3 {
            t.encore[i] = g.next();
            t.tax_rule[i] = g.next();
            i += 1;
        }
        i = 0;
        while i < 4 {
            t.ko_rule[i] = g.next();
            i += 1;
        }
        t.scoring_rule[0] = g.next();
        t.scoring_rule[1] = g.next();
        t.multi_stone_suicide = g.next();
        t.button = g.next();
        t.friendly_pass_ok = g.next();
        t.pass_alive_under_suicide = g.next();
        i = 0;
        while i < MAX_LEN + 1 {
            t.size_x[i] = g.next();
            t.size_y[i] = g.next();
            i += 1;
        }
        i = 0;
        while i < MAX_ARR_SIZE {
            t.stone[i][0] = g.next();
            t.stone[i][1] = g.next();
            t.ko_loc[i] = g.next();
            t.ko_mark[i] = g.next();
            t.second_encore_start[i][0] = g.next();
            t.second_encore_start[i][1] = g.next();
            i += 1;
        }
        t
    }
}

/// The tables, built at compile time.
pub(crate) static ZOBRIST: Zobrist = Zobrist::generate();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_and_nonzero() {
        let mut all: Vec<u128> = Vec::new();
        for i in 0..MAX_ARR_SIZE {
            all.push(ZOBRIST.stone[i][0].0);
            all.push(ZOBRIST.stone[i][1].0);
            all.push(ZOBRIST.ko_loc[i].0);
        }
        all.extend(ZOBRIST.player.iter().map(|h| h.0));
        all.extend(ZOBRIST.size_x.iter().map(|h| h.0));
        let n = all.len();
        assert!(all.iter().all(|&h| h != 0));
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn tables_are_fixed() {
        // A change here changes every stored hash: do it on purpose only.
        assert_eq!(ZOBRIST.player[0], Zobrist::generate().player[0]);
        assert_eq!(format!("{}", Hash128(0xAB)).len(), 32);
    }
}
