//! What int8 could gain on this CPU (issue 70, point 2), for
//! `benches/int8.rs`: the multiply-add peak of one core per instruction
//! kind, and one 3x3 conv layer timed in each precision the CPU runs (the
//! backend's own [`Conv`] in fp32 and bf16, and [`Int8Conv3x3`]).

use std::time::Instant;

use super::int8::{vnni_runs, InputQuant, Int8Conv3x3, Int8Scratch};
use super::ops::{Conv, ConvScratch, Mask};
use crate::nn::desc::ConvLayer;
use crate::nn::network::winograd::Epilogue;

/// The multiply-add peak of one core per instruction kind, in billions
/// per second: fp32 `vfmadd` ([`crate::nn::cpu_info::fma_peak_gflops_per_core`],
/// halved), and, by best of 5 runs of 12 independent 512-bit chains, bf16
/// `vdpbf16ps` (2 per f32 lane) and int8 `vpdpbusd` (4 per i32 lane),
/// each where the CPU has it.
pub fn dot_peaks() -> Vec<(&'static str, f64)> {
    let mut peaks: Vec<(&'static str, f64)> = crate::nn::cpu_info::fma_peak_gflops_per_core()
        .map(|gflops| ("fp32 vfmadd", gflops / 2.0))
        .into_iter()
        .collect();
    #[cfg(target_arch = "x86_64")]
    {
        const ITERS: usize = 10_000_000;
        let kinds: [(&'static str, bool, usize); 2] = [
            (
                "bf16 vdpbf16ps",
                std::arch::is_x86_feature_detected!("avx512bf16"),
                32,
            ),
            ("int8 vpdpbusd", vnni_runs(), 64),
        ];
        for (name, runs, macs_per_op) in kinds {
            if !runs {
                continue;
            }
            let best = (0..5)
                .map(|_| {
                    let start = Instant::now();
                    // SAFETY: the CPU has each kind's instructions (checked
                    // just above).
                    let sink = unsafe {
                        match macs_per_op {
                            32 => chains_bf16(ITERS),
                            _ => chains_int8(ITERS) as f32,
                        }
                    };
                    std::hint::black_box(sink);
                    (ITERS * 12 * macs_per_op) as f64 / start.elapsed().as_secs_f64() * 1e-9
                })
                .fold(0f64, f64::max);
            peaks.push((name, best));
        }
    }
    peaks
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn chains_bf16(iters: usize) -> f32 {
    use std::arch::x86_64::*;
    let (x, y) = std::hint::black_box((0.999f32, 0.001f32));
    let (x, y) = (
        _mm512_cvtne2ps_pbh(_mm512_set1_ps(x), _mm512_set1_ps(x)),
        _mm512_cvtne2ps_pbh(_mm512_set1_ps(y), _mm512_set1_ps(y)),
    );
    let mut acc = [_mm512_setzero_ps(); 12];
    for _ in 0..std::hint::black_box(iters) {
        for a in acc.iter_mut() {
            *a = _mm512_dpbf16_ps(*a, x, y);
        }
    }
    _mm512_reduce_add_ps(
        acc.iter()
            .fold(_mm512_setzero_ps(), |s, &a| _mm512_add_ps(s, a)),
    )
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn chains_int8(iters: usize) -> i32 {
    use std::arch::x86_64::*;
    let (x, y) = std::hint::black_box((0x0101_0101i32, 0x0102_0301i32));
    let (x, y) = (_mm512_set1_epi32(x), _mm512_set1_epi32(y));
    let mut acc = [_mm512_setzero_si512(); 12];
    for _ in 0..std::hint::black_box(iters) {
        for a in acc.iter_mut() {
            *a = _mm512_dpbusd_epi32(*a, x, y);
        }
    }
    _mm512_reduce_add_epi32(
        acc.iter()
            .fold(_mm512_setzero_si512(), |s, &a| _mm512_add_epi32(s, a)),
    )
}

/// One measured convolution for [`conv3x3_speeds`].
#[derive(Debug, Clone)]
pub struct ConvSpeed {
    /// `fp32`, `bf16` (where the CPU runs the bf16 kernels) or `int8`
    /// (where it has AVX-512 VNNI).
    pub precision: &'static str,
    /// Milliseconds per call, the median of 5 runs.
    pub ms: f64,
    /// The layer's multiply-adds counted as a direct convolution does, per
    /// second, in billions.
    pub direct_gmacs: f64,
}

/// Times one random 3x3 conv layer of `ci -> co` channels (the trunk's
/// shape) on a batch of `n` `size x size` boards with each precision the
/// CPU runs: the backend's own [`Conv`] in fp32 and bf16 (Winograd, as
/// nets run), and [`Int8Conv3x3`] (quantising its input and scaling its
/// sums back to f32 included). For `benches/int8.rs`.
pub fn conv3x3_speeds(ci: usize, co: usize, n: usize, size: usize, secs: f64) -> Vec<ConvSpeed> {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut uniform = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 40) as f32 / (1u64 << 24) as f32
    };
    let w: Vec<f32> = (0..co * ci * 9).map(|_| uniform() - 0.5).collect();
    let bias: Vec<f32> = (0..co).map(|_| uniform() - 0.5).collect();
    // Post-ReLU activations: a third zero.
    let input: Vec<f32> = (0..n * size * size * ci)
        .map(|_| (uniform() * 3.0 - 1.0).max(0.0))
        .collect();
    let mut out = vec![0f32; n * size * size * co];
    let layer = ConvLayer::new("probe", [co, ci, 3, 3], w.clone());
    let direct_macs = (9 * size * size * ci * co * n) as f64;
    let mut timed = |precision, run: &mut dyn FnMut(&mut [f32])| {
        run(&mut out);
        let mut runs: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let mut calls = 0u32;
                while start.elapsed().as_secs_f64() < secs / 5.0 || calls == 0 {
                    run(&mut out);
                    calls += 1;
                }
                start.elapsed().as_secs_f64() / f64::from(calls)
            })
            .collect();
        runs.sort_by(f64::total_cmp);
        let s = runs[2];
        ConvSpeed {
            precision,
            ms: s * 1e3,
            direct_gmacs: direct_macs / s * 1e-9,
        }
    };
    let mask = Mask::new(n, size * size, None);
    let mut speeds = Vec::new();
    for bf16 in [false, true] {
        if bf16 && !crate::nn::cpu_info::bf16_kernels_run() {
            continue;
        }
        let conv = Conv::new(&layer, &w, Some(bias.clone()), bf16, false);
        let mut scratch = ConvScratch::default();
        speeds.push(timed(
            if bf16 { "bf16" } else { "fp32" },
            &mut |out: &mut [f32]| {
                conv.run(
                    None,
                    &input,
                    (n, size, size),
                    out,
                    Epilogue::ReluMasked,
                    &mask,
                    &mut scratch,
                )
            },
        ));
    }
    if vnni_runs() {
        let mut ranges = vec![(0f32, 0f32); ci];
        for point in input.chunks_exact(ci) {
            for ((lo, hi), &v) in ranges.iter_mut().zip(point) {
                (*lo, *hi) = (lo.min(v), hi.max(v));
            }
        }
        let conv = Int8Conv3x3::new(&w, &bias, (ci, co), InputQuant::covering(&ranges));
        let mut scratch = Int8Scratch::default();
        speeds.push(timed("int8", &mut |out: &mut [f32]| {
            conv.run(
                &input,
                (n, size, size),
                out,
                Epilogue::ReluMasked,
                &mut scratch,
            )
        }));
    }
    speeds
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The speed probe measures every precision the CPU runs and nothing
    /// else, with finite figures.
    #[test]
    fn the_probe_names_what_it_ran() {
        let speeds = conv3x3_speeds(16, 16, 1, 5, 0.01);
        let names: Vec<_> = speeds.iter().map(|s| s.precision).collect();
        let mut want = vec!["fp32"];
        if crate::nn::cpu_info::bf16_kernels_run() {
            want.push("bf16");
        }
        if vnni_runs() {
            want.push("int8");
        }
        assert_eq!(names, want);
        assert!(speeds
            .iter()
            .all(|s| s.ms > 0.0 && s.direct_gmacs.is_finite()));
    }
}
