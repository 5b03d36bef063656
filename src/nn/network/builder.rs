//! Building a network's tensors from a model file's descriptors (batch
//! norms folded into convolutions, channels-last layout, Winograd weights).

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

impl Builder {
    /// Puts a 4-D tensor in the layout the convolutions run fastest in.
    pub(super) fn layout(&self, t: Tensor) -> Tensor {
        if self.channels_last {
            to_channels_last(&t)
        } else {
            t
        }
    }

    pub(super) fn tensor(&self, data: &[f32], shape: &[i64]) -> Tensor {
        Tensor::from_slice(data)
            .reshape(shape)
            .to_device(self.device)
            .to_kind(self.kind)
    }

    /// A conv whose output is scaled per channel by `scale` then offset by
    /// `bias`, and whose input channels are scaled by `in_scale`.
    pub(super) fn conv(
        &self,
        c: &ConvLayer,
        affine: Option<(&[f32], &[f32])>,
        in_scale: Option<&[f32]>,
    ) -> Conv {
        let (w, bias_values) = fold_conv(c, affine, in_scale);
        let winograd = self.channels_last
            && self.device == Device::Cpu
            && self.kind == Kind::Float
            && self.winograd
            && (c.y_size, c.x_size, c.dilation_y, c.dilation_x) == (3, 3, 1, 1);
        if winograd {
            return Conv::Winograd(Winograd::new(
                &w,
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
            weight: self.layout(self.tensor(&w, &shape)),
            bias,
            padding: [
                (c.y_size as i64 / 2) * c.dilation_y as i64,
                (c.x_size as i64 / 2) * c.dilation_x as i64,
            ],
            dilation: [c.dilation_y as i64, c.dilation_x as i64],
            cuda_way: self.cuda_way,
        })
    }

    /// A conv with the batch norm that follows it folded in.
    pub(super) fn conv_bn(
        &self,
        c: &ConvLayer,
        bn: &BatchNormLayer,
        in_scale: Option<&[f32]>,
    ) -> Conv {
        let (s, b) = bn.merged();
        self.conv(c, Some((&s, &b)), in_scale)
    }

    /// A normalisation + activation, and the per-channel factor (if any)
    /// the convs reading its output must fold into their input channels.
    pub(super) fn norm_act(
        &self,
        bn: &BatchNormLayer,
        act: &ActivationLayer,
    ) -> (NormAct, Option<Vec<f32>>) {
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
    pub(super) fn dense(
        &self,
        m: &MatMulLayer,
        col_scale: Option<&[f32]>,
        bias: Option<&[f32]>,
    ) -> Dense {
        let w = fold_dense(m, col_scale);
        Dense {
            weight: self.tensor(&w, &[m.in_channels as i64, m.out_channels as i64]),
            bias: bias.map(|b| self.tensor(b, &[m.out_channels as i64])),
        }
    }

    pub(super) fn block(&self, b: &Block) -> NetBlock {
        match b {
            Block::Ordinary(b) => {
                let (pre, si) = self.norm_act(&b.pre_bn, &b.pre_activation);
                NetBlock::Ordinary {
                    pre,
                    conv1: self.conv_bn(&b.regular_conv, &b.mid_bn, si.as_deref()),
                    mid_act: b.mid_activation.activation,
                    conv2: self.conv(&b.final_conv, None, None),
                }
            }
            Block::GlobalPooling(b) => {
                let (ms, _) = b.mid_bn.merged();
                let (pre, si) = self.norm_act(&b.pre_bn, &b.pre_activation);
                NetBlock::GlobalPooling {
                    pre,
                    regular: self.conv_bn(&b.regular_conv, &b.mid_bn, si.as_deref()),
                    gpool: self.conv_bn(&b.gpool_conv, &b.gpool_bn, si.as_deref()),
                    gpool_act: b.gpool_activation.activation,
                    gpool_to_bias: self.dense(&b.gpool_to_bias_mul, Some(&ms), None),
                    mid_act: b.mid_activation.activation,
                    conv2: self.conv(&b.final_conv, None, None),
                }
            }
            Block::NestedBottleneck(b) => {
                let (pre, si) = self.norm_act(&b.pre_bn, &b.pre_activation);
                let (post, so) = self.norm_act(&b.post_bn, &b.post_activation);
                NetBlock::Nested {
                    pre,
                    pre_conv: self.conv(&b.pre_conv, None, si.as_deref()),
                    blocks: b.blocks.iter().map(|x| self.block(x)).collect(),
                    post,
                    post_conv: self.conv(&b.post_conv, None, so.as_deref()),
                }
            }
        }
    }

    /// The trunk, and the input-channel factor the heads' first convs must fold in.
    pub(super) fn trunk(&self, t: &Trunk) -> (NetTrunk, Option<Vec<f32>>) {
        let (tip, si) = self.norm_act(&t.tip_bn, &t.tip_activation);
        let trunk = NetTrunk {
            initial_conv: self.conv(&t.initial_conv, None, None),
            initial_matmul: self.dense(&t.initial_matmul, None, None),
            blocks: t.blocks.iter().map(|b| self.block(b)).collect(),
            tip,
        };
        (trunk, si)
    }

    pub(super) fn policy_head(&self, p: &PolicyHead, si: Option<&[f32]>) -> NetPolicy {
        let (ps, _) = p.p1_bn.merged();
        NetPolicy {
            p1: self.conv_bn(&p.p1_conv, &p.p1_bn, si),
            g1: self.conv_bn(&p.g1_conv, &p.g1_bn, si),
            g1_act: p.g1_activation.activation,
            gpool_to_bias: self.dense(&p.gpool_to_bias_mul, Some(&ps), None),
            p1_act: p.p1_activation.activation,
            p2: self.conv(&p.p2_conv, None, None),
            pass1: match &p.pass_mlp {
                Some((bias, _, _)) => self.dense(&p.gpool_to_pass_mul, None, Some(&bias.weights)),
                None => self.dense(&p.gpool_to_pass_mul, None, None),
            },
            pass2: p
                .pass_mlp
                .as_ref()
                .map(|(_, act, mul2)| (act.activation, self.dense(mul2, None, None))),
        }
    }

    pub(super) fn value_head(&self, v: &ValueHead, si: Option<&[f32]>) -> NetValue {
        NetValue {
            v1: self.conv_bn(&v.v1_conv, &v.v1_bn, si),
            v1_act: v.v1_activation.activation,
            v2: self.dense(&v.v2_mul, None, Some(&v.v2_bias.weights)),
            v2_act: v.v2_activation.activation,
            v3: self.dense(&v.v3_mul, None, Some(&v.v3_bias.weights)),
            sv3: self.dense(&v.sv3_mul, None, Some(&v.sv3_bias.weights)),
            ownership: self.conv(&v.ownership_conv, None, None),
        }
    }
}
