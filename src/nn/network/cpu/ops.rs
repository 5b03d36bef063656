//! The layers of the pure-Rust CPU network on top of the GEMMs of
//! [`super::gemm`]: convolutions on NHWC
//! activations (1x1 as one GEMM, 3x3 and 5x5 by Winograd with the
//! transforms of `network/winograd.rs`, anything else by im2col), masked
//! global pooling and activations.
//!
//! Everything runs on the calling thread; parallelism comes from several
//! evaluator server threads, each with its own model, as KataGo's Eigen
//! backend does.

use super::super::builder::NormActParams;
use super::super::winograd::{
    input_transform, output_transform, transform_kernel, Epilogue, Geometry, Tiling, Workspace,
};
use super::gemm::{gemm_weights, small_gemm_takes, AlignedWeights, Prefetch};
use super::int8::{Int8Part, Int8Scratch};
use crate::nn::desc::{Activation, ConvLayer};
use std::sync::OnceLock;

/// Applies `act` to every value, in place.
pub(super) fn activate(x: &mut [f32], act: Activation) {
    match act {
        Activation::Identity => {}
        Activation::Relu => x.iter_mut().for_each(|v| *v = v.max(0.0)),
        Activation::Mish => x.iter_mut().for_each(|v| *v = mish(*v)),
        Activation::Silu => x.iter_mut().for_each(|v| *v /= 1.0 + (-*v).exp()),
    }
}

/// `x tanh(softplus(x))`, as libtorch computes it.
#[inline]
fn mish(x: f32) -> f32 {
    x * x.exp().ln_1p().tanh()
}

/// The board mask of one batch and the per-row terms of the pooling layers.
pub(super) struct Mask<'a> {
    /// Points per row (`h * w`).
    pub(super) hw: usize,
    /// `[n * h * w]`, 1 on the board and 0 off it; `None` when every row
    /// fills the tensor.
    pub(super) mask: Option<&'a [f32]>,
    /// Per row: board points.
    area: Vec<f32>,
    /// Per row: `(sqrt(area) - 14) / 10`.
    size_term: Vec<f32>,
    /// Per row: `(sqrt(area) - 14)^2 / 100 - 0.1`.
    size_term2: Vec<f32>,
}

impl<'a> Mask<'a> {
    /// The mask of `n` rows of `hw` points.
    pub(super) fn new(n: usize, hw: usize, mask: Option<&'a [f32]>) -> Mask<'a> {
        let area: Vec<f32> = (0..n)
            .map(|row| match mask {
                Some(m) => m[row * hw..(row + 1) * hw].iter().sum(),
                None => hw as f32,
            })
            .collect();
        let centred: Vec<f32> = area.iter().map(|a| a.sqrt() - 14.0).collect();
        Mask {
            hw,
            mask,
            size_term: centred.iter().map(|c| c * 0.1).collect(),
            size_term2: centred.iter().map(|c| c * c * 0.01 - 0.1).collect(),
            area,
        }
    }

    /// Zeroes `x` (`[n * hw, c]`) off the board, as libtorch's `x * mask`.
    pub(super) fn apply(&self, x: &mut [f32], c: usize) {
        if let Some(m) = self.mask {
            for (point, &mv) in x.chunks_exact_mut(c).zip(m) {
                if mv != 1.0 {
                    point.iter_mut().for_each(|v| *v *= mv);
                }
            }
        }
    }

    /// Values of the pooled rows of `c` channels: `[n, 3c]`.
    pub(super) fn pooled_len(&self, c: usize) -> usize {
        self.area.len() * 3 * c
    }

    /// Sets `out` (`[n, 3c]`) to zeros and yields each row with its three
    /// `c`-wide parts.
    #[inline]
    fn pooled_rows<'o>(
        &self,
        c: usize,
        out: &'o mut [f32],
    ) -> impl Iterator<Item = (usize, [&'o mut [f32]; 3])> {
        assert_eq!(out.len(), self.pooled_len(c), "pooled rows' length");
        out.fill(0.0);
        out.chunks_exact_mut(3 * c)
            .enumerate()
            .map(move |(row, o)| {
                let (first, rest) = o.split_at_mut(c);
                let (second, third) = rest.split_at_mut(c);
                (row, [first, second, third])
            })
    }

    /// KataGo's gpool features `[n, 3c]` of `x` (`[n * hw, c]`, already
    /// zero off the board): mean, mean * size term, max (over the board,
    /// with off-board points counted as -1, as KataGo's `mask - 1`).
    pub(super) fn pool(&self, x: &[f32], c: usize, out: &mut [f32]) {
        for (row, [sum, scaled, max]) in self.pooled_rows(c, out) {
            max.fill(f32::NEG_INFINITY);
            for p in 0..self.hw {
                let point = &x[(row * self.hw + p) * c..][..c];
                let off = self.mask.map_or(0.0, |m| m[row * self.hw + p] - 1.0);
                for ((s, mx), &v) in sum.iter_mut().zip(max.iter_mut()).zip(point) {
                    *s += v;
                    *mx = mx.max(v + off);
                }
            }
            for (s, sc) in sum.iter_mut().zip(scaled.iter_mut()) {
                *s /= self.area[row];
                *sc = *s * self.size_term[row];
            }
        }
    }

    /// KataGo's value-head pooling `[n, 3c]`: mean, mean * size term,
    /// mean * quadratic size term.
    pub(super) fn pool_value(&self, x: &[f32], c: usize, out: &mut [f32]) {
        for (row, [mean, a, b]) in self.pooled_rows(c, out) {
            for p in 0..self.hw {
                let point = &x[(row * self.hw + p) * c..][..c];
                mean.iter_mut().zip(point).for_each(|(s, v)| *s += v);
            }
            for ((m, a), b) in mean.iter_mut().zip(a.iter_mut()).zip(b.iter_mut()) {
                *m /= self.area[row];
                *a = *m * self.size_term[row];
                *b = *m * self.size_term2[row];
            }
        }
    }

    /// The mask values, if any (for the Winograd epilogue).
    pub(super) fn values(&self) -> Option<&'a [f32]> {
        self.mask
    }
}

/// A batch norm + activation that follows a residual sum (see
/// [`NormActParams`]).
pub(super) struct NormAct(pub(super) NormActParams);

impl NormAct {
    /// `out = mask(norm_act(x))`, both `[n * hw, c]`.
    pub(super) fn run(&self, x: &[f32], out: &mut [f32], c: usize, mask: &Mask) {
        match &self.0 {
            NormActParams::Shift(shift) => {
                for (o, i) in out.chunks_exact_mut(c).zip(x.chunks_exact(c)) {
                    for ((o, &v), &s) in o.iter_mut().zip(i).zip(shift) {
                        *o = (v + s).max(0.0);
                    }
                }
            }
            NormActParams::Affine { scale, bias, act } => {
                for (o, i) in out.chunks_exact_mut(c).zip(x.chunks_exact(c)) {
                    for (((o, &v), &s), &b) in o.iter_mut().zip(i).zip(scale).zip(bias) {
                        *o = b + v * s;
                    }
                }
                activate(out, *act);
            }
        }
        mask.apply(out, c);
    }
}

/// A dense layer `y = x W + b`, `W` row-major `[in, out]`.
pub(super) struct Dense {
    pub(super) weight: AlignedWeights,
    pub(super) bias: Option<Vec<f32>>,
    pub(super) in_channels: usize,
    pub(super) out_channels: usize,
}

impl Dense {
    /// `out = x W + b` for `n` rows (`out` is `[n, out_channels]`).
    pub(super) fn run(&self, x: &[f32], n: usize, out: &mut [f32]) {
        assert_eq!(out.len(), n * self.out_channels, "dense output's length");
        gemm_weights(
            (n, self.in_channels, self.out_channels),
            x,
            (&self.weight, 0),
            out,
            false,
            Prefetch::NONE,
        );
        if let Some(b) = &self.bias {
            for row in out.chunks_exact_mut(self.out_channels) {
                row.iter_mut().zip(b).for_each(|(v, b)| *v += b);
            }
        }
    }
}

/// Scratch buffers of the convolutions, kept from batch to batch.
#[derive(Default)]
pub(super) struct ConvScratch {
    /// Winograd's transformed inputs and outputs and padded input.
    wino: Workspace,
    /// im2col columns of the general convolution.
    cols: Vec<f32>,
    /// The int8 convolutions' quantised inputs and sums.
    int8: Int8Scratch,
    /// While an int8 net is calibrated: convs with an int8 form run in
    /// f32 and record their inputs' range.
    pub(super) calibrating_int8: bool,
}

/// The other weights of a 3x3 conv small enough for the small GEMM kernels
/// ([`small_gemm_takes`]).
struct SmallConvWeights {
    /// `[9, in, out]`: one matrix per tap, as the model has them (the
    /// source of the other tilings' weights).
    direct: AlignedWeights,
    /// `[25, in, out]`: F(3x3, 3x3) Winograd's, built from `direct` when a
    /// batch first runs cheaper by 3x3 tiles (9x9, or up to three 13x13
    /// boards: see [`Tiling::cheapest`]).
    winograd_f3: OnceLock<AlignedWeights>,
    /// `[49, in, out]`: F(5x5, 3x3) Winograd's, built from `direct` when a
    /// batch first runs cheaper by 5x5 tiles.
    winograd_f5: OnceLock<AlignedWeights>,
    /// Whether the conv runs in bf16 (the built weights get a bf16 copy).
    bf16: bool,
}

impl SmallConvWeights {
    /// The weights of `tiling` other than F(4x4) (the conv's own),
    /// transformed from the direct weights on first use.
    fn winograd(&self, tiling: Tiling, ci: usize, co: usize) -> Option<&AlignedWeights> {
        let cell = match tiling {
            Tiling::F3 => &self.winograd_f3,
            Tiling::F5 => &self.winograd_f5,
            Tiling::F4 | Tiling::F3K5 => return None,
        };
        Some(cell.get_or_init(|| {
            let taps = &self.direct;
            // Back to the model file's `[out, in, 3, 3]`.
            let mut oihw = vec![0f32; co * ci * 9];
            for (tap, block) in taps.chunks_exact(ci * co).enumerate() {
                for (ic, row) in block.chunks_exact(co).enumerate() {
                    for (oc, &v) in row.iter().enumerate() {
                        oihw[(oc * ci + ic) * 9 + tap] = v;
                    }
                }
            }
            let transformed = transform_kernel(&oihw, ci, co, tiling);
            AlignedWeights::matrices(&transformed, (ci, co), self.bf16)
        }))
    }
}

/// How a convolution is computed.
enum ConvKind {
    /// 1x1: weights `[in, out]`.
    Pointwise,
    /// 3x3, undilated: F(4x4, 3x3) transformed weights `[36, in, out]`.
    Winograd,
    /// 5x5, undilated (KataGo's input convolution): F(3x3, 5x5)
    /// transformed weights `[49, in, out]`.
    Winograd5x5,
    /// Any other size or dilation, by im2col: weights `[ky, kx, in, out]`.
    General {
        ky: usize,
        kx: usize,
        dy: usize,
        dx: usize,
    },
}

/// A convolution (stride 1, zero padding keeping the size) with its
/// folded bias, on NHWC activations.
pub(super) struct Conv {
    kind: ConvKind,
    weight: AlignedWeights,
    /// For Winograd convs that the small GEMM kernels can run tap by tap.
    small: Option<Box<SmallConvWeights>>,
    /// One per output channel; `None` when the conv has no bias.
    bias: Option<Vec<f32>>,
    /// In a net run in int8 (`nnPrecision = "int8"`), a 3x3 conv's int8
    /// form (where its shape has one), run once calibrated.
    int8: Option<Box<Int8Part>>,
    /// Zeros, for the Winograd epilogue of bias-free convs.
    zeros: Vec<f32>,
    pub(super) in_channels: usize,
    pub(super) out_channels: usize,
}

impl Conv {
    /// Builds from the model file's layer and already folded `[out, in, y,
    /// x]` weights and bias; `bf16` keeps a bf16 copy of the weights for
    /// the bf16 GEMM kernel (`nnPrecision = bf16`), `int8` an int8 form of
    /// a 3x3 conv (`nnPrecision = int8`).
    pub(super) fn new(
        c: &ConvLayer,
        w: &[f32],
        bias: Option<Vec<f32>>,
        bf16: bool,
        int8: bool,
    ) -> Conv {
        let (ci, co) = (c.in_channels, c.out_channels);
        let (ky, kx) = (c.y_size, c.x_size);
        let mut small = None;
        let int8 = (int8 && super::int8::takes(c))
            .then(|| Int8Part::new(w, bias.as_deref(), ci, co))
            .flatten()
            .map(Box::new);
        let (kind, weight) = if (ky, kx) == (1, 1) {
            let mut t = vec![0f32; ci * co];
            for oc in 0..co {
                for ic in 0..ci {
                    t[ic * co + oc] = w[oc * ci + ic];
                }
            }
            (ConvKind::Pointwise, t)
        } else if (ky, kx, c.dilation_y, c.dilation_x) == (3, 3, 1, 1) {
            if small_gemm_takes(ci, co) {
                small = Some(Box::new(SmallConvWeights {
                    direct: AlignedWeights::new(&taps_in_out(w, ci, co, 3, 3)),
                    winograd_f3: OnceLock::new(),
                    winograd_f5: OnceLock::new(),
                    bf16,
                }));
            }
            (ConvKind::Winograd, transform_kernel(w, ci, co, Tiling::F4))
        } else if (ky, kx, c.dilation_y, c.dilation_x) == (5, 5, 1, 1) {
            (
                ConvKind::Winograd5x5,
                transform_kernel(w, ci, co, Tiling::F3K5),
            )
        } else {
            let t = taps_in_out(w, ci, co, ky, kx);
            let kind = ConvKind::General {
                ky,
                kx,
                dy: c.dilation_y,
                dx: c.dilation_x,
            };
            (kind, t)
        };
        // Every kind's weights are a run of `[k, out]` matrices.
        let k = match kind {
            ConvKind::General { ky, kx, .. } => ky * kx * ci,
            _ => ci,
        };
        Conv {
            kind,
            weight: AlignedWeights::matrices(&weight, (k, co), bf16),
            small,
            bias,
            int8,
            zeros: vec![0.0; co],
            in_channels: ci,
            out_channels: co,
        }
    }

    /// Multiply-adds of one `h x w` row in a batch of `n` (for FLOP
    /// counts): as a direct convolution counts them, and as this code runs
    /// them (Winograd's GEMMs: 36 per 4x4 output tile and channel pair, 4x
    /// fewer on a board that fills its tiles, 25 per 3x3 tile or 49 per
    /// 5x5 tile).
    pub(super) fn macs_per_row(&self, n: usize, h: usize, w: usize) -> (usize, usize) {
        let pairs = self.in_channels * self.out_channels;
        match self.kind {
            ConvKind::Pointwise => (h * w * pairs, h * w * pairs),
            ConvKind::Winograd => {
                let executed = self.tiling(n, h, w).points(h, w);
                (9 * h * w * pairs, executed * pairs)
            }
            ConvKind::Winograd5x5 => {
                let executed = self.tiling(n, h, w).points(h, w);
                (25 * h * w * pairs, executed * pairs)
            }
            ConvKind::General { ky, kx, .. } => (ky * kx * h * w * pairs, ky * kx * h * w * pairs),
        }
    }

    /// Convolves `input` (`[n, h, w, in]`) into `out` (`[n, h, w, out]`) as
    /// `epilogue` says (`ReluMasked` zeroes off-board points of `mask`). A
    /// 3x3 conv runs by Winograd with `tiling`, or with the tiling it picks
    /// for the shape ([`Conv::tiling`]) where that is `None` (F(4x4) where
    /// this conv cannot build the other tilings' weights); a 5x5 conv by
    /// F(3x3, 5x5) whatever `tiling` says.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run(
        &self,
        tiling: Option<Tiling>,
        input: &[f32],
        (n, h, w): (usize, usize, usize),
        out: &mut [f32],
        epilogue: Epilogue,
        mask: &Mask,
        s: &mut ConvScratch,
    ) {
        let tiling = tiling.unwrap_or_else(|| self.tiling(n, h, w));
        let (ci, co) = (self.in_channels, self.out_channels);
        let points = n * h * w;
        let input = &input[..points * ci];
        let out = &mut out[..points * co];
        if let Some(int8) = &self.int8 {
            if s.calibrating_int8 {
                int8.record(input);
            } else if let Some(conv) = int8.conv.get() {
                conv.run(input, (n, h, w), out, epilogue, &mut s.int8);
                if epilogue == Epilogue::ReluMasked {
                    mask.apply(out, co);
                }
                return;
            }
        }
        let bias = self.bias.as_deref().unwrap_or(&self.zeros);
        let ep = (bias, epilogue, mask.values());
        match &self.kind {
            ConvKind::Winograd => {
                // The tilings other than F(4x4) come with `small`.
                let (weight, tiling) = match &self.small {
                    Some(small) if tiling.taps() == 3 => (
                        small.winograd(tiling, ci, co).unwrap_or(&self.weight),
                        tiling,
                    ),
                    _ => (&self.weight, Tiling::F4),
                };
                let weight = (weight, tiling);
                winograd(weight, input, (n, h, w), (ci, co), out, ep, &mut s.wino);
                return;
            }
            ConvKind::Winograd5x5 => {
                let weight = (&self.weight, Tiling::F3K5);
                winograd(weight, input, (n, h, w), (ci, co), out, ep, &mut s.wino);
                return;
            }
            ConvKind::Pointwise => {
                gemm_weights(
                    (points, ci, co),
                    input,
                    (&self.weight, 0),
                    out,
                    epilogue == Epilogue::Accumulate,
                    Prefetch::NONE,
                );
            }
            &ConvKind::General { ky, kx, dy, dx } => {
                let k = ky * kx * ci;
                // Every value is written below (a tap off the board as
                // zeros), so the buffer is not cleared first: for g170's
                // 5x5 input conv on 19x19 (which ran here until
                // 2026-12-06) that was 0.8 MB of zeros per evaluation
                // (`memset` 1.5% of its samples in `perf`).
                if s.cols.len() < points * k {
                    s.cols.resize(points * k, 0.0);
                }
                let (py, px) = ((ky / 2 * dy) as isize, (kx / 2 * dx) as isize);
                for b in 0..n {
                    for y in 0..h {
                        for x in 0..w {
                            let row = &mut s.cols[((b * h + y) * w + x) * k..][..k];
                            for ty in 0..ky {
                                let sy = y as isize + (ty * dy) as isize - py;
                                for tx in 0..kx {
                                    let sx = x as isize + (tx * dx) as isize - px;
                                    let tap = &mut row[(ty * kx + tx) * ci..][..ci];
                                    if sy < 0 || sy >= h as isize || sx < 0 || sx >= w as isize {
                                        tap.fill(0.0);
                                        continue;
                                    }
                                    let src = ((b * h + sy as usize) * w + sx as usize) * ci;
                                    tap.copy_from_slice(&input[src..src + ci]);
                                }
                            }
                        }
                    }
                }
                gemm_weights(
                    (points, k, co),
                    &s.cols,
                    (&self.weight, 0),
                    out,
                    epilogue == Epilogue::Accumulate,
                    Prefetch::NONE,
                );
            }
        }
        // The GEMM paths' epilogue.
        if let Some(b) = &self.bias {
            for point in out.chunks_exact_mut(co) {
                point.iter_mut().zip(b).for_each(|(v, b)| *v += b);
            }
        }
        if epilogue == Epilogue::ReluMasked {
            activate(out, Activation::Relu);
            mask.apply(out, co);
        }
    }
}

/// `input` (`ci` channels) convolved by Winograd's `tiling` with its
/// transformed `weight` (`[area, ci, co]`) into `out`, finished as `ep`
/// says.
fn winograd(
    (weight, tiling): (&AlignedWeights, Tiling),
    input: &[f32],
    (n, h, w): (usize, usize, usize),
    (ci, co): (usize, usize),
    out: &mut [f32],
    ep: (&[f32], Epilogue, Option<&[f32]>),
    ws: &mut Workspace,
) {
    let g = Geometry::new(n, h, w, tiling);
    let tiles = g.tiles();
    // Grown, never shrunk: a net's convs alternate between sizes (its
    // input conv, the trunk's, a global-pooling block's), and each growth
    // wrote zeros (the inlined `memset` loop was a third of this
    // function's samples on 13x13 in `perf`).
    for (buf, len) in [(&mut ws.v, ci), (&mut ws.m, co)] {
        let len = tiling.area() * tiles * len;
        if buf.len() < len {
            buf.resize(len, 0.0);
        }
    }
    // Each weight matrix is asked for one product ahead (the first before
    // the input transform runs).
    Prefetch::matrix(weight, 0, (ci, co)).all();
    input_transform(input, g, ci, ws, 1);
    for pos in 0..tiling.area() {
        gemm_weights(
            (tiles, ci, co),
            &ws.v[pos * tiles * ci..],
            (weight, pos),
            &mut ws.m[pos * tiles * co..],
            false,
            Prefetch::matrix(weight, pos + 1, (ci, co)),
        );
    }
    output_transform(&ws.m, g, co, ep, out, 1);
}

impl Conv {
    /// Ends an int8 net's calibration for this conv (nothing for a conv
    /// without an int8 form).
    pub(super) fn settle_int8(&self) {
        if let Some(int8) = &self.int8 {
            int8.settle();
        }
    }

    /// The Winograd tiling a 3x3 conv runs a batch of `n` `h x w` boards
    /// by: [`Tiling::cheapest`] where this conv can build F(3x3) and F(5x5)
    /// weights (small nets, see [`small_gemm_takes`]) unless
    /// `ENGINE_WINOGRAD` forces one ([`Tiling::forced`]), F(4x4) otherwise
    /// (F(3x3, 5x5) for a 5x5 conv; not meaningful for the other kinds).
    /// In bf16 the rule leaves F(5x5) out: its transforms scale values by
    /// up to 64 before the products round them to 8 bits of mantissa, and
    /// g170 b6c96's policy on an empty 9x9 board moved 0.036 from
    /// KataGo's (0.013 with F(3x3) or F(4x4); `nn_parity`'s bf16 test
    /// allows 0.03).
    /// (A direct
    /// convolution, tap by tap, ran here on batches of up to 9 tiles until
    /// 2026-11-28: against F(3x3) tiles it was 1.5-2x slower on 5x5 to
    /// 11x11 boards at batch 1 on Zen 4, with the AVX2 kernels as with the
    /// AVX-512 ones.)
    pub(super) fn tiling(&self, n: usize, h: usize, w: usize) -> Tiling {
        let small = match (&self.kind, &self.small) {
            (ConvKind::Winograd5x5, _) => return Tiling::F3K5,
            (_, None) => return Tiling::F4,
            (_, Some(small)) => small,
        };
        Tiling::forced().unwrap_or_else(|| Tiling::cheapest(n, h, w, !small.bf16))
    }
}

/// `[out, in, ky, kx]` weights as `[ky, kx, in, out]`: one `[in, out]`
/// matrix per tap.
fn taps_in_out(w: &[f32], ci: usize, co: usize, ky: usize, kx: usize) -> Vec<f32> {
    let mut t = vec![0f32; ky * kx * ci * co];
    for oc in 0..co {
        for ic in 0..ci {
            for y in 0..ky {
                for x in 0..kx {
                    t[((y * kx + x) * ci + ic) * co + oc] = w[((oc * ci + ic) * ky + y) * kx + x];
                }
            }
        }
    }
    t
}

/// `x[row, point, c] += bias[row, c]` for `[n, hw, c]` activations.
pub(super) fn add_row_bias(x: &mut [f32], bias: &[f32], hw: usize, c: usize) {
    for (row, b) in x.chunks_exact_mut(hw * c).zip(bias.chunks_exact(c)) {
        for point in row.chunks_exact_mut(c) {
            point.iter_mut().zip(b).for_each(|(v, b)| *v += b);
        }
    }
}
