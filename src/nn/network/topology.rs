//! The network's topology, written once for both backends: which layers a
//! KataGo net has (trunk, residual blocks, policy and value heads), how
//! they are built from the model description with the batch norms folded
//! in, and in which order the forward pass runs them.
//!
//! A backend supplies two things: a [`Fold`], which stores one layer's
//! folded weights in its own form (libtorch tensors or Winograd weights
//! for [`super::Model`], aligned host buffers for [`super::CpuModel`]), and
//! an [`Ops`], which runs one layer on one batch (keeping its fused fast
//! paths: Winograd with a ReLU-and-mask epilogue, a residual conv
//! accumulated in place, the CPU backend's reused buffers).

use super::builder::fold_conv;
use super::NetError;
use crate::nn::desc::*;
use crate::nn::model_file::ModelFile;

/// How a backend stores the folded weights of each kind of layer, and how
/// it builds them from the model description.
pub(super) trait Fold {
    /// A convolution with its bias (a folded batch norm), if any.
    type Conv;
    /// A batch norm + activation that follows a residual sum.
    type NormAct;
    /// A dense layer `x W (+ b)`.
    type Dense;
    /// A transformer block: attention or feed-forward.
    type Transformer;
    /// An RMSNorm trunk tip with its activation.
    type RmsTip;

    /// A conv whose output channels are scaled by `affine.0` then offset
    /// by `affine.1`, and whose input channels are scaled by `in_scale`
    /// (see [`fold_conv`]).
    fn conv(
        &self,
        c: &ConvLayer,
        affine: Option<(&[f32], &[f32])>,
        in_scale: Option<&[f32]>,
    ) -> Self::Conv {
        let (w, bias) = fold_conv(c, affine, in_scale);
        self.folded_conv(c, &w, bias)
    }

    /// The conv `c` stored with its folded weights (`[out, in, y, x]`) and
    /// bias.
    fn folded_conv(&self, c: &ConvLayer, w: &[f32], bias: Option<Vec<f32>>) -> Self::Conv;

    /// A normalisation + activation, and the per-channel factor (if any)
    /// the convs reading its output must fold into their input channels
    /// (see `builder::fold_norm_act`).
    fn norm_act(
        &self,
        bn: &BatchNormLayer,
        act: &ActivationLayer,
    ) -> (Self::NormAct, Option<Vec<f32>>);

    /// A dense layer whose output columns are scaled by `col_scale` (a
    /// folded batch-norm scale), `bias` added after.
    fn dense(
        &self,
        m: &MatMulLayer,
        col_scale: Option<&[f32]>,
        bias: Option<&[f32]>,
    ) -> Self::Dense;

    /// A transformer block as the backend runs it, or why it cannot.
    fn transformer(&self, block: TransformerBlock<'_>) -> Result<Self::Transformer, String>;

    /// An RMSNorm trunk tip followed by `act`.
    fn rms_tip(&self, norm: &RmsNormLayer, act: Activation) -> Self::RmsTip;

    /// A conv with the batch norm that follows it folded in.
    fn conv_bn(&self, c: &ConvLayer, bn: &BatchNormLayer, in_scale: Option<&[f32]>) -> Self::Conv {
        let (s, b) = bn.merged();
        self.conv(c, Some((&s, &b)), in_scale)
    }
}

/// The layer operations a backend runs on one batch. Activations that a
/// layer creates are handed back with [`Ops::give`] / [`Ops::give_rows`]
/// when no longer read, so a backend can reuse their memory.
pub(super) trait Ops {
    /// How this backend stores the layers it runs.
    type F: Fold;
    /// Spatial activations `[n, c, h, w]` in the backend's layout.
    type Act;
    /// Per-row vectors `[n, k]`.
    type Rows;

    /// `conv(x) + bias`.
    fn conv(&mut self, c: &<Self::F as Fold>::Conv, x: &Self::Act) -> Result<Self::Act, NetError>;
    /// `act(conv(x) + bias)`, zeroed off the board.
    fn conv_act(
        &mut self,
        c: &<Self::F as Fold>::Conv,
        x: &Self::Act,
        act: Activation,
    ) -> Result<Self::Act, NetError>;
    /// `acc += conv(x) + bias` (a residual connection).
    fn conv_add(
        &mut self,
        c: &<Self::F as Fold>::Conv,
        x: &Self::Act,
        acc: &mut Self::Act,
    ) -> Result<(), NetError>;
    /// `norm_act(x)`, zeroed off the board.
    fn norm_act(
        &mut self,
        na: &<Self::F as Fold>::NormAct,
        x: &Self::Act,
    ) -> Result<Self::Act, NetError>;
    /// `x W (+ b)`.
    fn dense(
        &mut self,
        d: &<Self::F as Fold>::Dense,
        x: &Self::Rows,
    ) -> Result<Self::Rows, NetError>;
    /// `x[row, :, point] += bias[row, :]`.
    fn add_row_bias(&mut self, x: &mut Self::Act, bias: &Self::Rows) -> Result<(), NetError>;
    /// `x = act(x)`, zeroed off the board.
    fn act_masked(&mut self, x: &mut Self::Act, act: Activation) -> Result<(), NetError>;
    /// `x = act(x)` on per-row vectors.
    fn act_rows(&mut self, x: &mut Self::Rows, act: Activation) -> Result<(), NetError>;
    /// KataGo's gpool features `[n, 3c]`: mean, mean * size term, max over
    /// the board (`x` is zero off the board).
    fn global_pool(&mut self, x: &Self::Act) -> Result<Self::Rows, NetError>;
    /// KataGo's value-head pooling `[n, 3c]`: mean, mean * size term,
    /// mean * quadratic size term.
    fn value_pool(&mut self, x: &Self::Act) -> Result<Self::Rows, NetError>;
    /// `x += block(x)` for a transformer block, zeroed off the board.
    fn transformer_block(
        &mut self,
        t: &<Self::F as Fold>::Transformer,
        x: &mut Self::Act,
    ) -> Result<(), NetError>;
    /// An RMSNorm trunk tip with its activation, zeroed off the board.
    fn rms_tip(
        &mut self,
        t: &<Self::F as Fold>::RmsTip,
        x: &Self::Act,
    ) -> Result<Self::Act, NetError>;
    /// Hands back an activation no longer read.
    fn give(&mut self, x: Self::Act);
    /// Hands back per-row vectors no longer read.
    fn give_rows(&mut self, x: Self::Rows);
}

/// What [`Fold::transformer`] builds.
pub(super) enum TransformerBlock<'a> {
    /// A self-attention block.
    Attention(&'a AttentionBlock),
    /// A feed-forward block.
    Ffn(&'a FfnBlock),
}

/// One residual block; its forward returns `x + block(x)`.
pub(super) enum NetBlock<F: Fold> {
    /// Two convolutions.
    Ordinary {
        pre: F::NormAct,
        /// First conv with the mid batch norm folded in.
        conv1: F::Conv,
        mid_act: Activation,
        conv2: F::Conv,
    },
    /// The first convolution's output biased by pooled features.
    GlobalPooling {
        pre: F::NormAct,
        /// Regular conv with the mid batch norm folded in.
        regular: F::Conv,
        /// Pooled conv with its batch norm folded in.
        gpool: F::Conv,
        gpool_act: Activation,
        /// Pooled features -> bias, columns scaled by the mid batch norm.
        gpool_to_bias: F::Dense,
        mid_act: Activation,
        conv2: F::Conv,
    },
    /// Blocks inside a narrower pair of convolutions.
    Nested {
        pre: F::NormAct,
        pre_conv: F::Conv,
        blocks: Vec<NetBlock<F>>,
        post: F::NormAct,
        post_conv: F::Conv,
    },
    /// A transformer block (attention or feed-forward), pre-norm.
    Transformer(F::Transformer),
}

/// The trunk's final normalisation.
pub(super) enum TrunkTip<F: Fold> {
    /// Batch norm and activation.
    Norm(F::NormAct),
    /// RMSNorm and activation (model version 17's transformer nets).
    Rms(F::RmsTip),
}

/// The SGF-metadata encoder of a human-style net: three dense layers from
/// the metadata inputs to one more trunk bias (KataGo's
/// `SGFMetadataEncoder`).
pub(super) struct NetMetaEncoder<F: Fold> {
    /// First layer with its bias.
    mul1: F::Dense,
    act1: Activation,
    /// Second layer with its bias.
    mul2: F::Dense,
    act2: Activation,
    /// To trunk channels.
    mul3: F::Dense,
}

/// The trunk: input layers, blocks and the final normalisation.
pub(super) struct NetTrunk<F: Fold> {
    pub(super) initial_conv: F::Conv,
    pub(super) initial_matmul: F::Dense,
    /// Human-style nets only.
    pub(super) metadata: Option<NetMetaEncoder<F>>,
    pub(super) blocks: Vec<NetBlock<F>>,
    pub(super) tip: TrunkTip<F>,
}

/// The policy head.
pub(super) struct NetPolicy<F: Fold> {
    /// p1 conv with p1 batch norm folded in.
    pub(super) p1: F::Conv,
    /// g1 conv with g1 batch norm folded in.
    pub(super) g1: F::Conv,
    pub(super) g1_act: Activation,
    /// Pooled -> p1 bias, columns scaled by the p1 batch norm.
    pub(super) gpool_to_bias: F::Dense,
    pub(super) p1_act: Activation,
    pub(super) p2: F::Conv,
    pub(super) pass1: F::Dense,
    /// v15+: activation and second layer of the pass MLP.
    pub(super) pass2: Option<(Activation, F::Dense)>,
}

/// The value head (value, score and ownership).
pub(super) struct NetValue<F: Fold> {
    /// v1 conv with its batch norm folded in.
    pub(super) v1: F::Conv,
    pub(super) v1_act: Activation,
    pub(super) v2: F::Dense,
    pub(super) v2_act: Activation,
    pub(super) v3: F::Dense,
    pub(super) sv3: F::Dense,
    pub(super) ownership: F::Conv,
}

/// A whole network, its layers stored as `F` stores them.
pub(super) struct Net<F: Fold> {
    pub(super) trunk: NetTrunk<F>,
    pub(super) policy: NetPolicy<F>,
    pub(super) value: NetValue<F>,
}

/// Raw head outputs of one batch, in the backend's layout.
pub(super) struct RawHeads<A, R> {
    /// `[n, P, h, w]`.
    pub(super) policy: A,
    /// `[n, P]`.
    pub(super) pass: R,
    /// `[n, 3]`.
    pub(super) value: R,
    /// `[n, 4 or 6]`.
    pub(super) score: R,
    /// `[n, 1, h, w]`, before its tanh.
    pub(super) ownership: A,
}

impl<F: Fold> Net<F> {
    /// Builds the layers of `file` as `f` stores them.
    pub(super) fn build(f: &F, file: &ModelFile) -> Result<Net<F>, NetError> {
        let t = &file.trunk;
        let unsupported = |what: String| NetError::Unsupported {
            name: file.name.clone(),
            what,
        };
        let (tip, si) = match &t.tip_rms_norm {
            Some(rms) => (
                TrunkTip::Rms(f.rms_tip(rms, t.tip_activation.activation)),
                None,
            ),
            None => {
                let (tip, si) = f.norm_act(&t.tip_bn, &t.tip_activation);
                (TrunkTip::Norm(tip), si)
            }
        };
        let si = si.as_deref();
        let blocks = t.blocks.iter().map(|b| NetBlock::build(f, b));
        let trunk = NetTrunk {
            initial_conv: f.conv(&t.initial_conv, None, None),
            initial_matmul: f.dense(&t.initial_matmul, None, None),
            metadata: t.metadata_encoder.as_ref().map(|e| NetMetaEncoder {
                mul1: f.dense(&e.mul1, None, Some(&e.bias1.weights)),
                act1: e.act1.activation,
                mul2: f.dense(&e.mul2, None, Some(&e.bias2.weights)),
                act2: e.act2.activation,
                mul3: f.dense(&e.mul3, None, None),
            }),
            blocks: blocks.collect::<Result<_, String>>().map_err(unsupported)?,
            tip,
        };
        let p = &file.policy_head;
        let (ps, _) = p.p1_bn.merged();
        let policy = NetPolicy {
            p1: f.conv_bn(&p.p1_conv, &p.p1_bn, si),
            g1: f.conv_bn(&p.g1_conv, &p.g1_bn, si),
            g1_act: p.g1_activation.activation,
            gpool_to_bias: f.dense(&p.gpool_to_bias_mul, Some(&ps), None),
            p1_act: p.p1_activation.activation,
            p2: f.conv(&p.p2_conv, None, None),
            pass1: match &p.pass_mlp {
                Some((bias, _, _)) => f.dense(&p.gpool_to_pass_mul, None, Some(&bias.weights)),
                None => f.dense(&p.gpool_to_pass_mul, None, None),
            },
            pass2: p
                .pass_mlp
                .as_ref()
                .map(|(_, act, mul2)| (act.activation, f.dense(mul2, None, None))),
        };
        let v = &file.value_head;
        let value = NetValue {
            v1: f.conv_bn(&v.v1_conv, &v.v1_bn, si),
            v1_act: v.v1_activation.activation,
            v2: f.dense(&v.v2_mul, None, Some(&v.v2_bias.weights)),
            v2_act: v.v2_activation.activation,
            v3: f.dense(&v.v3_mul, None, Some(&v.v3_bias.weights)),
            sv3: f.dense(&v.sv3_mul, None, Some(&v.sv3_bias.weights)),
            ownership: f.conv(&v.ownership_conv, None, None),
        };
        Ok(Net {
            trunk,
            policy,
            value,
        })
    }

    /// Runs one batch: `input` the spatial features in the backend's
    /// layout (handed back once read), `global` the global features,
    /// `meta` the metadata inputs (exactly when the net has a metadata
    /// encoder).
    pub(super) fn forward<O: Ops<F = F>>(
        &self,
        o: &mut O,
        input: O::Act,
        global: &O::Rows,
        meta: Option<&O::Rows>,
    ) -> Result<RawHeads<O::Act, O::Rows>, NetError> {
        let t = &self.trunk;
        let mut x = o.conv(&t.initial_conv, &input)?;
        let bias = o.dense(&t.initial_matmul, global)?;
        o.add_row_bias(&mut x, &bias)?;
        o.give_rows(bias);
        o.give(input);
        // Both backends check the inputs against the net first
        // (`validate_input`); a missing row here is a caller bug.
        if let Some(e) = &t.metadata {
            let meta = meta.ok_or_else(|| NetError::BadInput("no metadata inputs".into()))?;
            let mut h1 = o.dense(&e.mul1, meta)?;
            o.act_rows(&mut h1, e.act1)?;
            let mut h2 = o.dense(&e.mul2, &h1)?;
            o.give_rows(h1);
            o.act_rows(&mut h2, e.act2)?;
            let bias = o.dense(&e.mul3, &h2)?;
            o.give_rows(h2);
            o.add_row_bias(&mut x, &bias)?;
            o.give_rows(bias);
        }
        for b in &t.blocks {
            b.forward(o, &mut x)?;
        }
        let trunk = match &t.tip {
            TrunkTip::Norm(tip) => o.norm_act(tip, &x)?,
            TrunkTip::Rms(tip) => o.rms_tip(tip, &x)?,
        };
        o.give(x);

        let p = &self.policy;
        let g1 = o.conv_act(&p.g1, &trunk, p.g1_act)?;
        let pooled = o.global_pool(&g1)?;
        o.give(g1);
        let bias = o.dense(&p.gpool_to_bias, &pooled)?;
        let mut p1 = o.conv(&p.p1, &trunk)?;
        o.add_row_bias(&mut p1, &bias)?;
        o.give_rows(bias);
        o.act_masked(&mut p1, p.p1_act)?;
        let policy = o.conv(&p.p2, &p1)?;
        o.give(p1);
        let mut pass = o.dense(&p.pass1, &pooled)?;
        o.give_rows(pooled);
        if let Some((act, dense)) = &p.pass2 {
            o.act_rows(&mut pass, *act)?;
            let hidden = pass;
            pass = o.dense(dense, &hidden)?;
            o.give_rows(hidden);
        }

        let v = &self.value;
        let v1 = o.conv_act(&v.v1, &trunk, v.v1_act)?;
        o.give(trunk);
        let pooled = o.value_pool(&v1)?;
        let mut v2 = o.dense(&v.v2, &pooled)?;
        o.give_rows(pooled);
        o.act_rows(&mut v2, v.v2_act)?;
        let value = o.dense(&v.v3, &v2)?;
        let score = o.dense(&v.sv3, &v2)?;
        o.give_rows(v2);
        let ownership = o.conv(&v.ownership, &v1)?;
        o.give(v1);
        Ok(RawHeads {
            policy,
            pass,
            value,
            score,
            ownership,
        })
    }

    /// Calls `f` on every convolution of the net.
    pub(super) fn for_each_conv(&self, f: &mut dyn FnMut(&F::Conv)) {
        f(&self.trunk.initial_conv);
        self.trunk.blocks.iter().for_each(|b| b.for_each_conv(f));
        let (p, v) = (&self.policy, &self.value);
        [&p.p1, &p.g1, &p.p2, &v.v1, &v.ownership]
            .into_iter()
            .for_each(f);
    }
}

impl<F: Fold> NetBlock<F> {
    /// Builds a block of the model description.
    fn build(f: &F, b: &Block) -> Result<NetBlock<F>, String> {
        Ok(match b {
            Block::Ordinary(b) => {
                let (pre, si) = f.norm_act(&b.pre_bn, &b.pre_activation);
                NetBlock::Ordinary {
                    pre,
                    conv1: f.conv_bn(&b.regular_conv, &b.mid_bn, si.as_deref()),
                    mid_act: b.mid_activation.activation,
                    conv2: f.conv(&b.final_conv, None, None),
                }
            }
            Block::GlobalPooling(b) => {
                let (ms, _) = b.mid_bn.merged();
                let (pre, si) = f.norm_act(&b.pre_bn, &b.pre_activation);
                NetBlock::GlobalPooling {
                    pre,
                    regular: f.conv_bn(&b.regular_conv, &b.mid_bn, si.as_deref()),
                    gpool: f.conv_bn(&b.gpool_conv, &b.gpool_bn, si.as_deref()),
                    gpool_act: b.gpool_activation.activation,
                    gpool_to_bias: f.dense(&b.gpool_to_bias_mul, Some(&ms), None),
                    mid_act: b.mid_activation.activation,
                    conv2: f.conv(&b.final_conv, None, None),
                }
            }
            Block::NestedBottleneck(b) => {
                let (pre, si) = f.norm_act(&b.pre_bn, &b.pre_activation);
                let (post, so) = f.norm_act(&b.post_bn, &b.post_activation);
                NetBlock::Nested {
                    pre,
                    pre_conv: f.conv(&b.pre_conv, None, si.as_deref()),
                    blocks: b
                        .blocks
                        .iter()
                        .map(|x| NetBlock::build(f, x))
                        .collect::<Result<_, _>>()?,
                    post,
                    post_conv: f.conv(&b.post_conv, None, so.as_deref()),
                }
            }
            Block::Attention(a) => {
                NetBlock::Transformer(f.transformer(TransformerBlock::Attention(a))?)
            }
            Block::Ffn(ffn) => NetBlock::Transformer(f.transformer(TransformerBlock::Ffn(ffn))?),
        })
    }

    /// `x += block(x)`.
    fn forward<O: Ops<F = F>>(&self, o: &mut O, x: &mut O::Act) -> Result<(), NetError> {
        match self {
            NetBlock::Ordinary {
                pre,
                conv1,
                mid_act,
                conv2,
            } => {
                let a = o.norm_act(pre, x)?;
                let m = o.conv_act(conv1, &a, *mid_act)?;
                o.conv_add(conv2, &m, x)?;
                o.give(m);
                o.give(a);
            }
            NetBlock::GlobalPooling {
                pre,
                regular,
                gpool,
                gpool_act,
                gpool_to_bias,
                mid_act,
                conv2,
            } => {
                let a = o.norm_act(pre, x)?;
                let g = o.conv_act(gpool, &a, *gpool_act)?;
                let pooled = o.global_pool(&g)?;
                let bias = o.dense(gpool_to_bias, &pooled)?;
                let mut r = o.conv(regular, &a)?;
                o.add_row_bias(&mut r, &bias)?;
                o.act_masked(&mut r, *mid_act)?;
                o.conv_add(conv2, &r, x)?;
                o.give(a);
                o.give(g);
                o.give_rows(pooled);
                o.give_rows(bias);
                o.give(r);
            }
            NetBlock::Nested {
                pre,
                pre_conv,
                blocks,
                post,
                post_conv,
            } => {
                let a = o.norm_act(pre, x)?;
                let mut inner = o.conv(pre_conv, &a)?;
                for b in blocks {
                    b.forward(o, &mut inner)?;
                }
                let m = o.norm_act(post, &inner)?;
                o.conv_add(post_conv, &m, x)?;
                o.give(a);
                o.give(inner);
                o.give(m);
            }
            NetBlock::Transformer(t) => o.transformer_block(t, x)?,
        }
        Ok(())
    }

    /// Calls `f` on every convolution of the block.
    fn for_each_conv(&self, f: &mut dyn FnMut(&F::Conv)) {
        match self {
            NetBlock::Ordinary { conv1, conv2, .. } => [conv1, conv2].into_iter().for_each(f),
            NetBlock::GlobalPooling {
                regular,
                gpool,
                conv2,
                ..
            } => [regular, gpool, conv2].into_iter().for_each(f),
            NetBlock::Nested {
                pre_conv,
                blocks,
                post_conv,
                ..
            } => {
                f(pre_conv);
                blocks.iter().for_each(|b| b.for_each_conv(f));
                f(post_conv);
            }
            NetBlock::Transformer(_) => {}
        }
    }
}
