//! A KataGo network in pure Rust for the CPU: no libtorch in the forward
//! pass, f32 NHWC activations, single-threaded per model (parallelism comes
//! from several evaluator server threads, each owning one [`CpuModel`], as
//! KataGo's Eigen backend does), scratch buffers kept between batches.
//!
//! The layers and their order are those of the libtorch net
//! (`network/layers.rs`), with the batch norms folded by the same functions
//! (`network/builder.rs`), so both give the same outputs up to float
//! rounding; tests compare them.

use std::path::Path;
use std::sync::Arc;

use super::builder::{fold_conv, fold_dense, fold_norm_act};
use super::winograd::Epilogue;
use super::{validate_input, InputBatch, NetError};
use crate::nn::desc::*;
use crate::nn::model_file::ModelFile;
use crate::nn::outputs::{NetOutputs, ScoreRaw};

mod ops;

use ops::{activate, add_row_bias, AlignedWeights, Conv, ConvScratch, Dense, Mask, NormAct};

/// A KataGo network evaluated by plain Rust code on the calling thread.
pub struct CpuModel {
    name: String,
    version: i32,
    post_process: PostProcessParams,
    policy_channels: usize,
    num_parameters: usize,
    /// Shared by every replica: the weights are read-only, and one copy
    /// (16 MB of Winograd weights for b6c96) stays in L3 where one per
    /// server thread would not.
    net: Arc<CpuNet>,
    scratch: Scratch,
}

impl std::fmt::Debug for CpuModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuModel")
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Buffers reused from batch to batch (grown to the largest batch seen).
#[derive(Default)]
struct Scratch {
    conv: ConvScratch,
    /// Free activation buffers (taken and given back around each layer).
    pool: Vec<Vec<f32>>,
}

impl Scratch {
    /// A buffer of `len` values, from the free list when possible. Its
    /// values are left from earlier use: every layer writes the whole of
    /// its output, so zeroing (5% of a forward pass) bought nothing. Unit
    /// tests fill it with NaN instead, so a layer that leaves a value
    /// unwritten makes the outputs NaN.
    fn take(&mut self, len: usize) -> Vec<f32> {
        let mut v = self.pool.pop().unwrap_or_default();
        if cfg!(test) {
            v.clear();
            v.resize(len, f32::NAN);
        } else if v.len() < len {
            v.resize(len, 0.0);
        } else {
            v.truncate(len);
        }
        v
    }

    fn give(&mut self, v: Vec<f32>) {
        self.pool.push(v);
    }
}

enum CpuBlock {
    Ordinary {
        pre: NormAct,
        conv1: Conv,
        mid_act: Activation,
        conv2: Conv,
    },
    GlobalPooling {
        pre: NormAct,
        regular: Conv,
        gpool: Conv,
        gpool_act: Activation,
        gpool_to_bias: Dense,
        mid_act: Activation,
        conv2: Conv,
    },
    Nested {
        pre: NormAct,
        pre_conv: Conv,
        blocks: Vec<CpuBlock>,
        post: NormAct,
        post_conv: Conv,
    },
}

struct CpuNet {
    trunk_channels: usize,
    initial_conv: Conv,
    initial_matmul: Dense,
    blocks: Vec<CpuBlock>,
    tip: NormAct,
    p1: Conv,
    g1: Conv,
    g1_act: Activation,
    gpool_to_bias: Dense,
    p1_act: Activation,
    p2: Conv,
    pass1: Dense,
    pass2: Option<(Activation, Dense)>,
    v1: Conv,
    v1_act: Activation,
    v2: Dense,
    v2_act: Activation,
    v3: Dense,
    sv3: Dense,
    ownership: Conv,
}

/// Builds the layers from descriptors, folding batch norms as the libtorch
/// builder does.
struct Build;

impl Build {
    fn conv(c: &ConvLayer, affine: Option<(&[f32], &[f32])>, in_scale: Option<&[f32]>) -> Conv {
        let (w, b) = fold_conv(c, affine, in_scale);
        Conv::new(c, &w, b)
    }

    fn conv_bn(c: &ConvLayer, bn: &BatchNormLayer, in_scale: Option<&[f32]>) -> Conv {
        let (s, b) = bn.merged();
        Self::conv(c, Some((&s, &b)), in_scale)
    }

    fn norm_act(bn: &BatchNormLayer, act: &ActivationLayer) -> (NormAct, Option<Vec<f32>>) {
        let (p, s) = fold_norm_act(bn, act, true);
        (NormAct(p), s)
    }

    fn dense(m: &MatMulLayer, col_scale: Option<&[f32]>, bias: Option<&[f32]>) -> Dense {
        Dense {
            weight: AlignedWeights::new(&fold_dense(m, col_scale)),
            bias: bias.map(<[f32]>::to_vec),
            in_channels: m.in_channels,
            out_channels: m.out_channels,
        }
    }

    fn block(b: &Block) -> CpuBlock {
        match b {
            Block::Ordinary(b) => {
                let (pre, si) = Self::norm_act(&b.pre_bn, &b.pre_activation);
                CpuBlock::Ordinary {
                    pre,
                    conv1: Self::conv_bn(&b.regular_conv, &b.mid_bn, si.as_deref()),
                    mid_act: b.mid_activation.activation,
                    conv2: Self::conv(&b.final_conv, None, None),
                }
            }
            Block::GlobalPooling(b) => {
                let (ms, _) = b.mid_bn.merged();
                let (pre, si) = Self::norm_act(&b.pre_bn, &b.pre_activation);
                CpuBlock::GlobalPooling {
                    pre,
                    regular: Self::conv_bn(&b.regular_conv, &b.mid_bn, si.as_deref()),
                    gpool: Self::conv_bn(&b.gpool_conv, &b.gpool_bn, si.as_deref()),
                    gpool_act: b.gpool_activation.activation,
                    gpool_to_bias: Self::dense(&b.gpool_to_bias_mul, Some(&ms), None),
                    mid_act: b.mid_activation.activation,
                    conv2: Self::conv(&b.final_conv, None, None),
                }
            }
            Block::NestedBottleneck(b) => {
                let (pre, si) = Self::norm_act(&b.pre_bn, &b.pre_activation);
                let (post, so) = Self::norm_act(&b.post_bn, &b.post_activation);
                CpuBlock::Nested {
                    pre,
                    pre_conv: Self::conv(&b.pre_conv, None, si.as_deref()),
                    blocks: b.blocks.iter().map(Self::block).collect(),
                    post,
                    post_conv: Self::conv(&b.post_conv, None, so.as_deref()),
                }
            }
        }
    }

    fn net(file: &ModelFile) -> CpuNet {
        let t = &file.trunk;
        let (tip, si) = Self::norm_act(&t.tip_bn, &t.tip_activation);
        let si = si.as_deref();
        let p = &file.policy_head;
        let (ps, _) = p.p1_bn.merged();
        let v = &file.value_head;
        CpuNet {
            trunk_channels: t.trunk_num_channels,
            initial_conv: Self::conv(&t.initial_conv, None, None),
            initial_matmul: Self::dense(&t.initial_matmul, None, None),
            blocks: t.blocks.iter().map(Self::block).collect(),
            tip,
            p1: Self::conv_bn(&p.p1_conv, &p.p1_bn, si),
            g1: Self::conv_bn(&p.g1_conv, &p.g1_bn, si),
            g1_act: p.g1_activation.activation,
            gpool_to_bias: Self::dense(&p.gpool_to_bias_mul, Some(&ps), None),
            p1_act: p.p1_activation.activation,
            p2: Self::conv(&p.p2_conv, None, None),
            pass1: match &p.pass_mlp {
                Some((bias, _, _)) => Self::dense(&p.gpool_to_pass_mul, None, Some(&bias.weights)),
                None => Self::dense(&p.gpool_to_pass_mul, None, None),
            },
            pass2: p
                .pass_mlp
                .as_ref()
                .map(|(_, act, mul2)| (act.activation, Self::dense(mul2, None, None))),
            v1: Self::conv_bn(&v.v1_conv, &v.v1_bn, si),
            v1_act: v.v1_activation.activation,
            v2: Self::dense(&v.v2_mul, None, Some(&v.v2_bias.weights)),
            v2_act: v.v2_activation.activation,
            v3: Self::dense(&v.v3_mul, None, Some(&v.v3_bias.weights)),
            sv3: Self::dense(&v.sv3_mul, None, Some(&v.sv3_bias.weights)),
            ownership: Self::conv(&v.ownership_conv, None, None),
        }
    }
}

/// Shape of one batch: rows, height, width.
type Shape = (usize, usize, usize);

/// `out = mask(act(conv(x) + bias))`, with the ReLU fused into the
/// Winograd output transform where possible.
fn conv_act(
    conv: &Conv,
    x: &[f32],
    shape: Shape,
    out: &mut [f32],
    act: Activation,
    mask: &Mask,
    s: &mut Scratch,
) {
    if act == Activation::Relu {
        conv.run(x, shape, out, Epilogue::ReluMasked, mask, &mut s.conv);
    } else {
        conv.run(x, shape, out, Epilogue::Store, mask, &mut s.conv);
        activate(out, act);
        mask.apply(out, conv.out_channels);
    }
}

impl CpuBlock {
    /// `x += block(x)`, `x` being `[n, h, w, c]`.
    fn forward(&self, x: &mut [f32], c: usize, shape: Shape, mask: &Mask, s: &mut Scratch) {
        let points = shape.0 * shape.1 * shape.2;
        match self {
            CpuBlock::Ordinary {
                pre,
                conv1,
                mid_act,
                conv2,
            } => {
                let mut a = s.take(points * c);
                pre.run(x, &mut a, c, mask);
                let mut m = s.take(points * conv1.out_channels);
                conv_act(conv1, &a, shape, &mut m, *mid_act, mask, s);
                conv2.run(&m, shape, x, Epilogue::Accumulate, mask, &mut s.conv);
                s.give(m);
                s.give(a);
            }
            CpuBlock::GlobalPooling {
                pre,
                regular,
                gpool,
                gpool_act,
                gpool_to_bias,
                mid_act,
                conv2,
            } => {
                let mut a = s.take(points * c);
                pre.run(x, &mut a, c, mask);
                let gc = gpool.out_channels;
                let mut g = s.take(points * gc);
                conv_act(gpool, &a, shape, &mut g, *gpool_act, mask, s);
                let mut pooled = s.take(0);
                mask.pool(&g, gc, &mut pooled);
                let mut bias = s.take(0);
                gpool_to_bias.run(&pooled, shape.0, &mut bias);
                let rc = regular.out_channels;
                let mut r = s.take(points * rc);
                regular.run(&a, shape, &mut r, Epilogue::Store, mask, &mut s.conv);
                add_row_bias(&mut r, &bias, mask.hw, rc);
                activate(&mut r, *mid_act);
                mask.apply(&mut r, rc);
                conv2.run(&r, shape, x, Epilogue::Accumulate, mask, &mut s.conv);
                for buf in [a, g, pooled, bias, r] {
                    s.give(buf);
                }
            }
            CpuBlock::Nested {
                pre,
                pre_conv,
                blocks,
                post,
                post_conv,
            } => {
                let mut a = s.take(points * c);
                pre.run(x, &mut a, c, mask);
                let ic = pre_conv.out_channels;
                let mut inner = s.take(points * ic);
                pre_conv.run(&a, shape, &mut inner, Epilogue::Store, mask, &mut s.conv);
                for b in blocks {
                    b.forward(&mut inner, ic, shape, mask, s);
                }
                let mut m = s.take(points * ic);
                post.run(&inner, &mut m, ic, mask);
                post_conv.run(&m, shape, x, Epilogue::Accumulate, mask, &mut s.conv);
                for buf in [a, inner, m] {
                    s.give(buf);
                }
            }
        }
    }

    /// Calls `f` on every convolution of the block.
    fn for_each_conv(&self, f: &mut dyn FnMut(&Conv)) {
        match self {
            CpuBlock::Ordinary { conv1, conv2, .. } => [conv1, conv2].into_iter().for_each(f),
            CpuBlock::GlobalPooling {
                regular,
                gpool,
                conv2,
                ..
            } => [regular, gpool, conv2].into_iter().for_each(f),
            CpuBlock::Nested {
                pre_conv,
                blocks,
                post_conv,
                ..
            } => {
                f(pre_conv);
                blocks.iter().for_each(|b| b.for_each_conv(f));
                f(post_conv);
            }
        }
    }
}

/// Board points (rows x h x w) one pass through the net takes at most:
/// four 19x19 rows, sixteen 9x9 ones.
const MAX_POINTS_PER_PASS: usize = 4 * 19 * 19;

/// Raw head outputs of one batch, NHWC / row-major.
#[derive(Default)]
struct Heads {
    /// `[n, hw, P]`.
    policy: Vec<f32>,
    /// `[n, P]`.
    pass: Vec<f32>,
    /// `[n, 3]`.
    value: Vec<f32>,
    /// `[n, 4 or 6]`.
    score: Vec<f32>,
    /// `[n, hw]`, tanh applied.
    ownership: Vec<f32>,
}

impl Heads {
    /// Appends the rows of `more` (a later chunk of the same batch).
    fn append(&mut self, more: Heads) {
        if self.value.is_empty() {
            *self = more;
            return;
        }
        self.policy.extend(more.policy);
        self.pass.extend(more.pass);
        self.value.extend(more.value);
        self.score.extend(more.score);
        self.ownership.extend(more.ownership);
    }
}

impl CpuNet {
    fn forward(
        &self,
        spatial_nchw: &[f32],
        global: &[f32],
        shape: Shape,
        mask: &Mask,
        s: &mut Scratch,
    ) -> Heads {
        let (n, h, w) = shape;
        let hw = h * w;
        let points = n * hw;
        let cin = self.initial_conv.in_channels;
        // NCHW -> NHWC.
        let mut input = s.take(points * cin);
        for b in 0..n {
            for ch in 0..cin {
                let plane = &spatial_nchw[(b * cin + ch) * hw..][..hw];
                for (p, &v) in plane.iter().enumerate() {
                    input[(b * hw + p) * cin + ch] = v;
                }
            }
        }
        let c = self.trunk_channels;
        let mut x = s.take(points * c);
        self.initial_conv
            .run(&input, shape, &mut x, Epilogue::Store, mask, &mut s.conv);
        let mut gbias = s.take(0);
        self.initial_matmul.run(global, n, &mut gbias);
        add_row_bias(&mut x, &gbias, hw, c);
        for b in &self.blocks {
            b.forward(&mut x, c, shape, mask, s);
        }
        let mut trunk = s.take(points * c);
        self.tip.run(&x, &mut trunk, c, mask);

        // Policy head.
        let gc = self.g1.out_channels;
        let mut g1 = s.take(points * gc);
        conv_act(&self.g1, &trunk, shape, &mut g1, self.g1_act, mask, s);
        let mut pooled = s.take(0);
        mask.pool(&g1, gc, &mut pooled);
        let mut bias = s.take(0);
        self.gpool_to_bias.run(&pooled, n, &mut bias);
        let pc = self.p1.out_channels;
        let mut p1 = s.take(points * pc);
        self.p1
            .run(&trunk, shape, &mut p1, Epilogue::Store, mask, &mut s.conv);
        add_row_bias(&mut p1, &bias, hw, pc);
        activate(&mut p1, self.p1_act);
        mask.apply(&mut p1, pc);
        let mut policy = vec![0f32; points * self.p2.out_channels];
        self.p2
            .run(&p1, shape, &mut policy, Epilogue::Store, mask, &mut s.conv);
        let mut pass = Vec::new();
        self.pass1.run(&pooled, n, &mut pass);
        if let Some((act, dense)) = &self.pass2 {
            activate(&mut pass, *act);
            let hidden = std::mem::take(&mut pass);
            dense.run(&hidden, n, &mut pass);
        }

        // Value head.
        let vc = self.v1.out_channels;
        let mut v1 = s.take(points * vc);
        conv_act(&self.v1, &trunk, shape, &mut v1, self.v1_act, mask, s);
        let mut vpooled = s.take(0);
        mask.pool_value(&v1, vc, &mut vpooled);
        let mut v2 = s.take(0);
        self.v2.run(&vpooled, n, &mut v2);
        activate(&mut v2, self.v2_act);
        let mut value = Vec::new();
        self.v3.run(&v2, n, &mut value);
        let mut score = Vec::new();
        self.sv3.run(&v2, n, &mut score);
        let mut ownership = vec![0f32; points * self.ownership.out_channels];
        self.ownership.run(
            &v1,
            shape,
            &mut ownership,
            Epilogue::Store,
            mask,
            &mut s.conv,
        );
        ownership.iter_mut().for_each(|v| *v = v.tanh());

        for buf in [
            input, x, gbias, trunk, g1, pooled, bias, p1, v1, vpooled, v2,
        ] {
            s.give(buf);
        }
        Heads {
            policy,
            pass,
            value,
            score,
            ownership,
        }
    }
}

impl CpuModel {
    /// Loads a model file and builds the network.
    pub fn load(path: impl AsRef<Path>) -> Result<CpuModel, NetError> {
        Self::from_file(&ModelFile::load(path)?)
    }

    /// Builds the network from an already parsed model file.
    pub fn from_file(file: &ModelFile) -> Result<CpuModel, NetError> {
        if let Some(what) = Self::unsupported(file) {
            return Err(NetError::Unsupported {
                name: file.name.clone(),
                what,
            });
        }
        Ok(CpuModel {
            name: file.name.clone(),
            version: file.version,
            post_process: file.post_process,
            policy_channels: file.policy_head.policy_out_channels,
            num_parameters: file.num_parameters(),
            net: Arc::new(Build::net(file)),
            scratch: Scratch::default(),
        })
    }

    /// Another model on the same weights with its own scratch buffers, for
    /// another evaluator server thread.
    pub fn replica(&self) -> CpuModel {
        CpuModel {
            name: self.name.clone(),
            version: self.version,
            post_process: self.post_process,
            policy_channels: self.policy_channels,
            num_parameters: self.num_parameters,
            net: Arc::clone(&self.net),
            scratch: Scratch::default(),
        }
    }

    /// Why this backend cannot run `file`, if it cannot (the caller may
    /// fall back to libtorch).
    pub fn unsupported(file: &ModelFile) -> Option<String> {
        if file.trunk.metadata_encoder.is_some() {
            return Some("an SGF metadata encoder (human-style net, metaEncoderVersion 1)".into());
        }
        if file.trunk.initial_conv.in_channels != NUM_SPATIAL_FEATURES
            || file.trunk.initial_matmul.in_channels != NUM_GLOBAL_FEATURES
        {
            return Some("input features other than KataGo's version 7".into());
        }
        None
    }

    /// The model's name from its file.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model version (8..=16).
    pub fn version(&self) -> i32 {
        self.version
    }

    /// Learned parameters, as KataGo counts them.
    pub fn num_parameters(&self) -> usize {
        self.num_parameters
    }

    /// Multiply-adds of the convolutions for one `h x w` row in a batch of
    /// `batch`: as a direct convolution counts them, and as this backend
    /// runs them (Winograd does fewer; small batches of small boards run
    /// direct).
    pub fn conv_macs_per_row(&self, batch: usize, h: usize, w: usize) -> (usize, usize) {
        let n = &self.net;
        let (mut direct, mut executed) = (0, 0);
        let mut add = |c: &Conv| {
            let (d, e) = c.macs_per_row(batch, h, w);
            direct += d;
            executed += e;
        };
        add(&n.initial_conv);
        n.blocks.iter().for_each(|b| b.for_each_conv(&mut add));
        [&n.p1, &n.g1, &n.p2, &n.v1, &n.ownership]
            .into_iter()
            .for_each(&mut add);
        (direct, executed)
    }

    /// Spatial input planes expected per row.
    pub fn num_spatial_features(&self) -> usize {
        NUM_SPATIAL_FEATURES
    }

    /// Global inputs expected per row.
    pub fn num_global_features(&self) -> usize {
        NUM_GLOBAL_FEATURES
    }

    /// Runs one batch. Outputs are from the side to move's perspective, as
    /// [`super::Model::forward`]'s.
    pub fn forward(&mut self, batch: &InputBatch) -> Result<NetOutputs, NetError> {
        validate_input(batch)?;
        let (n, h, w) = (batch.batch_size, batch.height, batch.width);
        let hw = h * w;
        // Rows go through the net in chunks small enough that a layer's
        // activations and Winograd buffers stay in the caches: batch 8 on
        // 19x19 in one pass was ~10% slower per row than two passes of 4.
        let chunk = (MAX_POINTS_PER_PASS / hw).clamp(1, n);
        let (spatial_len, global_len) = (batch.spatial.len() / n, batch.global.len() / n);
        let mut heads = Heads::default();
        for r0 in (0..n).step_by(chunk) {
            let rows = chunk.min(n - r0);
            let mask_rows = batch.mask.map(|m| &m[r0 * hw..(r0 + rows) * hw]);
            let mask = Mask::new(rows, hw, mask_rows);
            let part = self.net.forward(
                &batch.spatial[r0 * spatial_len..(r0 + rows) * spatial_len],
                &batch.global[r0 * global_len..(r0 + rows) * global_len],
                (rows, h, w),
                &mask,
                &mut self.scratch,
            );
            heads.append(part);
        }
        let p = self.policy_channels;
        let take_channel = |c: usize| {
            let mut out = Vec::with_capacity(n * (hw + 1));
            for row in 0..n {
                let plane = &heads.policy[row * hw * p..(row + 1) * hw * p];
                out.extend(plane.iter().skip(c).step_by(p));
                out.push(heads.pass[row * p + c]);
            }
            out
        };
        let policy = take_channel(0);
        let policy_optimistic = (p >= 2).then(|| take_channel(1));
        let score_channels = heads.score.len() / n;
        let mut outs = NetOutputs::with_capacity(
            n,
            h,
            w,
            policy,
            policy_optimistic,
            heads.value,
            heads.ownership,
        );
        for row in 0..n {
            let s = &heads.score[row * score_channels..(row + 1) * score_channels];
            outs.push_scores(
                ScoreRaw::from_channels(s).post_process(self.version, &self.post_process),
            );
        }
        Ok(outs)
    }
}

#[cfg(test)]
mod tests;
