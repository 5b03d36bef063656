//! KataGo's transformer configs (`*tf*` in `modelconfigs.py`), version 17.
//!
//! Every base config whose blocks KataGo 1.17.2's exporter writes and its
//! backends run is here. The others are known by name and refused with the
//! reason, so a user who asks for one learns why rather than getting an
//! "unknown kind": feed-forward blocks without SwiGLU (`b5c48h3tfr`'s
//! `ffng`, which KataGo's CPU and CUDA backends refuse), and attention
//! biases (GAB, TAB), QK-norm, registers and depthwise FFN convolutions,
//! which its exporter refuses.

use super::{BlockKind, ModelConfig, NormKind, TrunkTip};

/// Rotary position embeddings of an attention block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rope {
    /// Fixed 2D frequencies `1 / theta^(2j / (d/2))` for rows then columns
    /// (`precompute_freqs_cos_sin_2d`); KataGo's default theta is 100.
    Fixed {
        /// The base of the frequencies.
        theta: f64,
    },
    /// Learned `(omega_x, omega_y)` per key/value head and pair of
    /// channels (`learnable_rope`).
    Learnable,
}

/// The settings every attention and feed-forward block of a net shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransformerConfig {
    /// `transformer_heads`: query heads.
    pub heads: i64,
    /// `transformer_kv_heads`: key/value heads (divides `heads`).
    pub kv_heads: i64,
    /// `attention_query_head_dim`, if set; else the block's channels over
    /// `heads`.
    pub q_head_dim: Option<i64>,
    /// `attention_value_head_dim`, if set; else as the query's default.
    pub v_head_dim: Option<i64>,
    /// `transformer_ffn_channels`: the SwiGLU hidden width.
    pub ffn: i64,
    /// The position embeddings.
    pub rope: Rope,
}

impl TransformerConfig {
    /// Query/key and value head widths of a block on `channels` channels
    /// (the trunk's, or the mid channels inside a bottleneck).
    pub fn head_dims(&self, channels: i64) -> (i64, i64) {
        let default = channels / self.heads;
        (
            self.q_head_dim.unwrap_or(default),
            self.v_head_dim.unwrap_or(default),
        )
    }
}

/// The transformer names [`ModelConfig::by_name`] builds.
pub const TRANSFORMER_CONFIGS: &[&str] = &[
    "b7c96h3tfrs",
    "b7c96h6kv3qk32v16tflrs",
    "b8c96h3tfrs",
    "b5c192h3nbttfrs",
    "b4c256h4nbttflrs",
    "b14c192h6tfrs",
    "b14c192h6tflrs",
    "b5c384h6nbttflrs",
    "b6c384h6nbttflrs",
    "b7c384h6nbttflrs",
    "b16c256h8tfrs",
    "b22c192h6tfrs",
    "b10c384h6nbttflrs",
    "b21c384h12tfrs",
    "b21c384h12tflrs",
    "b9c768h12nbttflrs",
    "b15c512h8nbttflrs",
    "b10c512h8nbt3tflrs",
    "b14c512h8nbttflrs",
    "b30c512h16tflrs",
    "b45c384h12tflrs",
    "b11c768h12nbt3tflrs",
    "b14c768h12nbt3tflrs",
    "b13c1024h16nbttflrs",
    "b15c1024h16nbt3tflrs",
    "b2b10c96h3tfrs",
    "b2b13c192h6tfrs",
    "b2b5c384h6nbttflrs",
    "b4b4c384h6nbttflrs",
];

/// KataGo configs this trainer refuses, and why.
const REFUSED: &[(&str, &str)] = &[
    ("b5c48h3tfr", "its feed-forward blocks have no SwiGLU (ffng), which KataGo 1.17.2's CPU and CUDA backends do not run"),
    ("b9c96h3tgabs", "GAB attention biases, which KataGo 1.17.2's exporter does not export"),
    ("b10c192h6tgabs", "GAB attention biases, which KataGo 1.17.2's exporter does not export"),
    ("b5c384h6nbttfgabs", "GAB attention biases, which KataGo 1.17.2's exporter does not export"),
    ("b5c384h6nbttftabs", "TAB attention biases, which KataGo 1.17.2's exporter does not export"),
    ("b5c384h6nbttfrtabs", "TAB attention biases, which KataGo 1.17.2's exporter does not export"),
    ("b5c384h6nbttflrtabcheaps", "TAB attention biases, which KataGo 1.17.2's exporter does not export"),
    ("b5c384h6nbttflrtab2cheaps", "TAB attention biases, which KataGo 1.17.2's exporter does not export"),
    ("b6c384h6nbttflrs-qkn", "QK-norm, which KataGo 1.17.2's exporter does not export"),
    ("b6c384h6nbttflrs-dwc", "depthwise FFN convolutions, which KataGo 1.17.2's exporter does not export"),
    ("b6c384h6nbttflrs-qkn-ireg16", "QK-norm and registers, which KataGo 1.17.2's exporter does not export"),
    ("b9c768h12nbttflrs-ireg16", "registers, which KataGo 1.17.2's exporter does not export"),
    ("b14c512h8nbttflrs-ireg16", "registers, which KataGo 1.17.2's exporter does not export"),
    ("b14c512h8nbttflrs-qkn-ireg16", "QK-norm and registers, which KataGo 1.17.2's exporter does not export"),
    ("b8c768h12nbttflrs-qkn-ireg16", "QK-norm and registers, which KataGo 1.17.2's exporter does not export"),
];

/// The trunk's blocks, as `modelconfigs.py` lists them.
#[derive(Clone, Copy)]
enum Layout {
    /// `regular` blocks, then pairs of `attnrope` and `ffnsg`.
    Pairs { regular: usize, pairs: usize },
    /// `bottlenest2` blocks, then `bottlenestNtransformerropesg` blocks
    /// with `inner` pairs each.
    Nested {
        conv: usize,
        blocks: usize,
        inner: usize,
    },
}

/// One row of `modelconfigs.py`.
struct Row {
    trunk: i64,
    mid: i64,
    gpool: i64,
    ffn: i64,
    heads: i64,
    kv_heads: i64,
    q_head_dim: Option<i64>,
    v_head_dim: Option<i64>,
    learnable_rope: bool,
    layout: Layout,
    /// p1, g1, v1, sbv2, num_scorebeliefs, v2.
    heads_widths: [i64; 6],
}

// One row per config, as in `modelconfigs.py`.
#[rustfmt::skip]
fn row(base: &str) -> Option<Row> {
    use Layout::*;
    let pairs = |pairs| Pairs { regular: 0, pairs };
    let nbt = |blocks| Nested { conv: 0, blocks, inner: 2 };
    let nbt3 = |blocks| Nested { conv: 0, blocks, inner: 3 };
    const S96: [i64; 6] = [32, 32, 32, 48, 4, 64];
    const S192: [i64; 6] = [32, 32, 32, 80, 8, 96];
    const M48: [i64; 6] = [48, 48, 96, 96, 8, 96];
    const L64: [i64; 6] = [64, 64, 128, 128, 8, 128];
    const X96: [i64; 6] = [96, 96, 192, 192, 8, 192];
    // (trunk, mid, gpool, ffn, heads, kv, learnable, layout, head widths)
    let (trunk, mid, gpool, ffn, heads, kv_heads, learnable_rope, layout, heads_widths) = match base {
        "b7c96h3tfrs" => (96, 96, 32, 256, 3, 3, false, pairs(7), S96),
        "b7c96h6kv3qk32v16tflrs" => (96, 96, 32, 256, 6, 3, true, pairs(7), S96),
        "b8c96h3tfrs" => (96, 96, 32, 256, 3, 3, false, pairs(8), S96),
        "b5c192h3nbttfrs" => (192, 96, 32, 256, 3, 3, false, nbt(5), S96),
        "b4c256h4nbttflrs" => (256, 128, 32, 384, 4, 4, true, nbt(4), [32, 32, 32, 64, 6, 80]),
        "b14c192h6tfrs" => (192, 192, 32, 512, 6, 6, false, pairs(14), S192),
        "b14c192h6tflrs" => (192, 192, 32, 512, 6, 6, true, pairs(14), S192),
        "b5c384h6nbttflrs" => (384, 192, 32, 512, 6, 6, true, nbt(5), S192),
        "b6c384h6nbttflrs" => (384, 192, 32, 512, 6, 6, true, nbt(6), S192),
        "b7c384h6nbttflrs" => (384, 192, 32, 512, 6, 6, true, nbt(7), S192),
        "b16c256h8tfrs" => (256, 256, 48, 768, 8, 8, false, pairs(16), M48),
        "b22c192h6tfrs" => (192, 192, 48, 512, 6, 6, false, pairs(22), M48),
        "b10c384h6nbttflrs" => (384, 192, 48, 512, 6, 6, true, nbt(10), M48),
        "b21c384h12tfrs" => (384, 384, 64, 1024, 12, 12, false, pairs(21), L64),
        "b21c384h12tflrs" => (384, 384, 64, 1024, 12, 12, true, pairs(21), L64),
        "b9c768h12nbttflrs" => (768, 384, 64, 1024, 12, 12, true, nbt(9), L64),
        "b15c512h8nbttflrs" => (512, 256, 64, 768, 8, 8, true, nbt(15), L64),
        "b10c512h8nbt3tflrs" => (512, 256, 64, 768, 8, 8, true, nbt3(10), L64),
        "b14c512h8nbttflrs" => (512, 256, 64, 768, 8, 8, true, nbt(14), L64),
        "b30c512h16tflrs" => (512, 512, 96, 1536, 16, 16, true, pairs(30), X96),
        "b45c384h12tflrs" => (384, 384, 96, 1024, 12, 12, true, pairs(45), X96),
        "b11c768h12nbt3tflrs" => (768, 384, 96, 1152, 12, 12, true, nbt3(11), X96),
        "b14c768h12nbt3tflrs" => (768, 384, 96, 1152, 12, 12, true, nbt3(14), X96),
        "b13c1024h16nbttflrs" => (1024, 512, 96, 1536, 16, 16, true, nbt(13), X96),
        "b15c1024h16nbt3tflrs" => (1024, 512, 96, 1536, 16, 16, true, nbt3(15), X96),
        "b2b10c96h3tfrs" => (96, 96, 32, 256, 3, 3, false, Pairs { regular: 2, pairs: 10 }, S96),
        "b2b13c192h6tfrs" => (192, 192, 32, 512, 6, 6, false, Pairs { regular: 2, pairs: 13 }, S192),
        "b2b5c384h6nbttflrs" => (384, 192, 32, 512, 6, 6, true, Nested { conv: 2, blocks: 5, inner: 2 }, S192),
        "b4b4c384h6nbttflrs" => (384, 192, 32, 512, 6, 6, true, Nested { conv: 4, blocks: 4, inner: 2 }, S192),
        _ => return None,
    };
    let (q_head_dim, v_head_dim) = match base {
        "b7c96h6kv3qk32v16tflrs" => (Some(32), Some(16)),
        _ => (None, None),
    };
    Some(Row {
        trunk,
        mid,
        gpool,
        ffn,
        heads,
        kv_heads,
        q_head_dim,
        v_head_dim,
        learnable_rope,
        layout,
        heads_widths,
    })
}

/// The transformer config `base` (no suffixes; fixup, version 17): `None`
/// when `base` is no transformer name KataGo knows, `Some(Err(why))` for
/// one this trainer refuses.
pub(super) fn by_base(base: &str) -> Option<Result<ModelConfig, String>> {
    if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == base) {
        return Some(Err(format!("refused: {why}")));
    }
    let r = row(base)?;
    let blocks = match r.layout {
        Layout::Pairs { regular, pairs } => {
            let mut b = vec![BlockKind::Regular; regular];
            for _ in 0..pairs {
                b.extend([BlockKind::Attention, BlockKind::FfnSwiGlu]);
            }
            b
        }
        Layout::Nested {
            conv,
            blocks,
            inner,
        } => {
            let mut b = vec![BlockKind::BottleNest2; conv];
            b.extend(std::iter::repeat_n(
                BlockKind::BottleNestTransformer(inner),
                blocks,
            ));
            b
        }
    };
    let [p1, g1, v1, sbv2, num_scorebeliefs, v2] = r.heads_widths;
    let rope = if r.learnable_rope {
        Rope::Learnable
    } else {
        Rope::Fixed { theta: 100.0 }
    };
    Some(Ok(ModelConfig {
        name: base.to_string(),
        version: 17,
        trunk: r.trunk,
        mid: r.mid,
        gpool: r.gpool,
        blocks,
        p1,
        g1,
        v1,
        v2,
        sbv2,
        num_scorebeliefs,
        norm: NormKind::Fixup,
        initial_conv: 3,
        transformer: Some(TransformerConfig {
            heads: r.heads,
            kv_heads: r.kv_heads,
            q_head_dim: r.q_head_dim,
            v_head_dim: r.v_head_dim,
            ffn: r.ffn,
            rope,
        }),
        tip: TrunkTip::Norm,
        activation: crate::nn::desc::Activation::Relu,
        meta_encoder: None,
    }))
}
