//! Mixed-precision training, as KataGo's `train.py -use-fp16` / `-use-bf16`.
//!
//! KataGo runs its trunk under `torch.amp.autocast("cuda")` and its heads in
//! fp32. Under autocast the convolutions and matmuls run in the half type
//! (their inputs and weights cast to it), while elementwise operations keep
//! torch's type promotion: a norm's fp32 bias added to a half activation
//! gives fp32, and the residual stream, a sum of convolution outputs, stays
//! half. [`TrainNet`](super::TrainNet) does exactly those casts itself at
//! each trunk convolution and matmul ([`Precision::compute_kind`]), because
//! `tch`'s autocast switch covers CUDA only and fp16 alone; done by hand the
//! same arithmetic runs on any device and can be tested on the CPU.
//!
//! fp16 gradients can underflow, so `-use-fp16` scales the loss with a
//! [`GradScaler`] (torch's `GradScaler` and its defaults); bf16 has fp32's
//! range and needs none, as in KataGo.

use tch::{Device, Kind, Tensor};

/// The arithmetic of the trunk's convolutions and matmuls: the one
/// precision type of the crate (inference's), fp32 by default; fp16 trains
/// with loss scaling (`-use-fp16`), bf16 without (`-use-bf16`); heads and
/// losses stay fp32 either way.
pub use crate::nn::device::Precision;

/// Training's view of a precision (inherent methods beside the trainer
/// that uses them).
impl Precision {
    /// The kind the trunk's convolutions and matmuls run in; `None` for fp32
    /// (and int8, which is inference's only: training's flags and
    /// `trainPrecision` name fp32, fp16 and bf16).
    pub fn compute_kind(self) -> Option<Kind> {
        match self {
            Precision::F32 | Precision::Int8 => None,
            Precision::F16 => Some(Kind::Half),
            Precision::BF16 => Some(Kind::BFloat16),
        }
    }

    /// Whether the loss must be scaled (fp16's narrow exponent range).
    pub fn needs_grad_scaler(self) -> bool {
        self == Precision::F16
    }
}

/// torch's `GradScaler` with its defaults: the loss is multiplied by
/// `scale` before backward; the gradients are divided by it before
/// clipping; a step whose gradients hold an inf or NaN is skipped and the
/// scale halved; after `GROWTH_INTERVAL` good steps in a row it doubles.
#[derive(Debug)]
pub struct GradScaler {
    /// `[1]` f32: the current scale.
    pub scale: Tensor,
    /// `[1]` i32: good steps since the scale last changed.
    pub growth_tracker: Tensor,
}

impl GradScaler {
    /// torch's `init_scale`.
    pub const INIT_SCALE: f64 = 65536.0;
    /// torch's `growth_factor`.
    pub const GROWTH_FACTOR: f64 = 2.0;
    /// torch's `backoff_factor`.
    pub const BACKOFF_FACTOR: f64 = 0.5;
    /// torch's `growth_interval`.
    pub const GROWTH_INTERVAL: i64 = 2000;

    /// A fresh scaler on `device`.
    pub fn new(device: Device) -> GradScaler {
        GradScaler {
            scale: Tensor::from_slice(&[Self::INIT_SCALE as f32]).to_device(device),
            growth_tracker: Tensor::zeros([1], (Kind::Int, device)),
        }
    }

    /// The scale now.
    pub fn scale_value(&self) -> f64 {
        self.scale.double_value(&[0])
    }

    /// `loss · scale`, the tensor to call backward on.
    pub fn scale_loss(&self, loss: &Tensor) -> Tensor {
        loss * &self.scale.to_kind(loss.kind())
    }

    /// Divides the gradients by the scale in place, returns whether any of
    /// them holds an inf or NaN (one device sync; the caller then skips the
    /// step), and updates the scale for the next step: torch's `unscale_`
    /// and `update` together.
    pub fn unscale_and_update(&self, grads: &[Tensor]) -> bool {
        let _g = tch::no_grad_guard();
        let mut found_inf = Tensor::zeros([1], (Kind::Float, self.scale.device()));
        let inv_scale = self.scale.reciprocal();
        for g in grads {
            let mut g = g.shallow_clone();
            g.internal_amp_non_finite_check_and_unscale(&mut found_inf, &inv_scale);
        }
        let found = found_inf.double_value(&[0]) != 0.0;
        self.update(&found_inf);
        found
    }

    /// torch's `GradScaler.update`: halve on a bad step, double after
    /// `GROWTH_INTERVAL` good ones.
    fn update(&self, found_inf: &Tensor) {
        let _g = tch::no_grad_guard();
        let mut scale = self.scale.shallow_clone();
        let _ = scale.internal_amp_update_scale_(
            &self.growth_tracker,
            found_inf,
            Self::GROWTH_FACTOR,
            Self::BACKOFF_FACTOR,
            Self::GROWTH_INTERVAL,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaler_unscales_skips_and_backs_off_as_torch_does() {
        let scaler = GradScaler::new(Device::Cpu);
        assert_eq!(scaler.scale_value(), 65536.0);
        let good = [Tensor::from_slice(&[65536.0f32, -131072.0])];
        assert!(!scaler.unscale_and_update(&good));
        assert_eq!(Vec::<f32>::try_from(&good[0]).unwrap(), [1.0, -2.0]);
        assert_eq!(
            scaler.scale_value(),
            65536.0,
            "grows only after 2000 good steps"
        );
        assert_eq!(scaler.growth_tracker.int64_value(&[0]), 1);

        let bad = [
            Tensor::from_slice(&[1.0f32]),
            Tensor::from_slice(&[f32::INFINITY]),
        ];
        assert!(scaler.unscale_and_update(&bad));
        assert_eq!(scaler.scale_value(), 32768.0);
        assert_eq!(scaler.growth_tracker.int64_value(&[0]), 0);
        let nan = [Tensor::from_slice(&[f32::NAN])];
        assert!(scaler.unscale_and_update(&nan));
        assert_eq!(scaler.scale_value(), 16384.0);

        let _ = scaler
            .growth_tracker
            .shallow_clone()
            .fill_(GradScaler::GROWTH_INTERVAL - 1);
        assert!(!scaler.unscale_and_update(&[Tensor::from_slice(&[3.0f32])]));
        assert_eq!(
            scaler.scale_value(),
            32768.0,
            "doubled after 2000 good steps"
        );
    }
}
