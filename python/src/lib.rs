//! `engine_go`: the engine in-process from Python.
//!
//! One extension module (`engine_go._engine_go`, re-exported by the
//! `engine_go` package) over the light build of the `engine` crate (no
//! libtorch, the pure-Rust CPU backend):
//!
//! - [`position::Position`]: a board with KataGo's rules, history, scoring,
//!   SGF and the network's input features (`src/game`, `src/nn`);
//! - [`net::Net`]: batched network evaluation to NumPy (`src/setup`,
//!   `src/nn`'s batching evaluator);
//! - [`analyzer::Analyzer`]: KataGo's JSON analysis protocol, the same
//!   engine as `engine analysis`, behind an in-process pipe;
//! - [`rows::read_training_rows`]: KataGo's training `.npz` files
//!   (`src/data`).
//!
//! The GIL is released around every long computation; errors become
//! Python exceptions carrying the engine's own messages.

use pyo3::prelude::*;

mod analyzer;
mod errors;
mod net;
mod position;
mod rows;

/// The module `engine_go._engine_go`.
#[pymodule]
fn _engine_go(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<position::Position>()?;
    m.add_class::<net::Net>()?;
    m.add_class::<analyzer::Analyzer>()?;
    m.add_class::<analyzer::AnalysisStream>()?;
    m.add_function(wrap_pyfunction!(rows::read_training_rows, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
