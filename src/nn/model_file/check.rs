//! Shape checks between the layers of one section of a model file. The walk
//! ([`super::walk`]) runs them right after the section's layers; only the
//! reader acts on them, since a file can lie about its sizes while a model
//! built in memory cannot reach the writer without passing through them.

use super::super::desc::*;
use super::ModelFile;

/// What a failed check says: the section's name and what does not fit.
pub(super) type Check = Result<(), String>;

/// Checks a shape relation and names the section and the two quantities.
pub(super) fn expect_eq(section: &str, what_a: &str, a: usize, what_b: &str, b: usize) -> Check {
    if a == b {
        Ok(())
    } else {
        Err(format!("{section}: {what_a} ({a}) != {what_b} ({b})"))
    }
}

/// One shape relation: a named quantity that must equal another.
type Rel<'a> = (&'a str, usize, &'a str, usize);

/// Checks the relations in order, reporting the first that fails as
/// [`expect_eq`] would. The tables of relations below skip rustfmt, which
/// would spread each row over six lines.
fn expect_all(section: &str, rels: &[Rel]) -> Check {
    rels.iter()
        .try_for_each(|&(what_a, a, what_b, b)| expect_eq(section, what_a, a, what_b, b))
}

/// The input sizes of the file's model version (KataGo's backends assert
/// them: `NNModelVersion::getNumSpatialFeatures` and
/// `getNumGlobalFeatures`).
pub(super) fn inputs(m: &ModelFile) -> Check {
    // The walk has refused versions outside 3..=17 before this check.
    let Some(inputs) = InputVersion::of_model_version(m.version) else {
        return Err(format!(
            "{}: no input features for model version {}",
            m.name, m.version
        ));
    };
    let (spatial, global) = (inputs.num_spatial_features(), inputs.num_global_features());
    if m.num_input_channels != spatial || m.num_input_global_channels != global {
        return Err(format!(
            "{}: expected {spatial} spatial and {global} global inputs \
             for model version {} (input features {inputs:?}), file says {} and {}",
            m.name, m.version, m.num_input_channels, m.num_input_global_channels
        ));
    }
    Ok(())
}

/// How deep nested bottleneck blocks may go (a real net nests once).
pub(super) fn nesting(owner: &str, depth: usize) -> Check {
    if depth > 8 {
        return Err(format!(
            "{owner}: nested bottleneck blocks nested too deeply"
        ));
    }
    Ok(())
}

/// The links between sections: inputs to the trunk, the trunk to the heads.
pub(super) fn sections(m: &ModelFile) -> Check {
    let t = &m.trunk;
    if t.initial_conv.in_channels != m.num_input_channels {
        return Err(format!(
            "numInputChannels ({}) != {} in channels ({})",
            m.num_input_channels, t.initial_conv.name, t.initial_conv.in_channels
        ));
    }
    if t.initial_matmul.in_channels != m.num_input_global_channels {
        return Err(format!(
            "numInputGlobalChannels ({}) != {} in channels ({})",
            m.num_input_global_channels, t.initial_matmul.name, t.initial_matmul.in_channels
        ));
    }
    let c = t.trunk_num_channels;
    for (conv, head) in [
        (&m.policy_head.p1_conv, "policy"),
        (&m.policy_head.g1_conv, "policy"),
        (&m.value_head.v1_conv, "value"),
    ] {
        if conv.in_channels != c {
            return Err(format!(
                "{head} head conv {} takes {} channels, trunk has {c}",
                conv.name, conv.in_channels
            ));
        }
    }
    Ok(())
}

/// The metadata encoder's three dense layers, from its inputs to the trunk.
#[rustfmt::skip]
pub(super) fn metadata_encoder(e: &MetadataEncoder, trunk_channels: usize) -> Check {
    let (mul1_out, mul2_out) = (e.mul1.out_channels, e.mul2.out_channels);
    expect_all(&e.name, &[
        ("mul1 in", e.mul1.in_channels, "input channels", e.num_input_channels),
        ("bias1", e.bias1.weights.len(), "mul1 out", mul1_out),
        ("mul2 in", e.mul2.in_channels, "mul1 out", mul1_out),
        ("bias2", e.bias2.weights.len(), "mul2 out", mul2_out),
        ("mul3 in", e.mul3.in_channels, "mul2 out", mul2_out),
        ("mul3 out", e.mul3.out_channels, "trunk channels", trunk_channels),
    ])
}

/// An ordinary block on a stack of `channels` channels.
#[rustfmt::skip]
pub(super) fn ordinary(b: &ResidualBlock, channels: usize) -> Check {
    let mid_bn = b.mid_bn.num_channels;
    expect_all(&b.name, &[
        ("preBN channels", b.pre_bn.num_channels, "trunk channels", channels),
        ("regularConv in", b.regular_conv.in_channels, "channels", channels),
        ("midBN channels", mid_bn, "regularConv out", b.regular_conv.out_channels),
        ("finalConv in", b.final_conv.in_channels, "midBN channels", mid_bn),
        ("finalConv out", b.final_conv.out_channels, "channels", channels),
    ])
}

/// A global-pooling block on a stack of `channels` channels.
#[rustfmt::skip]
pub(super) fn global_pooling(b: &GlobalPoolingBlock, channels: usize) -> Check {
    let (gpool_bn, mid_bn) = (b.gpool_bn.num_channels, b.mid_bn.num_channels);
    let to_bias = &b.gpool_to_bias_mul;
    expect_all(&b.name, &[
        ("preBN channels", b.pre_bn.num_channels, "channels", channels),
        ("regularConv in", b.regular_conv.in_channels, "channels", channels),
        ("gpoolConv in", b.gpool_conv.in_channels, "channels", channels),
        ("gpoolBN channels", gpool_bn, "gpoolConv out", b.gpool_conv.out_channels),
        ("gpoolToBiasMul in", to_bias.in_channels, "3 * gpoolBN channels", 3 * gpool_bn),
        ("midBN channels", mid_bn, "regularConv out", b.regular_conv.out_channels),
        ("gpoolToBiasMul out", to_bias.out_channels, "midBN channels", mid_bn),
        ("finalConv in", b.final_conv.in_channels, "midBN channels", mid_bn),
        ("finalConv out", b.final_conv.out_channels, "channels", channels),
    ])
}

/// A nested bottleneck block on a stack of `channels` channels.
#[rustfmt::skip]
pub(super) fn nested(b: &NestedBottleneckBlock, channels: usize) -> Check {
    let post_bn = b.post_bn.num_channels;
    expect_all(&b.name, &[
        ("preBN channels", b.pre_bn.num_channels, "channels", channels),
        ("preConv in", b.pre_conv.in_channels, "channels", channels),
        ("postBN channels", post_bn, "preConv out", b.pre_conv.out_channels),
        ("postConv in", b.post_conv.in_channels, "postBN channels", post_bn),
        ("postConv out", b.post_conv.out_channels, "channels", channels),
    ])
}

/// The policy head, whose output width the version fixes.
#[rustfmt::skip]
pub(super) fn policy_head(p: &PolicyHead) -> Check {
    let n = &p.name;
    let out = p.policy_out_channels;
    let (p1_bn, g1_bn) = (p.p1_bn.num_channels, p.g1_bn.num_channels);
    let to_bias = &p.gpool_to_bias_mul;
    expect_all(n, &[
        ("p1BN channels", p1_bn, "p1Conv out", p.p1_conv.out_channels),
        ("g1BN channels", g1_bn, "g1Conv out", p.g1_conv.out_channels),
        ("gpoolToBiasMul in", to_bias.in_channels, "3 * g1BN channels", 3 * g1_bn),
        ("gpoolToBiasMul out", to_bias.out_channels, "p1BN channels", p1_bn),
        ("p2Conv in", p.p2_conv.in_channels, "p1BN channels", p1_bn),
        ("p2Conv out", p.p2_conv.out_channels, "policy channels", out),
        ("gpoolToPassMul in", p.gpool_to_pass_mul.in_channels, "3 * g1BN channels", 3 * g1_bn),
    ])?;
    let pass = p.gpool_to_pass_mul.out_channels;
    match &p.pass_mlp {
        Some((bias, _, mul2)) => expect_all(n, &[
            ("gpoolToPassBias", bias.weights.len(), "gpoolToPassMul out", pass),
            ("gpoolToPassMul2 in", mul2.in_channels, "gpoolToPassMul out", pass),
            ("gpoolToPassMul2 out", mul2.out_channels, "policy channels", out),
        ]),
        None => expect_eq(n, "gpoolToPassMul out", pass, "policy channels", out),
    }
}

/// The value head (score outputs: 1 for version 3, 2 for versions 4-7, 4
/// for version 8, 6 from version 9).
#[rustfmt::skip]
pub(super) fn value_head(h: &ValueHead, version: i32) -> Check {
    let score_channels = num_score_value_channels(version);
    let v1_out = h.v1_conv.out_channels;
    let v1_bn = h.v1_bn.num_channels;
    let hidden = h.v2_mul.out_channels;
    let own = &h.ownership_conv;
    expect_all(&h.name, &[
        ("v1BN channels", v1_bn, "v1Conv out", v1_out),
        ("v2Mul in", h.v2_mul.in_channels, "3 * v1BN channels", 3 * v1_bn),
        ("v2Bias", h.v2_bias.weights.len(), "v2Mul out", hidden),
        ("v3Mul in", h.v3_mul.in_channels, "v2Mul out", hidden),
        ("v3Mul out", h.v3_mul.out_channels, "value outputs", 3),
        ("v3Bias", h.v3_bias.weights.len(), "value outputs", 3),
        ("sv3Mul in", h.sv3_mul.in_channels, "v2Mul out", hidden),
        ("sv3Mul out", h.sv3_mul.out_channels, "score value outputs", score_channels),
        ("sv3Bias", h.sv3_bias.weights.len(), "score value outputs", score_channels),
        ("ownership conv in", own.in_channels, "v1Conv out", v1_out),
        ("ownership conv out", own.out_channels, "ownership outputs", 1),
    ])
}

/// `value` must be one of `allowed`.
pub(super) fn one_of(section: &str, what: &str, value: usize, allowed: &[usize]) -> Check {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{section}: {what} must be one of {allowed:?}, found {value}"
        ))
    }
}

/// An attention block's header, before its layers (KataGo's checks).
pub(super) fn attention_header(a: &AttentionBlock) -> Check {
    let n = &a.name;
    if !a.num_heads.is_multiple_of(a.num_kv_heads) {
        return Err(format!(
            "{n}: numHeads ({}) is not a multiple of numKVHeads ({})",
            a.num_heads, a.num_kv_heads
        ));
    }
    if a.use_rope && !a.q_head_dim.is_multiple_of(2) {
        return Err(format!(
            "{n}: qHeadDim ({}) must be even with RoPE",
            a.q_head_dim
        ));
    }
    Ok(())
}

/// An attention block on a stack of `channels` channels.
#[rustfmt::skip]
pub(super) fn attention(a: &AttentionBlock, channels: usize) -> Check {
    let (q, kv) = (a.num_heads, a.num_kv_heads);
    expect_all(&a.name, &[
        ("preLN channels", a.pre_ln.num_channels, "channels", channels),
        ("qProj in", a.q_proj.in_channels, "channels", channels),
        ("kProj in", a.k_proj.in_channels, "channels", channels),
        ("vProj in", a.v_proj.in_channels, "channels", channels),
        ("qProj out", a.q_proj.out_channels, "numHeads * qHeadDim", q * a.q_head_dim),
        ("kProj out", a.k_proj.out_channels, "numKVHeads * qHeadDim", kv * a.q_head_dim),
        ("vProj out", a.v_proj.out_channels, "numKVHeads * vHeadDim", kv * a.v_head_dim),
        ("outProj in", a.out_proj.in_channels, "numHeads * vHeadDim", q * a.v_head_dim),
        ("outProj out", a.out_proj.out_channels, "channels", channels),
    ])
}

/// A feed-forward block on a stack of `channels` channels.
#[rustfmt::skip]
pub(super) fn ffn(f: &FfnBlock, channels: usize) -> Check {
    let hidden = f.ffn_channels;
    expect_all(&f.name, &[
        ("numChannels", f.num_channels, "channels", channels),
        ("preLN channels", f.pre_ln.num_channels, "channels", channels),
        ("linear1 in", f.linear1.in_channels, "channels", channels),
        ("linear1 out", f.linear1.out_channels, "ffnChannels", hidden),
        ("linear2 in", f.linear2.in_channels, "ffnChannels", hidden),
        ("linear2 out", f.linear2.out_channels, "channels", channels),
    ])?;
    if f.use_swiglu {
        expect_all(&f.name, &[
            ("linearGate in", f.gate.in_channels, "channels", channels),
            ("linearGate out", f.gate.out_channels, "ffnChannels", hidden),
        ])?;
    }
    Ok(())
}
