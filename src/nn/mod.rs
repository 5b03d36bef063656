//! KataGo networks on libtorch: model files, input features, the batching
//! evaluator and its cache.

pub mod desc;
pub mod model_file;
mod output;

pub use model_file::{ModelFile, ModelFileError};
pub use output::NnOutput;
