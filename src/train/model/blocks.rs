//! The trunk's pieces: norms, convolutions, global pooling, residual and
//! nested-bottleneck blocks.

use tch::{Kind, Tensor};

use super::init::{act, gain, init_std, Builder, ParamGroup};
use super::masks::{cast, Masks};
use super::transformer::{Attention, Ffn, TransformerBlock};
use super::{BlockKind, ModelConfig};
use crate::nn::desc::Activation;

/// `NormMask` with fixup normalisation: `(x * (gamma+1) + beta) * mask`
/// (also the heads' `BiasMask`, which has no gamma unless the net's norm
/// kind is [`NormKind::ScaleBias`](crate::train::NormKind::ScaleBias)).
pub(super) struct Norm {
    beta: Tensor,
    gamma: Option<Tensor>,
}

impl Norm {
    pub(super) fn new(b: &mut Builder, name: &str, c: i64, use_gamma: bool, last: bool) -> Norm {
        let (gg, bg) = if last {
            (ParamGroup::Output, ParamGroup::OutputNoReg)
        } else {
            (ParamGroup::NormalGamma, ParamGroup::NoReg)
        };
        Norm::with_groups(b, name, c, use_gamma, gg, bg)
    }

    /// A head's `BiasMask` (groups output / output_noreg).
    pub(super) fn head_bias(b: &mut Builder, name: &str, c: i64) -> Norm {
        Norm::with_groups(
            b,
            name,
            c,
            false,
            ParamGroup::Output,
            ParamGroup::OutputNoReg,
        )
    }

    fn with_groups(
        b: &mut Builder,
        name: &str,
        c: i64,
        use_gamma: bool,
        gamma_group: ParamGroup,
        beta_group: ParamGroup,
    ) -> Norm {
        let beta = b.param(&format!("{name}.beta"), &[1, c, 1, 1], 0.0, beta_group);
        let gamma = (use_gamma || b.scale_everywhere)
            .then(|| b.param(&format!("{name}.gamma"), &[1, c, 1, 1], 0.0, gamma_group));
        Norm { beta, gamma }
    }

    pub(super) fn forward(&self, x: &Tensor, m: &Masks) -> Tensor {
        let out = match &self.gamma {
            // beta + x * (gamma + 1), in one pass over x.
            Some(g) => self.beta.addcmul(x, &(g + 1.0)),
            None => x + &self.beta,
        };
        m.apply(out)
    }
}

pub(super) fn conv(x: &Tensor, w: &Tensor) -> Tensor {
    let k = w.size()[2];
    x.conv2d(w, None::<Tensor>, [1, 1], [k / 2, k / 2], [1, 1], 1)
}

/// [`conv`] in the trunk's compute kind.
pub(super) fn trunk_conv(x: &Tensor, w: &Tensor, kind: Option<Kind>) -> Tensor {
    conv(&cast(x, kind), &cast(w, kind))
}

/// Several same-size convolutions of the same input, done as one with the
/// weights stacked and the output split after: one kernel call and one pass
/// over `x` instead of `K`, forward and backward (split's backward is one
/// `cat`). The parameters stay separate, under KataGo's names.
/// `kind` as in [`trunk_conv`] (`None` in the heads).
pub(super) fn conv_shared<const K: usize>(
    x: &Tensor,
    weights: [&Tensor; K],
    kind: Option<Kind>,
) -> [Tensor; K] {
    let sizes: Vec<i64> = weights.iter().map(|w| w.size()[0]).collect();
    trunk_conv(x, &Tensor::cat(&weights, 0), kind)
        .split_with_sizes(sizes, 1)
        .try_into()
        .expect("split gives one part per weight")
}

/// KataGo's `KataGPool`: mean, mean scaled by board size, max.
pub(super) fn gpool(x: &Tensor, m: &Masks) -> Tensor {
    let offset = m.mask_sum_hw.sqrt() - 14.0;
    let mean = x.sum_dim_intlist([2i64, 3].as_slice(), true, Kind::Float) / &m.mask_sum_hw;
    let n = x.size()[0];
    let c = x.size()[1];
    // Off-board points (0 after the norm's mask) are pushed to -1 so that
    // they never win the max; a batch of full boards has none.
    let shifted = if m.full {
        x.shallow_clone()
    } else {
        x + (&m.mask - 1.0)
    };
    let max = shifted
        .view([n, c, -1])
        .amax([2i64].as_slice(), false)
        .view([n, c, 1, 1]);
    let pool2 = &mean * (&offset / 10.0);
    Tensor::cat(&[mean, pool2, max], 1)
}

/// KataGo's `KataValueHeadGPool`.
pub(super) fn value_gpool(x: &Tensor, mask_sum_hw: &Tensor) -> Tensor {
    let offset = mask_sum_hw.sqrt() - 14.0;
    let mean = x.sum_dim_intlist([2i64, 3].as_slice(), true, Kind::Float) / mask_sum_hw;
    let p2 = &mean * (&offset / 10.0);
    let p3 = &mean * ((&offset * &offset) / 100.0 - 0.1);
    Tensor::cat(&[mean, p2, p3], 1)
}

pub(super) struct ConvPool {
    conv1r: Tensor,
    conv1g: Tensor,
    normg: Norm,
    linear_g: Tensor,
}

pub(super) struct NormActConv {
    norm: Norm,
    activation: Activation,
    conv: Option<Tensor>,
    convpool: Option<ConvPool>,
}

impl NormActConv {
    #[allow(clippy::too_many_arguments)]
    fn new(
        b: &mut Builder,
        name: &str,
        c_in: i64,
        c_out: i64,
        c_gpool: Option<i64>,
        kernel: i64,
        use_gamma: bool,
        scale: f64,
    ) -> NormActConv {
        let norm = Norm::new(b, &format!("{name}.norm"), c_in, use_gamma, false);
        let fan = c_in * kernel * kernel;
        let activation = b.activation;
        let act_gain = gain(activation);
        if let Some(cg) = c_gpool {
            // KataConvAndGPool.initialize for fixup: r 0.8, g sqrt(0.6).
            let conv1r = b.param(
                &format!("{name}.convpool.conv1r.weight"),
                &[c_out, c_in, kernel, kernel],
                init_std(act_gain, scale * 0.8, fan),
                ParamGroup::Normal,
            );
            let conv1g = b.param(
                &format!("{name}.convpool.conv1g.weight"),
                &[cg, c_in, kernel, kernel],
                init_std(act_gain, scale.sqrt() * 0.6f64.sqrt(), fan),
                ParamGroup::Normal,
            );
            let normg = Norm::new(b, &format!("{name}.convpool.normg"), cg, false, false);
            let linear_g = b.param(
                &format!("{name}.convpool.linear_g.weight"),
                &[c_out, 3 * cg],
                init_std(act_gain, scale.sqrt() * 0.6f64.sqrt(), 3 * cg),
                ParamGroup::Normal,
            );
            NormActConv {
                norm,
                activation,
                conv: None,
                convpool: Some(ConvPool {
                    conv1r,
                    conv1g,
                    normg,
                    linear_g,
                }),
            }
        } else {
            let conv = b.param(
                &format!("{name}.conv.weight"),
                &[c_out, c_in, kernel, kernel],
                init_std(act_gain, scale, fan),
                ParamGroup::Normal,
            );
            NormActConv {
                norm,
                activation,
                conv: Some(conv),
                convpool: None,
            }
        }
    }

    fn forward(&self, x: &Tensor, m: &Masks, kind: Option<Kind>) -> Tensor {
        let out = act(&self.norm.forward(x, m), self.activation);
        match (&self.conv, &self.convpool) {
            (Some(w), _) => trunk_conv(&out, w, kind),
            (None, Some(cp)) => {
                let [outr, outg] = conv_shared(&out, [&cp.conv1r, &cp.conv1g], kind);
                let outg = act(&cp.normg.forward(&outg, m), self.activation);
                let pooled = gpool(&outg, m).squeeze_dim(-1).squeeze_dim(-1);
                let g = cast(&pooled, kind)
                    .matmul(&cast(&cp.linear_g, kind).tr())
                    .unsqueeze(-1)
                    .unsqueeze(-1);
                outr + g
            }
            (None, None) => unreachable!("a NormActConv has a conv or a convpool"),
        }
    }
}

pub(super) struct ResBlock {
    nac1: NormActConv,
    nac2: NormActConv,
}

impl ResBlock {
    fn new(
        b: &mut Builder,
        name: &str,
        c_main: i64,
        c_mid: i64,
        c_gpool: Option<i64>,
        fixup_scale: f64,
    ) -> ResBlock {
        let c1 = c_mid - c_gpool.unwrap_or(0);
        let nac1 = NormActConv::new(
            b,
            &format!("{name}.normactconv1"),
            c_main,
            c1,
            c_gpool,
            3,
            false,
            fixup_scale,
        );
        let nac2 = NormActConv::new(
            b,
            &format!("{name}.normactconv2"),
            c1,
            c_main,
            None,
            3,
            true,
            0.0,
        );
        ResBlock { nac1, nac2 }
    }

    fn forward(&self, x: &Tensor, m: &Masks, kind: Option<Kind>) -> Tensor {
        self.nac2.forward(&self.nac1.forward(x, m, kind), m, kind)
    }
}

/// A nested bottleneck: 1x1 down, inner blocks with residuals, 1x1 up.
pub(super) struct NestedBlock<B> {
    p: NormActConv,
    stack: Vec<B>,
    q: NormActConv,
}

pub(super) enum TrunkBlock {
    Res(ResBlock),
    Nested(NestedBlock<ResBlock>),
    Transformer(TransformerBlock),
    NestedTransformer(NestedBlock<TransformerBlock>),
}

impl TrunkBlock {
    /// The block's residual (added to the trunk by the caller), its
    /// convolutions and matmuls in `kind` (`None`: fp32).
    pub(super) fn forward(&self, x: &Tensor, m: &Masks, kind: Option<Kind>) -> Tensor {
        match self {
            TrunkBlock::Res(r) => r.forward(x, m, kind),
            TrunkBlock::Nested(nb) => {
                let mut o = nb.p.forward(x, m, kind);
                for r in &nb.stack {
                    o = &o + r.forward(&o, m, kind);
                }
                nb.q.forward(&o, m, kind)
            }
            TrunkBlock::Transformer(t) => t.forward(x, m, kind),
            TrunkBlock::NestedTransformer(nb) => {
                let mut o = nb.p.forward(x, m, kind);
                for t in &nb.stack {
                    o = &o + t.forward(&o, m, kind);
                }
                nb.q.forward(&o, m, kind)
            }
        }
    }
}

/// A nested bottleneck of `name` (KataGo's `NestedBottleneckResBlock` and
/// `NestedBottleneckTransformerBlock`): the 1x1 `normactconvp` down to
/// `mid` (fixup scale `s`), the inner blocks `inner` registers, and the
/// 1x1 `normactconvq` back up (with gamma, scale 0), in KataGo's order.
fn nested<B>(
    b: &mut Builder,
    name: &str,
    c: i64,
    mid: i64,
    s: f64,
    inner: impl FnOnce(&mut Builder) -> Vec<B>,
) -> NestedBlock<B> {
    let p = NormActConv::new(
        b,
        &format!("{name}.normactconvp"),
        c,
        mid,
        None,
        1,
        false,
        s,
    );
    let stack = inner(b);
    let q = NormActConv::new(
        b,
        &format!("{name}.normactconvq"),
        mid,
        c,
        None,
        1,
        true,
        0.0,
    );
    NestedBlock { p, stack, q }
}

/// The trunk's blocks (KataGo's `Model.initialize()` for fixup; the
/// transformer blocks keep torch's default init, as KataGo's do).
pub(super) fn build_trunk(b: &mut Builder, config: &ModelConfig) -> Vec<TrunkBlock> {
    let c = config.trunk;
    let mid = config.mid;
    let fixup_scale = 1.0 / (config.blocks.len() as f64).sqrt();
    let mut blocks = Vec::new();
    for (i, kind) in config.blocks.iter().enumerate() {
        let name = format!("blocks.{i}");
        let c_gpool = kind.has_gpool().then_some(config.gpool);
        let tf = config.transformer.as_ref();
        let block = match (kind, tf) {
            (BlockKind::Regular | BlockKind::RegularGpool, _) => {
                TrunkBlock::Res(ResBlock::new(b, &name, c, mid, c_gpool, fixup_scale))
            }
            (BlockKind::BottleNest2 | BlockKind::BottleNest2Gpool, _) => {
                let s = fixup_scale.powf(1.0 / 3.0);
                TrunkBlock::Nested(nested(b, &name, c, mid, s, |b| {
                    (0..2)
                        .map(|j| {
                            let cg = if j == 0 { c_gpool } else { None };
                            let inner = format!("{name}.blockstack.{j}");
                            ResBlock::new(b, &inner, mid, mid, cg, s)
                        })
                        .collect()
                }))
            }
            (BlockKind::Attention, Some(t)) => {
                TrunkBlock::Transformer(TransformerBlock::Attention(Attention::new(b, &name, c, t)))
            }
            (BlockKind::FfnSwiGlu, Some(t)) => {
                TrunkBlock::Transformer(TransformerBlock::Ffn(Ffn::new(b, &name, c, t)))
            }
            (BlockKind::BottleNestTransformer(pairs), Some(t)) => {
                let s = fixup_scale.powf(1.0 / (1.0 + *pairs as f64));
                TrunkBlock::NestedTransformer(nested(b, &name, c, mid, s, |b| {
                    let mut stack = Vec::new();
                    for j in 0..*pairs {
                        let at = format!("{name}.blockstack.{}", 2 * j);
                        stack.push(TransformerBlock::Attention(Attention::new(b, &at, mid, t)));
                        let ffn = format!("{name}.blockstack.{}", 2 * j + 1);
                        stack.push(TransformerBlock::Ffn(Ffn::new(b, &ffn, mid, t)));
                    }
                    stack
                }))
            }
            (
                BlockKind::Attention | BlockKind::FfnSwiGlu | BlockKind::BottleNestTransformer(_),
                None,
            ) => {
                unreachable!("ModelConfig::by_name gives transformer blocks their settings")
            }
        };
        blocks.push(block);
    }
    blocks
}
