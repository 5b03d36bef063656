//! Reading `.npz` training files into [`TrainingRows`] (through `crate::data`).

use std::path::Path;

use super::TrainError;
use crate::data::TrainingRows;

/// Reads one KataGo `.npz` file.
pub fn read_npz(path: &Path) -> Result<TrainingRows, TrainError> {
    crate::data::read_npz(path).map_err(|e| TrainError::Data(e.to_string()))
}
