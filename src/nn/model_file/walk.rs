//! The one walk over a model in KataGo's file order (`desc.cpp`), per model
//! version. Reading, writing and counting are visitors ([`ModelVisitor`])
//! of this walk, so the order in which a file holds its sections, layers and
//! version-dependent fields is written down here and nowhere else.
//!
//! Reading fills a placeholder model through `&mut` references while
//! writing and counting only look through `&`; the walk's body is therefore
//! instantiated twice from one macro ([`shared::walk`], [`exclusive::walk`]),
//! once per kind of access, and the visitor's methods take
//! [`Ref`]s whose kind the visitor picks.

use super::super::desc::*;
use super::check;
use super::ModelFile;

/// The `what` of the model's own name (the file's first token), which
/// visitors that build or read trainer nets treat apart from section names.
pub(crate) const MODEL_NAME: &str = "model name";
/// The `what` of a metadata encoder's name: the encoder's steps follow it,
/// up to the trunk's first block.
pub(crate) const METADATA_ENCODER_NAME: &str = "metadata encoder name";
/// The `what` of the model header's spatial input count.
pub(crate) const NUM_INPUT_CHANNELS: &str = "numInputChannels";
/// The `what` of the model header's global input count.
pub(crate) const NUM_INPUT_GLOBAL_CHANNELS: &str = "numInputGlobalChannels";
/// The `what` of the model header's pass-alive flag (version >= 15).
pub(crate) const PREFER_PASS_ALIVE: &str = "preferPassAliveUnderSuicideRules";

/// How a visitor reaches the model's fields: [`Shared`] or [`Exclusive`].
pub(crate) trait Access {
    /// A reference of this kind.
    type Ref<'a, T: 'a>;
}

/// `&` access: the visitor looks at a model (writing, counting).
pub(crate) enum Shared {}

impl Access for Shared {
    type Ref<'a, T: 'a> = &'a T;
}

/// `&mut` access: the visitor fills a placeholder model (reading).
pub(crate) enum Exclusive {}

impl Access for Exclusive {
    type Ref<'a, T: 'a> = &'a mut T;
}

/// A reference to a `T` of the kind visitor `V` asks for.
pub(crate) type Ref<'a, V, T> = <<V as ModelVisitor>::Access as Access>::Ref<'a, T>;

/// One step of the walk per kind of element a model file holds, in the
/// order the walk meets them. `what` arguments name the element for errors.
pub(crate) trait ModelVisitor {
    /// [`Shared`] or [`Exclusive`].
    type Access: Access;
    /// What a failed step gives.
    type Error;

    /// The model version (second token of a file).
    fn version(&mut self, version: Ref<'_, Self, i32>) -> Result<(), Self::Error>;
    /// The name of a model, section or layer group.
    fn name(&mut self, what: &str, name: Ref<'_, Self, String>) -> Result<(), Self::Error>;
    /// A positive size in a header.
    fn size(&mut self, what: &str, value: Ref<'_, Self, usize>) -> Result<(), Self::Error>;
    /// A 0/1 flag in a header.
    fn flag(&mut self, what: &str, value: Ref<'_, Self, bool>) -> Result<(), Self::Error>;
    /// A reserved header option that must be 0.
    fn reserved(&mut self, what: &str) -> Result<(), Self::Error>;
    /// One of the positive output-scaling constants (version >= 13).
    fn multiplier(&mut self, what: &str, value: Ref<'_, Self, f64>) -> Result<(), Self::Error>;
    /// The trunk's norm kind (version >= 15): batch norm (`tip` is
    /// `None`) or RMSNorm (`Some`), whose layer the walk visits at the tip.
    fn trunk_norm(
        &mut self,
        trunk: &str,
        tip: Ref<'_, Self, Option<RmsNormLayer>>,
    ) -> Result<(), Self::Error>;
    /// The trunk tip's RMSNorm layer.
    fn rms_norm(&mut self, layer: Ref<'_, Self, RmsNormLayer>) -> Result<(), Self::Error>;
    /// The norm at the start of a transformer block.
    fn transformer_norm(
        &mut self,
        layer: Ref<'_, Self, TransformerNorm>,
    ) -> Result<(), Self::Error>;
    /// The RoPE section of an attention block that uses RoPE (after its
    /// projections): learned frequencies or theta, as `learnable_rope`
    /// says.
    fn rope(&mut self, block: Ref<'_, Self, AttentionBlock>) -> Result<(), Self::Error>;
    /// The metadata encoder version (version >= 15): decides whether the
    /// trunk has an encoder, which the walk visits later.
    fn meta_encoder(
        &mut self,
        encoder: Ref<'_, Self, Option<MetadataEncoder>>,
    ) -> Result<(), Self::Error>;
    /// A value the file does not store but the version implies.
    fn implied(&mut self, slot: Ref<'_, Self, usize>, value: usize) -> Result<(), Self::Error>;
    /// A section that the version decides is present or absent.
    fn optional<T: Default + 'static>(
        &mut self,
        slot: Ref<'_, Self, Option<T>>,
        present: bool,
    ) -> Result<(), Self::Error>;
    /// The number of blocks in a stack; the walk then visits that many
    /// with [`ModelVisitor::block`].
    fn block_count(
        &mut self,
        what: &str,
        blocks: Ref<'_, Self, Vec<Block>>,
    ) -> Result<usize, Self::Error>;
    /// The kind of block `index` of a stack of `owner`: gives the block,
    /// whose name and layers the walk visits next.
    fn block<'a>(
        &mut self,
        owner: &str,
        blocks: Ref<'a, Self, Vec<Block>>,
        index: usize,
    ) -> Result<Ref<'a, Self, Block>, Self::Error>;
    /// A convolution layer.
    fn conv(&mut self, layer: Ref<'_, Self, ConvLayer>) -> Result<(), Self::Error>;
    /// A batch norm layer.
    fn batch_norm(&mut self, layer: Ref<'_, Self, BatchNormLayer>) -> Result<(), Self::Error>;
    /// An activation layer (its kind is stored from version 11).
    fn activation(
        &mut self,
        layer: Ref<'_, Self, ActivationLayer>,
        version: i32,
    ) -> Result<(), Self::Error>;
    /// A dense layer.
    fn matmul(&mut self, layer: Ref<'_, Self, MatMulLayer>) -> Result<(), Self::Error>;
    /// A dense layer's bias.
    fn matbias(&mut self, layer: Ref<'_, Self, MatBiasLayer>) -> Result<(), Self::Error>;
    /// A shape check over what the walk has visited (see [`check`]). Only
    /// the reader runs them, so the default skips `check`.
    fn validate(&mut self, check: impl FnOnce() -> Result<(), String>) -> Result<(), Self::Error> {
        let _ = check;
        Ok(())
    }
}

/// The walk's body, once per access kind. `$m` is `mut` or nothing.
macro_rules! walk_module {
    ($(#[$doc:meta])* $module:ident, $access:ident, $($m:tt)?) => {
        $(#[$doc])*
        pub(crate) mod $module {
            use super::*;

            /// Visits the whole model in file order.
            pub(crate) fn walk<V: ModelVisitor<Access = $access>>(
                v: &mut V,
                m: &$($m)? ModelFile,
            ) -> Result<(), V::Error> {
                v.name(MODEL_NAME, &$($m)? m.name)?;
                v.version(&$($m)? m.version)?;
                let version = m.version;
                v.size(NUM_INPUT_CHANNELS, &$($m)? m.num_input_channels)?;
                v.size(NUM_INPUT_GLOBAL_CHANNELS, &$($m)? m.num_input_global_channels)?;
                v.validate(|| check::inputs(m))?;
                if version >= 13 {
                    let p = &$($m)? m.post_process;
                    for (what, x) in [
                        ("tdScoreMultiplier", &$($m)? p.td_score_multiplier),
                        ("scoreMeanMultiplier", &$($m)? p.score_mean_multiplier),
                        ("scoreStdevMultiplier", &$($m)? p.score_stdev_multiplier),
                        ("leadMultiplier", &$($m)? p.lead_multiplier),
                        ("varianceTimeMultiplier", &$($m)? p.variance_time_multiplier),
                        ("shorttermValueErrorMultiplier", &$($m)? p.shortterm_value_error_multiplier),
                        ("shorttermScoreErrorMultiplier", &$($m)? p.shortterm_score_error_multiplier),
                    ] {
                        v.multiplier(what, x)?;
                    }
                }
                if version >= 15 {
                    v.meta_encoder(&$($m)? m.trunk.metadata_encoder)?;
                    v.flag(PREFER_PASS_ALIVE, &$($m)? m.prefer_pass_alive_under_suicide_rules)?;
                    for opt in ["C", "D", "E", "F", "G", "H"] {
                        v.reserved(&format!("model option {opt}"))?;
                    }
                }
                trunk(v, &$($m)? m.trunk, version)?;
                policy_head(v, &$($m)? m.policy_head, version)?;
                value_head(v, &$($m)? m.value_head, version)?;
                v.validate(|| check::sections(m))
            }

            fn trunk<V: ModelVisitor<Access = $access>>(
                v: &mut V,
                t: &$($m)? Trunk,
                version: i32,
            ) -> Result<(), V::Error> {
                v.name("trunk name", &$($m)? t.name)?;
                let what = |field: &str| format!("{}: {field}", t.name);
                let num_blocks = v.block_count(&what("number of blocks"), &$($m)? t.blocks)?;
                v.size(&what("trunk channels"), &$($m)? t.trunk_num_channels)?;
                v.size(&what("mid channels"), &$($m)? t.mid_num_channels)?;
                v.size(&what("regular channels"), &$($m)? t.regular_num_channels)?;
                v.size(&what("dilated channels"), &$($m)? t.dilated_num_channels)?;
                v.size(&what("gpool channels"), &$($m)? t.gpool_num_channels)?;
                if version >= 15 {
                    v.trunk_norm(&t.name, &$($m)? t.tip_rms_norm)?;
                    for opt in ["B", "C", "D", "E", "F"] {
                        v.reserved(&format!("{}: trunk option {opt}", t.name))?;
                    }
                }
                let c = t.trunk_num_channels;
                v.conv(&$($m)? t.initial_conv)?;
                let out = t.initial_conv.out_channels;
                v.validate(|| check::expect_eq(&t.name, "initial conv out", out, "trunk channels", c))?;
                v.matmul(&$($m)? t.initial_matmul)?;
                let out = t.initial_matmul.out_channels;
                v.validate(|| check::expect_eq(&t.name, "initial matmul out", out, "trunk channels", c))?;
                if let Some(e) = &$($m)? t.metadata_encoder {
                    metadata_encoder(v, e, c, version)?;
                }
                stack(v, &t.name, &$($m)? t.blocks, num_blocks, c, 0, version)?;
                let tip = if let Some(rms) = &$($m)? t.tip_rms_norm {
                    v.rms_norm(rms)?;
                    rms.num_channels
                } else {
                    v.batch_norm(&$($m)? t.tip_bn)?;
                    t.tip_bn.num_channels
                };
                v.validate(|| check::expect_eq(&t.name, "tip BN channels", tip, "trunk channels", c))?;
                v.activation(&$($m)? t.tip_activation, version)
            }

            fn metadata_encoder<V: ModelVisitor<Access = $access>>(
                v: &mut V,
                e: &$($m)? MetadataEncoder,
                trunk_channels: usize,
                version: i32,
            ) -> Result<(), V::Error> {
                v.name(METADATA_ENCODER_NAME, &$($m)? e.name)?;
                v.size(&format!("{}: input channels", e.name), &$($m)? e.num_input_channels)?;
                let n = e.num_input_channels;
                v.validate(|| {
                    check::expect_eq(&e.name, "input channels", n, "expected for version 1", 192)
                })?;
                v.matmul(&$($m)? e.mul1)?;
                v.matbias(&$($m)? e.bias1)?;
                v.activation(&$($m)? e.act1, version)?;
                v.matmul(&$($m)? e.mul2)?;
                v.matbias(&$($m)? e.bias2)?;
                v.activation(&$($m)? e.act2, version)?;
                v.matmul(&$($m)? e.mul3)?;
                v.validate(|| check::metadata_encoder(e, trunk_channels))
            }

            /// A stack of `num_blocks` blocks on `channels` channels.
            fn stack<V: ModelVisitor<Access = $access>>(
                v: &mut V,
                owner: &str,
                blocks: &$($m)? Vec<Block>,
                num_blocks: usize,
                channels: usize,
                depth: usize,
                version: i32,
            ) -> Result<(), V::Error> {
                v.validate(|| check::nesting(owner, depth))?;
                for i in 0..num_blocks {
                    let b = v.block(owner, &$($m)? *blocks, i)?;
                    block(v, b, channels, depth, version)?;
                }
                Ok(())
            }

            /// One block after its kind keyword: its name, then its layers.
            pub(crate) fn block<V: ModelVisitor<Access = $access>>(
                v: &mut V,
                b: &$($m)? Block,
                channels: usize,
                depth: usize,
                version: i32,
            ) -> Result<(), V::Error> {
                match b {
                    Block::Ordinary(r) => {
                        v.name("block name", &$($m)? r.name)?;
                        v.batch_norm(&$($m)? r.pre_bn)?;
                        v.activation(&$($m)? r.pre_activation, version)?;
                        v.conv(&$($m)? r.regular_conv)?;
                        v.batch_norm(&$($m)? r.mid_bn)?;
                        v.activation(&$($m)? r.mid_activation, version)?;
                        v.conv(&$($m)? r.final_conv)?;
                        v.validate(|| check::ordinary(r, channels))
                    }
                    Block::GlobalPooling(g) => {
                        v.name("block name", &$($m)? g.name)?;
                        v.batch_norm(&$($m)? g.pre_bn)?;
                        v.activation(&$($m)? g.pre_activation, version)?;
                        v.conv(&$($m)? g.regular_conv)?;
                        v.conv(&$($m)? g.gpool_conv)?;
                        v.batch_norm(&$($m)? g.gpool_bn)?;
                        v.activation(&$($m)? g.gpool_activation, version)?;
                        v.matmul(&$($m)? g.gpool_to_bias_mul)?;
                        v.batch_norm(&$($m)? g.mid_bn)?;
                        v.activation(&$($m)? g.mid_activation, version)?;
                        v.conv(&$($m)? g.final_conv)?;
                        v.validate(|| check::global_pooling(g, channels))
                    }
                    Block::NestedBottleneck(nb) => {
                        v.name("block name", &$($m)? nb.name)?;
                        let what = format!("{}: number of inner blocks", nb.name);
                        let inner = v.block_count(&what, &$($m)? nb.blocks)?;
                        v.batch_norm(&$($m)? nb.pre_bn)?;
                        v.activation(&$($m)? nb.pre_activation, version)?;
                        v.conv(&$($m)? nb.pre_conv)?;
                        let width = nb.pre_conv.out_channels;
                        stack(v, &nb.name, &$($m)? nb.blocks, inner, width, depth + 1, version)?;
                        v.batch_norm(&$($m)? nb.post_bn)?;
                        v.activation(&$($m)? nb.post_activation, version)?;
                        v.conv(&$($m)? nb.post_conv)?;
                        v.validate(|| check::nested(nb, channels))
                    }
                    Block::Attention(a) => {
                        v.name("block name", &$($m)? a.name)?;
                        let what = |field: &str| format!("{}: {field}", a.name);
                        v.size(&what("numHeads"), &$($m)? a.num_heads)?;
                        v.size(&what("numKVHeads"), &$($m)? a.num_kv_heads)?;
                        v.size(&what("qHeadDim"), &$($m)? a.q_head_dim)?;
                        v.size(&what("vHeadDim"), &$($m)? a.v_head_dim)?;
                        v.flag(&what("useRope"), &$($m)? a.use_rope)?;
                        v.flag(&what("learnableRope"), &$($m)? a.learnable_rope)?;
                        v.validate(|| check::attention_header(a))?;
                        v.transformer_norm(&$($m)? a.pre_ln)?;
                        v.matmul(&$($m)? a.q_proj)?;
                        v.matmul(&$($m)? a.k_proj)?;
                        v.matmul(&$($m)? a.v_proj)?;
                        v.matmul(&$($m)? a.out_proj)?;
                        if a.use_rope {
                            v.rope(a)?;
                        }
                        v.validate(|| check::attention(a, channels))
                    }
                    Block::Ffn(f) => {
                        v.name("block name", &$($m)? f.name)?;
                        let what = |field: &str| format!("{}: {field}", f.name);
                        v.size(&what("numChannels"), &$($m)? f.num_channels)?;
                        v.size(&what("ffnChannels"), &$($m)? f.ffn_channels)?;
                        v.flag(&what("useSwiGLU"), &$($m)? f.use_swiglu)?;
                        v.transformer_norm(&$($m)? f.pre_ln)?;
                        v.matmul(&$($m)? f.linear1)?;
                        if f.use_swiglu {
                            v.matmul(&$($m)? f.gate)?;
                        }
                        v.matmul(&$($m)? f.linear2)?;
                        v.validate(|| check::ffn(f, channels))
                    }
                }
            }

            fn policy_head<V: ModelVisitor<Access = $access>>(
                v: &mut V,
                p: &$($m)? PolicyHead,
                version: i32,
            ) -> Result<(), V::Error> {
                v.name("policy head name", &$($m)? p.name)?;
                if version >= 17 {
                    let what = format!("{}: policyOutChannels", p.name);
                    v.size(&what, &$($m)? p.policy_out_channels)?;
                    let out = p.policy_out_channels;
                    v.validate(|| check::one_of(&p.name, "policyOutChannels", out, &[2, 4]))?;
                    for opt in ["A", "B", "C"] {
                        v.reserved(&format!("{}: policy option {opt}", p.name))?;
                    }
                } else {
                    let out_channels = match version {
                        16 => 4,
                        12..=15 => 2,
                        _ => 1,
                    };
                    v.implied(&$($m)? p.policy_out_channels, out_channels)?;
                }
                v.conv(&$($m)? p.p1_conv)?;
                v.conv(&$($m)? p.g1_conv)?;
                v.batch_norm(&$($m)? p.g1_bn)?;
                v.activation(&$($m)? p.g1_activation, version)?;
                v.matmul(&$($m)? p.gpool_to_bias_mul)?;
                v.batch_norm(&$($m)? p.p1_bn)?;
                v.activation(&$($m)? p.p1_activation, version)?;
                v.conv(&$($m)? p.p2_conv)?;
                v.matmul(&$($m)? p.gpool_to_pass_mul)?;
                v.optional(&$($m)? p.pass_mlp, version >= 15)?;
                if let Some((bias, act, mul2)) = &$($m)? p.pass_mlp {
                    v.matbias(bias)?;
                    v.activation(act, version)?;
                    v.matmul(mul2)?;
                }
                v.validate(|| check::policy_head(p))
            }

            fn value_head<V: ModelVisitor<Access = $access>>(
                v: &mut V,
                h: &$($m)? ValueHead,
                version: i32,
            ) -> Result<(), V::Error> {
                v.name("value head name", &$($m)? h.name)?;
                if version >= 17 {
                    for opt in ["A", "B", "C"] {
                        v.reserved(&format!("{}: value option {opt}", h.name))?;
                    }
                }
                v.conv(&$($m)? h.v1_conv)?;
                v.batch_norm(&$($m)? h.v1_bn)?;
                v.activation(&$($m)? h.v1_activation, version)?;
                v.matmul(&$($m)? h.v2_mul)?;
                v.matbias(&$($m)? h.v2_bias)?;
                v.activation(&$($m)? h.v2_activation, version)?;
                v.matmul(&$($m)? h.v3_mul)?;
                v.matbias(&$($m)? h.v3_bias)?;
                v.matmul(&$($m)? h.sv3_mul)?;
                v.matbias(&$($m)? h.sv3_bias)?;
                v.conv(&$($m)? h.ownership_conv)?;
                v.validate(|| check::value_head(h, version))
            }
        }
    };
}

walk_module!(
    /// The walk through `&` references, for writing and counting.
    shared,
    Shared,
);
walk_module!(
    /// The walk through `&mut` references, for reading into a placeholder.
    exclusive,
    Exclusive,
    mut
);
