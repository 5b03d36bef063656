//! An int8 3x3 convolution on AVX-512 VNNI (`vpdpbusd`), measured against
//! the backend's fp32 and bf16 convolutions on the same layer (issue 70's
//! point 2: whether `nnPrecision = "int8"` could pay). No net runs it: it
//! is here so that `benches/int8.rs` times the real thing (quantising the
//! input, the kernel, and scaling back to f32 with the bias) beside the
//! real [`Conv`], and so that its unit tests pin what it computes.
//!
//! The scheme is the usual one for a post-ReLU trunk: activations as `u8`
//! with one scale and a zero point per tensor (the zero point also pads the
//! board's edge, so padding costs nothing), weights as `i8` with one scale
//! per output channel, sums in `i32` (exact), then `(sum - zero * sum of the
//! channel's weights) * scale_in * scale_w + bias` in f32. It runs directly
//! (nine taps), not by Winograd: Winograd's transforms widen the range of
//! the values the GEMMs see, which 8 bits cannot hold.

use std::sync::{Mutex, OnceLock};

use crate::nn::network::winograd::Epilogue;

/// A 3x3 convolution (stride 1, zero padding) on `u8` inputs quantised per
/// input channel, with the input scales folded into the weights before
/// they are quantised to `i8` per output channel, in the layout
/// [`conv_points`] reads.
pub(super) struct Int8Conv3x3 {
    ci: usize,
    co: usize,
    /// Per group of 4 input channels, their zero points: the value of
    /// every point off the board.
    pad: Vec<u32>,
    /// Per input channel, `1 / scale` and the zero point as f32, for
    /// [`quantise`].
    inv_scale: Vec<f32>,
    zero: Vec<f32>,
    /// `[9 taps][ci / 4 groups][co / 16 blocks][16 lanes]`: four input
    /// channels' `i8` weights of one output channel packed in an `i32`.
    packed: Vec<i32>,
    /// Per output channel: the scale of its `i8` (folded) weights.
    w_scale: Vec<f32>,
    /// Per output channel: the zero points' share of every sum,
    /// `sum over taps and inputs c of zero[c] * weight`.
    offsets: Vec<i32>,
    bias: Vec<f32>,
}

/// How activations map to `u8`, per channel: `x = (q - zero) * scale`.
#[derive(Debug, Clone)]
pub(super) struct InputQuant {
    pub scale: Vec<f32>,
    pub zero: Vec<u8>,
}

impl InputQuant {
    /// Per channel, the scale and zero point covering `[min(lo, 0),
    /// max(hi, 0)]` (0 is exact, so the board's padding is; a channel that
    /// was always 0 gets `[0, 1]`).
    pub fn covering(ranges: &[(f32, f32)]) -> InputQuant {
        let (scale, zero) = ranges
            .iter()
            .map(|&(lo, hi)| {
                let (lo, hi) = (lo.min(0.0), hi.max(0.0));
                let scale = if hi > lo {
                    (hi - lo) / 255.0
                } else {
                    1.0 / 255.0
                };
                (scale, (-lo / scale).round().clamp(0.0, 255.0) as u8)
            })
            .unzip();
        InputQuant { scale, zero }
    }
}

impl Int8Conv3x3 {
    /// From `[out, in, 3, 3]` weights, a bias per output channel and the
    /// input's quantisation; `ci` a multiple of 4 and `co` of 16.
    pub fn new(
        w: &[f32],
        bias: &[f32],
        (ci, co): (usize, usize),
        quant: InputQuant,
    ) -> Int8Conv3x3 {
        assert!(ci % 4 == 0 && co % 16 == 0 && w.len() == co * ci * 9 && bias.len() == co);
        assert!(quant.scale.len() == ci && quant.zero.len() == ci);
        let (groups, blocks) = (ci / 4, co / 16);
        let mut packed = vec![0i32; 9 * groups * co];
        let mut w_scale = vec![0f32; co];
        let mut offsets = vec![0i32; co];
        let mut folded = vec![0f32; ci * 9];
        for oc in 0..co {
            for (ic, taps) in folded.chunks_exact_mut(9).enumerate() {
                for (tap, v) in taps.iter_mut().enumerate() {
                    *v = w[(oc * ci + ic) * 9 + tap] * quant.scale[ic];
                }
            }
            let max = folded.iter().fold(0f32, |m, v| m.max(v.abs()));
            let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
            w_scale[oc] = scale;
            for ic in 0..ci {
                for tap in 0..9 {
                    let q = (folded[ic * 9 + tap] / scale).round().clamp(-127.0, 127.0) as i8;
                    offsets[oc] += i32::from(quant.zero[ic]) * i32::from(q);
                    let word = ((tap * groups + ic / 4) * blocks + oc / 16) * 16 + oc % 16;
                    packed[word] |= i32::from(q as u8) << (8 * (ic % 4));
                }
            }
        }
        Int8Conv3x3 {
            ci,
            co,
            pad: quant
                .zero
                .chunks_exact(4)
                .map(|z| u32::from_ne_bytes([z[0], z[1], z[2], z[3]]))
                .collect(),
            inv_scale: quant.scale.iter().map(|s| 1.0 / s).collect(),
            zero: quant.zero.iter().map(|&z| f32::from(z)).collect(),
            packed,
            w_scale,
            offsets,
            bias: bias.to_vec(),
        }
    }

    /// Convolves `input` (`[n, h, w, ci]` f32) into `out` (`[n, h, w, co]`
    /// f32), finished as `epilogue` says (`ReluMasked` applies the ReLU;
    /// masking is the caller's). `scratch` keeps the padded `u8` input and
    /// the `i32` sums between calls.
    ///
    /// # Panics
    /// Where the CPU lacks AVX-512F and AVX-512 VNNI ([`vnni_runs`]).
    pub fn run(
        &self,
        input: &[f32],
        (n, h, w): (usize, usize, usize),
        out: &mut [f32],
        epilogue: Epilogue,
        scratch: &mut Int8Scratch,
    ) {
        assert!(vnni_runs(), "the int8 kernel needs AVX-512 VNNI");
        let (ci, co, groups) = (self.ci, self.co, self.ci / 4);
        let (hp, wp) = (h + 2, w + 2);
        let padded = n * hp * wp;
        // Room past the last point for a kernel's last block of points.
        let slack = 16;
        // Every point off the board holds each channel's zero point.
        scratch.input.clear();
        scratch
            .input
            .extend(std::iter::repeat_n(self.pad.iter().copied(), padded + slack).flatten());
        for b in 0..n {
            for y in 0..h {
                let src = &input[(b * h + y) * w * ci..][..w * ci];
                let dst = &mut scratch.input[((b * hp + y + 1) * wp + 1) * groups..][..w * groups];
                // SAFETY: the CPU has AVX-512F (asserted above).
                unsafe { quantise(src, (&self.inv_scale, &self.zero), dst) };
            }
        }
        // Every point read back is written first (the first tap row
        // stores), so old sums need no clearing.
        if scratch.sums.len() < (padded + slack) * co {
            scratch.sums.resize((padded + slack) * co, 0);
        }
        // Every padded point from the first on-board one of the first
        // board to the last of the last: the edge points between are
        // computed and dropped (2 columns of w + 2, and 2 rows per board).
        let (first, last) = (wp + 1, padded - wp - 1);
        // SAFETY: the CPU has the instructions (asserted above); the
        // buffers hold `padded + slack` points, so every block of points
        // from `first` to `last` and its taps (at most `wp + 1` away) are
        // inside.
        unsafe {
            conv_points(
                (first, last - first, wp),
                (groups, co / 16),
                scratch.input.as_ptr(),
                self.packed.as_ptr(),
                scratch.sums.as_mut_ptr(),
            )
        };
        for b in 0..n {
            for y in 0..h {
                let sums = &scratch.sums[((b * hp + y + 1) * wp + 1) * co..][..w * co];
                let dst = &mut out[(b * h + y) * w * co..][..w * co];
                // SAFETY: the CPU has AVX-512F (asserted above).
                unsafe {
                    dequantise(
                        sums,
                        (&self.offsets, &self.w_scale, &self.bias),
                        epilogue,
                        dst,
                    )
                };
            }
        }
    }
}

/// `src` (f32 points of `inv.len()` channels, 4 channels per word of
/// `dst`) as `u8`: `x * inv + zero` per channel, rounded to nearest (even),
/// clamped to 0..=255.
///
/// # Safety
/// AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn quantise(src: &[f32], (inv, zero): (&[f32], &[f32]), dst: &mut [u32]) {
    use std::arch::x86_64::*;
    let ci = inv.len();
    let vector = ci - ci % 16;
    for (point, words) in src.chunks_exact(ci).zip(dst.chunks_exact_mut(ci / 4)) {
        for c in (0..vector).step_by(16) {
            // SAFETY: channels c..c+16 of the point, of `inv` and `zero`,
            // and words c/4..c/4+4 of `words` exist.
            unsafe {
                let x = _mm512_fmadd_ps(
                    _mm512_loadu_ps(point.as_ptr().add(c)),
                    _mm512_loadu_ps(inv.as_ptr().add(c)),
                    _mm512_loadu_ps(zero.as_ptr().add(c)),
                );
                // Round to nearest even (the default rounding mode); below
                // 0 to 0 before the unsigned saturation, which would take
                // it for a large number.
                let v = _mm512_max_epi32(_mm512_cvtps_epi32(x), _mm512_setzero_si512());
                _mm_storeu_si128(
                    words.as_mut_ptr().add(c / 4).cast(),
                    _mm512_cvtusepi32_epi8(v),
                );
            }
        }
        for c in (vector..ci).step_by(4) {
            let bytes: [u8; 4] = std::array::from_fn(|i| {
                (point[c + i] * inv[c + i] + zero[c + i])
                    .round_ties_even()
                    .clamp(0.0, 255.0) as u8
            });
            words[c / 4] = u32::from_ne_bytes(bytes);
        }
    }
}

/// `(sums - offsets) * scales + bias`, per channel (`co` of them, a
/// multiple of 16, repeating), into `dst` as `epilogue` says (stored,
/// ReLU then stored, or added).
///
/// # Safety
/// AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn dequantise(
    sums: &[i32],
    (offsets, scales, bias): (&[i32], &[f32], &[f32]),
    epilogue: Epilogue,
    dst: &mut [f32],
) {
    use std::arch::x86_64::*;
    let co = offsets.len();
    for (point, out) in sums.chunks_exact(co).zip(dst.chunks_exact_mut(co)) {
        for c in (0..co).step_by(16) {
            // SAFETY: channels c..c+16 of every slice exist (16 divides
            // `co`).
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

#[cfg(not(target_arch = "x86_64"))]
unsafe fn quantise(_: &[f32], _: (&[f32], &[f32]), _: &mut [u32]) {
    unreachable!("vnni_runs() is false off x86-64")
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn dequantise(_: &[i32], _: (&[i32], &[f32], &[f32]), _: Epilogue, _: &mut [f32]) {
    unreachable!("vnni_runs() is false off x86-64")
}

/// [`Int8Conv3x3::run`]'s buffers, kept from call to call.
#[derive(Default)]
pub(super) struct Int8Scratch {
    input: Vec<u32>,
    sums: Vec<i32>,
}

/// Whether the CPU has AVX-512F and AVX-512 VNNI.
pub(super) fn vnni_runs() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The sums of `count` padded points from `first` (rows of the padded
/// board `wp` points apart): `groups` groups of 4 input channels, `blocks`
/// blocks of 16 output channels, taken 6 blocks at a time in `MR`-point
/// register blocks.
///
/// # Safety
/// AVX-512F and AVX-512 VNNI; `input` holds `first + count + wp + 17`
/// points of `groups` words, `sums` `first + count + 16` of `16 blocks`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn conv_points(
    (first, count, wp): (usize, usize, usize),
    (groups, blocks): (usize, usize),
    input: *const u32,
    weights: *const i32,
    sums: *mut i32,
) {
    // Blocks of 6 output blocks, one row of 3 taps at a time: that row's
    // weights (3 x 6 x 64 bytes per input group: 27 KB for 96 channels)
    // stay in L1 while every point passes, the sums going to memory and
    // back between rows (a few percent of the multiply-adds' time).
    let mut b0 = 0;
    while b0 < blocks {
        let take = (blocks - b0).min(6);
        for tap_row in 0..3 {
            let shape = (first, count, wp, groups, blocks, b0, tap_row);
            // SAFETY: the caller's contract.
            unsafe {
                match take {
                    6 => blocks_of::<4, 6>(shape, input, weights, sums),
                    5 => blocks_of::<4, 5>(shape, input, weights, sums),
                    4 => blocks_of::<6, 4>(shape, input, weights, sums),
                    3 => blocks_of::<8, 3>(shape, input, weights, sums),
                    2 => blocks_of::<12, 2>(shape, input, weights, sums),
                    _ => blocks_of::<16, 1>(shape, input, weights, sums),
                }
            }
        }
        b0 += take;
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn conv_points(
    _: (usize, usize, usize),
    _: (usize, usize),
    _: *const u32,
    _: *const i32,
    _: *mut i32,
) {
    unreachable!("vnni_runs() is false off x86-64")
}

/// `NB` output blocks from block `b0` for every point, over the three
/// taps of `tap_row` (added to the sums of the rows before), `MR` points at
/// a time: per tap and input group, `NB` weight vectors loaded once and
/// `MR` broadcast inputs, `MR x NB` `vpdpbusd`s into registers.
///
/// # Safety
/// As [`conv_points`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn blocks_of<const MR: usize, const NB: usize>(
    (first, count, wp, groups, blocks, b0, tap_row): (
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
    ),
    input: *const u32,
    weights: *const i32,
    sums: *mut i32,
) {
    use std::arch::x86_64::*;
    let co = 16 * blocks;
    // Tap (ty, tx) of point p reads point p + (ty - 1) wp + tx - 1.
    let offset = |tx: usize| (tap_row * wp + tx) as isize - wp as isize - 1;
    let mut p = first;
    // SAFETY: the caller's contract.
    unsafe {
        while p < first + count {
            let out = |r: usize, j: usize| sums.add((p + r) * co + (b0 + j) * 16);
            let mut acc = [[_mm512_setzero_si512(); NB]; MR];
            if tap_row > 0 {
                for (r, acc) in acc.iter_mut().enumerate() {
                    for (j, sum) in acc.iter_mut().enumerate() {
                        *sum = _mm512_loadu_si512(out(r, j).cast());
                    }
                }
            }
            for tx in 0..3 {
                let tap = 3 * tap_row + tx;
                let row = input.offset((p as isize + offset(tx)) * groups as isize);
                for g in 0..groups {
                    let w = weights.add(((tap * groups + g) * blocks + b0) * 16);
                    let wv: [__m512i; NB] =
                        std::array::from_fn(|j| _mm512_loadu_si512(w.add(16 * j).cast()));
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let a = _mm512_set1_epi32(*row.add(r * groups + g) as i32);
                        for (sum, &wv) in acc.iter_mut().zip(&wv) {
                            *sum = _mm512_dpbusd_epi32(*sum, a, wv);
                        }
                    }
                }
            }
            for (r, acc) in acc.iter().enumerate() {
                for (j, &sum) in acc.iter().enumerate() {
                    _mm512_storeu_si512(out(r, j).cast(), sum);
                }
            }
            p += MR;
        }
    }
}

/// A 3x3 conv's int8 form in a net run in int8: its f32 weights and the
/// range of each input channel while calibrating, then the int8 conv built
/// for the range of them all.
pub(super) struct Int8Part {
    /// What calibration needs until it ends (taken then, so the f32
    /// weights are not kept beside the int8 ones). A model's replicas
    /// share the part, hence the lock; calibration runs once, at load.
    pending: Mutex<Option<Calibration>>,
    /// Set once calibration is over; until then the conv runs in f32.
    pub conv: OnceLock<Int8Conv3x3>,
}

/// A conv's f32 form and the range its input took while calibrating.
struct Calibration {
    /// `[out, in, 3, 3]`.
    weights: Vec<f32>,
    bias: Vec<f32>,
    shape: (usize, usize),
    /// Per input channel, the smallest and largest value seen.
    seen: Vec<(f32, f32)>,
}

impl Int8Part {
    /// The int8 form of a conv with `[out, in, 3, 3]` weights `w`, where
    /// its shape has one (input channels a multiple of 4, output channels
    /// of 16).
    pub fn new(w: &[f32], bias: Option<&[f32]>, ci: usize, co: usize) -> Option<Int8Part> {
        if !ci.is_multiple_of(4) || !co.is_multiple_of(16) {
            return None;
        }
        let pending = Calibration {
            weights: w.to_vec(),
            bias: bias.map_or_else(|| vec![0.0; co], <[f32]>::to_vec),
            shape: (ci, co),
            seen: vec![(f32::INFINITY, f32::NEG_INFINITY); ci],
        };
        Some(Int8Part {
            pending: Mutex::new(Some(pending)),
            conv: OnceLock::new(),
        })
    }

    /// Widens each channel's seen range to cover `x` (`[points, ci]`);
    /// nothing once calibration has ended.
    pub fn record(&self, x: &[f32]) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(calibration) = pending.as_mut() else {
            return;
        };
        let ci = calibration.seen.len();
        for point in x.chunks_exact(ci) {
            for ((lo, hi), &v) in calibration.seen.iter_mut().zip(point) {
                *lo = lo.min(v);
                *hi = hi.max(v);
            }
        }
    }

    /// Ends calibration: from now on the conv runs in int8, its input
    /// quantised over the range seen (every channel's together).
    pub fn settle(&self) {
        let Some(c) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return;
        };
        // One range for every channel, the union of theirs: on g170 b6c96
        // (`tests/nn_parity.rs`), ranges per channel from these positions
        // gave 2-8x the output error, as real positions leave channels'
        // calibrated ranges (clamped) that the random ones barely used.
        let all = c
            .seen
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &(lo, hi)| {
                (a.min(lo), b.max(hi))
            });
        let all = if all.0 <= all.1 { all } else { (0.0, 0.0) };
        let quant = InputQuant::covering(&vec![all; c.seen.len()]);
        let _ = self
            .conv
            .get_or_init(|| Int8Conv3x3::new(&c.weights, &c.bias, c.shape, quant));
    }
}

/// One batch of calibration rows on a `side x side` board: NCHW spatial
/// inputs, global inputs and metadata inputs, row after row.
pub(super) struct CalibrationBatch {
    pub rows: usize,
    pub side: usize,
    pub spatial: Vec<f32>,
    pub global: Vec<f32>,
    pub meta: Vec<f32>,
}

/// The positions an int8 net is calibrated on, as whole batches: for each
/// of 9x9, 13x13 and 19x19, 16 positions of one game of random moves (no
/// move fills its own eye) from the empty board to 80% of the board's
/// points, Tromp-Taylor rules, komi 7. Deterministic, so a net gets the
/// same scales on every load. Inputs of `version`'s features, metadata
/// inputs zero.
pub(super) fn calibration_batches(
    version: crate::nn::desc::InputVersion,
    meta_len: usize,
) -> Vec<CalibrationBatch> {
    use crate::game::{Board, BoardHistory, Move, Player, Rules};
    use crate::nn::{FeatureEncoder, NnInputParams};
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next_random = move |below: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % below as u64) as usize
    };
    let mut encoder = FeatureEncoder::new();
    let params = NnInputParams::default();
    let (c, g) = (
        version.num_spatial_features(),
        version.num_global_features(),
    );
    let mut batches = Vec::new();
    for side in [9, 13, 19] {
        const ROWS: usize = 16;
        let Ok(mut board) = Board::new(side, side) else {
            continue;
        };
        let rules = Rules::tromp_taylor();
        let mut hist = BoardHistory::new(&board, Player::Black, rules);
        let mut next = Player::Black;
        let plies = side * side * 4 / 5;
        let mut spatial = vec![0f32; ROWS * c * side * side];
        let mut global = vec![0f32; ROWS * g];
        for row in 0..ROWS {
            let target = plies * row / ROWS;
            while hist.moves().len() < target {
                let open: Vec<_> = board
                    .locs()
                    .filter(|&loc| {
                        hist.is_legal(&board, Move::Play(loc), next)
                            && !board.is_simple_eye(loc, next)
                    })
                    .collect();
                let mv = if open.is_empty() {
                    Move::Pass
                } else {
                    Move::Play(open[next_random(open.len())])
                };
                hist.play(&mut board, mv, next);
                next = next.opp();
            }
            encoder.fill_row(
                version,
                &board,
                &hist,
                next,
                &params,
                &mut spatial[row * c * side * side..][..c * side * side],
                &mut global[row * g..][..g],
            );
        }
        batches.push(CalibrationBatch {
            rows: ROWS,
            side,
            spatial,
            global,
            meta: vec![0f32; ROWS * meta_len],
        });
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator for the tests' values.
    fn values(seed: u64, len: usize, lo: f32, hi: f32) -> Vec<f32> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                lo + (hi - lo) * ((s >> 40) as f32 / (1u64 << 24) as f32)
            })
            .collect()
    }

    /// The f32 direct convolution of `[n, h, w, ci]` by `[co, ci, 3, 3]`
    /// (the backend tests' reference).
    fn reference(
        x: &[f32],
        w: &[f32],
        bias: &[f32],
        (n, h, wd, ci, co): (usize, usize, usize, usize, usize),
    ) -> Vec<f32> {
        super::super::tests::direct(x, (n, h, wd), w, (ci, co, 3, 1), bias)
    }

    /// On values that are exactly representable (integers in range, unit
    /// scales) the int8 conv is exact, edges and every output block
    /// included: the kernel's sums and the layout are right.
    #[test]
    fn int8_conv_is_exact_on_representable_values() {
        if !vnni_runs() {
            eprintln!("skipped: no AVX-512 VNNI on this CPU");
            return;
        }
        for (n, h, w, ci, co) in [
            (1, 9, 9, 8, 32),
            (2, 5, 7, 4, 96),
            (3, 4, 3, 12, 112),
            (1, 19, 19, 16, 16),
            (1, 3, 3, 4, 48),
            (2, 6, 6, 4, 64),
            (1, 7, 5, 8, 80),
        ] {
            let mut weights: Vec<f32> = values(1, co * ci * 9, -127.0, 127.0)
                .iter()
                .map(|v| v.round())
                .collect();
            // Each output channel's largest weight is 127, so its scale is 1.
            for oc in 0..co {
                weights[oc * ci * 9] = 127.0;
            }
            let bias: Vec<f32> = values(2, co, -5.0, 5.0).iter().map(|v| v.round()).collect();
            // Zero points differ by channel; each input is an integer in
            // its channel's range.
            let zero: Vec<u8> = (0..ci).map(|c| (c * 7 % 20) as u8).collect();
            let x: Vec<f32> = values(3, n * h * w * ci, 0.0, 255.0)
                .iter()
                .enumerate()
                .map(|(i, v)| v.round() - f32::from(zero[i % ci]))
                .collect();
            let quant = InputQuant {
                scale: vec![1.0; ci],
                zero,
            };
            let conv = Int8Conv3x3::new(&weights, &bias, (ci, co), quant);
            let mut out = vec![0f32; n * h * w * co];
            conv.run(
                &x,
                (n, h, w),
                &mut out,
                Epilogue::Store,
                &mut Int8Scratch::default(),
            );
            assert_eq!(
                out,
                reference(&x, &weights, &bias, (n, h, w, ci, co)),
                "{n} {h}x{w} {ci}->{co}"
            );
        }
    }

    /// With a zero point (inputs below 0) and real-valued weights, the
    /// error stays within what 8 bits allow, and ReLU applies.
    #[test]
    fn int8_conv_error_is_the_quantisation_error() {
        if !vnni_runs() {
            eprintln!("skipped: no AVX-512 VNNI on this CPU");
            return;
        }
        let (n, h, w, ci, co) = (2, 9, 9, 32, 32);
        let weights = values(4, co * ci * 9, -0.1, 0.1);
        let bias = values(5, co, -0.5, 0.5);
        // Channels of different ranges, some below 0.
        let range = |c: usize| (-0.3 * (c % 2) as f32, 0.5 + (c % 4) as f32);
        let x: Vec<f32> = values(6, n * h * w * ci, 0.0, 1.0)
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let (lo, hi) = range(i % ci);
                lo + v * (hi - lo)
            })
            .collect();
        let ranges: Vec<_> = (0..ci).map(range).collect();
        let quant = InputQuant::covering(&ranges);
        assert!(quant.zero[1] > 0 && quant.zero[0] == 0);
        let conv = Int8Conv3x3::new(&weights, &bias, (ci, co), quant);
        let mut out = vec![0f32; n * h * w * co];
        conv.run(
            &x,
            (n, h, w),
            &mut out,
            Epilogue::ReluMasked,
            &mut Int8Scratch::default(),
        );
        let want: Vec<f32> = reference(&x, &weights, &bias, (n, h, w, ci, co))
            .iter()
            .map(|v| v.max(0.0))
            .collect();
        let scale = want.iter().fold(0f32, |m, v| m.max(v.abs()));
        let worst = out
            .iter()
            .zip(&want)
            .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        // Rounding of inputs (step 0.009) and weights (step 0.0008) over
        // 288 products: well under 2% of the output's range here.
        assert!(worst < 0.02 * scale, "worst {worst} of {scale}");
        assert!(out.iter().all(|&v| v >= 0.0));
    }
}
