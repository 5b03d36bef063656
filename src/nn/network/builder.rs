//! Folding batch norms into the layers they follow (the pure functions
//! both backends build from), and the libtorch net's [`Fold`]: its layers
//! as tensors (channels-last layout) or Winograd weights.

use super::*;

// ---------------------------------------------------------------------------
// Folding batch norms (shared by the libtorch net and the pure-Rust CPU net)

/// A conv's weights (`[out, in, y, x]`) with each input channel scaled by
/// `in_scale` and, when `affine = (scale, bias)` is given, each output
/// channel scaled by `scale`; returns the weights and `bias`.
pub(super) fn fold_conv(
    c: &ConvLayer,
    affine: Option<(&[f32], &[f32])>,
    in_scale: Option<&[f32]>,
) -> (Vec<f32>, Option<Vec<f32>>) {
    let per_out = c.in_channels * c.y_size * c.x_size;
    let per_in = c.y_size * c.x_size;
    let mut w = c.weights.clone();
    if let Some(si) = in_scale {
        for chunk in w.chunks_exact_mut(per_out) {
            for (ic, kernel) in chunk.chunks_exact_mut(per_in).enumerate() {
                for v in kernel {
                    *v *= si[ic];
                }
            }
        }
    }
    let bias_values = affine.map(|(scale, bias)| {
        for (oc, chunk) in w.chunks_exact_mut(per_out).enumerate() {
            for v in chunk {
                *v *= scale[oc];
            }
        }
        bias.to_vec()
    });
    (w, bias_values)
}

/// A batch norm + activation that cannot be folded into the conv before it.
pub(super) enum NormActParams {
    /// `relu(x + shift)`; the positive scales are folded into the input
    /// channels of the convs that read the result.
    Shift(Vec<f32>),
    /// `act(x * scale + bias)`.
    Affine {
        scale: Vec<f32>,
        bias: Vec<f32>,
        act: Activation,
    },
}

/// The form of a normalisation + activation, and the per-channel factor
/// (if any) the convs reading its output must fold into their input
/// channels: `relu(s x + b) = s relu(x + b / s)` when every `s > 0`.
pub(super) fn fold_norm_act(
    bn: &BatchNormLayer,
    act: &ActivationLayer,
    fold_relu_scales: bool,
) -> (NormActParams, Option<Vec<f32>>) {
    let (s, b) = bn.merged();
    let shift: Vec<f32> = s.iter().zip(&b).map(|(s, b)| b / s).collect();
    let foldable = fold_relu_scales
        && act.activation == Activation::Relu
        && s.iter().all(|&v| v > 0.0)
        && shift.iter().all(|v| v.is_finite());
    if foldable {
        (NormActParams::Shift(shift), Some(s))
    } else {
        let na = NormActParams::Affine {
            scale: s,
            bias: b,
            act: act.activation,
        };
        (na, None)
    }
}

/// A dense layer's weights (`[in, out]`) with each output column scaled by
/// `col_scale` (a folded batch-norm scale).
pub(super) fn fold_dense(m: &MatMulLayer, col_scale: Option<&[f32]>) -> Vec<f32> {
    let mut w = m.weights.clone();
    if let Some(s) = col_scale {
        for row in w.chunks_exact_mut(m.out_channels) {
            for (v, sc) in row.iter_mut().zip(s) {
                *v *= sc;
            }
        }
    }
    w
}

// ---------------------------------------------------------------------------
// Building tensors from descriptors

/// How the libtorch net stores its layers (see the [`Fold`] impl).
pub(super) struct Builder {
    pub(super) device: Device,
    pub(super) kind: Kind,
    pub(super) channels_last: bool,
    pub(super) fold_relu_scales: bool,
    /// Run 3x3 convs by Winograd (CPU, f32 only).
    pub(super) winograd: bool,
    /// Built as for CUDA: explicit cuDNN convolution flags, no CPU-only
    /// fused ops.
    pub(super) cuda_way: bool,
}

/// The same NCHW tensor with NHWC strides (tch 0.24 has no memory-format
/// API; libtorch recognises the strides and picks its channels-last kernels).
pub(super) fn to_channels_last(t: &Tensor) -> Tensor {
    t.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
}

/// `data` with denormal values flushed to 0, as the CPU backend's
/// `AlignedWeights` does: some trained nets hold them, they slow x86
/// products a hundredfold, and they change no output.
pub(super) fn flush_denormals(data: &[f32]) -> std::borrow::Cow<'_, [f32]> {
    if data.iter().any(|v| v.is_subnormal()) {
        let flushed = data.iter().map(|&v| if v.is_subnormal() { 0.0 } else { v });
        std::borrow::Cow::Owned(flushed.collect())
    } else {
        std::borrow::Cow::Borrowed(data)
    }
}

impl Builder {
    /// Puts a 4-D tensor in the layout the convolutions run fastest in.
    pub(super) fn layout(&self, t: Tensor) -> Tensor {
        if self.channels_last {
            to_channels_last(&t)
        } else {
            t
        }
    }

    /// A weight tensor of `shape` in the net's precision, denormal values
    /// flushed to 0 (see [`flush_denormals`]).
    pub(super) fn tensor(&self, data: &[f32], shape: &[i64]) -> Tensor {
        let data = flush_denormals(data);
        Tensor::from_slice(&data)
            .reshape(shape)
            .to_device(self.device)
            .to_kind(self.kind)
    }
}

/// The libtorch net stores convs as libtorch convolutions or (CPU, f32,
/// 3x3) Winograd weights, everything else as tensors.
impl Fold for Builder {
    type Conv = Conv;
    type NormAct = NormAct;
    type Dense = Dense;
    type Transformer = TorchTransformer;
    type RmsTip = TorchRmsTip;

    fn folded_conv(&self, c: &ConvLayer, w: &[f32], bias_values: Option<Vec<f32>>) -> Conv {
        let winograd = self.channels_last
            && self.device == Device::Cpu
            && self.kind == Kind::Float
            && self.winograd
            && (c.y_size, c.x_size, c.dilation_y, c.dilation_x) == (3, 3, 1, 1);
        if winograd {
            return Conv::Winograd(Winograd::new(
                w,
                bias_values.as_deref(),
                c.in_channels,
                c.out_channels,
            ));
        }
        let bias = bias_values.map(|b| self.tensor(&b, &[c.out_channels as i64]));
        let shape = [
            c.out_channels as i64,
            c.in_channels as i64,
            c.y_size as i64,
            c.x_size as i64,
        ];
        Conv::Torch(TorchConv {
            weight: self.layout(self.tensor(w, &shape)),
            bias,
            padding: [
                (c.y_size as i64 / 2) * c.dilation_y as i64,
                (c.x_size as i64 / 2) * c.dilation_x as i64,
            ],
            dilation: [c.dilation_y as i64, c.dilation_x as i64],
            cuda_way: self.cuda_way,
        })
    }

    /// A normalisation + activation, and the per-channel factor (if any)
    /// the convs reading its output must fold into their input channels.
    fn norm_act(&self, bn: &BatchNormLayer, act: &ActivationLayer) -> (NormAct, Option<Vec<f32>>) {
        let shape = [1, bn.num_channels as i64, 1, 1];
        match fold_norm_act(bn, act, self.fold_relu_scales) {
            (NormActParams::Shift(shift), s) => (
                NormAct::Shift {
                    shift: self.tensor(&shift, &shape),
                    fused: !self.cuda_way && self.kind == Kind::Float,
                },
                s,
            ),
            (NormActParams::Affine { scale, bias, act }, s) => (
                NormAct::Affine {
                    scale: self.tensor(&scale, &shape),
                    bias: self.tensor(&bias, &shape),
                    act,
                },
                s,
            ),
        }
    }

    /// A dense layer; `col_scale` multiplies each output column (a folded
    /// batch-norm scale), `bias` is added after.
    fn dense(&self, m: &MatMulLayer, col_scale: Option<&[f32]>, bias: Option<&[f32]>) -> Dense {
        let w = fold_dense(m, col_scale);
        Dense {
            weight: self.tensor(&w, &[m.in_channels as i64, m.out_channels as i64]),
            bias: bias.map(|b| self.tensor(b, &[m.out_channels as i64])),
        }
    }

    fn transformer(&self, block: TransformerBlock<'_>) -> Result<TorchTransformer, String> {
        TorchTransformer::build(self, block)
    }

    fn rms_tip(&self, norm: &RmsNormLayer, act: Activation) -> TorchRmsTip {
        TorchRmsTip::new(self, norm, act)
    }
}
