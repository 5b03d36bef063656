//! Transformer layers of the libtorch net (model version 17 layers, also
//! found in version 15 nets such as KaTrain's `b10c384h6nbttflrs`): the
//! same arithmetic as the CPU backend's (`cpu/transformer.rs`) and KataGo's
//! backends, as batched tensor products over `[n, points, channels]`.
//! Norms and softmax run in f32 whatever the net's precision.

use super::*;

/// A transformer block as the libtorch net runs it.
pub(in crate::nn::network) enum TorchTransformer {
    /// A self-attention block.
    Attention(Attention),
    /// A SwiGLU feed-forward block.
    Ffn(Ffn),
}

/// The trunk's RMSNorm tip and its activation.
pub(in crate::nn::network) struct TorchRmsTip {
    /// `[1, C, 1, 1]`, f32.
    gamma: Tensor,
    /// `[1, C, 1, 1]`, f32.
    beta: Tensor,
    eps: f64,
    spatial: bool,
    act: Activation,
}

/// An f32 tensor of `shape` on `device`, denormals flushed: norm weights
/// and RoPE frequencies stay f32 whatever the net's precision.
fn f32_tensor(v: &[f32], shape: &[i64], device: Device) -> Tensor {
    Tensor::from_slice(&flush_denormals(v))
        .reshape(shape)
        .to_device(device)
}

/// The weight-only RMSNorm at the start of a block.
pub(in crate::nn::network) struct Norm {
    /// `[C]`, f32.
    weight: Tensor,
    eps: f64,
}

/// A self-attention block.
pub(in crate::nn::network) struct Attention {
    norm: Norm,
    /// `[C, heads * q_dim]` and so on, in the net's precision.
    q: Tensor,
    k: Tensor,
    v: Tensor,
    out: Tensor,
    heads: i64,
    kv_heads: i64,
    q_dim: i64,
    v_dim: i64,
    rope: Rope,
}

/// How queries and keys are rotated by position.
enum Rope {
    None,
    /// KataGo's fixed frequencies, `[pairs]` (f32), and which pairs turn
    /// with y (the first half) rather than x.
    Fixed {
        freqs: Tensor,
    },
    /// Learned `[kv_heads, pairs, 2]` frequencies (x, y), f32.
    Learned {
        freqs: Tensor,
    },
}

/// A SwiGLU feed-forward block.
pub(in crate::nn::network) struct Ffn {
    norm: Norm,
    linear1: Tensor,
    gate: Tensor,
    linear2: Tensor,
}

impl TorchTransformer {
    /// Builds `block`'s tensors on the builder's device and precision.
    pub(in crate::nn::network) fn build(
        b: &Builder,
        block: TransformerBlock<'_>,
    ) -> Result<Self, String> {
        // Norm weights and RoPE frequencies stay f32 whatever the net's
        // precision.
        let f32_tensor = |v: &[f32], shape: &[i64]| f32_tensor(v, shape, b.device);
        let mat =
            |m: &MatMulLayer| b.tensor(&m.weights, &[m.in_channels as i64, m.out_channels as i64]);
        let norm = |n: &TransformerNorm| Norm {
            weight: f32_tensor(&n.weight, &[n.num_channels as i64]),
            eps: f64::from(n.epsilon),
        };
        Ok(match block {
            TransformerBlock::Attention(a) => {
                let pairs = (a.q_head_dim / 2) as i64;
                let rope = match (a.use_rope, a.learnable_rope) {
                    (false, _) => Rope::None,
                    (true, true) => Rope::Learned {
                        freqs: f32_tensor(&a.rope_freqs, &[a.num_kv_heads as i64, pairs, 2]),
                    },
                    (true, false) => {
                        let per_axis = pairs / 2;
                        let half = pairs as f32;
                        let freqs: Vec<f32> = (0..pairs)
                            .map(|p| {
                                let i = if p < per_axis { p } else { p - per_axis };
                                1.0 / a.rope_theta.powf((2 * i) as f32 / half)
                            })
                            .collect();
                        Rope::Fixed {
                            freqs: f32_tensor(&freqs, &[pairs]),
                        }
                    }
                };
                TorchTransformer::Attention(Attention {
                    norm: norm(&a.pre_ln),
                    q: mat(&a.q_proj),
                    k: mat(&a.k_proj),
                    v: mat(&a.v_proj),
                    out: mat(&a.out_proj),
                    heads: a.num_heads as i64,
                    kv_heads: a.num_kv_heads as i64,
                    q_dim: a.q_head_dim as i64,
                    v_dim: a.v_head_dim as i64,
                    rope,
                })
            }
            TransformerBlock::Ffn(f) => {
                if !f.use_swiglu {
                    return Err(format!("{}: a feed-forward block without SwiGLU", f.name));
                }
                TorchTransformer::Ffn(Ffn {
                    norm: norm(&f.pre_ln),
                    linear1: mat(&f.linear1),
                    gate: mat(&f.gate),
                    linear2: mat(&f.linear2),
                })
            }
        })
    }

    /// `x += block(x)` (`x` is `[N, C, H, W]`), zeroed off the board.
    pub(in crate::nn::network) fn add_to(&self, x: &mut Tensor, ctx: &Ctx) -> Result<(), NetError> {
        let (n, c, h, w) = (x.size()[0], x.size()[1], x.size()[2], x.size()[3]);
        let seq = x.f_permute([0, 2, 3, 1])?.f_reshape([n, h * w, c])?;
        // `[N, S, 1]` board mask of the points.
        let point_mask = ctx
            .mask
            .as_ref()
            .map(|m| m.reshape([n, h * w, 1]).to_kind(Kind::Float));
        let y = match self {
            TorchTransformer::Attention(a) => a.forward(&seq, point_mask.as_ref(), (h, w))?,
            TorchTransformer::Ffn(f) => f.forward(&seq, point_mask.as_ref())?,
        };
        let y = match &point_mask {
            Some(m) => {
                let m = m.to_kind(y.kind());
                y * m
            }
            None => y,
        };
        let y = y.f_reshape([n, h, w, c])?.f_permute([0, 3, 1, 2])?;
        let _ = x.f_add_(&y.to_kind(x.kind()))?;
        Ok(())
    }
}

impl TorchRmsTip {
    pub(in crate::nn::network) fn new(
        b: &Builder,
        n: &RmsNormLayer,
        act: Activation,
    ) -> TorchRmsTip {
        let shape = [1, n.num_channels as i64, 1, 1];
        TorchRmsTip {
            gamma: f32_tensor(&n.gamma, &shape, b.device),
            beta: f32_tensor(&n.beta, &shape, b.device),
            eps: f64::from(n.epsilon),
            spatial: n.spatial,
            act,
        }
    }

    /// The tip on `x` (`[N, C, H, W]`), zeroed off the board.
    pub(in crate::nn::network) fn forward(&self, x: &Tensor, ctx: &Ctx) -> Tensor {
        let xf = x.to_kind(Kind::Float);
        // Off the board the trunk holds what the convolutions left there;
        // only the board's points count.
        let sq = match &ctx.mask {
            Some(m) => xf.square() * m.to_kind(Kind::Float),
            None => xf.square(),
        };
        let mean_sq = if self.spatial {
            let c = x.size()[1] as f64;
            let sum = sq.sum_dim_intlist([1i64, 2, 3].as_slice(), true, None);
            let area = ctx.area.to_kind(Kind::Float).reshape([-1, 1, 1, 1]);
            sum / (area * c)
        } else {
            sq.mean_dim([1i64].as_slice(), true, None)
        };
        let y = xf * (mean_sq + self.eps).rsqrt() * &self.gamma + &self.beta;
        ctx.apply(activate(y.to_kind(x.kind()), self.act))
    }
}

impl Norm {
    /// `x / rms(x) * weight` per point, in f32, 0 off the board.
    fn forward(&self, seq: &Tensor, mask: Option<&Tensor>) -> Tensor {
        let x = seq.to_kind(Kind::Float);
        let scale = (x.square().mean_dim([-1i64].as_slice(), true, None) + self.eps).rsqrt();
        let y = x * scale * &self.weight;
        match mask {
            Some(m) => y * m,
            None => y,
        }
    }
}

impl Ffn {
    fn forward(&self, seq: &Tensor, mask: Option<&Tensor>) -> Result<Tensor, NetError> {
        let xn = self.norm.forward(seq, mask).to_kind(self.linear1.kind());
        let a = xn.f_matmul(&self.linear1)?;
        let g = xn.f_matmul(&self.gate)?;
        Ok((a.silu() * g).f_matmul(&self.linear2)?)
    }
}

impl Attention {
    fn forward(
        &self,
        seq: &Tensor,
        mask: Option<&Tensor>,
        (h, w): (i64, i64),
    ) -> Result<Tensor, NetError> {
        let (n, s) = (seq.size()[0], seq.size()[1]);
        let kind = self.q.kind();
        let xn = self.norm.forward(seq, mask).to_kind(kind);
        let heads = |t: Tensor, count: i64, dim: i64| -> Result<Tensor, NetError> {
            Ok(t.f_view([n, s, count, dim])?.f_permute([0, 2, 1, 3])?)
        };
        let mut q = heads(xn.f_matmul(&self.q)?, self.heads, self.q_dim)?;
        let mut k = heads(xn.f_matmul(&self.k)?, self.kv_heads, self.q_dim)?;
        let v = heads(xn.f_matmul(&self.v)?, self.kv_heads, self.v_dim)?;
        if let Some((cos, sin)) = self.rope_tables(h, w, seq.device()) {
            q = self.rotate(&q, &cos, &sin, self.heads)?;
            k = self.rotate(&k, &cos, &sin, self.kv_heads)?;
        }
        let group = self.heads / self.kv_heads;
        let (k, v) = if group > 1 {
            (
                k.repeat_interleave_self_int(group, 1, None),
                v.repeat_interleave_self_int(group, 1, None),
            )
        } else {
            (k, v)
        };
        let scale = 1.0 / (self.q_dim as f64).sqrt();
        let mut scores = q
            .to_kind(Kind::Float)
            .f_matmul(&k.to_kind(Kind::Float).f_transpose(-2, -1)?)?
            * scale;
        if let Some(m) = mask {
            // Keys off the board get no weight.
            let off = m.reshape([n, 1, 1, s]).eq(0.0);
            scores = scores.masked_fill(&off, f64::NEG_INFINITY);
        }
        let p = scores.softmax(-1, Kind::Float).to_kind(kind);
        let out =
            p.f_matmul(&v)?
                .f_permute([0, 2, 1, 3])?
                .f_reshape([n, s, self.heads * self.v_dim])?;
        Ok(out.f_matmul(&self.out)?)
    }

    /// `(cos, sin)` of the rotation angles, `[table heads, S, pairs]` (one
    /// table head for fixed RoPE), or `None` without RoPE.
    fn rope_tables(&self, h: i64, w: i64, device: Device) -> Option<(Tensor, Tensor)> {
        let opts = (Kind::Float, device);
        let points = Tensor::arange(h * w, opts);
        let xs = points.remainder(w as f64);
        // Exact: both are small integers in f32.
        let ys = (&points - &xs) / w as f64;
        let angles = match &self.rope {
            Rope::None => return None,
            Rope::Learned { freqs } => {
                let fx = freqs.select(2, 0).unsqueeze(1);
                let fy = freqs.select(2, 1).unsqueeze(1);
                xs.view([1, -1, 1]) * fx + ys.view([1, -1, 1]) * fy
            }
            Rope::Fixed { freqs } => {
                let pairs = freqs.size()[0];
                let per_axis = pairs / 2;
                let along_y = Tensor::arange(pairs, opts).lt(per_axis as f64);
                let coord = ys
                    .view([-1, 1])
                    .where_self(&along_y.view([1, -1]), &xs.view([-1, 1]));
                (coord * freqs.view([1, -1])).unsqueeze(0)
            }
        };
        Some((angles.cos(), angles.sin()))
    }

    /// Rotates the channel pairs `(2p, 2p + 1)` of `t` (`[N, heads, S, d]`).
    fn rotate(
        &self,
        t: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        heads: i64,
    ) -> Result<Tensor, NetError> {
        let size = t.size();
        let pairs = self.q_dim / 2;
        // Query heads share the table of their key/value head.
        let (cos, sin) = if cos.size()[0] > 1 {
            let idx: Vec<i64> = (0..heads).map(|h| h * self.kv_heads / heads).collect();
            let idx = Tensor::from_slice(&idx).to_device(t.device());
            (cos.index_select(0, &idx), sin.index_select(0, &idx))
        } else {
            (cos.shallow_clone(), sin.shallow_clone())
        };
        let (cos, sin) = (cos.unsqueeze(0), sin.unsqueeze(0));
        let pairs_view = t
            .to_kind(Kind::Float)
            .f_view([size[0], size[1], size[2], pairs, 2])?;
        let x0 = pairs_view.select(-1, 0);
        let x1 = pairs_view.select(-1, 1);
        let r0 = &x0 * &cos - &x1 * &sin;
        let r1 = &x0 * &sin + &x1 * &cos;
        Ok(Tensor::stack(&[r0, r1], -1)
            .f_view([size[0], size[1], size[2], size[3]])?
            .to_kind(t.kind()))
    }
}
