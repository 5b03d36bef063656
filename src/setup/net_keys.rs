//! The keys of where and how a net runs (devices, backend, threads,
//! precision, cache, memory), declared once: [`device_plan`],
//! [`build_backend`], [`cpu_threads`], the memory budget and `engine tune`
//! read them through these, and the configuration reference lists them
//! ([`rows`]) for every command that loads a net.
//!
//! [`device_plan`]: super::device_plan
//! [`build_backend`]: super::build_backend
//! [`cpu_threads`]: super::cpu_threads

use crate::config::{Enabled, Key, Kind, Row, Setting};

/// `numNNServerThreadsPerModel`: evaluator server threads per net.
pub const NN_SERVER_THREADS: Key<Option<i64>> = Key::opt_int("numNNServerThreadsPerModel", 1..=1024)
    .doc("Evaluator server threads per net (default 1 with libtorch; one per core, at most 16, with the Rust CPU backend, which takes at most 64).");
/// `numEigenThreadsPerModel`: libtorch's intra-op threads per server on the CPU.
pub const NN_INTRA_THREADS: Key<Option<i64>> = Key::opt_int("numEigenThreadsPerModel", 1..=1024)
    .doc("libtorch threads of each CPU server (default: the cores shared out among the servers).");
/// `nnCpuBackend`: which CPU forward pass runs the net.
pub const NN_CPU_BACKEND: Key<Option<String>> =
    Key::parsed("nnCpuBackend", "auto, rust or libtorch", "`auto`").doc(
        "The CPU forward pass: the pure-Rust backend or libtorch. auto: the Rust backend wherever it runs the precision (fp32 always, bf16 on a CPU with AVX-512 BF16, int8 on one with AVX-512 VNNI or AVX-VNNI), else libtorch (fp16, or bf16 without AVX-512 BF16).",
    );
/// `nnPrecision`: the arithmetic (this engine's key).
pub const NN_PRECISION: Key<Option<String>> = Key::parsed(
    "nnPrecision",
    "fp32, fp16, bf16, int8 or auto",
    "auto on the CPU (fp32 with useFP16 = false); on CUDA from useFP16",
)
.doc("The net's arithmetic; on CUDA it wins over useFP16/cudaUseFP16 (auto: as unset there). On the CPU, auto (the default there; fp32 pins KataGo's arithmetic) runs a net whose trunk has 64 channels or more in bf16 where the Rust backend's AVX-512 BF16 kernels run and everything else in fp32, and the start-up line says which and why; int8 (CPU only, Rust backend, AVX-512 VNNI or AVX-VNNI; never auto's pick, as its 19x19 SPRTs are undecided) runs the 3x3 convs in 8-bit integers calibrated at load (for the project's 32-channel net no loss at equal visits by SPRT on 9x9 but -30 Elo [-53, -9] on 19x19 after 960 games, docs/RESULTS.md). In engine match, nnPrecision<i> sets bot i's own (e.g. bf16 against fp32 with one net).");
/// `useFP16` (and its `-0` form): half precision on CUDA.
pub const USE_FP16: Key<Enabled> = Key::enabled("useFP16")
    .doc("Half precision on CUDA (auto: from compute capability 7.0); true asks for CUDA.");
/// `cudaUseFP16` (and its `-0` form): as `useFP16`, KataGo's CUDA spelling.
pub const CUDA_USE_FP16: Key<Enabled> = Key::enabled("cudaUseFP16")
    .doc("As useFP16 (KataGo's CUDA backend's name; it wins over useFP16).");
/// `cudaUseNHWC`: channels-last on CUDA.
pub const CUDA_USE_NHWC: Key<Enabled> = Key::enabled("cudaUseNHWC")
    .doc("Channels-last layout on CUDA (auto: in half precision from compute capability 7.0).");
/// `nnCacheSizePowerOfTwo`: the NN cache's slots, as a power of two.
pub const NN_CACHE_POWER: Key<Option<i64>> = Key::opt_int("nnCacheSizePowerOfTwo", 0..=26)
    .doc("The NN cache holds 2^this positions (default 20, less where the cache would take over a quarter of the memory).");
/// `maxMemoryMB`: the memory budget (this engine's key).
pub const MAX_MEMORY_MB: Key<Option<i64>> = Key::opt_int("maxMemoryMB", 1..=1 << 24)
    .doc("Memory budget of the cache and the search trees, in MB (default: none).");

/// The device keys, read per server thread by [`super::device_plan`]
/// (which tries KataGo's sixteen forms, with `Model0` and `Thread<t>`
/// suffixes, in KataGo's order).
const DEVICE_KEYS: [Setting; 4] = [
    Setting::new(
        "deviceToUse",
        Kind::Other {
            ty: "integer or cpu",
            default: "CUDA device 0 when libtorch sees one, else the CPU",
            range: "0 to 1023, or cpu",
        },
    )
    .doc("The CUDA device of the net's servers; an index asks for CUDA, cpu keeps the net on the CPU."),
    Setting::new(
        "gpuToUse",
        Kind::Other {
            ty: "integer or cpu",
            default: "as deviceToUse",
            range: "0 to 1023, or cpu",
        },
    )
    .doc("As deviceToUse."),
    Setting::new(
        "cudaDeviceToUse",
        Kind::Other {
            ty: "integer or cpu",
            default: "as deviceToUse",
            range: "0 to 1023, or cpu",
        },
    )
    .doc("As deviceToUse (KataGo's CUDA backend's name; it wins over deviceToUse)."),
    Setting::new(
        "cudaGpuToUse",
        Kind::Other {
            ty: "integer or cpu",
            default: "as deviceToUse",
            range: "0 to 1023, or cpu",
        },
    )
    .doc("As deviceToUse."),
];

/// The configuration reference's rows of these keys.
pub fn rows() -> Vec<Row> {
    let mut rows: Vec<Row> = DEVICE_KEYS.iter().map(Setting::row).collect();
    rows.extend(
        [
            NN_SERVER_THREADS.setting(),
            NN_INTRA_THREADS.setting(),
            NN_CPU_BACKEND.setting(),
            NN_PRECISION.setting(),
            USE_FP16.setting(),
            CUDA_USE_FP16.setting(),
            CUDA_USE_NHWC.setting(),
            NN_CACHE_POWER.setting(),
            MAX_MEMORY_MB.setting(),
        ]
        .iter()
        .map(|s| s.row()),
    );
    rows
}
