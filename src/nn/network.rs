//! A KataGo network built from a [`ModelFile`], on two backends: the
//! pure-Rust [`CpuModel`] (always built) and libtorch's [`Model`] (CPU or
//! CUDA; feature `torch`, `network/libtorch.rs`).
//!
//! The forward pass follows KataGo's backends layer by layer (pre-activation
//! residual blocks, masked global pooling, the policy and value heads). Batch
//! norms that directly follow a convolution are folded into that
//! convolution's weights and bias when the model is built, so the hot path is
//! convolutions plus a few element-wise ops. On the CPU the 3x3 convolutions
//! run by Winograd's F(4x4, 3x3) (see `network/winograd.rs`), which also
//! applies their bias, ReLU, mask or residual sum. Boards smaller than the batch
//! tensor are handled with a mask, as KataGo does: every activation that
//! feeds a convolution or a pooling is zeroed outside the board.
//!
//! The layers and their order are written once, in `network/topology.rs`;
//! the libtorch net and the pure-Rust [`CpuModel`] each instantiate that topology
//! with their own weight storage and layer operations.

use super::desc::*;
use super::device::Precision;
use super::model_file::{ModelFile, ModelFileError};
use super::outputs::{NetOutputs, ScoreRaw};

mod builder;
mod cpu;
#[cfg(feature = "torch")]
mod libtorch;
mod omp;
mod topology;
mod winograd;

pub use cpu::{conv3x3_speeds, dot_peaks, int8_share, ConvSpeed, CpuModel};
#[cfg(feature = "torch")]
pub use libtorch::Model;

/// Largest board side the model accepts (KataGo's compile-time maximum).
pub const MAX_BOARD_LEN: usize = 37;

/// Why a model could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The model file could not be read.
    #[error(transparent)]
    File(#[from] ModelFileError),
    /// The file is valid but uses a feature this engine does not run.
    #[error("model {name}: {what} is not supported by this engine")]
    Unsupported {
        /// The model's name.
        name: String,
        /// The unsupported feature.
        what: String,
    },
    /// The caller's batch does not match its declared sizes.
    #[error("bad network input: {0}")]
    BadInput(String),
    /// libtorch reported an error.
    #[cfg(feature = "torch")]
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
}

/// One batch of network inputs as flat `f32` buffers, row-major (NCHW).
#[derive(Debug, Clone, Copy)]
pub struct NetInput<'a> {
    /// Number of rows.
    pub batch_size: usize,
    /// Height of the (possibly padded) board tensor.
    pub height: usize,
    /// Width of the (possibly padded) board tensor.
    pub width: usize,
    /// `[batch, 22, height, width]` spatial features.
    pub spatial: &'a [f32],
    /// `[batch, 19]` global features.
    pub global: &'a [f32],
    /// `[batch, 192]` SGF metadata inputs (see [`crate::nn::SgfMetadata`]):
    /// given exactly when the net has a metadata encoder (a human-style
    /// net).
    pub meta: Option<&'a [f32]>,
    /// `[batch, 1, height, width]`: 1 on the board, 0 on padding. `None`
    /// means every row fills the whole tensor (no masking work is done).
    pub mask: Option<&'a [f32]>,
}

impl<'a> NetInput<'a> {
    /// `batch_size` rows in a `side` x `side` tensor.
    pub fn square(
        batch_size: usize,
        side: usize,
        spatial: &'a [f32],
        global: &'a [f32],
        mask: Option<&'a [f32]>,
    ) -> Self {
        NetInput {
            batch_size,
            height: side,
            width: side,
            spatial,
            global,
            meta: None,
            mask,
        }
    }
}

/// Inputs per row a net reads: spatial planes, global values and metadata
/// values (0 without a metadata encoder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct InputSizes {
    pub(super) spatial: usize,
    pub(super) global: usize,
    pub(super) meta: usize,
}

impl InputSizes {
    /// The sizes `file`'s net reads.
    pub(super) fn of(file: &ModelFile) -> InputSizes {
        InputSizes {
            spatial: file.num_input_channels,
            global: file.num_input_global_channels,
            meta: file
                .trunk
                .metadata_encoder
                .as_ref()
                .map_or(0, |e| e.num_input_channels),
        }
    }
}

/// How a [`Model`] runs, beyond its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModelOptions {
    /// The arithmetic. Half types are honoured on any device (the CPU
    /// runs them through libtorch, slowly: for tests).
    pub precision: Precision,
    /// Channels-last (NHWC) activations; `None`: on the CPU yes, on CUDA
    /// when the precision is a half type (KataGo's `cudaUseNHWC = auto`).
    pub channels_last: Option<bool>,
}

/// Checks a batch's sizes and mask (shared by both backends) for a net of
/// `sizes` inputs per row.
fn validate_input(batch: &NetInput, sizes: InputSizes) -> Result<(), NetError> {
    let InputSizes {
        spatial,
        global,
        meta,
    } = sizes;
    let (n, h, w) = (batch.batch_size, batch.height, batch.width);
    if n == 0 {
        return Err(NetError::BadInput("empty batch".into()));
    }
    if h == 0 || w == 0 || h > MAX_BOARD_LEN || w > MAX_BOARD_LEN {
        return Err(NetError::BadInput(format!(
            "board tensor {w}x{h} outside 1..={MAX_BOARD_LEN}"
        )));
    }
    let check = |what: &str, got: usize, want: usize| {
        if got == want {
            Ok(())
        } else {
            Err(NetError::BadInput(format!(
                "{what} has {got} values, expected {want} for a batch of {n} on {w}x{h}"
            )))
        }
    };
    check("spatial input", batch.spatial.len(), n * spatial * h * w)?;
    check("global input", batch.global.len(), n * global)?;
    match batch.meta {
        Some(m) if meta > 0 => check("metadata input", m.len(), n * meta)?,
        Some(_) => {
            return Err(NetError::BadInput(
                "metadata inputs given to a net without a metadata encoder".into(),
            ))
        }
        None if meta > 0 => {
            return Err(NetError::BadInput(
                "this human-style net needs metadata inputs (a humanSLProfile)".into(),
            ))
        }
        None => {}
    }
    if let Some(m) = batch.mask {
        check("mask", m.len(), n * h * w)?;
        // A row with an empty board would divide by zero in the pooling.
        for (row, plane) in m.chunks_exact(h * w).enumerate() {
            if !plane.iter().any(|&v| v != 0.0) {
                return Err(NetError::BadInput(format!("mask of row {row} is all zero")));
            }
        }
    }
    Ok(())
}

/// Raw head outputs copied to the host, as flat `f32` rows (the CPU
/// backend writes its outputs in this form too).
struct HostOutputs {
    /// `[N, P, H*W]`.
    policy: Vec<f32>,
    /// `[N, P]`.
    pass: Vec<f32>,
    /// `[N, 3]`.
    value: Vec<f32>,
    /// `[N, 4 or 6]`.
    score: Vec<f32>,
    /// `[N, H*W]`, tanh applied.
    ownership: Vec<f32>,
}

impl HostOutputs {
    /// The outputs of `n` rows on an `h x w` tensor of a net with
    /// `policy_channels` policy channels (shared by both backends).
    fn into_outputs(
        self,
        (n, h, w): (usize, usize, usize),
        policy_channels: usize,
        version: i32,
        post_process: &PostProcessParams,
    ) -> NetOutputs {
        let hw = h * w;
        let p = policy_channels;
        let policy_all = &self.policy;
        let pass_all = &self.pass;
        let take_channel = |c: usize| {
            let mut out = Vec::with_capacity(n * (hw + 1));
            for row in 0..n {
                let base = (row * p + c) * hw;
                out.extend_from_slice(&policy_all[base..base + hw]);
                out.push(pass_all[row * p + c]);
            }
            out
        };
        let policy = take_channel(0);
        let policy_optimistic = (p >= 2).then(|| take_channel(1));
        let score_raw = self.score;
        let score_channels = score_raw.len() / n;
        let mut outs = NetOutputs::with_capacity(
            n,
            h,
            w,
            policy,
            policy_optimistic,
            self.value,
            self.ownership,
        );
        for row in 0..n {
            let s = &score_raw[row * score_channels..(row + 1) * score_channels];
            outs.push_scores(ScoreRaw::from_channels(s).post_process(version, post_process));
        }
        outs
    }
}
