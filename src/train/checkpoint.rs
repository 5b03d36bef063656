//! Checkpoints: one safetensors file holding the model, the SWA model, the
//! optimiser's momentum and lookahead buffers and the train state (as JSON
//! bytes in a u8 tensor), written atomically so that a `kill -9` leaves
//! either the old or the new checkpoint, never a torn one.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use tch::{Device, Kind, Tensor};

use super::loss::LossState;
use super::TrainError;

/// Scalars of the training run that a resume needs.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TrainState {
    /// Model config name.
    pub model_kind: String,
    /// Samples trained on so far (KataGo's `global_step_samples`).
    pub global_step_samples: u64,
    /// Batches trained so far.
    pub global_step_batches: u64,
    /// Rows in the data window the last data load saw (`total_num_data_rows`).
    pub total_num_data_rows: u64,
    /// Samples since the last SWA snapshot.
    pub swa_sample_accum: u64,
    /// Whether the SWA model holds a snapshot yet.
    pub swa_initialized: bool,
    /// Epochs finished.
    pub epochs_done: u64,
    /// Steps since the last lookahead sync.
    pub lookahead_counter: u64,
    /// Position in the training data (row offset), so that a resumed run goes on.
    pub data_cursor: u64,
    /// Seki moving average.
    pub loss_state: LossState,
}

const STATE_KEY: &str = "__train_state_json__";

/// Everything a checkpoint holds.
pub struct Checkpoint {
    /// Train state.
    pub state: TrainState,
    /// Named tensors: `model.<name>`, `swa.<name>`, `momentum.<name>`, `slow.<name>`.
    pub tensors: BTreeMap<String, Tensor>,
}

/// fsyncs `tmp`, renames it to `path` and fsyncs the directory.
pub fn fsync_and_rename(tmp: &Path, path: &Path) -> Result<(), TrainError> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .open(tmp)
        .map_err(|e| TrainError::io(tmp, e))?;
    f.sync_all().map_err(|e| TrainError::io(tmp, e))?;
    std::fs::rename(tmp, path).map_err(|e| TrainError::io(path, e))?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// Writes bytes atomically (temporary name beside it, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), TrainError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        path.file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default()
    ));
    let mut f = std::fs::File::create(&tmp).map_err(|e| TrainError::io(&tmp, e))?;
    f.write_all(bytes).map_err(|e| TrainError::io(&tmp, e))?;
    drop(f);
    fsync_and_rename(&tmp, path)
}

impl Checkpoint {
    /// Saves atomically to `path`.
    pub fn save(&self, path: &Path) -> Result<(), TrainError> {
        let json =
            serde_json::to_vec(&self.state).map_err(|e| TrainError::Checkpoint(e.to_string()))?;
        let state_t = Tensor::from_slice(&json).to_kind(Kind::Uint8);
        let mut list: Vec<(String, Tensor)> = self
            .tensors
            .iter()
            .map(|(k, v)| (k.clone(), v.detach().to_device(Device::Cpu).contiguous()))
            .collect();
        list.push((STATE_KEY.to_string(), state_t));
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
        let tmp = dir.join(format!(
            ".tmp-{}-checkpoint.safetensors",
            std::process::id()
        ));
        Tensor::write_safetensors(&list, &tmp)
            .map_err(|e| TrainError::Checkpoint(format!("{}: {e}", tmp.display())))?;
        fsync_and_rename(&tmp, path)
    }

    /// Loads a checkpoint written by [`Checkpoint::save`].
    pub fn load(path: &Path) -> Result<Checkpoint, TrainError> {
        let list = Tensor::read_safetensors(path)
            .map_err(|e| TrainError::Checkpoint(format!("{}: {e}", path.display())))?;
        let mut tensors = BTreeMap::new();
        let mut state = None;
        for (k, v) in list {
            if k == STATE_KEY {
                let bytes =
                    Vec::<u8>::try_from(&v).map_err(|e| TrainError::Checkpoint(e.to_string()))?;
                state = Some(serde_json::from_slice::<TrainState>(&bytes).map_err(|e| {
                    TrainError::Checkpoint(format!("{}: train state: {e}", path.display()))
                })?);
            } else {
                tensors.insert(k, v);
            }
        }
        let state = state
            .ok_or_else(|| TrainError::Checkpoint(format!("{}: no train state", path.display())))?;
        Ok(Checkpoint { state, tensors })
    }

    /// The tensors under `prefix.` with the prefix removed.
    pub fn group(&self, prefix: &str) -> BTreeMap<String, Tensor> {
        let p = format!("{prefix}.");
        self.tensors
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(&p)
                    .map(|s| (s.to_string(), v.shallow_clone()))
            })
            .collect()
    }
}
