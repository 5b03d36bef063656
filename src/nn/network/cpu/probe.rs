//! What int8 could gain on this CPU (issue 70, point 2), for
//! `benches/int8.rs`: the multiply-add peak of one core per instruction
//! kind, and one 3x3 conv layer timed in each precision the CPU runs (the
//! backend's own [`Conv`] in fp32 and bf16, and [`Int8Conv3x3`]).

use std::time::Instant;

use super::int8::{InputQuant, Int8Conv3x3, Int8Kernels, Int8Scratch};
use super::ops::{Conv, ConvScratch, Mask};
use crate::nn::desc::ConvLayer;
use crate::nn::network::winograd::Epilogue;

/// The multiply-add peak of one core per instruction kind, in billions
/// per second: fp32 `vfmadd` ([`crate::nn::cpu_info::fma_peak_gflops_per_core`],
/// halved), and, by best of 5 runs of 12 independent chains, bf16
/// `vdpbf16ps` (512-bit, 2 per f32 lane), int8 `vpdpbusd` (4 per i32
/// lane) in 512 and 256 bits, and AVX2's int8 sequence without VNNI
/// (`vpmaddubsw`, `vpmaddwd` by ones, `vpaddd`: 32 per three
/// instructions), each where the CPU has it.
pub fn dot_peaks() -> Vec<(&'static str, f64)> {
    let mut peaks: Vec<(&'static str, f64)> = crate::nn::cpu_info::fma_peak_gflops_per_core()
        .map(|gflops| ("fp32 vfmadd", gflops / 2.0))
        .into_iter()
        .collect();
    #[cfg(target_arch = "x86_64")]
    {
        const ITERS: usize = 10_000_000;
        type Chains = unsafe fn(usize) -> i64;
        let avx2 = crate::nn::cpu_info::SimdPath::Avx2Fma.runs_on_this_cpu();
        let kinds: [(&'static str, bool, usize, Chains); 4] = [
            (
                "bf16 vdpbf16ps",
                crate::nn::cpu_info::has_avx512f()
                    && std::arch::is_x86_feature_detected!("avx512bf16"),
                32,
                chains_bf16,
            ),
            (
                "int8 vpdpbusd 512",
                Int8Kernels::Avx512Vnni.runs_on_this_cpu(),
                64,
                chains_int8_512,
            ),
            (
                "int8 vpdpbusd 256",
                Int8Kernels::AvxVnni.runs_on_this_cpu(),
                32,
                chains_int8_256,
            ),
            ("int8 vpmaddubsw", avx2, 32, chains_maddubs),
        ];
        for (name, runs, macs_per_chain_step, chains) in kinds {
            if !runs {
                continue;
            }
            let best = (0..5)
                .map(|_| {
                    let start = Instant::now();
                    // SAFETY: the CPU has each kind's instructions (checked
                    // just above).
                    std::hint::black_box(unsafe { chains(ITERS) });
                    (ITERS * 12 * macs_per_chain_step) as f64 / start.elapsed().as_secs_f64() * 1e-9
                })
                .fold(0f64, f64::max);
            peaks.push((name, best));
        }
    }
    peaks
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn chains_bf16(iters: usize) -> i64 {
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
    ) as i64
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn chains_int8_512(iters: usize) -> i64 {
    use std::arch::x86_64::*;
    let (x, y) = std::hint::black_box((0x0101_0101i32, 0x0102_0301i32));
    let (x, y) = (_mm512_set1_epi32(x), _mm512_set1_epi32(y));
    let mut acc = [_mm512_setzero_si512(); 12];
    for _ in 0..std::hint::black_box(iters) {
        for a in acc.iter_mut() {
            *a = _mm512_dpbusd_epi32(*a, x, y);
        }
    }
    i64::from(_mm512_reduce_add_epi32(
        acc.iter()
            .fold(_mm512_setzero_si512(), |s, &a| _mm512_add_epi32(s, a)),
    ))
}

/// The sum of the 8 lanes of `v`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lanes_sum_256(v: std::arch::x86_64::__m256i) -> i64 {
    let lanes: [i32; 8] = unsafe { std::mem::transmute(v) };
    lanes.iter().map(|&l| i64::from(l)).sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avxvnni")]
unsafe fn chains_int8_256(iters: usize) -> i64 {
    use std::arch::x86_64::*;
    let (x, y) = std::hint::black_box((0x0101_0101i32, 0x0102_0301i32));
    let (x, y) = (_mm256_set1_epi32(x), _mm256_set1_epi32(y));
    let mut acc = [_mm256_setzero_si256(); 12];
    for _ in 0..std::hint::black_box(iters) {
        for a in acc.iter_mut() {
            *a = _mm256_dpbusd_avx_epi32(*a, x, y);
        }
    }
    lanes_sum_256(
        acc.iter()
            .fold(_mm256_setzero_si256(), |s, &a| _mm256_add_epi32(s, a)),
    )
}

/// AVX2's int8 dot product without VNNI, as int8 libraries run it:
/// `vpmaddubsw` (u8 x i8 pairs summed into saturating i16), `vpmaddwd` by
/// ones (i16 pairs into i32), `vpaddd`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn chains_maddubs(iters: usize) -> i64 {
    use std::arch::x86_64::*;
    let (x, y) = std::hint::black_box((0x0101_0101i32, 0x0102_0301i32));
    let (x, y, ones) = (
        _mm256_set1_epi32(x),
        _mm256_set1_epi32(y),
        _mm256_set1_epi16(1),
    );
    // Twelve different inputs, and the weights moved on every iteration
    // (one `vpaddb` per 36 instructions) so that no product is the same
    // from one iteration to the next and none can be hoisted.
    let xs: [__m256i; 12] = std::array::from_fn(|i| _mm256_add_epi8(x, _mm256_set1_epi8(i as i8)));
    let (mut y, step) = (y, _mm256_set1_epi8(1));
    let mut acc = [_mm256_setzero_si256(); 12];
    for _ in 0..std::hint::black_box(iters) {
        for (a, &x) in acc.iter_mut().zip(&xs) {
            let pairs = _mm256_maddubs_epi16(x, y);
            *a = _mm256_add_epi32(*a, _mm256_madd_epi16(pairs, ones));
        }
        y = _mm256_add_epi8(y, step);
    }
    lanes_sum_256(
        acc.iter()
            .fold(_mm256_setzero_si256(), |s, &a| _mm256_add_epi32(s, a)),
    )
}

/// One measured convolution for [`conv3x3_speeds`].
#[derive(Debug, Clone)]
pub struct ConvSpeed {
    /// `fp32`, `bf16` (where the CPU runs the bf16 kernels), `int8-512`
    /// or `int8-256` ([`int8_kernels_timed`]).
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
/// nets run), and [`Int8Conv3x3`] on each of [`int8_kernels_timed`]
/// (quantising its input and scaling its sums back to f32 included). For
/// `benches/int8.rs`.
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
    let mut ranges = vec![(0f32, 0f32); ci];
    for point in input.chunks_exact(ci) {
        for ((lo, hi), &v) in ranges.iter_mut().zip(point) {
            (*lo, *hi) = (lo.min(v), hi.max(v));
        }
    }
    for (kernels, name) in int8_kernels_timed() {
        let quant = InputQuant::covering(&ranges);
        let conv = Int8Conv3x3::new(&w, &bias, (ci, co), quant, kernels);
        let mut scratch = Int8Scratch::default();
        speeds.push(timed(name, &mut |out: &mut [f32]| {
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

/// The int8 kernels [`conv3x3_speeds`] times, with their names: those the
/// CPU has, the 512-bit ones only where the kernels take the AVX-512 path
/// (so `ENGINE_SIMD=avx2` shows what a CPU without AVX-512 gets).
fn int8_kernels_timed() -> Vec<(Int8Kernels, &'static str)> {
    let avx512 = crate::nn::cpu_info::SimdPath::detect() == crate::nn::cpu_info::SimdPath::Avx512;
    [
        (Int8Kernels::Avx512Vnni, "int8-512"),
        (Int8Kernels::AvxVnni, "int8-256"),
    ]
    .into_iter()
    .filter(|&(k, _)| k.runs_on_this_cpu() && (avx512 || k == Int8Kernels::AvxVnni))
    .collect()
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
        want.extend(int8_kernels_timed().iter().map(|&(_, name)| name));
        assert_eq!(names, want);
        assert!(speeds
            .iter()
            .all(|s| s.ms > 0.0 && s.direct_gmacs.is_finite()));
    }
}
