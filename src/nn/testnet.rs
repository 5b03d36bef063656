//! Small random networks of any supported version, for tests: they exercise
//! layer kinds (nested bottleneck blocks, Mish, the v15 pass MLP, optimistic
//! policy) for which no real model file is at hand.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::desc::*;
use super::model_file::ModelFile;
use super::network::NetInput;

/// One masked `side` x `side` board of inputs (the base that the bad-input
/// tests vary).
pub(super) fn one_board<'a>(
    side: usize,
    spatial: &'a [f32],
    global: &'a [f32],
    mask: &'a [f32],
) -> NetInput<'a> {
    NetInput::square(1, side, spatial, global, Some(mask))
}

struct Gen {
    rng: StdRng,
    version: i32,
    act: Activation,
}

impl Gen {
    fn vals(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|_| self.rng.gen_range(-scale..scale)).collect()
    }

    fn conv(&mut self, name: &str, k: usize, cin: usize, cout: usize) -> ConvLayer {
        let scale = 1.5 / ((cin * k * k) as f32).sqrt();
        let weights = self.vals(cout * cin * k * k, scale);
        ConvLayer::new(name, [cout, cin, k, k], weights)
    }

    fn bn(&mut self, name: &str, c: usize) -> BatchNormLayer {
        let mean = self.vals(c, 0.2);
        let variance = (0..c).map(|_| self.rng.gen_range(0.5..1.5)).collect();
        // Some negative scales so the unfoldable path is exercised too.
        let scale = (0..c).map(|_| self.rng.gen_range(-0.3..1.2)).collect();
        let bias = self.vals(c, 0.3);
        BatchNormLayer {
            name: name.into(),
            num_channels: c,
            epsilon: 1e-5,
            has_scale: true,
            has_bias: true,
            mean,
            variance,
            scale,
            bias,
        }
    }

    fn act(&mut self, name: &str) -> ActivationLayer {
        ActivationLayer {
            name: name.into(),
            activation: if self.version >= 11 {
                self.act
            } else {
                Activation::Relu
            },
        }
    }

    fn matmul(&mut self, name: &str, cin: usize, cout: usize) -> MatMulLayer {
        let scale = 1.5 / (cin as f32).sqrt();
        MatMulLayer {
            name: name.into(),
            in_channels: cin,
            out_channels: cout,
            weights: self.vals(cin * cout, scale),
        }
    }

    fn bias(&mut self, name: &str, c: usize) -> MatBiasLayer {
        MatBiasLayer {
            name: name.into(),
            weights: self.vals(c, 0.2),
        }
    }

    fn ordinary(&mut self, name: &str, c: usize, mid: usize) -> Block {
        Block::Ordinary(ResidualBlock {
            name: name.into(),
            pre_bn: self.bn(&format!("{name}.norm1"), c),
            pre_activation: self.act(&format!("{name}.act1")),
            regular_conv: self.conv(&format!("{name}.conv1"), 3, c, mid),
            mid_bn: self.bn(&format!("{name}.norm2"), mid),
            mid_activation: self.act(&format!("{name}.act2")),
            final_conv: self.conv(&format!("{name}.conv2"), 3, mid, c),
        })
    }

    fn transformer_norm(&mut self, name: &str, c: usize) -> TransformerNorm {
        TransformerNorm {
            name: name.into(),
            num_channels: c,
            epsilon: 1e-6,
            weight: self.vals(c, 1.5),
        }
    }

    /// An attention block of `(heads, kv_heads, q_dim, v_dim)`; `rope`:
    /// `None` without, `Some(learned)` with.
    fn attention(
        &mut self,
        name: &str,
        c: usize,
        (heads, kv_heads, q_dim, v_dim): (usize, usize, usize, usize),
        rope: Option<bool>,
    ) -> Block {
        let learned = rope == Some(true);
        Block::Attention(Box::new(AttentionBlock {
            name: name.into(),
            num_heads: heads,
            num_kv_heads: kv_heads,
            q_head_dim: q_dim,
            v_head_dim: v_dim,
            use_rope: rope.is_some(),
            learnable_rope: learned,
            pre_ln: self.transformer_norm(&format!("{name}.norm"), c),
            q_proj: self.matmul(&format!("{name}.q"), c, heads * q_dim),
            k_proj: self.matmul(&format!("{name}.k"), c, kv_heads * q_dim),
            v_proj: self.matmul(&format!("{name}.v"), c, kv_heads * v_dim),
            out_proj: self.matmul(&format!("{name}.out"), heads * v_dim, c),
            rope_name: if rope.is_some() {
                format!("{name}.rope")
            } else {
                String::new()
            },
            rope_theta: if rope == Some(false) { 100.0 } else { 0.0 },
            rope_freqs: if learned {
                self.vals(kv_heads * q_dim, 1.0)
            } else {
                Vec::new()
            },
        }))
    }

    fn ffn(&mut self, name: &str, c: usize, hidden: usize) -> Block {
        Block::Ffn(Box::new(FfnBlock {
            name: name.into(),
            num_channels: c,
            ffn_channels: hidden,
            use_swiglu: true,
            pre_ln: self.transformer_norm(&format!("{name}.norm"), c),
            linear1: self.matmul(&format!("{name}.linear1"), c, hidden),
            gate: self.matmul(&format!("{name}.gate"), c, hidden),
            linear2: self.matmul(&format!("{name}.linear2"), hidden, c),
        }))
    }

    fn gpool(&mut self, name: &str, c: usize, reg: usize, gp: usize) -> Block {
        Block::GlobalPooling(Box::new(GlobalPoolingBlock {
            name: name.into(),
            pre_bn: self.bn(&format!("{name}.norm1"), c),
            pre_activation: self.act(&format!("{name}.act1")),
            regular_conv: self.conv(&format!("{name}.conv1r"), 3, c, reg),
            gpool_conv: self.conv(&format!("{name}.conv1g"), 3, c, gp),
            gpool_bn: self.bn(&format!("{name}.normg"), gp),
            gpool_activation: self.act(&format!("{name}.actg")),
            gpool_to_bias_mul: self.matmul(&format!("{name}.linear_g"), 3 * gp, reg),
            mid_bn: self.bn(&format!("{name}.norm2"), reg),
            mid_activation: self.act(&format!("{name}.act2")),
            final_conv: self.conv(&format!("{name}.conv2"), 3, reg, c),
        }))
    }
}

/// A random net of `version` with trunk width `c`; versions >= 14 get a
/// nested bottleneck block (b18c384nbt-style), versions >= 11 use `act`.
pub(crate) fn synthetic(version: i32, act: Activation, seed: u64) -> ModelFile {
    let mut g = Gen {
        rng: StdRng::seed_from_u64(seed),
        version,
        act,
    };
    let c = 16;
    let mut blocks = vec![g.ordinary("rconv1", c, 12), g.gpool("rconv2", c, 12, 8)];
    if version >= 14 {
        let inner = vec![
            g.ordinary("nbt.inner1", 8, 8),
            g.gpool("nbt.inner2", 8, 8, 4),
        ];
        // Version 17: a fixed-RoPE attention block inside the bottleneck.
        let inner = if version >= 17 {
            let mut inner = inner;
            inner.push(g.attention("nbt.attn", 8, (2, 1, 4, 4), Some(false)));
            inner
        } else {
            inner
        };
        blocks.push(Block::NestedBottleneck(NestedBottleneckBlock {
            name: "nbt".into(),
            pre_bn: g.bn("nbt.normpre", c),
            pre_activation: g.act("nbt.actpre"),
            pre_conv: g.conv("nbt.convpre", 1, c, 8),
            blocks: inner,
            post_bn: g.bn("nbt.normpost", 8),
            post_activation: g.act("nbt.actpost"),
            post_conv: g.conv("nbt.convpost", 1, 8, c),
        }));
    }
    if version >= 17 {
        blocks.push(g.attention("attn1", c, (4, 2, 4, 6), Some(true)));
        blocks.push(g.ffn("ffn1", c, 24));
        blocks.push(g.attention("attn2", c, (2, 2, 6, 4), None));
    }
    let tip_rms_norm = (version >= 17).then(|| RmsNormLayer {
        name: "trunk.rmsnorm".into(),
        num_channels: c,
        epsilon: 1e-6,
        // Spatial, as KaTrain's net: one scale per row, over its board.
        spatial: true,
        gamma: g.vals(c, 1.5),
        beta: g.vals(c, 0.3),
    });
    let policy_out_channels = match version {
        16.. => 4,
        12..=15 => 2,
        _ => 1,
    };
    let score_channels = num_score_value_channels(version);
    let inputs = InputVersion::of_model_version(version).unwrap_or(InputVersion::V7);
    let (spatial, global) = (inputs.num_spatial_features(), inputs.num_global_features());
    let post_process = if version >= 13 {
        PostProcessParams {
            shortterm_score_error_multiplier: 150.0,
            ..PostProcessParams::default()
        }
    } else {
        PostProcessParams::default()
    };
    let pass_mlp = (version >= 15).then(|| {
        (
            g.bias("policy.linear_pass_bias", 12),
            g.act("policy.act_pass"),
            g.matmul("policy.linear_pass2", 12, policy_out_channels),
        )
    });
    let pass_out = if version >= 15 {
        12
    } else {
        policy_out_channels
    };
    ModelFile {
        name: format!("synthetic-v{version}"),
        version,
        num_input_channels: spatial,
        num_input_global_channels: global,
        post_process,
        prefer_pass_alive_under_suicide_rules: false,
        trunk: Trunk {
            name: "trunk".into(),
            trunk_num_channels: c,
            mid_num_channels: 12,
            regular_num_channels: 12,
            dilated_num_channels: 8,
            gpool_num_channels: 8,
            initial_conv: g.conv("conv1", 5, spatial, c),
            initial_matmul: g.matmul("ginput", global, c),
            metadata_encoder: None,
            blocks,
            tip_bn: if tip_rms_norm.is_some() {
                BatchNormLayer::default()
            } else {
                g.bn("trunk.norm", c)
            },
            tip_rms_norm,
            tip_activation: g.act("trunk.act"),
        },
        policy_head: PolicyHead {
            name: "policy".into(),
            policy_out_channels,
            p1_conv: g.conv("policy.conv1p", 1, c, 12),
            g1_conv: g.conv("policy.conv1g", 1, c, 8),
            g1_bn: g.bn("policy.norm1g", 8),
            g1_activation: g.act("policy.act1g"),
            gpool_to_bias_mul: g.matmul("policy.linear_g", 24, 12),
            p1_bn: g.bn("policy.norm1p", 12),
            p1_activation: g.act("policy.act1p"),
            p2_conv: g.conv("policy.conv2p", 1, 12, policy_out_channels),
            gpool_to_pass_mul: g.matmul("policy.linear_pass", 24, pass_out),
            pass_mlp,
        },
        value_head: ValueHead {
            name: "value".into(),
            v1_conv: g.conv("value.conv1", 1, c, 8),
            v1_bn: g.bn("value.norm1", 8),
            v1_activation: g.act("value.act1"),
            v2_mul: g.matmul("value.linear2", 24, 10),
            v2_bias: g.bias("value.bias2", 10),
            v2_activation: g.act("value.act2"),
            v3_mul: g.matmul("value.linear3", 10, 3),
            v3_bias: g.bias("value.bias3", 3),
            sv3_mul: g.matmul("value.linear_valuehead", 10, score_channels),
            sv3_bias: g.bias("value.bias_valuehead", score_channels),
            ownership_conv: g.conv("value.conv_ownership", 1, 8, 1),
        },
    }
}

/// Gives `file` (model version 15 or later) a random SGF metadata encoder
/// (`metaEncoderVersion` 1), as a human-style net has.
// Only the libtorch comparisons use it.
#[cfg_attr(not(feature = "torch"), allow(dead_code))]
pub(crate) fn with_metadata_encoder(file: &mut ModelFile, seed: u64) {
    let mut g = Gen {
        rng: StdRng::seed_from_u64(seed),
        version: file.version,
        act: Activation::Mish,
    };
    let c = file.trunk.trunk_num_channels;
    file.trunk.metadata_encoder = Some(MetadataEncoder {
        name: "metaencoder".into(),
        version: 1,
        num_input_channels: 192,
        mul1: g.matmul("metaencoder.mul1", 192, 12),
        bias1: g.bias("metaencoder.bias1", 12),
        act1: g.act("metaencoder.act1"),
        mul2: g.matmul("metaencoder.mul2", 12, 10),
        bias2: g.bias("metaencoder.bias2", 10),
        act2: g.act("metaencoder.act2"),
        mul3: g.matmul("metaencoder.mul3", 10, c),
    });
}

/// The small random net of model `version` (3 to 7) whose KataGo 1.17.2
/// answers are in `tests/data/katago_old_versions`: a pure function of the
/// version (weights from `StdRng` seeded `3000 + version`), so the tests
/// build it instead of committing a network file, and check its MD5
/// against the one KataGo was given (`fixtures.md5` there).
///
/// # Panics
/// If `version` is not 3 to 7.
pub fn old_version_fixture(version: i32) -> ModelFile {
    assert!((3..=7).contains(&version), "old model versions are 3 to 7");
    synthetic(version, Activation::Relu, 3000 + version as u64)
}

/// Writes the fixture nets of the old-version tests (model versions 3 to
/// 7) into the folder `ENGINE_OLD_FIXTURES` names, with the project's
/// model writer: `scripts/old_version_fixtures.sh` runs it and then asks
/// KataGo for its answers with them.
#[test]
#[ignore = "writes fixture files; run by scripts/old_version_fixtures.sh"]
fn write_old_version_fixtures() {
    let dir = std::env::var("ENGINE_OLD_FIXTURES").expect("ENGINE_OLD_FIXTURES names a folder");
    for version in 3..=7 {
        let m = old_version_fixture(version);
        let path = std::path::Path::new(&dir).join(format!("synthetic-v{version}.bin.gz"));
        m.write(&path).expect("fixture written");
    }
}
