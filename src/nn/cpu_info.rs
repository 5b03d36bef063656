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

/// The kernels the Rust backend runs on this CPU, picked once at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimdPath {
    /// 256-bit AVX2 with fused multiply-adds: the hand-written GEMM and
    /// Winograd kernels (x86-64 CPUs since Haswell and Zen 1). An AVX-512
    /// CPU runs these too.
    Avx2Fma,
    /// Plain Rust the compiler vectorises for the build's baseline target,
    /// and `matrixmultiply`'s own dispatch for the large GEMMs.
    Portable,
}

impl SimdPath {
    /// Every path, fastest first.
    pub const ALL: [SimdPath; 2] = [SimdPath::Avx2Fma, SimdPath::Portable];

    /// The path the kernels take on this thread: [`SimdPath::detect`]'s,
    /// unless [`SimdPath::with_forced`] is running.
    pub fn current() -> SimdPath {
        FORCED.with(Cell::get).unwrap_or_else(SimdPath::detect)
    }

    /// Runs `f` with the kernels on `path` on this thread (a net's forward
    /// pass on the Rust backend runs on its calling thread); `None`, and
    /// `f` not run, when the CPU cannot run `path`.
    pub fn with_forced<R>(path: SimdPath, f: impl FnOnce() -> R) -> Option<R> {
        if path == SimdPath::Avx2Fma && SimdPath::detect() != SimdPath::Avx2Fma {
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

    /// This CPU's best path (checked once).
    pub fn detect() -> SimdPath {
        static PATH: OnceLock<SimdPath> = OnceLock::new();
        *PATH.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return SimdPath::Avx2Fma;
            }
            SimdPath::Portable
        })
    }

    /// `AVX2+FMA` or `portable`.
    pub fn name(self) -> &'static str {
        match self {
            SimdPath::Avx2Fma => "AVX2+FMA",
            SimdPath::Portable => "portable",
        }
    }
}

/// Whether the CPU has AVX-512F (reported, not used: the kernels are AVX2).
pub fn has_avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
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
    format!(
        "{}, kernels {}{}",
        model_name().unwrap_or_else(|| "unknown CPU".into()),
        SimdPath::detect().name(),
        if has_avx512f() {
            " (AVX-512 present, not used)"
        } else {
            " (no AVX-512)"
        }
    )
}

/// The measured fp32 peak of one core in GFLOP/s (2 per multiply-add):
/// the best of 5 runs of 12 independent chains of 8-wide fused
/// multiply-adds, enough chains to cover the FMA latency on two FMA
/// pipes. About 0.2 s on a 3 GHz core. `None` without AVX2/FMA.
pub fn fma_peak_gflops_per_core() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if SimdPath::detect() == SimdPath::Avx2Fma {
        const ITERS: usize = 20_000_000;
        let mut best = 0f64;
        for _ in 0..5 {
            let start = std::time::Instant::now();
            // SAFETY: the CPU has AVX2 and FMA (the path says so).
            let sum = unsafe { fma_chains(ITERS) };
            let secs = start.elapsed().as_secs_f64();
            std::hint::black_box(sum);
            best = best.max((ITERS * 12 * 8 * 2) as f64 / secs * 1e-9);
        }
        return Some(best);
    }
    None
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fma_chains(iters: usize) -> f32 {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The path agrees with the CPU's flags, and the peak is measured
    /// exactly where the AVX2 kernels run.
    #[test]
    fn path_and_peak_follow_the_cpu_flags() {
        let path = SimdPath::detect();
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            path == SimdPath::Avx2Fma,
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
        );
        let peak = fma_peak_gflops_per_core();
        assert_eq!(peak.is_some(), path == SimdPath::Avx2Fma);
        if let Some(p) = peak {
            // A core does at most a few hundred GFLOP/s: a figure far above
            // means the compiler folded the chains away.
            assert!(p.is_finite() && p > 0.0 && p < 10_000.0, "{p}");
        }
        assert!(summary().contains(path.name()));
    }
}
