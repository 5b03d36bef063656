//! The one table between the trainable net's parameters (KataGo's
//! state_dict keys, [`super::model`]) and the layers of a KataGo model file,
//! in the file's order. Export ([`super::export`]) and import
//! ([`super::import`]) both fold over it alongside the model-file walk
//! ([`crate::nn::model_file::walk`]): export fills a model from the
//! parameters, import fills the parameters from a model, so the two
//! directions cannot drift apart.
//!
//! The table describes a version-15 file as KataGo's
//! `export_model_pytorch.py` writes a fixup convnet, or a version-17 file
//! as it writes a transformer or a net with an RMSNorm trunk tip. Older
//! files differ only in the steps marked with a `min_version` and in the
//! width of a few layers, which the [`Transform`]s handle. Header values
//! ([`Step::Size`], [`Step::Flag`]) are what the export writes; the import
//! skips them (a file whose header differs has layers of other shapes,
//! which the net refuses).

use super::config::{BlockKind, ModelConfig, Rope, TransformerConfig, TrunkTip};
use crate::data::NUM_METADATA_INPUTS;

/// The metadata encoder's section name in an exported file.
pub(crate) const META_ENCODER_LAYER: &str = "model.sgf_metadata_encoder";
/// The trainer's key prefix of the metadata encoder's parameters.
pub(crate) const META_ENCODER_KEY: &str = "metadata_encoder";

/// How a layer's weights relate to its trainer parameter(s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transform {
    /// A convolution: `key` is the weight, in the same `[out, in, y, x]` order.
    Conv,
    /// A fixup norm as a batch norm: `key` is the prefix of `.beta` and, if
    /// the net has one, `.gamma` (scale `gamma + 1`).
    Norm,
    /// The net's activation ([`ModelConfig::activation`]).
    Act,
    /// A dense layer: `key` is the torch `[out, in]` weight, stored transposed.
    MatMul,
    /// A dense layer's bias: `key` is the bias vector.
    Bias,
    /// Trainer rows 0 (policy) and 5 (short-term optimistic policy) of
    /// `key` are the file's channels 0 and 1 (a one-channel file seeds both
    /// from channel 0); a convolution.
    PolicyConvRows,
    /// As [`Transform::PolicyConvRows`], for a dense layer.
    PolicyMatMulRows,
    /// The pass layer: a dense layer, which in files before version 15
    /// (one pass logit, no hidden layer) becomes the whole pass MLP.
    PassMatMul,
    /// The score values: rows 0..4 of `key` (score mean, stdev, lead,
    /// variance time) then rows 0..2 of `more` (short-term errors); a
    /// version-8 file has only the first four.
    ScoreValues {
        /// The second parameter.
        more: String,
        /// Whether these are the biases (else the dense weights).
        bias: bool,
    },
    /// A transformer block's RMSNorm: `key` is its weight (`X.weight`).
    TransformerNorm,
    /// The RMSNorm trunk tip: `key` is the prefix of `.beta` and of
    /// `.gamma` (spatial) or `.norm.weight`.
    RmsTip {
        /// Whether the mean square is over the board too.
        spatial: bool,
    },
    /// Learned RoPE frequencies: `key` is the `[kv_heads, pairs, 2]`
    /// parameter.
    RopeFreqs,
    /// Fixed RoPE: `key` is the theta, in decimal (no parameter).
    RopeTheta,
    /// The metadata encoder's first dense layer: `key` is the torch
    /// `[out, 192]` weight, written times KataGo's `feature_mask` (the
    /// board-area input's column zeroed), stored transposed.
    MetaInputMatMul,
    /// The metadata encoder's output layer: `key` is the torch weight,
    /// written times KataGo's `out_scale` (0.5), stored transposed.
    MetaOutputMatMul,
}

/// One step of a model file, in the walk's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// The name of a section or block (the model's own name is not here:
    /// it is the export's argument).
    Name(String),
    /// The number of blocks of the next stack.
    Count(usize),
    /// A block of this kind (the file's keyword); `key` is the trainer's
    /// prefix of its parameters, for errors.
    Block {
        /// `ordinary_block`, `gpool_block`, `nested_bottleneck_block`,
        /// `transformer_attention_block` or `transformer_ffn_block`.
        keyword: &'static str,
        /// Trainer key prefix (`blocks.3`).
        key: String,
    },
    /// A layer with weights (or an activation).
    Layer(Entry),
    /// A size in a header after the trunk's name (trunk widths, attention
    /// and feed-forward headers, version 17's policy channels).
    Size(usize),
    /// A 0/1 flag in a block header.
    Flag(bool),
}

/// A model-file layer and the trainer parameter it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The layer's name in an exported file.
    pub(crate) layer: String,
    /// The trainer key (a parameter, or for norms the prefix of one).
    pub(crate) key: String,
    /// How the weights map.
    pub(crate) transform: Transform,
    /// The first model version whose files hold this layer.
    pub(crate) min_version: i32,
}

struct Table {
    steps: Vec<Step>,
}

impl Table {
    fn layer(&mut self, layer: String, key: String, transform: Transform) {
        self.layer_since(layer, key, transform, 8);
    }

    fn layer_since(&mut self, layer: String, key: String, transform: Transform, min_version: i32) {
        self.steps.push(Step::Layer(Entry {
            layer,
            key,
            transform,
            min_version,
        }));
    }

    /// `model.X` holds trainer parameter `X.weight` (or, for norms and the
    /// RMSNorm tip, the prefix `X`).
    fn weight(&mut self, x: &str, transform: Transform) {
        let key = match transform {
            Transform::Norm | Transform::RmsTip { .. } => x.to_string(),
            _ => format!("{x}.weight"),
        };
        self.layer(format!("model.{x}"), key, transform);
    }

    fn relu(&mut self, x: &str) {
        self.layer(format!("model.{x}"), String::new(), Transform::Act);
    }

    /// KataGo's `NormActConv`: norm, ReLU, then `conv` (a plain conv, or a
    /// global-pooling pair).
    fn norm_act(&mut self, x: &str) {
        self.weight(&format!("{x}.norm"), Transform::Norm);
        self.relu(&format!("{x}.act"));
    }

    fn residual(&mut self, key: &str, gpool: bool) {
        let keyword = if gpool {
            "gpool_block"
        } else {
            "ordinary_block"
        };
        self.block_start(keyword, key);
        let (a, b) = (format!("{key}.normactconv1"), format!("{key}.normactconv2"));
        self.norm_act(&a);
        if gpool {
            self.weight(&format!("{a}.convpool.conv1r"), Transform::Conv);
            self.weight(&format!("{a}.convpool.conv1g"), Transform::Conv);
            self.weight(&format!("{a}.convpool.normg"), Transform::Norm);
            self.relu(&format!("{a}.convpool.actg"));
            self.weight(&format!("{a}.convpool.linear_g"), Transform::MatMul);
        } else {
            self.weight(&format!("{a}.conv"), Transform::Conv);
        }
        self.norm_act(&b);
        self.weight(&format!("{b}.conv"), Transform::Conv);
    }

    fn block_start(&mut self, keyword: &'static str, key: &str) {
        self.steps.push(Step::Block {
            keyword,
            key: key.to_string(),
        });
        self.steps.push(Step::Name(format!("model.{key}")));
    }

    /// A nested bottleneck: `inner` blocks between two 1x1 `NormActConv`s.
    fn nested(&mut self, key: &str, inner: usize, mut stack: impl FnMut(&mut Self, usize)) {
        self.block_start("nested_bottleneck_block", key);
        self.steps.push(Step::Count(inner));
        self.norm_act(&format!("{key}.normactconvp"));
        self.weight(&format!("{key}.normactconvp.conv"), Transform::Conv);
        for j in 0..inner {
            stack(self, j);
        }
        self.norm_act(&format!("{key}.normactconvq"));
        self.weight(&format!("{key}.normactconvq.conv"), Transform::Conv);
    }

    /// `write_transformer_attention_block` of a block on `c` channels.
    fn attention(&mut self, key: &str, c: i64, t: &TransformerConfig) {
        self.block_start("transformer_attention_block", key);
        let (q, v) = t.head_dims(c);
        for size in [t.heads, t.kv_heads, q, v] {
            self.steps.push(Step::Size(size as usize));
        }
        let learnable = t.rope == Rope::Learnable;
        self.steps.push(Step::Flag(true));
        self.steps.push(Step::Flag(learnable));
        self.weight(&format!("{key}.norm1"), Transform::TransformerNorm);
        for proj in ["q_proj", "k_proj", "v_proj", "out_proj"] {
            self.weight(&format!("{key}.{proj}"), Transform::MatMul);
        }
        match t.rope {
            Rope::Learnable => {
                let x = format!("{key}.rope_freqs");
                self.layer(format!("model.{x}"), x, Transform::RopeFreqs);
            }
            Rope::Fixed { theta } => {
                let layer = format!("model.{key}.rope_theta");
                self.layer(layer, theta.to_string(), Transform::RopeTheta);
            }
        }
    }

    /// `write_transformer_ffn_block` (SwiGLU) of a block on `c` channels.
    fn ffn(&mut self, key: &str, c: i64, t: &TransformerConfig) {
        self.block_start("transformer_ffn_block", key);
        self.steps.push(Step::Size(c as usize));
        self.steps.push(Step::Size(t.ffn as usize));
        self.steps.push(Step::Flag(true));
        self.weight(&format!("{key}.norm"), Transform::TransformerNorm);
        for lin in ["ffn_linear1", "ffn_linear_gate", "ffn_linear2"] {
            self.weight(&format!("{key}.{lin}"), Transform::MatMul);
        }
    }

    /// `write_metadata_encoder` (version 15 and later files only).
    fn meta_encoder(&mut self) {
        self.steps.push(Step::Name(META_ENCODER_LAYER.into()));
        self.steps.push(Step::Size(NUM_METADATA_INPUTS));
        let mut layer = |name: &str, key: &str, transform: Transform| {
            let key = if key.is_empty() {
                String::new()
            } else {
                format!("{META_ENCODER_KEY}.{key}")
            };
            self.layer_since(format!("{META_ENCODER_LAYER}.{name}"), key, transform, 15);
        };
        layer("mul1", "linear1.weight", Transform::MetaInputMatMul);
        layer("bias1", "linear1.bias", Transform::Bias);
        layer("act1", "", Transform::Act);
        layer("mul2", "linear2.weight", Transform::MatMul);
        layer("bias2", "linear2.bias", Transform::Bias);
        layer("act2", "", Transform::Act);
        layer(
            "mul3",
            "linear_output_to_trunk.weight",
            Transform::MetaOutputMatMul,
        );
    }

    fn trunk(&mut self, config: &ModelConfig) {
        self.steps.push(Step::Name("trunk".into()));
        self.steps.push(Step::Count(config.blocks.len()));
        let (c, mid, gpool) = (config.trunk, config.mid, config.gpool);
        for size in [c, mid, mid - gpool, gpool, gpool] {
            self.steps.push(Step::Size(size as usize));
        }
        self.weight("conv_spatial", Transform::Conv);
        self.weight("linear_global", Transform::MatMul);
        if config.meta_encoder.is_some() {
            self.meta_encoder();
        }
        for (i, kind) in config.blocks.iter().enumerate() {
            let key = format!("blocks.{i}");
            let tf = config.transformer.as_ref();
            match (kind, tf) {
                (BlockKind::Regular | BlockKind::RegularGpool, _) => {
                    self.residual(&key, kind.has_gpool())
                }
                (BlockKind::BottleNest2 | BlockKind::BottleNest2Gpool, _) => {
                    let gpool = kind.has_gpool();
                    self.nested(&key, 2, |t, j| {
                        t.residual(&format!("{key}.blockstack.{j}"), j == 0 && gpool)
                    })
                }
                (BlockKind::Attention, Some(t)) => self.attention(&key, c, t),
                (BlockKind::FfnSwiGlu, Some(t)) => self.ffn(&key, c, t),
                (BlockKind::BottleNestTransformer(pairs), Some(t)) => {
                    self.nested(&key, 2 * pairs, |table, j| {
                        let inner = format!("{key}.blockstack.{j}");
                        if j % 2 == 0 {
                            table.attention(&inner, mid, t)
                        } else {
                            table.ffn(&inner, mid, t)
                        }
                    })
                }
                // TrainNet::new refuses transformer blocks without settings.
                (_, None) => {}
            }
        }
        match config.tip {
            TrunkTip::Norm => self.weight("norm_trunkfinal", Transform::Norm),
            TrunkTip::RmsNorm { spatial } => {
                self.weight("norm_trunkfinal", Transform::RmsTip { spatial })
            }
        }
        self.relu("act_trunkfinal");
    }

    fn policy_head(&mut self, version: i32) {
        let ph = "policy_head";
        self.steps.push(Step::Name(format!("model.{ph}")));
        if version >= 17 {
            // policyOutChannels: policy and short-term optimistic policy.
            self.steps.push(Step::Size(2));
        }
        self.weight(&format!("{ph}.conv1p"), Transform::Conv);
        self.weight(&format!("{ph}.conv1g"), Transform::Conv);
        self.weight(&format!("{ph}.biasg"), Transform::Norm);
        self.relu(&format!("{ph}.actg"));
        self.weight(&format!("{ph}.linear_g"), Transform::MatMul);
        self.weight(&format!("{ph}.bias2"), Transform::Norm);
        self.relu(&format!("{ph}.act2"));
        self.weight(&format!("{ph}.conv2p"), Transform::PolicyConvRows);
        self.weight(&format!("{ph}.linear_pass"), Transform::PassMatMul);
        let pass_bias = (
            format!("model.{ph}.linear_pass_bias"),
            format!("{ph}.linear_pass.bias"),
        );
        self.layer_since(pass_bias.0, pass_bias.1, Transform::Bias, 15);
        let act = format!("model.{ph}.act_pass");
        self.layer_since(act, String::new(), Transform::Act, 15);
        let pass2 = (
            format!("model.{ph}.linear_pass2"),
            format!("{ph}.linear_pass2.weight"),
        );
        self.layer_since(pass2.0, pass2.1, Transform::PolicyMatMulRows, 15);
    }

    fn value_head(&mut self) {
        let vh = "value_head";
        self.steps.push(Step::Name(format!("model.{vh}")));
        self.weight(&format!("{vh}.conv1"), Transform::Conv);
        self.weight(&format!("{vh}.bias1"), Transform::Norm);
        self.relu(&format!("{vh}.act1"));
        self.weight(&format!("{vh}.linear2"), Transform::MatMul);
        let bias = |name: &str, key: &str| (format!("model.{vh}.{name}"), format!("{vh}.{key}"));
        let (l, k) = bias("bias2", "linear2.bias");
        self.layer(l, k, Transform::Bias);
        self.relu(&format!("{vh}.act2"));
        self.weight(&format!("{vh}.linear_valuehead"), Transform::MatMul);
        let (l, k) = bias("bias_valuehead", "linear_valuehead.bias");
        self.layer(l, k, Transform::Bias);
        let (l, k) = bias("linear_miscvaluehead", "linear_miscvaluehead.weight");
        let more = format!("{vh}.linear_moremiscvaluehead.weight");
        self.layer(l, k, Transform::ScoreValues { more, bias: false });
        let (l, k) = bias("bias_miscvaluehead", "linear_miscvaluehead.bias");
        let more = format!("{vh}.linear_moremiscvaluehead.bias");
        self.layer(l, k, Transform::ScoreValues { more, bias: true });
        self.weight(&format!("{vh}.conv_ownership"), Transform::Conv);
    }
}

/// The steps of the model file (version 15 or 17, as `config` says) of a
/// net of `config`, in file order.
pub(crate) fn key_table(config: &ModelConfig) -> Vec<Step> {
    let mut t = Table { steps: Vec::new() };
    t.trunk(config);
    t.policy_head(config.version);
    t.value_head();
    t.steps
}
