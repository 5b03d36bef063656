//! The trainable KataGo convnet (KataGo's `model_pytorch.py`, fixup
//! normalisation, version 15) on a `tch` VarStore.
//!
//! Every parameter is registered under KataGo's own state_dict name
//! (`blocks.0.normactconv1.norm.beta`, `policy_head.conv1p.weight`, ...) and
//! in torch's layout, so weights move between this module and KataGo's
//! trainer by name, and [`super::export`] can follow KataGo's exporter.

use std::collections::BTreeMap;

use tch::{nn, Device, Kind, Tensor};

use super::config::{BlockKind, ModelConfig};
use super::TrainError;

/// Extra score-distribution bins on each side (`EXTRA_SCORE_DISTR_RADIUS`).
pub const EXTRA_SCORE_DISTR_RADIUS: i64 = 60;

/// KataGo's regularisation groups (`add_reg_dict`), which set weight decay
/// and learning-rate factors in the optimiser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParamGroup {
    /// Input convolution and global-input matmul.
    Input,
    /// Trunk convolutions and matmuls.
    Normal,
    /// Trunk norm gammas.
    NormalGamma,
    /// Trunk norm betas.
    NoReg,
    /// Head weights (and the last trunk norm's gamma).
    Output,
    /// Head biases (and the last trunk norm's beta).
    OutputNoReg,
}

impl ParamGroup {
    /// KataGo's group name.
    pub fn name(self) -> &'static str {
        match self {
            ParamGroup::Input => "input",
            ParamGroup::Normal => "normal",
            ParamGroup::NormalGamma => "normal_gamma",
            ParamGroup::NoReg => "noreg",
            ParamGroup::Output => "output",
            ParamGroup::OutputNoReg => "output_noreg",
        }
    }
}

/// One registered parameter.
#[derive(Debug)]
pub struct ParamInfo {
    /// KataGo's state_dict name.
    pub name: String,
    /// Its regularisation group.
    pub group: ParamGroup,
    /// Handle to the variable (shares storage with the VarStore).
    pub tensor: Tensor,
}

/// KataGo's weight init: truncated normal with `std = scale*gain/sqrt(fan_in)`.
fn init_std(activation_gain: f64, scale: f64, fan_in: i64) -> f64 {
    let target = scale * activation_gain / (fan_in as f64).sqrt();
    target / 0.879_625_661_034_239_8
}

const RELU_GAIN: f64 = std::f64::consts::SQRT_2;

struct Builder<'a> {
    root: nn::Path<'a>,
    params: Vec<ParamInfo>,
}

impl Builder<'_> {
    /// Registers a parameter filled with truncated-normal noise of the given std
    /// (zeros when the std is tiny, as KataGo does).
    fn param(&mut self, name: &str, shape: &[i64], std: f64, group: ParamGroup) -> Tensor {
        let mut path = self.root.clone();
        let parts: Vec<&str> = name.split('.').collect();
        for p in &parts[..parts.len() - 1] {
            path = &path / *p;
        }
        let t = path.zeros(parts[parts.len() - 1], shape);
        if std >= 1e-10 {
            let _guard = tch::no_grad_guard();
            let mut r = Tensor::randn(shape, (Kind::Float, t.device()));
            for _ in 0..8 {
                let bad = r.abs().gt(2.0);
                let fresh = Tensor::randn(shape, (Kind::Float, t.device()));
                r = fresh.where_self(&bad, &r);
            }
            let r = r.clamp(-2.0, 2.0) * std;
            t.shallow_clone().copy_(&r);
        }
        self.params.push(ParamInfo {
            name: name.to_string(),
            group,
            tensor: t.shallow_clone(),
        });
        t
    }
}

/// `NormMask` with fixup normalisation: `(x * (gamma+1) + beta) * mask`.
struct Norm {
    beta: Tensor,
    gamma: Option<Tensor>,
}

impl Norm {
    fn new(b: &mut Builder, name: &str, c: i64, use_gamma: bool, last: bool) -> Norm {
        let (gg, bg) = if last {
            (ParamGroup::Output, ParamGroup::OutputNoReg)
        } else {
            (ParamGroup::NormalGamma, ParamGroup::NoReg)
        };
        let beta = b.param(&format!("{name}.beta"), &[1, c, 1, 1], 0.0, bg);
        let gamma = use_gamma.then(|| b.param(&format!("{name}.gamma"), &[1, c, 1, 1], 0.0, gg));
        Norm { beta, gamma }
    }

    fn forward(&self, x: &Tensor, mask: &Tensor) -> Tensor {
        let out = match &self.gamma {
            Some(g) => x * (g + 1.0) + &self.beta,
            None => x + &self.beta,
        };
        out * mask
    }
}

fn conv(x: &Tensor, w: &Tensor) -> Tensor {
    let k = w.size()[2];
    x.conv2d(w, None::<Tensor>, [1, 1], [k / 2, k / 2], [1, 1], 1)
}

/// KataGo's `KataGPool`: mean, mean scaled by board size, max.
fn gpool(x: &Tensor, mask: &Tensor, mask_sum_hw: &Tensor) -> Tensor {
    let offset = mask_sum_hw.sqrt() - 14.0;
    let mean = x.sum_dim_intlist([2i64, 3].as_slice(), true, Kind::Float) / mask_sum_hw;
    let n = x.size()[0];
    let c = x.size()[1];
    let max = (x + (mask - 1.0))
        .view([n, c, -1])
        .amax([2i64].as_slice(), false)
        .view([n, c, 1, 1]);
    let pool2 = &mean * (&offset / 10.0);
    Tensor::cat(&[mean, pool2, max], 1)
}

/// KataGo's `KataValueHeadGPool`.
fn value_gpool(x: &Tensor, mask_sum_hw: &Tensor) -> Tensor {
    let offset = mask_sum_hw.sqrt() - 14.0;
    let mean = x.sum_dim_intlist([2i64, 3].as_slice(), true, Kind::Float) / mask_sum_hw;
    let p2 = &mean * (&offset / 10.0);
    let p3 = &mean * ((&offset * &offset) / 100.0 - 0.1);
    Tensor::cat(&[mean, p2, p3], 1)
}

struct ConvPool {
    conv1r: Tensor,
    conv1g: Tensor,
    normg: Norm,
    linear_g: Tensor,
}

struct NormActConv {
    norm: Norm,
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
        if let Some(cg) = c_gpool {
            // KataConvAndGPool.initialize for fixup: r 0.8, g sqrt(0.6).
            let conv1r = b.param(
                &format!("{name}.convpool.conv1r.weight"),
                &[c_out, c_in, kernel, kernel],
                init_std(RELU_GAIN, scale * 0.8, fan),
                ParamGroup::Normal,
            );
            let conv1g = b.param(
                &format!("{name}.convpool.conv1g.weight"),
                &[cg, c_in, kernel, kernel],
                init_std(RELU_GAIN, scale.sqrt() * 0.6f64.sqrt(), fan),
                ParamGroup::Normal,
            );
            let normg = Norm::new(b, &format!("{name}.convpool.normg"), cg, false, false);
            let linear_g = b.param(
                &format!("{name}.convpool.linear_g.weight"),
                &[c_out, 3 * cg],
                init_std(RELU_GAIN, scale.sqrt() * 0.6f64.sqrt(), 3 * cg),
                ParamGroup::Normal,
            );
            NormActConv {
                norm,
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
                init_std(RELU_GAIN, scale, fan),
                ParamGroup::Normal,
            );
            NormActConv {
                norm,
                conv: Some(conv),
                convpool: None,
            }
        }
    }

    fn forward(&self, x: &Tensor, m: &Masks) -> Tensor {
        let out = self.norm.forward(x, &m.mask).relu();
        match (&self.conv, &self.convpool) {
            (Some(w), _) => conv(&out, w),
            (None, Some(cp)) => {
                let outr = conv(&out, &cp.conv1r);
                let outg = conv(&out, &cp.conv1g);
                let outg = cp.normg.forward(&outg, &m.mask).relu();
                let pooled = gpool(&outg, &m.mask, &m.mask_sum_hw)
                    .squeeze_dim(-1)
                    .squeeze_dim(-1);
                let g = pooled.matmul(&cp.linear_g.tr()).unsqueeze(-1).unsqueeze(-1);
                outr + g
            }
            (None, None) => unreachable!("a NormActConv has a conv or a convpool"),
        }
    }
}

struct ResBlock {
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

    fn forward(&self, x: &Tensor, m: &Masks) -> Tensor {
        self.nac2.forward(&self.nac1.forward(x, m), m)
    }
}

struct NestedBlock {
    p: NormActConv,
    stack: Vec<ResBlock>,
    q: NormActConv,
}

enum TrunkBlock {
    Res(ResBlock),
    Nested(NestedBlock),
}

/// Masks derived from the input's first plane (on-board points).
pub struct Masks {
    /// `N1HW`.
    pub mask: Tensor,
    /// `N111`.
    pub mask_sum_hw: Tensor,
}

impl Masks {
    /// From the spatial input batch `NCHW`.
    pub fn from_input(input_spatial: &Tensor) -> Masks {
        let mask = input_spatial.narrow(1, 0, 1).contiguous();
        let mask_sum_hw = mask.sum_dim_intlist([2i64, 3].as_slice(), true, Kind::Float);
        Masks { mask, mask_sum_hw }
    }
}

struct PolicyHead {
    conv1p: Tensor,
    conv1g: Tensor,
    biasg: Tensor,
    linear_g: Tensor,
    linear_pass: Tensor,
    linear_pass_bias: Tensor,
    linear_pass2: Tensor,
    bias2: Tensor,
    conv2p: Tensor,
}

struct ValueHead {
    conv1: Tensor,
    bias1: Tensor,
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
}

/// The net's outputs after KataGo's `postprocess_output`.
pub struct NetOutput {
    /// `[N, 6, pos_len²+1]`: player, opponent, soft player, soft opponent,
    /// long-term optimistic, short-term optimistic.
    pub policy_logits: Tensor,
    /// `[N, 3]`: win, loss, no result.
    pub value_logits: Tensor,
    /// `[N, 3, 3]`: {long, mid, short} x {win, loss, no result}.
    pub td_value_logits: Tensor,
    /// `[N, 3]`.
    pub pred_td_score: Tensor,
    /// `[N, 1, H, W]`.
    pub ownership_pretanh: Tensor,
    /// `[N, 1, H, W]`.
    pub pred_scoring: Tensor,
    /// `[N, 2, H, W]`.
    pub futurepos_pretanh: Tensor,
    /// `[N, 4, H, W]`.
    pub seki_logits: Tensor,
    /// `[N]`.
    pub pred_scoremean: Tensor,
    /// `[N]`.
    pub pred_scorestdev: Tensor,
    /// `[N]`.
    pub pred_lead: Tensor,
    /// `[N]`.
    pub pred_variance_time: Tensor,
    /// `[N]`.
    pub pred_shortterm_value_error: Tensor,
    /// `[N]`.
    pub pred_shortterm_score_error: Tensor,
    /// `[N, 2·(pos_len² + 60)]` log-probabilities.
    pub scorebelief_logits: Tensor,
}

/// The trainable network.
pub struct TrainNet {
    /// The variables, named as KataGo's state_dict.
    pub vs: nn::VarStore,
    /// Its config.
    pub config: ModelConfig,
    /// Data board side.
    pub pos_len: i64,
    /// Every parameter in registration order (KataGo's `add_reg_dict` order).
    pub params: Vec<ParamInfo>,
    conv_spatial: Tensor,
    linear_global: Tensor,
    blocks: Vec<TrunkBlock>,
    norm_trunkfinal: Norm,
    policy: PolicyHead,
    value: ValueHead,
    score_offset: Tensor,
    score_offset_bias: Tensor,
    score_parity: Tensor,
}

impl std::fmt::Debug for TrainNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainNet")
            .field("config", &self.config.name)
            .field("params", &self.params.len())
            .finish()
    }
}

/// KataGo's output multipliers for version >= 13.
pub const SCOREMEAN_MULTIPLIER: f64 = 20.0;
const TD_SCORE_MULTIPLIER: f64 = 20.0;
const SCORESTDEV_MULTIPLIER: f64 = 20.0;
const LEAD_MULTIPLIER: f64 = 20.0;
const VARIANCE_TIME_MULTIPLIER: f64 = 40.0;
const SHORTTERM_VALUE_ERROR_MULTIPLIER: f64 = 0.25;
const SHORTTERM_SCORE_ERROR_MULTIPLIER: f64 = 150.0;

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

impl TrainNet {
    /// A freshly initialised net (KataGo's `Model.initialize()` for fixup).
    pub fn new(config: &ModelConfig, pos_len: i64, device: Device) -> Result<TrainNet, TrainError> {
        if config.version != 15 {
            return Err(TrainError::Config(format!(
                "model version {} is not supported (15 only)",
                config.version
            )));
        }
        let vs = nn::VarStore::new(device);
        let mut b = Builder {
            root: vs.root(),
            params: Vec::new(),
        };
        let c = config.trunk;
        let conv_spatial = b.param(
            "conv_spatial.weight",
            &[c, 22, 3, 3],
            init_std(RELU_GAIN, 0.8, 22 * 9),
            ParamGroup::Input,
        );
        let linear_global = b.param(
            "linear_global.weight",
            &[c, 19],
            init_std(RELU_GAIN, 0.6, 19),
            ParamGroup::Input,
        );
        let fixup_scale = 1.0 / (config.blocks.len() as f64).sqrt();
        let mut blocks = Vec::new();
        for (i, kind) in config.blocks.iter().enumerate() {
            let name = format!("blocks.{i}");
            let c_gpool = kind.has_gpool().then_some(config.gpool);
            match kind {
                BlockKind::Regular | BlockKind::RegularGpool => {
                    blocks.push(TrunkBlock::Res(ResBlock::new(
                        &mut b,
                        &name,
                        c,
                        config.mid,
                        c_gpool,
                        fixup_scale,
                    )));
                }
                BlockKind::BottleNest2 | BlockKind::BottleNest2Gpool => {
                    let internal = 2;
                    let s = fixup_scale.powf(1.0 / (1.0 + internal as f64));
                    let p = NormActConv::new(
                        &mut b,
                        &format!("{name}.normactconvp"),
                        c,
                        config.mid,
                        None,
                        1,
                        false,
                        s,
                    );
                    let mut stack = Vec::new();
                    for j in 0..internal {
                        let cg = if j == 0 { c_gpool } else { None };
                        stack.push(ResBlock::new(
                            &mut b,
                            &format!("{name}.blockstack.{j}"),
                            config.mid,
                            config.mid,
                            cg,
                            s,
                        ));
                    }
                    let q = NormActConv::new(
                        &mut b,
                        &format!("{name}.normactconvq"),
                        config.mid,
                        c,
                        None,
                        1,
                        true,
                        0.0,
                    );
                    blocks.push(TrunkBlock::Nested(NestedBlock { p, stack, q }));
                }
            }
        }
        let norm_trunkfinal = Norm::new(&mut b, "norm_trunkfinal", c, false, true);

        // Policy head (PolicyHead.initialize).
        let (p1, g1) = (config.p1, config.g1);
        let o = ParamGroup::Output;
        let on = ParamGroup::OutputNoReg;
        let conv1p = b.param(
            "policy_head.conv1p.weight",
            &[p1, c, 1, 1],
            init_std(RELU_GAIN, 0.8, c),
            o,
        );
        let conv1g = b.param(
            "policy_head.conv1g.weight",
            &[g1, c, 1, 1],
            init_std(RELU_GAIN, 1.0, c),
            o,
        );
        let linear_g = b.param(
            "policy_head.linear_g.weight",
            &[p1, 3 * g1],
            init_std(RELU_GAIN, 0.6, 3 * g1),
            o,
        );
        let linear_pass = b.param(
            "policy_head.linear_pass.weight",
            &[p1, 3 * g1],
            init_std(RELU_GAIN, 1.0, 3 * g1),
            o,
        );
        let linear_pass_bias = b.param(
            "policy_head.linear_pass.bias",
            &[p1],
            init_std(RELU_GAIN, 0.2, 3 * g1),
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
        let biasg = b.param("policy_head.biasg.beta", &[1, g1, 1, 1], 0.0, on);
        let bias2 = b.param("policy_head.bias2.beta", &[1, p1, 1, 1], 0.0, on);
        let policy = PolicyHead {
            conv1p,
            conv1g,
            biasg,
            linear_g,
            linear_pass,
            linear_pass_bias,
            linear_pass2,
            bias2,
            conv2p,
        };

        // Value head (ValueHead.initialize), in add_reg_dict order.
        let (v1, v2, sv2, nsb) = (config.v1, config.v2, config.sbv2, config.num_scorebeliefs);
        let vh = "value_head";
        let conv1 = b.param(
            &format!("{vh}.conv1.weight"),
            &[v1, c, 1, 1],
            init_std(RELU_GAIN, 1.0, c),
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
        let linear2 = lin(&mut b, "linear2", v2, 3 * v1, RELU_GAIN, 1.0, 0.2);
        let valuehead = lin(&mut b, "linear_valuehead", 3, v2, 1.0, 1.0, 0.2);
        let miscvaluehead = lin(&mut b, "linear_miscvaluehead", 10, v2, 1.0, 1.0, 0.2);
        let moremiscvaluehead = lin(&mut b, "linear_moremiscvaluehead", 8, v2, 1.0, 1.0, 0.2);
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
        let linear_s2 = lin(&mut b, "linear_s2", sv2, 3 * v1, RELU_GAIN, 1.0, 1.0);
        let linear_s2off = b.param(
            &format!("{vh}.linear_s2off.weight"),
            &[sv2, 1],
            init_std(RELU_GAIN, 1.0, 3 * v1),
            o,
        );
        let linear_s2par = b.param(
            &format!("{vh}.linear_s2par.weight"),
            &[sv2, 1],
            init_std(RELU_GAIN, 1.0, 3 * v1),
            o,
        );
        let linear_s3 = lin(&mut b, "linear_s3", nsb, sv2, 1.0, 0.5, 0.5 * 0.2);
        let linear_smix = lin(&mut b, "linear_smix", nsb, 3 * v1, 1.0, 1.0, 0.2);
        let bias1 = b.param(&format!("{vh}.bias1.beta"), &[1, v1, 1, 1], 0.0, on);
        let value = ValueHead {
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
        };

        let mid = pos_len * pos_len + EXTRA_SCORE_DISTR_RADIUS;
        let len = 2 * mid;
        let offs: Vec<f32> = (0..len).map(|i| (i - mid) as f32 + 0.5).collect();
        let offs_bias: Vec<f32> = offs.iter().map(|v| 0.05 * v).collect();
        let parity: Vec<f32> = (0..len)
            .map(|i| 0.5 - ((i - mid).rem_euclid(2)) as f32)
            .collect();
        let params = b.params;
        Ok(TrainNet {
            config: config.clone(),
            pos_len,
            params,
            conv_spatial,
            linear_global,
            blocks,
            norm_trunkfinal,
            policy,
            value,
            score_offset: Tensor::from_slice(&offs).to_device(device),
            score_offset_bias: Tensor::from_slice(&offs_bias).to_device(device),
            score_parity: Tensor::from_slice(&parity).to_device(device),
            vs,
        })
    }

    /// The score-belief bin centres (`score_belief_offset_vector`).
    pub fn score_offset_vector(&self) -> &Tensor {
        &self.score_offset
    }

    /// Number of learned scalars.
    pub fn num_parameters(&self) -> i64 {
        self.params.iter().map(|p| p.tensor.numel() as i64).sum()
    }

    /// Parameters by KataGo name.
    pub fn param_map(&self) -> BTreeMap<&str, &Tensor> {
        self.params
            .iter()
            .map(|p| (p.name.as_str(), &p.tensor))
            .collect()
    }

    /// Copies named tensors into the parameters. Every parameter must be
    /// present with the right shape; unknown names are an error too.
    pub fn load_named(&mut self, named: &[(String, Tensor)]) -> Result<(), TrainError> {
        let n = self.load_partial(named)?;
        if n != self.params.len() {
            let have: std::collections::BTreeSet<&str> =
                named.iter().map(|(k, _)| k.as_str()).collect();
            let missing: Vec<&str> = self
                .params
                .iter()
                .map(|p| p.name.as_str())
                .filter(|k| !have.contains(k))
                .collect();
            return Err(TrainError::Checkpoint(format!(
                "missing parameters: {}",
                missing.join(", ")
            )));
        }
        Ok(())
    }

    /// Copies the named tensors present into the parameters (others keep
    /// their values); a name the net lacks or a wrong shape is an error.
    /// Returns how many parameters were set.
    pub fn load_partial(&mut self, named: &[(String, Tensor)]) -> Result<usize, TrainError> {
        let _guard = tch::no_grad_guard();
        let mut count = 0;
        for (name, src) in named {
            let p = self
                .params
                .iter()
                .find(|p| &p.name == name)
                .ok_or_else(|| TrainError::Checkpoint(format!("unknown parameter {name}")))?;
            if src.size() != p.tensor.size() {
                return Err(TrainError::Checkpoint(format!(
                    "parameter {}: shape {:?}, expected {:?}",
                    p.name,
                    src.size(),
                    p.tensor.size()
                )));
            }
            p.tensor
                .shallow_clone()
                .copy_(&src.to_kind(Kind::Float).to_device(p.tensor.device()));
            count += 1;
        }
        Ok(count)
    }

    /// Runs the net on `[N,22,H,W]` spatial and `[N,19]` global inputs.
    pub fn forward(&self, input_spatial: &Tensor, input_global: &Tensor) -> NetOutput {
        let m = Masks::from_input(input_spatial);
        let x_spatial = conv(input_spatial, &self.conv_spatial);
        let x_global = input_global
            .matmul(&self.linear_global.tr())
            .unsqueeze(-1)
            .unsqueeze(-1);
        let mut out = x_spatial + x_global;
        for block in &self.blocks {
            let residual = match block {
                TrunkBlock::Res(r) => r.forward(&out, &m),
                TrunkBlock::Nested(nb) => {
                    let mut o = nb.p.forward(&out, &m);
                    for r in &nb.stack {
                        o = &o + r.forward(&o, &m);
                    }
                    nb.q.forward(&o, &m)
                }
            };
            out += residual;
        }
        let out = self.norm_trunkfinal.forward(&out, &m.mask).relu();
        let policy = self.policy_forward(&out, &m);
        self.value_forward(&out, &m, input_global, policy)
    }

    fn policy_forward(&self, x: &Tensor, m: &Masks) -> Tensor {
        let p = &self.policy;
        let outp = conv(x, &p.conv1p);
        let outg = ((conv(x, &p.conv1g) + &p.biasg) * &m.mask).relu();
        let outg = gpool(&outg, &m.mask, &m.mask_sum_hw)
            .squeeze_dim(-1)
            .squeeze_dim(-1);
        let outpass = outg
            .linear(&p.linear_pass, Some(&p.linear_pass_bias))
            .relu()
            .matmul(&p.linear_pass2.tr());
        let g = outg.matmul(&p.linear_g.tr()).unsqueeze(-1).unsqueeze(-1);
        let outp = ((outp + g + &p.bias2) * &m.mask).relu();
        let outpolicy = conv(&outp, &p.conv2p) - (m.mask.neg() + 1.0) * 5000.0;
        let n = outpolicy.size()[0];
        let ch = outpolicy.size()[1];
        Tensor::cat(&[outpolicy.view([n, ch, -1]), outpass.unsqueeze(-1)], 2)
    }

    fn value_forward(
        &self,
        x: &Tensor,
        m: &Masks,
        input_global: &Tensor,
        policy_logits: Tensor,
    ) -> NetOutput {
        let v = &self.value;
        let outv1 = ((conv(x, &v.conv1) + &v.bias1) * &m.mask).relu();
        let pooled = value_gpool(&outv1, &m.mask_sum_hw)
            .squeeze_dim(-1)
            .squeeze_dim(-1);
        let outv2 = pooled.linear(&v.linear2.0, Some(&v.linear2.1)).relu();
        let out_value = outv2.linear(&v.valuehead.0, Some(&v.valuehead.1));
        let misc = outv2.linear(&v.miscvaluehead.0, Some(&v.miscvaluehead.1));
        let moremisc = outv2.linear(&v.moremiscvaluehead.0, Some(&v.moremiscvaluehead.1));
        let ownership = conv(&outv1, &v.conv_ownership) * &m.mask;
        let scoring = conv(&outv1, &v.conv_scoring) * &m.mask;
        let futurepos = conv(x, &v.conv_futurepos) * &m.mask;
        let seki = conv(x, &v.conv_seki) * &m.mask;

        let n = x.size()[0];
        let len = self.score_offset.size()[0];
        let sv2 = self.config.sbv2;
        let nsb = self.config.num_scorebeliefs;
        let s2 = pooled
            .linear(&v.linear_s2.0, Some(&v.linear_s2.1))
            .view([n, 1, sv2]);
        let s2off = self
            .score_offset_bias
            .view([1, len, 1])
            .matmul(&v.linear_s2off.tr());
        let par_in =
            (self.score_parity.view([1, len]) * input_global.narrow(1, 18, 1)).view([n, len, 1]);
        let s2par = par_in.matmul(&v.linear_s2par.tr());
        let outsv2 = (s2 + s2off + s2par).relu();
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
            pred_td_score: moremisc.narrow(1, 5, 3) * TD_SCORE_MULTIPLIER,
            ownership_pretanh: ownership,
            pred_scoring: scoring,
            futurepos_pretanh: futurepos,
            seki_logits: seki,
            pred_scoremean: misc.select(1, 0) * SCOREMEAN_MULTIPLIER,
            pred_scorestdev: softplus_grad_floor(&misc.select(1, 1), 0.05, false)
                * SCORESTDEV_MULTIPLIER,
            pred_lead: misc.select(1, 2) * LEAD_MULTIPLIER,
            pred_variance_time: softplus_grad_floor(&misc.select(1, 3), 0.05, false)
                * VARIANCE_TIME_MULTIPLIER,
            pred_shortterm_value_error: softplus_grad_floor(&moremisc.select(1, 0), 0.05, true)
                * SHORTTERM_VALUE_ERROR_MULTIPLIER,
            pred_shortterm_score_error: softplus_grad_floor(&moremisc.select(1, 1), 0.05, true)
                * SHORTTERM_SCORE_ERROR_MULTIPLIER,
            scorebelief_logits: scorebelief,
        }
    }
}
