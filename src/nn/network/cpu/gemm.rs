//! The GEMMs of the pure-Rust CPU network: our own AVX-512 and AVX2/FMA
//! kernels for the small products (a net's weights of a few dozen KB, read
//! in place), picked at run time by [`crate::nn::cpu_info::SimdPath`], and
//! `matrixmultiply`, which picks its own AVX2/FMA kernels and blocks for
//! the caches, for the large ones; an AVX-512 BF16 kernel for nets run in
//! bf16 (`nnPrecision = bf16`); and the 64-byte aligned weights they read.

mod blocks;
mod pages;

use std::cell::RefCell;

use super::super::builder::flush_denormals;
pub(super) use blocks::Prefetch;
#[cfg(target_arch = "x86_64")]
use blocks::{Block, BlockOrder};
use pages::Lines;

/// `c = a b` (or `c += a b` when `accumulate`), all row-major and dense:
/// `a` is `m x k`, `b` is `k x n`, `c` is `m x n`.
///
/// The small products of a net's layers (`b` of a few dozen KB, the
/// Winograd positions' and 1x1 convs' weights) go to [`small_gemm`] (or
/// [`small_gemm_avx512`] on the AVX-512 path), which
/// reads `b` in place (no packing: `matrixmultiply` spent as long packing
/// as multiplying on `b4c32`); the rest to `matrixmultiply`, which picks
/// its AVX2/FMA kernels at run time and blocks for the caches. The CPU
/// is asked for `next` as the product runs (see [`Prefetch`]).
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
    next: Prefetch,
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
                small_gemm_avx512((m, k, n), a, b, c, accumulate, next);
            } else {
                small_gemm((m, k, n), a, b, c, accumulate, next);
            }
        }
        return;
    }
    // `matrixmultiply`'s products are large enough to hide the requests.
    next.all();
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
/// Largest `b` (values) the small kernels take: they reread `b` once per
/// group of row blocks, so `b` must stay in L2. 1 MB of f32 takes every
/// product of a `b18c384nbt` net (up to 384 x 384 = 147 K values), which
/// ran 1.3x faster here than in `matrixmultiply` (2026-11-28, Zen 4 with
/// 1 MB of L2, 19x19 at batch 1 and 8, on the AVX-512 and AVX2 kernels;
/// the limit was 32 K until then). Larger products (not measured) keep
/// `matrixmultiply`'s cache blocking.
const SMALL_MAX_B: usize = 256 * 1024;

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
    next: Prefetch,
) {
    assert!(n % SMALL_NB == 0 && a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    for block in BlockOrder::new((m, n), (SMALL_MR, SMALL_NB, SMALL_GROUP)) {
        let Block { i0, rows, j0, .. } = block;
        // SAFETY: rows i0..i0+rows of `a` and `c` and columns j0..j0+16 of
        // `b` and `c` are inside the checked lengths.
        unsafe {
            let args = (
                (k, n, accumulate),
                a.add(i0 * k),
                b.add(j0),
                c.add(i0 * n + j0),
                next.part(block.index, block.count),
            );
            match rows {
                6 => gemm_block::<6>(args),
                5 => gemm_block::<5>(args),
                4 => gemm_block::<4>(args),
                3 => gemm_block::<3>(args),
                2 => gemm_block::<2>(args),
                _ => gemm_block::<1>(args),
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
unsafe fn gemm_block<const MR: usize>(((k, n, accumulate), a, b, c, next): BlockArgs<f32>) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract.
    unsafe {
        let mut lo = [_mm256_setzero_ps(); MR];
        let mut hi = [_mm256_setzero_ps(); MR];
        let mut brow = b;
        for kk in 0..k {
            next.step(kk);
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
        next.after(k);
    }
}

/// [`small_gemm`] with 512-bit vectors: blocks of up to
/// `SMALL512_MR x SMALL512_NB` accumulators ([`avx512_blocks`]), rows
/// split as evenly as [`small_gemm`] does. The broadcast of `a`'s value folds into the FMA
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
    next: Prefetch,
) {
    assert!(n % SMALL_NB == 0 && a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    // SAFETY: the caller's contract; the lengths are checked.
    unsafe {
        avx512_blocks::<F32Blocks>(
            (m, k, n, accumulate),
            (a.as_ptr(), b.as_ptr(), c.as_mut_ptr()),
            next,
        )
    };
}

/// A block kernel of the AVX-512 GEMMs: `c[0..MR][0..16 NV] (+)=` the
/// product of `MR` rows of `a` and `16 NV` columns of `b`, both of
/// `Elem`s (f32 values, or bf16 pairs), over `steps` elements of a row of
/// `a`.
#[cfg(target_arch = "x86_64")]
trait Avx512Block {
    type Elem;

    /// One block: `((steps, n, accumulate), a, b, c)`, rows of `a`
    /// `steps` apart, rows of `b` and `c` `n` apart.
    ///
    /// # Safety
    /// The kernel's instructions; the pointers address those values.
    unsafe fn block<const MR: usize, const NV: usize>(args: BlockArgs<Self::Elem>);
}

/// A block's arguments (see [`Avx512Block::block`]), and the lines it
/// asks the CPU for as it runs ([`Prefetch`]).
type BlockArgs<T> = ((usize, usize, bool), *const T, *const T, *mut f32, Prefetch);

/// The f32 kernel of [`small_gemm_avx512`].
#[cfg(target_arch = "x86_64")]
struct F32Blocks;

#[cfg(target_arch = "x86_64")]
impl Avx512Block for F32Blocks {
    type Elem = f32;

    #[inline(always)]
    unsafe fn block<const MR: usize, const NV: usize>(args: BlockArgs<f32>) {
        // SAFETY: the caller's contract.
        unsafe { gemm_block_avx512::<MR, NV>(args) }
    }
}

/// The bf16 kernel of [`small_gemm_bf16`].
#[cfg(target_arch = "x86_64")]
struct Bf16Blocks;

#[cfg(target_arch = "x86_64")]
impl Avx512Block for Bf16Blocks {
    type Elem = u32;

    #[inline(always)]
    unsafe fn block<const MR: usize, const NV: usize>(args: BlockArgs<u32>) {
        // SAFETY: the caller's contract.
        unsafe { gemm_block_bf16::<MR, NV>(args) }
    }
}

/// The AVX-512 GEMMs' blocks in [`BlockOrder`]: up to
/// `SMALL512_MR x SMALL512_NB` (the last column block 16 wide where `n`
/// is an odd multiple of 16), each by `K`, `steps` elements to a row of
/// `a`. Inlined into its caller, whose target features the kernel needs.
///
/// # Safety
/// `K`'s instructions; `a` holds `m x steps`, `b` `steps x n` and `c`
/// `m x n` values.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn avx512_blocks<K: Avx512Block>(
    (m, steps, n, accumulate): (usize, usize, usize, bool),
    (a, b, c): (*const K::Elem, *const K::Elem, *mut f32),
    next: Prefetch,
) {
    /// The block kernel for `rows` rows (1 to 12) and `$nv` vectors.
    macro_rules! block {
        ($rows:expr, $nv:literal, $args:expr) => {
            match $rows {
                12 => K::block::<12, $nv>($args),
                11 => K::block::<11, $nv>($args),
                10 => K::block::<10, $nv>($args),
                9 => K::block::<9, $nv>($args),
                8 => K::block::<8, $nv>($args),
                7 => K::block::<7, $nv>($args),
                6 => K::block::<6, $nv>($args),
                5 => K::block::<5, $nv>($args),
                4 => K::block::<4, $nv>($args),
                3 => K::block::<3, $nv>($args),
                2 => K::block::<2, $nv>($args),
                _ => K::block::<1, $nv>($args),
            }
        };
    }
    let shape = (SMALL512_MR, SMALL512_NB, SMALL512_GROUP);
    for block in BlockOrder::new((m, n), shape) {
        let Block { i0, rows, j0, .. } = block;
        // SAFETY: rows i0..i0+rows of `a` and `c` and columns j0..j0+32
        // (or +16, the last block of an odd multiple of 16) of `b` and `c`
        // are inside the lengths the caller vouches for.
        unsafe {
            let args = (
                (steps, n, accumulate),
                a.add(i0 * steps),
                b.add(j0),
                c.add(i0 * n + j0),
                next.part(block.index, block.count),
            );
            if n - j0 >= SMALL512_NB {
                block!(rows, 2, args);
            } else {
                block!(rows, 1, args);
            }
        }
    }
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
    ((k, n, accumulate), a, b, c, next): BlockArgs<f32>,
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); NV]; MR];
        let mut brow = b;
        for kk in 0..k {
            next.step(kk);
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
        next.after(k);
    }
}

/// Weights on 64-byte boundaries: [`small_gemm`] reads each row of `b` as
/// two 32-byte loads (the AVX-512 kernel as 64-byte ones), and a row
/// straddling two cache lines costs a split load (~25% slower on Zen 3
/// when measured); large ones on 2 MB pages (see [`Lines`]).
pub(super) struct AlignedWeights {
    lines: Lines<CacheLine>,
    len: usize,
    /// The same matrices rounded to bf16 for [`small_gemm_bf16`], where
    /// the net runs in bf16 and the kernel takes their shape.
    bf16: Option<Bf16Matrices>,
}

/// Weight matrices `k x n` in bf16, as [`small_gemm_bf16`] reads them:
/// row `p` of a matrix holds rows `2p` and `2p + 1` of the f32 matrix
/// interleaved, one `u32` per column (row `2p` in the low half, a zero
/// row past an odd `k`), the pairs `vdpbf16ps` multiplies and adds.
struct Bf16Matrices {
    lines: Lines<PairLine>,
    /// `(k, n)` of each matrix.
    shape: (usize, usize),
}

/// 16 bf16 pairs on a 64-byte boundary.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct PairLine([u32; 16]);

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
        let mut lines = Lines::filled(values.len().div_ceil(16), CacheLine([0.0; 16]));
        for (line, chunk) in lines.iter_mut().zip(values.chunks(16)) {
            line.0[..chunk.len()].copy_from_slice(chunk);
        }
        AlignedWeights {
            lines,
            len: values.len(),
            bf16: None,
        }
    }

    /// [`AlignedWeights::new`] for a run of `k x n` matrices (`values` is
    /// a whole number of them), with a bf16 copy for [`gemm_weights`] when
    /// `bf16` and the bf16 kernel takes the shape ([`bf16_gemm_takes`]).
    pub(super) fn matrices(values: &[f32], (k, n): (usize, usize), bf16: bool) -> AlignedWeights {
        let mut weights = AlignedWeights::new(values);
        debug_assert!(k * n > 0 && values.len().is_multiple_of(k * n));
        if bf16 && bf16_gemm_takes(k, n) {
            let pairs = bf16_pairs(&weights, (k, n));
            let mut lines = Lines::filled(pairs.len().div_ceil(16), PairLine([0; 16]));
            for (line, chunk) in lines.iter_mut().zip(pairs.chunks(16)) {
                line.0[..chunk.len()].copy_from_slice(chunk);
            }
            weights.bf16 = Some(Bf16Matrices {
                lines,
                shape: (k, n),
            });
        }
        weights
    }
}

/// `values`' `k x n` matrices as bf16 pairs (see [`Bf16Matrices`]).
fn bf16_pairs(values: &[f32], (k, n): (usize, usize)) -> Vec<u32> {
    let kp = k.div_ceil(2);
    let mut out = vec![0u32; values.len() / (k * n) * kp * n];
    for (matrix, dst) in values.chunks_exact(k * n).zip(out.chunks_exact_mut(kp * n)) {
        for (p, row) in dst.chunks_exact_mut(n).enumerate() {
            for (j, pair) in row.iter_mut().enumerate() {
                let low = bf16_bits(matrix[2 * p * n + j]);
                let high = match 2 * p + 1 < k {
                    true => bf16_bits(matrix[(2 * p + 1) * n + j]),
                    false => 0,
                };
                *pair = u32::from(low) | u32::from(high) << 16;
            }
        }
    }
    out
}

/// `v` rounded to the nearest bf16 (ties to even), as `vcvtne2ps2bf16`
/// rounds: a denormal becomes a zero of its sign, a NaN stays a NaN.
pub(super) fn bf16_bits(v: f32) -> u16 {
    let bits = v.to_bits();
    if v.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    if v.is_subnormal() {
        return ((bits >> 16) & 0x8000) as u16;
    }
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1));
    (rounded >> 16) as u16
}

/// The f32 value of a bf16.
#[cfg(test)]
pub(super) fn bf16_value(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
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

impl AlignedWeights {
    /// Matrix `index` of a run of `k x n` bf16 matrices.
    ///
    /// # Panics
    /// If the matrices were packed with another shape (a bug in the
    /// caller: the pairs would be read with the wrong strides).
    fn bf16_matrix(&self, index: usize, (k, n): (usize, usize)) -> Option<&[u32]> {
        let m = self.bf16.as_ref()?;
        assert_eq!(m.shape, (k, n), "bf16 weights packed for another shape");
        let per_matrix = k.div_ceil(2) * n;
        // SAFETY: `PairLine` is `repr(C)` over `[u32; 16]` with no
        // padding, so the lines are contiguous initialised `u32`s.
        let all = unsafe {
            std::slice::from_raw_parts(m.lines.as_ptr().cast::<u32>(), 16 * m.lines.len())
        };
        all.get(index * per_matrix..(index + 1) * per_matrix)
    }
}

/// [`gemm`] with `b` matrix `index` of `weights` (a run of `k x n`
/// matrices): in bf16 by [`small_gemm_bf16`] where `weights` has a bf16
/// copy and the CPU runs the kernel, in f32 otherwise (a path forced
/// without AVX-512 BF16 runs the f32 weights). While it runs, the CPU is
/// asked for `next` (see [`Prefetch`]).
pub(super) fn gemm_weights(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    (weights, index): (&AlignedWeights, usize),
    c: &mut [f32],
    accumulate: bool,
    next: Prefetch,
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(b) = bf16_operand(weights, index, (k, n)) {
        // SAFETY: the CPU has AVX-512F and AVX-512 BF16 (checked).
        unsafe { small_gemm_bf16((m, k, n), a, b, c, accumulate, next) };
        return;
    }
    gemm((m, k, n), a, &weights[index * k * n..], c, accumulate, next);
}

/// Matrix `index` of `weights` in bf16 pairs where the bf16 kernel reads
/// it (a bf16 copy exists and the kernel runs here), else `None` (the
/// product reads the f32 values).
#[cfg(target_arch = "x86_64")]
fn bf16_operand(weights: &AlignedWeights, index: usize, (k, n): (usize, usize)) -> Option<&[u32]> {
    weights.bf16_matrix(index, (k, n)).filter(|_| bf16_runs())
}

/// Whether [`small_gemm_bf16`] runs on this thread: the kernels are on
/// the AVX-512 path (not forced off it by a test) and the CPU has
/// AVX-512 BF16 (Intel since Cooper Lake and Sapphire Rapids, AMD since
/// Zen 4).
#[cfg(target_arch = "x86_64")]
fn bf16_runs() -> bool {
    has_avx512() && crate::nn::cpu_info::bf16_kernels_run()
}

/// Largest `b` (values) [`small_gemm_bf16`] takes: [`SMALL_MAX_B`]'s bytes
/// (bf16 values are half the size).
const BF16_MAX_B: usize = 2 * SMALL_MAX_B;

/// Whether a `[_, k] x [k, n]` product has a bf16 kernel (where the CPU
/// has AVX-512 BF16).
pub(super) fn bf16_gemm_takes(k: usize, n: usize) -> bool {
    n.is_multiple_of(SMALL_NB) && k * n <= BF16_MAX_B
}

thread_local! {
    /// [`small_gemm_bf16`]'s `a` in bf16 pairs, kept from call to call
    /// (no allocation once it has grown to the largest `a`).
    static A_PAIRS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// [`gemm`] with `b` in bf16 pairs (`k.div_ceil(2) x n`, see
/// [`Bf16Matrices`]), `a` rounded to bf16 on the way in, products summed
/// in f32 by `vdpbf16ps` (two multiply-adds per f32 lane, twice
/// [`small_gemm_avx512`]'s rate), in the same blocks ([`avx512_blocks`]).
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 BF16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16,avx2,fma")]
unsafe fn small_gemm_bf16(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    b: &[u32],
    c: &mut [f32],
    accumulate: bool,
    next: Prefetch,
) {
    let kp = k.div_ceil(2);
    assert!(n % SMALL_NB == 0 && a.len() >= m * k && b.len() >= kp * n && c.len() >= m * n);
    A_PAIRS.with_borrow_mut(|pairs| {
        pairs.resize(m * kp, 0);
        if k.is_multiple_of(2) {
            // Rows of whole pairs: the matrix is one run of pairs, converted
            // in one pass (a call per row was 7% slower at batch 1 on 19x19,
            // 4% on 13x13: g170 b6c96 on AMD Zen 4, 5 alternated pairs).
            // SAFETY: the caller's contract (the CPU has the instructions).
            unsafe { to_bf16_pairs(&a[..m * k], &mut pairs[..m * kp]) };
        } else {
            for (row, out) in a.chunks_exact(k).zip(pairs.chunks_exact_mut(kp)) {
                // SAFETY: the caller's contract (the CPU has the instructions).
                unsafe { to_bf16_pairs(row, out) };
            }
        }
        // SAFETY: the caller's contract; `pairs` holds `m x kp`, the
        // lengths of `b` and `c` are checked.
        unsafe {
            avx512_blocks::<Bf16Blocks>(
                (m, kp, n, accumulate),
                (pairs.as_ptr(), b.as_ptr(), c.as_mut_ptr()),
                next,
            )
        };
    });
}

/// `row` rounded to bf16 (ties to even), as pairs: `out[p]` holds
/// `row[2p]` low and `row[2p + 1]` high (0 past the end).
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 BF16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn to_bf16_pairs(row: &[f32], out: &mut [u32]) {
    use std::arch::x86_64::*;
    let whole = row.len() / 32;
    for i in 0..whole {
        // SAFETY: values 32i..32i+32 of `row` and pairs 16i..16i+16 of
        // `out` (`out` holds `row.len().div_ceil(2)`) exist.
        unsafe {
            let low = _mm512_loadu_ps(row.as_ptr().add(32 * i));
            let high = _mm512_loadu_ps(row.as_ptr().add(32 * i + 16));
            // The second operand fills the low 16 bf16s.
            let bf = _mm512_cvtne2ps_pbh(high, low);
            _mm512_storeu_si512(
                out.as_mut_ptr().add(16 * i).cast(),
                std::mem::transmute::<__m512bh, __m512i>(bf),
            );
        }
    }
    for (p, pair) in out.iter_mut().enumerate().skip(16 * whole) {
        let low = bf16_bits(row[2 * p]);
        let high = row.get(2 * p + 1).map_or(0, |&v| bf16_bits(v));
        *pair = u32::from(low) | u32::from(high) << 16;
    }
}

/// One `MR x 16 NV` block of [`small_gemm_bf16`]: `c[0..MR][0..16 NV]
/// (+)= a[0..MR][0..2 kp] b[0..2 kp][0..16 NV]`, `a` and `b` in bf16
/// pairs (rows of `a` `kp` pairs apart, rows of `b` and `c` `n` apart).
///
/// # Safety
/// AVX-512F and AVX-512 BF16; the pointers address those values.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn gemm_block_bf16<const MR: usize, const NV: usize>(
    ((kp, n, accumulate), a, b, c, next): BlockArgs<u32>,
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract; `__m512bh` and `__m512i` are both 64
    // bytes of plain data.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); NV]; MR];
        let mut brow = b;
        for p in 0..kp {
            next.step(p);
            let bv: [__m512bh; NV] = std::array::from_fn(|v| {
                std::mem::transmute(_mm512_loadu_si512(brow.add(16 * v).cast()))
            });
            brow = brow.add(n);
            for (r, row) in acc.iter_mut().enumerate() {
                let av: __m512bh =
                    std::mem::transmute(_mm512_set1_epi32(*a.add(r * kp + p) as i32));
                for (sum, bv) in row.iter_mut().zip(bv) {
                    *sum = _mm512_dpbf16_ps(*sum, av, bv);
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
        next.after(kp);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A product that asks for another matrix gives the same values as
    /// one that does not, on every kernel path this CPU runs.
    #[test]
    fn a_prefetching_product_is_the_same_product() {
        use crate::nn::cpu_info::SimdPath;
        let (m, k, n) = (25, 96, 96);
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0)
            .collect();
        let weights = AlignedWeights::new(
            &(0..2 * k * n)
                .map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0)
                .collect::<Vec<_>>(),
        );
        for path in SimdPath::ALL {
            if !path.runs_on_this_cpu() {
                continue;
            }
            SimdPath::with_forced(path, || {
                let mut plain = vec![0.0; m * n];
                let mut asking = vec![0.0; m * n];
                gemm_weights(
                    (m, k, n),
                    &a,
                    (&weights, 0),
                    &mut plain,
                    false,
                    Prefetch::NONE,
                );
                let next = Prefetch::matrix(&weights, 1, (k, n));
                gemm_weights((m, k, n), &a, (&weights, 0), &mut asking, false, next);
                assert_eq!(plain, asking, "{}", path.name());
            });
        }
    }
}
