//! Reading `.npz` training files into [`TrainingRows`].

use std::path::Path;

use super::TrainError;
use crate::data::TrainingRows;

/// Reads one KataGo `.npz` file.
pub fn read_npz(path: &Path) -> Result<TrainingRows, TrainError> {
    Err(TrainError::Data(format!(
        "{}: the npz reader is not merged yet",
        path.display()
    )))
}
