//! What int8 gains on this CPU (issue 70, point 2): the multiply-add peak
//! of one core for fp32 (`vfmadd`), bf16 (`vdpbf16ps`), int8 `vpdpbusd` in
//! 512 bits (AVX-512 VNNI) and 256 (AVX-VNNI), and AVX2's int8 sequence
//! without VNNI (`vpmaddubsw`), then one 3x3 trunk conv layer timed in each
//! precision the CPU runs: the Rust backend's own fp32 and bf16
//! convolutions (Winograd, as nets run them) and the int8 direct
//! convolution of `nnPrecision = "int8"` on each int8 kernel (its input
//! quantised and its sums scaled back to f32 inside the timing).
//!
//! `cargo bench --no-default-features --bench int8` (env: `INT8_BENCH_SECS`
//! per measurement, default 1.0; `INT8_BENCH_SHAPES`, `channels:size:batch`
//! comma-separated, default the g170 b6c96 trunk (96 channels) and the
//! project's b4c32 (32) on 9x9, 13x13 and 19x19 at batches 1 and 8;
//! `ENGINE_SIMD=avx2` for what a CPU without AVX-512 runs: fp32 on the AVX2
//! kernels and int8 on AVX-VNNI only). Figures are per core,
//! single-threaded; the GMAC/s column counts a direct convolution's
//! multiply-adds (Winograd does fewer, so it can beat the peak).

fn main() {
    let secs: f64 = std::env::var("INT8_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let shapes: Vec<(usize, usize, usize)> = match std::env::var("INT8_BENCH_SHAPES") {
        Ok(list) => list
            .split(',')
            .map(|shape| {
                let v: Vec<usize> = shape
                    .split(':')
                    .map(|x| x.trim().parse().expect("channels:size:batch"))
                    .collect();
                assert_eq!(v.len(), 3, "channels:size:batch, not {shape}");
                (v[0], v[1], v[2])
            })
            .collect(),
        Err(_) => [96, 32]
            .into_iter()
            .flat_map(|c| {
                [9, 13, 19]
                    .into_iter()
                    .flat_map(move |s| [(c, s, 1), (c, s, 8)])
            })
            .collect(),
    };
    println!("CPU: {}", engine::nn::cpu_info::summary());
    println!("multiply-add peak of one core (billions/s):");
    let peaks = engine::nn::dot_peaks();
    for (name, gmacs) in &peaks {
        println!("  {name:18} {gmacs:8.1}");
    }
    println!(
        "one 3x3 conv layer, ms per call (median of 5) and direct GMAC/s; ratios against fp32"
    );
    println!("channels  board  batch  precision        ms   GMAC/s  vs fp32");
    for (c, size, batch) in shapes {
        let speeds = engine::nn::conv3x3_speeds(c, c, batch, size, secs);
        let fp32 = speeds
            .iter()
            .find(|s| s.precision == "fp32")
            .map_or(f64::NAN, |s| s.ms);
        for s in &speeds {
            println!(
                "{c:8}  {size:2}x{size:<2}  {batch:5}  {:9}  {:8.3}  {:7.1}  {:6.2}x",
                s.precision,
                s.ms,
                s.direct_gmacs,
                fp32 / s.ms
            );
        }
    }
}
