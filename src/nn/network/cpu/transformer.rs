//! Transformer layers of the CPU backend (model version 17): pre-norm
//! self-attention over the board's points with rotary position embeddings
//! and grouped key/value heads, SwiGLU feed-forward blocks, and the RMSNorm
//! trunk tip. The arithmetic follows KataGo's Eigen backend
//! (`eigenbackend.cpp`: `TransformerAttentionBlock`, `TransformerFFNBlock`,
//! `RMSNormLayer`); every projection is a GEMM with the same kernels as the
//! convolutions, and every buffer comes from the scratch pool, so a forward
//! pass allocates nothing once the pool has grown.

use super::ops::{activate, Dense, Mask};
use super::{CpuFold, Scratch, Shape};
use crate::nn::desc::*;
use crate::nn::network::topology::{Fold, TransformerBlock};

/// A transformer block as the CPU backend runs it.
pub(in crate::nn::network) enum CpuTransformer {
    /// A self-attention block.
    Attention(Attention),
    /// A feed-forward block.
    Ffn(Ffn),
}

impl CpuTransformer {
    /// Builds `block`'s weights, or says why this backend cannot run it.
    pub(super) fn build(f: &CpuFold, block: TransformerBlock<'_>) -> Result<Self, String> {
        Ok(match block {
            TransformerBlock::Attention(a) => CpuTransformer::Attention(Attention::new(f, a)),
            TransformerBlock::Ffn(b) => {
                if !b.use_swiglu {
                    // KataGo's CPU backend refuses these too; no net uses them.
                    return Err(format!("{}: a feed-forward block without SwiGLU", b.name));
                }
                CpuTransformer::Ffn(Ffn {
                    norm: PointNorm::new(&b.pre_ln),
                    linear1: f.dense(&b.linear1, None, None),
                    gate: f.dense(&b.gate, None, None),
                    linear2: f.dense(&b.linear2, None, None),
                })
            }
        })
    }

    /// `x += block(x)`, zeroed off the board; `x` is NHWC.
    pub(super) fn add_to(&self, x: &mut [f32], shape: Shape, mask: &Mask, s: &mut Scratch) {
        match self {
            CpuTransformer::Attention(a) => a.add_to(x, shape, mask, s),
            CpuTransformer::Ffn(f) => f.add_to(x, shape, mask, s),
        }
    }
}

/// Whether point `p` (of all rows) is on its board.
fn on_board(mask: &Mask, p: usize) -> bool {
    mask.mask.is_none_or(|m| m[p] != 0.0)
}

/// The weight-only RMSNorm at the start of a transformer block.
pub(in crate::nn::network) struct PointNorm {
    weight: Vec<f32>,
    eps: f32,
}

impl PointNorm {
    fn new(n: &TransformerNorm) -> PointNorm {
        PointNorm {
            weight: n.weight.clone(),
            eps: n.epsilon,
        }
    }

    /// `x / rms(x) * weight` at each point (channels `c`), 0 off the board.
    fn run(&self, x: &[f32], c: usize, mask: &Mask, out: &mut [f32]) {
        for (p, (o, i)) in out.chunks_exact_mut(c).zip(x.chunks_exact(c)).enumerate() {
            if !on_board(mask, p) {
                o.fill(0.0);
                continue;
            }
            let scale = rms_scale(i, c as f32, self.eps);
            for ((o, &v), &w) in o.iter_mut().zip(i).zip(&self.weight) {
                *o = v * scale * w;
            }
        }
    }
}

/// `1 / sqrt(mean(v²) + eps)` over `count` values, summed in `f32` as
/// KataGo's backend sums.
fn rms_scale(v: &[f32], count: f32, eps: f32) -> f32 {
    let sum_sq: f32 = v.iter().map(|v| v * v).sum();
    1.0 / (sum_sq / count + eps).sqrt()
}

/// `x += y` at the board's points (`y` is 0 elsewhere anyway, as KataGo
/// multiplies by the mask).
fn add_on_board(x: &mut [f32], y: &[f32], c: usize, mask: &Mask) {
    for (p, (x, y)) in x.chunks_exact_mut(c).zip(y.chunks_exact(c)).enumerate() {
        if on_board(mask, p) {
            x.iter_mut().zip(y).for_each(|(x, y)| *x += y);
        }
    }
}

/// The trunk's RMSNorm tip: `act(x / rms * gamma + beta)`, the mean square
/// per point or (spatial) over a whole row's board.
pub(in crate::nn::network) struct RmsTip {
    eps: f32,
    spatial: bool,
    gamma: Vec<f32>,
    beta: Vec<f32>,
    act: Activation,
}

impl RmsTip {
    pub(super) fn new(n: &RmsNormLayer, act: Activation) -> RmsTip {
        RmsTip {
            eps: n.epsilon,
            spatial: n.spatial,
            gamma: n.gamma.clone(),
            beta: n.beta.clone(),
            act,
        }
    }

    /// The tip on `x` (NHWC) into `out`, 0 off the board.
    pub(super) fn run(&self, x: &[f32], (n, h, w): Shape, mask: &Mask, out: &mut [f32]) {
        let c = self.gamma.len();
        let hw = h * w;
        for row in 0..n {
            let points = row * hw..(row + 1) * hw;
            // Spatial: one scale for the row, over its on-board points.
            let row_scale = self.spatial.then(|| {
                let (mut sum_sq, mut count) = (0f32, 0usize);
                for p in points.clone().filter(|&p| on_board(mask, p)) {
                    sum_sq += x[p * c..(p + 1) * c].iter().map(|v| v * v).sum::<f32>();
                    count += 1;
                }
                1.0 / (sum_sq / (count * c) as f32 + self.eps).sqrt()
            });
            for p in points {
                let o = &mut out[p * c..(p + 1) * c];
                if !on_board(mask, p) {
                    o.fill(0.0);
                    continue;
                }
                let i = &x[p * c..(p + 1) * c];
                let scale = row_scale.unwrap_or_else(|| rms_scale(i, c as f32, self.eps));
                for (((o, &v), &g), &b) in o.iter_mut().zip(i).zip(&self.gamma).zip(&self.beta) {
                    *o = v * scale * g + b;
                }
                activate(o, self.act);
            }
        }
    }
}

/// A SwiGLU feed-forward block: `x += linear2(silu(linear1(n)) * gate(n))`.
pub(in crate::nn::network) struct Ffn {
    norm: PointNorm,
    linear1: Dense,
    gate: Dense,
    linear2: Dense,
}

impl Ffn {
    fn add_to(&self, x: &mut [f32], (n, h, w): Shape, mask: &Mask, s: &mut Scratch) {
        let points = n * h * w;
        let c = self.linear1.in_channels;
        let mut normed = s.take(points * c);
        self.norm.run(x, c, mask, &mut normed);
        let mut hidden = s.take(points * self.linear1.out_channels);
        self.linear1.run(&normed, points, &mut hidden);
        let mut gate = s.take(points * self.gate.out_channels);
        self.gate.run(&normed, points, &mut gate);
        for (a, g) in hidden.iter_mut().zip(gate.iter()) {
            *a = *a / (1.0 + (-*a).exp()) * g;
        }
        let mut y = normed;
        self.linear2.run(&hidden, points, &mut y);
        add_on_board(x, &y, c, mask);
        s.give(y);
        s.give(hidden);
        s.give(gate);
    }
}

/// How queries and keys are rotated by position.
enum Rope {
    None,
    /// KataGo's fixed frequencies: the first half of the pairs turn with
    /// y, the second half with x, at `theta^(-2p / (qHeadDim / 2))`.
    Fixed {
        theta: f32,
    },
    /// Learned `[kv_heads, pairs, (x, y)]` frequencies.
    Learned {
        freqs: Vec<f32>,
    },
}

/// A self-attention block over the board's points.
pub(in crate::nn::network) struct Attention {
    norm: PointNorm,
    q: Dense,
    k: Dense,
    v: Dense,
    out: Dense,
    heads: usize,
    kv_heads: usize,
    q_dim: usize,
    v_dim: usize,
    rope: Rope,
}

impl Attention {
    fn new(f: &CpuFold, a: &AttentionBlock) -> Attention {
        let rope = match (a.use_rope, a.learnable_rope) {
            (false, _) => Rope::None,
            (true, false) => Rope::Fixed {
                theta: a.rope_theta,
            },
            (true, true) => Rope::Learned {
                freqs: a.rope_freqs.clone(),
            },
        };
        Attention {
            norm: PointNorm::new(&a.pre_ln),
            q: f.dense(&a.q_proj, None, None),
            k: f.dense(&a.k_proj, None, None),
            v: f.dense(&a.v_proj, None, None),
            out: f.dense(&a.out_proj, None, None),
            heads: a.num_heads,
            kv_heads: a.num_kv_heads,
            q_dim: a.q_head_dim,
            v_dim: a.v_head_dim,
            rope,
        }
    }

    fn add_to(&self, x: &mut [f32], (n, h, w): Shape, mask: &Mask, s: &mut Scratch) {
        let hw = h * w;
        let points = n * hw;
        let c = self.q.in_channels;
        let mut normed = s.take(points * c);
        self.norm.run(x, c, mask, &mut normed);
        let (mut q, mut k, mut v) = (
            s.take(points * self.q.out_channels),
            s.take(points * self.k.out_channels),
            s.take(points * self.v.out_channels),
        );
        self.q.run(&normed, points, &mut q);
        self.k.run(&normed, points, &mut k);
        self.v.run(&normed, points, &mut v);
        if !matches!(self.rope, Rope::None) {
            let pairs = self.q_dim / 2;
            let table_heads = match self.rope {
                Rope::Learned { .. } => self.kv_heads,
                _ => 1,
            };
            let mut cos = s.take(table_heads * pairs * hw);
            let mut sin = s.take(table_heads * pairs * hw);
            self.rope_tables(h, w, &mut cos, &mut sin);
            self.rotate(&mut q, self.heads, n, hw, &cos, &sin);
            self.rotate(&mut k, self.kv_heads, n, hw, &cos, &sin);
            s.give(cos);
            s.give(sin);
        }
        let mut attended = s.take(points * self.heads * self.v_dim);
        let mut scores = s.take(hw * hw);
        for row in 0..n {
            for head in 0..self.heads {
                self.attend(
                    row,
                    head,
                    hw,
                    (&q, &k, &v),
                    mask,
                    &mut scores,
                    &mut attended,
                );
            }
        }
        let mut y = normed;
        self.out.run(&attended, points, &mut y);
        add_on_board(x, &y, c, mask);
        for buf in [y, q, k, v, attended, scores] {
            s.give(buf);
        }
    }

    /// KataGo's `computeRopeCosSin` for an `h` x `w` tensor: `[heads,
    /// pairs, h * w]` (one head for fixed RoPE). The angle depends only on
    /// a point's coordinates, so padding changes nothing.
    fn rope_tables(&self, h: usize, w: usize, cos: &mut [f32], sin: &mut [f32]) {
        let pairs = self.q_dim / 2;
        let hw = h * w;
        let mut put = |at: usize, angle: f32| {
            cos[at] = angle.cos();
            sin[at] = angle.sin();
        };
        match &self.rope {
            Rope::None => {}
            Rope::Learned { freqs } => {
                for head in 0..self.kv_heads {
                    for p in 0..pairs {
                        let f = (head * pairs + p) * 2;
                        let (fx, fy) = (freqs[f], freqs[f + 1]);
                        for (xy, (y, x)) in
                            (0..h).flat_map(|y| (0..w).map(move |x| (y, x))).enumerate()
                        {
                            put((head * pairs + p) * hw + xy, x as f32 * fx + y as f32 * fy);
                        }
                    }
                }
            }
            Rope::Fixed { theta } => {
                let per_axis = pairs / 2;
                let half = (self.q_dim / 2) as f32;
                for p in 0..pairs {
                    let (along_y, i) = if p < per_axis {
                        (true, p)
                    } else {
                        (false, p - per_axis)
                    };
                    let freq = 1.0 / theta.powf((2 * i) as f32 / half);
                    for (xy, (y, x)) in (0..h).flat_map(|y| (0..w).map(move |x| (y, x))).enumerate()
                    {
                        let coord = if along_y { y } else { x };
                        put(p * hw + xy, coord as f32 * freq);
                    }
                }
            }
        }
    }

    /// Rotates each head's channel pairs `(2p, 2p + 1)` of `data`
    /// (`[n * hw, heads * q_dim]`) by the point's angle.
    fn rotate(
        &self,
        data: &mut [f32],
        heads: usize,
        n: usize,
        hw: usize,
        cos: &[f32],
        sin: &[f32],
    ) {
        let pairs = self.q_dim / 2;
        let learned = matches!(self.rope, Rope::Learned { .. });
        let width = heads * self.q_dim;
        for point in 0..n * hw {
            let xy = point % hw;
            let row = &mut data[point * width..(point + 1) * width];
            for head in 0..heads {
                // Query heads share the table of their key/value head.
                let table_head = if learned {
                    head * self.kv_heads / heads
                } else {
                    0
                };
                for p in 0..pairs {
                    let t = (table_head * pairs + p) * hw + xy;
                    let at = head * self.q_dim + 2 * p;
                    let (x0, x1) = (row[at], row[at + 1]);
                    row[at] = x0 * cos[t] - x1 * sin[t];
                    row[at + 1] = x0 * sin[t] + x1 * cos[t];
                }
            }
        }
    }

    /// One head of one row: softmax over the board's points of the scaled
    /// query-key products, times the values, into `out`'s columns of this
    /// head. Off-board queries give 0.
    #[allow(clippy::too_many_arguments)]
    fn attend(
        &self,
        row: usize,
        head: usize,
        hw: usize,
        (q, k, v): (&[f32], &[f32], &[f32]),
        mask: &Mask,
        scores: &mut [f32],
        out: &mut [f32],
    ) {
        let kv_head = head / (self.heads / self.kv_heads);
        let (q_width, k_width) = (self.heads * self.q_dim, self.kv_heads * self.q_dim);
        let (v_width, out_width) = (self.kv_heads * self.v_dim, self.heads * self.v_dim);
        let base = row * hw;
        let scores = &mut scores[..hw * hw];
        // scores[i][j] = q_i . k_j
        gemm_strided(
            (hw, self.q_dim, hw),
            (&q[base * q_width + head * self.q_dim..], q_width, 1),
            (&k[base * k_width + kv_head * self.q_dim..], 1, k_width),
            (scores, hw, 1),
        );
        let scale = 1.0 / (self.q_dim as f32).sqrt();
        let on = |j: usize| on_board(mask, base + j);
        for (i, line) in scores.chunks_exact_mut(hw).enumerate() {
            if !on(i) {
                line.fill(0.0);
                continue;
            }
            let max = (0..hw)
                .filter(|&j| on(j))
                .map(|j| line[j] * scale)
                .fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0f32;
            for (j, value) in line.iter_mut().enumerate() {
                *value = if on(j) {
                    let e = (*value * scale - max).exp();
                    sum += e;
                    e
                } else {
                    0.0
                };
            }
            // Weights below f32's normal range are flushed to 0: denormal
            // operands slow the next product's FMAs a hundredfold on x86,
            // and such a weight changes no output.
            line.iter_mut().for_each(|value| {
                *value /= sum;
                if *value < f32::MIN_POSITIVE {
                    *value = 0.0;
                }
            });
        }
        // out_i = sum_j scores[i][j] v_j
        gemm_strided(
            (hw, hw, self.v_dim),
            (scores, hw, 1),
            (&v[base * v_width + kv_head * self.v_dim..], v_width, 1),
            (
                &mut out[base * out_width + head * self.v_dim..],
                out_width,
                1,
            ),
        );
    }
}

/// `c = a b` for `a` `[m, k]`, `b` `[k, n]`, `c` `[m, n]`, each given as a
/// slice starting at its first element with its row and column strides
/// (attention reads heads out of wider rows in place).
///
/// # Panics
/// If a slice is shorter than its shape and strides address (a bug in the
/// caller: every shape comes from the model).
fn gemm_strided(
    (m, k, n): (usize, usize, usize),
    (a, a_row, a_col): (&[f32], usize, usize),
    (b, b_row, b_col): (&[f32], usize, usize),
    (c, c_row, c_col): (&mut [f32], usize, usize),
) {
    if m == 0 || n == 0 {
        return;
    }
    let last = |rows: usize, cols: usize, rs: usize, cs: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(k == 0 || (a.len() > last(m, k, a_row, a_col) && b.len() > last(k, n, b_row, b_col)));
    assert!(c.len() > last(m, n, c_row, c_col));
    // SAFETY: every element the strides address lies inside its slice
    // (checked above), and `c` is exclusively borrowed so it aliases
    // neither input.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            a_row as isize,
            a_col as isize,
            b.as_ptr(),
            b_row as isize,
            b_col as isize,
            0.0,
            c.as_mut_ptr(),
            c_row as isize,
            c_col as isize,
        );
    }
}
