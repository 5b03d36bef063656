//! Where the network runs: the checks that stop a command when it asks for
//! CUDA and CUDA cannot be used (never a silent CPU fallback), what a CUDA
//! device is (name, memory, multiprocessors, compute capability, read from
//! the NVIDIA driver), the numeric precision, the one line every command
//! prints at start-up to say what it runs on, the batch size and search
//! threads picked from a GPU when the config does not set them, and the
//! fp16 tensor-core peaks of known GPUs (for `engine benchmark -nn`).
//!
//! Everything here that needs a GPU is a thin probe around pure functions
//! ([`CudaAvailability::check`], [`gpu_defaults`], [`fp16_tensor_peak_tflops`],
//! [`batch_bucket`]), which the unit tests cover on any machine.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::OnceLock;

#[cfg(feature = "torch")]
use tch::{Device, Kind};

/// The arithmetic the network runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    /// 32-bit floats (the reference; CUDA convolutions without TF32).
    #[default]
    F32,
    /// IEEE half precision (tensor cores on Volta and later).
    F16,
    /// bfloat16 (tensor cores on Ampere and later).
    BF16,
    /// 8-bit integers: the Rust CPU backend's 3x3 convs on AVX-512 VNNI or
    /// AVX-VNNI (`vpdpbusd`), calibrated at load; the rest of the net in
    /// f32.
    Int8,
}

impl Precision {
    /// `fp32`, `fp16`, `bf16` or `int8`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "fp32",
            Precision::F16 => "fp16",
            Precision::BF16 => "bf16",
            Precision::Int8 => "int8",
        }
    }

    /// The libtorch element type.
    #[cfg(feature = "torch")]
    pub fn kind(self) -> Kind {
        match self {
            Precision::F32 => Kind::Float,
            Precision::F16 => Kind::Half,
            Precision::BF16 => Kind::BFloat16,
            // libtorch nets refuse int8 before they ask (`Model::build`);
            // f32 is the reference it stands for.
            Precision::Int8 => Kind::Float,
        }
    }

    /// Parses `fp32`/`float32`/`f32`, `fp16`/`float16`/`half`,
    /// `bf16`/`bfloat16`, `int8` (any case).
    pub fn parse(text: &str) -> Option<Precision> {
        match text.trim().to_ascii_lowercase().as_str() {
            "fp32" | "float32" | "f32" | "float" => Some(Precision::F32),
            "fp16" | "float16" | "f16" | "half" => Some(Precision::F16),
            "bf16" | "bfloat16" => Some(Precision::BF16),
            "int8" => Some(Precision::Int8),
            _ => None,
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            _ => 2,
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a request for CUDA cannot be met. Every message starts with what
/// asked for CUDA (a flag or config key) so the user knows what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The linked libtorch is a CPU-only build.
    #[error(
        "{asked_by} asks for CUDA, but the libtorch this binary runs with has no CUDA support \
         (a CPU-only libtorch is linked: `ldd engine | grep libtorch_cuda` shows nothing); \
         build against a CUDA libtorch (docs/GPU.md), or do not ask for CUDA"
    )]
    NoCudaBuild {
        /// The flag or key that asked.
        asked_by: String,
    },
    /// This binary was built without libtorch (`--no-default-features`).
    #[error(
        "{asked_by} asks for CUDA, but this engine was built without libtorch \
         (cargo's --no-default-features: the pure-Rust CPU backend only); build it with the \
         default features (./setup.sh cargo build --release) to run on a GPU, or do not ask \
         for CUDA"
    )]
    NoLibtorch {
        /// The flag or key that asked.
        asked_by: String,
    },
    /// libtorch has CUDA but sees no device.
    #[error("{asked_by} asks for CUDA, but no CUDA device is visible: {why}")]
    NoDevice {
        /// The flag or key that asked.
        asked_by: String,
        /// What the process can tell about why.
        why: String,
    },
    /// A device index past the visible devices.
    #[error(
        "{asked_by} asks for CUDA device {index}, but only {count} CUDA device{} visible \
         (indices 0 to {})",
        if *.count == 1 { " is" } else { "s are" },
        .count - 1
    )]
    IndexOutOfRange {
        /// The flag or key that asked.
        asked_by: String,
        /// The index asked for.
        index: usize,
        /// Devices visible (at least 1).
        count: usize,
    },
    /// A GPU too old for the precision asked for.
    #[error(
        "{asked_by}: CUDA device {index} ({name}) has compute capability {major}.{minor}; \
         {precision} needs {need} or later"
    )]
    PrecisionUnsupported {
        /// The key that asked.
        asked_by: String,
        /// The device.
        index: usize,
        /// Its name.
        name: String,
        /// Compute capability.
        major: u32,
        /// Compute capability.
        minor: u32,
        /// The precision asked for.
        precision: Precision,
        /// The capability it needs, e.g. `5.3`.
        need: &'static str,
    },
}

/// What this process's libtorch offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaAvailability {
    /// libtorch was built with CUDA (its CUDA runtime is linked in).
    pub built: bool,
    /// CUDA devices it sees.
    pub devices: usize,
}

impl CudaAvailability {
    /// Asks libtorch (cheap; the first call initialises CUDA).
    #[cfg(feature = "torch")]
    pub fn probe() -> CudaAvailability {
        let built = tch::utils::has_cudart();
        let devices = if built {
            usize::try_from(tch::Cuda::device_count()).unwrap_or(0)
        } else {
            0
        };
        CudaAvailability { built, devices }
    }

    /// A build without libtorch has no CUDA.
    #[cfg(not(feature = "torch"))]
    pub fn probe() -> CudaAvailability {
        CudaAvailability {
            built: false,
            devices: 0,
        }
    }

    /// Whether any CUDA device can be used.
    pub fn usable(self) -> bool {
        self.devices > 0
    }

    /// Checks that CUDA device `index` can be used, for a request made by
    /// `asked_by` (a flag or config key, named in the error).
    pub fn check(self, index: usize, asked_by: &str) -> Result<(), DeviceError> {
        let asked_by = asked_by.to_string();
        if !self.built {
            return Err(if cfg!(feature = "torch") {
                DeviceError::NoCudaBuild { asked_by }
            } else {
                DeviceError::NoLibtorch { asked_by }
            });
        }
        if self.devices == 0 {
            return Err(DeviceError::NoDevice {
                asked_by,
                why: why_no_device(
                    std::env::var("CUDA_VISIBLE_DEVICES").ok().as_deref(),
                    driver().is_some(),
                ),
            });
        }
        if index >= self.devices {
            return Err(DeviceError::IndexOutOfRange {
                asked_by,
                index,
                count: self.devices,
            });
        }
        Ok(())
    }
}

/// The likely reason libtorch sees no CUDA device.
pub fn why_no_device(cuda_visible_devices: Option<&str>, driver_loaded: bool) -> String {
    match cuda_visible_devices {
        Some(v) if v.trim().is_empty() || v.trim() == "-1" => {
            format!("CUDA_VISIBLE_DEVICES is set to \"{v}\", which hides every GPU")
        }
        Some(v) if !driver_loaded => format!(
            "the NVIDIA driver library libcuda.so.1 cannot be loaded (no driver or no GPU on \
             this machine; CUDA_VISIBLE_DEVICES=\"{v}\")"
        ),
        Some(v) => format!(
            "the driver is loaded but reports no usable device for CUDA_VISIBLE_DEVICES=\"{v}\" \
             (`nvidia-smi` lists what it sees)"
        ),
        None if !driver_loaded => "the NVIDIA driver library libcuda.so.1 cannot be loaded \
             (no driver or no GPU on this machine)"
            .to_string(),
        None => "the driver is loaded but reports no usable device (`nvidia-smi` lists what it \
                 sees; a driver older than the CUDA runtime libtorch was built for also does \
                 this)"
            .to_string(),
    }
}

/// CUDA device `index`, or why it cannot be used; `asked_by` names the
/// flag or key that asked for it.
#[cfg(feature = "torch")]
pub fn require_cuda(index: usize, asked_by: &str) -> Result<Device, DeviceError> {
    CudaAvailability::probe().check(index, asked_by)?;
    Ok(Device::Cuda(index))
}

/// The device of `engine train`: CUDA device 0 with `-cuda` (an error if
/// it cannot be used), else the CPU.
#[cfg(feature = "torch")]
pub fn train_device(cuda: bool) -> Result<Device, DeviceError> {
    if cuda {
        require_cuda(0, "-cuda")
    } else {
        Ok(Device::Cpu)
    }
}

// ---------------------------------------------------------------------------
// What a GPU is (the NVIDIA driver API, loaded at run time)

/// A CUDA device's properties.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuInfo {
    /// e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Device memory in bytes.
    pub total_memory: u64,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (u32, u32),
}

impl GpuInfo {
    /// `NVIDIA H100 80GB HBM3, 79.1 GiB, 132 SMs, compute 9.0`.
    pub fn summary(&self) -> String {
        format!(
            "{}, {:.1} GiB, {} SMs, compute {}.{}",
            self.name,
            self.total_memory as f64 / (1u64 << 30) as f64,
            self.multiprocessors,
            self.compute_capability.0,
            self.compute_capability.1
        )
    }
}

type CuInit = unsafe extern "C" fn(c_uint) -> c_int;
type CuDeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type CuDeviceGetName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
type CuDeviceTotalMem = unsafe extern "C" fn(*mut usize, c_int) -> c_int;
type CuDeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;

/// The few NVIDIA driver API entry points the probe needs.
struct Driver {
    device_get: CuDeviceGet,
    get_name: CuDeviceGetName,
    total_mem: CuDeviceTotalMem,
    get_attribute: CuDeviceGetAttribute,
}

// CUdevice_attribute values (cuda.h; stable across CUDA versions).
const ATTR_MULTIPROCESSOR_COUNT: c_int = 16;
const ATTR_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const ATTR_COMPUTE_CAPABILITY_MINOR: c_int = 76;

/// `libcuda.so.1`, initialised, or `None` without an NVIDIA driver.
fn driver() -> Option<&'static Driver> {
    static DRIVER: OnceLock<Option<Driver>> = OnceLock::new();
    DRIVER.get_or_init(load_driver).as_ref()
}

fn load_driver() -> Option<Driver> {
    let name = CString::new("libcuda.so.1").ok()?;
    // SAFETY: dlopen/dlsym with valid C strings; the handle is never
    // closed, so the function pointers stay valid for the process's life.
    // Each symbol is cast to the signature cuda.h declares for it.
    unsafe {
        let handle = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if handle.is_null() {
            return None;
        }
        let sym = |s: &str| -> Option<*mut c_void> {
            let c = CString::new(s).ok()?;
            let p = libc::dlsym(handle, c.as_ptr());
            (!p.is_null()).then_some(p)
        };
        let init: CuInit = std::mem::transmute::<*mut c_void, CuInit>(sym("cuInit")?);
        let driver = Driver {
            device_get: std::mem::transmute::<*mut c_void, CuDeviceGet>(sym("cuDeviceGet")?),
            get_name: std::mem::transmute::<*mut c_void, CuDeviceGetName>(sym("cuDeviceGetName")?),
            total_mem: std::mem::transmute::<*mut c_void, CuDeviceTotalMem>(sym(
                "cuDeviceTotalMem_v2",
            )?),
            get_attribute: std::mem::transmute::<*mut c_void, CuDeviceGetAttribute>(sym(
                "cuDeviceGetAttribute",
            )?),
        };
        (init(0) == 0).then_some(driver)
    }
}

/// CUDA device `index`'s properties from the NVIDIA driver; `None` when
/// there is no driver or no such device (the caller then uses defaults
/// that do not depend on the GPU).
pub fn gpu_info(index: usize) -> Option<GpuInfo> {
    let d = driver()?;
    let ordinal = c_int::try_from(index).ok()?;
    let mut dev: c_int = 0;
    let mut name = [0 as c_char; 256];
    let mut mem: usize = 0;
    let (mut sms, mut major, mut minor): (c_int, c_int, c_int) = (0, 0, 0);
    // SAFETY: driver entry points called with valid out-pointers and the
    // buffer length they may write.
    unsafe {
        if (d.device_get)(&mut dev, ordinal) != 0
            || (d.get_name)(name.as_mut_ptr(), name.len() as c_int - 1, dev) != 0
            || (d.total_mem)(&mut mem, dev) != 0
            || (d.get_attribute)(&mut sms, ATTR_MULTIPROCESSOR_COUNT, dev) != 0
            || (d.get_attribute)(&mut major, ATTR_COMPUTE_CAPABILITY_MAJOR, dev) != 0
            || (d.get_attribute)(&mut minor, ATTR_COMPUTE_CAPABILITY_MINOR, dev) != 0
        {
            return None;
        }
    }
    // SAFETY: the buffer is zeroed and at most len-1 bytes were written.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    Some(GpuInfo {
        name,
        total_memory: mem as u64,
        multiprocessors: u32::try_from(sms).unwrap_or(0),
        compute_capability: (
            u32::try_from(major).unwrap_or(0),
            u32::try_from(minor).unwrap_or(0),
        ),
    })
}

/// The backend of libtorch in this process, e.g. `libtorch CUDA 13.0,
/// cuDNN 9.10.2` (CUDA builds) or `libtorch`.
#[cfg(feature = "torch")]
pub fn libtorch_backend() -> String {
    if !tch::utils::has_cudart() {
        return "libtorch (CPU-only build)".to_string();
    }
    let rt = tch::utils::version_cudart();
    let mut s = format!("libtorch CUDA {}.{}", rt / 1000, (rt % 1000) / 10);
    if tch::Cuda::cudnn_is_available() {
        let v = tch::utils::version_cudnn();
        // cuDNN 9 numbers versions as major*10000 + minor*100 + patch.
        s.push_str(&format!(
            ", cuDNN {}.{}.{}",
            v / 10000,
            (v % 10000) / 100,
            v % 100
        ));
    }
    s
}

// ---------------------------------------------------------------------------
// The start-up line

/// Where one evaluator server thread runs its net.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerDevice {
    /// The CPU (the Rust backend or libtorch).
    Cpu,
    /// CUDA device `i` (libtorch).
    Cuda(usize),
}

/// What a network runs on, for the start-up line every command prints
/// ([`RunDescription::line`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RunDescription {
    /// The device of each server thread.
    pub devices: Vec<ServerDevice>,
    /// The first CUDA device's properties, when known.
    pub gpu: Option<GpuInfo>,
    /// The arithmetic.
    pub precision: Precision,
    /// Why this arithmetic, when the engine chose it
    /// (`nnPrecision = "auto"`), shown after it in brackets.
    pub precision_why: Option<String>,
    /// Whether activations are channels-last (NHWC).
    pub nhwc: bool,
    /// e.g. `Rust backend` or `libtorch CUDA 13.0, cuDNN 9.10.2`.
    pub backend: String,
    /// Compute threads per server on the CPU (`None` on CUDA).
    pub threads_per_server: Option<usize>,
}

impl RunDescription {
    /// One line: device(s), GPU, precision, layout, backend, servers, e.g.
    /// `CUDA:0 (NVIDIA H100 80GB HBM3, 79.1 GiB, 132 SMs, compute 9.0), fp16,
    /// NHWC, libtorch CUDA 13.0, cuDNN 9.10.2, 1 server thread` or `CPU,
    /// fp32, Rust backend, 2 server threads (1 thread each)`.
    pub fn line(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        for d in &self.devices {
            let n = match d {
                ServerDevice::Cuda(i) => format!("CUDA:{i}"),
                ServerDevice::Cpu => "CPU".to_string(),
            };
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let mut s = names.join("+");
        if let Some(g) = &self.gpu {
            s.push_str(&format!(" ({})", g.summary()));
        }
        s.push_str(&format!(
            ", {}{}, {}, {}",
            self.precision,
            self.precision_why
                .as_ref()
                .map_or(String::new(), |why| format!(" ({why})")),
            if self.nhwc { "NHWC" } else { "NCHW" },
            self.backend
        ));
        let n = self.devices.len();
        s.push_str(&format!(
            ", {n} server thread{}",
            if n == 1 { "" } else { "s" }
        ));
        if let Some(t) = self.threads_per_server {
            s.push_str(&format!(
                " ({t} thread{} each)",
                if t == 1 { "" } else { "s" }
            ));
        }
        s
    }
}

/// `engine train`'s start-up line: device, precision (the trunk's compute
/// type of mixed precision, `None` for fp32), backend.
#[cfg(feature = "torch")]
pub fn train_line(device: Device, half: Option<Kind>) -> String {
    let precision = match half {
        None => "fp32",
        Some(Kind::BFloat16) => "bf16 trunk, fp32 heads (mixed precision)",
        Some(_) => "fp16 trunk, fp32 heads (mixed precision, loss scaling)",
    };
    match device {
        Device::Cuda(i) => {
            let gpu = gpu_info(i).map(|g| format!(" ({})", g.summary()));
            format!(
                "train: device CUDA:{i}{}, {precision}, {}",
                gpu.unwrap_or_default(),
                libtorch_backend()
            )
        }
        _ => format!(
            "train: device CPU, {precision}, libtorch ({} threads)",
            tch::get_num_threads()
        ),
    }
}

// ---------------------------------------------------------------------------
// Defaults picked from the GPU

/// The batch size and search threads used on a GPU when the config sets
/// neither, with the reason (printed at start-up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuDefaults {
    /// `nnMaxBatchSize`.
    pub max_batch_size: usize,
    /// `numSearchThreads` of `engine gtp` (and `benchmark`'s note).
    pub search_threads: usize,
    /// How they were chosen.
    pub why: String,
}

/// Picks `numSearchThreads` and `nnMaxBatchSize` for a GPU.
///
/// Search threads: half the streaming multiprocessors rounded up to a
/// multiple of 8, within 16..=128 (a GPU needs a batch of about one or two
/// rows per SM to keep its SMs busy on 19x19, and more threads than that
/// mostly add the MCTS cost of virtual losses; KataGo's benchmark
/// recommends 24-96 on current GPUs for b18 nets). Unknown GPU: 16, as
/// before. The batch holds every thread's row, shared out among the
/// `servers` (each server forms its own batches), at least 8 and a
/// multiple of 8 (fixed shapes for cuDNN), and at most what a quarter of
/// the device memory holds at `bytes_per_row` (activations of one row).
pub fn gpu_defaults(gpu: Option<&GpuInfo>, servers: usize, bytes_per_row: u64) -> GpuDefaults {
    let servers = servers.max(1);
    let Some(g) = gpu else {
        let threads: usize = 16;
        return GpuDefaults {
            max_batch_size: round_up(threads.div_ceil(servers), 8).max(8),
            search_threads: threads,
            why: "GPU properties unknown (no NVIDIA driver API)".to_string(),
        };
    };
    let sms = g.multiprocessors.max(1) as usize;
    let threads = round_up(sms.div_ceil(2), 8).clamp(16, 128);
    let per_server = round_up(threads.div_ceil(servers), 8).max(8);
    let mem_rows = (g.total_memory / 4)
        .checked_div(bytes_per_row)
        .map_or(usize::MAX, |r| usize::try_from(r).unwrap_or(usize::MAX));
    let max_batch_size = per_server.min((mem_rows / 8 * 8).max(8));
    GpuDefaults {
        max_batch_size,
        search_threads: threads,
        why: format!(
            "from {} SMs and {:.0} GiB of {}",
            g.multiprocessors,
            g.total_memory as f64 / (1u64 << 30) as f64,
            g.name
        ),
    }
}

fn round_up(x: usize, m: usize) -> usize {
    x.div_ceil(m) * m
}

/// Rows of a batch as run on CUDA: `n` rounded up to a few fixed shapes
/// (powers of two up to 8, then multiples of 8 up to 128, of 16 up to
/// 256, of 32 up to 512, ...), so cuDNN's autotuner sees about eight
/// shapes per doubling and the padding wastes at most 1/8 of a batch
/// above 64 rows. Never below `n`.
pub fn batch_bucket(n: usize) -> usize {
    if n <= 8 {
        return if n == 0 { 0 } else { n.next_power_of_two() };
    }
    // The largest power of two below n, at least 64, over 8.
    let below = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
    round_up(n, below.max(64) / 8)
}

// ---------------------------------------------------------------------------
// Known tensor-core peaks

/// Dense (no sparsity) fp16 tensor-core peak in TFLOP/s of a GPU, by the
/// name `nvidia-smi` and the driver report, with the entry matched (from
/// NVIDIA's data sheets; GeForce cards at fp32 accumulation, which cuDNN
/// uses). `None` for GPUs not in the table.
pub fn fp16_tensor_peak_tflops(name: &str) -> Option<(f64, &'static str)> {
    // More specific names first.
    const TABLE: &[(&str, f64, &str)] = &[
        ("H200 NVL", 835.0, "H200 NVL"),
        ("H200", 989.4, "H200 SXM"),
        ("GH200", 989.4, "GH200"),
        ("H100 NVL", 835.0, "H100 NVL"),
        ("H100 PCIe", 756.0, "H100 PCIe"),
        ("H100", 989.4, "H100 SXM"),
        ("H800 PCIe", 756.0, "H800 PCIe"),
        ("H800", 989.4, "H800 SXM"),
        ("B200", 2250.0, "B200"),
        ("A100", 312.0, "A100"),
        ("A800", 312.0, "A800"),
        ("A10G", 70.0, "A10G"),
        ("A10", 125.0, "A10"),
        ("A30", 165.0, "A30"),
        ("A40", 149.7, "A40"),
        ("L40S", 362.1, "L40S"),
        ("L40", 181.0, "L40"),
        ("L4", 121.0, "L4"),
        ("RTX 6000 Ada", 364.2, "RTX 6000 Ada"),
        ("RTX A6000", 154.8, "RTX A6000"),
        ("RTX 4090", 165.2, "RTX 4090"),
        ("RTX 4080", 97.5, "RTX 4080"),
        ("RTX 3090", 71.0, "RTX 3090"),
        ("RTX 3080", 59.5, "RTX 3080"),
        ("V100", 125.0, "V100 SXM2"),
        ("T4", 65.0, "T4"),
    ];
    // Whole words in order: "L4" must not match "L40S".
    let words: Vec<String> = name
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    TABLE.iter().find_map(|&(key, tflops, label)| {
        let key: Vec<String> = key.split(' ').map(str::to_ascii_lowercase).collect();
        words
            .windows(key.len())
            .any(|w| w == key.as_slice())
            .then_some((tflops, label))
    })
}

/// What the error for a binary without CUDA says (for tests): its libtorch
/// has none, or (the light build) it has no libtorch.
#[cfg(test)]
pub(crate) const NO_CUDA_BUILD_WORDS: &str = if cfg!(feature = "torch") {
    "no CUDA support"
} else {
    "built without libtorch"
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_names_round_trip() {
        for p in [
            Precision::F32,
            Precision::F16,
            Precision::BF16,
            Precision::Int8,
        ] {
            assert_eq!(Precision::parse(p.name()), Some(p));
        }
        assert_eq!(Precision::parse(" Half "), Some(Precision::F16));
        assert_eq!(Precision::parse("bfloat16"), Some(Precision::BF16));
        assert_eq!(Precision::parse("fp8"), None);
    }

    /// Each way CUDA can be missing gives its own error, naming what
    /// asked for it.
    #[test]
    fn cuda_checks_say_why() {
        let none = CudaAvailability {
            built: false,
            devices: 0,
        };
        let e = none.check(0, "-cuda").unwrap_err();
        if cfg!(feature = "torch") {
            assert!(matches!(e, DeviceError::NoCudaBuild { .. }));
        } else {
            assert!(matches!(e, DeviceError::NoLibtorch { .. }));
        }
        assert!(e.to_string().starts_with("-cuda asks for CUDA"), "{e}");
        assert!(e.to_string().contains(NO_CUDA_BUILD_WORDS), "{e}");

        let no_dev = CudaAvailability {
            built: true,
            devices: 0,
        };
        let e = no_dev.check(0, "deviceToUse").unwrap_err();
        assert!(matches!(e, DeviceError::NoDevice { .. }));
        assert!(e.to_string().contains("no CUDA device is visible"), "{e}");

        let one = CudaAvailability {
            built: true,
            devices: 1,
        };
        assert_eq!(one.check(0, "x"), Ok(()));
        let e = one.check(3, "cudaDeviceToUseThread1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cudaDeviceToUseThread1 asks for CUDA device 3, but only 1 CUDA device is visible \
             (indices 0 to 0)"
        );
        let two = CudaAvailability {
            built: true,
            devices: 2,
        };
        assert!(two
            .check(2, "k")
            .unwrap_err()
            .to_string()
            .contains("only 2 CUDA devices are visible (indices 0 to 1)"));
    }

    #[test]
    fn no_device_reasons() {
        assert!(why_no_device(Some(""), true).contains("hides every GPU"));
        assert!(why_no_device(Some("-1"), false).contains("hides every GPU"));
        assert!(why_no_device(None, false).contains("libcuda.so.1 cannot be loaded"));
        assert!(why_no_device(Some("3"), true).contains("CUDA_VISIBLE_DEVICES=\"3\""));
        assert!(why_no_device(None, true).contains("nvidia-smi"));
    }

    /// On this CPU-only test machine CUDA asked for must be an error, and
    /// the CPU needs no check.
    #[test]
    #[cfg(feature = "torch")]
    fn train_device_never_falls_back() {
        assert_eq!(train_device(false).unwrap(), Device::Cpu);
        if !CudaAvailability::probe().usable() {
            let e = train_device(true).unwrap_err();
            assert!(e.to_string().starts_with("-cuda asks for CUDA"), "{e}");
        }
    }

    fn gpu(name: &str, gib: u64, sms: u32) -> GpuInfo {
        GpuInfo {
            name: name.into(),
            total_memory: gib << 30,
            multiprocessors: sms,
            compute_capability: (9, 0),
        }
    }

    #[test]
    fn gpu_defaults_follow_the_device() {
        let h100 = gpu("NVIDIA H100 80GB HBM3", 80, 132);
        let d = gpu_defaults(Some(&h100), 1, 3 << 20);
        assert_eq!((d.search_threads, d.max_batch_size), (72, 72));
        assert!(d.why.contains("132 SMs"), "{}", d.why);
        // Two servers share the threads' rows.
        let d2 = gpu_defaults(Some(&h100), 2, 3 << 20);
        assert_eq!((d2.search_threads, d2.max_batch_size), (72, 40));
        // A small GPU: fewer threads, never below 16.
        let t4 = gpu("Tesla T4", 16, 40);
        assert_eq!(gpu_defaults(Some(&t4), 1, 3 << 20).search_threads, 24);
        let tiny = gpu("GT 1030", 2, 3);
        let d = gpu_defaults(Some(&tiny), 1, 3 << 20);
        assert_eq!(d.search_threads, 16);
        // 2 GiB / 4 / 3 MiB = 170 rows: the memory cap does not bind...
        assert_eq!(d.max_batch_size, 16);
        // ...but with 64 MiB rows it does (2 GiB / 4 / 64 MiB = 8).
        assert_eq!(gpu_defaults(Some(&tiny), 1, 64 << 20).max_batch_size, 8);
        // Huge GPUs stop at 128 threads.
        let big = gpu("B200", 192, 400);
        assert_eq!(gpu_defaults(Some(&big), 1, 3 << 20).search_threads, 128);
        // Unknown GPU: the old default of 16 threads.
        let u = gpu_defaults(None, 1, 0);
        assert_eq!((u.search_threads, u.max_batch_size), (16, 16));
    }

    #[test]
    fn batch_buckets_are_few_and_never_smaller() {
        let mut shapes = std::collections::BTreeSet::new();
        for n in 1..=1024 {
            let b = batch_bucket(n);
            assert!(b >= n, "{n} -> {b}");
            if n > 64 {
                assert!(b * 8 <= n * 9, "{n} -> {b} wastes more than 1/8");
            }
            shapes.insert(b);
        }
        assert_eq!(batch_bucket(1), 1);
        assert_eq!(batch_bucket(3), 4);
        assert_eq!(batch_bucket(9), 16);
        assert_eq!(batch_bucket(65), 72);
        assert_eq!(batch_bucket(129), 144);
        assert_eq!(batch_bucket(0), 0);
        assert_eq!(batch_bucket(1024), 1024);
        assert!(shapes.len() <= 48, "{} shapes", shapes.len());
    }

    #[test]
    fn peaks_by_nvidia_smi_name() {
        let peak = |n: &str| fp16_tensor_peak_tflops(n).map(|(_, l)| l);
        assert_eq!(peak("NVIDIA H100 80GB HBM3"), Some("H100 SXM"));
        assert_eq!(peak("NVIDIA H100 PCIe"), Some("H100 PCIe"));
        assert_eq!(peak("NVIDIA H100 NVL"), Some("H100 NVL"));
        assert_eq!(peak("NVIDIA H200"), Some("H200 SXM"));
        assert_eq!(peak("NVIDIA H200 NVL"), Some("H200 NVL"));
        assert_eq!(peak("NVIDIA A100-SXM4-80GB"), Some("A100"));
        assert_eq!(peak("NVIDIA A100 80GB PCIe"), Some("A100"));
        assert_eq!(peak("NVIDIA L4"), Some("L4"));
        assert_eq!(peak("NVIDIA L40S"), Some("L40S"));
        assert_eq!(peak("NVIDIA L40"), Some("L40"));
        assert_eq!(peak("NVIDIA GeForce RTX 4090"), Some("RTX 4090"));
        assert_eq!(peak("NVIDIA A10"), Some("A10"));
        assert_eq!(peak("NVIDIA A10G"), Some("A10G"));
        assert_eq!(peak("Tesla T4"), Some("T4"));
        assert_eq!(peak("Tesla V100-SXM2-16GB"), Some("V100 SXM2"));
        assert_eq!(peak("NVIDIA GeForce GTX 1080"), None);
        assert_eq!(
            fp16_tensor_peak_tflops("NVIDIA H100 80GB HBM3").unwrap().0,
            989.4
        );
    }

    #[test]
    fn run_description_lines() {
        let mut cpu = RunDescription {
            devices: vec![ServerDevice::Cpu, ServerDevice::Cpu],
            gpu: None,
            precision: Precision::F32,
            precision_why: None,
            nhwc: true,
            backend: "Rust backend".into(),
            threads_per_server: Some(1),
        };
        assert_eq!(
            cpu.line(),
            "CPU, fp32, NHWC, Rust backend, 2 server threads (1 thread each)"
        );
        cpu.precision = Precision::BF16;
        cpu.precision_why = Some("nnPrecision = auto: AVX-512 BF16 here".into());
        assert_eq!(
            cpu.line(),
            "CPU, bf16 (nnPrecision = auto: AVX-512 BF16 here), NHWC, Rust backend, \
             2 server threads (1 thread each)"
        );
        let cuda = RunDescription {
            devices: vec![ServerDevice::Cuda(0), ServerDevice::Cuda(1)],
            gpu: Some(gpu("NVIDIA H100 80GB HBM3", 80, 132)),
            precision: Precision::F16,
            precision_why: None,
            nhwc: true,
            backend: "libtorch CUDA 13.0".into(),
            threads_per_server: None,
        };
        assert_eq!(
            cuda.line(),
            "CUDA:0+CUDA:1 (NVIDIA H100 80GB HBM3, 80.0 GiB, 132 SMs, compute 9.0), fp16, NHWC, \
             libtorch CUDA 13.0, 2 server threads"
        );
    }
}
