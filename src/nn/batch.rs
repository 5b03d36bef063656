//! The small interface between the evaluator and a network: fill an
//! [`InputBatch`], call [`BatchModel::forward`], read the batch's
//! [`NetOutputs`] (the one output type of both backends; the evaluator turns
//! each row into the search's [`super::NnOutput`]).

#[cfg(feature = "torch")]
use super::network::Model;
use super::network::{CpuModel, NetInput};
use super::outputs::NetOutputs;

/// A network failure, passed on to every caller waiting on the batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub String);

impl ModelError {
    /// A model error with this message.
    pub fn new(msg: impl Into<String>) -> ModelError {
        ModelError(msg.into())
    }
}

/// A network that evaluates a batch of encoded positions (implemented by
/// the `nn` Model, and by stubs in tests).
///
/// The evaluator gives each model to one server thread, which alone calls
/// it; hence `Send` but not `Sync`.
pub trait BatchModel: Send {
    /// Evaluates every row of `batch`, returning exactly `batch.rows` rows
    /// in order, on the batch's `y_len` x `x_len` tensor.
    fn forward(&mut self, batch: &InputBatch) -> Result<NetOutputs, ModelError>;
    /// Spatial input planes per row (`C`; 22 for KataGo's V7 features).
    fn num_spatial_features(&self) -> usize;
    /// Global input features per row (`G`; 19 for V7).
    fn num_global_features(&self) -> usize;
    /// SGF metadata inputs per row (`M`; 192 for a human-style net, 0 for
    /// the others).
    fn num_meta_features(&self) -> usize {
        0
    }
    /// KataGo's model version of the net, which decides how its raw
    /// outputs are finished (version 3 nets give a score value that only
    /// the evaluator can turn into points). Stubs that stand in for a
    /// current net keep the default, the newest version.
    fn model_version(&self) -> i32 {
        super::desc::MAX_MODEL_VERSION
    }
}

/// Encoded rows sharing one tensor shape, ready for a forward pass.
///
/// The buffers are reused from batch to batch by the server thread, so
/// they may be longer than the current batch needs: read only the first
/// `rows` rows (the `*_row` accessors do).
#[derive(Debug, Clone, Default)]
pub struct InputBatch {
    /// Rows in this batch.
    pub rows: usize,
    /// Spatial planes per row (`C`).
    pub spatial_channels: usize,
    /// Global features per row (`G`).
    pub global_channels: usize,
    /// Metadata inputs per row (`M`; 0 for nets that read none).
    pub meta_channels: usize,
    /// Tensor width (`w`), the same for every row.
    pub x_len: usize,
    /// Tensor height (`h`), the same for every row.
    pub y_len: usize,
    /// `[rows, C, h, w]`, row-major. Points outside a row's board are 0.
    pub spatial: Vec<f32>,
    /// `[rows, G]`.
    pub global: Vec<f32>,
    /// `[rows, M]`.
    pub meta: Vec<f32>,
    /// `[rows, 1, h, w]`: 1 on the board's points, 0 on padding.
    pub mask: Vec<f32>,
    /// Whether any row wants ownership; a model may skip that head if not.
    pub include_ownership: bool,
}

impl InputBatch {
    /// Number of `f32` in one row's spatial planes.
    pub fn spatial_row_len(&self) -> usize {
        self.spatial_channels * self.y_len * self.x_len
    }

    /// The `rows * C * h * w` spatial values of this batch.
    pub fn spatial_rows(&self) -> &[f32] {
        &self.spatial[..self.rows * self.spatial_row_len()]
    }

    /// The `rows * G` global values of this batch.
    pub fn global_rows(&self) -> &[f32] {
        &self.global[..self.rows * self.global_channels]
    }

    /// The `rows * M` metadata values of this batch, `None` for a net that
    /// reads none.
    pub fn meta_rows(&self) -> Option<&[f32]> {
        (self.meta_channels > 0).then(|| &self.meta[..self.rows * self.meta_channels])
    }

    /// The `rows * h * w` mask values of this batch.
    pub fn mask_rows(&self) -> &[f32] {
        &self.mask[..self.rows * self.y_len * self.x_len]
    }

    /// Sets the shape for `rows` rows of `(c, g, m)` spatial, global and
    /// metadata inputs, and zeroes every buffer.
    pub(crate) fn reset(
        &mut self,
        rows: usize,
        (c, g, m): (usize, usize, usize),
        x_len: usize,
        y_len: usize,
    ) {
        self.rows = rows;
        self.spatial_channels = c;
        self.global_channels = g;
        self.meta_channels = m;
        self.x_len = x_len;
        self.y_len = y_len;
        let area = x_len * y_len;
        zero_fill(&mut self.spatial, rows * c * area);
        zero_fill(&mut self.global, rows * g);
        zero_fill(&mut self.meta, rows * m);
        zero_fill(&mut self.mask, rows * area);
        self.include_ownership = false;
    }

    /// The network's view of this batch: the first `rows` rows, and the
    /// mask only when some row does not fill the tensor (a net then skips
    /// the masking work).
    pub fn net_input(&self) -> NetInput<'_> {
        let mask = self.mask_rows();
        NetInput {
            batch_size: self.rows,
            height: self.y_len,
            width: self.x_len,
            spatial: self.spatial_rows(),
            global: self.global_rows(),
            meta: self.meta_rows(),
            mask: mask.contains(&0.0).then_some(mask),
        }
    }
}

fn zero_fill(buf: &mut Vec<f32>, len: usize) {
    buf.clear();
    buf.resize(len, 0.0);
}

/// Both backends behind the evaluator's interface: each takes the
/// evaluator's batch as it is ([`InputBatch::net_input`]) and gives back its
/// [`NetOutputs`] unchanged.
macro_rules! batch_model {
    ($model:ty) => {
        impl BatchModel for $model {
            fn forward(&mut self, batch: &InputBatch) -> Result<NetOutputs, ModelError> {
                <$model>::forward(self, &batch.net_input())
                    .map_err(|e| ModelError::new(e.to_string()))
            }

            fn num_spatial_features(&self) -> usize {
                <$model>::num_spatial_features(self)
            }

            fn num_global_features(&self) -> usize {
                <$model>::num_global_features(self)
            }

            fn num_meta_features(&self) -> usize {
                <$model>::num_meta_features(self)
            }

            fn model_version(&self) -> i32 {
                self.version()
            }
        }
    };
}

batch_model!(CpuModel);
#[cfg(feature = "torch")]
batch_model!(Model);
