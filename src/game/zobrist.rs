//! 128-bit Zobrist hashing, with KataGo's keys.
//!
//! The tables are KataGo 1.17.2's (`Board::initHash`, `Rules::ZOBRIST_*`):
//! drawn at compile time from KataGo's own generator seeded with the same
//! strings ([`super::katago_rand`]), so a position hashes to the same 128
//! bits here as in KataGo, and the `thisHash`/`symHash` strings analysis
//! prints are KataGo's (tools match positions across engines by them).

use std::fmt;
use std::ops::{BitXor, BitXorAssign};

use super::katago_rand::KataRand;
use super::types::{MAX_ARR_SIZE, MAX_LEN};

/// A 128-bit hash (Zobrist hashes of positions and situations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Hash128(pub u128);

impl Hash128 {
    /// The empty hash.
    pub const ZERO: Hash128 = Hash128(0);

    /// KataGo's `Hash128(hash0, hash1)`: `hash1` is the high half, printed
    /// first, and compared first.
    pub const fn from_katago(hash0: u64, hash1: u64) -> Hash128 {
        Hash128(((hash1 as u128) << 64) | hash0 as u128)
    }

    /// The high 64 bits (KataGo's `hash1`, printed first).
    #[inline]
    pub fn hi(self) -> u64 {
        (self.0 >> 64) as u64
    }

    /// The low 64 bits (KataGo's `hash0`).
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

/// MurmurHash3's 64-bit finaliser (KataGo's `Hash::murmurMix`).
#[inline]
pub(crate) const fn murmur_mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
    x ^ (x >> 33)
}

/// KataGo's `Hash::basicLCong`, a linear congruential step.
#[inline]
pub(crate) const fn basic_lcong(x: u64) -> u64 {
    x.wrapping_mul(2862933555777941757).wrapping_add(3037000493)
}

/// Every Zobrist key the game core uses.
pub(crate) struct Zobrist {
    /// Stone of player `p` (index 0 black, 1 white) on a location.
    pub stone: [[Hash128; 2]; MAX_ARR_SIZE],
    /// Player to move.
    pub player: [Hash128; 2],
    /// A ko-ban (simple ko or superko) on a location.
    pub ko_loc: [Hash128; MAX_ARR_SIZE],
    /// An encore ko-recapture block on a location (KataGo's
    /// `ZOBRIST_KO_MARK_HASH[loc][black] ^ [loc][white]`, the two always
    /// toggled together).
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

/// KataGo's `nextHash()`: `Hash128(hash0, hash1)` from two draws.
pub(super) const fn next_hash(rand: &mut KataRand) -> Hash128 {
    let hash0 = rand.next_u64();
    let hash1 = rand.next_u64();
    Hash128::from_katago(hash0, hash1)
}

impl Zobrist {
    /// KataGo's `Board::initHash()` draws, in its order (KataGo indexes by
    /// colour, 1 black and 2 white, with empty and wall keys zero; we index
    /// 0 black, 1 white), and `Rules`' literal keys. A loc's keys do not
    /// depend on the largest board compiled for, so boards up to 19x19 hash
    /// as in KataGo's default build.
    const fn generate() -> Zobrist {
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
            ko_rule: [
                Hash128::from_katago(0x3cc7e0bf846820f6, 0x1fb7fbde5fc6ba4e),
                Hash128::from_katago(0xcc18f5d47188554a, 0x3a63152c23e4128d),
                Hash128::from_katago(0x3bc55e42b23b35bf, 0xc75fa1e615621dcd),
                Hash128::from_katago(0x5b2096e48241d21b, 0x23cc18d4e85cd67f),
            ],
            // KataGo mixes the tax keys for none (area) and seki (territory)
            // into these, "to preserve legacy hashes".
            scoring_rule: [
                Hash128::from_katago(
                    0x8b3ed7598f901494 ^ 0x72eeccc72c82a5e7,
                    0x1dfd47ac77bce5f8 ^ 0x0d1265e413623e2b,
                ),
                Hash128::from_katago(
                    0x381345dc357ec982 ^ 0x125bfe48a41042d5,
                    0x03ba55c026026b56 ^ 0x061866b5f2b98a79,
                ),
            ],
            tax_rule: [
                Hash128::from_katago(0x72eeccc72c82a5e7, 0x0d1265e413623e2b),
                Hash128::from_katago(0x125bfe48a41042d5, 0x061866b5f2b98a79),
                Hash128::from_katago(0xa384ece9d8ee713c, 0xfdc9f3b5d1f3732b),
            ],
            multi_stone_suicide: Hash128::from_katago(0xf9b475b3bbf35e37, 0xefa19d8b1e5b3e5a),
            button: Hash128::from_katago(0xb8b914c9234ece84, 0x3d759cddebe29c14),
            friendly_pass_ok: Hash128::from_katago(0x0113655998ef0a25, 0x99c9d04ecd964874),
            pass_alive_under_suicide: Hash128::from_katago(0x3094018861134017, 0x706330a293e266aa),
        };
        let mut rand = KataRand::new(b"Board::initHash()");
        // ZOBRIST_PLAYER_HASH[0..4]: empty, black, white, wall.
        let _empty = next_hash(&mut rand);
        t.player[0] = next_hash(&mut rand);
        t.player[1] = next_hash(&mut rand);
        let _wall = next_hash(&mut rand);
        let mut i = 0;
        while i < 3 {
            t.encore[i] = next_hash(&mut rand);
            i += 1;
        }
        i = 0;
        while i < MAX_ARR_SIZE {
            // Per colour black, white: the board key, then the ko-mark key.
            t.stone[i][0] = next_hash(&mut rand);
            let mark_black = next_hash(&mut rand);
            t.stone[i][1] = next_hash(&mut rand);
            let mark_white = next_hash(&mut rand);
            t.ko_mark[i] = Hash128(mark_black.0 ^ mark_white.0);
            t.ko_loc[i] = next_hash(&mut rand);
            i += 1;
        }
        let mut rand = KataRand::new(b"Board::initHash() for ZOBRIST_SECOND_ENCORE_START hashes");
        i = 0;
        while i < MAX_ARR_SIZE {
            t.second_encore_start[i][0] = next_hash(&mut rand);
            t.second_encore_start[i][1] = next_hash(&mut rand);
            i += 1;
        }
        let mut rand = KataRand::new(b"Board::initHash() for ZOBRIST_SIZE hashes");
        i = 0;
        while i < MAX_LEN + 1 {
            t.size_x[i] = next_hash(&mut rand);
            t.size_y[i] = next_hash(&mut rand);
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
    fn empty_board_hashes_are_katagos() {
        // KataGo 1.17.2's `thisHash` for empty boards, black to move
        // (`Board::getSitHashWithSimpleKo`: size keys and the player key).
        for (size, katago) in [
            (19, "47E1EBDAE69A5DED3FF8DB1FA4E91845"),
            (13, "E751B1FF9772F48AA4ED132CE8291D96"),
            (9, "1521075FDD85FFE1B074F776AFC4E49D"),
            (7, "B2E696E1682166C81CE6B98730C14F74"),
            (5, "71CB43380DF299AC0858C3613BD3BD15"),
        ] {
            let h = ZOBRIST.size_x[size] ^ ZOBRIST.size_y[size] ^ ZOBRIST.player[0];
            assert_eq!(h.to_string(), katago, "{size}x{size}");
        }
    }
}
