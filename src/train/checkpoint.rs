//! Checkpoints: one safetensors file holding the model, the SWA model, the
//! optimiser's momentum and lookahead buffers and the train state (as JSON
//! bytes in a u8 tensor), written whole through the run store so that a
//! `kill -9` leaves either the old or the new checkpoint, never a torn one.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use safetensors::tensor::{Dtype, SafeTensors, View};
use tch::{Device, Kind, Tensor};

use super::loss::LossState;
use super::TrainError;
use crate::store::Store;

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

/// A CPU tensor as the safetensors writer sees it.
struct TensorBytes<'a> {
    tensor: &'a Tensor,
    dtype: Dtype,
    shape: Vec<usize>,
}

impl View for TensorBytes<'_> {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        let mut data = vec![0; self.data_len()];
        // The tensor is contiguous and on the CPU (see `to_bytes`), so
        // the copy cannot fail.
        let _ = self.tensor.f_copy_data_u8(&mut data, self.tensor.numel());
        data.into()
    }
    fn data_len(&self) -> usize {
        self.tensor.numel() * self.tensor.kind().elt_size_in_bytes()
    }
}

impl Checkpoint {
    /// The checkpoint as safetensors bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, TrainError> {
        let json =
            serde_json::to_vec(&self.state).map_err(|e| TrainError::Checkpoint(e.to_string()))?;
        let state_t = Tensor::from_slice(&json).to_kind(Kind::Uint8);
        let mut list: Vec<(String, Tensor)> = self
            .tensors
            .iter()
            .map(|(k, v)| (k.clone(), v.detach().to_device(Device::Cpu).contiguous()))
            .collect();
        list.push((STATE_KEY.to_string(), state_t));
        let views = list
            .iter()
            .map(|(k, t)| {
                let dtype = Dtype::try_from(t.kind())
                    .map_err(|e| TrainError::Checkpoint(format!("{k}: {e}")))?;
                let shape = t.size().iter().map(|&d| d as usize).collect();
                Ok((
                    k.as_str(),
                    TensorBytes {
                        tensor: t,
                        dtype,
                        shape,
                    },
                ))
            })
            .collect::<Result<Vec<_>, TrainError>>()?;
        safetensors::tensor::serialize(views, &None)
            .map_err(|e| TrainError::Checkpoint(format!("serializing: {e}")))
    }

    /// Saves as `key` of `store` (the train folder), whole.
    pub fn save(&self, store: &Store, key: &str) -> Result<(), TrainError> {
        store
            .put(key, self.to_bytes()?)
            .map_err(|e| TrainError::Checkpoint(e.to_string()))
    }

    /// Loads a checkpoint file written by [`Checkpoint::save`].
    pub fn load(path: &Path) -> Result<Checkpoint, TrainError> {
        let bytes = std::fs::read(path).map_err(|e| TrainError::io(path, e))?;
        Self::from_bytes(&bytes, &path.display().to_string())
    }

    /// Reads checkpoint bytes; `name` names them in errors.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Checkpoint, TrainError> {
        let st = SafeTensors::deserialize(bytes)
            .map_err(|e| TrainError::Checkpoint(format!("{name}: {e}")))?;
        let mut tensors = BTreeMap::new();
        let mut state = None;
        for (k, view) in st.tensors() {
            let v = Tensor::try_from(view)
                .map_err(|e| TrainError::Checkpoint(format!("{name}: {k}: {e}")))?;
            if k == STATE_KEY {
                let bytes =
                    Vec::<u8>::try_from(&v).map_err(|e| TrainError::Checkpoint(e.to_string()))?;
                state =
                    Some(serde_json::from_slice::<TrainState>(&bytes).map_err(|e| {
                        TrainError::Checkpoint(format!("{name}: train state: {e}"))
                    })?);
            } else {
                tensors.insert(k, v);
            }
        }
        let state =
            state.ok_or_else(|| TrainError::Checkpoint(format!("{name}: no train state")))?;
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
