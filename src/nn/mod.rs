//! KataGo networks on libtorch: model files, input features, the batching
//! evaluator and its cache.

mod output;

pub use output::NnOutput;
