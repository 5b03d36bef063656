//! The models of an evaluator and what they run on: the pure-Rust CPU
//! backend, or (feature `torch`) libtorch on the CPU or on CUDA devices, as
//! the config's device, precision and `nnCpuBackend` keys ask.

use super::net_keys::{NN_CPU_BACKEND, NN_INTRA_THREADS, NN_SERVER_THREADS};
use super::{device_plan, DevicePlan, SetupError};
use crate::config::{Config, ConfigError};
#[cfg(feature = "torch")]
use crate::nn::device::libtorch_backend;
use crate::nn::device::{gpu_info, CudaAvailability, Precision, RunDescription, ServerDevice};
use crate::nn::{BatchModel, CpuModel, ModelFile};
#[cfg(feature = "torch")]
use crate::nn::{Model, ModelOptions};

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
    let servers = NN_SERVER_THREADS.read(cfg)?.unwrap_or(1) as usize;
    let default_intra = (cores / servers).max(1) as i64;
    let intra = NN_INTRA_THREADS.read(cfg)?.unwrap_or(default_intra) as usize;
    Ok((servers, intra))
}

/// Which CPU forward pass runs the net (config key `nnCpuBackend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuBackend {
    /// The Rust backend in fp32 (it runs every net) and in bf16 on a CPU
    /// with AVX-512 BF16, libtorch in another precision.
    Auto,
    /// The pure-Rust backend ([`CpuModel`]); an error in a precision it
    /// cannot run here (fp16; bf16 without AVX-512 BF16).
    Rust,
    /// libtorch (with the hand-written Winograd convolutions).
    Libtorch,
}

impl CpuBackend {
    /// `nnCpuBackend` from the config (default `auto`).
    pub fn from_config(cfg: &Config) -> Result<CpuBackend, SetupError> {
        Ok(
            match NN_CPU_BACKEND.read_choice(cfg, &["auto", "rust", "libtorch"])? {
                Some("rust") => CpuBackend::Rust,
                Some("libtorch") => CpuBackend::Libtorch,
                _ => CpuBackend::Auto,
            },
        )
    }
}

/// Server threads of the Rust CPU backend when the config does not say:
/// one per core (each runs a single-threaded forward pass), at most 16 so
/// that big machines do not hold dozens of copies of a big net.
pub fn default_rust_servers(cores: usize) -> usize {
    cores.clamp(1, 16)
}

/// `numNNServerThreadsPerModel` for the Rust CPU backend: at most 64,
/// [`default_rust_servers`] when the config does not say.
pub fn rust_servers(cfg: &Config, cores: usize) -> Result<usize, ConfigError> {
    Ok(NN_SERVER_THREADS
        .read_within(cfg, 1..=64)?
        .map_or(default_rust_servers(cores), |n| n as usize))
}

/// The models of one evaluator (one per server thread) and what they run
/// on, built as the config asks ([`device_plan`], `nnCpuBackend`,
/// `numNNServerThreadsPerModel`, `numEigenThreadsPerModel`).
pub struct Backend {
    /// One per server thread.
    pub models: Vec<Box<dyn BatchModel>>,
    /// What they run on.
    pub description: RunDescription,
    /// The device plan.
    pub plan: DevicePlan,
    /// Whether search threads may run the net themselves on a free model
    /// ([`crate::nn::EvaluatorConfig::callers_run`]): the Rust backend's
    /// single-threaded forward passes, not libtorch's or a GPU's batches.
    pub callers_run: bool,
}

/// The narrowest trunk `nnPrecision = "auto"` runs in a reduced
/// precision. Measured on AMD Zen 5 (`docs/RESULTS.md`): g170's 96
/// channels run 1.3-1.9x faster in bf16 and 1.4-2.9x in int8, at no cost
/// by SPRT on 9x9 (H1 accepted for both); the project's 32 channels lose
/// strength in each: bf16 -9 Elo on 9x9 (H0 accepted, and 0.8-1.0x fp32's
/// speed), int8 -30 Elo [-53, -9] on 19x19 after 960 games (SPRT
/// undecided), though no loss on 9x9.
pub const AUTO_REDUCED_MIN_TRUNK_CHANNELS: usize = 64;

/// The Rust backend's reduced-precision kernels that run on this CPU, as
/// [`auto_cpu_precision`] weighs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReducedKernels {
    /// AVX-512 BF16 (`cpu_info::bf16_kernels_run`).
    pub bf16: bool,
    /// AVX-512 VNNI or AVX-VNNI (`cpu_info::int8_kernels_run`): `auto`
    /// does not pick int8, but says that `nnPrecision = "int8"` runs.
    pub int8: bool,
}

/// `nnPrecision = "auto"` (the CPU's default) on the CPU, where the
/// backend may be the Rust one, with the reason the start-up line gives:
/// bf16 for a trunk of at least [`AUTO_REDUCED_MIN_TRUNK_CHANNELS`]
/// channels where its kernels run (g170 b6c96: 1.3-1.9x fp32's
/// evaluations on Zen 5, no loss at equal visits by SPRT on 9x9 (H0 -10
/// Elo), none of 30 Elo at equal visits and stronger at equal time by
/// SPRTs on 19x19), else fp32.
///
/// Never int8, though its kernels run where the CPU has VNNI (1.2-2.2x
/// fp32 on 256-bit VNNI, no loss by SPRT on 9x9 for g170 b6c96): the issue
/// that made `auto` the default asks for no loss on 9x9 *and* 19x19, and
/// int8's 19x19 SPRT(-30, 0) for g170 is undecided (`docs/RESULTS.md`,
/// "int8 on CPUs with VNNI"). On such a CPU the reason says that
/// `nnPrecision = "int8"` runs it.
///
/// A narrower trunk stays fp32, and so does libtorch on the CPU (bf16 was
/// measured with the Rust kernels only). `docs/RESULTS.md` has the
/// figures.
pub fn auto_cpu_precision(
    backend: CpuBackend,
    kernels: ReducedKernels,
    trunk_channels: usize,
) -> (Precision, String) {
    let auto = |p, why: &str| (p, format!("nnPrecision = auto: {why}"));
    if backend == CpuBackend::Libtorch {
        return auto(Precision::F32, "fp32 with nnCpuBackend = libtorch");
    }
    if trunk_channels < AUTO_REDUCED_MIN_TRUNK_CHANNELS {
        return auto(
            Precision::F32,
            "fp32 for a trunk under 64 channels, which bf16 and int8 cost strength",
        );
    }
    match (kernels.bf16, kernels.int8) {
        (true, _) => auto(Precision::BF16, "AVX-512 BF16 here"),
        (false, true) => auto(
            Precision::F32,
            "fp32; VNNI here, but int8 is not yet shown to cost no strength on 19x19 \
             (nnPrecision = int8 runs it)",
        ),
        (false, false) => auto(Precision::F32, "no AVX-512 BF16 or VNNI kernels here"),
    }
}

/// [`auto_cpu_precision`] for `file` on this CPU's kernels: what
/// `nnPrecision = "auto"` runs it in, and why. `engine tune` asks it too,
/// so that it tries a reduced precision only where `auto` would run one.
pub fn auto_cpu_precision_here(backend: CpuBackend, file: &ModelFile) -> (Precision, String) {
    let kernels = ReducedKernels {
        bf16: crate::nn::cpu_info::bf16_kernels_run(),
        int8: crate::nn::cpu_info::int8_kernels_run(),
    };
    auto_cpu_precision(backend, kernels, file.trunk.trunk_num_channels)
}

/// Builds [`Backend`] for `file` from `cfg`.
pub fn build_backend(file: &ModelFile, cfg: &Config) -> Result<Backend, SetupError> {
    let mut plan = device_plan(cfg, CudaAvailability::probe(), &gpu_info)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Read (and checked) even on CUDA, where it does not apply.
    let backend = CpuBackend::from_config(cfg)?;
    if let Some(devices) = &plan.cuda_devices {
        let (models, description) = cuda_models(file, devices, &plan)?;
        return Ok(Backend {
            models,
            description,
            plan,
            callers_run: false,
        });
    }
    let precision_why = plan.precision_auto.then(|| {
        let (precision, why) = auto_cpu_precision_here(backend, file);
        plan.precision = precision;
        why
    });
    // The Rust backend runs fp32, bf16 where the CPU has AVX-512 BF16 and
    // int8 where it has AVX-512 VNNI or AVX-VNNI; fp16 needs libtorch, and
    // int8 has no other backend.
    let rust_runs = match plan.precision {
        Precision::F32 => true,
        Precision::BF16 => crate::nn::cpu_info::bf16_kernels_run(),
        Precision::Int8 => crate::nn::cpu_info::int8_kernels_run(),
        Precision::F16 => false,
    };
    if plan.precision == Precision::Int8 && !(rust_runs && backend != CpuBackend::Libtorch) {
        return Err(SetupError::Invalid(format!(
            "nnPrecision = \"int8\" runs only on the Rust backend on a CPU with AVX-512 VNNI or AVX-VNNI, but {}; use fp32 or bf16",
            if backend == CpuBackend::Libtorch {
                "nnCpuBackend = \"libtorch\""
            } else {
                "this CPU lacks both (or ENGINE_SIMD turned them off)"
            }
        )));
    }
    let rust = match backend {
        CpuBackend::Libtorch => false,
        CpuBackend::Auto => rust_runs,
        CpuBackend::Rust if rust_runs => true,
        CpuBackend::Rust => {
            return Err(SetupError::Invalid(format!(
                "nnCpuBackend = \"rust\" runs fp32, bf16 on a CPU with AVX-512 BF16 and int8 on one with AVX-512 VNNI or AVX-VNNI, but nnPrecision = {}{}; use \"auto\" or \"libtorch\"",
                plan.precision,
                match plan.precision {
                    Precision::BF16 => " and this CPU lacks AVX-512 BF16 (or ENGINE_SIMD turned it off)",
                    _ => "",
                }
            )))
        }
    };
    let (models, threads_each) = if rust {
        // Each server runs its own single-threaded forward pass (KataGo's
        // Eigen way), so one per core by default; the servers share one
        // copy of the weights.
        let servers = rust_servers(cfg, cores)?;
        let first = CpuModel::with_precision(file, plan.precision)?;
        let mut models: Vec<Box<dyn BatchModel>> = Vec::new();
        for _ in 1..servers {
            models.push(Box::new(first.replica()));
        }
        models.push(Box::new(first));
        (models, 1)
    } else {
        libtorch_cpu_models(file, cfg, cores, plan.precision)?
    };
    // int8 names its kernels (512-bit or 256-bit differ in speed, and
    // `ENGINE_SIMD` picks between them) and how much of the net they run.
    let precision_why = precision_why.or_else(|| {
        (plan.precision == Precision::Int8)
            .then(crate::nn::cpu_info::Int8Kernels::detect)
            .flatten()
            .map(|kernels| {
                format!(
                    "{} kernels, {:.0}% of the multiply-adds",
                    kernels.name(),
                    100.0 * crate::nn::int8_share(file)
                )
            })
    });
    let description = RunDescription {
        devices: vec![ServerDevice::Cpu; models.len()],
        gpu: None,
        precision: plan.precision,
        precision_why,
        nhwc: true,
        backend: if rust {
            "Rust backend".to_string()
        } else {
            "libtorch".to_string()
        },
        threads_per_server: Some(threads_each),
    };
    Ok(Backend {
        models,
        description,
        plan,
        callers_run: rust,
    })
}

/// One libtorch model per CUDA device of the plan, and what they run on.
#[cfg(feature = "torch")]
fn cuda_models(
    file: &ModelFile,
    devices: &[usize],
    plan: &DevicePlan,
) -> Result<(Vec<Box<dyn BatchModel>>, RunDescription), SetupError> {
    let opts = ModelOptions {
        precision: plan.precision,
        channels_last: plan.nhwc,
    };
    let mut models: Vec<Box<dyn BatchModel>> = Vec::new();
    let mut nhwc = false;
    for &i in devices {
        let m = Model::with_options(file, tch::Device::Cuda(i), opts)?;
        nhwc = m.is_channels_last();
        models.push(Box::new(m));
    }
    let description = RunDescription {
        devices: devices.iter().map(|&i| ServerDevice::Cuda(i)).collect(),
        gpu: plan.gpu.clone(),
        precision: plan.precision,
        precision_why: None,
        nhwc,
        backend: libtorch_backend(),
        threads_per_server: None,
    };
    Ok((models, description))
}

/// Without libtorch the device plan never names CUDA devices (it refuses
/// a request for them with [`DeviceError::NoLibtorch`]).
#[cfg(not(feature = "torch"))]
fn cuda_models(
    _file: &ModelFile,
    _devices: &[usize],
    _plan: &DevicePlan,
) -> Result<(Vec<Box<dyn BatchModel>>, RunDescription), SetupError> {
    Err(needs_libtorch("a CUDA device"))
}

/// libtorch CPU models, one per server thread (`numNNServerThreadsPerModel`,
/// each with `numEigenThreadsPerModel` libtorch threads), and the threads
/// each one uses.
#[cfg(feature = "torch")]
fn libtorch_cpu_models(
    file: &ModelFile,
    cfg: &Config,
    cores: usize,
    precision: Precision,
) -> Result<(Vec<Box<dyn BatchModel>>, usize), SetupError> {
    let (servers, intra) = cpu_threads(cfg, cores)?;
    // Server threads read libtorch's global setting when they first run an
    // operator, so this must come before the evaluator starts.
    tch::set_num_threads(intra as i32);
    let opts = ModelOptions {
        precision,
        channels_last: None,
    };
    let mut models: Vec<Box<dyn BatchModel>> = Vec::new();
    for _ in 0..servers {
        models.push(Box::new(Model::with_options(file, tch::Device::Cpu, opts)?));
    }
    Ok((models, tch::get_num_threads().max(1) as usize))
}

/// Without libtorch only the Rust backend (fp32) runs on the CPU.
#[cfg(not(feature = "torch"))]
fn libtorch_cpu_models(
    _file: &ModelFile,
    cfg: &Config,
    cores: usize,
    precision: Precision,
) -> Result<(Vec<Box<dyn BatchModel>>, usize), SetupError> {
    cpu_threads(cfg, cores)?;
    Err(needs_libtorch(
        &if CpuBackend::from_config(cfg)? == CpuBackend::Libtorch {
            "nnCpuBackend = \"libtorch\"".to_string()
        } else {
            format!("nnPrecision = {precision} on the CPU")
        },
    ))
}

/// The error of a setting that needs libtorch in a build without it.
#[cfg(not(feature = "torch"))]
fn needs_libtorch(what: &str) -> SetupError {
    SetupError::Invalid(format!(
        "{what} needs libtorch, and this engine was built without it (cargo's \
         --no-default-features): build it with the default features (./setup.sh cargo build \
         --release), or run the Rust CPU backend (nnCpuBackend = \"auto\", nnPrecision = \"fp32\")"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_precision_is_bf16_on_wide_trunks_where_it_runs_and_never_int8() {
        let k = |bf16, int8| ReducedKernels { bf16, int8 };
        for backend in [CpuBackend::Auto, CpuBackend::Rust] {
            let auto = |kernels, channels| auto_cpu_precision(backend, kernels, channels);
            // Wide trunks: bf16 wherever it runs, else fp32, naming int8
            // where its kernels run.
            for channels in [64, 96, 384] {
                for int8 in [false, true] {
                    let (p, why) = auto(k(true, int8), channels);
                    assert_eq!(p, Precision::BF16);
                    assert!(why.contains("AVX-512 BF16 here"), "{why}");
                }
                let (p, why) = auto(k(false, true), channels);
                assert_eq!(p, Precision::F32);
                assert!(why.contains("nnPrecision = int8 runs it"), "{why}");
                let (p, why) = auto(k(false, false), channels);
                assert_eq!(p, Precision::F32);
                assert!(why.contains("no AVX-512 BF16 or VNNI"), "{why}");
            }
            // Narrow trunks: fp32 whatever the CPU has.
            for (bf16, int8) in [(false, false), (false, true), (true, false), (true, true)] {
                let (p, why) = auto(k(bf16, int8), 32);
                assert_eq!(p, Precision::F32);
                assert!(why.contains("under 64 channels"), "{why}");
            }
        }
        for kernels in [k(true, true), k(false, true), k(true, false)] {
            for channels in [32, 96] {
                let (p, why) = auto_cpu_precision(CpuBackend::Libtorch, kernels, channels);
                assert_eq!(p, Precision::F32);
                assert!(why.contains("libtorch"), "{why}");
            }
        }
    }
}
