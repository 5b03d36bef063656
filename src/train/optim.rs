//! KataGo's optimiser set-up from `train.py` for fixup nets: momentum SGD
//! (0.9) with per-group learning rates and L2, the warm-up schedule, the
//! lookahead optimiser (k = 6, alpha = 0.5), gradient-norm clipping, and
//! SWA as an EMA of snapshots.

use std::collections::BTreeMap;

use tch::Tensor;

use super::model::{ParamGroup, TrainNet};
use super::precision::GradScaler;

/// Lookahead steps between syncs (`-lookahead-k`).
pub const LOOKAHEAD_K: u64 = 6;
/// Lookahead interpolation (`-lookahead-alpha`).
pub const LOOKAHEAD_ALPHA: f64 = 0.5;
/// SGD momentum.
pub const MOMENTUM: f64 = 0.9;

/// Learning-rate and schedule settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// `-lr-scale`.
    pub lr_scale: f64,
    /// Batch size (the weight decay and clipping threshold scale with it).
    pub batch_size: usize,
    /// `-no-lr-warmup`.
    pub no_warmup: bool,
}

impl Schedule {
    /// KataGo's warm-up factor at `samples` trained.
    pub fn warmup_scale(&self, samples: u64) -> f64 {
        if self.no_warmup {
            return 1.0;
        }
        let steps: [(u64, f64); 8] = [
            (250_000, 20.0),
            (500_000, 14.0),
            (750_000, 10.0),
            (1_000_000, 7.0),
            (1_250_000, 5.0),
            (1_500_000, 3.0),
            (1_750_000, 2.0),
            (2_000_000, 1.4),
        ];
        for (limit, div) in steps {
            if samples < limit {
                return 1.0 / div;
            }
        }
        1.0
    }

    /// Per-sample learning rate before group factors and lookahead.
    pub fn per_sample_lr(&self, samples: u64) -> f64 {
        0.00003 * self.lr_scale * self.warmup_scale(samples)
    }

    /// The optimiser's learning rate for a group (head factor 0.5; divided by
    /// the lookahead alpha as KataGo does).
    pub fn group_lr(&self, group: ParamGroup, samples: u64) -> f64 {
        let group_scale = match group {
            ParamGroup::Output | ParamGroup::OutputNoReg => 0.5,
            _ => 1.0,
        };
        self.per_sample_lr(samples) * group_scale / LOOKAHEAD_ALPHA
    }

    /// L2 coefficient for a group (fixup + SGD branch of `get_weight_decay`).
    pub fn weight_decay(&self, group: ParamGroup) -> f64 {
        let batch_scaling = self.batch_size as f64 / 256.0;
        match group {
            ParamGroup::Input
            | ParamGroup::Normal
            | ParamGroup::NormalGamma
            | ParamGroup::Output => 0.000001 * batch_scaling,
            // KataGo halves the attention projections' decay.
            ParamGroup::NormalAttn => 0.000001 * 0.5 * batch_scaling,
            ParamGroup::InputNoReg | ParamGroup::NoReg | ParamGroup::OutputNoReg => {
                0.00000001 * batch_scaling
            }
        }
    }

    /// Gradient-norm clip threshold (fixup: 2500 · sqrt(batch/256) / sqrt(lr_scale)).
    pub fn gnorm_cap(&self) -> f64 {
        2500.0 * (self.batch_size as f64 / 256.0).sqrt() / self.lr_scale.max(1e-7).sqrt()
    }
}

/// Momentum buffers, lookahead slow weights and the SWA model.
pub struct Optimizer {
    /// Momentum buffer per parameter (None before its first step).
    pub momentum: BTreeMap<String, Tensor>,
    /// Lookahead slow weights.
    pub slow: BTreeMap<String, Tensor>,
    /// SWA (EMA of snapshots) weights.
    pub swa: BTreeMap<String, Tensor>,
    /// The loss scaler of fp16 training (`None` otherwise).
    pub grad_scaler: Option<GradScaler>,
}

impl Optimizer {
    /// Fresh state for `net`: slow weights and SWA start as copies; a loss
    /// scaler when the net's precision needs one.
    pub fn new(net: &TrainNet) -> Optimizer {
        let copy = || -> BTreeMap<String, Tensor> {
            net.params
                .iter()
                .map(|p| (p.name.clone(), p.tensor.detach().copy()))
                .collect()
        };
        Optimizer {
            momentum: BTreeMap::new(),
            slow: copy(),
            swa: copy(),
            grad_scaler: net
                .precision
                .needs_grad_scaler()
                .then(|| GradScaler::new(net.vs.device())),
        }
    }

    /// Clips the global gradient norm to `cap` (torch's `clip_grad_norm_`)
    /// and returns the norm before clipping. One device sync in all: the
    /// per-parameter norms are stacked and reduced on the device.
    pub fn clip_gradients(net: &TrainNet, cap: f64) -> f64 {
        let _g = tch::no_grad_guard();
        let grads = net.grads();
        if grads.is_empty() {
            return 0.0;
        }
        let norms: Vec<Tensor> = grads
            .iter()
            .map(|g| g.square().sum(tch::Kind::Double))
            .collect();
        let norm = Tensor::stack(&norms, 0)
            .sum(tch::Kind::Double)
            .double_value(&[])
            .sqrt();
        let coef = (cap / (norm + 1e-6)).min(1.0);
        if coef < 1.0 {
            for g in &grads {
                let _ = g.shallow_clone().g_mul_scalar_(coef);
            }
        }
        norm
    }

    /// One SGD step (torch.optim.SGD with momentum 0.9, no dampening:
    /// `d = g + wd·p; buf = 0.9·buf + d; p -= lr·buf`), in place: the
    /// gradient becomes `d`, the buffer is updated where it lies.
    pub fn step(&mut self, net: &TrainNet, sched: &Schedule, samples: u64) {
        let _g = tch::no_grad_guard();
        for p in &net.params {
            let mut grad = p.tensor.grad();
            if !grad.defined() {
                continue;
            }
            let lr = sched.group_lr(p.group, samples);
            let wd = sched.weight_decay(p.group);
            let wd_t = Tensor::from(wd as f32).to_device(p.tensor.device());
            let _ = grad.addcmul_(&p.tensor, &wd_t);
            match self.momentum.get_mut(&p.name) {
                Some(buf) => {
                    let _ = buf.g_mul_scalar_(MOMENTUM).g_add_(&grad);
                }
                None => {
                    self.momentum.insert(p.name.clone(), grad.copy());
                }
            }
            if let Some(buf) = self.momentum.get(&p.name) {
                let neg_lr = Tensor::from(-lr as f32).to_device(p.tensor.device());
                let _ = p.tensor.shallow_clone().addcmul_(buf, &neg_lr);
            }
        }
    }

    /// Lookahead after a step: every `LOOKAHEAD_K` steps,
    /// `slow += alpha·(fast - slow); fast = slow`. Returns whether this step synced.
    pub fn lookahead(&mut self, net: &TrainNet, counter: &mut u64) -> bool {
        *counter += 1;
        if *counter < LOOKAHEAD_K {
            return false;
        }
        *counter = 0;
        self.sync_lookahead(net, true);
        true
    }

    /// Moves the slow weights toward the fast ones (when `interpolate`) and
    /// resets the fast weights to them (also used to discard leftover fast
    /// steps at the end of an epoch, as KataGo does).
    pub fn sync_lookahead(&mut self, net: &TrainNet, interpolate: bool) {
        let _g = tch::no_grad_guard();
        for p in &net.params {
            if let Some(slow) = self.slow.get(&p.name) {
                if interpolate {
                    let _ = slow.shallow_clone().lerp_(&p.tensor, LOOKAHEAD_ALPHA);
                }
                p.tensor.shallow_clone().copy_(slow);
            }
        }
    }

    /// SWA update: the first snapshot copies, later ones move the average by
    /// `1/swa_scale` toward the current weights (torch's AveragedModel with
    /// KataGo's `ema_avg`).
    pub fn swa_update(&mut self, net: &TrainNet, swa_scale: f64, initialized: bool) {
        let _g = tch::no_grad_guard();
        for p in &net.params {
            if let Some(avg) = self.swa.get(&p.name) {
                if initialized {
                    let _ = avg.shallow_clone().lerp_(&p.tensor, 1.0 / swa_scale);
                } else {
                    avg.shallow_clone().copy_(&p.tensor);
                }
            }
        }
    }
}
