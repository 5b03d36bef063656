//! The int8 3x3 convolution of nets run with `nnPrecision = "int8"`
//! (issue 70's point 2), on `vpdpbusd`: AVX-512 VNNI's 512-bit form or
//! AVX-VNNI's 256-bit one ([`Int8Kernels`]). `benches/int8.rs` times it
//! beside the backend's fp32 and bf16 [`super::ops::Conv`] on one layer.
//!
//! The scheme is the usual one for a post-ReLU trunk: activations as `u8`
//! with one scale and a zero point per tensor (the zero point also pads the
//! board's edge, so padding costs nothing), weights as `i8` with one scale
//! per output channel, sums in `i32` (exact), then `(sum - zero * sum of the
//! channel's weights) * scale_in * scale_w + bias` in f32. It runs directly
//! (nine taps), not by Winograd: Winograd's transforms widen the range of
//! the values the GEMMs see, which 8 bits cannot hold.

use std::sync::{Mutex, OnceLock};

pub(super) use crate::nn::cpu_info::Int8Kernels;
use crate::nn::network::winograd::Epilogue;

/// A 3x3 convolution (stride 1, zero padding) on `u8` inputs quantised per
/// input channel, with the input scales folded into the weights before
/// they are quantised to `i8` per output channel, in the layout
/// [`conv_points`] reads.
pub(super) struct Int8Conv3x3 {
    /// The instructions it runs on.
    kernels: Int8Kernels,
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
    /// input's quantisation; `ci` a multiple of 4 and `co` of 16; run on
    /// `kernels`.
    pub fn new(
        w: &[f32],
        bias: &[f32],
        (ci, co): (usize, usize),
        quant: InputQuant,
        kernels: Int8Kernels,
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
            kernels,
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
    /// Where the CPU lacks its kernels' instructions
    /// ([`Int8Kernels::runs_on_this_cpu`]).
    pub fn run(
        &self,
        input: &[f32],
        (n, h, w): (usize, usize, usize),
        out: &mut [f32],
        epilogue: Epilogue,
        scratch: &mut Int8Scratch,
    ) {
        let kernels = self.kernels;
        assert!(
            kernels.runs_on_this_cpu(),
            "the int8 kernel needs {}",
            kernels.name()
        );
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
                // SAFETY: the CPU has the kernels' instructions (asserted
                // above).
                unsafe { quantise(kernels, src, (&self.inv_scale, &self.zero), dst) };
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
                kernels,
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
                // SAFETY: the CPU has the kernels' instructions (asserted
                // above).
                unsafe {
                    dequantise(
                        kernels,
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
/// The CPU has `kernels`' instructions.
unsafe fn quantise(
    kernels: Int8Kernels,
    src: &[f32],
    (inv, zero): (&[f32], &[f32]),
    dst: &mut [u32],
) {
    let ci = inv.len();
    // SAFETY: the caller's contract.
    let vector = unsafe {
        match kernels {
            Int8Kernels::Avx512Vnni => x86::quantise_512(src, (inv, zero), dst),
            Int8Kernels::AvxVnni => x86::quantise_256(src, (inv, zero), dst),
        }
    };
    if vector == ci {
        return;
    }
    for (point, words) in src.chunks_exact(ci).zip(dst.chunks_exact_mut(ci / 4)) {
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
/// The CPU has `kernels`' instructions.
unsafe fn dequantise(
    kernels: Int8Kernels,
    sums: &[i32],
    per_channel: (&[i32], &[f32], &[f32]),
    epilogue: Epilogue,
    dst: &mut [f32],
) {
    // SAFETY: the caller's contract.
    unsafe {
        match kernels {
            Int8Kernels::Avx512Vnni => x86::dequantise_512(sums, per_channel, epilogue, dst),
            Int8Kernels::AvxVnni => x86::dequantise_256(sums, per_channel, epilogue, dst),
        }
    }
}

/// The sums of `count` padded points from `first` (rows of the padded
/// board `wp` points apart): `groups` groups of 4 input channels, `blocks`
/// blocks of 16 output channels.
///
/// # Safety
/// The CPU has `kernels`' instructions; `input` holds `first + count +
/// wp + 17` points of `groups` words, `sums` `first + count + 16` of `16 *
/// blocks`.
unsafe fn conv_points(
    kernels: Int8Kernels,
    (first, count, wp): (usize, usize, usize),
    (groups, blocks): (usize, usize),
    input: *const u32,
    weights: *const i32,
    sums: *mut i32,
) {
    // Blocks of output channels, one row of 3 taps at a time: that row's
    // weights (3 x 6 x 64 bytes per input group for the 512-bit kernel:
    // 27 KB for 96 channels) stay in L1 while every point passes, the sums
    // going to memory and back between rows (a few percent of the
    // multiply-adds' time). The register blocks: 4 points x 6 blocks of 16
    // channels (24 of AVX-512's 32 registers) down to 16 points x 1; for
    // the 256-bit kernel, whose 16 registers hold 8 channels each, 6
    // points x 2 vectors of 8 (3 x 4 needs 17 registers: on Zen 5 it ran
    // a 96-channel layer at 42% of the peak against 6 x 2's 70%).
    let (lanes, widest) = match kernels {
        Int8Kernels::Avx512Vnni => (16, 6),
        Int8Kernels::AvxVnni => (8, 2),
    };
    let vectors = blocks * 16 / lanes;
    let mut v0 = 0;
    while v0 < vectors {
        let take = (vectors - v0).min(widest);
        for tap_row in 0..3 {
            let shape = Shape {
                first,
                count,
                wp,
                groups,
                co: 16 * blocks,
                c0: v0 * lanes,
                tap_row,
            };
            // SAFETY: the caller's contract.
            unsafe {
                use x86::{blocks_of_256 as b256, blocks_of_512 as b512};
                match (kernels, take) {
                    (Int8Kernels::Avx512Vnni, 6) => b512::<4, 6>(shape, input, weights, sums),
                    (Int8Kernels::Avx512Vnni, 5) => b512::<4, 5>(shape, input, weights, sums),
                    (Int8Kernels::Avx512Vnni, 4) => b512::<6, 4>(shape, input, weights, sums),
                    (Int8Kernels::Avx512Vnni, 3) => b512::<8, 3>(shape, input, weights, sums),
                    (Int8Kernels::Avx512Vnni, 2) => b512::<12, 2>(shape, input, weights, sums),
                    (Int8Kernels::Avx512Vnni, _) => b512::<16, 1>(shape, input, weights, sums),
                    // 8-channel vectors come in pairs (16 divides `co`).
                    (Int8Kernels::AvxVnni, _) => b256::<6, 2>(shape, input, weights, sums),
                }
            }
        }
        v0 += take;
    }
}

/// Where one register-block kernel call works: the points (`count` from
/// `first`, rows `wp` apart), `groups` input groups of 4 channels, `co`
/// output channels from channel `c0`, and the row of taps.
#[derive(Clone, Copy)]
struct Shape {
    first: usize,
    count: usize,
    wp: usize,
    groups: usize,
    co: usize,
    c0: usize,
    tap_row: usize,
}

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(not(target_arch = "x86_64"))]
mod x86 {
    //! No int8 kernels off x86-64 ([`Int8Kernels::detect`] is `None`
    //! there, so none of these is called).

    use super::Shape;
    use crate::nn::network::winograd::Epilogue;

    pub(super) unsafe fn quantise_512(_: &[f32], _: (&[f32], &[f32]), _: &mut [u32]) -> usize {
        unreachable!("no int8 kernels off x86-64")
    }
    pub(super) use quantise_512 as quantise_256;
    pub(super) unsafe fn dequantise_512(
        _: &[i32],
        _: (&[i32], &[f32], &[f32]),
        _: Epilogue,
        _: &mut [f32],
    ) {
        unreachable!("no int8 kernels off x86-64")
    }
    pub(super) use dequantise_512 as dequantise_256;
    pub(super) unsafe fn blocks_of_512<const MR: usize, const NB: usize>(
        _: Shape,
        _: *const u32,
        _: *const i32,
        _: *mut i32,
    ) {
        unreachable!("no int8 kernels off x86-64")
    }
    pub(super) use blocks_of_512 as blocks_of_256;
}

/// [`Int8Conv3x3::run`]'s buffers, kept from call to call.
#[derive(Default)]
pub(super) struct Int8Scratch {
    input: Vec<u32>,
    sums: Vec<i32>,
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

/// Whether a conv of the model file has an int8 form: 3x3, undilated,
/// input channels a multiple of 4 and output channels of 16 (the kernels'
/// groups and blocks). In a net run in int8 these run in int8, the rest in
/// f32.
pub(super) fn takes(c: &crate::nn::desc::ConvLayer) -> bool {
    (c.y_size, c.x_size, c.dilation_y, c.dilation_x) == (3, 3, 1, 1)
        && shape_fits(c.in_channels, c.out_channels)
}

/// Whether the kernels' groups of 4 input channels and blocks of 16
/// output channels tile a conv's channels.
fn shape_fits(ci: usize, co: usize) -> bool {
    ci.is_multiple_of(4) && co.is_multiple_of(16)
}

impl Int8Part {
    /// The int8 form of a 3x3 conv with `[out, in, 3, 3]` weights `w`,
    /// where its shape has one (input channels a multiple of 4, output
    /// channels of 16).
    pub fn new(w: &[f32], bias: Option<&[f32]>, ci: usize, co: usize) -> Option<Int8Part> {
        if !shape_fits(ci, co) {
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
        // A net is only built in int8 where kernels run
        // (`CpuModel::with_precision`); without them the conv stays f32.
        let Some(kernels) = Int8Kernels::detect() else {
            return;
        };
        let _ = self
            .conv
            .get_or_init(|| Int8Conv3x3::new(&c.weights, &c.bias, c.shape, quant, kernels));
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
        for kernels in kernels_here() {
            exact_on_representable_values(kernels);
        }
    }

    /// The int8 kernels this CPU runs, whatever `ENGINE_SIMD` says (each
    /// test runs on every one); a line on stderr for those it lacks.
    fn kernels_here() -> Vec<Int8Kernels> {
        [Int8Kernels::Avx512Vnni, Int8Kernels::AvxVnni]
            .into_iter()
            .filter(|k| {
                let runs = k.runs_on_this_cpu();
                if !runs {
                    eprintln!("{} skipped: not on this CPU", k.name());
                }
                runs
            })
            .collect()
    }

    fn exact_on_representable_values(kernels: Int8Kernels) {
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
            let conv = Int8Conv3x3::new(&weights, &bias, (ci, co), quant, kernels);
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
                "{} {n} {h}x{w} {ci}->{co}",
                kernels.name()
            );
        }
    }

    /// With a zero point (inputs below 0) and real-valued weights, the
    /// error stays within what 8 bits allow, and ReLU applies.
    #[test]
    fn int8_conv_error_is_the_quantisation_error() {
        for kernels in kernels_here() {
            error_is_the_quantisation_error(kernels);
        }
    }

    fn error_is_the_quantisation_error(kernels: Int8Kernels) {
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
        let conv = Int8Conv3x3::new(&weights, &bias, (ci, co), quant, kernels);
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
        assert!(
            worst < 0.02 * scale,
            "{}: worst {worst} of {scale}",
            kernels.name()
        );
        assert!(out.iter().all(|&v| v >= 0.0));
    }
}
