//! The pure-Rust CPU network against the libtorch one (same folding, same
//! layers): real and synthetic nets, batch 1 and 5, mixed board sizes in
//! one batch; and its kernels against naive references.

use super::gemm::{gemm, Prefetch};
use super::ops::{Conv, ConvScratch, Mask};
use super::*;
use crate::nn::network::winograd::{Epilogue, Tiling};
#[cfg(feature = "torch")]
use crate::nn::network::Model;
use crate::nn::testnet::{one_board, synthetic};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
#[cfg(feature = "torch")]
use tch::Device;

fn g170() -> ModelFile {
    let dir = crate::shared_data_dir().unwrap_or_else(|m| panic!("{m}"));
    ModelFile::load(dir.join("models/g170-b6c96-s175395328-d26788732.bin.gz")).expect("g170")
}

/// A batch of `sizes.len()` pseudo-positions, board `i` of `sizes[i]`
/// (x, y) at the top-left of an `s x s` tensor: spatial, global, mask.
fn batch(sizes: &[(usize, usize)], s: usize, seed: u64) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let n = sizes.len();
    let area = s * s;
    let mut spatial = vec![0f32; n * NUM_SPATIAL_FEATURES * area];
    let mut mask = vec![0f32; n * area];
    let mut global = vec![0f32; n * NUM_GLOBAL_FEATURES];
    for (row, &(xs, ys)) in sizes.iter().enumerate() {
        let base = row * NUM_SPATIAL_FEATURES * area;
        for y in 0..ys {
            for x in 0..xs {
                let i = y * s + x;
                mask[row * area + i] = 1.0;
                spatial[base + i] = 1.0;
                let r: u32 = rng.gen_range(0..10);
                if r < 2 {
                    spatial[base + (1 + r as usize) * area + i] = 1.0;
                    spatial[base + (3 + rng.gen_range(0..3)) * area + i] = 1.0;
                }
                if rng.gen_range(0..20) == 0 {
                    spatial[base + rng.gen_range(6..NUM_SPATIAL_FEATURES) * area + i] = 1.0;
                }
            }
        }
        let g = &mut global[row * NUM_GLOBAL_FEATURES..][..NUM_GLOBAL_FEATURES];
        g[5] = rng.gen_range(-0.5..0.5);
        g[6] = 1.0;
        g[7] = 0.5;
        g[18] = -0.5;
    }
    (spatial, global, mask)
}

/// The rows of a [`batch`] cut to the planes and globals `file` reads
/// (nets before version 8 read fewer): the first ones of each row.
#[cfg(feature = "torch")]
fn fit_inputs(
    file: &ModelFile,
    area: usize,
    spatial: &[f32],
    global: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    let (c, g) = (file.num_input_channels, file.num_input_global_channels);
    let spatial = spatial
        .chunks(NUM_SPATIAL_FEATURES * area)
        .flat_map(|row| &row[..c * area])
        .copied()
        .collect();
    let global = global
        .chunks(NUM_GLOBAL_FEATURES)
        .flat_map(|row| &row[..g])
        .copied()
        .collect();
    (spatial, global)
}

/// Largest absolute difference between the two backends' outputs on a
/// batch of boards `sizes` in an `s x s` tensor (`masked: false` passes no
/// mask, which needs every board to fill the tensor).
#[cfg(feature = "torch")]
fn max_diff(file: &ModelFile, sizes: &[(usize, usize)], s: usize, masked: bool) -> f32 {
    let torch = Model::from_file(file, Device::Cpu, false).expect("libtorch build");
    let mut cpu = CpuModel::from_file(file).expect("cpu build");
    let (spatial, global, mask) = batch(sizes, s, 17 + sizes.len() as u64);
    let (spatial, global) = fit_inputs(file, s * s, &spatial, &global);
    let input = NetInput::square(
        sizes.len(),
        s,
        &spatial,
        &global,
        masked.then_some(&mask[..]),
    );
    let a = torch.forward(&input).expect("libtorch forward");
    // Twice, so that reused scratch buffers are exercised too.
    let _ = cpu.forward(&input).expect("cpu forward");
    let b = cpu.forward(&input).expect("cpu forward");
    outputs_max_diff(&a, &b)
}

/// Largest absolute difference between two sets of outputs of the same
/// batch (policy, optimistic policy, value, ownership, scores), all
/// finite.
fn outputs_max_diff(a: &NetOutputs, b: &NetOutputs) -> f32 {
    let mut worst = 0f32;
    let mut cmp = |x: &[f32], y: &[f32]| {
        assert_eq!(x.len(), y.len());
        for (p, q) in x.iter().zip(y) {
            assert!(p.is_finite() && q.is_finite());
            worst = worst.max((p - q).abs());
        }
    };
    cmp(&a.policy, &b.policy);
    assert_eq!(a.policy_optimistic.is_some(), b.policy_optimistic.is_some());
    if let (Some(x), Some(y)) = (&a.policy_optimistic, &b.policy_optimistic) {
        cmp(x, y);
    }
    cmp(&a.value_logits, &b.value_logits);
    // Ownership only on the board (off it both are tanh of a bias).
    cmp(&a.ownership, &b.ownership);
    for (x, y) in a.scores.iter().zip(&b.scores) {
        cmp(
            &[
                x.score_mean,
                x.score_stdev,
                x.lead,
                x.var_time_left,
                x.shortterm_winloss_error,
                x.shortterm_score_error,
            ],
            &[
                y.score_mean,
                y.score_stdev,
                y.lead,
                y.var_time_left,
                y.shortterm_winloss_error,
                y.shortterm_score_error,
            ],
        );
    }
    worst
}

#[cfg(feature = "torch")]
const MIXED: [(usize, usize); 5] = [(9, 9), (13, 13), (7, 11), (13, 12), (5, 5)];

#[test]
#[cfg(feature = "torch")]
fn g170_matches_libtorch_batch_1_and_mixed_batch_5() {
    let file = g170();
    let d1 = max_diff(&file, &[(19, 19)], 19, false);
    assert!(d1 < 2e-3, "19x19 batch 1 differs by {d1}");
    let d5 = max_diff(&file, &MIXED, 13, true);
    assert!(d5 < 2e-3, "mixed batch 5 differs by {d5}");
    // 9x9 and a 7x7 board in a 9x9 tensor at batch 1: F(3x3) tiles on the
    // AVX2 and AVX-512 paths.
    let d9 = max_diff(&file, &[(9, 9)], 9, false);
    assert!(d9 < 2e-3, "9x9 batch 1 differs by {d9}");
    let d7 = max_diff(&file, &[(7, 7)], 9, true);
    assert!(d7 < 2e-3, "7x7 in 9x9 batch 1 differs by {d7}");
    // 9x9 tensors at batch 3, one holding a 7x7 board: F(3x3) Winograd.
    let d3 = max_diff(&file, &[(9, 9), (7, 7), (9, 9)], 9, true);
    assert!(d3 < 2e-3, "9x9 batch 3 differs by {d3}");
}

#[test]
fn replicas_share_the_weights_and_compute_the_same() {
    let mut first = CpuModel::from_file(&g170()).expect("cpu build");
    let mut second = first.replica();
    assert!(Arc::ptr_eq(&first.net, &second.net));
    let (spatial, global, _) = batch(&[(19, 19), (19, 19)], 19, 5);
    let input = NetInput::square(2, 19, &spatial, &global, None);
    let a = first.forward(&input).expect("forward");
    let b = second.forward(&input).expect("forward");
    assert_eq!(a.policy, b.policy);
    assert_eq!(a.value_logits, b.value_logits);
    assert_eq!(a.ownership, b.ownership);
}

#[test]
#[cfg(feature = "torch")]
fn batches_larger_than_one_pass_are_split_and_match_libtorch() {
    // Six 19x19 rows exceed MAX_POINTS_PER_PASS: two passes of 4 and 2.
    const { assert!(6 * 19 * 19 > MAX_POINTS_PER_PASS) };
    let file = g170();
    let sizes = [(19, 19), (9, 9), (19, 19), (13, 13), (7, 11), (19, 19)];
    let d = max_diff(&file, &sizes, 19, true);
    assert!(d < 2e-3, "19x19 batch 6 differs by {d}");
}

#[test]
#[cfg(feature = "torch")]
fn synthetic_nets_of_every_version_match_libtorch() {
    for version in MIN_MODEL_VERSION..=MAX_MODEL_VERSION {
        for act in [Activation::Relu, Activation::Mish] {
            let file = synthetic(version, act, 300 + version as u64);
            let d1 = max_diff(&file, &[(9, 9)], 9, false);
            let d5 = max_diff(&file, &MIXED, 13, true);
            assert!(
                d1 < 1e-3 && d5 < 1e-3,
                "v{version} {act:?}: batch 1 differs by {d1}, mixed batch 5 by {d5}"
            );
        }
    }
}

/// [`gemm`] on every SIMD path the CPU has (forced one after the other),
/// against the textbook product: every row remainder of the AVX2 kernel's
/// 6-row and the AVX-512 kernel's 12-row blocks, odd multiples of 16
/// columns (the AVX-512 kernel's 16-wide last block), more than one group
/// of row blocks, and the shapes too big for the small kernels.
#[test]
fn gemm_matches_naive_product() {
    use crate::nn::cpu_info::SimdPath;
    let mut rng = StdRng::seed_from_u64(1);
    let mut shapes = vec![
        (1, 1, 1),
        (7, 33, 5),
        (36, 96, 96),
        (3, 0, 4),
        (9, 32, 32),
        (6, 7, 48),
        (5, 300, 256),
        (3, 520, 512),
        (4, 16, 32),
        (25, 96, 96),
        (37, 64, 80),
        (50, 32, 32),
        (97, 96, 96),
        (99, 32, 16),
    ];
    shapes.extend((1..=25).map(|m| (m, 32, if m % 2 == 0 { 48 } else { 32 })));
    let mut ran = Vec::new();
    for path in SimdPath::ALL {
        let checked = SimdPath::with_forced(path, || {
            for &(m, k, n) in &shapes {
                let a: Vec<f32> = (0..m * k).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let b: Vec<f32> = (0..k * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let init: Vec<f32> = (0..m * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
                for accumulate in [false, true] {
                    let mut c = init.clone();
                    gemm((m, k, n), &a, &b, &mut c, accumulate, Prefetch::NONE);
                    for i in 0..m {
                        for j in 0..n {
                            let mut want = if accumulate { init[i * n + j] } else { 0.0 };
                            for l in 0..k {
                                want += a[i * k + l] * b[l * n + j];
                            }
                            let got = c[i * n + j];
                            assert!(
                                (got - want).abs() < 1e-4,
                                "{}: ({m},{k},{n}) [{i},{j}]: {got} vs {want}",
                                path.name()
                            );
                        }
                    }
                }
            }
        });
        match checked {
            Some(()) => ran.push(path.name()),
            None => eprintln!("SIMD path {} skipped: this CPU lacks it", path.name()),
        }
    }
    eprintln!("gemm checked on: {}", ran.join(", "));
    assert!(ran.contains(&SimdPath::Portable.name()));
}

/// A direct NHWC convolution with zero padding, for reference (also the
/// int8 tests').
#[allow(clippy::too_many_arguments)]
pub(super) fn direct(
    input: &[f32],
    (n, h, w): (usize, usize, usize),
    wt: &[f32],
    (ci, co, k, dil): (usize, usize, usize, usize),
    bias: &[f32],
) -> Vec<f32> {
    let mut out = vec![0f32; n * h * w * co];
    let r = (k / 2 * dil) as isize;
    for b in 0..n {
        for y in 0..h {
            for x in 0..w {
                for oc in 0..co {
                    let mut acc = bias[oc];
                    for ky in 0..k {
                        for kx in 0..k {
                            let sy = y as isize + (ky * dil) as isize - r;
                            let sx = x as isize + (kx * dil) as isize - r;
                            if sy < 0 || sx < 0 || sy >= h as isize || sx >= w as isize {
                                continue;
                            }
                            for ic in 0..ci {
                                let v = input[((b * h + sy as usize) * w + sx as usize) * ci + ic];
                                acc += v * wt[((oc * ci + ic) * k + ky) * k + kx];
                            }
                        }
                    }
                    out[((b * h + y) * w + x) * co + oc] = acc;
                }
            }
        }
    }
    out
}

#[test]
fn convolutions_of_every_kind_match_direct_convolution() {
    use crate::nn::cpu_info::SimdPath;
    let mut rng = StdRng::seed_from_u64(2);
    for &(k, dil, ci, co, n, h, w) in &[
        (1, 1, 5, 7, 2, 6, 5),
        (3, 1, 6, 9, 1, 9, 9),
        (3, 1, 4, 5, 3, 7, 10),
        (5, 1, 22, 8, 2, 9, 9),
        // 5x5 by F(3x3, 5x5): boards its 3x3 tiles cover exactly and not,
        // channels off the transforms' 8 lanes.
        (5, 1, 22, 16, 1, 19, 19),
        (5, 1, 7, 16, 2, 7, 5),
        (5, 1, 3, 4, 3, 4, 11),
        (5, 1, 9, 32, 1, 1, 2),
        (3, 2, 3, 4, 1, 8, 7),
        (5, 2, 3, 4, 1, 9, 8),
    ] {
        let weights = (0..co * ci * k * k).map(|_| rng.gen_range(-1.0..1.0));
        let layer = ConvLayer {
            dilation_y: dil,
            dilation_x: dil,
            ..ConvLayer::new("c", [co, ci, k, k], weights.collect())
        };
        let bias: Vec<f32> = (0..co).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let conv = Conv::new(&layer, &layer.weights, Some(bias.clone()), false, false);
        let input: Vec<f32> = (0..n * h * w * ci)
            .map(|_| rng.gen_range(-1.0..1.0))
            .collect();
        let want = direct(&input, (n, h, w), &layer.weights, (ci, co, k, dil), &bias);
        let mask = Mask::new(n, h * w, None);
        let mut s = ConvScratch::default();
        // Every SIMD path this CPU has: the Winograd transforms are
        // compiled once per path.
        for path in SimdPath::ALL {
            let ran = SimdPath::with_forced(path, || {
                let mut got = vec![0f32; want.len()];
                let shape = (n, h, w);
                conv.run(
                    None,
                    &input,
                    shape,
                    &mut got,
                    Epilogue::Store,
                    &mask,
                    &mut s,
                );
                let mut acc = vec![1f32; want.len()];
                conv.run(
                    None,
                    &input,
                    shape,
                    &mut acc,
                    Epilogue::Accumulate,
                    &mask,
                    &mut s,
                );
                for ((g, a), w) in got.iter().zip(&acc).zip(&want) {
                    let name = path.name();
                    assert!((g - w).abs() < 1e-3, "k{k} d{dil} {name}: {g} vs {w}");
                    assert!(
                        (a - 1.0 - w).abs() < 1e-3,
                        "k{k} d{dil} {name} accumulate: {a} vs {w}"
                    );
                }
            });
            assert!(ran.is_some() || path != SimdPath::Portable);
        }
    }
}

#[test]
fn winograd_3x3_agrees_with_direct_convolution_in_every_epilogue() {
    let mut rng = StdRng::seed_from_u64(3);
    let paths = [Tiling::F5, Tiling::F4, Tiling::F3];
    for &(ci, co, n, h, w) in &[
        (32, 16, 1, 9, 9),
        (16, 48, 2, 7, 5),
        (48, 32, 1, 3, 11),
        (16, 32, 3, 9, 6),
    ] {
        let weights = (0..co * ci * 9).map(|_| rng.gen_range(-1.0..1.0));
        let layer = ConvLayer::new("c", [co, ci, 3, 3], weights.collect());
        let bias: Vec<f32> = (0..co).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let conv = Conv::new(&layer, &layer.weights, Some(bias.clone()), false, false);
        let input: Vec<f32> = (0..n * h * w * ci)
            .map(|_| rng.gen_range(-1.0..1.0))
            .collect();
        let want = direct(&input, (n, h, w), &layer.weights, (ci, co, 3, 1), &bias);
        // The last column of every row off the board.
        let mask_values: Vec<f32> = (0..n * h * w)
            .map(|p| if p % w == w - 1 { 0.0 } else { 1.0 })
            .collect();
        let mask = Mask::new(n, h * w, Some(&mask_values));
        // One scratch for every path, as the network shares it between
        // batches of different shapes.
        let mut s = ConvScratch::default();
        for path in paths {
            for epilogue in [Epilogue::Store, Epilogue::ReluMasked, Epilogue::Accumulate] {
                let mut got = vec![0.5f32; want.len()];
                conv.run(
                    Some(path),
                    &input,
                    (n, h, w),
                    &mut got,
                    epilogue,
                    &mask,
                    &mut s,
                );
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    let expect = match epilogue {
                        Epilogue::Store => *w,
                        Epilogue::ReluMasked => w.max(0.0) * mask_values[i / co],
                        Epilogue::Accumulate => 0.5 + w,
                    };
                    assert!(
                        (g - expect).abs() < 1e-3,
                        "{ci}->{co} {n}x{h}x{w} {path:?} {epilogue:?}: {g} vs {expect}"
                    );
                }
            }
        }
    }
    // The rule: 9x9 (exactly 3x3 tiles) and up to three 13x13 boards by
    // F(3x3), 19x19, 13x13 from a batch of 4, and 7x7 from a batch of 3 by
    // F(4x4); with the AVX2 and AVX-512 kernels, 13x13 to 15x15, 17x17 to
    // 20x20 and 9x9 from a batch of 3 (AVX2) or 4 (AVX-512) by F(5x5)
    // instead (not 9x9 at batches of 1 and 2, too few rows, nor 21x21
    // (F(3x3)) or 23x23 (F(4x4)), too few points saved).
    let layer = ConvLayer::new("c", [32, 32, 3, 3], vec![0.0; 32 * 32 * 9]);
    use crate::nn::cpu_info::SimdPath;
    let mut checked = 0;
    for path in [SimdPath::Avx512, SimdPath::Avx2Fma] {
        // Built on the path too: whether a conv gets the small kernels is
        // decided when it is built (so `ENGINE_SIMD` does not change what
        // this test checks).
        let Some((conv, bf16)) = SimdPath::with_forced(path, || {
            (
                Conv::new(&layer, &layer.weights, None, false, false),
                Conv::new(&layer, &layer.weights, None, true, false),
            )
        }) else {
            continue;
        };
        let avx2 = path == SimdPath::Avx2Fma;
        let want = [
            ((1, 9, 9), Tiling::F3),
            ((2, 9, 9), Tiling::F3),
            ((3, 9, 9), if avx2 { Tiling::F5 } else { Tiling::F3 }),
            ((4, 9, 9), Tiling::F5),
            ((8, 9, 9), Tiling::F5),
            ((8, 19, 19), Tiling::F5),
            ((1, 19, 19), Tiling::F5),
            ((2, 19, 19), Tiling::F5),
            ((1, 20, 20), Tiling::F5),
            ((1, 21, 21), Tiling::F3),
            ((1, 23, 23), Tiling::F4),
            ((8, 7, 7), Tiling::F4),
            ((3, 7, 7), Tiling::F4),
            ((1, 7, 7), Tiling::F3),
            ((1, 11, 11), Tiling::F3),
            ((8, 11, 11), Tiling::F4),
            ((1, 13, 13), Tiling::F5),
            ((3, 13, 13), Tiling::F5),
            ((4, 13, 13), Tiling::F5),
            ((8, 13, 13), Tiling::F5),
            ((1, 15, 15), Tiling::F5),
            ((1, 17, 17), Tiling::F5),
            ((8, 17, 17), Tiling::F5),
            ((1, 18, 18), Tiling::F5),
            ((1, 16, 16), Tiling::F4),
            ((1, 11, 11), Tiling::F3),
            ((3, 10, 10), Tiling::F5),
        ];
        let got = SimdPath::with_forced(path, || {
            want.map(|((n, h, w), _)| ((n, h, w), conv.tiling(n, h, w)))
        });
        // In bf16, F(3x3) or F(4x4) where the rule would take F(5x5).
        let got_bf16 = SimdPath::with_forced(path, || {
            [(1, 19, 19), (8, 13, 13), (1, 13, 13), (8, 9, 9)].map(|(n, h, w)| bf16.tiling(n, h, w))
        });
        if let (Some(got), None) = (got_bf16, Tiling::forced()) {
            assert_eq!(got, [Tiling::F4, Tiling::F4, Tiling::F3, Tiling::F3]);
        }
        if let Some(got) = got {
            checked += 1;
            for (((n, h, w), t), (_, expect)) in got.iter().zip(&want) {
                // `ENGINE_WINOGRAD` (a measurement's override) replaces the rule.
                let expect = Tiling::forced().unwrap_or(*expect);
                assert_eq!(*t, expect, "{} batch {n} {h}x{w}", path.name());
            }
        }
    }
    // Where the CPU has neither path's instructions, the small kernels
    // (and so the rule) do not run.
    if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2") {
        assert!(checked > 0);
    }
}

/// `ENGINE_WINOGRAD` names the three 3x3 tilings, `auto` none, and
/// anything else is an error that lists the choices.
#[test]
fn engine_winograd_values_parse() {
    assert_eq!(Tiling::parse_forced(" F5 "), Ok(Some(Tiling::F5)));
    assert_eq!(Tiling::parse_forced("f4"), Ok(Some(Tiling::F4)));
    assert_eq!(Tiling::parse_forced("f3"), Ok(Some(Tiling::F3)));
    assert_eq!(Tiling::parse_forced("auto"), Ok(None));
    assert_eq!(Tiling::parse_forced(""), Ok(None));
    let err = Tiling::parse_forced("f6").unwrap_err();
    assert!(err.contains("auto, f3, f4, f5"), "{err}");
}

#[test]
fn masked_pooling_ignores_points_off_the_board() {
    // Two rows of 2x2 points, 1 channel; row 1 has one point off the board.
    let mask = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0];
    let x = [1.0, 2.0, 3.0, 6.0, -4.0, -2.0, -3.0, 0.0];
    let m = Mask::new(2, 4, Some(&mask));
    let mut out = vec![f32::NAN; 6];
    m.pool(&x, 1, &mut out);
    let (c0, c1) = (4f32.sqrt() - 14.0, 3f32.sqrt() - 14.0);
    assert_eq!(out.len(), 6);
    assert!((out[0] - 3.0).abs() < 1e-6 && (out[1] - 3.0 * c0 * 0.1).abs() < 1e-5);
    assert_eq!(out[2], 6.0);
    assert!((out[3] + 3.0).abs() < 1e-6 && (out[4] + 3.0 * c1 * 0.1).abs() < 1e-5);
    // The off-board point counts as -1 (KataGo's `x + mask - 1`).
    assert_eq!(out[5], -1.0);
    m.pool_value(&x, 1, &mut out);
    assert!((out[5] - (-3.0) * (c1 * c1 * 0.01 - 0.1)).abs() < 1e-5);
}

#[test]
fn bad_inputs_are_errors() {
    let file = synthetic(8, Activation::Relu, 3);
    let mut cpu = CpuModel::from_file(&file).expect("build");
    let (spatial, global, mask) = batch(&[(5, 5)], 5, 1);
    let ok = one_board(5, &spatial, &global, &mask);
    assert!(cpu.forward(&ok).is_ok());
    let short = NetInput {
        spatial: &spatial[1..],
        ..ok
    };
    assert!(matches!(cpu.forward(&short), Err(NetError::BadInput(_))));
    let zeros = vec![0f32; mask.len()];
    let empty = NetInput {
        mask: Some(&zeros),
        ..ok
    };
    assert!(matches!(cpu.forward(&empty), Err(NetError::BadInput(_))));
}

/// A human-style net (a metadata encoder) gives the same outputs on both
/// backends, with a different profile per row.
#[test]
#[cfg(feature = "torch")]
fn metadata_encoder_nets_match_libtorch() {
    let mut file = synthetic(15, Activation::Mish, 5);
    crate::nn::testnet::with_metadata_encoder(&mut file, 6);
    let torch = Model::from_file(&file, Device::Cpu, false).expect("libtorch build");
    let mut cpu = CpuModel::from_file(&file).expect("cpu build");
    assert_eq!(cpu.num_meta_features(), 192);
    let sizes = [(9, 9), (7, 9), (9, 9)];
    let (spatial, global, mask) = batch(&sizes, 9, 21);
    let (spatial, global) = fit_inputs(&file, 81, &spatial, &global);
    let mut meta = vec![f32::NAN; sizes.len() * 192];
    for (row, name) in meta
        .chunks_mut(192)
        .zip(["rank_20k", "preaz_2d_9k", "proyear_1850"])
    {
        let profile = crate::nn::SgfMetadata::profile(name).unwrap().unwrap();
        profile.fill_row(row, crate::game::Player::White, 81);
    }
    let input = NetInput {
        meta: Some(&meta),
        ..NetInput::square(sizes.len(), 9, &spatial, &global, Some(&mask))
    };
    let a = torch.forward(&input).expect("libtorch forward");
    let b = cpu.forward(&input).expect("cpu forward");
    let worst = a
        .policy
        .iter()
        .zip(&b.policy)
        .chain(a.value_logits.iter().zip(&b.value_logits))
        .chain(a.ownership.iter().zip(&b.ownership))
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(worst < 1e-3, "the backends differ by {worst}");
    let without = NetInput {
        meta: None,
        ..input
    };
    let err = cpu.forward(&without).expect_err("no metadata");
    assert!(err.to_string().contains("humanSLProfile"), "{err}");
}

/// Version 17's transformer layers (attention with learned and fixed RoPE,
/// grouped key/value heads, SwiGLU, a nested attention block, the RMSNorm
/// tip) see only the board: a 9x9 board gives the same outputs alone and
/// padded into a 13x13 tensor beside other boards.
#[test]
fn transformer_nets_ignore_padding_and_batch_neighbours() {
    for act in [Activation::Relu, Activation::Mish] {
        let file = synthetic(17, act, 17);
        let mut cpu = CpuModel::from_file(&file).expect("cpu build");
        let (sp, gl, _) = batch(&[(9, 9)], 9, 4);
        let alone = cpu
            .forward(&NetInput::square(1, 9, &sp, &gl, None))
            .expect("forward");
        let (sp, gl, mask) = batch(&[(9, 9), (13, 13), (7, 11)], 13, 4);
        let padded = cpu
            .forward(&NetInput::square(3, 13, &sp, &gl, Some(&mask)))
            .expect("forward");
        let mut worst = 0f32;
        for y in 0..9 {
            for x in 0..9 {
                let (a, p) = (alone.policy[y * 9 + x], padded.policy[y * 13 + x]);
                assert!(a.is_finite() && p.is_finite());
                worst = worst.max((a - p).abs());
            }
        }
        worst = worst.max((alone.policy[81] - padded.policy[169]).abs());
        for (a, p) in alone.value_logits.iter().zip(&padded.value_logits[..3]) {
            worst = worst.max((a - p).abs());
        }
        let (a, p) = (alone.scores[0], padded.scores[0]);
        worst = worst.max((a.lead - p.lead).abs() / 10.0);
        assert!(worst < 1e-4, "{act:?}: padded 9x9 differs by {worst}");
    }
}

/// Every SIMD path this CPU can run gives the same outputs on the g170
/// net: a lone 9x9 board (on the AVX2 and AVX-512 paths F(3x3) tiles),
/// four 9x9 boards (Winograd F(3x3, 3x3)) and two 19x19 boards (Winograd
/// F(5x5, 3x3) on the AVX2 path, F(4x4, 3x3) on the others). A
/// path the CPU lacks is skipped and named.
#[test]
fn every_simd_path_gives_the_same_outputs() {
    use crate::nn::cpu_info::SimdPath;
    let file = g170();
    let mut ran = Vec::new();
    for (n, s) in [(1, 9), (4, 9), (2, 19)] {
        let (spatial, global, _) = batch(&vec![(s, s); n], s, 31 + n as u64);
        let input = NetInput::square(n, s, &spatial, &global, None);
        let mut outputs = Vec::new();
        for path in SimdPath::ALL {
            // Built on the path too: the AVX2 path keeps extra weights.
            let forward = || {
                let mut cpu = CpuModel::from_file(&file).expect("cpu build");
                // Twice, so that reused scratch buffers are exercised too.
                let _ = cpu.forward(&input).expect("cpu forward");
                cpu.forward(&input).expect("cpu forward")
            };
            match SimdPath::with_forced(path, forward) {
                Some(out) => outputs.push((path, out)),
                None => eprintln!("SIMD path {} skipped: this CPU lacks it", path.name()),
            }
        }
        let ((first, a), rest) = outputs
            .split_first()
            .expect("the portable path always runs");
        for (path, b) in rest {
            let d = outputs_max_diff(a, b);
            eprintln!(
                "{n}x{s}x{s}: {} vs {}: max difference {d:e}",
                first.name(),
                path.name()
            );
            // F(5x5) rounds about twice as coarsely as F(4x4) (its
            // transforms' larger constants): AVX2 against portable on
            // 19x19 differed by 1.6e-4 at most (on a raw output of 2.8)
            // where F(4x4) stayed under 1e-4.
            assert!(
                d < 3e-4,
                "{n}x{s}x{s}: {} and {} differ by {d}",
                first.name(),
                path.name()
            );
        }
        ran = outputs.iter().map(|(p, _)| p.name()).collect();
    }
    eprintln!("SIMD paths compared: {}", ran.join(", "));
    assert!(ran.contains(&SimdPath::Portable.name()));
    // The forcing reaches the kernels' choice: a lone 9x9 board runs
    // F(3x3) on the AVX2 and AVX-512 paths only (the portable path has no
    // F(3x3) weights).
    let layer = ConvLayer::new("c", [32, 32, 3, 3], vec![0.0; 32 * 32 * 9]);
    let tiling = || Conv::new(&layer, &layer.weights, None, false, false).tiling(1, 9, 9);
    assert_eq!(
        SimdPath::with_forced(SimdPath::Portable, tiling),
        Some(Tiling::F4)
    );
    for fast in [SimdPath::Avx512, SimdPath::Avx2Fma] {
        if let Some(t) = SimdPath::with_forced(fast, tiling) {
            // (`ENGINE_WINOGRAD`, a measurement's override, replaces the rule.)
            assert_eq!(t, Tiling::forced().unwrap_or(Tiling::F3), "{}", fast.name());
        }
    }
}

/// [`gemm_weights`] in bf16 on a CPU with AVX-512 BF16: the product of
/// the operands rounded to bf16 (each product of two bf16s is exact in
/// f32, so only the order of the f32 sums differs), on every row
/// remainder of its 12-row blocks, odd multiples of 16 columns, odd `k`
/// (the zero half of the last pair), and the second matrix of a run. It
/// must differ from the f32 product somewhere (the bf16 kernel ran); with
/// the AVX2 path forced, the same weights give the f32 product.
#[test]
fn bf16_gemm_is_the_product_of_the_rounded_operands() {
    use super::gemm::{bf16_bits, bf16_value, gemm_weights, AlignedWeights};
    use crate::nn::cpu_info::{bf16_kernels_run, SimdPath};
    if !bf16_kernels_run() {
        eprintln!("skipped: this CPU lacks AVX-512 BF16");
        return;
    }
    let round = |v: f32| f64::from(bf16_value(bf16_bits(v)));
    let mut rng = StdRng::seed_from_u64(7);
    let mut shapes = vec![(25, 96, 96), (36, 33, 48), (4, 1, 16), (50, 64, 80)];
    shapes.extend((1..=25).map(|m| (m, 31 + m % 3, if m % 2 == 0 { 48 } else { 32 })));
    for (m, k, n) in shapes {
        let a: Vec<f32> = (0..m * k).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..2 * k * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let init: Vec<f32> = (0..m * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let weights = AlignedWeights::matrices(&b, (k, n), true);
        let b1 = &b[k * n..];
        for accumulate in [false, true] {
            let mut c = init.clone();
            gemm_weights(
                (m, k, n),
                &a,
                (&weights, 1),
                &mut c,
                accumulate,
                Prefetch::NONE,
            );
            let mut f32_c = init.clone();
            SimdPath::with_forced(SimdPath::Avx2Fma, || {
                gemm_weights(
                    (m, k, n),
                    &a,
                    (&weights, 1),
                    &mut f32_c,
                    accumulate,
                    Prefetch::NONE,
                )
            })
            .expect("an AVX-512 CPU runs AVX2");
            let mut away_from_f32 = 0f64;
            for i in 0..m {
                for j in 0..n {
                    let start = if accumulate {
                        f64::from(init[i * n + j])
                    } else {
                        0.0
                    };
                    let (mut rounded, mut exact) = (start, start);
                    for l in 0..k {
                        rounded += round(a[i * k + l]) * round(b1[l * n + j]);
                        exact += f64::from(a[i * k + l]) * f64::from(b1[l * n + j]);
                    }
                    let (got, got_f32) = (f64::from(c[i * n + j]), f64::from(f32_c[i * n + j]));
                    assert!(
                        (got - rounded).abs() < 1e-4 && (got_f32 - exact).abs() < 1e-4,
                        "({m},{k},{n}) [{i},{j}]: bf16 {got} vs {rounded}, f32 {got_f32} vs {exact}"
                    );
                    away_from_f32 = away_from_f32.max((got - exact).abs());
                }
            }
            assert!(
                away_from_f32 > 1e-4,
                "({m},{k},{n}): bf16 gave the f32 product"
            );
        }
    }
}

/// [`bf16_bits`] rounds to nearest, ties to even (what `vcvtne2ps2bf16`
/// does: the bf16 GEMM rounds its weights with one and its inputs with
/// the other), flushes denormals to a signed zero and keeps NaNs NaN.
#[test]
fn bf16_rounding_is_to_nearest_even() {
    use super::gemm::{bf16_bits, bf16_value};
    assert_eq!(bf16_bits(1.0), 0x3f80);
    // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even 1.
    assert_eq!(bf16_bits(1.0 + 2f32.powi(-8)), 0x3f80);
    // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to the even.
    assert_eq!(bf16_bits(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
    assert_eq!(bf16_bits(1.0 + 2f32.powi(-8) + 2f32.powi(-20)), 0x3f81);
    assert_eq!(bf16_bits(-2.5), 0xc020);
    assert_eq!(bf16_bits(f32::MIN_POSITIVE / 4.0), 0);
    assert_eq!(bf16_bits(-f32::MIN_POSITIVE / 4.0), 0x8000);
    assert!(bf16_value(bf16_bits(f32::NAN)).is_nan());
    assert_eq!(bf16_value(bf16_bits(f32::INFINITY)), f32::INFINITY);
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..10_000 {
        let v: f32 = rng.gen_range(-1e6..1e6);
        let r = bf16_value(bf16_bits(v));
        assert!((r - v).abs() <= v.abs() * 2f32.powi(-8), "{v} -> {r}");
    }
}

/// `int8_share`, which an int8 net's start-up line gives: int8 runs g170's
/// trunk convs (all of them 3x3, 96 channels), not its heads nor its
/// input conv (22 channels); none of a transformer trunk. The count it
/// divides by is `engine benchmark -nn`'s 0.72 GFLOP per 19x19
/// evaluation.
#[test]
fn int8_share_counts_the_convs_int8_runs() {
    let g = g170();
    let share = super::int8_share(&g);
    assert!((0.9..1.0).contains(&share), "{share}");
    let all = 2.0 * g.multiply_adds(19, 19, &|_| true, true) / 1e9;
    assert!((all - 0.72).abs() < 0.005, "{all} GFLOP");
    let trunk: f64 = 2.0 * 19.0 * 19.0 / 1e9
        * g.trunk
            .blocks
            .iter()
            .map(|b| match b {
                Block::Ordinary(b) => b.regular_conv.weights.len() + b.final_conv.weights.len(),
                Block::GlobalPooling(b) => {
                    b.regular_conv.weights.len() + b.final_conv.weights.len()
                }
                _ => panic!("g170 has no other blocks"),
            })
            .sum::<usize>() as f64;
    // g170's gpool convs (96 -> 32) run in int8 too.
    assert!(share * all >= trunk, "{share} of {all} against {trunk}");
    let dir = crate::shared_data_dir().unwrap_or_else(|m| panic!("{m}"));
    let transformer = ModelFile::load(dir.join("models/b7c96h3tfrs-test5-cnorm.bin.gz"))
        .expect("transformer test net");
    assert_eq!(super::int8_share(&transformer), 0.0);
}
