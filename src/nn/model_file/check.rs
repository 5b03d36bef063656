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

/// The input sizes every supported version has.
pub(super) fn inputs(m: &ModelFile) -> Check {
    if m.num_input_channels != NUM_SPATIAL_FEATURES
        || m.num_input_global_channels != NUM_GLOBAL_FEATURES
    {
        return Err(format!(
            "{}: expected {NUM_SPATIAL_FEATURES} spatial and {NUM_GLOBAL_FEATURES} global inputs \
             for model version {}, file says {} and {}",
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
pub(super) fn metadata_encoder(e: &MetadataEncoder, trunk_channels: usize) -> Check {
    let n = &e.name;
    expect_eq(
        n,
        "mul1 in",
        e.mul1.in_channels,
        "input channels",
        e.num_input_channels,
    )?;
    expect_eq(
        n,
        "bias1",
        e.bias1.weights.len(),
        "mul1 out",
        e.mul1.out_channels,
    )?;
    expect_eq(
        n,
        "mul2 in",
        e.mul2.in_channels,
        "mul1 out",
        e.mul1.out_channels,
    )?;
    expect_eq(
        n,
        "bias2",
        e.bias2.weights.len(),
        "mul2 out",
        e.mul2.out_channels,
    )?;
    expect_eq(
        n,
        "mul3 in",
        e.mul3.in_channels,
        "mul2 out",
        e.mul2.out_channels,
    )?;
    expect_eq(
        n,
        "mul3 out",
        e.mul3.out_channels,
        "trunk channels",
        trunk_channels,
    )
}

/// An ordinary block on a stack of `channels` channels.
pub(super) fn ordinary(b: &ResidualBlock, channels: usize) -> Check {
    let n = &b.name;
    expect_eq(
        n,
        "preBN channels",
        b.pre_bn.num_channels,
        "trunk channels",
        channels,
    )?;
    expect_eq(
        n,
        "regularConv in",
        b.regular_conv.in_channels,
        "channels",
        channels,
    )?;
    expect_eq(
        n,
        "midBN channels",
        b.mid_bn.num_channels,
        "regularConv out",
        b.regular_conv.out_channels,
    )?;
    expect_eq(
        n,
        "finalConv in",
        b.final_conv.in_channels,
        "midBN channels",
        b.mid_bn.num_channels,
    )?;
    expect_eq(
        n,
        "finalConv out",
        b.final_conv.out_channels,
        "channels",
        channels,
    )
}

/// A global-pooling block on a stack of `channels` channels.
pub(super) fn global_pooling(b: &GlobalPoolingBlock, channels: usize) -> Check {
    let n = &b.name;
    expect_eq(
        n,
        "preBN channels",
        b.pre_bn.num_channels,
        "channels",
        channels,
    )?;
    expect_eq(
        n,
        "regularConv in",
        b.regular_conv.in_channels,
        "channels",
        channels,
    )?;
    expect_eq(
        n,
        "gpoolConv in",
        b.gpool_conv.in_channels,
        "channels",
        channels,
    )?;
    expect_eq(
        n,
        "gpoolBN channels",
        b.gpool_bn.num_channels,
        "gpoolConv out",
        b.gpool_conv.out_channels,
    )?;
    expect_eq(
        n,
        "gpoolToBiasMul in",
        b.gpool_to_bias_mul.in_channels,
        "3 * gpoolBN channels",
        3 * b.gpool_bn.num_channels,
    )?;
    expect_eq(
        n,
        "midBN channels",
        b.mid_bn.num_channels,
        "regularConv out",
        b.regular_conv.out_channels,
    )?;
    expect_eq(
        n,
        "gpoolToBiasMul out",
        b.gpool_to_bias_mul.out_channels,
        "midBN channels",
        b.mid_bn.num_channels,
    )?;
    expect_eq(
        n,
        "finalConv in",
        b.final_conv.in_channels,
        "midBN channels",
        b.mid_bn.num_channels,
    )?;
    expect_eq(
        n,
        "finalConv out",
        b.final_conv.out_channels,
        "channels",
        channels,
    )
}

/// A nested bottleneck block on a stack of `channels` channels.
pub(super) fn nested(b: &NestedBottleneckBlock, channels: usize) -> Check {
    let n = &b.name;
    expect_eq(
        n,
        "preBN channels",
        b.pre_bn.num_channels,
        "channels",
        channels,
    )?;
    expect_eq(
        n,
        "preConv in",
        b.pre_conv.in_channels,
        "channels",
        channels,
    )?;
    expect_eq(
        n,
        "postBN channels",
        b.post_bn.num_channels,
        "preConv out",
        b.pre_conv.out_channels,
    )?;
    expect_eq(
        n,
        "postConv in",
        b.post_conv.in_channels,
        "postBN channels",
        b.post_bn.num_channels,
    )?;
    expect_eq(
        n,
        "postConv out",
        b.post_conv.out_channels,
        "channels",
        channels,
    )
}

/// The policy head, whose output width the version fixes.
pub(super) fn policy_head(p: &PolicyHead) -> Check {
    let n = &p.name;
    let out = p.policy_out_channels;
    expect_eq(
        n,
        "p1BN channels",
        p.p1_bn.num_channels,
        "p1Conv out",
        p.p1_conv.out_channels,
    )?;
    expect_eq(
        n,
        "g1BN channels",
        p.g1_bn.num_channels,
        "g1Conv out",
        p.g1_conv.out_channels,
    )?;
    expect_eq(
        n,
        "gpoolToBiasMul in",
        p.gpool_to_bias_mul.in_channels,
        "3 * g1BN channels",
        3 * p.g1_bn.num_channels,
    )?;
    expect_eq(
        n,
        "gpoolToBiasMul out",
        p.gpool_to_bias_mul.out_channels,
        "p1BN channels",
        p.p1_bn.num_channels,
    )?;
    expect_eq(
        n,
        "p2Conv in",
        p.p2_conv.in_channels,
        "p1BN channels",
        p.p1_bn.num_channels,
    )?;
    expect_eq(
        n,
        "p2Conv out",
        p.p2_conv.out_channels,
        "policy channels",
        out,
    )?;
    expect_eq(
        n,
        "gpoolToPassMul in",
        p.gpool_to_pass_mul.in_channels,
        "3 * g1BN channels",
        3 * p.g1_bn.num_channels,
    )?;
    let pass = p.gpool_to_pass_mul.out_channels;
    match &p.pass_mlp {
        Some((bias, _, mul2)) => {
            expect_eq(
                n,
                "gpoolToPassBias",
                bias.weights.len(),
                "gpoolToPassMul out",
                pass,
            )?;
            expect_eq(
                n,
                "gpoolToPassMul2 in",
                mul2.in_channels,
                "gpoolToPassMul out",
                pass,
            )?;
            expect_eq(
                n,
                "gpoolToPassMul2 out",
                mul2.out_channels,
                "policy channels",
                out,
            )
        }
        None => expect_eq(n, "gpoolToPassMul out", pass, "policy channels", out),
    }
}

/// The value head (score outputs: 4 for version 8, 6 from version 9).
pub(super) fn value_head(h: &ValueHead, version: i32) -> Check {
    let n = &h.name;
    let score_channels = if version >= 9 { 6 } else { 4 };
    let v1_out = h.v1_conv.out_channels;
    let hidden = h.v2_mul.out_channels;
    expect_eq(
        n,
        "v1BN channels",
        h.v1_bn.num_channels,
        "v1Conv out",
        v1_out,
    )?;
    expect_eq(
        n,
        "v2Mul in",
        h.v2_mul.in_channels,
        "3 * v1BN channels",
        3 * h.v1_bn.num_channels,
    )?;
    expect_eq(n, "v2Bias", h.v2_bias.weights.len(), "v2Mul out", hidden)?;
    expect_eq(n, "v3Mul in", h.v3_mul.in_channels, "v2Mul out", hidden)?;
    expect_eq(n, "v3Mul out", h.v3_mul.out_channels, "value outputs", 3)?;
    expect_eq(n, "v3Bias", h.v3_bias.weights.len(), "value outputs", 3)?;
    expect_eq(n, "sv3Mul in", h.sv3_mul.in_channels, "v2Mul out", hidden)?;
    expect_eq(
        n,
        "sv3Mul out",
        h.sv3_mul.out_channels,
        "score value outputs",
        score_channels,
    )?;
    expect_eq(
        n,
        "sv3Bias",
        h.sv3_bias.weights.len(),
        "score value outputs",
        score_channels,
    )?;
    expect_eq(
        n,
        "ownership conv in",
        h.ownership_conv.in_channels,
        "v1Conv out",
        v1_out,
    )?;
    expect_eq(
        n,
        "ownership conv out",
        h.ownership_conv.out_channels,
        "ownership outputs",
        1,
    )
}
