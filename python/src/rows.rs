//! `engine_go.read_training_rows`: KataGo's training `.npz` files as NumPy
//! arrays, read and checked by the engine's reader (`engine::data`).

use std::path::PathBuf;

use engine::data::{read_npz, NpzErrorKind, TrainingRows};
use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{Element, IntoPyArray};
use pyo3::exceptions::PyFileNotFoundError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{runtime_error, value_error};

fn put<'py, T: Element>(
    d: &Bound<'py, PyDict>,
    name: &str,
    shape: &[usize],
    data: Vec<T>,
) -> PyResult<()> {
    let a = ArrayD::from_shape_vec(IxDyn(shape), data).map_err(runtime_error)?;
    d.set_item(name, a.into_pyarray(d.py()))
}

/// Reads a KataGo training-data ``.npz`` (self-play ``tdata`` or
/// shuffled) into a dict of NumPy arrays named as KataGo names them, with
/// KataGo's dtypes and shapes (``L`` = the data board length, 19 by
/// default; ``N`` rows):
///
/// - ``binaryInputNCHWPacked``: ``uint8 [N, 22, ceil(L*L/8)]`` (bit-packed
///   planes: ``numpy.unpackbits(a, axis=2)[:, :, :L*L]``);
/// - ``globalInputNC``: ``float32 [N, 19]``;
/// - ``policyTargetsNCMove``: ``int16 [N, 2, L*L+1]``;
/// - ``globalTargetsNC``: ``float32 [N, 80]``;
/// - ``scoreDistrN``: ``int8 [N, 2*L*L+120]``;
/// - ``valueTargetsNCHW``: ``int8 [N, 5, L, L]``;
/// - ``qValueTargetsNCMove``: ``int16 [N, 3, L*L+1]``;
/// - ``metadataInputNC``: ``float32 [N, 192]``, only in human-SL data.
///
/// Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for
/// one that is not KataGo's layout.
#[pyfunction]
pub fn read_training_rows<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let rows: TrainingRows = py
        .allow_threads(|| read_npz(&path))
        .map_err(|e| match &e.kind {
            NpzErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
                PyFileNotFoundError::new_err((2, io.to_string(), path.display().to_string()))
            }
            _ => value_error(e),
        })?;
    let n = rows.num_rows;
    let l = rows.pos_len;
    let packed = rows.packed_len();
    let policy = rows.policy_len();
    let score_bins = rows.score_distr_len();
    let d = PyDict::new(py);
    put(
        &d,
        "binaryInputNCHWPacked",
        &[n, engine::data::NUM_BINARY_CHANNELS, packed],
        rows.binary_input_nchw_packed,
    )?;
    put(
        &d,
        "globalInputNC",
        &[n, engine::data::NUM_GLOBAL_INPUTS],
        rows.global_input_nc,
    )?;
    put(
        &d,
        "policyTargetsNCMove",
        &[n, engine::data::NUM_POLICY_TARGETS, policy],
        rows.policy_targets_nc_move,
    )?;
    put(
        &d,
        "globalTargetsNC",
        &[n, engine::data::NUM_GLOBAL_TARGETS],
        rows.global_targets_nc,
    )?;
    put(&d, "scoreDistrN", &[n, score_bins], rows.score_distr_n)?;
    put(
        &d,
        "valueTargetsNCHW",
        &[n, engine::data::NUM_VALUE_SPATIAL_TARGETS, l, l],
        rows.value_targets_nchw,
    )?;
    put(
        &d,
        "qValueTargetsNCMove",
        &[n, engine::data::NUM_Q_VALUE_TARGETS, policy],
        rows.q_value_targets_nc_move,
    )?;
    if rows.has_metadata {
        put(
            &d,
            "metadataInputNC",
            &[n, engine::data::NUM_METADATA_INPUTS],
            rows.metadata_input_nc,
        )?;
    }
    Ok(d)
}
