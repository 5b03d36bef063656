//! Parameter registration and KataGo's fixed-variance initialisation.

use tch::{nn, Kind, Tensor};

use crate::nn::desc::Activation;

/// KataGo's regularisation groups (`add_reg_dict`), which set weight decay
/// and learning-rate factors in the optimiser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParamGroup {
    /// Input convolution, global-input matmul and the metadata encoder's
    /// weights.
    Input,
    /// The metadata encoder's biases (`input_noreg`).
    InputNoReg,
    /// Trunk convolutions and matmuls.
    Normal,
    /// Attention projections (`normal_attn`: half the weight decay).
    NormalAttn,
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
            ParamGroup::InputNoReg => "input_noreg",
            ParamGroup::Normal => "normal",
            ParamGroup::NormalAttn => "normal_attn",
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
pub(super) fn init_std(activation_gain: f64, scale: f64, fan_in: i64) -> f64 {
    let target = scale * activation_gain / (fan_in as f64).sqrt();
    target / 0.879_625_661_034_239_8
}

/// KataGo's `compute_gain`: the init gain of layers followed by `a`
/// (SiLU keeps ReLU's, "for compat reasons" as KataGo says).
pub(super) fn gain(a: Activation) -> f64 {
    match a {
        Activation::Relu | Activation::Silu => std::f64::consts::SQRT_2,
        Activation::Mish => 2.210_277f64.sqrt(),
        Activation::Identity => 1.0,
    }
}

/// `a(x)`.
pub(super) fn act(x: &Tensor, a: Activation) -> Tensor {
    match a {
        Activation::Relu => x.relu(),
        Activation::Silu => x.silu(),
        Activation::Mish => x.mish(),
        Activation::Identity => x.shallow_clone(),
    }
}

/// Registers parameters under KataGo's names, in registration order.
pub(super) struct Builder<'a> {
    pub(super) root: nn::Path<'a>,
    pub(super) params: Vec<ParamInfo>,
    /// [`NormKind::ScaleBias`](crate::train::NormKind::ScaleBias): every norm and head bias gets a gamma.
    pub(super) scale_everywhere: bool,
    /// The net's activation, which sets init gains and the layers' nonlinearity.
    pub(super) activation: Activation,
}

impl Builder<'_> {
    /// Registers a parameter filled with truncated-normal noise of the given std
    /// (zeros when the std is tiny, as KataGo does).
    pub(super) fn param(
        &mut self,
        name: &str,
        shape: &[i64],
        std: f64,
        group: ParamGroup,
    ) -> Tensor {
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
    /// Registers a parameter drawn uniformly from `[-bound, bound]`
    /// (`torch.nn.Linear`'s default init, which KataGo keeps for the
    /// transformer projections).
    pub(super) fn param_uniform(
        &mut self,
        name: &str,
        shape: &[i64],
        bound: f64,
        group: ParamGroup,
    ) -> Tensor {
        let t = self.param(name, shape, 0.0, group);
        let _guard = tch::no_grad_guard();
        let _ = t.shallow_clone().uniform_(-bound, bound);
        t
    }

    /// Registers a parameter with every element `value`.
    pub(super) fn param_filled(
        &mut self,
        name: &str,
        shape: &[i64],
        value: f64,
        group: ParamGroup,
    ) -> Tensor {
        let t = self.param(name, shape, 0.0, group);
        let _guard = tch::no_grad_guard();
        let _ = t.shallow_clone().fill_(value);
        t
    }

    /// Registers learnable RoPE frequencies `[kv_heads, pairs, 2]` (group
    /// `noreg`) as KataGo draws them: magnitudes log-uniform from 1/50 to 1
    /// radian per point, random signs.
    pub(super) fn param_rope_freqs(&mut self, name: &str, kv_heads: i64, pairs: i64) -> Tensor {
        let shape = [kv_heads, pairs, 2];
        let t = self.param(name, &shape, 0.0, ParamGroup::NoReg);
        let _guard = tch::no_grad_guard();
        let device = t.device();
        let log_mag =
            Tensor::empty(shape, (Kind::Float, device)).uniform_((1.0f64 / 50.0).ln(), 0.0);
        let sign = Tensor::randint(2, shape, (Kind::Float, device)) * 2.0 - 1.0;
        t.shallow_clone().copy_(&(log_mag.exp() * sign));
        t
    }
}
