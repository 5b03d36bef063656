//! KataGo's model configs by name (`python/katago/train/modelconfigs.py`):
//! the fixup convnets (version 15) and the transformer kinds (`*tf*`,
//! version 17, [`transformers`]).
//!
//! Every config here is KataGo's default variant of that name:
//! `norm_kind = "fixup"`, ReLU, `gamma_weight_decay_center_1`. Suffixes, in
//! any order: `-scalebias` gives a scale at every norm
//! ([`NormKind::ScaleBias`]), for fine-tuning batch-norm nets;
//! `-initconvK` a K×K input convolution; KataGo's `-rnh` and `-rsnh` an
//! RMSNorm at the trunk tip ([`TrunkTip`]), which makes the net version 17
//! as KataGo's exporter does; `-meta` an SGF metadata encoder (KataGo's
//! human-SL nets, [`ModelConfig::meta_encoder`]).

mod transformers;

pub use transformers::{Rope, TransformerConfig, TRANSFORMER_CONFIGS};

use super::TrainError;
use crate::nn::desc::Activation;

/// One block of the trunk, as KataGo's `block_kind` entries name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// `regular`: two 3x3 norm-act-convs.
    Regular,
    /// `regulargpool`: the first conv carries global pooling.
    RegularGpool,
    /// `bottlenest2`: 1x1 down, two regular blocks, 1x1 up.
    BottleNest2,
    /// `bottlenest2gpool`: as above, the first inner block with global pooling.
    BottleNest2Gpool,
    /// `attnrope`: a pre-norm self-attention block with rotary position
    /// embeddings, on the trunk's channels.
    Attention,
    /// `ffnsg`: a pre-norm SwiGLU feed-forward block.
    FfnSwiGlu,
    /// `bottlenestNtransformerropesg`: 1x1 down to the mid channels, `N`
    /// pairs of [`BlockKind::Attention`] and [`BlockKind::FfnSwiGlu`]
    /// there, 1x1 up.
    BottleNestTransformer(usize),
}

impl BlockKind {
    /// Whether the block (or its first inner block) has a global pooling branch.
    pub fn has_gpool(self) -> bool {
        matches!(self, BlockKind::RegularGpool | BlockKind::BottleNest2Gpool)
    }
}

/// How the trunk's and heads' norms are parameterised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormKind {
    /// KataGo's `fixup`: a learned bias at every norm, a learned scale
    /// (`gamma`, centred at 0 for a scale of 1) only at the end of each
    /// residual branch.
    Fixup,
    /// A learned per-channel scale and bias at every norm and head bias
    /// (`x * (gamma+1) + beta`, no batch statistics): what an inference
    /// batch norm folds to, so batch-norm nets such as g170's load exactly
    /// and train on from there. Named with the suffix `-scalebias`.
    ScaleBias,
}

/// What normalises the trunk before the heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrunkTip {
    /// The fixup norm (a bias), as every convnet config.
    Norm,
    /// KataGo's `RMSNormMask`: per point over the channels, or with
    /// `spatial` over the channels and the whole board (`-rnh`, `-rsnh`).
    RmsNorm {
        /// Whether the mean square is over the board too.
        spatial: bool,
    },
}

/// The model-kind suffix for an RMSNorm trunk tip over the channels.
pub const RMS_TIP_SUFFIX: &str = "-rnh";
/// The model-kind suffix for a spatial RMSNorm trunk tip.
pub const RMS_SPATIAL_TIP_SUFFIX: &str = "-rsnh";

/// Model-kind suffixes of the activations other than ReLU, as KataGo's
/// `modelconfigs.py` names them (its `-elu` and `-gelu` have no inference
/// path in KataGo's C++ either).
pub const ACTIVATION_SUFFIXES: &[(&str, Activation)] =
    &[("-silu", Activation::Silu), ("-mish", Activation::Mish)];

/// The model-kind suffix that adds an SGF metadata encoder (KataGo's
/// `-meta` configs: `meta_encoder_version` 1, as many internal channels as
/// the trunk has).
pub const META_SUFFIX: &str = "-meta";

/// The model-kind suffix that selects [`NormKind::ScaleBias`].
pub const SCALEBIAS_SUFFIX: &str = "-scalebias";

/// The model-kind suffix `-initconvK` sets the input convolution's kernel
/// to K×K (KataGo's configs use 3; its older nets, g170's included, 5).
pub const INITCONV_SUFFIX: &str = "-initconv";

/// A model config: the shape of the network.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// Config name (`b6c96`, ...).
    pub name: String,
    /// Model version: 15, or 17 for transformers and RMSNorm tips.
    pub version: i32,
    /// `trunk_num_channels`.
    pub trunk: i64,
    /// `mid_num_channels`.
    pub mid: i64,
    /// `gpool_num_channels`.
    pub gpool: i64,
    /// The trunk's blocks in order.
    pub blocks: Vec<BlockKind>,
    /// `p1_num_channels`.
    pub p1: i64,
    /// `g1_num_channels`.
    pub g1: i64,
    /// `v1_num_channels`.
    pub v1: i64,
    /// `v2_size`.
    pub v2: i64,
    /// `sbv2_num_channels`.
    pub sbv2: i64,
    /// `num_scorebeliefs`.
    pub num_scorebeliefs: i64,
    /// The norms' parameterisation.
    pub norm: NormKind,
    /// Kernel side of the input convolution (`conv_spatial`).
    pub initial_conv: i64,
    /// The attention and feed-forward settings (transformer kinds only).
    pub transformer: Option<TransformerConfig>,
    /// The trunk's last norm.
    pub tip: TrunkTip,
    /// The activation of every norm-act and head layer (ReLU unless a
    /// suffix says otherwise).
    pub activation: Activation,
    /// The SGF metadata encoder's internal channels (`-meta`: KataGo's
    /// `metadata_encoder.internal_num_channels`, the trunk's width), or
    /// `None` for a net without one. Such a net reads `metadataInputNC`
    /// beside the board.
    pub meta_encoder: Option<i64>,
}

/// The convnet names [`ModelConfig::by_name`] knows (the transformer
/// names are [`TRANSFORMER_CONFIGS`]).
pub const KNOWN_CONFIGS: &[&str] = &[
    "b1c6nbt",
    "b2c16",
    "b4c32",
    "b6c96",
    "b10c128",
    "b18c384nbt",
];

impl ModelConfig {
    /// KataGo's config of that name (fixup variant, as KataGo's plain name
    /// means); `NAME-scalebias` is the same shape with
    /// [`NormKind::ScaleBias`] norms.
    pub fn by_name(name: &str) -> Result<ModelConfig, TrainError> {
        let (mut base, mut norm, mut initial_conv) = (name, NormKind::Fixup, 3);
        let mut tip = TrunkTip::Norm;
        let mut activation = Activation::Relu;
        let mut meta = false;
        'suffixes: loop {
            if let Some(b) = base.strip_suffix(META_SUFFIX) {
                (base, meta) = (b, true);
                continue;
            }
            for (suffix, a) in ACTIVATION_SUFFIXES {
                if let Some(b) = base.strip_suffix(suffix) {
                    (base, activation) = (b, *a);
                    continue 'suffixes;
                }
            }
            if let Some(b) = base.strip_suffix(RMS_SPATIAL_TIP_SUFFIX) {
                (base, tip) = (b, TrunkTip::RmsNorm { spatial: true });
                continue;
            }
            if let Some(b) = base.strip_suffix(RMS_TIP_SUFFIX) {
                (base, tip) = (b, TrunkTip::RmsNorm { spatial: false });
                continue;
            }
            if let Some(b) = base.strip_suffix(SCALEBIAS_SUFFIX) {
                (base, norm) = (b, NormKind::ScaleBias);
                continue;
            }
            if let Some((b, k)) = base.rsplit_once(INITCONV_SUFFIX) {
                match k.parse::<i64>() {
                    Ok(k) if k % 2 == 1 && (1..=9).contains(&k) => {
                        (base, initial_conv) = (b, k);
                        continue;
                    }
                    _ => {
                        return Err(TrainError::Config(format!(
                            "model kind {name:?}: {INITCONV_SUFFIX}{k} (the kernel must be odd, 1 to 9)"
                        )))
                    }
                }
            }
            break;
        }
        let shape = match transformers::by_base(base) {
            Some(found) => found.map_err(|why| {
                TrainError::Config(format!("model kind {name:?}: {why}"))
            })?,
            None => convnet(base).ok_or_else(|| {
                TrainError::Config(format!(
                    "unknown model kind {name:?} (known: {}, {}; each also with the suffixes {SCALEBIAS_SUFFIX}, {INITCONV_SUFFIX}K, {RMS_TIP_SUFFIX}, {RMS_SPATIAL_TIP_SUFFIX}, -silu, -mish and {META_SUFFIX})",
                    KNOWN_CONFIGS.join(", "),
                    TRANSFORMER_CONFIGS.join(", "),
                ))
            })?,
        };
        let version = if shape.transformer.is_some() || tip != TrunkTip::Norm {
            17
        } else {
            15
        };
        Ok(ModelConfig {
            name: name.to_string(),
            version,
            norm,
            initial_conv,
            tip,
            activation,
            meta_encoder: meta.then_some(shape.trunk),
            ..shape
        })
    }

    /// The config name without its suffixes (`b6c96`): configs with the same
    /// base differ only in norm kind or input kernel.
    pub fn base_name(&self) -> &str {
        match self.name.find('-') {
            Some(i) if !KNOWN_CONFIGS.contains(&self.name.as_str()) => &self.name[..i],
            _ => &self.name,
        }
    }

    /// The same config with a `k`×`k` input convolution (named `NAME-initconvK`).
    pub fn with_initial_conv(&self, k: i64) -> ModelConfig {
        if self.initial_conv == k {
            return self.clone();
        }
        let base = self.base_name().to_string();
        let mut name = base;
        if k != 3 {
            name.push_str(&format!("{INITCONV_SUFFIX}{k}"));
        }
        if let Some((suffix, _)) = ACTIVATION_SUFFIXES
            .iter()
            .find(|(_, a)| *a == self.activation)
        {
            name.push_str(suffix);
        }
        match self.tip {
            TrunkTip::Norm => {}
            TrunkTip::RmsNorm { spatial: false } => name.push_str(RMS_TIP_SUFFIX),
            TrunkTip::RmsNorm { spatial: true } => name.push_str(RMS_SPATIAL_TIP_SUFFIX),
        }
        if self.meta_encoder.is_some() {
            name.push_str(META_SUFFIX);
        }
        if self.norm == NormKind::ScaleBias {
            name.push_str(SCALEBIAS_SUFFIX);
        }
        ModelConfig {
            name,
            initial_conv: k,
            ..self.clone()
        }
    }

    /// The same shape with an SGF metadata encoder (named `NAME-meta`).
    pub fn with_meta_encoder(&self) -> ModelConfig {
        if self.meta_encoder.is_some() {
            return self.clone();
        }
        ModelConfig {
            name: format!("{}{META_SUFFIX}", self.name),
            meta_encoder: Some(self.trunk),
            ..self.clone()
        }
    }

    /// The same shape with [`NormKind::ScaleBias`] norms (named `NAME-scalebias`).
    pub fn with_scalebias(&self) -> ModelConfig {
        if self.norm == NormKind::ScaleBias {
            return self.clone();
        }
        ModelConfig {
            name: format!("{}{SCALEBIAS_SUFFIX}", self.name),
            norm: NormKind::ScaleBias,
            ..self.clone()
        }
    }
}

/// KataGo's convnet config `base` (no suffixes), fixup, version 15.
fn convnet(base: &str) -> Option<ModelConfig> {
    use BlockKind::*;
    let (trunk, mid, gpool, blocks, p1, g1, v1, sbv2, nsb, v2) = match base {
        "b1c6nbt" => (6, 4, 4, vec![BottleNest2], 4, 4, 4, 4, 2, 6),
        "b2c16" => (16, 16, 8, vec![Regular, RegularGpool], 8, 8, 8, 12, 2, 12),
        "b4c32" => (
            32,
            32,
            16,
            vec![Regular, Regular, RegularGpool, Regular],
            12,
            12,
            12,
            24,
            4,
            24,
        ),
        "b6c96" => (
            96,
            96,
            32,
            vec![
                Regular,
                Regular,
                RegularGpool,
                Regular,
                RegularGpool,
                Regular,
            ],
            32,
            32,
            32,
            48,
            4,
            64,
        ),
        "b10c128" => (
            128,
            128,
            32,
            vec![
                Regular,
                Regular,
                Regular,
                Regular,
                RegularGpool,
                Regular,
                Regular,
                RegularGpool,
                Regular,
                Regular,
            ],
            32,
            32,
            32,
            64,
            6,
            80,
        ),
        "b18c384nbt" => {
            let mut b = Vec::new();
            for i in 1..=18 {
                b.push(if i % 3 == 0 && i < 18 {
                    BottleNest2Gpool
                } else {
                    BottleNest2
                });
            }
            (384, 192, 64, b, 48, 48, 96, 112, 8, 128)
        }
        _ => return None,
    };
    Some(ModelConfig {
        name: base.to_string(),
        version: 15,
        trunk,
        mid,
        gpool,
        blocks,
        p1,
        g1,
        v1,
        v2,
        sbv2,
        num_scorebeliefs: nsb,
        norm: NormKind::Fixup,
        initial_conv: 3,
        transformer: None,
        tip: TrunkTip::Norm,
        activation: Activation::Relu,
        meta_encoder: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_parse_and_unknown_fails() {
        for n in KNOWN_CONFIGS {
            let c = ModelConfig::by_name(n).expect("known config");
            assert_eq!(&c.name, n);
        }
        let b18 = ModelConfig::by_name("b18c384nbt").expect("b18");
        assert_eq!(b18.blocks.len(), 18);
        let gp: Vec<usize> = (0..18).filter(|&i| b18.blocks[i].has_gpool()).collect();
        assert_eq!(gp, vec![2, 5, 8, 11, 14]);
        assert!(ModelConfig::by_name("b99c1").is_err());
        assert!(ModelConfig::by_name("b99c1-scalebias").is_err());
        let sb = ModelConfig::by_name("b6c96-scalebias").expect("scalebias");
        assert_eq!(sb.norm, NormKind::ScaleBias);
        assert_eq!(sb.name, "b6c96-scalebias");
        let plain = ModelConfig::by_name("b6c96").expect("b6c96");
        assert_eq!(plain.norm, NormKind::Fixup);
        assert_eq!(plain.with_scalebias(), sb);
        let g170 = plain.with_initial_conv(5).with_scalebias();
        assert_eq!(g170.name, "b6c96-initconv5-scalebias");
        assert_eq!(g170.base_name(), "b6c96");
        assert_eq!(ModelConfig::by_name(&g170.name).expect("parses"), g170);
        assert_eq!(g170.with_initial_conv(3).name, "b6c96-scalebias");
        assert!(ModelConfig::by_name("b6c96-initconv4").is_err());
    }
}
