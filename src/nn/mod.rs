//! KataGo networks on libtorch: model files, input features, the batching
//! evaluator and its cache.
//!
//! Model side (this part): [`ModelFile`] reads and writes KataGo's `.bin.gz`
//! files, [`Model`] runs the network with libtorch and returns
//! [`NetOutputs`] from the side to move's perspective.

pub mod desc;
mod features;
pub mod model_file;
mod network;
mod output;
mod outputs;
#[cfg(test)]
mod testnet;

pub use features::{
    nn_input_hash, FeatureEncoder, NnInputParams, NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7,
};
pub use model_file::{ModelFile, ModelFileError};
pub use network::{InputBatch, Model, NetError, MAX_BOARD_LEN};
pub use output::NnOutput;
pub use outputs::{NetOutputs, NetRow, ScoreOutputs, Values};
