//! The `engine train` loop and `engine export`, with KataGo's `train.py`
//! flags and directory layout.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use clap::Args;
use tch::Device;

use super::batch::Augment;
use super::checkpoint::Checkpoint;
use super::config::ModelConfig;
use super::export::{to_model_file, NamedParams};
use super::loss::LossScales;
use super::model::TrainNet;
use super::precision::Precision;
use super::trainer::{load_newest, params_of, TrainOptions, Trainer};
use super::TrainError;
use crate::store::layout::ModelsDir;
use crate::store::{Store, StoreUrl};

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
    /// Model config name: a convnet (b1c6nbt, b2c16, b4c32, b6c96, b10c128,
    /// b18c384nbt) or one of KataGo's transformer configs (b7c96h3tfrs, ...,
    /// b10c384h6nbttflrs); suffixes -scalebias (a scale at every norm, chosen
    /// by itself when -initial-checkpoint is a batch-norm net such as
    /// g170's), -initconvK, -rnh/-rsnh (RMSNorm trunk tip), -silu/-mish,
    /// -meta (an SGF metadata encoder, as KataGo's human-SL nets: the rows
    /// must carry metadataInputNC, `engine shuffle -include-meta`; chosen
    /// by itself when -initial-checkpoint is a human-SL net).
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
    /// Count the soft policy losses only on rows of KataGo's own games
    /// (their metadata's source; human-SL data mixed with self-play).
    #[arg(long = "meta-kata-only-soft-policy")]
    pub meta_kata_only_soft_policy: bool,
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

impl TrainArgs {
    /// The session settings these flags give; an error when `-cuda` asks
    /// for a GPU that cannot be used.
    pub fn options(&self) -> Result<TrainOptions, TrainError> {
        Ok(TrainOptions {
            model_kind: self.model_kind.clone(),
            pos_len: self.pos_len,
            batch_size: self.batch_size,
            lr_scale: self.lr_scale,
            swa_scale: self.swa_scale,
            swa_period_samples: self
                .swa_period_samples
                .unwrap_or((self.samples_per_epoch / 2).max(1)),
            no_lr_warmup: self.no_lr_warmup,
            augment: if self.no_augment {
                Augment::NONE
            } else {
                Augment::KATAGO
            },
            checkpoint_every_samples: self.checkpoint_every_samples,
            device: crate::nn::device::train_device(self.cuda)
                .map_err(|e| TrainError::Config(e.to_string()))?,
            precision: match (self.use_fp16, self.use_bf16) {
                (true, _) => Precision::F16,
                (_, true) => Precision::BF16,
                _ => Precision::F32,
            },
            seed: self.seed,
            initial_checkpoint: self.initial_checkpoint.clone(),
            loss_scales: LossScales {
                meta_kata_only_soft_policy: self.meta_kata_only_soft_policy,
                ..LossScales::default()
            },
        })
    }
}

/// Runs `engine train`: epochs of `-samples-per-epoch` on the newest whole
/// window under `-latestdatadir`, each followed by an export into
/// `-exportdir`, until `-max-epochs-this-instance`.
pub fn run_train(args: &TrainArgs) -> Result<(), TrainError> {
    std::fs::create_dir_all(&args.traindir).map_err(|e| TrainError::io(&args.traindir, e))?;
    let train_store = Store::open_path(&args.traindir)?;
    let exports = args
        .exportdir
        .as_deref()
        .map(|d| Ok::<_, TrainError>(ModelsDir::open(&StoreUrl::parse(d)?)?))
        .transpose()?;
    let mut trainer = Trainer::open(args.options()?, train_store)?;
    let data = load_newest(&args.latestdatadir, args.pos_len)?;
    let epoch_samples = trainer.epoch_samples(args.samples_per_epoch);
    eprintln!(
        "{}",
        trainer.describe(
            data.num_rows(),
            epoch_samples / args.batch_size.max(1) as u64
        )
    );
    // `engine train` is stopped by a kill: it never raises this.
    let never = AtomicBool::new(false);
    let mut epochs_this_instance = 0u64;
    while args
        .max_epochs_this_instance
        .is_none_or(|m| epochs_this_instance < m)
    {
        trainer.train_epoch(&data, args.samples_per_epoch, &never)?;
        epochs_this_instance += 1;
        if let Some(dir) = &exports {
            trainer.export(dir, &args.exportprefix)?;
        }
    }
    Ok(())
}

/// A fresh net of model kind `kind` (KataGo's fixed-variance init),
/// seeded: the same seed gives the same weights.
fn random_weights(kind: &str, seed: u64) -> Result<(ModelConfig, NamedParams), TrainError> {
    let config = ModelConfig::by_name(kind)?;
    tch::manual_seed(seed as i64);
    let net = TrainNet::new(&config, 19, Device::Cpu)?;
    let weights = params_of(&net);
    Ok((config, weights))
}

/// A fresh net of model kind `kind` named `name`, as `.bin.gz` bytes: the
/// first net of a run from scratch. The same seed gives the same bytes.
pub fn random_net_bin_gz(kind: &str, seed: u64, name: &str) -> Result<Vec<u8>, TrainError> {
    let (config, weights) = random_weights(kind, seed)?;
    Ok(to_model_file(&config, &weights, name)?.to_bin_gz())
}

/// Runs `engine export`.
pub fn run_export(args: &ExportArgs) -> Result<(), TrainError> {
    let (config, weights) = match (&args.random_init, &args.checkpoint) {
        (Some(kind), _) => random_weights(kind, args.seed)?,
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
