//! KataGo's string-seeded random number generator (`core/rand.cpp` and
//! `core/rand_helpers.h` in KataGo 1.17.2), as `const fn`s.
//!
//! KataGo draws its Zobrist tables from this generator seeded with fixed
//! strings (`Board::initHash()`), so position hashes it prints (`thisHash`,
//! `symHash` in analysis) depend on every step here: the seed string's MD5,
//! SHA-256 over counters and the seed to fill a XorShift1024* and a PCG32
//! state, and the sum of the two streams. Being `const`, the tables built
//! from it cost nothing at run time.

/// KataGo's `Rand` after `init(seed)`: a XorShift1024* and a PCG32 whose
/// outputs are added.
pub(crate) struct KataRand {
    xorm: [u64; 16],
    xorm_idx: usize,
    pcg: u64,
}

impl KataRand {
    /// `Rand(seed)`: seeds both generators from `seed` as KataGo does.
    ///
    /// # Panics
    /// At compile time when `seed` is over 192 bytes (KataGo's seeds here
    /// are at most 70).
    pub(crate) const fn new(seed: &[u8]) -> KataRand {
        // s = "|" + decimal(MD5(seed)[0]) + "|" + seed
        let mut s = [0u8; 224];
        let mut n = 0;
        s[n] = b'|';
        n += 1;
        n = write_decimal(&mut s, n, md5_first_word(seed) as u64);
        s[n] = b'|';
        n += 1;
        assert!(n + seed.len() <= s.len(), "seed too long");
        let mut i = 0;
        while i < seed.len() {
            s[n] = seed[i];
            n += 1;
            i += 1;
        }

        // Nonzero 64-bit words from SHA-256(decimal(counter) + s), counter
        // stepping by 37, four words per digest.
        let mut words = Words {
            counter: 0,
            next: 4,
            hash: [0; 4],
        };
        let mut xorm = [0u64; 16];
        let mut i = 0;
        while i < 16 {
            xorm[i] = words.next_nonzero(&s, n);
            i += 1;
        }
        let pcg = words.next_nonzero(&s, n);
        KataRand {
            xorm,
            xorm_idx: 0,
            pcg,
        }
    }

    /// `Rand::nextUInt`: the PCG32 output plus the XorShift1024* output.
    pub(crate) const fn next_u32(&mut self) -> u32 {
        // PCG32 (XSH-RR).
        self.pcg = self
            .pcg
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let x = (((self.pcg >> 18) ^ self.pcg) >> 27) as u32;
        let pcg_out = x.rotate_right((self.pcg >> 59) as u32);
        // XorShift1024*.
        let a0 = self.xorm[self.xorm_idx];
        self.xorm_idx = (self.xorm_idx + 1) & 15;
        let mut a1 = self.xorm[self.xorm_idx];
        a1 ^= a1 << 31;
        a1 ^= a1 >> 11;
        let a0 = a0 ^ (a0 >> 30);
        self.xorm[self.xorm_idx] = a0 ^ a1;
        let xorm_out = (self.xorm[self.xorm_idx].wrapping_mul(1181783497276652981) >> 32) as u32;
        pcg_out.wrapping_add(xorm_out)
    }

    /// `Rand::nextUInt64`: two `next_u32`, the first the low half.
    pub(crate) const fn next_u64(&mut self) -> u64 {
        let lower = self.next_u32() as u64;
        let upper = self.next_u32() as u64;
        lower | (upper << 32)
    }
}

/// The seeding stream of `Rand::init(string)`.
struct Words {
    counter: u64,
    next: usize,
    hash: [u64; 4],
}

impl Words {
    const fn next_nonzero(&mut self, s: &[u8; 224], n: usize) -> u64 {
        loop {
            if self.next >= 4 {
                let mut msg = [0u8; 256];
                let mut len = write_decimal(&mut msg, 0, self.counter);
                let mut i = 0;
                while i < n {
                    msg[len] = s[i];
                    len += 1;
                    i += 1;
                }
                self.counter += 37;
                let digest = sha256(&msg, len);
                // SHA2::get256(msg, uint64_t[4]): big-endian words.
                let mut w = 0;
                while w < 4 {
                    let mut v = 0u64;
                    let mut b = 0;
                    while b < 8 {
                        v = (v << 8) | digest[w * 8 + b] as u64;
                        b += 1;
                    }
                    self.hash[w] = v;
                    w += 1;
                }
                self.next = 0;
            }
            let v = self.hash[self.next];
            self.next += 1;
            if v != 0 {
                return v;
            }
        }
    }
}

/// Writes `v` in decimal at `buf[at..]`; the new length.
const fn write_decimal<const N: usize>(buf: &mut [u8; N], at: usize, v: u64) -> usize {
    let mut digits = [0u8; 20];
    let mut d = 0;
    let mut v = v;
    loop {
        digits[d] = b'0' + (v % 10) as u8;
        d += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut at = at;
    while d > 0 {
        d -= 1;
        buf[at] = digits[d];
        at += 1;
    }
    at
}

/// The Merkle-Damgard padding MD5 and SHA-256 share: `msg`, a 0x80 byte,
/// zeros, then the bit length (big-endian for SHA-256, little-endian for
/// MD5) ending a multiple of 64 bytes; the padded blocks and their length.
///
/// # Panics
/// At compile time when `msg` does not fit in `N` bytes with its padding.
const fn pad<const N: usize>(msg: &[u8], big_endian: bool) -> ([u8; N], usize) {
    let len = msg.len();
    assert!(len + 9 <= N, "message too long");
    let mut block = [0u8; N];
    let mut i = 0;
    while i < len {
        block[i] = msg[i];
        i += 1;
    }
    block[len] = 0x80;
    let total = (len + 9).div_ceil(64) * 64;
    let bits = (len as u64) * 8;
    let mut b = 0;
    while b < 8 {
        let at = if big_endian {
            total - 1 - b
        } else {
            total - 8 + b
        };
        block[at] = (bits >> (8 * b)) as u8;
        b += 1;
    }
    (block, total)
}

/// SHA-256 of `msg[..len]` (FIPS 180-4), for messages of at most 247
/// bytes.
pub(crate) const fn sha256(msg: &[u8; 256], len: usize) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let (block, total) = pad::<256>(msg.split_at(len).0, true);
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut chunk = 0;
    while chunk < total {
        let mut w = [0u32; 64];
        let mut t = 0;
        while t < 16 {
            let o = chunk + 4 * t;
            w[t] = u32::from_be_bytes([block[o], block[o + 1], block[o + 2], block[o + 3]]);
            t += 1;
        }
        while t < 64 {
            let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
            let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16]
                .wrapping_add(s0)
                .wrapping_add(w[t - 7])
                .wrapping_add(s1);
            t += 1;
        }
        let (mut a, mut b, mut c, mut d) = (h[0], h[1], h[2], h[3]);
        let (mut e, mut f, mut g, mut hh) = (h[4], h[5], h[6], h[7]);
        t = 0;
        while t < 64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[t])
                .wrapping_add(w[t]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
            t += 1;
        }
        h[0] = h[0].wrapping_add(a);
        h[1] = h[1].wrapping_add(b);
        h[2] = h[2].wrapping_add(c);
        h[3] = h[3].wrapping_add(d);
        h[4] = h[4].wrapping_add(e);
        h[5] = h[5].wrapping_add(f);
        h[6] = h[6].wrapping_add(g);
        h[7] = h[7].wrapping_add(hh);
        chunk += 64;
    }
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 8 {
        let bytes = h[i].to_be_bytes();
        out[4 * i] = bytes[0];
        out[4 * i + 1] = bytes[1];
        out[4 * i + 2] = bytes[2];
        out[4 * i + 3] = bytes[3];
        i += 1;
    }
    out
}

/// The first 32-bit word (`h0`, as a number) of MD5(`msg`) (RFC 1321),
/// what KataGo's seeding reads of it; messages of at most 119 bytes.
pub(crate) const fn md5_first_word(msg: &[u8]) -> u32 {
    md5(msg)[0]
}

/// MD5 of `msg` as KataGo's `MD5::get` returns it: the four state words.
pub(crate) const fn md5(msg: &[u8]) -> [u32; 4] {
    const R: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    const K: [u32; 64] = [
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
        0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
        0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
        0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
        0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
        0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
        0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
        0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
        0xeb86d391,
    ];
    let (block, total) = pad::<128>(msg, false);
    let mut h: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
    let mut chunk = 0;
    while chunk < total {
        let mut w = [0u32; 16];
        let mut t = 0;
        while t < 16 {
            let o = chunk + 4 * t;
            w[t] = u32::from_le_bytes([block[o], block[o + 1], block[o + 2], block[o + 3]]);
            t += 1;
        }
        let (mut a, mut b, mut c, mut d) = (h[0], h[1], h[2], h[3]);
        t = 0;
        while t < 64 {
            let (f, g) = if t < 16 {
                ((b & c) | (!b & d), t)
            } else if t < 32 {
                ((d & b) | (!d & c), (5 * t + 1) % 16)
            } else if t < 48 {
                (b ^ c ^ d, (3 * t + 5) % 16)
            } else {
                (c ^ (b | !d), (7 * t) % 16)
            };
            let temp = d;
            d = c;
            c = b;
            b = b.wrapping_add(
                a.wrapping_add(f)
                    .wrapping_add(K[t])
                    .wrapping_add(w[g])
                    .rotate_left(R[t]),
            );
            a = temp;
            t += 1;
        }
        h[0] = h[0].wrapping_add(a);
        h[1] = h[1].wrapping_add(b);
        h[2] = h[2].wrapping_add(c);
        h[3] = h[3].wrapping_add(d);
        chunk += 64;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOX: &[u8] = b"The quick brown fox jumps over the lazy dog.";

    #[test]
    fn md5_matches_katagos_self_test() {
        // KataGo's Rand::runTests expects these words for this string.
        assert_eq!(md5(FOX), [0xC209D9E4, 0x1CFBD090, 0xADFF68A0, 0xD0CB22DF]);
        // RFC 1321's empty-string digest d41d8cd98f00b204e9800998ecf8427e
        // and a message spanning two blocks.
        assert_eq!(md5(b"")[0], u32::from_le_bytes([0xd4, 0x1d, 0x8c, 0xd9]));
        assert_eq!(md5(&[b'a'; 80])[0], 0xcdf95ab1);
    }

    #[test]
    fn rand_matches_katagos_self_test() {
        // KataGo's core/rand.cpp simpleTest: Rand("abc"), 24 nextUInt.
        let expected: [u32; 24] = [
            0x1C6B83BD, 0xFB7677DB, 0x698688D5, 0xA3CD21C3, 0xD0AD5B77, 0x8F889E6E, 0x22852278,
            0xD71A114D, 0x295EF301, 0xAA0CCA48, 0x0B7271BB, 0x4FE798FB, 0x26B4DD4B, 0x78B77C1B,
            0x231C4DFB, 0x17FB87C6, 0x9CC23870, 0x1C2C2CF7, 0x62D51240, 0xF1D1A7FF, 0x44C45C0A,
            0xF93ACFCE, 0x42B1D236, 0xC1069B75,
        ];
        let mut rand = KataRand::new(b"abc");
        let got: Vec<u32> = (0..24).map(|_| rand.next_u32()).collect();
        assert_eq!(got, expected);
    }

    fn sha(text: &[u8]) -> String {
        let mut msg = [0u8; 256];
        msg[..text.len()].copy_from_slice(text);
        sha256(&msg, text.len())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn sha256_matches_known_digests() {
        // KataGo's Rand::runTests expects this digest for this string.
        assert_eq!(
            sha(FOX),
            "ef537f25c895bfa782526529a9b63d97aa631564d5d789c2b765448c8635fb6c"
        );
        assert_eq!(
            sha(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        // FIPS 180-4's two-block example (56 bytes).
        assert_eq!(
            sha(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }
}
