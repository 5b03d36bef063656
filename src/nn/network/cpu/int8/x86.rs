//! The int8 kernels' SIMD bodies, 512-bit (AVX-512F and VNNI) and
//! 256-bit (AVX2, FMA and AVX-VNNI): the same arithmetic at two
//! widths.

use std::arch::x86_64::*;

use super::Shape;
use crate::nn::network::winograd::Epilogue;

/// [`super::quantise`] for the channels a multiple of 16 covers;
/// returns that count (the caller does the rest).
///
/// # Safety
/// AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn quantise_512(
    src: &[f32],
    (inv, zero): (&[f32], &[f32]),
    dst: &mut [u32],
) -> usize {
    let ci = inv.len();
    let vector = ci - ci % 16;
    for (point, words) in src.chunks_exact(ci).zip(dst.chunks_exact_mut(ci / 4)) {
        for c in (0..vector).step_by(16) {
            // SAFETY: channels c..c+16 of the point, of `inv` and
            // `zero`, and words c/4..c/4+4 of `words` exist.
            unsafe {
                let x = _mm512_fmadd_ps(
                    _mm512_loadu_ps(point.as_ptr().add(c)),
                    _mm512_loadu_ps(inv.as_ptr().add(c)),
                    _mm512_loadu_ps(zero.as_ptr().add(c)),
                );
                // Round to nearest even (the default rounding mode);
                // below 0 to 0 before the unsigned saturation, which
                // would take it for a large number.
                let v = _mm512_max_epi32(_mm512_cvtps_epi32(x), _mm512_setzero_si512());
                _mm_storeu_si128(
                    words.as_mut_ptr().add(c / 4).cast(),
                    _mm512_cvtusepi32_epi8(v),
                );
            }
        }
    }
    vector
}

/// [`super::quantise`] for the channels a multiple of 8 covers;
/// returns that count.
///
/// # Safety
/// AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn quantise_256(
    src: &[f32],
    (inv, zero): (&[f32], &[f32]),
    dst: &mut [u32],
) -> usize {
    let ci = inv.len();
    let vector = ci - ci % 8;
    for (point, words) in src.chunks_exact(ci).zip(dst.chunks_exact_mut(ci / 4)) {
        for c in (0..vector).step_by(8) {
            // SAFETY: channels c..c+8 of the point, of `inv` and
            // `zero`, and words c/4..c/4+2 of `words` exist.
            unsafe {
                let x = _mm256_fmadd_ps(
                    _mm256_loadu_ps(point.as_ptr().add(c)),
                    _mm256_loadu_ps(inv.as_ptr().add(c)),
                    _mm256_loadu_ps(zero.as_ptr().add(c)),
                );
                // Round to nearest even; the two packs saturate
                // (signed to unsigned, so below 0 becomes 0) to 16
                // then 8 bits, the 8 channels in order in the low 8
                // bytes.
                let v = _mm256_cvtps_epi32(x);
                let words16 =
                    _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
                _mm_storel_epi64(
                    words.as_mut_ptr().add(c / 4).cast(),
                    _mm_packus_epi16(words16, words16),
                );
            }
        }
    }
    vector
}

/// [`super::dequantise`] in 512-bit registers.
///
/// # Safety
/// AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn dequantise_512(
    sums: &[i32],
    (offsets, scales, bias): (&[i32], &[f32], &[f32]),
    epilogue: Epilogue,
    dst: &mut [f32],
) {
    let co = offsets.len();
    for (point, out) in sums.chunks_exact(co).zip(dst.chunks_exact_mut(co)) {
        for c in (0..co).step_by(16) {
            // SAFETY: channels c..c+16 of every slice exist (16
            // divides `co`).
            unsafe {
                let sum = _mm512_sub_epi32(
                    _mm512_loadu_si512(point.as_ptr().add(c).cast()),
                    _mm512_loadu_si512(offsets.as_ptr().add(c).cast()),
                );
                let mut v = _mm512_fmadd_ps(
                    _mm512_cvtepi32_ps(sum),
                    _mm512_loadu_ps(scales.as_ptr().add(c)),
                    _mm512_loadu_ps(bias.as_ptr().add(c)),
                );
                match epilogue {
                    Epilogue::Store => {}
                    Epilogue::ReluMasked => v = _mm512_max_ps(v, _mm512_setzero_ps()),
                    Epilogue::Accumulate => {
                        v = _mm512_add_ps(v, _mm512_loadu_ps(out.as_ptr().add(c)));
                    }
                }
                _mm512_storeu_ps(out.as_mut_ptr().add(c), v);
            }
        }
    }
}

/// [`super::dequantise`] in 256-bit registers.
///
/// # Safety
/// AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn dequantise_256(
    sums: &[i32],
    (offsets, scales, bias): (&[i32], &[f32], &[f32]),
    epilogue: Epilogue,
    dst: &mut [f32],
) {
    let co = offsets.len();
    for (point, out) in sums.chunks_exact(co).zip(dst.chunks_exact_mut(co)) {
        for c in (0..co).step_by(8) {
            // SAFETY: channels c..c+8 of every slice exist (8 divides
            // `co`).
            unsafe {
                let sum = _mm256_sub_epi32(
                    _mm256_loadu_si256(point.as_ptr().add(c).cast()),
                    _mm256_loadu_si256(offsets.as_ptr().add(c).cast()),
                );
                let mut v = _mm256_fmadd_ps(
                    _mm256_cvtepi32_ps(sum),
                    _mm256_loadu_ps(scales.as_ptr().add(c)),
                    _mm256_loadu_ps(bias.as_ptr().add(c)),
                );
                match epilogue {
                    Epilogue::Store => {}
                    Epilogue::ReluMasked => v = _mm256_max_ps(v, _mm256_setzero_ps()),
                    Epilogue::Accumulate => {
                        v = _mm256_add_ps(v, _mm256_loadu_ps(out.as_ptr().add(c)));
                    }
                }
                _mm256_storeu_ps(out.as_mut_ptr().add(c), v);
            }
        }
    }
}

/// One register width of `vpdpbusd` and the moves around it, so that
/// [`blocks_of`] is written once for both kernels.
trait Lanes {
    type V: Copy;
    /// `i32` lanes per register.
    const WIDTH: usize;
    unsafe fn zero() -> Self::V;
    unsafe fn load(p: *const i32) -> Self::V;
    unsafe fn store(p: *mut i32, v: Self::V);
    unsafe fn splat(word: i32) -> Self::V;
    /// `acc + sum of the 4 u8 x i8 products` per lane.
    unsafe fn dot(acc: Self::V, inputs: Self::V, weights: Self::V) -> Self::V;
}

/// 512-bit registers (AVX-512F, AVX-512 VNNI).
struct Zmm;

impl Lanes for Zmm {
    type V = __m512i;
    const WIDTH: usize = 16;
    #[inline(always)]
    unsafe fn zero() -> __m512i {
        _mm512_setzero_si512()
    }
    #[inline(always)]
    unsafe fn load(p: *const i32) -> __m512i {
        // SAFETY: the caller's.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut i32, v: __m512i) {
        // SAFETY: the caller's.
        unsafe { _mm512_storeu_si512(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn splat(word: i32) -> __m512i {
        _mm512_set1_epi32(word)
    }
    #[inline(always)]
    unsafe fn dot(acc: __m512i, inputs: __m512i, weights: __m512i) -> __m512i {
        _mm512_dpbusd_epi32(acc, inputs, weights)
    }
}

/// 256-bit registers (AVX2, AVX-VNNI).
struct Ymm;

impl Lanes for Ymm {
    type V = __m256i;
    const WIDTH: usize = 8;
    #[inline(always)]
    unsafe fn zero() -> __m256i {
        _mm256_setzero_si256()
    }
    #[inline(always)]
    unsafe fn load(p: *const i32) -> __m256i {
        // SAFETY: the caller's.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut i32, v: __m256i) {
        // SAFETY: the caller's.
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn splat(word: i32) -> __m256i {
        _mm256_set1_epi32(word)
    }
    #[inline(always)]
    unsafe fn dot(acc: __m256i, inputs: __m256i, weights: __m256i) -> __m256i {
        _mm256_dpbusd_avx_epi32(acc, inputs, weights)
    }
}

/// `NB` vectors of `L::WIDTH` output channels from `shape.c0` for every
/// point, over the three taps of `shape.tap_row` (added to the sums of the
/// rows before), `MR` points at a time: per tap and input group, `NB`
/// weight vectors loaded once and `MR` broadcast inputs, `MR x NB`
/// `vpdpbusd`s into registers. Inlined into [`blocks_of_512`] and
/// [`blocks_of_256`], which enable the instructions.
///
/// # Safety
/// `L`'s instructions; as [`super::conv_points`].
#[inline(always)]
unsafe fn blocks_of<L: Lanes, const MR: usize, const NB: usize>(
    shape: Shape,
    input: *const u32,
    weights: *const i32,
    sums: *mut i32,
) {
    let Shape {
        first,
        count,
        wp,
        groups,
        co,
        c0,
        tap_row,
    } = shape;
    // Tap (ty, tx) of point p reads point p + (ty - 1) wp + tx - 1.
    let offset = |tx: usize| (tap_row * wp + tx) as isize - wp as isize - 1;
    let mut p = first;
    // SAFETY: the caller's contract.
    unsafe {
        while p < first + count {
            let out = |r: usize, j: usize| sums.add((p + r) * co + c0 + L::WIDTH * j);
            let mut acc = [[L::zero(); NB]; MR];
            if tap_row > 0 {
                for (r, acc) in acc.iter_mut().enumerate() {
                    for (j, sum) in acc.iter_mut().enumerate() {
                        *sum = L::load(out(r, j));
                    }
                }
            }
            for tx in 0..3 {
                let tap = 3 * tap_row + tx;
                let row = input.offset((p as isize + offset(tx)) * groups as isize);
                for g in 0..groups {
                    let w = weights.add((tap * groups + g) * co + c0);
                    let wv: [L::V; NB] = std::array::from_fn(|j| L::load(w.add(L::WIDTH * j)));
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let a = L::splat(*row.add(r * groups + g) as i32);
                        for (sum, &wv) in acc.iter_mut().zip(&wv) {
                            *sum = L::dot(*sum, a, wv);
                        }
                    }
                }
            }
            for (r, acc) in acc.iter().enumerate() {
                for (j, &sum) in acc.iter().enumerate() {
                    L::store(out(r, j), sum);
                }
            }
            p += MR;
        }
    }
}

/// [`blocks_of`] in 512-bit registers: `NB` vectors of 16 channels.
///
/// # Safety
/// AVX-512F and AVX-512 VNNI; as [`super::conv_points`].
#[target_feature(enable = "avx512f,avx512vnni")]
pub(super) unsafe fn blocks_of_512<const MR: usize, const NB: usize>(
    shape: Shape,
    input: *const u32,
    weights: *const i32,
    sums: *mut i32,
) {
    // SAFETY: the caller's contract; the instructions are enabled here.
    unsafe { blocks_of::<Zmm, MR, NB>(shape, input, weights, sums) }
}

/// [`blocks_of`] in 256-bit registers: `NB` vectors of 8 channels.
///
/// # Safety
/// AVX2 and AVX-VNNI; as [`super::conv_points`].
#[target_feature(enable = "avx2,avxvnni")]
pub(super) unsafe fn blocks_of_256<const MR: usize, const NB: usize>(
    shape: Shape,
    input: *const u32,
    weights: *const i32,
    sums: *mut i32,
) {
    // SAFETY: the caller's contract; the instructions are enabled here.
    unsafe { blocks_of::<Ymm, MR, NB>(shape, input, weights, sums) }
}
