//! The engine's errors as Python exceptions, with the engine's messages:
//! `FileNotFoundError` for a missing file, `ValueError` for bad input (a
//! move, a query, a model or config), `RuntimeError` for a failure of the
//! engine itself.

use std::path::Path;

use engine::analysis::StartError;
use engine::setup::SetupError;
use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::PyErr;

/// A `ValueError` with this message.
pub fn value_error(msg: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(msg.to_string())
}

/// A `RuntimeError` with this message.
pub fn runtime_error(msg: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(msg.to_string())
}

/// `FileNotFoundError` (errno-style, with the path) when `path` is a local
/// file that does not exist; checked before loading so that the exception
/// type says what is wrong.
pub fn check_exists(path: &Path, what: &str) -> Result<(), PyErr> {
    if engine::setup::is_missing_local_file(path) {
        return Err(PyFileNotFoundError::new_err((
            2,
            format!("{what} not found"),
            path.display().to_string(),
        )));
    }
    Ok(())
}

/// A network that could not be loaded.
pub fn setup_error(e: SetupError) -> PyErr {
    match e {
        SetupError::ModelNotFound(p) => PyFileNotFoundError::new_err((
            2,
            "model file not found".to_string(),
            p.display().to_string(),
        )),
        other => value_error(other),
    }
}

/// An analysis engine that could not start.
pub fn start_error(e: StartError) -> PyErr {
    match e {
        StartError::Setup(s) => setup_error(s),
        StartError::Io(io) => runtime_error(io),
        other => value_error(other),
    }
}
