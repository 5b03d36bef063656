//! The transformer pieces of KataGo's `model_pytorch.py`: the pre-norm
//! attention block (`TransformerAttentionBlock`: RMSNorm, Q/K/V
//! projections, rotary position embeddings fixed or learned, grouped
//! key/value heads, scaled dot-product attention over the on-board points,
//! output projection), the SwiGLU feed-forward block (`TransformerFFNBlock`)
//! and the RMSNorm trunk tip (`RMSNormMask`).
//!
//! Parameters carry KataGo's names and groups (`add_reg_dict`): the four
//! attention projections are `normal_attn`, the feed-forward matrices
//! `normal`, every norm weight and the RoPE frequencies `noreg`, and the
//! trunk tip's weights `output`. Both blocks return the residual only, as
//! KataGo's do; the caller adds it to the trunk.

use tch::{Kind, Tensor};

use super::init::{Builder, ParamGroup};
use super::masks::{cast, Masks};
use crate::train::config::{Rope, TransformerConfig};

/// `torch.nn.RMSNorm`'s epsilon in every KataGo transformer norm.
pub(super) const RMS_EPSILON: f64 = 1e-6;

/// `x` (`NCHW`) as a sequence `[N, H·W, C]`.
fn to_seq(x: &Tensor) -> Tensor {
    let s = x.size();
    x.view([s[0], s[1], s[2] * s[3]]).permute([0, 2, 1])
}

/// A sequence `[N, H·W, C]` back to `NCHW` of `shape`.
fn from_seq(x: &Tensor, shape: &[i64]) -> Tensor {
    x.permute([0, 2, 1]).contiguous().view(shape)
}

/// `x · wᵀ` for a torch `[out, in]` weight, in the trunk's compute kind.
fn linear(x: &Tensor, w: &Tensor, kind: Option<Kind>) -> Tensor {
    cast(x, kind).matmul(&cast(w, kind).tr())
}

/// A weight-only RMSNorm over the last dimension (`torch.nn.RMSNorm`), in
/// fp32 as autocast runs it.
struct RmsNorm {
    weight: Tensor,
}

impl RmsNorm {
    fn new(b: &mut Builder, name: &str, c: i64) -> RmsNorm {
        let weight = b.param_filled(&format!("{name}.weight"), &[c], 1.0, ParamGroup::NoReg);
        RmsNorm { weight }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        let c = self.weight.size()[0];
        x.to_kind(Kind::Float)
            .rms_norm([c].as_slice(), Some(&self.weight), RMS_EPSILON)
    }
}

/// `TransformerAttentionBlock` with `use_rope` (KataGo's `attnrope`).
pub(super) struct Attention {
    rope_freqs: Option<Tensor>,
    theta: f64,
    q_proj: Tensor,
    k_proj: Tensor,
    v_proj: Tensor,
    out_proj: Tensor,
    norm1: RmsNorm,
    heads: i64,
    kv_heads: i64,
    q_dim: i64,
    v_dim: i64,
}

impl Attention {
    /// The block on `c` channels, registered in KataGo's order (its own
    /// `rope_freqs`, then the projections, then `norm1`).
    pub(super) fn new(b: &mut Builder, name: &str, c: i64, t: &TransformerConfig) -> Attention {
        let (q_dim, v_dim) = t.head_dims(c);
        let (heads, kv_heads) = (t.heads, t.kv_heads);
        let (rope_freqs, theta) = match t.rope {
            Rope::Learnable => {
                let f = b.param_rope_freqs(&format!("{name}.rope_freqs"), kv_heads, q_dim / 2);
                (Some(f), 0.0)
            }
            Rope::Fixed { theta } => (None, theta),
        };
        let mut proj = |what: &str, out: i64, fan_in: i64| {
            let bound = 1.0 / (fan_in as f64).sqrt();
            b.param_uniform(
                &format!("{name}.{what}.weight"),
                &[out, fan_in],
                bound,
                ParamGroup::NormalAttn,
            )
        };
        let q_proj = proj("q_proj", heads * q_dim, c);
        let k_proj = proj("k_proj", kv_heads * q_dim, c);
        let v_proj = proj("v_proj", kv_heads * v_dim, c);
        let out_proj = proj("out_proj", c, heads * v_dim);
        let norm1 = RmsNorm::new(b, &format!("{name}.norm1"), c);
        Attention {
            rope_freqs,
            theta,
            q_proj,
            k_proj,
            v_proj,
            out_proj,
            norm1,
            heads,
            kv_heads,
            q_dim,
            v_dim,
        }
    }

    /// Rotation angles `[S, heads or 1, q_dim/2]` of the points of an
    /// `h`×`w` board, row-major: learned `ωx·col + ωy·row` per key/value
    /// head, or KataGo's fixed table (`precompute_freqs_cos_sin_2d`: the
    /// first half of the pairs turn with the row, the second with the
    /// column, at frequencies `theta^(-2j/(d/2))`).
    fn angles(&self, h: i64, w: i64, device: tch::Device) -> Tensor {
        let opts = (Kind::Float, device);
        let idx = Tensor::arange(h * w, opts);
        let row = idx.floor_divide_scalar(w);
        let col = &idx - &row * w;
        match &self.rope_freqs {
            Some(f) => {
                let (fx, fy) = (f.select(2, 0), f.select(2, 1));
                col.view([-1, 1, 1]) * fx.unsqueeze(0) + row.view([-1, 1, 1]) * fy.unsqueeze(0)
            }
            None => {
                let half = self.q_dim / 2;
                let exps = Tensor::arange_start_step(0, half, 2, opts) / half as f64;
                // `1 / theta ** exps` as KataGo computes it (a scalar base:
                // no CPU tensor meets a CUDA one).
                let freqs = Tensor::pow_scalar(self.theta, &exps).reciprocal();
                let emb_h = row.view([-1, 1]) * freqs.view([1, -1]);
                let emb_w = col.view([-1, 1]) * freqs.view([1, -1]);
                Tensor::cat(&[emb_h, emb_w], 1).unsqueeze(1)
            }
        }
    }

    /// The block's residual for the trunk `x` (`NCHW`).
    pub(super) fn forward(&self, x: &Tensor, m: &Masks, kind: Option<Kind>) -> Tensor {
        let shape = x.size();
        let (n, s) = (shape[0], shape[2] * shape[3]);
        let xn = self.norm1.forward(&to_seq(x));
        let q = linear(&xn, &self.q_proj, kind).view([n, s, self.heads, self.q_dim]);
        let k = linear(&xn, &self.k_proj, kind).view([n, s, self.kv_heads, self.q_dim]);
        let v = linear(&xn, &self.v_proj, kind).view([n, s, self.kv_heads, self.v_dim]);

        let rep = self.heads / self.kv_heads;
        let angles_k = self.angles(shape[2], shape[3], x.device());
        let angles_q = if self.rope_freqs.is_some() && rep > 1 {
            angles_k.repeat_interleave_self_int(rep, 1, None)
        } else {
            angles_k.shallow_clone()
        };
        let q = rotate(&q, &angles_q);
        let k = rotate(&k, &angles_k);

        let q = q.permute([0, 2, 1, 3]);
        let mut k = k.permute([0, 2, 1, 3]);
        let mut v = v.permute([0, 2, 1, 3]);
        if rep > 1 {
            // Query head h reads key/value head h / rep.
            k = k.repeat_interleave_self_int(rep, 1, None);
            v = v.repeat_interleave_self_int(rep, 1, None);
        }
        let attn_mask = (!m.full).then(|| {
            // Off-board keys get -inf: no point attends to them.
            let off = m.mask.view([n, 1, 1, s]).eq(0.0);
            Tensor::zeros([n, 1, 1, s], (q.kind(), q.device())).masked_fill(&off, f64::NEG_INFINITY)
        });
        let scale = 1.0 / (self.q_dim as f64).sqrt();
        let out = Tensor::scaled_dot_product_attention(
            &q,
            &k,
            &v,
            attn_mask.as_ref(),
            0.0,
            false,
            scale,
            false,
        );
        let out = out
            .permute([0, 2, 1, 3])
            .contiguous()
            .view([n, s, self.heads * self.v_dim]);
        from_seq(&linear(&out, &self.out_proj, kind), &shape)
    }
}

/// Rotates the `(x0, x1)` channel pairs of `x` (`[N, S, H, D]`) by
/// `angles` (`[S, H or 1, D/2]`): KataGo's `apply_learnable_rotary_emb`,
/// which equals `apply_rotary_emb` on its fixed table.
fn rotate(x: &Tensor, angles: &Tensor) -> Tensor {
    let s = x.size();
    let pairs = x.view([s[0], s[1], s[2], s[3] / 2, 2]);
    let (x0, x1) = (pairs.select(4, 0), pairs.select(4, 1));
    let kind = x.kind();
    let (cos, sin) = (
        angles.cos().to_kind(kind).unsqueeze(0),
        angles.sin().to_kind(kind).unsqueeze(0),
    );
    let a = &x0 * &cos - &x1 * &sin;
    let b = &x0 * &sin + &x1 * &cos;
    Tensor::stack(&[a, b], -1).view(s.as_slice())
}

/// `TransformerFFNBlock` with SwiGLU (KataGo's `ffnsg`):
/// `linear2(silu(linear1(n)) · gate(n))`, `n = norm(x)`.
pub(super) struct Ffn {
    linear1: Tensor,
    gate: Tensor,
    linear2: Tensor,
    norm: RmsNorm,
}

impl Ffn {
    /// The block on `c` channels, registered in KataGo's order.
    pub(super) fn new(b: &mut Builder, name: &str, c: i64, t: &TransformerConfig) -> Ffn {
        let mut lin = |what: &str, out: i64, fan_in: i64| {
            b.param_uniform(
                &format!("{name}.{what}.weight"),
                &[out, fan_in],
                1.0 / (fan_in as f64).sqrt(),
                ParamGroup::Normal,
            )
        };
        let linear1 = lin("ffn_linear1", t.ffn, c);
        let gate = lin("ffn_linear_gate", t.ffn, c);
        let linear2 = lin("ffn_linear2", c, t.ffn);
        let norm = RmsNorm::new(b, &format!("{name}.norm"), c);
        Ffn {
            linear1,
            gate,
            linear2,
            norm,
        }
    }

    /// The block's residual for the trunk `x` (`NCHW`).
    pub(super) fn forward(&self, x: &Tensor, kind: Option<Kind>) -> Tensor {
        let xn = self.norm.forward(&to_seq(x));
        let hidden = linear(&xn, &self.linear1, kind).silu() * linear(&xn, &self.gate, kind);
        from_seq(&linear(&hidden, &self.linear2, kind), &x.size())
    }
}

/// An attention or feed-forward block.
pub(super) enum TransformerBlock {
    Attention(Attention),
    Ffn(Ffn),
}

impl TransformerBlock {
    /// The block's residual for the trunk `x` (`NCHW`).
    pub(super) fn forward(&self, x: &Tensor, m: &Masks, kind: Option<Kind>) -> Tensor {
        match self {
            TransformerBlock::Attention(a) => a.forward(x, m, kind),
            TransformerBlock::Ffn(f) => f.forward(x, kind),
        }
    }
}

/// KataGo's `RMSNormMask` at the trunk tip: `(x / rms · gamma + beta) ·
/// mask`, the mean square per point over the channels or, `spatial`, per
/// board over the channels and its points.
pub(super) struct RmsTip {
    gamma: Tensor,
    beta: Tensor,
    spatial: bool,
}

impl RmsTip {
    /// Registered as KataGo's module does: `gamma` (spatial) or
    /// `norm.weight` (the inner `torch.nn.RMSNorm`, after its own `beta`).
    pub(super) fn new(b: &mut Builder, name: &str, c: i64, spatial: bool) -> RmsTip {
        if spatial {
            let gamma = b.param_filled(&format!("{name}.gamma"), &[c], 1.0, ParamGroup::Output);
            let beta = b.param_filled(&format!("{name}.beta"), &[c], 0.0, ParamGroup::Output);
            RmsTip {
                gamma,
                beta,
                spatial,
            }
        } else {
            let beta = b.param_filled(&format!("{name}.beta"), &[c], 0.0, ParamGroup::Output);
            let gamma = b.param_filled(
                &format!("{name}.norm.weight"),
                &[c],
                1.0,
                ParamGroup::Output,
            );
            RmsTip {
                gamma,
                beta,
                spatial,
            }
        }
    }

    /// The normalised trunk, fp32, zero off the board.
    pub(super) fn forward(&self, x: &Tensor, m: &Masks) -> Tensor {
        let x = x.to_kind(Kind::Float);
        let c = self.beta.size()[0];
        let beta = self.beta.view([1, -1, 1, 1]);
        let out = if self.spatial {
            let sq =
                (&x * &x * &m.mask).sum_dim_intlist([1i64, 2, 3].as_slice(), true, Kind::Float);
            let mean_sq = sq / (&m.mask_sum_hw * c as f64 + RMS_EPSILON);
            let rms = (mean_sq + RMS_EPSILON).sqrt();
            (x / rms) * self.gamma.view([1, -1, 1, 1]) + beta
        } else {
            let nhwc = x.permute([0, 2, 3, 1]);
            let normed = nhwc.rms_norm([c].as_slice(), Some(&self.gamma), RMS_EPSILON);
            normed.permute([0, 3, 1, 2]) + beta
        };
        out * &m.mask
    }
}
