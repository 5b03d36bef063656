//! One step of KataGo's training loop.

use std::collections::BTreeMap;

use crate::train::batch::Batch;
use crate::train::checkpoint::TrainState;
use crate::train::loss::{compute_losses, LossScales};
use crate::train::model::TrainNet;
use crate::train::optim::{Optimizer, Schedule};

/// What one training step reports.
pub struct StepReport {
    /// Every loss term's value (sums over the batch).
    pub values: BTreeMap<&'static str, f64>,
    /// Gradient norm before clipping.
    pub gnorm: f64,
    /// True between lookahead syncs (checkpoints and SWA wait for a sync).
    pub in_between_lookaheads: bool,
    /// fp16 training only: the scaled gradients overflowed, so the SGD step
    /// was skipped and the loss scale halved (torch's `GradScaler.step`).
    pub skipped_overflow: bool,
}

/// One step of KataGo's training loop: forward, losses, backward, clipping,
/// SGD, lookahead, SWA.
#[allow(clippy::too_many_arguments)]
pub fn train_step(
    net: &TrainNet,
    opt: &mut Optimizer,
    state: &mut TrainState,
    sched: &Schedule,
    scales: &LossScales,
    swa_scale: f64,
    swa_period: u64,
    batch: &Batch,
) -> StepReport {
    let out = net.forward_batch(batch);
    let losses = compute_losses(&out, batch, scales, &mut state.loss_state, true);
    for mut g in net.grads() {
        let _ = g.zero_();
    }
    let skipped_overflow = match &opt.grad_scaler {
        Some(scaler) => {
            scaler.scale_loss(&losses.loss_sum).backward();
            scaler.unscale_and_update(&net.grads())
        }
        None => {
            losses.loss_sum.backward();
            false
        }
    };
    let gnorm = Optimizer::clip_gradients(net, sched.gnorm_cap());
    if !skipped_overflow {
        opt.step(net, sched, state.global_step_samples);
    }
    let bs = batch.binary_input.size()[0] as u64;
    state.global_step_samples += bs;
    state.global_step_batches += 1;
    let synced = opt.lookahead(net, &mut state.lookahead_counter);
    state.swa_sample_accum += bs;
    if state.swa_sample_accum >= swa_period && synced {
        state.swa_sample_accum = 0;
        opt.swa_update(net, swa_scale, state.swa_initialized);
        state.swa_initialized = true;
    }
    StepReport {
        values: losses.values(),
        gnorm,
        in_between_lookaheads: !synced,
        skipped_overflow,
    }
}
