//! The metrics of training: per-interval loss lines, validation on held-apart
//! rows, and the epoch's progress bar.

use std::collections::BTreeMap;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::Device;

use super::StepReport;
use crate::data::WindowRows;
use crate::train::batch::{Augment, Batch};
use crate::train::checkpoint::TrainState;
use crate::train::loss::{compute_losses, LossScales};
use crate::train::model::TrainNet;
use crate::train::optim::Schedule;
use crate::train::TrainError;

/// The loss sums of one metrics interval.
pub(super) struct Interval {
    sums: BTreeMap<&'static str, f64>,
    samples: f64,
    started: Instant,
    gnorm: f64,
    skipped_steps: u64,
}

impl Interval {
    pub(super) fn start() -> Interval {
        Interval {
            sums: BTreeMap::new(),
            samples: 0.0,
            started: Instant::now(),
            gnorm: 0.0,
            skipped_steps: 0,
        }
    }

    pub(super) fn add(&mut self, step: &StepReport, batch_size: usize) {
        for (k, v) in &step.values {
            *self.sums.entry(k).or_insert(0.0) += v;
        }
        self.samples += batch_size as f64;
        self.gnorm = step.gnorm;
        self.skipped_steps += u64::from(step.skipped_overflow);
    }

    /// The interval's metrics line (and progress message), then a fresh
    /// interval.
    pub(super) fn finish(
        &mut self,
        state: &TrainState,
        sched: &Schedule,
        scaler: Option<&crate::train::precision::GradScaler>,
        bar: &indicatif::ProgressBar,
        (batch, batches): (usize, usize),
    ) -> String {
        let sps = self.samples / self.started.elapsed().as_secs_f64().max(1e-9);
        let lr = sched.per_sample_lr(state.global_step_samples);
        let mut line = metrics_line(state, lr, self.gnorm, sps, &self.sums, self.samples);
        if let (Some(scaler), serde_json::Value::Object(m)) = (scaler, &mut line) {
            m.insert("grad_scale".into(), scaler.scale_value().into());
            m.insert("overflow_skipped_steps".into(), self.skipped_steps.into());
        }
        let per = |k: &str| self.sums.get(k).copied().unwrap_or(0.0) / self.samples;
        let msg = format!(
            "{sps:.1} samples/s | loss {:.3} p0 {:.3} v {:.3} own {:.3} | lr {lr:.2e}",
            per("loss_sum"),
            per("p0loss_sum"),
            per("vloss_sum"),
            per("oloss_sum"),
        );
        if bar.is_hidden() {
            // Not a terminal (a log file): a plain line per interval.
            eprintln!(
                "train: epoch {} batch {batch}/{batches} | {} samples | {msg}",
                state.epochs_done + 1,
                state.global_step_samples,
            );
        }
        bar.set_message(msg);
        *self = Interval::start();
        line.to_string()
    }
}

fn metrics_line(
    state: &TrainState,
    lr: f64,
    gnorm: f64,
    sps: f64,
    sums: &BTreeMap<&'static str, f64>,
    nsamp: f64,
) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    m.insert(
        "global_step_samples".into(),
        state.global_step_samples.into(),
    );
    m.insert("pslr".into(), lr.into());
    m.insert("gnorm".into(), gnorm.into());
    m.insert("samples_per_sec".into(), sps.into());
    for (k, v) in sums {
        // KataGo reports `_sum` metrics per sample.
        let key = k.strip_suffix("_sum").unwrap_or(k);
        m.insert(key.to_string(), (v / nsamp.max(1.0)).into());
    }
    serde_json::Value::Object(m)
}

/// Evaluates every loss term per sample on held-apart rows (eval mode: no
/// augmentation, fixed seki scale, no gradient), keyed as the metrics file
/// names them (`loss`, `p0loss`, `vloss`, ...).
pub(super) fn validate(
    net: &TrainNet,
    rows: &WindowRows,
    batch_size: usize,
    device: Device,
    scales: &LossScales,
) -> Result<BTreeMap<String, f64>, TrainError> {
    let _g = tch::no_grad_guard();
    let mut rng = StdRng::seed_from_u64(0);
    let mut sums: BTreeMap<&'static str, f64> = Default::default();
    let mut n = 0usize;
    let mut state = crate::train::loss::LossState::default();
    for batch in rows.once(batch_size) {
        let batch = batch?;
        net.check_rows_fit(batch.has_metadata, "the validation rows")?;
        if scales.meta_kata_only_soft_policy && !batch.has_metadata {
            return Err(TrainError::Data(
                "-meta-kata-only-soft-policy: the validation rows have no metadataInputNC".into(),
            ));
        }
        let idx: Vec<usize> = (0..batch.num_rows).collect();
        let b = Batch::from_rows(&batch, &idx, Augment::NONE, &mut rng, device);
        let out = net.forward_batch(&b);
        let l = compute_losses(&out, &b, scales, &mut state, false);
        for (k, v) in l.values() {
            *sums.entry(k).or_insert(0.0) += v;
        }
        n += idx.len();
    }
    Ok(sums
        .into_iter()
        .map(|(k, v)| {
            let key = k.strip_suffix("_sum").unwrap_or(k).to_string();
            (key, v / n.max(1) as f64)
        })
        .collect())
}

/// Writes a validation result into the metrics line and says it on stderr.
pub(super) fn record_validation(
    end: &mut serde_json::Map<String, serde_json::Value>,
    v: &BTreeMap<String, f64>,
    what: &str,
) {
    for (k, x) in v {
        end.insert(format!("val_{k}"), (*x).into());
    }
    let g = |k: &str| v.get(k).copied().unwrap_or(f64::NAN);
    eprintln!(
        "train: {what} validation loss {:.4} per sample (p0 {:.4} v {:.4} own {:.4} lead {:.4})",
        g("loss"),
        g("p0loss"),
        g("vloss"),
        g("oloss"),
        g("leadloss"),
    );
}

/// One epoch's progress bar on stderr (samples, samples/s and the main
/// losses in the message, ETA); hidden when stderr is not a terminal.
pub(super) fn epoch_bar(epoch: u64, samples: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(samples);
    let style = indicatif::ProgressStyle::with_template(
        "train: epoch {prefix} [{elapsed_precise}] {bar:25} {human_pos}/{human_len} samples, ETA {eta} | {msg}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(epoch.to_string());
    bar
}
