//! Start-up shared by every command (`gtp`, `analysis`, `benchmark`, and
//! `selfplay`/`train` to come): the shared flags ([`EngineArgs`]),
//! [`start`] (config file plus `-override-config`, then the network named
//! on the command line or the project's default one in `models/`), and
//! [`load_network`] (device and batching evaluator from the config keys
//! KataGo uses: `nnMaxBatchSize`, `nnCacheSizePowerOfTwo`,
//! `numNNServerThreadsPerModel`, `nnRandomize`, `useFP16`,
//! `cudaDeviceToUse`, `numEigenThreadsPerModel`). A command that picks its
//! model later (the newest in a models folder) or runs several calls
//! [`Startup::load_network`] once per model.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use crate::config::{Config, ConfigError};
use crate::nn::{BatchModel, CpuModel, Evaluator, EvaluatorConfig, Model, ModelFile, NetError};
use crate::search::{NnEvalSettings, NnSearchEvaluator};
use crate::store::layout::{read_model_url, ModelsDir};
use crate::store::{StoreError, StoreUrl};

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
}

/// Flags shared by the engine's commands (KataGo's spelling).
#[derive(Debug, Clone, Default, Args)]
pub struct EngineArgs {
    /// KataGo network file (.bin.gz or .bin): a path, or an
    /// `s3://bucket/key` URL.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// TOML config file (`gtp` and `analysis` default to the built-in copy
    /// of `configs/gtp.toml` or `configs/analysis.toml`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Config overrides, `key=value[,key=value...]`; may be repeated.
    #[arg(long = "override-config")]
    pub override_config: Vec<String>,
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
/// beside the executable, in the checkout the executable was built in
/// (`target/<profile>/../../models`), and in the working directory.
pub fn default_model_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(exe_dir.join("models"));
        dirs.push(exe_dir.join("../../models"));
    }
    dirs.push(PathBuf::from("models"));
    dirs
}

/// The KataGo network files directly in `dir` (`NAME.bin.gz`, ...), oldest
/// first as the run layout orders nets; empty if the folder cannot be
/// read.
pub fn models_in(dir: &Path) -> Vec<PathBuf> {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
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
    /// Whether the net runs in half precision.
    pub fp16: bool,
    /// Human-readable device, e.g. `CPU (2 threads)` or `CUDA:0`.
    pub device: String,
    /// `numSearchThreads` for a config that does not set it, from the
    /// device and the cores (see [`default_search_threads`]).
    pub default_search_threads: usize,
}

/// Server threads and libtorch intra-op threads on the CPU:
/// `numNNServerThreadsPerModel` servers (default 1), each with
/// `numEigenThreadsPerModel` libtorch threads (default the cores shared
/// out among the servers). One server batching all search threads beats
/// one single-threaded server per search thread as KataGo's Eigen backend
/// has: libtorch's per-operator overhead is large for small nets, and a
/// batch of two costs far less than two batches of one (measured with
/// g170-b6c96 on 19x19, 2 cores, 2 search threads: 41 against 28-33
/// visits/s, the two runs side by side).
pub fn cpu_threads(cfg: &Config, cores: usize) -> Result<(usize, usize), SetupError> {
    let servers = cfg.get_i64_or("numNNServerThreadsPerModel", 1, 1..=1024)? as usize;
    let default_intra = (cores / servers).max(1) as i64;
    let intra = cfg.get_i64_or("numEigenThreadsPerModel", default_intra, 1..=1024)? as usize;
    Ok((servers, intra))
}

/// Which CPU forward pass runs the net (config key `nnCpuBackend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuBackend {
    /// The Rust backend when it supports the net, else libtorch.
    Auto,
    /// The pure-Rust backend ([`CpuModel`]); an error if the net needs
    /// something it lacks.
    Rust,
    /// libtorch (with the hand-written Winograd convolutions).
    Libtorch,
}

impl CpuBackend {
    /// `nnCpuBackend` from the config (default `auto`).
    pub fn from_config(cfg: &Config) -> Result<CpuBackend, SetupError> {
        if !cfg.contains("nnCpuBackend") {
            return Ok(CpuBackend::Auto);
        }
        Ok(
            match cfg.get_enum("nnCpuBackend", &["auto", "rust", "libtorch"])? {
                "rust" => CpuBackend::Rust,
                "libtorch" => CpuBackend::Libtorch,
                _ => CpuBackend::Auto,
            },
        )
    }
}

/// Whether the CPU net runs on the Rust backend, from `nnCpuBackend`.
fn use_rust_backend(backend: CpuBackend, file: &ModelFile) -> Result<bool, SetupError> {
    let why_not = CpuModel::unsupported(file);
    match backend {
        CpuBackend::Libtorch => Ok(false),
        CpuBackend::Auto => Ok(why_not.is_none()),
        CpuBackend::Rust => match why_not {
            None => Ok(true),
            Some(what) => Err(SetupError::Invalid(format!(
                "nnCpuBackend = \"rust\" cannot run model {}: {what}; \
                 use \"auto\" or \"libtorch\"",
                file.name
            ))),
        },
    }
}

/// Server threads of the Rust CPU backend when the config does not say:
/// one per core (each runs a single-threaded forward pass), at most 16 so
/// that big machines do not hold dozens of copies of a big net.
pub fn default_rust_servers(cores: usize) -> usize {
    cores.clamp(1, 16)
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

/// [`load_network`] of a model file already read (from a models folder in
/// the run store); `model_path` is how it is named.
pub fn load_network_from(
    file: ModelFile,
    model_path: &Path,
    cfg: &Config,
    default_max_batch_size: usize,
) -> Result<Network, SetupError> {
    let max_batch_size =
        cfg.get_i64_or("nnMaxBatchSize", default_max_batch_size as i64, 1..=65536)? as usize;
    let cache_pow = cfg.get_i64_or("nnCacheSizePowerOfTwo", 20, 0..=26)? as u32;
    let servers = cfg.get_i64_or("numNNServerThreadsPerModel", 1, 1..=64)? as usize;
    let randomize = cfg.get_bool_or("nnRandomize", true)?;
    let draw_value = cfg.get_f64_or("drawEquivalentWinsForWhite", 0.5, 0.0..=1.0)?;
    // KataGo's `useFP16` is true, false or auto (half precision where it
    // is fast: CUDA).
    let want_fp16 = if cfg.contains("useFP16") {
        !matches!(cfg.get_enabled("useFP16")?, crate::config::Enabled::False)
    } else {
        false
    };
    let cuda = tch::Cuda::is_available();
    let device = if cuda {
        let key = if cfg.contains("cudaDeviceToUse") {
            "cudaDeviceToUse"
        } else {
            "deviceToUse"
        };
        let idx = cfg.get_i64_or(key, 0, 0..=63)? as usize;
        tch::Device::Cuda(idx)
    } else {
        tch::Device::Cpu
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Read (and checked) even on CUDA, where it does not apply.
    let backend = CpuBackend::from_config(cfg)?;
    let rust = !cuda && use_rust_backend(backend, &file)?;
    let cpu_servers = if cuda {
        servers
    } else if rust {
        // Each server runs its own single-threaded forward pass (KataGo's
        // Eigen way), so one per core by default.
        cfg.get_i64_or(
            "numNNServerThreadsPerModel",
            default_rust_servers(cores) as i64,
            1..=64,
        )? as usize
    } else {
        let (n, intra) = cpu_threads(cfg, cores)?;
        // Server threads read libtorch's global setting when they first
        // run an operator, so this must come before the evaluator starts.
        tch::set_num_threads(intra as i32);
        n
    };
    let fp16 = want_fp16 && cuda;
    let model_name = file.name.clone();
    let model_version = file.version;
    let mut models: Vec<Box<dyn BatchModel>> = Vec::with_capacity(cpu_servers);
    // One model per server thread, as KataGo does; the Rust backend's
    // share one copy of the weights.
    if rust {
        let first = CpuModel::from_file(&file)?;
        for _ in 1..cpu_servers {
            models.push(Box::new(first.replica()));
        }
        models.push(Box::new(first));
    } else {
        for _ in 0..cpu_servers {
            models.push(Box::new(Model::from_file(&file, device, fp16)?));
        }
    }
    let evaluator = Evaluator::with_models(
        models,
        EvaluatorConfig {
            max_batch_size,
            cache_size_power_of_two: cache_pow,
            ..EvaluatorConfig::default()
        },
    )
    .map_err(|e| SetupError::Invalid(e.to_string()))?;
    let device_text = match device {
        tch::Device::Cuda(i) => format!("CUDA:{i}{}", if fp16 { " fp16" } else { "" }),
        _ if rust => format!(
            "CPU, Rust backend ({cpu_servers} server thread{}, 1 thread each)",
            if cpu_servers == 1 { "" } else { "s" },
        ),
        _ => format!(
            "CPU ({cpu_servers} server thread{}, {} libtorch thread{} each)",
            if cpu_servers == 1 { "" } else { "s" },
            tch::get_num_threads(),
            if tch::get_num_threads() == 1 { "" } else { "s" }
        ),
    };
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
        default_search_threads: default_search_threads(cuda, cores),
        fp16,
        device: device_text,
    })
}

/// Start-up warnings for the search parameters the config sets that are
/// accepted but have no effect here ([`crate::search::NO_EFFECT_PARAMS`]).
pub fn no_effect_warnings(cfg: &Config) -> Vec<String> {
    let keys: Vec<&str> = crate::search::NO_EFFECT_PARAMS
        .iter()
        .copied()
        .filter(|k| cfg.contains(k))
        .collect();
    crate::search::no_effect_warnings(keys)
}

/// KataGo's aliases for search parameter names in configs: the analysis
/// config may say `numSearchThreadsPerAnalysisThread` for `numSearchThreads`.
const SEARCH_KEY_ALIASES: &[(&str, &str)] =
    &[("numSearchThreadsPerAnalysisThread", "numSearchThreads")];

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

#[cfg(test)]
mod tests {
    use super::*;

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
