//! Typed descriptors of a KataGo network: every layer with its shape and
//! weights, as a model file stores them (see [`super::model_file`] for the
//! file format). Weights are kept unfused (batch norms keep mean, variance,
//! scale and bias) so that a file can be written back bit for bit; the
//! network ([`super::network`]) folds them when it builds its tensors.

use crate::game::{KoRule, Rules, ScoringRule, TaxRule};

/// Oldest model version this crate reads (as KataGo 1.17.2: versions 0-2
/// predate its current heads and are refused by KataGo too).
pub const MIN_MODEL_VERSION: i32 = 3;
/// Newest model version this crate reads.
pub const MAX_MODEL_VERSION: i32 = 17;

/// Number of spatial input planes of models of version 8 and later
/// (KataGo input features version 7), the nets this crate trains.
pub const NUM_SPATIAL_FEATURES: usize = 22;
/// Number of global input values of models of version 8 and later.
pub const NUM_GLOBAL_FEATURES: usize = 19;

/// KataGo's input feature versions (`NNModelVersion::getInputsVersion`):
/// which planes and global values a net of a model version reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputVersion {
    /// Model versions 3 and 4.
    V3,
    /// Model version 5: the area planes show only pass-alive areas.
    V4,
    /// Model version 6: stones, ko, history and encore only.
    V5,
    /// Model version 7: tax rules, history cut on rule violations.
    V6,
    /// Model versions 8 to 17.
    V7,
}

impl InputVersion {
    /// The input version of a model version, `None` outside 3..=17.
    pub fn of_model_version(version: i32) -> Option<InputVersion> {
        Some(match version {
            8..=MAX_MODEL_VERSION => InputVersion::V7,
            7 => InputVersion::V6,
            6 => InputVersion::V5,
            5 => InputVersion::V4,
            3 | 4 => InputVersion::V3,
            _ => return None,
        })
    }

    /// Spatial planes of this version (`NUM_FEATURES_SPATIAL_V*`).
    pub fn num_spatial_features(self) -> usize {
        match self {
            InputVersion::V5 => 13,
            _ => 22,
        }
    }

    /// Global values of this version (`NUM_FEATURES_GLOBAL_V*`).
    pub fn num_global_features(self) -> usize {
        match self {
            InputVersion::V3 | InputVersion::V4 => 14,
            InputVersion::V5 => 12,
            InputVersion::V6 => 16,
            InputVersion::V7 => 19,
        }
    }
}

/// KataGo's `ModelDesc::getSupportedRules`: when a net of `model_version`
/// was not trained for `rules`, the nearest rules it was trained for
/// (`None` when it was). Nets before version 7 know only area scoring,
/// positional or situational superko, no tax and no button; later ones
/// know no Spight ko rule and a button only with area scoring.
pub fn supported_rules(model_version: i32, rules: &Rules) -> Option<Rules> {
    let mut r = *rules;
    if model_version <= 6 {
        if matches!(r.ko_rule, KoRule::Simple | KoRule::Spight) {
            r.ko_rule = KoRule::Situational;
        }
        if r.scoring_rule == ScoringRule::Territory {
            r.scoring_rule = ScoringRule::Area;
        }
        r.tax_rule = TaxRule::None;
        r.has_button = false;
    } else {
        if r.ko_rule == KoRule::Spight {
            r.ko_rule = KoRule::Situational;
        }
        if r.has_button && r.scoring_rule != ScoringRule::Area {
            r.has_button = false;
        }
    }
    (r != *rules).then_some(r)
}

/// Channels of the score value head (`sv3Mul` out) of a model version, as
/// `ValueHeadDesc` requires: score mean only (3), mean and stdev (4-7),
/// plus lead and variance time (8), plus the two short-term errors (9+).
pub fn num_score_value_channels(version: i32) -> usize {
    match version {
        9.. => 6,
        8 => 4,
        4..=7 => 2,
        _ => 1,
    }
}

/// An activation function, as named in model files (version >= 11; older
/// files imply ReLU everywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Activation {
    /// `x`.
    Identity,
    /// `max(x, 0)` (the default: what files before version 11 imply).
    #[default]
    Relu,
    /// `x * tanh(softplus(x))`.
    Mish,
    /// `x * sigmoid(x)`.
    Silu,
}

impl Activation {
    /// The name KataGo's files use (`ACTIVATION_RELU`, ...).
    pub fn file_name(self) -> &'static str {
        match self {
            Activation::Identity => "ACTIVATION_IDENTITY",
            Activation::Relu => "ACTIVATION_RELU",
            Activation::Mish => "ACTIVATION_MISH",
            Activation::Silu => "ACTIVATION_SILU",
        }
    }

    /// Parses a name as KataGo's files spell it.
    pub fn from_file_name(s: &str) -> Option<Activation> {
        Some(match s {
            "ACTIVATION_IDENTITY" => Activation::Identity,
            "ACTIVATION_RELU" => Activation::Relu,
            "ACTIVATION_MISH" => Activation::Mish,
            "ACTIVATION_SILU" => Activation::Silu,
            _ => return None,
        })
    }
}

/// A named activation layer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ActivationLayer {
    /// Layer name from the file.
    pub name: String,
    /// The function.
    pub activation: Activation,
}

/// A 2-D convolution without bias.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConvLayer {
    /// Layer name from the file.
    pub name: String,
    /// Kernel height (odd).
    pub y_size: usize,
    /// Kernel width (odd).
    pub x_size: usize,
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// Dilation along y.
    pub dilation_y: usize,
    /// Dilation along x.
    pub dilation_x: usize,
    /// Weights in torch order `[out, in, y, x]` (the file stores `[y, x, in, out]`).
    pub weights: Vec<f32>,
}

impl ConvLayer {
    /// A conv of shape `[out, in, y, x]` (torch order, as `weights`) with
    /// dilation 1.
    pub fn new(name: impl Into<String>, shape: [usize; 4], weights: Vec<f32>) -> ConvLayer {
        let [out_channels, in_channels, y_size, x_size] = shape;
        ConvLayer {
            name: name.into(),
            y_size,
            x_size,
            in_channels,
            out_channels,
            dilation_y: 1,
            dilation_x: 1,
            weights,
        }
    }

    /// Number of weights.
    pub fn num_parameters(&self) -> usize {
        self.weights.len()
    }
}

/// A batch normalisation layer (inference form: `(x - mean) / sqrt(var + eps) * scale + bias`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BatchNormLayer {
    /// Layer name from the file.
    pub name: String,
    /// Channels.
    pub num_channels: usize,
    /// Epsilon added to the variance.
    pub epsilon: f32,
    /// Whether the file stores a scale (else it is 1).
    pub has_scale: bool,
    /// Whether the file stores a bias (else it is 0).
    pub has_bias: bool,
    /// Running mean.
    pub mean: Vec<f32>,
    /// Running variance.
    pub variance: Vec<f32>,
    /// Scale (gamma); all ones when `!has_scale`.
    pub scale: Vec<f32>,
    /// Bias (beta); all zeros when `!has_bias`.
    pub bias: Vec<f32>,
}

impl BatchNormLayer {
    /// Learned parameters (scale and bias when stored; mean and variance are statistics).
    pub fn num_parameters(&self) -> usize {
        self.num_channels * (usize::from(self.has_scale) + usize::from(self.has_bias))
    }

    /// The per-channel affine map `x * s + b` this layer computes, as KataGo
    /// merges it (`s = scale / sqrt(var + eps)`, `b = bias - s * mean`).
    pub fn merged(&self) -> (Vec<f32>, Vec<f32>) {
        let mut s = Vec::with_capacity(self.num_channels);
        let mut b = Vec::with_capacity(self.num_channels);
        for c in 0..self.num_channels {
            let sc = self.scale[c] / (self.variance[c] + self.epsilon).sqrt();
            s.push(sc);
            b.push(self.bias[c] - sc * self.mean[c]);
        }
        (s, b)
    }
}

/// A dense layer without bias: `y = x W` with `W` of shape `[in, out]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MatMulLayer {
    /// Layer name from the file.
    pub name: String,
    /// Input width.
    pub in_channels: usize,
    /// Output width.
    pub out_channels: usize,
    /// Weights, row-major `[in, out]` (the file's order).
    pub weights: Vec<f32>,
}

/// A bias vector added after a [`MatMulLayer`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MatBiasLayer {
    /// Layer name from the file.
    pub name: String,
    /// The bias, one per channel.
    pub weights: Vec<f32>,
}

/// An ordinary pre-activation residual block:
/// `x + conv2(act(bn2(conv1(act(bn1(x))))))`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResidualBlock {
    /// Block name from the file.
    pub name: String,
    /// Normalisation before the first conv.
    pub pre_bn: BatchNormLayer,
    /// Activation before the first conv.
    pub pre_activation: ActivationLayer,
    /// First conv (trunk -> mid channels).
    pub regular_conv: ConvLayer,
    /// Normalisation before the second conv.
    pub mid_bn: BatchNormLayer,
    /// Activation before the second conv.
    pub mid_activation: ActivationLayer,
    /// Second conv (mid -> trunk channels).
    pub final_conv: ConvLayer,
}

/// A residual block whose first conv gets a per-channel bias computed from
/// globally pooled features of a parallel conv.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GlobalPoolingBlock {
    /// Block name from the file.
    pub name: String,
    /// Normalisation before the convs.
    pub pre_bn: BatchNormLayer,
    /// Activation before the convs.
    pub pre_activation: ActivationLayer,
    /// The regular conv.
    pub regular_conv: ConvLayer,
    /// The conv whose output is pooled.
    pub gpool_conv: ConvLayer,
    /// Normalisation of the pooled branch.
    pub gpool_bn: BatchNormLayer,
    /// Activation of the pooled branch.
    pub gpool_activation: ActivationLayer,
    /// Pooled features (3 per channel) -> bias of the regular branch.
    pub gpool_to_bias_mul: MatMulLayer,
    /// Normalisation before the final conv.
    pub mid_bn: BatchNormLayer,
    /// Activation before the final conv.
    pub mid_activation: ActivationLayer,
    /// Final conv back to trunk channels.
    pub final_conv: ConvLayer,
}

/// A nested bottleneck block (b18c384nbt-style nets): a 1x1 conv down to
/// fewer channels, a stack of inner blocks, a 1x1 conv back up, all around
/// one residual connection.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NestedBottleneckBlock {
    /// Block name from the file.
    pub name: String,
    /// Normalisation before the first conv.
    pub pre_bn: BatchNormLayer,
    /// Activation before the first conv.
    pub pre_activation: ActivationLayer,
    /// Conv into the bottleneck width.
    pub pre_conv: ConvLayer,
    /// The inner blocks (on the bottleneck width).
    pub blocks: Vec<Block>,
    /// Normalisation before the last conv.
    pub post_bn: BatchNormLayer,
    /// Activation before the last conv.
    pub post_activation: ActivationLayer,
    /// Conv back to the outer width.
    pub post_conv: ConvLayer,
}

/// One block of a trunk (or of a nested bottleneck block).
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// `ordinary_block`.
    Ordinary(ResidualBlock),
    /// `gpool_block`.
    GlobalPooling(Box<GlobalPoolingBlock>),
    /// `nested_bottleneck_block`.
    NestedBottleneck(NestedBottleneckBlock),
    /// `transformer_attention_block` (version 17).
    Attention(Box<AttentionBlock>),
    /// `transformer_ffn_block` (version 17).
    Ffn(Box<FfnBlock>),
}

/// A placeholder that the model-file reader replaces as it reads.
impl Default for Block {
    fn default() -> Self {
        Block::Ordinary(ResidualBlock::default())
    }
}

impl Block {
    /// The block's name.
    pub fn name(&self) -> &str {
        match self {
            Block::Ordinary(b) => &b.name,
            Block::GlobalPooling(b) => &b.name,
            Block::NestedBottleneck(b) => &b.name,
            Block::Attention(b) => &b.name,
            Block::Ffn(b) => &b.name,
        }
    }

    /// The keyword a model file uses for this kind of block.
    pub fn kind_keyword(&self) -> &'static str {
        match self {
            Block::Ordinary(_) => "ordinary_block",
            Block::GlobalPooling(_) => "gpool_block",
            Block::NestedBottleneck(_) => "nested_bottleneck_block",
            Block::Attention(_) => "transformer_attention_block",
            Block::Ffn(_) => "transformer_ffn_block",
        }
    }

    /// Whether this block or one nested in it is a transformer block.
    pub fn has_transformer(&self) -> bool {
        match self {
            Block::Attention(_) | Block::Ffn(_) => true,
            Block::NestedBottleneck(nb) => nb.blocks.iter().any(Block::has_transformer),
            Block::Ordinary(_) | Block::GlobalPooling(_) => false,
        }
    }
}

/// KataGo's trunk-tip RMSNorm (`RMSNormLayerDesc`, trunk norm kind 1):
/// `x / rms(x) * gamma + beta`, the mean square taken per point over the
/// channels, or (`spatial`) over the channels and every board point of a
/// row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RmsNormLayer {
    /// Layer name from the file.
    pub name: String,
    /// Channels.
    pub num_channels: usize,
    /// Added to the mean square.
    pub epsilon: f32,
    /// Whether the mean square is over the whole board too.
    pub spatial: bool,
    /// Per-channel scale.
    pub gamma: Vec<f32>,
    /// Per-channel offset.
    pub beta: Vec<f32>,
}

/// The weight-only RMSNorm at the start of a transformer block
/// (`TransformerRMSNormDesc`): `x / rms(x) * weight` per point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TransformerNorm {
    /// Layer name from the file.
    pub name: String,
    /// Channels.
    pub num_channels: usize,
    /// Added to the mean square.
    pub epsilon: f32,
    /// Per-channel scale.
    pub weight: Vec<f32>,
}

/// A pre-norm multi-head self-attention block over the board's points
/// (`TransformerAttentionDesc`): `x + out(attention(q(n), k(n), v(n)))`
/// with `n = norm(x)`, keys and values shared by groups of query heads,
/// rotary position embeddings on queries and keys.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AttentionBlock {
    /// Block name from the file.
    pub name: String,
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads (divides `num_heads`).
    pub num_kv_heads: usize,
    /// Width of a query or key head.
    pub q_head_dim: usize,
    /// Width of a value head.
    pub v_head_dim: usize,
    /// Whether queries and keys are rotated by position (RoPE).
    pub use_rope: bool,
    /// Learned rotation frequencies rather than ones from `rope_theta`.
    pub learnable_rope: bool,
    /// The pre-attention norm.
    pub pre_ln: TransformerNorm,
    /// Channels -> `num_heads * q_head_dim`.
    pub q_proj: MatMulLayer,
    /// Channels -> `num_kv_heads * q_head_dim`.
    pub k_proj: MatMulLayer,
    /// Channels -> `num_kv_heads * v_head_dim`.
    pub v_proj: MatMulLayer,
    /// `num_heads * v_head_dim` -> channels.
    pub out_proj: MatMulLayer,
    /// Name of the RoPE section (learned frequencies or theta).
    pub rope_name: String,
    /// Fixed RoPE: the base of the frequencies.
    pub rope_theta: f32,
    /// Learned RoPE: `[num_kv_heads, q_head_dim / 2, 2]` frequencies
    /// along x and y.
    pub rope_freqs: Vec<f32>,
}

/// A pre-norm feed-forward block applied at each point
/// (`TransformerFFNDesc`): `x + linear2(silu(linear1(n)) * gate(n))`
/// with `n = norm(x)` (SwiGLU), or `x + linear2(act(linear1(n)))`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FfnBlock {
    /// Block name from the file.
    pub name: String,
    /// Trunk channels.
    pub num_channels: usize,
    /// Hidden width.
    pub ffn_channels: usize,
    /// Whether the hidden layer is SwiGLU (the only kind KataGo's CPU
    /// backend runs).
    pub use_swiglu: bool,
    /// The pre-FFN norm.
    pub pre_ln: TransformerNorm,
    /// Channels -> hidden.
    pub linear1: MatMulLayer,
    /// Channels -> hidden gate (SwiGLU only; empty otherwise).
    pub gate: MatMulLayer,
    /// Hidden -> channels.
    pub linear2: MatMulLayer,
}

/// The SGF-metadata encoder of human-style nets (model version >= 15 with
/// `metaEncoderVersion > 0`): three dense layers from metadata inputs to a
/// trunk bias.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetadataEncoder {
    /// Encoder name from the file.
    pub name: String,
    /// Encoder format version (1 is the only one KataGo defines).
    pub version: i32,
    /// Number of metadata inputs (192 for version 1).
    pub num_input_channels: usize,
    /// First dense layer.
    pub mul1: MatMulLayer,
    /// Its bias.
    pub bias1: MatBiasLayer,
    /// Its activation.
    pub act1: ActivationLayer,
    /// Second dense layer.
    pub mul2: MatMulLayer,
    /// Its bias.
    pub bias2: MatBiasLayer,
    /// Its activation.
    pub act2: ActivationLayer,
    /// Output layer (-> trunk channels).
    pub mul3: MatMulLayer,
}

/// The trunk: input layers, the block stack and the final normalisation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trunk {
    /// Trunk name from the file.
    pub name: String,
    /// Trunk width.
    pub trunk_num_channels: usize,
    /// Header value: mid channels of ordinary blocks.
    pub mid_num_channels: usize,
    /// Header value: regular channels of gpool blocks.
    pub regular_num_channels: usize,
    /// Header value: unused by every backend, kept for writing back.
    pub dilated_num_channels: usize,
    /// Header value: pooled channels of gpool blocks.
    pub gpool_num_channels: usize,
    /// Spatial input conv.
    pub initial_conv: ConvLayer,
    /// Global inputs -> trunk bias.
    pub initial_matmul: MatMulLayer,
    /// Metadata encoder, when the net has one.
    pub metadata_encoder: Option<MetadataEncoder>,
    /// The residual blocks.
    pub blocks: Vec<Block>,
    /// Final normalisation of the trunk (unused, empty, when
    /// `tip_rms_norm` is there).
    pub tip_bn: BatchNormLayer,
    /// Final normalisation of the trunk when the file's trunk norm kind is
    /// RMSNorm (version >= 15).
    pub tip_rms_norm: Option<RmsNormLayer>,
    /// Final activation of the trunk.
    pub tip_activation: ActivationLayer,
}

/// The policy head.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PolicyHead {
    /// Head name from the file.
    pub name: String,
    /// Policy output channels: 1 (v8-11), 2 (v12-15: plus the optimistic
    /// policy), 4 (v16: plus Q-value predictions, unused by the search);
    /// version 17 stores 2 or 4.
    pub policy_out_channels: usize,
    /// Spatial conv from the trunk.
    pub p1_conv: ConvLayer,
    /// Conv whose output is pooled.
    pub g1_conv: ConvLayer,
    /// Normalisation of the pooled branch.
    pub g1_bn: BatchNormLayer,
    /// Activation of the pooled branch.
    pub g1_activation: ActivationLayer,
    /// Pooled features -> bias of the spatial branch.
    pub gpool_to_bias_mul: MatMulLayer,
    /// Normalisation of the spatial branch.
    pub p1_bn: BatchNormLayer,
    /// Activation of the spatial branch.
    pub p1_activation: ActivationLayer,
    /// Final 1x1 conv to the policy logits.
    pub p2_conv: ConvLayer,
    /// Pooled features -> pass logit(s) (v15+: -> hidden layer).
    pub gpool_to_pass_mul: MatMulLayer,
    /// v15+: the pass hidden layer's bias, activation and output layer.
    pub pass_mlp: Option<(MatBiasLayer, ActivationLayer, MatMulLayer)>,
}

/// The value head: game outcome, score statistics and ownership.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValueHead {
    /// Head name from the file.
    pub name: String,
    /// Spatial conv from the trunk.
    pub v1_conv: ConvLayer,
    /// Its normalisation.
    pub v1_bn: BatchNormLayer,
    /// Its activation.
    pub v1_activation: ActivationLayer,
    /// Pooled features -> hidden layer.
    pub v2_mul: MatMulLayer,
    /// Hidden layer bias.
    pub v2_bias: MatBiasLayer,
    /// Hidden layer activation.
    pub v2_activation: ActivationLayer,
    /// Hidden -> win/loss/no-result logits.
    pub v3_mul: MatMulLayer,
    /// Their bias.
    pub v3_bias: MatBiasLayer,
    /// Hidden -> score values (4 for v8, 6 for v9+).
    pub sv3_mul: MatMulLayer,
    /// Their bias.
    pub sv3_bias: MatBiasLayer,
    /// 1x1 conv -> ownership.
    pub ownership_conv: ConvLayer,
}

/// Scaling constants of the value outputs. Version >= 13 files store them;
/// older versions use KataGo's defaults ([`PostProcessParams::default`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PostProcessParams {
    /// Multiplier of the TD score outputs (not used by the search).
    pub td_score_multiplier: f64,
    /// Multiplier of the score mean output.
    pub score_mean_multiplier: f64,
    /// Multiplier of the score stdev output (after softplus).
    pub score_stdev_multiplier: f64,
    /// Multiplier of the lead output.
    pub lead_multiplier: f64,
    /// Multiplier of the variance-time output (after softplus).
    pub variance_time_multiplier: f64,
    /// Multiplier of the short-term value error output.
    pub shortterm_value_error_multiplier: f64,
    /// Multiplier of the short-term score error output.
    pub shortterm_score_error_multiplier: f64,
}

impl PostProcessParams {
    /// KataGo's values for files older than version 13, which store none.
    pub const BEFORE_V13: PostProcessParams = PostProcessParams {
        td_score_multiplier: 20.0,
        score_mean_multiplier: 20.0,
        score_stdev_multiplier: 20.0,
        lead_multiplier: 20.0,
        variance_time_multiplier: 40.0,
        shortterm_value_error_multiplier: 0.25,
        shortterm_score_error_multiplier: 30.0,
    };
}

impl Default for PostProcessParams {
    /// [`PostProcessParams::BEFORE_V13`].
    fn default() -> Self {
        PostProcessParams::BEFORE_V13
    }
}
