//! Network speed on the CPU: evals/s of the g170 b6c96 net on 19x19 at
//! batch 1..16 (plain main, `harness = false`), libtorch and the pure-Rust
//! backend side by side.
//!
//! `cargo bench --bench nn` (env: `ENGINE_SHARED_DIR`, `NN_BENCH_THREADS`
//! (libtorch threads, default 2; the Rust backend is single-threaded),
//! `NN_BENCH_SECS` per measurement (default 1.0), `NN_BENCH_BATCHES`
//! comma-separated batch sizes (default 1,2,4,8,16), `NN_BENCH_BACKENDS`
//! (default `libtorch,rust`), `NN_BENCH_MODEL` (a model file instead of
//! g170), `NN_BENCH_SIZE` (board side, default 19)).
//! Prints the median of 5 measurements per batch size: evals per second of
//! wall time, and evals per second of this thread's CPU time (from
//! `/proc/thread-self/schedstat`), and the convolutions' GFLOP/s per core
//! against the core's measured fp32 FMA peak: counted as a direct
//! convolution does (what the net asks for) and as the Rust backend
//! executes them (Winograd's GEMMs: ~4x fewer for 3x3 convs). With `NN_BENCH_THREADS=1` libtorch runs
//! everything on this thread, so the CPU-time figure stays meaningful on a
//! loaded machine where the wall-time one does not.

use std::time::Instant;

use engine::nn::{CpuModel, Model, NetInput};
use tch::Device;

fn main() {
    let shared = engine::shared_data_dir().unwrap_or_else(|m| panic!("{m}"));
    let threads: i32 = std::env::var("NN_BENCH_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let secs: f64 = std::env::var("NN_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    tch::set_num_threads(threads);
    let path = std::env::var("NN_BENCH_MODEL").map_or_else(
        |_| shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz"),
        std::path::PathBuf::from,
    );
    let size: usize = std::env::var("NN_BENCH_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(19);
    let backends = std::env::var("NN_BENCH_BACKENDS").unwrap_or_else(|_| "libtorch,rust".into());
    let batches: Vec<usize> = std::env::var("NN_BENCH_BATCHES")
        .ok()
        .map(|s| s.split(',').filter_map(|b| b.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 4, 8, 16]);
    let mut rust = CpuModel::load(&path).expect("model loads");
    // FLOPs (2 per multiply-add) of one evaluation's convolutions, per
    // batch size: as a direct convolution counts them, and as the Rust
    // backend runs them.
    let flops: Vec<Flops> = batches
        .iter()
        .map(|&batch| {
            let (direct, executed) = rust.conv_macs_per_row(batch, size, size);
            Flops {
                direct_gflop: 2.0 * direct as f64 * 1e-9,
                executed_gflop: 2.0 * executed as f64 * 1e-9,
            }
        })
        .collect();
    // 0 where the CPU has no AVX2/FMA.
    let peak_gflops = engine::nn::cpu_info::fma_peak_gflops_per_core().unwrap_or(0.0);
    println!(
        "fp32 FMA peak of one core: {:.1} GFLOP/s (best of 5 runs of 12 independent FMA chains, 8 wide and, with AVX-512, 16 wide)",
        peak_gflops
    );
    for backend in backends.split(',') {
        let mut forward: Box<dyn FnMut(&NetInput) + '_> = match backend.trim() {
            "rust" => {
                println!(
                    "model {} on CPU, Rust backend, 1 thread, {size}x{size}",
                    rust.name()
                );
                Box::new(|input: &NetInput| {
                    rust.forward(input).expect("forward");
                })
            }
            "libtorch" => {
                let model = Model::load(&path, Device::Cpu).expect("model loads");
                println!(
                    "model {} on CPU, libtorch, {threads} threads, {size}x{size}",
                    model.name()
                );
                Box::new(move |input: &NetInput| {
                    model.forward(input).expect("forward");
                })
            }
            other => panic!("unknown backend {other} (libtorch or rust)"),
        };
        println!(
            "batch  evals/s  evals/cpu-s  direct GFLOP/s (% of peak)  Rust-executed GFLOP/s (% of peak)  (median of 5 x {secs}s; peak of one core)"
        );
        bench(&mut *forward, &batches, size, secs, (&flops, peak_gflops));
    }
}

/// Prints evals/s at each batch size.
fn bench(
    forward: &mut dyn FnMut(&NetInput),
    batches: &[usize],
    size: usize,
    secs: f64,
    (flops, peak_gflops): (&[Flops], f64),
) {
    for (&batch, flops) in batches.iter().zip(flops) {
        let (h, w) = (size, size);
        // Plausible mid-game-like inputs: board plane on, a few stones.
        let mut spatial = vec![0f32; batch * 22 * h * w];
        for (i, v) in spatial.iter_mut().enumerate() {
            let plane = (i / (h * w)) % 22;
            *v = match plane {
                0 => 1.0,
                1 | 2 => f32::from((i * 7919) % 11 == 0),
                _ => 0.0,
            };
        }
        let mut global = vec![0f32; batch * 19];
        for row in global.chunks_mut(19) {
            row[5] = -0.375;
        }
        let input = NetInput {
            batch_size: batch,
            height: h,
            width: w,
            spatial: &spatial,
            global: &global,
            meta: None,
            mask: None,
        };
        for _ in 0..3 {
            forward(&input);
        }
        let mut rates = Vec::new();
        let mut cpu_rates = Vec::new();
        for _ in 0..5 {
            let start = Instant::now();
            let cpu_start = thread_cpu_secs();
            let mut evals = 0usize;
            while start.elapsed().as_secs_f64() < secs {
                forward(&input);
                evals += batch;
            }
            rates.push(evals as f64 / start.elapsed().as_secs_f64());
            cpu_rates.push(evals as f64 / (thread_cpu_secs() - cpu_start).max(1e-9));
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.total_cmp(b));
            v[v.len() / 2]
        };
        let wall = median(&mut rates);
        let cpu = median(&mut cpu_rates);
        // Per core: the CPU-time rate (libtorch with several threads
        // counts all of them in wall time, so use NN_BENCH_THREADS=1 there).
        let pct = |gflop: f64| 100.0 * cpu * gflop / peak_gflops;
        println!(
            "{batch:5}  {wall:7.1}  {cpu:11.1}  {:14.1} ({:3.0}%)  {:21.1} ({:3.0}%)",
            cpu * flops.direct_gflop,
            pct(flops.direct_gflop),
            cpu * flops.executed_gflop,
            pct(flops.executed_gflop),
        );
    }
}

/// FLOP counts of one evaluation at one batch size.
struct Flops {
    direct_gflop: f64,
    executed_gflop: f64,
}

/// CPU time this thread has run, in seconds (0 where the kernel does not say).
fn thread_cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns * 1e-9)
}
