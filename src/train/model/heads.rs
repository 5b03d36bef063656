//! The policy and value heads (KataGo's `PolicyHead` and `ValueHead`).

use tch::{Device, Kind, Tensor};

use super::blocks::{conv, conv_shared, gpool, value_gpool, Norm};
use super::init::{act, gain, init_std, Builder, ParamGroup};
use super::masks::Masks;
use super::{ModelConfig, NetOutput, EXTRA_SCORE_DISTR_RADIUS};
use crate::nn::desc::Activation;
use crate::nn::desc::PostProcessParams;

pub(super) struct PolicyHead {
    activation: Activation,
    conv1p: Tensor,
    conv1g: Tensor,
    biasg: Norm,
    linear_g: Tensor,
    linear_pass: Tensor,
    linear_pass_bias: Tensor,
    linear_pass2: Tensor,
    bias2: Norm,
    conv2p: Tensor,
}

pub(super) struct ValueHead {
    activation: Activation,
    conv1: Tensor,
    bias1: Norm,
    linear2: (Tensor, Tensor),
    valuehead: (Tensor, Tensor),
    miscvaluehead: (Tensor, Tensor),
    moremiscvaluehead: (Tensor, Tensor),
    conv_ownership: Tensor,
    conv_scoring: Tensor,
    conv_futurepos: Tensor,
    conv_seki: Tensor,
    linear_s2: (Tensor, Tensor),
    linear_s2off: Tensor,
    linear_s2par: Tensor,
    linear_s3: (Tensor, Tensor),
    linear_smix: (Tensor, Tensor),
    /// Score-belief bin centres, `[2·(pos_len² + 60)]`.
    pub(super) score_offset: Tensor,
    score_offset_bias: Tensor,
    score_parity: Tensor,
}

/// The output multipliers of KataGo's trainer (`model_pytorch.py`), which
/// the export writes into the model file (version >= 13): the older
/// defaults but for the short-term score error.
pub const OUTPUT_MULTIPLIERS: PostProcessParams = PostProcessParams {
    shortterm_score_error_multiplier: 150.0,
    ..PostProcessParams::BEFORE_V13
};

/// KataGo's `SoftPlusWithGradientFloorFunction`: the forward value of
/// softplus (or `softplus(x/2)²`), with the gradient
/// `floor + (1-floor)·sigmoid(x)`. The custom backward is obtained by adding
/// a zero-valued term whose gradient is the wanted one.
fn softplus_grad_floor(x: &Tensor, floor: f64, square: bool) -> Tensor {
    let value = if square {
        (x * 0.5).softplus().square()
    } else {
        x.softplus()
    };
    let surrogate = x * floor + x.softplus() * (1.0 - floor);
    value.detach() + (&surrogate - surrogate.detach())
}

/// The five 1x1 convolutions that read the trunk's output (policy
/// `conv1p`, `conv1g`; value `conv1`, `conv_futurepos`, `conv_seki`), done
/// as one ([`conv_shared`]).
pub(super) struct HeadConvs {
    /// Policy `conv1p`.
    pub(super) policy_p: Tensor,
    /// Policy `conv1g`.
    pub(super) policy_g: Tensor,
    /// The value head's three.
    pub(super) value: ValueConvs,
}

/// The value head's convolutions of the trunk.
pub(super) struct ValueConvs {
    conv1: Tensor,
    futurepos: Tensor,
    seki: Tensor,
}

impl HeadConvs {
    pub(super) fn new(x: &Tensor, p: &PolicyHead, v: &ValueHead) -> HeadConvs {
        let [policy_p, policy_g, conv1, futurepos, seki] = conv_shared(
            x,
            [
                &p.conv1p,
                &p.conv1g,
                &v.conv1,
                &v.conv_futurepos,
                &v.conv_seki,
            ],
            // The heads run in fp32 under mixed precision too, as KataGo's.
            None,
        );
        HeadConvs {
            policy_p,
            policy_g,
            value: ValueConvs {
                conv1,
                futurepos,
                seki,
            },
        }
    }
}

impl PolicyHead {
    /// `PolicyHead.initialize`.
    pub(super) fn new(b: &mut Builder, config: &ModelConfig) -> PolicyHead {
        let c = config.trunk;
        let act_gain = gain(b.activation);
        // Policy head (PolicyHead.initialize).
        let (p1, g1) = (config.p1, config.g1);
        let o = ParamGroup::Output;
        let on = ParamGroup::OutputNoReg;
        let conv1p = b.param(
            "policy_head.conv1p.weight",
            &[p1, c, 1, 1],
            init_std(act_gain, 0.8, c),
            o,
        );
        let conv1g = b.param(
            "policy_head.conv1g.weight",
            &[g1, c, 1, 1],
            init_std(act_gain, 1.0, c),
            o,
        );
        let linear_g = b.param(
            "policy_head.linear_g.weight",
            &[p1, 3 * g1],
            init_std(act_gain, 0.6, 3 * g1),
            o,
        );
        let linear_pass = b.param(
            "policy_head.linear_pass.weight",
            &[p1, 3 * g1],
            init_std(act_gain, 1.0, 3 * g1),
            o,
        );
        let linear_pass_bias = b.param(
            "policy_head.linear_pass.bias",
            &[p1],
            init_std(act_gain, 0.2, 3 * g1),
            on,
        );
        let linear_pass2 = b.param(
            "policy_head.linear_pass2.weight",
            &[6, p1],
            init_std(1.0, 0.3, p1),
            o,
        );
        let conv2p = b.param(
            "policy_head.conv2p.weight",
            &[6, p1, 1, 1],
            init_std(1.0, 0.3, p1),
            o,
        );
        let biasg = Norm::head_bias(b, "policy_head.biasg", g1);
        let bias2 = Norm::head_bias(b, "policy_head.bias2", p1);
        PolicyHead {
            activation: b.activation,
            conv1p,
            conv1g,
            biasg,
            linear_g,
            linear_pass,
            linear_pass_bias,
            linear_pass2,
            bias2,
            conv2p,
        }
    }

    /// Policy logits `[N, 6, H·W+1]` from the trunk's output.
    /// The policy from its two 1x1 convolutions of the trunk (`conv1p`,
    /// `conv1g`, computed by [`HeadConvs`]).
    pub(super) fn forward(&self, outp: Tensor, outg: &Tensor, m: &Masks) -> Tensor {
        let p = self;
        let a = p.activation;
        let outg = act(&p.biasg.forward(outg, m), a);
        let outg = gpool(&outg, m).squeeze_dim(-1).squeeze_dim(-1);
        let outpass = act(&outg.linear(&p.linear_pass, Some(&p.linear_pass_bias)), a)
            .matmul(&p.linear_pass2.tr());
        let g = outg.matmul(&p.linear_g.tr()).unsqueeze(-1).unsqueeze(-1);
        let outp = act(&p.bias2.forward(&(outp + g), m), a);
        let outpolicy = conv(&outp, &p.conv2p);
        let outpolicy = if m.full {
            outpolicy
        } else {
            outpolicy - (m.mask.neg() + 1.0) * 5000.0
        };
        let n = outpolicy.size()[0];
        let ch = outpolicy.size()[1];
        Tensor::cat(&[outpolicy.view([n, ch, -1]), outpass.unsqueeze(-1)], 2)
    }
}

impl ValueHead {
    /// `ValueHead.initialize`, in `add_reg_dict` order, and the score-belief vectors.
    pub(super) fn new(
        b: &mut Builder,
        config: &ModelConfig,
        pos_len: i64,
        device: Device,
    ) -> ValueHead {
        let c = config.trunk;
        let act_gain = gain(b.activation);
        let (o, on) = (ParamGroup::Output, ParamGroup::OutputNoReg);
        // Value head (ValueHead.initialize), in add_reg_dict order.
        let (v1, v2, sv2, nsb) = (config.v1, config.v2, config.sbv2, config.num_scorebeliefs);
        let vh = "value_head";
        let conv1 = b.param(
            &format!("{vh}.conv1.weight"),
            &[v1, c, 1, 1],
            init_std(act_gain, 1.0, c),
            o,
        );
        let lin =
            |b: &mut Builder, n: &str, out: i64, inp: i64, gain: f64, scale: f64, bscale: f64| {
                let w = b.param(
                    &format!("{vh}.{n}.weight"),
                    &[out, inp],
                    init_std(gain, scale, inp),
                    o,
                );
                let bias = b.param(
                    &format!("{vh}.{n}.bias"),
                    &[out],
                    init_std(gain, bscale, inp),
                    on,
                );
                (w, bias)
            };
        let linear2 = lin(b, "linear2", v2, 3 * v1, act_gain, 1.0, 0.2);
        let valuehead = lin(b, "linear_valuehead", 3, v2, 1.0, 1.0, 0.2);
        let miscvaluehead = lin(b, "linear_miscvaluehead", 10, v2, 1.0, 1.0, 0.2);
        let moremiscvaluehead = lin(b, "linear_moremiscvaluehead", 8, v2, 1.0, 1.0, 0.2);
        let conv_ownership = b.param(
            &format!("{vh}.conv_ownership.weight"),
            &[1, v1, 1, 1],
            init_std(1.0, 0.2, v1),
            o,
        );
        let conv_scoring = b.param(
            &format!("{vh}.conv_scoring.weight"),
            &[1, v1, 1, 1],
            init_std(1.0, 0.2, v1),
            o,
        );
        let conv_futurepos = b.param(
            &format!("{vh}.conv_futurepos.weight"),
            &[2, c, 1, 1],
            init_std(1.0, 0.2, c),
            o,
        );
        let conv_seki = b.param(
            &format!("{vh}.conv_seki.weight"),
            &[4, c, 1, 1],
            init_std(1.0, 0.2, c),
            o,
        );
        let linear_s2 = lin(b, "linear_s2", sv2, 3 * v1, act_gain, 1.0, 1.0);
        let linear_s2off = b.param(
            &format!("{vh}.linear_s2off.weight"),
            &[sv2, 1],
            init_std(act_gain, 1.0, 3 * v1),
            o,
        );
        let linear_s2par = b.param(
            &format!("{vh}.linear_s2par.weight"),
            &[sv2, 1],
            init_std(act_gain, 1.0, 3 * v1),
            o,
        );
        let linear_s3 = lin(b, "linear_s3", nsb, sv2, 1.0, 0.5, 0.5 * 0.2);
        let linear_smix = lin(b, "linear_smix", nsb, 3 * v1, 1.0, 1.0, 0.2);
        let bias1 = Norm::head_bias(b, &format!("{vh}.bias1"), v1);
        let mid = pos_len * pos_len + EXTRA_SCORE_DISTR_RADIUS;
        let len = 2 * mid;
        let offs: Vec<f32> = (0..len).map(|i| (i - mid) as f32 + 0.5).collect();
        let offs_bias: Vec<f32> = offs.iter().map(|v| 0.05 * v).collect();
        let parity: Vec<f32> = (0..len)
            .map(|i| 0.5 - ((i - mid).rem_euclid(2)) as f32)
            .collect();
        ValueHead {
            activation: b.activation,
            conv1,
            bias1,
            linear2,
            valuehead,
            miscvaluehead,
            moremiscvaluehead,
            conv_ownership,
            conv_scoring,
            conv_futurepos,
            conv_seki,
            linear_s2,
            linear_s2off,
            linear_s2par,
            linear_s3,
            linear_smix,
            score_offset: Tensor::from_slice(&offs).to_device(device),
            score_offset_bias: Tensor::from_slice(&offs_bias).to_device(device),
            score_parity: Tensor::from_slice(&parity).to_device(device),
        }
    }

    /// Every value-head output, with the policy logits, as [`NetOutput`].
    /// The value outputs from the head's 1x1 convolutions of the trunk
    /// (`conv1`, `conv_futurepos`, `conv_seki`, computed by [`HeadConvs`]).
    pub(super) fn forward(
        &self,
        trunk: ValueConvs,
        m: &Masks,
        input_global: &Tensor,
        policy_logits: Tensor,
        config: &ModelConfig,
    ) -> NetOutput {
        let v = self;
        let outv1 = act(&v.bias1.forward(&trunk.conv1, m), v.activation);
        let pooled = value_gpool(&outv1, &m.mask_sum_hw)
            .squeeze_dim(-1)
            .squeeze_dim(-1);
        let outv2 = act(
            &pooled.linear(&v.linear2.0, Some(&v.linear2.1)),
            v.activation,
        );
        let out_value = outv2.linear(&v.valuehead.0, Some(&v.valuehead.1));
        let misc = outv2.linear(&v.miscvaluehead.0, Some(&v.miscvaluehead.1));
        let moremisc = outv2.linear(&v.moremiscvaluehead.0, Some(&v.moremiscvaluehead.1));
        let [ownership, scoring] = conv_shared(&outv1, [&v.conv_ownership, &v.conv_scoring], None);
        let (ownership, scoring) = (m.apply(ownership), m.apply(scoring));
        let futurepos = m.apply(trunk.futurepos);
        let seki = m.apply(trunk.seki);

        let n = outv1.size()[0];
        let len = self.score_offset.size()[0];
        let sv2 = config.sbv2;
        let nsb = config.num_scorebeliefs;
        let s2 = pooled
            .linear(&v.linear_s2.0, Some(&v.linear_s2.1))
            .view([n, 1, sv2]);
        let s2off = self
            .score_offset_bias
            .view([1, len, 1])
            .matmul(&v.linear_s2off.tr());
        let par_in =
            (self.score_parity.view([1, len]) * input_global.narrow(1, 18, 1)).view([n, len, 1]);
        // `linear_s2par` has one input: its matmul is a product, done as an
        // elementwise multiply-add into the sum (one pass over the
        // `[N, len, sv2]` tensor instead of a K=1 matmul and an add), and
        // a ReLU in place (the sum is not needed for the backward pass).
        let mut sum = (s2 + s2off).addcmul(&par_in, &v.linear_s2par.view([1, 1, sv2]));
        let outsv2 = match v.activation {
            Activation::Relu => sum.relu_(),
            other => act(&sum, other),
        };
        let outsv3 = outsv2.linear(&v.linear_s3.0, Some(&v.linear_s3.1));
        let smix = pooled.linear(&v.linear_smix.0, Some(&v.linear_smix.1));
        let logw = smix.log_softmax(1, Kind::Float);
        let logprobs = outsv3.log_softmax(1, Kind::Float);
        let scorebelief = (logprobs + logw.view([-1, 1, nsb])).logsumexp([2i64].as_slice(), false);

        let td_value_logits = Tensor::stack(
            &[
                misc.narrow(1, 4, 3),
                misc.narrow(1, 7, 3),
                moremisc.narrow(1, 2, 3),
            ],
            1,
        );
        NetOutput {
            policy_logits,
            value_logits: out_value,
            td_value_logits,
            pred_td_score: moremisc.narrow(1, 5, 3) * OUTPUT_MULTIPLIERS.td_score_multiplier,
            ownership_pretanh: ownership,
            pred_scoring: scoring,
            futurepos_pretanh: futurepos,
            seki_logits: seki,
            pred_scoremean: misc.select(1, 0) * OUTPUT_MULTIPLIERS.score_mean_multiplier,
            pred_scorestdev: softplus_grad_floor(&misc.select(1, 1), 0.05, false)
                * OUTPUT_MULTIPLIERS.score_stdev_multiplier,
            pred_lead: misc.select(1, 2) * OUTPUT_MULTIPLIERS.lead_multiplier,
            pred_variance_time: softplus_grad_floor(&misc.select(1, 3), 0.05, false)
                * OUTPUT_MULTIPLIERS.variance_time_multiplier,
            pred_shortterm_value_error: softplus_grad_floor(&moremisc.select(1, 0), 0.05, true)
                * OUTPUT_MULTIPLIERS.shortterm_value_error_multiplier,
            pred_shortterm_score_error: softplus_grad_floor(&moremisc.select(1, 1), 0.05, true)
                * OUTPUT_MULTIPLIERS.shortterm_score_error_multiplier,
            scorebelief_logits: scorebelief,
        }
    }
}
