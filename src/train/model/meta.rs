//! KataGo's SGF metadata encoder (`MetadataEncoder` in `model_pytorch.py`,
//! the `-meta` model kinds): the 192 metadata inputs of a row (rank, era,
//! time control, source, ...) through two activated linear layers to one
//! value per trunk channel, added to the trunk's input everywhere on the
//! board.

use tch::{Device, Kind, Tensor};

use super::init::{act, init_std, Builder, ParamGroup};
use super::masks::cast;
use crate::data::NUM_METADATA_INPUTS;
use crate::nn::desc::Activation;

/// The board-area feature, which KataGo's encoder leaves out (its
/// `feature_mask` is 0 there).
pub const MASKED_FEATURE: i64 = 86;

/// KataGo's `out_scale`: the encoder's output is halved.
pub const OUT_SCALE: f64 = 0.5;

/// The encoder's weights (`metadata_encoder.*`).
pub(super) struct MetaEncoder {
    /// `[192]`: 1 except at [`MASKED_FEATURE`].
    feature_mask: Tensor,
    linear1: Tensor,
    bias1: Tensor,
    linear2: Tensor,
    bias2: Tensor,
    linear_out: Tensor,
    activation: Activation,
}

impl MetaEncoder {
    /// Registers the encoder's parameters under KataGo's names, initialised
    /// as its `MetadataEncoder.initialize()` (weights at scale 0.8, biases
    /// at 0.2 with their weight's fan-in), in its `add_reg_dict` groups.
    pub(super) fn new(b: &mut Builder, internal: i64, trunk: i64, device: Device) -> MetaEncoder {
        let gain = super::init::gain(b.activation);
        let c_in = NUM_METADATA_INPUTS as i64;
        let linear1 = b.param(
            "metadata_encoder.linear1.weight",
            &[internal, c_in],
            init_std(gain, 0.8, c_in),
            ParamGroup::Input,
        );
        let bias1 = b.param(
            "metadata_encoder.linear1.bias",
            &[internal],
            init_std(gain, 0.2, c_in),
            ParamGroup::InputNoReg,
        );
        let linear2 = b.param(
            "metadata_encoder.linear2.weight",
            &[internal, internal],
            init_std(gain, 0.8, internal),
            ParamGroup::Input,
        );
        let bias2 = b.param(
            "metadata_encoder.linear2.bias",
            &[internal],
            init_std(gain, 0.2, internal),
            ParamGroup::InputNoReg,
        );
        let linear_out = b.param(
            "metadata_encoder.linear_output_to_trunk.weight",
            &[trunk, internal],
            init_std(gain, 0.8, internal),
            ParamGroup::Input,
        );
        let mask: Vec<f32> = (0..c_in)
            .map(|i| if i == MASKED_FEATURE { 0.0 } else { 1.0 })
            .collect();
        MetaEncoder {
            feature_mask: Tensor::from_slice(&mask).to_device(device),
            linear1,
            bias1,
            linear2,
            bias2,
            linear_out,
            activation: b.activation,
        }
    }

    /// `[N, 192]` metadata inputs to `[N, trunk, 1, 1]`, in the trunk's
    /// compute kind (`None`: fp32).
    pub(super) fn forward(&self, meta: &Tensor, kind: Option<Kind>) -> Tensor {
        let linear = |x: &Tensor, w: &Tensor| cast(x, kind).matmul(&cast(w, kind).tr());
        let x = meta.to_kind(Kind::Float) * self.feature_mask.unsqueeze(0);
        let x = act(
            &(linear(&x, &self.linear1) + cast(&self.bias1, kind)),
            self.activation,
        );
        let x = act(
            &(linear(&x, &self.linear2) + cast(&self.bias2, kind)),
            self.activation,
        );
        (linear(&x, &self.linear_out) * OUT_SCALE)
            .unsqueeze(-1)
            .unsqueeze(-1)
    }
}
