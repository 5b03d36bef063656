//! Start-up shared by every command (`gtp`, `analysis`, `benchmark`, and
//! `selfplay`/`train` to come): the shared flags ([`EngineArgs`]),
//! [`start`] (config file plus `-override-config`, then the network named
//! on the command line or the project's default one in `models/`), and
//! [`load_network`] (device and batching evaluator from the config keys
//! KataGo uses: `nnMaxBatchSize`, `nnCacheSizePowerOfTwo`,
//! `numNNServerThreadsPerModel`, `nnRandomize`, `useFP16`/`cudaUseFP16`,
//! `cudaUseNHWC`, `deviceToUse`/`cudaDeviceToUse`/`cudaDeviceToUseThread<N>`
//! (see [`device_plan`]), `numEigenThreadsPerModel`). A command that picks its
//! model later (the newest in a models folder) or runs several calls
//! [`Startup::load_network`] once per model.
//!
//! CUDA is used when the config asks for it (a device key, or half
//! precision forced on) and then must work: if it cannot, the command
//! stops with [`crate::nn::device::DeviceError`]'s message, never falling
//! back to the CPU. With no such key, CUDA device 0 is used when libtorch
//! sees one, else the CPU.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use crate::config::{Config, ConfigError, Enabled, Key, Row, Vocabulary};
use crate::nn::device::{
    gpu_defaults, gpu_info, CudaAvailability, DeviceError, GpuDefaults, Precision,
};
use crate::nn::{Evaluator, EvaluatorConfig, ModelFile, NetError};
use crate::search::{NnEvalSettings, NnSearchEvaluator};
use crate::store::layout::{read_model_url, ModelsDir};
use crate::store::{StoreError, StoreUrl};

mod backend;
mod device_plan;
mod memory;
mod net_keys;
mod patterns;
pub use backend::{
    auto_cpu_precision_here, build_backend, cpu_threads, default_rust_servers, rust_servers,
    Backend, CpuBackend,
};
pub use device_plan::{device_plan, DevicePlan};
pub use memory::{
    cache_power_of_two, default_cache_power_of_two, total_memory_bytes, MemoryBudget, MemoryPlan,
};
pub use net_keys::{NN_PRECISION, NN_SERVER_THREADS};
pub use patterns::{auto_avoid_repeat, auto_avoid_rows, avoid_sgf_pattern_table, pattern_rows};

/// Why the network could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] Box<ConfigError>),
    #[error("loading the network: {0}")]
    Network(#[from] NetError),
    #[error("{0}")]
    Invalid(String),
    /// No `-model` and no default network in `models/`.
    #[error(
        "no network given and no default network found in models/.\n\
         Pass a KataGo network with -model, e.g.\n  \
         engine gtp -model kata1-b18c384nbt-s9996604416-d4316597426.bin.gz \
         -config configs/gtp.toml\n\
         (networks: https://katagotraining.org/networks/ ; any KataGo .bin.gz works)"
    )]
    NoModel,
    /// The named model file does not exist.
    #[error("model file not found: {}", .0.display())]
    ModelNotFound(PathBuf),
    /// The run store holding the model failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// CUDA was asked for and cannot be used.
    #[error("{0}")]
    Device(#[from] DeviceError),
}

/// Flags shared by the engine's commands (KataGo's spelling).
#[derive(Debug, Clone, Default, Args)]
pub struct EngineArgs {
    /// KataGo network file (.bin.gz or .bin): a path, or an
    /// `s3://bucket/key` URL.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// A human-style net (KataGo's human SL nets, with an SGF metadata
    /// encoder) evaluated beside the main one, as KataGo's `-human-model`;
    /// its profile is the config key `humanSLProfile`.
    #[arg(long = "human-model")]
    pub human_model: Option<PathBuf>,
    /// TOML config file (`gtp`, `analysis` and `serve` default to the
    /// built-in copy of `configs/gtp.toml`, `configs/analysis.toml` or
    /// `configs/serve.toml`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Config overrides, `key=value[,key=value...]`; may be repeated.
    #[arg(long = "override-config")]
    pub override_config: Vec<String>,
}

/// The config flags of a command that reads one config file: `-config`
/// (a TOML file of `configs/`, or KataGo's `.cfg`) and `-override-config`.
#[derive(Debug, Clone, Default, Args)]
pub struct ConfigArgs {
    /// Config file (the command's example is in `configs/`; KataGo's
    /// `.cfg` files are read too).
    #[arg(long = "config")]
    pub file: Option<PathBuf>,
    /// Config overrides, `key=value[,key=value...]`; may be repeated.
    #[arg(long = "override-config")]
    pub overrides: Vec<String>,
}

impl ConfigArgs {
    /// The config file (empty without `-config`) with the overrides.
    pub fn load(&self) -> Result<Config, ConfigError> {
        load_config(self.file.as_deref(), &self.overrides)
    }
}

/// A config file of `configs/` compiled into the binary: what `engine gtp`
/// and `engine analysis` read when no `-config` is given, as KataGo falls
/// back to the `default_gtp.cfg` beside its executable. Without it a bare
/// `engine gtp` would have no search limit, and a GUI's `time_settings 0 1
/// 0` ("no time limit") would make `genmove` search until stopped.
#[derive(Debug, Clone, Copy)]
pub struct BuiltInConfig {
    /// How errors and the start-up log name it.
    pub name: &'static str,
    /// The TOML text.
    pub text: &'static str,
}

/// `configs/gtp.toml`, the README's GTP config.
pub const GTP_CONFIG: BuiltInConfig = BuiltInConfig {
    name: "configs/gtp.toml (built in)",
    text: include_str!("../configs/gtp.toml"),
};

/// `configs/analysis.toml`, the README's analysis config.
pub const ANALYSIS_CONFIG: BuiltInConfig = BuiltInConfig {
    name: "configs/analysis.toml (built in)",
    text: include_str!("../configs/analysis.toml"),
};

/// `configs/serve.toml`, `engine serve`'s config (the analysis config and
/// the server's own keys).
pub const SERVE_CONFIG: BuiltInConfig = BuiltInConfig {
    name: "configs/serve.toml (built in)",
    text: include_str!("../configs/serve.toml"),
};

/// The config file named on the command line (an empty config if none)
/// with the `-override-config` arguments applied in order.
pub fn load_config(path: Option<&Path>, overrides: &[String]) -> Result<Config, ConfigError> {
    let cfg = match path {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    with_overrides(cfg, overrides)
}

/// Like [`load_config`], but with `built_in` when no file is named (and a
/// line on stderr saying so).
pub fn load_config_or_built_in(
    path: Option<&Path>,
    overrides: &[String],
    built_in: BuiltInConfig,
) -> Result<Config, ConfigError> {
    let cfg = match path {
        Some(path) => Config::load(path)?,
        None => {
            eprintln!("No -config given: using {}", built_in.name);
            Config::from_toml_str(built_in.text, built_in.name)?
        }
    };
    with_overrides(cfg, overrides)
}

fn with_overrides(mut cfg: Config, overrides: &[String]) -> Result<Config, ConfigError> {
    for o in overrides {
        cfg.apply_overrides(o)?;
    }
    Ok(cfg)
}

/// What every command starts from: the config (overrides applied) and the
/// model the command line named, if any.
#[derive(Debug)]
pub struct Startup {
    /// The config with the overrides applied.
    pub config: Config,
    /// `-model`, when given.
    pub model: Option<PathBuf>,
    /// `-human-model`, when given.
    pub human_model: Option<PathBuf>,
}

/// Loads the config of `args` (`built_in` when none is named) and its
/// overrides; the network is loaded later ([`Startup::network`] or
/// [`Startup::load_network`]), so that a command may read the config first
/// (batch size, thread counts) or choose its model itself.
pub fn start(args: &EngineArgs, built_in: BuiltInConfig) -> Result<Startup, SetupError> {
    let config = load_config_or_built_in(args.config.as_deref(), &args.override_config, built_in)?;
    Ok(Startup {
        config,
        model: args.model.clone(),
        human_model: args.human_model.clone(),
    })
}

impl Startup {
    /// The network to use: `-model`, else the project's default
    /// ([`default_model`]); the file must exist.
    pub fn model_path(&self) -> Result<PathBuf, SetupError> {
        let model = match &self.model {
            Some(m) => m.clone(),
            None => default_model().ok_or(SetupError::NoModel)?,
        };
        if is_missing_local_file(&model) {
            return Err(SetupError::ModelNotFound(model));
        }
        Ok(model)
    }

    /// Loads [`Startup::model_path`] with the device and evaluator the
    /// config asks for.
    pub fn network(&self, default_max_batch_size: usize) -> Result<Network, SetupError> {
        self.load_network(&self.model_path()?, default_max_batch_size)
    }

    /// Loads `-human-model`, if given, with this start-up's config: a net
    /// that takes a human SL profile (a metadata encoder), or an error.
    pub fn human_network(
        &self,
        default_max_batch_size: usize,
    ) -> Result<Option<Network>, SetupError> {
        match &self.human_model {
            None => Ok(None),
            Some(path) => load_human_network(path, &self.config, default_max_batch_size).map(Some),
        }
    }

    /// Loads any model with this start-up's config (several models, or
    /// one chosen later, e.g. the newest in a models folder).
    pub fn load_network(
        &self,
        model: &Path,
        default_max_batch_size: usize,
    ) -> Result<Network, SetupError> {
        load_network(model, &self.config, default_max_batch_size)
    }
}

/// Folders searched for the project's default network, in order: `models/`
/// beside the executable, in the checkout the executable was built in (the
/// nearest folder above it with a `Cargo.toml`, whatever `CARGO_TARGET_DIR`
/// inside it the build used), and in the working directory.
pub fn default_model_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(exe_dir.join("models"));
        if let Some(checkout) = exe_dir.ancestors().find(|d| d.join("Cargo.toml").is_file()) {
            dirs.push(checkout.join("models"));
        }
    }
    dirs.push(PathBuf::from("models"));
    dirs
}

/// The KataGo network files directly in `dir` (`NAME.bin.gz`, ...), oldest
/// first as the run layout orders nets; empty if the folder cannot be
/// read.
pub fn models_in(dir: &Path) -> Vec<PathBuf> {
    // Resolved, not just made absolute: the store takes each component as
    // a name, so `target/release/../../models` (beside the executable)
    // must lose its `..` first. A folder that is not there has no nets.
    let Ok(abs) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    let Ok(models) = ModelsDir::open(&StoreUrl::Local(abs)) else {
        return Vec::new();
    };
    models
        .list()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.bare)
        .map(|e| dir.join(&e.key))
        .collect()
}

/// The project's default network: the newest network in the first folder
/// of [`default_model_dirs`] that has one.
pub fn default_model() -> Option<PathBuf> {
    default_model_dirs()
        .into_iter()
        .find_map(|dir| models_in(&dir).pop())
}

/// Whether `model` is a local path with no file there (an `s3://` URL is
/// checked when it is read).
pub fn is_missing_local_file(model: &Path) -> bool {
    is_local(model) && !model.is_file()
}

fn is_local(model: &Path) -> bool {
    StoreUrl::parse(&model.to_string_lossy()).map_or(true, |u| u.is_local())
}

/// Reads a network file named by a path or an `s3://` URL. A missing
/// local file keeps its own error ([`SetupError::ModelNotFound`] is
/// checked earlier); store failures name the URL.
pub fn read_model(model: &Path) -> Result<ModelFile, SetupError> {
    let text = model.to_string_lossy();
    if is_local(model) {
        return Ok(ModelFile::load(model).map_err(NetError::from)?);
    }
    let (bytes, shown) = read_model_url(&text)?;
    Ok(ModelFile::from_file_contents(&bytes, Path::new(&shown)).map_err(NetError::from)?)
}

impl From<ConfigError> for SetupError {
    fn from(e: ConfigError) -> Self {
        SetupError::Config(Box::new(e))
    }
}

/// A loaded network ready for searches.
pub struct Network {
    /// The evaluator every search shares.
    pub evaluator: Arc<NnSearchEvaluator>,
    /// The model's name from its file.
    pub model_name: String,
    /// The model file's path.
    pub model_path: PathBuf,
    /// KataGo model version of the file.
    pub model_version: i32,
    /// Largest batch the evaluator forms.
    pub max_batch_size: usize,
    /// Whether the net runs in half precision (fp16).
    pub fp16: bool,
    /// `useFP16` as the config set it (KataGo's `usingFP16` in
    /// `kata-get-models`).
    pub fp16_mode: Enabled,
    /// The arithmetic the net runs in.
    pub precision: Precision,
    /// What it runs on, one line for the start-up log
    /// ([`crate::nn::device::RunDescription::line`]): device, GPU, precision, layout,
    /// backend, server threads.
    pub device: String,
    /// `numSearchThreads` for a config that does not set it, from the
    /// device and the cores (see [`default_search_threads`]).
    pub default_search_threads: usize,
    /// `maxMemoryMB`, when set.
    pub memory_budget: Option<MemoryBudget>,
    /// Whether the net reads a human SL profile (it has an SGF metadata
    /// encoder).
    pub uses_human_sl_profile: bool,
    /// `nnCacheSizePowerOfTwo` as the config asks (the cache has fewer
    /// slots when the memory budget trims it).
    pub asked_cache_power_of_two: u32,
    /// Evaluator server threads (one model each).
    pub server_threads: usize,
    /// Whether the net runs on CUDA.
    pub on_cuda: bool,
}

/// One loaded net as KataGo's `kata-get-models` (GTP) and `query_models`
/// (analysis) report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The model file as given (`-model`, or the default model's path).
    pub name: String,
    /// Name stored inside the model.
    pub internal_name: String,
    /// Largest batch the evaluator forms.
    pub max_batch_size: usize,
    /// Whether the net takes a human SL profile.
    pub uses_human_sl_profile: bool,
    /// Model format version.
    pub version: i32,
    /// `useFP16` as configured (`"auto"`, `"true"`, `"false"`).
    pub using_fp16: String,
}

impl ModelInfo {
    /// KataGo's JSON object (its keys; serde_json sorts them, as KataGo's
    /// JSON library does).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "internalName": self.internal_name,
            "maxBatchSize": self.max_batch_size,
            "name": self.name,
            "usesHumanSLProfile": self.uses_human_sl_profile,
            "usingFP16": self.using_fp16,
            "version": self.version,
        })
    }
}

impl Network {
    /// The net as `kata-get-models` and `query_models` report it.
    pub fn model_info(&self) -> ModelInfo {
        ModelInfo {
            name: self.model_path.display().to_string(),
            internal_name: self.model_name.clone(),
            max_batch_size: self.max_batch_size,
            uses_human_sl_profile: self.uses_human_sl_profile,
            version: self.model_version,
            using_fp16: self.fp16_mode.as_str().to_string(),
        }
    }

    /// The memory plan for `searches` searches at once under `maxMemoryMB`
    /// (none without it): each search's tree share
    /// ([`crate::search::Search::set_tree_memory_limit`]) and the start-up
    /// lines that say what the budget trimmed.
    pub fn memory_plan(&self, searches: usize) -> Option<MemoryPlan> {
        Some(
            self.memory_budget?
                .plan(self.asked_cache_power_of_two, searches),
        )
    }
}

/// The start-up line that says what this machine is (CPU, SIMD kernels,
/// cores, memory) and the value each of `settings` has on it, marked
/// "default" where the config does not set the key (the engine picked it
/// for the machine).
pub fn machine_report(cfg: &Config, settings: &[(&str, String)]) -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let memory = total_memory_bytes()
        .map(|b| format!(", {:.1} GiB of memory", b as f64 / (1u64 << 30) as f64))
        .unwrap_or_default();
    let picks: Vec<String> = settings
        .iter()
        .map(|(key, value)| {
            let origin = if cfg.contains(key) { "" } else { " (default)" };
            format!("{key} = {value}{origin}")
        })
        .collect();
    format!(
        "Machine: {}, {cores} cores{memory}; {}",
        crate::nn::cpu_info::summary(),
        picks.join(", ")
    )
}

/// `numAnalysisThreads`: positions `engine analysis` and `engine serve`
/// analyse at once (`engine tune -target analysis` reads it too).
pub const NUM_ANALYSIS_THREADS: Key<Option<i64>> = Key::opt_int("numAnalysisThreads", 1..=16384)
    .doc("Positions analysed at once (default: one per core up to 16 on the CPU, 8 on a GPU).");

/// `numAnalysisThreads` when neither the config nor `-analysis-threads`
/// sets it (KataGo requires the key): on the CPU one per core (at most 16),
/// each search with its own share of the cores, and batches formed across
/// positions; on a GPU 8, so that batches fill (`engine tune -target
/// analysis` measures the best for a machine).
pub fn default_analysis_threads(cfg: &Config) -> Result<usize, SetupError> {
    let plan = device_plan(cfg, CudaAvailability::probe(), &gpu_info)?;
    Ok(if plan.cuda_devices.is_some() {
        8
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 16))
    })
}

/// `numSearchThreads` when the config does not say: on the CPU one per
/// core (KataGo's advice; with one Rust-backend server per core each core
/// then has a search thread feeding it), at most 16; on a GPU 16, enough
/// threads to fill a batch (`engine benchmark` measures the best count for
/// a given machine).
pub fn default_search_threads(cuda: bool, cores: usize) -> usize {
    if cuda {
        16
    } else {
        cores.clamp(1, 16)
    }
}

/// Loads the `-human-model` net `path` with `cfg`, as [`load_network`]. A
/// net that takes no human SL profile (no SGF metadata encoder) is used
/// as it is, with KataGo's warning.
pub fn load_human_network(
    path: &Path,
    cfg: &Config,
    default_max_batch_size: usize,
) -> Result<Network, SetupError> {
    if is_missing_local_file(path) {
        return Err(SetupError::ModelNotFound(path.to_path_buf()));
    }
    let net = load_network(path, cfg, default_max_batch_size)?;
    if !net.uses_human_sl_profile {
        crate::logfile::startup(&format!(
            "WARNING: Human model was not trained from SGF metadata to vary by rank! \
             Did you pass the wrong model for -human-model? ({})",
            path.display()
        ));
    }
    Ok(net)
}

/// Loads `model_path` and builds the evaluator from `cfg`.
/// `default_max_batch_size` is used when the config has no `nnMaxBatchSize`.
pub fn load_network(
    model_path: &Path,
    cfg: &Config,
    default_max_batch_size: usize,
) -> Result<Network, SetupError> {
    let file = read_model(model_path)?;
    load_network_from(file, model_path, cfg, default_max_batch_size)
}

/// Reads and checks every key [`load_network`] reads, without a model: for
/// a command that loads its nets later (the gatekeeper, when a candidate
/// arrives), so that a bad value is refused at start rather than at the
/// first net, and the start-up report ([`config_key_report`]) counts these
/// keys as used.
pub fn check_network_keys(cfg: &Config) -> Result<(), SetupError> {
    cache_power_of_two(cfg)?;
    MemoryBudget::from_config(cfg).map_err(Box::new)?;
    NN_RANDOMIZE.read(cfg)?;
    DRAW_EQUIVALENT_WINS.read(cfg)?;
    NN_MAX_BATCH_SIZE.read(cfg)?;
    device_plan(cfg, CudaAvailability::probe(), &gpu_info)?;
    CpuBackend::from_config(cfg)?;
    cpu_threads(cfg, 1)?;
    Ok(())
}

/// The evaluator's keys that [`load_network`] reads itself (the device,
/// backend and memory keys are read by [`device_plan`], [`CpuBackend`] and
/// [`MemoryBudget`]).
const NN_RANDOMIZE: Key<bool> =
    Key::flag("nnRandomize", true).doc("Evaluate each position in a random symmetry of the board.");
const DRAW_EQUIVALENT_WINS: Key<f64> = Key::real("drawEquivalentWinsForWhite", 0.5, 0.0..=1.0)
    .doc("A draw counts as this many wins for White, in the net's value and the search's.");
/// `nnMaxBatchSize`: the net's largest batch.
pub const NN_MAX_BATCH_SIZE: Key<Option<i64>> = Key::opt_int("nnMaxBatchSize", 1..=65536)
    .doc("Most positions per batch of the net (default: the command's, larger on a GPU).");

/// The configuration reference's rows of the keys [`load_network`] reads
/// itself.
pub fn network_rows() -> Vec<Row> {
    let mut rows = vec![
        NN_RANDOMIZE.setting().row(),
        DRAW_EQUIVALENT_WINS.setting().row(),
        NN_MAX_BATCH_SIZE.setting().row(),
    ];
    rows.extend(net_keys::rows());
    rows
}

/// Bytes of activations one row of a batch holds on a GPU at the
/// largest board (19x19), with room for the dozen tensors alive at once.
fn bytes_per_row(file: &ModelFile, precision: Precision) -> u64 {
    (file.trunk.trunk_num_channels * 19 * 19 * precision.bytes() * 12) as u64
}

/// [`load_network`] of a model file already read (from a models folder in
/// the run store); `model_path` is how it is named.
pub fn load_network_from(
    file: ModelFile,
    model_path: &Path,
    cfg: &Config,
    default_max_batch_size: usize,
) -> Result<Network, SetupError> {
    let asked_cache_pow = cache_power_of_two(cfg)?;
    let memory_budget = MemoryBudget::from_config(cfg).map_err(Box::new)?;
    let cache_pow = memory_budget.map_or(asked_cache_pow, |b| {
        b.plan(asked_cache_pow, 1).cache_power_of_two
    });
    let randomize = NN_RANDOMIZE.read(cfg)?;
    let rand_seed = rand_seed(cfg, "nnRandSeed")?;
    let draw_value = DRAW_EQUIVALENT_WINS.read(cfg)?;
    let backend = build_backend(&file, cfg)?;
    let cuda = backend.plan.cuda_devices.is_some();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let gpu_picks: Option<GpuDefaults> = cuda.then(|| {
        gpu_defaults(
            backend.plan.gpu.as_ref(),
            backend.models.len(),
            bytes_per_row(&file, backend.plan.precision),
        )
    });
    let max_batch_size = match (&gpu_picks, NN_MAX_BATCH_SIZE.read(cfg)?) {
        (_, Some(n)) => n as usize,
        (Some(g), None) => default_max_batch_size.max(g.max_batch_size),
        (None, None) => default_max_batch_size,
    };
    let default_threads = match &gpu_picks {
        Some(g) => g.search_threads,
        None => default_search_threads(false, cores),
    };
    if let Some(g) = &gpu_picks {
        let unset: Vec<String> = [
            (!cfg.contains("nnMaxBatchSize")).then(|| format!("nnMaxBatchSize = {max_batch_size}")),
            (!cfg.contains("numSearchThreads"))
                .then(|| format!("numSearchThreads = {default_threads} (gtp, benchmark)")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !unset.is_empty() {
            eprintln!(
                "GPU defaults for keys the config does not set: {} ({}; set the keys to override)",
                unset.join(", "),
                g.why
            );
        }
    }
    let model_name = file.name.clone();
    let model_version = file.version;
    let uses_human_sl_profile = file.trunk.metadata_encoder.is_some();
    let precision = backend.plan.precision;
    let server_threads = backend.models.len();
    let evaluator = Evaluator::with_models(
        backend.models,
        EvaluatorConfig {
            max_batch_size,
            cache_size_power_of_two: cache_pow,
            rand_seed,
            callers_run: backend.callers_run,
            ..EvaluatorConfig::default()
        },
    )
    .map_err(|e| SetupError::Invalid(e.to_string()))?;
    Ok(Network {
        evaluator: Arc::new(NnSearchEvaluator::new(
            evaluator,
            NnEvalSettings {
                randomize_symmetry: randomize,
                draw_equivalent_wins_for_white: draw_value,
                has_shortterm_error: model_version >= 9,
            },
        )),
        model_name,
        model_path: model_path.to_path_buf(),
        model_version,
        max_batch_size,
        default_search_threads: default_threads,
        fp16: precision == Precision::F16,
        fp16_mode: backend.plan.fp16_mode,
        precision,
        device: backend.description.line(),
        memory_budget,
        uses_human_sl_profile,
        asked_cache_power_of_two: asked_cache_pow,
        server_threads,
        on_cuda: cuda,
    })
}

/// The start-up report on a config's keys, the same for every command
/// (`gtp`, `analysis`, `selfplay`, `match`, `gatekeeper`, `benchmark`):
/// keys that no command knows, with the nearest known key as a hint
/// (`maxVisitz` → `maxVisits`), and keys known but not read by `command`.
/// Call it once the command
/// has read every key it uses, and print each line where the command logs.
/// `engine learn` builds the same report over its own keys and refuses to
/// start on it ([`crate::learn`]).
pub fn config_key_report(cfg: &Config, command: &str) -> Vec<String> {
    cfg.key_report(command, KATAGO_KEYS).lines()
}

/// The keys of the KataGo-style commands: every key KataGo 1.17.2 knows
/// and the engine's own ([`crate::config::KNOWN_KEYS`]).
pub const KATAGO_KEYS: Vocabulary<'static> = Vocabulary::new(crate::config::KNOWN_KEYS);

/// KataGo's aliases for search parameter names in configs: the analysis
/// config may say `numSearchThreadsPerAnalysisThread` for `numSearchThreads`.
const SEARCH_KEY_ALIASES: &[(&str, &str)] =
    &[("numSearchThreadsPerAnalysisThread", "numSearchThreads")];

/// The search parameter settings of an `engine analysis` config, as
/// `(KataGo name, value)` pairs, with the analysis engine's own default
/// (`conservativePass = true`) first; marks those keys used.
pub fn analysis_search_settings(cfg: &Config) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    if !cfg.contains("conservativePass") {
        out.push((
            "conservativePass".to_string(),
            serde_json::Value::Bool(true),
        ));
    }
    out.extend(search_settings(cfg));
    out
}

/// The search parameter settings of a config, as `(KataGo name, value)`
/// pairs ready for [`crate::search::SearchParams::from_overrides`] (aliases
/// resolved); marks those keys used. Program-specific defaults (GTP's and
/// the analysis engine's `conservativePass = true`) are the caller's.
pub fn search_settings(cfg: &Config) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    if let serde_json::Value::Object(all) = cfg.to_json_value() {
        for (key, value) in all {
            let name = SEARCH_KEY_ALIASES
                .iter()
                .find(|(alias, _)| *alias == key)
                .map_or(key.as_str(), |(_, name)| name);
            if crate::search::SearchParams::NAMES.contains(&name) {
                cfg.mark_used(&key);
                out.push((name.to_string(), value));
            }
        }
    }
    out
}

/// KataGo's start-up error for a `humanSL*` search key (but
/// `humanSLProfile`, which a human net as the main model reads) given
/// without `-human-model`.
pub fn refuse_human_keys_without_human_model(
    cfg: &Config,
    human_model: bool,
) -> Result<(), SetupError> {
    if human_model {
        return Ok(());
    }
    // Per-bot keys of a match config carry the bot's index.
    let given = cfg.keys().find(|key| {
        let name = key.trim_end_matches(|c: char| c.is_ascii_digit());
        name.starts_with("humanSL") && name != "humanSLProfile"
    });
    match given {
        None => Ok(()),
        Some(key) => Err(SetupError::Invalid(format!(
            "Provided parameter {key} but no human model was specified (e.g -human-model b18c384nbt-humanv0.bin.gz)"
        ))),
    }
}

/// KataGo's seed settings (`nnRandSeed`, `searchRandSeed`): any text (or
/// a TOML integer), made a 64-bit seed by a fixed hash, so that the same
/// text gives the same run on every machine and build. `None` when the
/// key is absent (a random seed).
pub fn rand_seed(cfg: &Config, key: &str) -> Result<Option<u64>, ConfigError> {
    if !cfg.contains(key) {
        return Ok(None);
    }
    let text = match cfg.get_string(key) {
        Ok(text) => text,
        Err(_) => cfg.get_i64(key, i64::MIN..=i64::MAX)?.to_string(),
    };
    Ok(Some(seed_from_text(&text)))
}

/// FNV-1a over the text's bytes, then SplitMix64's finaliser (texts that
/// differ in one letter give unrelated seeds).
fn seed_from_text(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::device::GpuInfo;

    /// The built-in configs parse, name only keys the engine knows, and
    /// bound the search, so that a GUI's "no time limit" still ends.
    #[test]
    fn built_in_configs_parse_and_limit_the_search() {
        for built_in in [GTP_CONFIG, ANALYSIS_CONFIG] {
            let cfg = load_config_or_built_in(None, &[], built_in)
                .unwrap_or_else(|e| panic!("{}: {e}", built_in.name));
            assert_eq!(
                cfg.unknown_keys(),
                Vec::<String>::new(),
                "{}",
                built_in.name
            );
            assert!(
                cfg.get_i64("maxVisits", 1..=100_000).is_ok(),
                "{} sets no visit limit",
                built_in.name
            );
        }
    }

    fn cfg(text: &str) -> Config {
        Config::from_toml_str(text, "test.toml").unwrap()
    }

    /// [`check_network_keys`] reads every key that loading a net reads (and
    /// only network keys), so a command that loads its nets later never
    /// reports a key it will use. (Loading on the Rust backend leaves
    /// `numEigenThreadsPerModel` unread: libtorch's setting.)
    #[test]
    fn network_keys_checked_without_a_model_are_those_loading_reads() {
        let text = "nnCacheSizePowerOfTwo = 10\nnnRandomize = false\n\
                    drawEquivalentWinsForWhite = 0.5\nnnMaxBatchSize = 4\n\
                    numNNServerThreadsPerModel = 1\nnumEigenThreadsPerModel = 1\n\
                    nnCpuBackend = \"auto\"\nuseFP16 = false\ncudaUseNHWC = \"auto\"\n\
                    maxVisits = 5\n";
        let checked = cfg(text);
        check_network_keys(&checked).unwrap();
        let loaded = cfg(text);
        let file = crate::nn::old_version_fixture(7);
        load_network_from(file, Path::new("fixture-v7"), &loaded, 8).unwrap();
        assert_eq!(checked.unused_keys(), vec!["maxVisits".to_string()]);
        assert!(loaded.unused_keys().contains(&"maxVisits".to_string()));
        // And a bad value is refused without a model.
        assert!(check_network_keys(&cfg("nnCacheSizePowerOfTwo = 40")).is_err());
    }

    const NO_CUDA: CudaAvailability = CudaAvailability {
        built: false,
        devices: 0,
    };
    const NO_GPU: CudaAvailability = CudaAvailability {
        built: true,
        devices: 0,
    };

    fn gpus(n: usize) -> CudaAvailability {
        CudaAvailability {
            built: true,
            devices: n,
        }
    }

    fn gpu_of(cc: (u32, u32)) -> impl Fn(usize) -> Option<GpuInfo> {
        move |_| {
            Some(GpuInfo {
                name: "Test GPU".into(),
                total_memory: 16 << 30,
                multiprocessors: 40,
                compute_capability: cc,
            })
        }
    }

    fn plan(text: &str, avail: CudaAvailability) -> Result<DevicePlan, SetupError> {
        device_plan(&cfg(text), avail, &gpu_of((9, 0)))
    }

    /// Nothing asked: CUDA device 0 when there is one, else the CPU; a
    /// config that says fp16 off (configs/gtp.toml) does not ask for CUDA.
    #[test]
    fn device_plan_defaults() {
        for text in ["", "useFP16 = false", "cudaUseFP16 = \"auto\""] {
            let p = plan(text, NO_CUDA).unwrap();
            assert_eq!(p.cuda_devices, None, "{text}");
            assert_eq!(p.precision, Precision::F32);
        }
        let p = plan("", gpus(2)).unwrap();
        assert_eq!(p.cuda_devices, Some(vec![0]));
        assert_eq!((p.precision, p.nhwc), (Precision::F16, Some(true)));
        assert_eq!(p.asked_by, None);
        let p = plan("useFP16 = false", gpus(1)).unwrap();
        assert_eq!((p.precision, p.nhwc), (Precision::F32, Some(false)));
    }

    /// Each key that asks for CUDA gives the clear error when CUDA is
    /// missing, naming itself; never a CPU plan.
    #[test]
    fn device_plan_never_falls_back_to_the_cpu() {
        for (text, key) in [
            ("deviceToUse = 0", "deviceToUse"),
            ("cudaDeviceToUse = 0", "cudaDeviceToUse"),
            ("gpuToUse = 0", "gpuToUse"),
            ("cudaDeviceToUseThread0 = 0", "cudaDeviceToUseThread0"),
            ("useFP16 = true", "useFP16 = true"),
            ("cudaUseFP16 = true", "cudaUseFP16 = true"),
        ] {
            let e = plan(text, NO_CUDA).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("{key} asks for CUDA")),
                "{text}: {e}"
            );
            assert!(e.contains(crate::nn::device::NO_CUDA_BUILD_WORDS), "{e}");
            let e = plan(text, NO_GPU).unwrap_err().to_string();
            assert!(e.contains("no CUDA device is visible"), "{text}: {e}");
        }
        let e = plan("deviceToUse = 1", gpus(1)).unwrap_err().to_string();
        assert!(
            e.contains("asks for CUDA device 1, but only 1 CUDA device"),
            "{e}"
        );
    }

    /// KataGo's per-thread keys: one server thread per GPU.
    #[test]
    fn device_plan_several_gpus() {
        let text = "numNNServerThreadsPerModel = 2\ncudaDeviceToUseThread0 = 1\n\
                    cudaDeviceToUseThread1 = 0\ndeviceToUse = 5";
        let p = plan(text, gpus(2)).unwrap();
        assert_eq!(p.cuda_devices, Some(vec![1, 0]));
        assert_eq!(p.asked_by.as_deref(), Some("cudaDeviceToUseThread0"));
        let e = plan(text, gpus(1)).unwrap_err().to_string();
        assert!(
            e.starts_with("cudaDeviceToUseThread0 asks for CUDA device 1"),
            "{e}"
        );
        // Threads without their own key take the general one (KataGo's order).
        let p = plan(
            "numNNServerThreadsPerModel = 3\ncudaDeviceToUseThread2 = 1\ndeviceToUse = 0",
            gpus(2),
        )
        .unwrap();
        assert_eq!(p.cuda_devices, Some(vec![0, 0, 1]));
        // Two server threads on one GPU.
        let p = plan("numNNServerThreadsPerModel = 2", gpus(1)).unwrap();
        assert_eq!(p.cuda_devices, Some(vec![0, 0]));
    }

    /// KataGo's fp16/NHWC rules by compute capability, and nnPrecision.
    #[test]
    fn device_plan_precision_and_layout() {
        let at = |text: &str, cc| device_plan(&cfg(text), gpus(1), &gpu_of(cc));
        let p = at("", (6, 1)).unwrap();
        assert_eq!((p.precision, p.nhwc), (Precision::F32, Some(false)));
        let p = at("cudaUseFP16 = true", (6, 1)).unwrap();
        assert_eq!((p.precision, p.nhwc), (Precision::F16, Some(false)));
        let e = at("cudaUseFP16 = true", (5, 0)).unwrap_err().to_string();
        assert!(e.contains("compute capability 5.0; fp16 needs 5.3"), "{e}");
        let e = at("nnPrecision = \"bf16\"", (7, 5))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bf16 needs 8.0"), "{e}");
        // int8 is the CPU's (the Rust backend's VNNI kernels).
        let e = at("nnPrecision = \"int8\"", (9, 0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("runs on the CPU only"), "{e}");
        let p = at("nnPrecision = \"bf16\"\nuseFP16 = true", (9, 0)).unwrap();
        assert_eq!((p.precision, p.nhwc), (Precision::BF16, Some(true)));
        let p = at("cudaUseNHWC = false", (9, 0)).unwrap();
        assert_eq!((p.precision, p.nhwc), (Precision::F16, Some(false)));
        let p = at("cudaUseNHWC = true\nuseFP16 = false", (9, 0)).unwrap();
        assert_eq!((p.precision, p.nhwc), (Precision::F32, Some(true)));
        // Unknown GPU: assume tensor cores, as current GPUs have.
        let p = device_plan(&cfg(""), gpus(1), &|_| None).unwrap();
        assert_eq!(p.precision, Precision::F16);
        // On the CPU nnPrecision applies (libtorch runs it).
        let p = plan("nnPrecision = \"fp16\"", NO_CUDA).unwrap();
        assert_eq!((p.cuda_devices, p.precision), (None, Precision::F16));
        assert!(plan("nnPrecision = \"fp8\"", NO_CUDA).is_err());
        // auto: as unset on CUDA; on the CPU fp32 until the backend decides.
        let p = at("nnPrecision = \"auto\"", (9, 0)).unwrap();
        assert_eq!((p.precision, p.precision_auto), (Precision::F16, true));
        let p = at("nnPrecision = \"auto\"\nuseFP16 = false", (9, 0)).unwrap();
        assert_eq!(p.precision, Precision::F32);
        let p = plan("nnPrecision = \"Auto\"", NO_CUDA).unwrap();
        assert_eq!(
            (p.cuda_devices, p.precision, p.precision_auto),
            (None, Precision::F32, true)
        );
        assert!(
            !plan("nnPrecision = \"fp32\"", NO_CUDA)
                .unwrap()
                .precision_auto
        );
        // On the CPU an unset nnPrecision is auto, unless useFP16 = false
        // (KataGo's "no half precision") pins fp32; a said auto wins.
        let auto_on_cpu = |text: &str| plan(text, NO_CUDA).unwrap().precision_auto;
        assert!(auto_on_cpu(""));
        assert!(auto_on_cpu("useFP16 = \"auto\""));
        assert!(!auto_on_cpu("useFP16 = false"));
        assert!(!auto_on_cpu("cudaUseFP16 = false"));
        assert!(auto_on_cpu("nnPrecision = \"auto\"\nuseFP16 = false"));
        assert!(!auto_on_cpu("nnPrecision = \"bf16\""));
        // On CUDA an unset nnPrecision is not the CPU's auto.
        assert!(!at("", (9, 0)).unwrap().precision_auto);
    }

    /// `cpu` keeps the net on the CPU beside a GPU; it cannot be mixed
    /// with a request for CUDA.
    #[test]
    fn device_plan_cpu_on_request() {
        let p = plan("deviceToUse = \"cpu\"", gpus(1)).unwrap();
        assert_eq!(p.cuda_devices, None);
        let e = plan("deviceToUse = \"cpu\"\nuseFP16 = true", gpus(1)).unwrap_err();
        assert!(e.to_string().contains("use one or the other"), "{e}");
    }

    /// The same seed text gives the same seed; other texts, integers and an
    /// absent key differ.
    #[test]
    fn rand_seeds_come_from_the_text() {
        let cfg = |text: &str| Config::from_toml_str(text, "t.toml").unwrap();
        let a = rand_seed(&cfg("searchRandSeed = \"hijklmn\"\n"), "searchRandSeed").unwrap();
        let b = rand_seed(&cfg("searchRandSeed = \"hijklmn\"\n"), "searchRandSeed").unwrap();
        let c = rand_seed(&cfg("searchRandSeed = \"hijklmo\"\n"), "searchRandSeed").unwrap();
        let n = rand_seed(&cfg("searchRandSeed = 7\n"), "searchRandSeed").unwrap();
        assert!(a.is_some() && a == b && a != c && n.is_some() && n != a);
        assert_eq!(rand_seed(&cfg(""), "searchRandSeed").unwrap(), None);
        assert!(rand_seed(&cfg("searchRandSeed = true\n"), "searchRandSeed").is_err());
    }

    /// A named file wins over the built-in config; overrides apply to both.
    #[test]
    fn named_config_and_overrides_win_over_the_built_in_one() {
        let dir = std::env::temp_dir().join(format!("setup-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(&file, "maxVisits = 7\n").unwrap();
        let named = load_config_or_built_in(Some(&file), &[], GTP_CONFIG).unwrap();
        assert_eq!(named.get_i64("maxVisits", 1..=100).unwrap(), 7);
        assert!(!named.contains("resignThreshold"));
        let overridden =
            load_config_or_built_in(None, &["maxVisits=9".to_string()], GTP_CONFIG).unwrap();
        assert_eq!(overridden.get_i64("maxVisits", 1..=100).unwrap(), 9);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
