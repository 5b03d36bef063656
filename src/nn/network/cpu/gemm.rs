//! The GEMMs of the pure-Rust CPU network: our own AVX-512 and AVX2/FMA
//! kernels for the small products (a net's weights of a few dozen KB, read
//! in place), picked at run time by [`crate::nn::cpu_info::SimdPath`], and
//! `matrixmultiply`, which picks its own AVX2/FMA kernels and blocks for
//! the caches, for the large ones; and the 64-byte aligned weights they
//! read.

use super::super::builder::flush_denormals;

/// `c = a b` (or `c += a b` when `accumulate`), all row-major and dense:
/// `a` is `m x k`, `b` is `k x n`, `c` is `m x n`.
///
/// The small products of a net's layers (`b` of a few dozen KB, the
/// Winograd positions' and 1x1 convs' weights) go to [`small_gemm`] (or
/// [`small_gemm_avx512`] on the AVX-512 path), which
/// reads `b` in place (no packing: `matrixmultiply` spent as long packing
/// as multiplying on `b4c32`); the rest to `matrixmultiply`, which picks
/// its AVX2/FMA kernels at run time and blocks for the caches.
///
/// # Panics
/// If a slice is shorter than its shape (a bug in the caller: every shape
/// here comes from the model, not from the user).
pub(super) fn gemm(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    accumulate: bool,
) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    if m == 0 || n == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if small_gemm_takes(k, n) {
        // SAFETY: the CPU has AVX2 and FMA (checked), and AVX-512F where
        // that kernel runs (checked).
        unsafe {
            if has_avx512() {
                small_gemm_avx512((m, k, n), a, b, c, accumulate);
            } else {
                small_gemm((m, k, n), a, b, c, accumulate);
            }
        }
        return;
    }
    let beta = if accumulate { 1.0 } else { 0.0 };
    // SAFETY: the three slices hold at least the m*k, k*n and m*n values
    // the row-major strides below address (checked above), and `c` is
    // exclusively borrowed so it aliases neither input.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// Columns of `c` one [`small_gemm`] block computes (two AVX2 vectors).
const SMALL_NB: usize = 16;
/// Rows of `c` one full [`small_gemm`] block computes: 6 x 16 keeps 12
/// accumulators in registers, enough independent FMAs to cover their
/// latency (8 were not: ~20% slower on Zen 3).
const SMALL_MR: usize = 6;
/// Row blocks [`small_gemm`] runs through all column blocks at a time
/// (48 rows x 96 channels = 18 KB of `a`: with a 6 KB column block of
/// `b`, in L1).
const SMALL_GROUP: usize = 8;
/// Largest `b` (values) [`small_gemm`] takes: it rereads `b` once per
/// block of rows, so `b` must stay in L1/L2.
const SMALL_MAX_B: usize = 32 * 1024;

/// Rows of `c` one full [`small_gemm_avx512`] block computes: 12 x 32
/// keeps 24 of the 32 vector registers as accumulators, and a 19x19
/// board's 25 Winograd tiles take 3 row blocks where 6-row blocks take 5
/// (each block rereads its column block of `b`).
const SMALL512_MR: usize = 12;
/// Columns of `c` one full [`small_gemm_avx512`] block computes (two
/// 512-bit vectors).
const SMALL512_NB: usize = 32;
/// Row blocks [`small_gemm_avx512`] runs through all column blocks at a
/// time (36 rows x 96 channels = 14 KB of `a`: with a 12 KB column block
/// of `b`, in a 32 KB L1).
const SMALL512_GROUP: usize = 3;

/// Whether the AVX2/FMA kernels run (the CPU has them, checked once, and
/// no test forces the portable path on this thread).
#[cfg(target_arch = "x86_64")]
fn has_fma() -> bool {
    crate::nn::cpu_info::SimdPath::current().has_avx2_fma()
}

/// Whether the AVX-512 kernels run (as [`has_fma`]).
#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    crate::nn::cpu_info::SimdPath::current() == crate::nn::cpu_info::SimdPath::Avx512
}

/// [`gemm`] for `n` a multiple of [`SMALL_NB`], by blocks of
/// `SMALL_MR x SMALL_NB` accumulators kept in registers (the row
/// remainder by smaller blocks): for each `k`, one row of `b`'s block
/// times a broadcast value of each of the block's rows of `a`. `b` is read
/// in place, unpacked; it runs fastest when `b`'s rows start on 64-byte
/// lines (see [`AlignedWeights`]).
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn small_gemm(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    accumulate: bool,
) {
    assert!(n % SMALL_NB == 0 && a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    for_each_block((m, n), (SMALL_MR, SMALL_NB, SMALL_GROUP), |i0, rows, j0| {
        // SAFETY: rows i0..i0+rows of `a` and `c` and columns j0..j0+16 of
        // `b` and `c` are inside the checked lengths.
        unsafe {
            let (a, b, c) = (a.add(i0 * k), b.add(j0), c.add(i0 * n + j0));
            match rows {
                6 => gemm_block::<6>((k, n), a, b, c, accumulate),
                5 => gemm_block::<5>((k, n), a, b, c, accumulate),
                4 => gemm_block::<4>((k, n), a, b, c, accumulate),
                3 => gemm_block::<3>((k, n), a, b, c, accumulate),
                2 => gemm_block::<2>((k, n), a, b, c, accumulate),
                _ => gemm_block::<1>((k, n), a, b, c, accumulate),
            }
        }
    });
}

/// The blocks of `c` (`m x n`) both small kernels compute, in their order:
/// `block(i0, rows, j0)` for rows `i0..i0 + rows` and the columns from
/// `j0` (`nb` of them, or fewer at the end). Row blocks are of as even a
/// size as possible (25 rows by 5-row blocks: 5 x 5, not 4 x 6 + 1: a
/// one-row block has too few accumulators to hide FMA latency), and run in
/// groups of `group`, whose rows of `a` stay in L1 across the column
/// blocks.
#[inline(always)]
fn for_each_block(
    (m, n): (usize, usize),
    (mr, nb, group): (usize, usize, usize),
    mut block: impl FnMut(usize, usize, usize),
) {
    let blocks = m.div_ceil(mr);
    let block_start = |i: usize| i * (m / blocks) + i.min(m % blocks);
    for g0 in (0..blocks).step_by(group) {
        let g1 = (g0 + group).min(blocks);
        for j0 in (0..n).step_by(nb) {
            for i in g0..g1 {
                block(block_start(i), block_start(i + 1) - block_start(i), j0);
            }
        }
    }
}

/// One `MR x 16` block of [`small_gemm`]: `c[0..MR][0..16] (+)= a[0..MR][0..k]
/// b[0..k][0..16]`, rows of `a` `k` apart, rows of `b` and `c` `n` apart.
///
/// # Safety
/// AVX2 and FMA; the pointers address those values.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn gemm_block<const MR: usize>(
    (k, n): (usize, usize),
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    accumulate: bool,
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract.
    unsafe {
        let mut lo = [_mm256_setzero_ps(); MR];
        let mut hi = [_mm256_setzero_ps(); MR];
        let mut brow = b;
        for kk in 0..k {
            let b0 = _mm256_loadu_ps(brow);
            let b1 = _mm256_loadu_ps(brow.add(8));
            brow = brow.add(n);
            for r in 0..MR {
                let av = _mm256_broadcast_ss(&*a.add(r * k + kk));
                lo[r] = _mm256_fmadd_ps(av, b0, lo[r]);
                hi[r] = _mm256_fmadd_ps(av, b1, hi[r]);
            }
        }
        for r in 0..MR {
            let dst = c.add(r * n);
            if accumulate {
                lo[r] = _mm256_add_ps(_mm256_loadu_ps(dst), lo[r]);
                hi[r] = _mm256_add_ps(_mm256_loadu_ps(dst.add(8)), hi[r]);
            }
            _mm256_storeu_ps(dst, lo[r]);
            _mm256_storeu_ps(dst.add(8), hi[r]);
        }
    }
}

/// [`small_gemm`] with 512-bit vectors: blocks of up to
/// `SMALL512_MR x SMALL512_NB` accumulators (the last column block 16
/// wide where `n` is an odd multiple of 16), rows split as evenly as
/// [`small_gemm`] does. The broadcast of `a`'s value folds into the FMA
/// (`{1to16}`), so each `k` step is two loads of `b` and one FMA per
/// accumulator.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn small_gemm_avx512(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    accumulate: bool,
) {
    assert!(n % SMALL_NB == 0 && a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    /// The block kernel for `rows` rows (1 to 12) and `$nv` vectors.
    macro_rules! block {
        ($rows:expr, $nv:literal, $args:expr) => {
            match $rows {
                12 => gemm_block_avx512::<12, $nv>($args),
                11 => gemm_block_avx512::<11, $nv>($args),
                10 => gemm_block_avx512::<10, $nv>($args),
                9 => gemm_block_avx512::<9, $nv>($args),
                8 => gemm_block_avx512::<8, $nv>($args),
                7 => gemm_block_avx512::<7, $nv>($args),
                6 => gemm_block_avx512::<6, $nv>($args),
                5 => gemm_block_avx512::<5, $nv>($args),
                4 => gemm_block_avx512::<4, $nv>($args),
                3 => gemm_block_avx512::<3, $nv>($args),
                2 => gemm_block_avx512::<2, $nv>($args),
                _ => gemm_block_avx512::<1, $nv>($args),
            }
        };
    }
    let shape = (SMALL512_MR, SMALL512_NB, SMALL512_GROUP);
    for_each_block((m, n), shape, |i0, rows, j0| {
        // SAFETY: rows i0..i0+rows of `a` and `c` and columns j0..j0+32
        // (or +16, the last block of an odd multiple of 16) of `b` and `c`
        // are inside the checked lengths.
        unsafe {
            let args = (
                (k, n, accumulate),
                a.add(i0 * k),
                b.add(j0),
                c.add(i0 * n + j0),
            );
            if n - j0 >= SMALL512_NB {
                block!(rows, 2, args);
            } else {
                block!(rows, 1, args);
            }
        }
    });
}

/// One `MR x 16 NV` block of [`small_gemm_avx512`]: `c[0..MR][0..16 NV]
/// (+)= a[0..MR][0..k] b[0..k][0..16 NV]`, rows of `a` `k` apart, rows of
/// `b` and `c` `n` apart.
///
/// # Safety
/// AVX-512F; the pointers address those values.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn gemm_block_avx512<const MR: usize, const NV: usize>(
    ((k, n, accumulate), a, b, c): ((usize, usize, bool), *const f32, *const f32, *mut f32),
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); NV]; MR];
        let mut brow = b;
        for kk in 0..k {
            let bv: [__m512; NV] = std::array::from_fn(|v| _mm512_loadu_ps(brow.add(16 * v)));
            brow = brow.add(n);
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_ps(*a.add(r * k + kk));
                for (sum, bv) in row.iter_mut().zip(bv) {
                    *sum = _mm512_fmadd_ps(av, bv, *sum);
                }
            }
        }
        for (r, row) in acc.into_iter().enumerate() {
            for (v, mut sum) in row.into_iter().enumerate() {
                let dst = c.add(r * n + 16 * v);
                if accumulate {
                    sum = _mm512_add_ps(_mm512_loadu_ps(dst), sum);
                }
                _mm512_storeu_ps(dst, sum);
            }
        }
    }
}

/// Weights on 64-byte boundaries: [`small_gemm`] reads each row of `b` as
/// two 32-byte loads (the AVX-512 kernel as 64-byte ones), and a row
/// straddling two cache lines costs a split load (~25% slower on Zen 3
/// when measured).
pub(super) struct AlignedWeights {
    lines: Vec<CacheLine>,
    len: usize,
}

/// 16 floats on a 64-byte boundary.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct CacheLine([f32; 16]);

impl AlignedWeights {
    /// The weights, denormal ones flushed to 0: a denormal operand slows
    /// the FMAs of every product it enters a hundredfold on x86 (measured:
    /// 0.5 against 63 GFLOP/s), and its value changes no output. Some
    /// trained nets hold them (KaTrain's `b10c384h6nbttflrs`).
    pub(super) fn new(values: &[f32]) -> AlignedWeights {
        let values = flush_denormals(values);
        let mut lines = vec![CacheLine([0.0; 16]); values.len().div_ceil(16)];
        for (line, chunk) in lines.iter_mut().zip(values.chunks(16)) {
            line.0[..chunk.len()].copy_from_slice(chunk);
        }
        AlignedWeights {
            lines,
            len: values.len(),
        }
    }
}

impl std::ops::Deref for AlignedWeights {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        // SAFETY: `CacheLine` is `repr(C)` over `[f32; 16]` with no padding
        // (64 bytes, align 64), so the lines are `16 * lines.len() >= len`
        // contiguous initialised floats.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<f32>(), self.len) }
    }
}

/// Whether [`gemm`] runs a `[_, ci] x [ci, co]` product with [`small_gemm`].
pub(super) fn small_gemm_takes(ci: usize, co: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        co.is_multiple_of(SMALL_NB) && ci * co <= SMALL_MAX_B && has_fma()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (ci, co);
        false
    }
}
