//! KataGo networks: model files, input features, the batching evaluator and
//! its cache.
//!
//! Model side (this part): [`ModelFile`] reads and writes KataGo's `.bin.gz`
//! files; [`CpuModel`] (pure Rust) and `Model` (libtorch, CPU or CUDA;
//! feature `torch`) run the network and return [`NetOutputs`] from the
//! side to move's perspective.

mod batch;
mod cache;
pub mod cpu_info;
pub mod desc;
pub mod device;
mod evaluator;
mod features;
pub mod metadata;
pub mod model_file;
mod network;
mod output;
mod outputs;
mod postprocess;
mod request;
mod symmetry;
// Built outside tests too, for `old_version_fixture` alone: the
// integration tests build the old-version fixture nets rather than commit
// them; the rest of the module serves the unit tests.
#[cfg_attr(not(test), allow(dead_code))]
mod testnet;

pub use batch::{BatchModel, InputBatch, ModelError};
pub use cache::{slot_bytes as cache_slot_bytes, NnCache};
pub use desc::{supported_rules, InputVersion};
pub use evaluator::{EvalStats, Evaluator, EvaluatorConfig, BATCH_SIZE_BUCKETS};
pub use features::{
    nn_input_hash, FeatureEncoder, NnInputParams, NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7,
};
pub use metadata::{SgfMetadata, UnknownProfile, METADATA_INPUT_NUM_CHANNELS};
pub use model_file::{ModelFile, ModelFileError, MAX_UNPACKED_MODEL_BYTES};
// Both the evaluator's batch and the network's input view are called
// `InputBatch` in their branches; the evaluator's keeps the name here.
#[cfg(feature = "torch")]
pub use network::Model;
pub use network::{
    conv3x3_speeds, dot_peaks, int8_share, ConvSpeed, CpuModel, ModelOptions, NetError, NetInput,
    MAX_BOARD_LEN,
};
pub use output::NnOutput;
pub use outputs::{NetOutputs, NetRow, ScoreOutputs, Values};
pub use request::{EncodedInput, EvalError, EvalParams, EvalRequest, SymmetryChoice};
pub use symmetry::{invariant_symmetries, Symmetry};
pub use testnet::old_version_fixture;
