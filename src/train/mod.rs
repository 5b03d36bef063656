//! `engine train` and `engine export`: KataGo's trainable convnet on libtorch
//! (separate from the folded inference net in [`crate::nn`]), every loss term
//! of KataGo's trainer, its optimiser, SWA, atomic checkpoints, and export
//! to KataGo's model format.
//!
//! Front door: [`TrainArgs`]/[`run_train`], [`ExportArgs`]/[`run_export`],
//! and [`Trainer`] (a session over a store, for `engine learn`);
//! the pieces ([`TrainNet`], [`compute_losses`], [`Batch`]) for tests and tools.

pub mod batch;
pub mod checkpoint;
pub mod config;
pub mod export;
pub mod import;
mod keys;
pub mod loss;
pub mod model;
pub mod optim;
pub(crate) mod plot;
pub mod precision;
mod run;
mod trainer;

use std::path::{Path, PathBuf};

pub use batch::{Augment, Batch};
pub use checkpoint::{Checkpoint, TrainState};
pub use config::{ModelConfig, NormKind};
pub use loss::{compute_losses, LossScales, LossState, Losses};
pub use model::{NetOutput, TrainNet};
pub use optim::{Optimizer, Schedule};
pub use precision::{GradScaler, Precision};
pub use run::{random_net_bin_gz, run_export, run_train, ExportArgs, TrainArgs};
pub use trainer::{
    train_step, EpochReport, StepReport, TrainData, TrainOptions, Trainer, CHECKPOINT_FILE,
    METRICS_FILE,
};

/// Why training or export failed.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A bad model config or flag.
    #[error("train config: {0}")]
    Config(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A checkpoint could not be read, written or applied.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// Training data could not be found or read.
    #[error("training data: {0}")]
    Data(String),
    /// The model could not be exported.
    #[error("export: {0}")]
    Export(String),
    /// libtorch failed.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    /// The run store failed.
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
    /// The shuffled window is not usable (a bad `train.json`).
    #[error("training data: {0}")]
    Window(#[from] crate::store::layout::WindowError),
    /// A file of the shuffled window could not be read.
    #[error("training data: {0}")]
    WindowRead(#[from] crate::data::WindowReadError),
}

impl TrainError {
    fn io(path: &Path, source: std::io::Error) -> TrainError {
        TrainError::Io {
            path: path.to_owned(),
            source,
        }
    }
}

#[cfg(test)]
mod finetune_tests;
#[cfg(test)]
mod keys_tests;
#[cfg(test)]
mod meta_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod transformer_tests;
