//! Folding batch norms into the layers they follow: the pure functions
//! both backends build from (the libtorch net's [`Fold`] is in
//! `libtorch.rs`, the Rust backend's in `cpu.rs`).

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
