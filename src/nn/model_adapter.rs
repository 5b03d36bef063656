//! The libtorch [`Model`] and the pure-Rust [`CpuModel`] behind the
//! evaluator's [`BatchModel`] interface.

use super::batch::{BatchModel, InputBatch, ModelError, RawRow};
#[cfg(feature = "torch")]
use super::network::Model;
use super::network::{CpuModel, InputBatch as NetInput};
use super::outputs::NetOutputs;

/// The network's view of an evaluator batch.
fn net_input(batch: &InputBatch) -> NetInput<'_> {
    let mask = batch.mask_rows();
    // Rows that fill the whole tensor need no masking work in the net.
    let needs_mask = mask.contains(&0.0);
    NetInput {
        batch_size: batch.rows,
        height: batch.y_len,
        width: batch.x_len,
        spatial: batch.spatial_rows(),
        global: batch.global_rows(),
        meta: batch.meta_rows(),
        mask: needs_mask.then_some(mask),
    }
}

/// One [`RawRow`] per row of `out`.
fn raw_rows(out: &NetOutputs, batch: &InputBatch) -> Vec<RawRow> {
    (0..batch.rows)
        .map(|i| {
            let r = out.row(i);
            let s = r.scores;
            RawRow {
                policy: r.policy.to_vec(),
                policy_optimistic: r.policy_optimistic.map(<[f32]>::to_vec),
                value: r.value_logits,
                score_mean: s.score_mean,
                score_mean_sq: s.score_mean * s.score_mean + s.score_stdev * s.score_stdev,
                lead: s.lead,
                var_time_left: s.var_time_left,
                shortterm_winloss_error: s.shortterm_winloss_error,
                shortterm_score_error: s.shortterm_score_error,
                ownership: batch.include_ownership.then(|| r.ownership.to_vec()),
            }
        })
        .collect()
}

#[cfg(feature = "torch")]
impl BatchModel for Model {
    fn forward(&mut self, batch: &InputBatch) -> Result<Vec<RawRow>, ModelError> {
        let out =
            Model::forward(self, &net_input(batch)).map_err(|e| ModelError::new(e.to_string()))?;
        Ok(raw_rows(&out, batch))
    }

    fn num_spatial_features(&self) -> usize {
        Model::num_spatial_features(self)
    }

    fn num_global_features(&self) -> usize {
        Model::num_global_features(self)
    }

    fn num_meta_features(&self) -> usize {
        Model::num_meta_features(self)
    }

    fn model_version(&self) -> i32 {
        self.version()
    }
}

impl BatchModel for CpuModel {
    fn forward(&mut self, batch: &InputBatch) -> Result<Vec<RawRow>, ModelError> {
        let out = CpuModel::forward(self, &net_input(batch))
            .map_err(|e| ModelError::new(e.to_string()))?;
        Ok(raw_rows(&out, batch))
    }

    fn num_spatial_features(&self) -> usize {
        CpuModel::num_spatial_features(self)
    }

    fn num_global_features(&self) -> usize {
        CpuModel::num_global_features(self)
    }

    fn num_meta_features(&self) -> usize {
        CpuModel::num_meta_features(self)
    }

    fn model_version(&self) -> i32 {
        self.version()
    }
}
