//! What the convolution blocks (`blocks`) and the transformer blocks
//! (`transformer`) both use, below both of them so that neither imports the
//! other's file for it: the board masks of a batch and the cast to the
//! trunk's compute kind.

use tch::{Kind, Tensor};

/// `t` in the trunk's compute kind (autocast's rule for the inputs and
/// weights of convolutions and matmuls, see [`crate::train::precision`]);
/// `t` itself in fp32. The cast is differentiable: an fp32 weight gets an
/// fp32 gradient.
pub(super) fn cast(t: &Tensor, kind: Option<Kind>) -> Tensor {
    match kind {
        Some(k) => t.to_kind(k),
        None => t.shallow_clone(),
    }
}

/// Masks derived from the input's first plane (on-board points).
pub struct Masks {
    /// `N1HW`.
    pub mask: Tensor,
    /// `N111`.
    pub mask_sum_hw: Tensor,
    /// Every board of the batch fills the whole `HxW` tensor, so masking
    /// is the identity and is skipped: one pass less over every norm's
    /// output, forward and backward (the usual case: data written at its
    /// own board size, as 9x9 self-play at `dataBoardLen` 9 is).
    pub full: bool,
}

impl Masks {
    /// From the spatial input batch `NCHW`.
    pub fn from_input(input_spatial: &Tensor) -> Masks {
        let mask = input_spatial.narrow(1, 0, 1).contiguous();
        let mask_sum_hw = mask.sum_dim_intlist([2i64, 3].as_slice(), true, Kind::Float);
        let size = input_spatial.size();
        let points = (size[2] * size[3]) as f64;
        let full = mask_sum_hw.numel() > 0 && mask_sum_hw.min().double_value(&[]) >= points;
        Masks {
            mask,
            mask_sum_hw,
            full,
        }
    }

    /// `x * mask`, or `x` itself for a batch of full boards.
    pub fn apply(&self, x: Tensor) -> Tensor {
        if self.full {
            x
        } else {
            x * &self.mask
        }
    }
}
