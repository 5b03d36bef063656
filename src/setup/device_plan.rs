//! Where and in what precision the network runs: [`device_plan`] from the
//! config's device keys and what libtorch offers.

use super::net_keys::{CUDA_USE_FP16, CUDA_USE_NHWC, NN_PRECISION, NN_SERVER_THREADS, USE_FP16};
use super::SetupError;
use crate::config::{Config, Enabled};
use crate::nn::device::{CudaAvailability, DeviceError, GpuInfo, Precision};

/// Where the network runs, from the config's device keys and what
/// libtorch offers ([`device_plan`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DevicePlan {
    /// On CUDA, the device of each server thread; `None`: the CPU.
    pub cuda_devices: Option<Vec<usize>>,
    /// The arithmetic.
    pub precision: Precision,
    /// Channels-last on CUDA (`cudaUseNHWC`); `None`: the model's default
    /// (NHWC in half precision, as KataGo's `auto`).
    pub nhwc: Option<bool>,
    /// The key that asked for CUDA, if one did.
    pub asked_by: Option<String>,
    /// The first CUDA device's properties, when known.
    pub gpu: Option<GpuInfo>,
    /// `useFP16`/`cudaUseFP16` as the config set it (`auto` when unset):
    /// what KataGo's `kata-get-models` reports as `usingFP16`.
    pub fp16_mode: Enabled,
    /// `nnPrecision = "auto"`, said or (on the CPU) by default: on the
    /// CPU, `precision` is fp32 here and the backend picks bf16, int8 or
    /// fp32 for the net and the CPU
    /// ([`crate::setup::backend::auto_cpu_precision`]); on CUDA it is as
    /// unset.
    pub precision_auto: bool,
}

/// The keys that name server thread `thread`'s device, in KataGo's order
/// (`Setup::initializeNNEvaluators`, model 0, backend prefix `cuda`).
fn device_keys(thread: usize) -> [String; 16] {
    let t = thread;
    [
        format!("cudaDeviceToUseModel0Thread{t}"),
        format!("cudaGpuToUseModel0Thread{t}"),
        format!("deviceToUseModel0Thread{t}"),
        format!("gpuToUseModel0Thread{t}"),
        "cudaDeviceToUseModel0".into(),
        "cudaGpuToUseModel0".into(),
        "deviceToUseModel0".into(),
        "gpuToUseModel0".into(),
        format!("cudaDeviceToUseThread{t}"),
        format!("cudaGpuToUseThread{t}"),
        format!("deviceToUseThread{t}"),
        format!("gpuToUseThread{t}"),
        "cudaDeviceToUse".into(),
        "cudaGpuToUse".into(),
        "deviceToUse".into(),
        "gpuToUse".into(),
    ]
}

/// A device key's value: a CUDA index (0..=1023), or `cpu` (this
/// engine's way to keep a net on the CPU where a GPU is present).
fn device_value(cfg: &Config, key: &str) -> Result<Option<usize>, SetupError> {
    if let Ok(text) = cfg.get_string(key) {
        if text.trim().eq_ignore_ascii_case("cpu") {
            return Ok(None);
        }
    }
    Ok(Some(cfg.get_i64(key, 0..=1023)? as usize))
}

/// Decides where and in what precision the network runs, as KataGo's CUDA
/// backend does, from the config and the machine (`avail`, and `info` for
/// a device's properties; both passed in so tests can stand in for a GPU).
///
/// - Server threads: `numNNServerThreadsPerModel` (default 1); each takes
///   its device from the first of [`device_keys`] the config has.
/// - A device key with an index, or `useFP16`/`cudaUseFP16` (or their
///   `-0` forms) set to `true`, asks for CUDA: if CUDA cannot be used
///   that is an error ([`DeviceError`]), never a CPU run. `cpu` as a
///   device keeps the net on the CPU. Without any of these, CUDA device 0
///   when libtorch sees one, else the CPU.
/// - Precision on CUDA: `nnPrecision` (`fp32`, `fp16`, `bf16`; `int8` is
///   refused there, it is the CPU's; this
///   engine's key) when set, else `cudaUseFP16`/`useFP16` as KataGo:
///   `auto` (the default) is fp16 from compute capability 7.0 (tensor
///   cores; also when the capability is unknown), `true` fp16 (an error
///   below 5.3), `false` fp32; `nnPrecision = "auto"` is as unset there.
///   On the CPU: `nnPrecision`, else `auto` (fp32 here, see
///   [`DevicePlan::precision_auto`]), except that `useFP16 = false` (or
///   `cudaUseFP16 = false`) without `nnPrecision` keeps fp32, as on CUDA.
/// - Layout on CUDA: `cudaUseNHWC` (`auto`: NHWC when in half precision
///   on compute capability 7.0 and later).
pub fn device_plan(
    cfg: &Config,
    avail: CudaAvailability,
    info: &dyn Fn(usize) -> Option<GpuInfo>,
) -> Result<DevicePlan, SetupError> {
    let servers = NN_SERVER_THREADS.read(cfg)?.unwrap_or(1) as usize;
    // Per server thread: (the key that named its device, index or CPU).
    let mut named: Vec<Option<(String, Option<usize>)>> = Vec::with_capacity(servers);
    for t in 0..servers {
        let mut found = None;
        for key in device_keys(t) {
            if cfg.contains(&key) {
                found = Some((key.clone(), device_value(cfg, &key)?));
                break;
            }
        }
        named.push(found);
    }
    let cpu_key = named
        .iter()
        .flatten()
        .find(|(_, v)| v.is_none())
        .map(|(k, _)| k.clone());
    let cuda_key = named
        .iter()
        .flatten()
        .find(|(_, v)| v.is_some())
        .map(|(k, _)| k.clone());
    let fp16_key = ["cudaUseFP16-0", "useFP16-0", "cudaUseFP16", "useFP16"]
        .into_iter()
        .find(|k| cfg.contains(k));
    let fp16_mode = match fp16_key {
        Some(k) if k.starts_with("cuda") => CUDA_USE_FP16.read_named(cfg, k)?,
        Some(k) => USE_FP16.read_named(cfg, k)?,
        None => Enabled::Auto,
    };
    let asked_precision = NN_PRECISION.read(cfg)?;
    let precision_auto = asked_precision
        .as_deref()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("auto"));
    let nn_precision = match asked_precision {
        Some(_) if precision_auto => None,
        Some(text) => Some(Precision::parse(&text).ok_or_else(|| {
            SetupError::Invalid(format!(
                "nnPrecision = \"{text}\": expected fp32, fp16, bf16, int8 or auto"
            ))
        })?),
        None => None,
    };
    let nhwc_mode = CUDA_USE_NHWC.read(cfg)?;
    let fp16_asks = fp16_mode == Enabled::True && nn_precision.is_none();
    let asked_by = cuda_key
        .clone()
        .or_else(|| fp16_asks.then(|| format!("{} = true", fp16_key.unwrap_or("useFP16"))));
    if let (Some(cpu), Some(cuda)) = (&cpu_key, &asked_by) {
        return Err(SetupError::Invalid(format!(
            "{cpu} = cpu keeps the network on the CPU, but {cuda} asks for CUDA; \
             use one or the other"
        )));
    }
    let cuda = match (&asked_by, &cpu_key) {
        (Some(_), _) => true,
        (None, Some(_)) => false,
        (None, None) => avail.usable(),
    };
    if !cuda {
        // The CPU's default is `auto`: the reduced precisions it picks cost
        // no strength by SPRT (docs/RESULTS.md); `useFP16 = false` keeps
        // KataGo's meaning, fp32.
        let cpu_auto = nn_precision.is_none() && (precision_auto || fp16_mode != Enabled::False);
        return Ok(DevicePlan {
            cuda_devices: None,
            precision: nn_precision.unwrap_or(Precision::F32),
            nhwc: None,
            asked_by: None,
            gpu: None,
            fp16_mode,
            precision_auto: cpu_auto,
        });
    }
    let mut devices = Vec::with_capacity(servers);
    for slot in &named {
        let (key, index) = match slot {
            Some((k, Some(i))) => (k.as_str(), *i),
            _ => (asked_by.as_deref().unwrap_or("the default device"), 0),
        };
        avail.check(index, key)?;
        devices.push(index);
    }
    let gpu = info(devices[0]);
    let cc = gpu.as_ref().map(|g| g.compute_capability);
    let tensor_cores = cc.is_none_or(|c| c.0 >= 7);
    let precision = match (nn_precision, fp16_mode) {
        (Some(p), _) => p,
        (None, Enabled::False) => Precision::F32,
        (None, Enabled::Auto) if !tensor_cores => Precision::F32,
        (None, _) => Precision::F16,
    };
    let too_old = |need: (u32, u32), need_text: &'static str| -> Result<(), SetupError> {
        match (&gpu, cc) {
            (Some(g), Some(c)) if c < need => Err(DeviceError::PrecisionUnsupported {
                asked_by: fp16_key
                    .map(str::to_string)
                    .unwrap_or_else(|| "nnPrecision".into()),
                index: devices[0],
                name: g.name.clone(),
                major: c.0,
                minor: c.1,
                precision,
                need: need_text,
            }
            .into()),
            _ => Ok(()),
        }
    };
    match precision {
        Precision::F16 => too_old((5, 3), "5.3")?,
        Precision::BF16 => too_old((8, 0), "8.0")?,
        Precision::F32 => {}
        Precision::Int8 => {
            return Err(SetupError::Invalid(
                "nnPrecision = \"int8\" runs on the CPU only (the Rust backend on AVX-512 VNNI or AVX-VNNI), not on CUDA; use fp32, fp16 or bf16 there".into(),
            ))
        }
    }
    let nhwc = match nhwc_mode {
        Enabled::True => Some(true),
        Enabled::False => Some(false),
        Enabled::Auto => Some(tensor_cores && precision != Precision::F32),
    };
    Ok(DevicePlan {
        cuda_devices: Some(devices),
        precision,
        nhwc,
        asked_by,
        gpu,
        fp16_mode,
        precision_auto,
    })
}
