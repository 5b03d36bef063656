//! What this CPU offers the pure-Rust backend: its name, the SIMD path its
//! kernels take, and its measured fp32 FMA peak (for `engine benchmark
//! -nn`, `engine version` and `benches/nn.rs`).

use std::cell::Cell;
use std::sync::OnceLock;

thread_local! {
    /// A path forced on this thread ([`SimdPath::with_forced`]), for the
    /// tests that compare the paths.
    static FORCED: Cell<Option<SimdPath>> = const { Cell::new(None) };
}

/// The kernels the Rust backend runs on this CPU, picked once at run time
/// (or named by the `ENGINE_SIMD` environment variable, see
/// [`SimdPath::detect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimdPath {
    /// 512-bit AVX-512F: the small GEMMs' kernel with 12 x 32 register
    /// blocks, and the Winograd transforms compiled for AVX-512; the rest
    /// as [`SimdPath::Avx2Fma`] (Intel since Skylake-SP, AMD since Zen 4).
    Avx512,
    /// 256-bit AVX2 with fused multiply-adds: the hand-written GEMM and
    /// Winograd kernels (x86-64 CPUs since Haswell and Zen 1).
    Avx2Fma,
    /// Plain Rust the compiler vectorises for the build's baseline target,
    /// and `matrixmultiply`'s own dispatch for the large GEMMs.
    Portable,
}

impl SimdPath {
    /// Every path, fastest first.
    pub const ALL: [SimdPath; 3] = [SimdPath::Avx512, SimdPath::Avx2Fma, SimdPath::Portable];

    /// The path the kernels take on this thread: [`SimdPath::detect`]'s,
    /// unless [`SimdPath::with_forced`] is running.
    pub fn current() -> SimdPath {
        FORCED.with(Cell::get).unwrap_or_else(SimdPath::detect)
    }

    /// Whether this path's kernels may run AVX2 and FMA instructions (the
    /// AVX-512 path runs the AVX2 kernels where it has none of its own).
    pub fn has_avx2_fma(self) -> bool {
        self != SimdPath::Portable
    }

    /// Runs `f` with the kernels on `path` on this thread (a net's forward
    /// pass on the Rust backend runs on its calling thread); `None`, and
    /// `f` not run, when the CPU cannot run `path`.
    pub fn with_forced<R>(path: SimdPath, f: impl FnOnce() -> R) -> Option<R> {
        if !path.runs_on_this_cpu() {
            return None;
        }
        /// Puts the previous forcing back, even if `f` panics.
        struct Restore(Option<SimdPath>);
        impl Drop for Restore {
            fn drop(&mut self) {
                FORCED.with(|c| c.set(self.0));
            }
        }
        let _restore = Restore(FORCED.with(|c| c.replace(Some(path))));
        Some(f())
    }

    /// Whether this CPU has the instructions of `self`'s kernels.
    pub fn runs_on_this_cpu(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2_fma = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            match self {
                SimdPath::Avx512 => avx2_fma && std::arch::is_x86_feature_detected!("avx512f"),
                SimdPath::Avx2Fma => avx2_fma,
                SimdPath::Portable => true,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == SimdPath::Portable
        }
    }

    /// The path the kernels take on this machine (decided once): the
    /// fastest the CPU has, unless the environment variable `ENGINE_SIMD`
    /// names a slower one (`avx2`, `portable`; `avx512` or `auto` mean the
    /// default), as `MKL_ENABLE_INSTRUCTIONS` does for MKL: to compare the
    /// paths side by side, or where AVX-512 lowers a CPU's clock. A value
    /// that is not a path, or a path this CPU lacks, is reported on stderr
    /// and the default kept.
    pub fn detect() -> SimdPath {
        static PATH: OnceLock<SimdPath> = OnceLock::new();
        *PATH.get_or_init(|| {
            let best = SimdPath::ALL
                .into_iter()
                .find(|p| p.runs_on_this_cpu())
                .unwrap_or(SimdPath::Portable);
            match std::env::var("ENGINE_SIMD") {
                Err(_) => best,
                Ok(value) => match SimdPath::parse(&value) {
                    Ok(None) => best,
                    Ok(Some(path)) if path.runs_on_this_cpu() => path,
                    Ok(Some(path)) => {
                        eprintln!(
                            "ENGINE_SIMD={value}: this CPU lacks {}; using {}",
                            path.name(),
                            best.name()
                        );
                        best
                    }
                    Err(e) => {
                        eprintln!("{e}; using {}", best.name());
                        best
                    }
                },
            }
        })
    }

    /// `ENGINE_SIMD`'s value: a path, or `None` for `auto` (the best the
    /// CPU has).
    pub fn parse(value: &str) -> Result<Option<SimdPath>, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(None),
            "avx512" | "avx-512" => Ok(Some(SimdPath::Avx512)),
            "avx2" => Ok(Some(SimdPath::Avx2Fma)),
            "portable" => Ok(Some(SimdPath::Portable)),
            _ => Err(format!(
                "ENGINE_SIMD={value}: not one of auto, avx512, avx2, portable"
            )),
        }
    }

    /// `AVX-512`, `AVX2+FMA` or `portable`.
    pub fn name(self) -> &'static str {
        match self {
            SimdPath::Avx512 => "AVX-512",
            SimdPath::Avx2Fma => "AVX2+FMA",
            SimdPath::Portable => "portable",
        }
    }
}

/// Whether the CPU has AVX-512F.
pub fn has_avx512f() -> bool {
    SimdPath::Avx512.runs_on_this_cpu()
}

/// Whether the Rust backend's bf16 kernel (`vdpbf16ps`, for nets run with
/// `nnPrecision = bf16`) runs here: the kernels take the AVX-512 path
/// (`ENGINE_SIMD` did not turn it off) and the CPU has AVX-512 BF16.
pub fn bf16_kernels_run() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        SimdPath::detect() == SimdPath::Avx512 && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The instructions the Rust backend's int8 kernel (`vpdpbusd`, for nets
/// run with `nnPrecision = int8`) runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int8Kernels {
    /// AVX-512 VNNI: 512-bit, 16 output channels per register (Intel since
    /// Cascade Lake, AMD since Zen 4), where the kernels take the AVX-512
    /// path.
    Avx512Vnni,
    /// AVX-VNNI: the same instruction on 256-bit registers in the VEX
    /// encoding, with AVX2 around it (Intel since Alder Lake, including the
    /// laptop and desktop chips without AVX-512; AMD since Zen 5), where
    /// the kernels take the AVX2 path or the CPU lacks AVX-512 VNNI.
    AvxVnni,
}

impl Int8Kernels {
    /// The int8 kernels the Rust backend runs here: the 512-bit ones where
    /// the kernels take the AVX-512 path ([`SimdPath::detect`], so
    /// `ENGINE_SIMD` can turn them off) and the CPU has AVX-512 VNNI, else
    /// the 256-bit ones where the path has AVX2 and the CPU AVX-VNNI; none
    /// otherwise.
    pub fn detect() -> Option<Int8Kernels> {
        match SimdPath::detect() {
            SimdPath::Avx512 if Int8Kernels::Avx512Vnni.runs_on_this_cpu() => {
                Some(Int8Kernels::Avx512Vnni)
            }
            SimdPath::Avx512 | SimdPath::Avx2Fma if Int8Kernels::AvxVnni.runs_on_this_cpu() => {
                Some(Int8Kernels::AvxVnni)
            }
            _ => None,
        }
    }

    /// Whether this CPU has the instructions of `self`'s kernels (whatever
    /// `ENGINE_SIMD` says: the tests and `benches/int8.rs` run both).
    pub fn runs_on_this_cpu(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Int8Kernels::Avx512Vnni => {
                    SimdPath::Avx512.runs_on_this_cpu()
                        && std::arch::is_x86_feature_detected!("avx512vnni")
                }
                Int8Kernels::AvxVnni => {
                    SimdPath::Avx2Fma.runs_on_this_cpu()
                        && std::arch::is_x86_feature_detected!("avxvnni")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = self;
            false
        }
    }

    /// `AVX-512 VNNI` or `AVX-VNNI`.
    pub fn name(self) -> &'static str {
        match self {
            Int8Kernels::Avx512Vnni => "AVX-512 VNNI",
            Int8Kernels::AvxVnni => "AVX-VNNI",
        }
    }
}

/// Whether the Rust backend's int8 kernel runs here ([`Int8Kernels::detect`]).
pub fn int8_kernels_run() -> bool {
    Int8Kernels::detect().is_some()
}

/// The CPU's model name as the kernel reports it (`/proc/cpuinfo`), if
/// it does.
pub fn model_name() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, name)| name.trim().to_string())
        .filter(|name| !name.is_empty())
}

/// One line: model name, SIMD path and whether AVX-512 is there, e.g.
/// `AMD EPYC, kernels AVX2+FMA (no AVX-512)`.
pub fn summary() -> String {
    let path = SimdPath::detect();
    format!(
        "{}, kernels {}{}",
        model_name().unwrap_or_else(|| "unknown CPU".into()),
        path.name(),
        match (path, has_avx512f()) {
            (SimdPath::Avx512, _) => "",
            (_, true) => " (AVX-512 present, not used: ENGINE_SIMD)",
            (_, false) => " (no AVX-512)",
        }
    )
}

/// The measured fp32 peak of one core in GFLOP/s (2 per multiply-add):
/// the best of 5 runs of 12 independent chains of fused multiply-adds,
/// enough chains to cover the FMA latency on two FMA pipes, 8 wide (AVX2)
/// and, on the AVX-512 path, 16 wide too (the better of the two: Zen 4
/// runs a 16-wide FMA as two 8-wide halves, Intel's server cores at up to
/// twice the 8-wide rate). About 0.2 s per width on a 3 GHz core. `None`
/// on the portable path.
pub fn fma_peak_gflops_per_core() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        let path = SimdPath::detect();
        if !path.has_avx2_fma() {
            return None;
        }
        const ITERS: usize = 20_000_000;
        let mut best = 0f64;
        for wide in [false, true] {
            if wide && path != SimdPath::Avx512 {
                continue;
            }
            for _ in 0..5 {
                let start = std::time::Instant::now();
                // SAFETY: the CPU has AVX2 and FMA, and AVX-512F for the
                // 16-wide chains (the path says so).
                let sum = unsafe {
                    if wide {
                        fma_chains_16(ITERS)
                    } else {
                        fma_chains_8(ITERS)
                    }
                };
                let secs = start.elapsed().as_secs_f64();
                std::hint::black_box(sum);
                let lanes = if wide { 16 } else { 8 };
                best = best.max((ITERS * 12 * lanes * 2) as f64 / secs * 1e-9);
            }
        }
        Some(best)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fma_chains_8(iters: usize) -> f32 {
    use std::arch::x86_64::*;
    // Opaque inputs, so that the compiler cannot fold the chains away.
    let (start, x, y) = std::hint::black_box((0.0f32, 0.999f32, 0.001f32));
    let mut acc = [_mm256_set1_ps(start); 12];
    let (x, y) = (_mm256_set1_ps(x), _mm256_set1_ps(y));
    for _ in 0..std::hint::black_box(iters) {
        for a in acc.iter_mut() {
            *a = _mm256_fmadd_ps(*a, x, y);
        }
    }
    let mut lanes = [0f32; 8];
    let sum = acc
        .iter()
        .fold(_mm256_setzero_ps(), |s, &a| _mm256_add_ps(s, a));
    _mm256_storeu_ps(lanes.as_mut_ptr(), sum);
    lanes.iter().sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn fma_chains_16(iters: usize) -> f32 {
    use std::arch::x86_64::*;
    let (start, x, y) = std::hint::black_box((0.0f32, 0.999f32, 0.001f32));
    let mut acc = [_mm512_set1_ps(start); 12];
    let (x, y) = (_mm512_set1_ps(x), _mm512_set1_ps(y));
    for _ in 0..std::hint::black_box(iters) {
        for a in acc.iter_mut() {
            *a = _mm512_fmadd_ps(*a, x, y);
        }
    }
    let sum = acc
        .iter()
        .fold(_mm512_setzero_ps(), |s, &a| _mm512_add_ps(s, a));
    _mm512_reduce_add_ps(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path agrees with the CPU's flags, and the peak is measured
    /// exactly where the AVX2 kernels run.
    #[test]
    fn path_and_peak_follow_the_cpu_flags() {
        let path = SimdPath::detect();
        #[cfg(target_arch = "x86_64")]
        if std::env::var_os("ENGINE_SIMD").is_none() {
            let avx2_fma = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            let expected = match (avx2_fma, std::arch::is_x86_feature_detected!("avx512f")) {
                (true, true) => SimdPath::Avx512,
                (true, false) => SimdPath::Avx2Fma,
                _ => SimdPath::Portable,
            };
            assert_eq!(path, expected);
        }
        assert!(path.runs_on_this_cpu() && SimdPath::Portable.runs_on_this_cpu());
        let peak = fma_peak_gflops_per_core();
        assert_eq!(peak.is_some(), path.has_avx2_fma());
        if let Some(p) = peak {
            // A core does at most a few hundred GFLOP/s: a figure far above
            // means the compiler folded the chains away.
            assert!(p.is_finite() && p > 0.0 && p < 10_000.0, "{p}");
        }
        assert!(summary().contains(path.name()));
    }

    /// `ENGINE_SIMD` names every path, `auto` none, and anything else is
    /// an error that says what the choices are.
    #[test]
    fn engine_simd_values_parse() {
        for path in SimdPath::ALL {
            let value = match path {
                SimdPath::Avx512 => "AVX512",
                SimdPath::Avx2Fma => "avx2",
                SimdPath::Portable => " portable ",
            };
            assert_eq!(SimdPath::parse(value), Ok(Some(path)));
        }
        assert_eq!(SimdPath::parse("auto"), Ok(None));
        assert_eq!(SimdPath::parse(""), Ok(None));
        let e = SimdPath::parse("sse9").unwrap_err();
        assert!(
            e.contains("sse9") && e.contains("avx512, avx2, portable"),
            "{e}"
        );
    }

    /// A forced path the CPU lacks does not run; one it has does, and the
    /// forcing ends with the call.
    #[test]
    fn forcing_a_path_runs_only_what_the_cpu_has() {
        for path in SimdPath::ALL {
            let ran = SimdPath::with_forced(path, SimdPath::current);
            assert_eq!(ran.is_some(), path.runs_on_this_cpu(), "{path:?}");
            if let Some(seen) = ran {
                assert_eq!(seen, path);
            }
        }
        assert_eq!(SimdPath::current(), SimdPath::detect());
    }
}
