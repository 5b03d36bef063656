//! The `engine train` loop and `engine export`, with KataGo's `train.py`
//! flags and directory layout.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::{Device, Tensor};

use super::batch::{Augment, Batch, HostBatch};
use super::checkpoint::{Checkpoint, TrainState};
use super::config::{ModelConfig, NormKind};
use super::export::{to_model_file, NamedParams};
use super::loss::{compute_losses, LossScales};
use super::model::TrainNet;
use super::optim::{Optimizer, Schedule};
use super::plot;
use super::precision::Precision;
use super::TrainError;
use crate::data::WindowRows;
use crate::store::layout::{trained_model_name, ModelsDir, ShuffledData};
use crate::store::{Store, StoreUrl};

/// Batches prepared ahead of the one training.
const PREFETCH_BATCHES: usize = 2;

/// The checkpoint's name in `-traindir`.
const CHECKPOINT_FILE: &str = "checkpoint.safetensors";

/// Flags of `engine train` (KataGo's `train.py` spelling).
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Local directory for checkpoints, metrics and plots.
    #[arg(long = "traindir")]
    pub traindir: PathBuf,
    /// Parent of shuffled data dirs (a path or `s3://` URL); the newest
    /// complete one (with train.json) is used.
    #[arg(long = "latestdatadir")]
    pub latestdatadir: String,
    /// Model config name (b1c6nbt, b2c16, b4c32, b6c96, b10c128, b18c384nbt;
    /// NAME-scalebias for a scale at every norm, chosen by itself when
    /// -initial-checkpoint is a batch-norm net such as g170's).
    #[arg(long = "model-kind")]
    pub model_kind: String,
    /// Rows per batch.
    #[arg(long = "batch-size", default_value_t = 256)]
    pub batch_size: usize,
    /// Samples that make one epoch.
    #[arg(long = "samples-per-epoch", default_value_t = 1_000_000)]
    pub samples_per_epoch: u64,
    /// Stop after this many epochs (default: run until killed).
    #[arg(long = "max-epochs-this-instance")]
    pub max_epochs_this_instance: Option<u64>,
    /// Learning-rate multiplier.
    #[arg(long = "lr-scale", default_value_t = 1.0)]
    pub lr_scale: f64,
    /// SWA: the average moves 1/swa-scale toward each snapshot.
    #[arg(long = "swa-scale", default_value_t = 8.0)]
    pub swa_scale: f64,
    /// SWA snapshot period in samples (default samples-per-epoch/2).
    #[arg(long = "swa-period-samples")]
    pub swa_period_samples: Option<u64>,
    /// Start from this checkpoint (ours) or KataGo network (.bin.gz, fine-tuning) when TRAIN has none.
    #[arg(long = "initial-checkpoint")]
    pub initial_checkpoint: Option<PathBuf>,
    /// Export after each epoch into this models dir (a path or `s3://`
    /// URL) as `<prefix>-s<samples>-d<rows>/model.bin.gz`.
    #[arg(long = "exportdir")]
    pub exportdir: Option<String>,
    /// Name prefix of exported models.
    #[arg(long = "exportprefix", default_value = "engine")]
    pub exportprefix: String,
    /// Disable the learning-rate warm-up.
    #[arg(long = "no-lr-warmup")]
    pub no_lr_warmup: bool,
    /// Disable symmetry and history augmentation.
    #[arg(long = "no-augment")]
    pub no_augment: bool,
    /// Save a checkpoint every this many samples (and at each epoch end).
    #[arg(long = "checkpoint-every-samples", default_value_t = 100_000)]
    pub checkpoint_every_samples: u64,
    /// Data board side of the rows.
    #[arg(long = "pos-len", default_value_t = 19)]
    pub pos_len: usize,
    /// Train on CUDA device 0 (an error if CUDA cannot be used; never the CPU instead).
    #[arg(long = "cuda")]
    pub cuda: bool,
    /// Mixed precision: the trunk's convolutions and matmuls in fp16, the
    /// heads and losses in fp32, the loss scaled (KataGo's -use-fp16). For
    /// GPUs with fp16 arithmetic; on a CPU without it, slower than fp32.
    #[arg(long = "use-fp16", conflicts_with = "use_bf16")]
    pub use_fp16: bool,
    /// Mixed precision in bf16, no loss scaling (KataGo's -use-bf16).
    #[arg(long = "use-bf16")]
    pub use_bf16: bool,
    /// Random seed (weights init, augmentation).
    #[arg(long = "seed", default_value_t = 0)]
    pub seed: u64,
}

/// Flags of `engine export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Checkpoint file written by `engine train`.
    #[arg(long = "checkpoint", required_unless_present = "random_init")]
    pub checkpoint: Option<PathBuf>,
    /// Instead of a checkpoint: export a freshly initialised network of this
    /// model kind (KataGo's fixed-variance init), the first net of a training
    /// run from scratch.
    #[arg(long = "random-init", conflicts_with_all = ["checkpoint", "use_swa"])]
    pub random_init: Option<String>,
    /// Seed of `-random-init`.
    #[arg(long = "seed", default_value_t = 0)]
    pub seed: u64,
    /// Directory (a path or `s3://` URL) to write `<model-name>.bin.gz` into.
    #[arg(long = "export-dir")]
    pub export_dir: String,
    /// Name recorded in the model file and used for the file name.
    #[arg(long = "model-name")]
    pub model_name: String,
    /// Export the SWA weights instead of the current ones.
    #[arg(long = "use-swa")]
    pub use_swa: bool,
}

/// The window found under `-latestdatadir`, read as batches.
struct Data {
    rows: WindowRows,
    val: Option<WindowRows>,
    total_rows: u64,
}

/// KataGo's choice of data dir: the newest whole window
/// (`crate::store::layout::ShuffledData::newest`).
fn load_data(latest: &str, pos_len: usize) -> Result<Data, TrainError> {
    let data = ShuffledData::open(&StoreUrl::parse(latest)?)?;
    let window = data.newest()?.ok_or_else(|| {
        TrainError::Data(format!(
            "no shuffled data dir with train.json under {}",
            data.url()
        ))
    })?;
    let rows = WindowRows::open(&data, &window.train, pos_len)?;
    if rows.num_rows() == 0 {
        return Err(TrainError::Data(format!(
            "no rows in {}/{}/train",
            data.url(),
            window.name
        )));
    }
    let val = if window.val.is_empty() {
        None
    } else {
        Some(WindowRows::open(&data, &window.val, pos_len)?)
    };
    Ok(Data {
        rows,
        val,
        total_rows: window.range.1.max(0) as u64,
    })
}

fn params_of(net: &TrainNet) -> NamedParams {
    net.params
        .iter()
        .map(|p| (p.name.clone(), p.tensor.shallow_clone()))
        .collect()
}

pub(super) fn checkpoint_of(net: &TrainNet, opt: &Optimizer, state: &TrainState) -> Checkpoint {
    let mut tensors = std::collections::BTreeMap::new();
    for p in &net.params {
        tensors.insert(format!("model.{}", p.name), p.tensor.shallow_clone());
    }
    for (prefix, map) in [
        ("swa", &opt.swa),
        ("momentum", &opt.momentum),
        ("slow", &opt.slow),
    ] {
        for (k, v) in map {
            tensors.insert(format!("{prefix}.{k}"), v.shallow_clone());
        }
    }
    if let Some(s) = &opt.grad_scaler {
        tensors.insert("grad_scaler.scale".into(), s.scale.shallow_clone());
        tensors.insert(
            "grad_scaler.growth_tracker".into(),
            s.growth_tracker.shallow_clone(),
        );
    }
    Checkpoint {
        state: state.clone(),
        tensors,
    }
}

pub(super) fn restore(
    net: &mut TrainNet,
    opt: &mut Optimizer,
    ck: &Checkpoint,
    device: Device,
) -> Result<(), TrainError> {
    let model: Vec<(String, Tensor)> = ck.group("model").into_iter().collect();
    net.load_named(&model)?;
    let to_dev = |m: std::collections::BTreeMap<String, Tensor>| -> std::collections::BTreeMap<String, Tensor> {
        m.into_iter().map(|(k, v)| (k, v.to_device(device))).collect()
    };
    let swa = to_dev(ck.group("swa"));
    if !swa.is_empty() {
        opt.swa = swa;
    }
    let slow = to_dev(ck.group("slow"));
    if !slow.is_empty() {
        opt.slow = slow;
    }
    opt.momentum = to_dev(ck.group("momentum"));
    // An fp16 run goes on with its loss scale; a run that switches to fp16
    // starts a fresh scaler, one that switches away drops it.
    if let Some(scaler) = &mut opt.grad_scaler {
        let saved = to_dev(ck.group("grad_scaler"));
        if let (Some(scale), Some(tracker)) = (saved.get("scale"), saved.get("growth_tracker")) {
            scaler.scale = scale.shallow_clone();
            scaler.growth_tracker = tracker.shallow_clone();
        }
    }
    Ok(())
}

fn metrics_line(
    state: &TrainState,
    lr: f64,
    gnorm: f64,
    sps: f64,
    sums: &std::collections::BTreeMap<&'static str, f64>,
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
fn validate(
    net: &TrainNet,
    rows: &WindowRows,
    batch_size: usize,
    device: Device,
) -> Result<std::collections::BTreeMap<String, f64>, TrainError> {
    let _g = tch::no_grad_guard();
    let mut rng = StdRng::seed_from_u64(0);
    let mut sums: std::collections::BTreeMap<&'static str, f64> = Default::default();
    let mut n = 0usize;
    let mut state = super::loss::LossState::default();
    for batch in rows.once(batch_size) {
        let batch = batch?;
        let idx: Vec<usize> = (0..batch.num_rows).collect();
        let b = Batch::from_rows(&batch, &idx, Augment::NONE, &mut rng, device);
        let out = net.forward(&b.binary_input, &b.global_input);
        let l = compute_losses(&out, &b, &LossScales::default(), &mut state, false);
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
fn record_validation(
    end: &mut serde_json::Map<String, serde_json::Value>,
    v: &std::collections::BTreeMap<String, f64>,
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

/// What one training step reports.
pub struct StepReport {
    /// Every loss term's value (sums over the batch).
    pub values: std::collections::BTreeMap<&'static str, f64>,
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
    let out = net.forward(&batch.binary_input, &batch.global_input);
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

/// Keeps freed tensor memory in the heap instead of returning it to the OS.
///
/// Every step frees and reallocates the same activation and gradient
/// buffers (each from a few hundred KB to MBs). With glibc's defaults the
/// big ones are mmapped and unmapped each time, or the heap top is trimmed,
/// and every step pays for page faults and zeroing fresh pages: measured on
/// b2c16 batch 64, 441k minor faults and 1.9 s system time for 120 steps,
/// against 72k and 0.85 s with these settings (user time unchanged).
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_TOP_PAD: i32 = -2;
        const M_MMAP_THRESHOLD: i32 = -3;
        // SAFETY: mallopt only changes allocator tunables; it is called
        // before training allocates anything big, with valid parameters
        // (32 MiB is glibc's largest mmap threshold on 64-bit).
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 32 << 20);
            mallopt(M_TRIM_THRESHOLD, 1 << 30);
            mallopt(M_TOP_PAD, 64 << 20);
        }
    }
}

/// Runs `engine train`.
pub fn run_train(args: &TrainArgs) -> Result<(), TrainError> {
    keep_freed_memory();
    let config = ModelConfig::by_name(&args.model_kind)?;
    if args.batch_size == 0 {
        return Err(TrainError::Config("-batch-size must be positive".into()));
    }
    let device = crate::nn::device::train_device(args.cuda)
        .map_err(|e| TrainError::Config(e.to_string()))?;
    tch::manual_seed(args.seed as i64);
    std::fs::create_dir_all(&args.traindir).map_err(|e| TrainError::io(&args.traindir, e))?;
    let train_store = Store::open_path(&args.traindir)?;
    let exports = args
        .exportdir
        .as_deref()
        .map(|d| Ok::<_, TrainError>(ModelsDir::open(&StoreUrl::parse(d)?)?))
        .transpose()?;
    let ckpt_path = args.traindir.join(CHECKPOINT_FILE);
    let resume_from = if ckpt_path.is_file() {
        Some(ckpt_path.clone())
    } else {
        args.initial_checkpoint.clone()
    };
    let mut config = config;
    let mut start_file = None;
    let mut start_ck = None;
    if let Some(p) = &resume_from {
        let lower = p.to_string_lossy().to_lowercase();
        if !ckpt_path.is_file()
            && (lower.ends_with(".bin.gz") || lower.ends_with(".bin") || lower.ends_with(".txt.gz"))
        {
            // A KataGo network as starting weights (fine-tuning).
            let file =
                crate::nn::ModelFile::load(p).map_err(|e| TrainError::Checkpoint(e.to_string()))?;
            let before = config.name.clone();
            if super::import::needs_scalebias(&file) && config.norm == NormKind::Fixup {
                config = config.with_scalebias();
            }
            let k = file.trunk.initial_conv.y_size as i64;
            if k != config.initial_conv && file.trunk.initial_conv.x_size as i64 == k {
                config = config.with_initial_conv(k);
            }
            if config.name != before {
                eprintln!(
                    "train: {} has {}a {k}x{k} input convolution; training it as model kind {}",
                    p.display(),
                    if config.norm == NormKind::ScaleBias {
                        "batch norms and "
                    } else {
                        ""
                    },
                    config.name
                );
            }
            start_file = Some(file);
        } else {
            let ck = Checkpoint::load(p)?;
            // A run started from an older KataGo net goes on with the kind
            // chosen then (`-scalebias`, `-initconv5`).
            let ck_config = ModelConfig::by_name(&ck.state.model_kind)?;
            if ck_config.base_name() == config.base_name() && config.name == config.base_name() {
                config = ck_config;
            }
            if ck.state.model_kind != config.name {
                return Err(TrainError::Checkpoint(format!(
                    "{} holds a {} net, not {}",
                    p.display(),
                    ck.state.model_kind,
                    config.name
                )));
            }
            start_ck = Some(ck);
        }
    }
    let mut net = TrainNet::new(&config, args.pos_len as i64, device)?;
    net.precision = match (args.use_fp16, args.use_bf16) {
        (true, _) => Precision::F16,
        (_, true) => Precision::BF16,
        _ => Precision::F32,
    };
    eprintln!(
        "{}",
        crate::nn::device::train_line(device, net.precision.compute_kind())
    );
    let mut opt = Optimizer::new(&net);
    let mut state = TrainState {
        model_kind: config.name.clone(),
        ..TrainState::default()
    };
    if let (Some(file), Some(p)) = (&start_file, &resume_from) {
        let n = super::import::load_model_file(&mut net, file)?;
        opt = Optimizer::new(&net);
        eprintln!(
            "train: starting from {} ({n} of {} parameters from the file)",
            p.display(),
            net.params.len()
        );
    }
    if let (Some(ck), Some(p)) = (start_ck, &resume_from) {
        restore(&mut net, &mut opt, &ck, device)?;
        state = ck.state;
        eprintln!(
            "train: resumed from {} at {} samples",
            p.display(),
            state.global_step_samples
        );
    }
    let data = load_data(&args.latestdatadir, args.pos_len)?;
    state.total_num_data_rows = data.total_rows;
    let sched = Schedule {
        lr_scale: args.lr_scale,
        batch_size: args.batch_size,
        no_warmup: args.no_lr_warmup,
    };
    let swa_period = args
        .swa_period_samples
        .unwrap_or((args.samples_per_epoch / 2).max(1));
    let augment = if args.no_augment {
        Augment::NONE
    } else {
        Augment::KATAGO
    };
    let mut rng = StdRng::seed_from_u64(args.seed ^ state.global_step_samples);
    let metrics_path = args.traindir.join("metrics.jsonl");
    let mut metrics_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&metrics_path)
        .map_err(|e| TrainError::io(&metrics_path, e))?;
    let batches_per_epoch = (args.samples_per_epoch as usize / args.batch_size).max(1);
    let nrows = data.rows.num_rows();
    let scales = LossScales::default();
    let mut epochs_this_instance = 0u64;
    let mut last_ckpt_samples = state.global_step_samples;
    eprintln!(
        "train: {}{} ({} params), {} rows, batch {}, {} batches/epoch, lr_scale {}, swa every {} samples",
        config.name,
        match net.precision {
            Precision::F32 => "",
            Precision::F16 => ", fp16 trunk with loss scaling",
            Precision::BF16 => ", bf16 trunk",
        },
        net.num_parameters(),
        nrows,
        args.batch_size,
        batches_per_epoch,
        args.lr_scale,
        swa_period
    );
    if let (Some(val), Some(_)) = (&data.val, &start_file) {
        // Fine-tuning: the starting net's validation figures, to compare with.
        let v = validate(&net, val, args.batch_size, device)?;
        let mut line = serde_json::Map::new();
        line.insert("initial".into(), true.into());
        line.insert("global_step_samples".into(), 0.into());
        record_validation(&mut line, &v, "starting net's");
        let _ = writeln!(metrics_file, "{}", serde_json::Value::Object(line));
    }
    // One reader for the whole run: it fetches and decodes the window's
    // next file while training goes on, across epochs.
    let mut batches = data.rows.cycle(state.data_cursor % nrows, args.batch_size);
    loop {
        if args
            .max_epochs_this_instance
            .is_some_and(|m| epochs_this_instance >= m)
        {
            break;
        }
        let mut sums: std::collections::BTreeMap<&'static str, f64> = Default::default();
        let mut interval_samples = 0f64;
        let mut t0 = Instant::now();
        let epoch_start = Instant::now();
        let mut epoch_samples = 0u64;
        let mut in_between_lookaheads = false;
        // fp16 steps skipped for overflowing gradients since the last metrics line.
        let mut skipped_steps = 0u64;
        let bar = epoch_bar(
            state.epochs_done + 1,
            (batches_per_epoch * args.batch_size) as u64,
        );
        // A helper thread prepares the next batches (unpacking, history
        // masking, symmetry; plain Rust, no libtorch) while this one trains:
        // the same rows in the same order with the same random draws as
        // preparing them here, and the rng comes back at the epoch's end.
        std::thread::scope(|scope| -> Result<(), TrainError> {
            // Each batch comes with the data cursor after it (or the
            // window's read error).
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(HostBatch, u64), TrainError>>(
                PREFETCH_BATCHES,
            );
            let batch_size = args.batch_size;
            let mut cursor = state.data_cursor % nrows;
            let mut batch_rng = std::mem::replace(&mut rng, StdRng::seed_from_u64(0));
            let batches = &mut batches;
            let identity: Vec<usize> = (0..batch_size).collect();
            let producer = scope.spawn(move || {
                for _ in 0..batches_per_epoch {
                    let rows = match batches.next() {
                        Some(Ok(rows)) => rows,
                        Some(Err(e)) => {
                            let _ = tx.send(Err(e.into()));
                            break;
                        }
                        None => {
                            let _ =
                                tx.send(Err(TrainError::Data("the window reader stopped".into())));
                            break;
                        }
                    };
                    cursor = (cursor + batch_size as u64) % nrows;
                    let host = HostBatch::from_rows(&rows, &identity, augment, &mut batch_rng);
                    if tx.send(Ok((host, cursor))).is_err() {
                        break; // the trainer stopped early (an error)
                    }
                }
                batch_rng
            });
            for bi in 0..batches_per_epoch {
                let (host, cursor) = rx.recv().map_err(|_| {
                    TrainError::Data("the batch preparation thread stopped".into())
                })??;
                state.data_cursor = cursor;
                let batch = Batch::from_host(&host, device);
                let step = train_step(
                    &net,
                    &mut opt,
                    &mut state,
                    &sched,
                    &scales,
                    args.swa_scale,
                    swa_period,
                    &batch,
                );
                let gnorm = step.gnorm;
                in_between_lookaheads = step.in_between_lookaheads;
                skipped_steps += u64::from(step.skipped_overflow);
                for (k, v) in step.values {
                    *sums.entry(k).or_insert(0.0) += v;
                }
                let bs = args.batch_size as u64;
                bar.inc(bs);
                epoch_samples += bs;
                interval_samples += bs as f64;
                let last = bi + 1 == batches_per_epoch;
                if (bi + 1) % 20 == 0 || last {
                    let sps = interval_samples / t0.elapsed().as_secs_f64().max(1e-9);
                    let mut line = metrics_line(
                        &state,
                        sched.per_sample_lr(state.global_step_samples),
                        gnorm,
                        sps,
                        &sums,
                        interval_samples,
                    );
                    if let (Some(scaler), serde_json::Value::Object(m)) =
                        (&opt.grad_scaler, &mut line)
                    {
                        m.insert("grad_scale".into(), scaler.scale_value().into());
                        m.insert("overflow_skipped_steps".into(), skipped_steps.into());
                        skipped_steps = 0;
                    }
                    let _ = writeln!(metrics_file, "{line}");
                    let per = |k: &str| sums.get(k).copied().unwrap_or(0.0) / interval_samples;
                    let msg = format!(
                        "{sps:.1} samples/s | loss {:.3} p0 {:.3} v {:.3} own {:.3} | lr {:.2e}",
                        per("loss_sum"),
                        per("p0loss_sum"),
                        per("vloss_sum"),
                        per("oloss_sum"),
                        sched.per_sample_lr(state.global_step_samples),
                    );
                    if bar.is_hidden() {
                        // Not a terminal (a log file): a plain line per interval.
                        eprintln!(
                            "train: epoch {} batch {}/{} | {} samples | {msg}",
                            state.epochs_done + 1,
                            bi + 1,
                            batches_per_epoch,
                            state.global_step_samples,
                        );
                    }
                    bar.set_message(msg);
                    sums.clear();
                    interval_samples = 0.0;
                    t0 = Instant::now();
                }
                if state.global_step_samples - last_ckpt_samples >= args.checkpoint_every_samples
                    && !in_between_lookaheads
                {
                    checkpoint_of(&net, &opt, &state).save(&train_store, CHECKPOINT_FILE)?;
                    last_ckpt_samples = state.global_step_samples;
                }
            }
            drop(rx);
            rng = producer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Ok(())
        })?;
        bar.finish();
        // KataGo discards the fast steps since the last lookahead sync at epoch end.
        opt.sync_lookahead(&net, false);
        state.lookahead_counter = 0;
        state.epochs_done += 1;
        epochs_this_instance += 1;
        let mut end = serde_json::Map::new();
        end.insert("epoch_end".into(), state.epochs_done.into());
        end.insert(
            "global_step_samples".into(),
            state.global_step_samples.into(),
        );
        end.insert(
            "epoch_samples_per_sec".into(),
            (epoch_samples as f64 / epoch_start.elapsed().as_secs_f64().max(1e-9)).into(),
        );
        if let Some(val) = &data.val {
            let v = validate(&net, val, args.batch_size, device)?;
            record_validation(&mut end, &v, &format!("epoch {}", state.epochs_done));
        }
        let _ = writeln!(metrics_file, "{}", serde_json::Value::Object(end));
        checkpoint_of(&net, &opt, &state).save(&train_store, CHECKPOINT_FILE)?;
        last_ckpt_samples = state.global_step_samples;
        write_plot(&metrics_path, &train_store, "loss.svg")?;
        if let Some(dir) = &exports {
            let name = trained_model_name(
                &args.exportprefix,
                state.global_step_samples,
                state.total_num_data_rows,
            );
            let weights = if state.swa_initialized {
                opt.swa
                    .iter()
                    .map(|(k, v)| (k.clone(), v.shallow_clone()))
                    .collect()
            } else {
                params_of(&net)
            };
            let model = to_model_file(&config, &weights, &name)?;
            dir.publish(&name, model.to_bin_gz())?;
            eprintln!("train: exported {}/{name}", dir.url());
        }
    }
    Ok(())
}

/// One epoch's progress bar on stderr (samples, samples/s and the main
/// losses in the message, ETA); hidden when stderr is not a terminal.
fn epoch_bar(epoch: u64, samples: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(samples);
    let style = indicatif::ProgressStyle::with_template(
        "train: epoch {prefix} [{elapsed_precise}] {bar:25} {human_pos}/{human_len} samples, ETA {eta} | {msg}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(epoch.to_string());
    bar
}

/// Redraws the loss curves from the metrics file into `key` of `store`.
fn write_plot(metrics: &Path, store: &Store, key: &str) -> Result<(), TrainError> {
    let text = std::fs::read_to_string(metrics).map_err(|e| TrainError::io(metrics, e))?;
    let keys = ["loss", "p0loss", "vloss", "oloss", "val_loss"];
    let mut series: Vec<plot::Series> = keys
        .iter()
        .map(|k| plot::Series {
            name: k.to_string(),
            points: Vec::new(),
        })
        .collect();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(x) = v["global_step_samples"].as_f64() else {
            continue;
        };
        for (i, k) in keys.iter().enumerate() {
            if let Some(y) = v[*k].as_f64() {
                series[i].points.push((x, y));
            }
        }
    }
    Ok(store.put(
        key,
        plot::svg("engine train: loss per sample", &series).into_bytes(),
    )?)
}

/// Runs `engine export`.
pub fn run_export(args: &ExportArgs) -> Result<(), TrainError> {
    let (config, weights) = match (&args.random_init, &args.checkpoint) {
        (Some(kind), _) => {
            let config = ModelConfig::by_name(kind)?;
            tch::manual_seed(args.seed as i64);
            let net = TrainNet::new(&config, 19, Device::Cpu)?;
            let weights = params_of(&net);
            (config, weights)
        }
        (None, Some(checkpoint)) => {
            let ck = Checkpoint::load(checkpoint)?;
            let config = ModelConfig::by_name(&ck.state.model_kind)?;
            let weights: NamedParams = if args.use_swa {
                if !ck.state.swa_initialized {
                    return Err(TrainError::Export(
                        "the checkpoint has no SWA snapshot yet".into(),
                    ));
                }
                ck.group("swa")
            } else {
                ck.group("model")
            };
            (config, weights)
        }
        (None, None) => {
            return Err(TrainError::Export(
                "give -checkpoint or -random-init".into(),
            ))
        }
    };
    let model = to_model_file(&config, &weights, &args.model_name)?;
    let dir = Store::open_str(&args.export_dir)?;
    let key = format!("{}.bin.gz", args.model_name);
    dir.put(&key, model.to_bin_gz())?;
    eprintln!("export: wrote {}", dir.describe(&key));
    Ok(())
}
