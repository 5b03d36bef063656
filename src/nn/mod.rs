//! KataGo networks on libtorch: model files, input features, the batching
//! evaluator and its cache.

mod batch;
mod cache;
mod evaluator;
mod output;
mod postprocess;
mod request;
mod symmetry;

pub use batch::{BatchModel, InputBatch, ModelError, RawRow};
pub use cache::NnCache;
pub use evaluator::{EvalStats, Evaluator, EvaluatorConfig};
pub use output::NnOutput;
pub use request::{EncodedInput, EvalError, EvalParams, EvalRequest, SymmetryChoice};
pub use symmetry::Symmetry;
