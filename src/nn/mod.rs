//! KataGo networks on libtorch: model files, input features, the batching
//! evaluator and its cache.

mod features;
mod output;

pub use features::{
    nn_input_hash, FeatureEncoder, NnInputParams, NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7,
};
pub use output::NnOutput;
